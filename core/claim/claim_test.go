package claim

import (
	"crypto/ecdsa"
	"errors"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
)

var (
	bridge = [20]byte{0x50, 0xd0, 19: 0x01}
	native = [20]byte{0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee}
	to     = [20]byte{19: 0x42}
)

func committee(n int) ([]*ecdsa.PrivateKey, [][20]byte) {
	keys := make([]*ecdsa.PrivateKey, n)
	addrs := make([][20]byte, n)
	for i := range keys {
		k, err := crypto.ToECDSA(crypto.Keccak256([]byte{byte(i), 'k'}))
		if err != nil {
			panic(err) // a fixed, valid scalar
		}
		keys[i], addrs[i] = k, crypto.PubkeyToAddress(k.PublicKey)
	}
	return keys, addrs
}

func signAll(t *testing.T, h [32]byte, keys []*ecdsa.PrivateKey) []Signature {
	t.Helper()
	out := make([]Signature, len(keys))
	for i, k := range keys {
		sig, err := crypto.Sign(h[:], k)
		if err != nil {
			t.Fatal(err)
		}
		sig[64] += 27
		out[i] = Signature{Signer: crypto.PubkeyToAddress(k.PublicKey), Sig: [SigLen]byte(sig)}
	}
	return out
}

func claimHash(amount uint64, recipient [20]byte, aux byte) [32]byte {
	return Hash(Domain(0x50d, 1), bridge, native, recipient, uint256.NewInt(amount), []byte{31: aux})
}

// The hash commits to every field: changing any one changes it.
func TestHashCommitsToEveryField(t *testing.T) {
	base := claimHash(1_000_000, to, 1)
	others := map[string][32]byte{
		"amount":  claimHash(1_000_001, to, 1),
		"to":      claimHash(1_000_000, [20]byte{19: 0x43}, 1),
		"aux":     claimHash(1_000_000, to, 2),
		"token":   Hash(Domain(0x50d, 1), bridge, [20]byte{1}, to, uint256.NewInt(1_000_000), []byte{31: 1}),
		"bridge":  Hash(Domain(0x50d, 1), [20]byte{2}, native, to, uint256.NewInt(1_000_000), []byte{31: 1}),
		"chain":   Hash(Domain(0x50e, 1), bridge, native, to, uint256.NewInt(1_000_000), []byte{31: 1}),
		"version": Hash(Domain(0x50d, 2), bridge, native, to, uint256.NewInt(1_000_000), []byte{31: 1}),
	}
	for name, h := range others {
		if h == base {
			t.Errorf("changing %s does not change the claim hash", name)
		}
	}
}

func TestVerify(t *testing.T) {
	keys, validators := committee(4) // f = 1: three signatures needed
	const f = 1
	h := claimHash(1_000_000, to, 7)
	sigs := signAll(t, h, keys)
	if err := Verify(h, Proof(sigs), validators, f); err != nil {
		t.Fatalf("a proof with every signature: %v", err)
	}
	if err := Verify(h, Proof(sigs[:3]), validators, f); err != nil {
		t.Fatalf("a proof with n - f signatures: %v", err)
	}
	reversed := []Signature{sigs[3], sigs[2], sigs[1], sigs[0]}
	if err := Verify(h, Proof(reversed), validators, f); err != nil {
		t.Fatalf("Proof must sort the signatures: %v", err)
	}

	cases := []struct {
		name  string
		hash  [32]byte
		proof []byte
		want  error
	}{
		{"tampered amount", claimHash(1_000_001, to, 7), Proof(sigs), ErrNotValidator},
		{"tampered recipient", claimHash(1_000_000, [20]byte{19: 0x43}, 7), Proof(sigs), ErrNotValidator},
		{"too few signatures", h, Proof(sigs[:2]), ErrTooFewSigners},
		{"duplicated signer", h, Proof([]Signature{sigs[0], sigs[0], sigs[1]}), ErrOrder},
		{"empty", h, nil, ErrEmpty},
		{"merkle type", h, append([]byte{1}, Proof(sigs)[1:]...), ErrProofType},
		{"truncated", h, Proof(sigs)[:100], ErrLength},
	}
	for _, c := range cases {
		if err := Verify(c.hash, c.proof, validators, f); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}

	// A signature byte flipped recovers some other address (or none).
	bad := Proof(sigs)
	bad[1+5] ^= 0xff
	if err := Verify(h, bad, validators, f); err == nil {
		t.Error("a tampered signature verified")
	}
	// Signers out of order, assembled by hand.
	unsorted := Proof(sigs)
	first := append([]byte(nil), unsorted[1:1+SigLen]...)
	copy(unsorted[1:], unsorted[1+SigLen:1+2*SigLen])
	copy(unsorted[1+SigLen:], first)
	if err := Verify(h, unsorted, validators, f); !errors.Is(err, ErrOrder) {
		t.Errorf("out of order: got %v", err)
	}
	// A stranger's signature.
	strangerKeys, _ := committee(5)
	foreign := signAll(t, h, strangerKeys[4:])
	if err := Verify(h, Proof(append(sigs[:3:3], foreign...)), validators, f); !errors.Is(err, ErrNotValidator) {
		t.Errorf("foreign signer: got %v", err)
	}
}

func FuzzVerify(f *testing.F) {
	f.Add([]byte{0}, []byte{1})
	f.Add(append([]byte{0}, make([]byte, 65)...), []byte{2})
	_, validators := committee(4)
	f.Fuzz(func(t *testing.T, proof, seed []byte) {
		h := [32]byte(crypto.Keccak256(seed))
		_ = Verify(h, proof, validators, 1) // never panics
	})
}
