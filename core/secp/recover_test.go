package secp

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

// checkRecover compares Recover with go-ethereum's crypto.Ecrecover (decred
// without cgo, libsecp256k1 with cgo): both fail, or both give the same key.
// REQUIRES: recid is 0 or 1; Ethereum never uses the x >= n ids 2 and 3.
func checkRecover(t testing.TB, hash, r, s *[32]byte, recid byte) {
	t.Helper()
	sig := make([]byte, 65)
	copy(sig, r[:])
	copy(sig[32:], s[:])
	sig[64] = recid
	want, wantErr := crypto.Ecrecover(hash[:], sig)
	var pub [64]byte
	ok := Recover(&pub, hash, r, s, recid)
	if ok != (wantErr == nil) || (ok && !bytes.Equal(pub[:], want[1:])) {
		t.Fatalf("Recover(%x, %x, %x, %d) = %v %x; go-ethereum: %v %x", *hash, *r, *s, recid, ok, pub, wantErr, want)
	}
}

func TestRecoverValidSignatures(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		key, err := crypto.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		var hash [32]byte
		for j := range hash {
			hash[j] = byte(rng.Uint32())
		}
		sig, err := crypto.Sign(hash[:], key)
		if err != nil {
			t.Fatal(err)
		}
		var pub [64]byte
		if !Recover(&pub, &hash, (*[32]byte)(sig[:32]), (*[32]byte)(sig[32:64]), sig[64]) {
			t.Fatal("Recover failed on a valid signature")
		}
		if !bytes.Equal(pub[:], crypto.FromECDSAPub(&key.PublicKey)[1:]) {
			t.Fatalf("Recover = %x, want the signing key", pub)
		}
	}
}

// TestRecoverArbitraryInputs feeds random and boundary (hash, r, s, recid),
// most of which are not signatures anyone made: every r < n with a curve
// point recovers some key.
func TestRecoverArbitraryInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	one := big.NewInt(1)
	special := []*big.Int{
		new(big.Int), one, new(big.Int).Sub(bigN, one), bigN, new(big.Int).Add(bigN, one),
		new(big.Int).Sub(bigP, one), bigP, new(big.Int).Sub(new(big.Int).Lsh(one, 256), one),
	}
	pick := func() [32]byte {
		var b [32]byte
		if rng.IntN(4) == 0 {
			special[rng.IntN(len(special))].FillBytes(b[:])
			return b
		}
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	for range 1500 {
		hash, r, s := pick(), pick(), pick()
		checkRecover(t, &hash, &r, &s, byte(rng.IntN(2)))
	}
}

func TestRecoverRejectsHighRecoveryID(t *testing.T) {
	var hash, r, s [32]byte
	r[31], s[31] = 1, 1
	var pub [64]byte
	for _, id := range []byte{2, 3, 27, 255} {
		if Recover(&pub, &hash, &r, &s, id) {
			t.Fatalf("Recover accepted recovery id %d", id)
		}
	}
}

func TestRecoverAllocs(t *testing.T) {
	key, _ := crypto.GenerateKey()
	var hash [32]byte
	sig, _ := crypto.Sign(hash[:], key)
	var pub [64]byte
	allocs := testing.AllocsPerRun(50, func() {
		Recover(&pub, &hash, (*[32]byte)(sig[:32]), (*[32]byte)(sig[32:64]), sig[64])
	})
	if allocs != 0 {
		t.Fatalf("Recover allocates %v times", allocs)
	}
}

func FuzzRecover(f *testing.F) {
	key, _ := crypto.GenerateKey()
	hash := crypto.Keccak256([]byte("seed"))
	sig, _ := crypto.Sign(hash, key)
	f.Add(hash, sig[:32], sig[32:64], sig[64])
	f.Add(make([]byte, 32), make([]byte, 32), make([]byte, 32), byte(0))
	f.Fuzz(func(t *testing.T, hash, r, s []byte, recid byte) {
		if len(hash) < 32 || len(r) < 32 || len(s) < 32 {
			return
		}
		checkRecover(t, (*[32]byte)(hash), (*[32]byte)(r), (*[32]byte)(s), recid&1)
	})
}
