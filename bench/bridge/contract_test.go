package bridge

import (
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/claim"
)

// contractError is the bridge contract's error for each of core/claim's
// (the contract has one error for an empty proof and a wrong type, and
// one for every signature that does not recover).
func contractError(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, claim.ErrEmpty), errors.Is(err, claim.ErrProofType):
		return "InvalidProofType"
	case errors.Is(err, claim.ErrLength):
		return "InvalidProofLength"
	case errors.Is(err, claim.ErrOrder):
		return "InvalidSignatureOrder"
	case errors.Is(err, claim.ErrNotValidator):
		return "SignerNotActiveValidator"
	case errors.Is(err, claim.ErrTooFewSigners):
		return "InsufficientValidatorWeight"
	default: // ErrBadSignature, a v that is not 27 or 28
		return "InvalidSignature"
	}
}

// TestContractAgreesWithClaim signs claims with ledgerd's committee keys
// and checks that the contract pays exactly the proofs core/claim.Verify
// accepts, failing the others with the matching error.
func TestContractAgreesWithClaim(t *testing.T) {
	tools(t)
	b := deploy(t, startAnvil(t))
	c := b.Committee
	usd := b.Tokens[0] // 6 decimals; the ledger side is the native token
	// The bridge holds what deposits locked; mint it some.
	tx, err := usd.Transact(b.owner, "mint", b.Bridge.Address(), big.NewInt(1_000_000_000))
	mined(t, b.Client, tx, err)

	to := common.Address{19: 0x42}
	amount := big.NewInt(2_500_000) // 2.5 USD
	aux := crypto.Keccak256([]byte("a withdraw transaction's hash"))
	hashOf := func(amount *big.Int, to common.Address, aux []byte) [32]byte {
		return claim.Hash(claim.Domain(ledgerChainID, 1), core.BridgeAddress, core.NativeToken, to, uint256.MustFromBig(amount), aux)
	}
	h := hashOf(amount, to, aux)
	var onChain []any
	if err := b.Bridge.Call(nil, &onChain, "claimHash", usd.Address(), amount, to, aux); err != nil {
		t.Fatal(err)
	}
	if got := onChain[0].([32]byte); got != h {
		t.Fatalf("the contract's claim hash %x, core/claim's %x", got, h)
	}

	all := c.SignClaim(h, []int{0, 1, 2, 3})
	quorum := claim.Proof(all[:c.N-c.F])
	tampered := claim.Proof(all)
	tampered[1+40] ^= 0x01 // in the first signature's s
	stranger := attestKeySig(t, h)
	cases := []struct {
		name       string
		amount     *big.Int
		to         common.Address
		proof, aux []byte
	}{
		{"tampered amount", big.NewInt(2_500_001), to, quorum, aux},
		{"tampered recipient", amount, common.Address{19: 0x43}, quorum, aux},
		{"tampered suffix", amount, to, quorum, crypto.Keccak256([]byte("another"))},
		{"tampered signature", amount, to, tampered, aux},
		{"duplicated signer", amount, to, claim.Proof([]claim.Signature{all[0], all[0], all[1], all[2]}), aux},
		{"n - f - 1 signatures", amount, to, claim.Proof(all[:c.N-c.F-1]), aux},
		{"a stranger's signature", amount, to, claim.Proof(append(all[:c.N-c.F-1:c.N-c.F-1], stranger)), aux},
		{"out of order", amount, to, reversed(quorum), aux},
		{"merkle proof type", amount, to, append([]byte{1}, quorum[1:]...), aux},
		{"truncated", amount, to, quorum[:len(quorum)-1], aux},
		{"empty", amount, to, nil, aux},
	}
	for _, k := range cases {
		want := contractError(claim.Verify(hashOf(k.amount, k.to, k.aux), k.proof, c.Members, c.F))
		if want == "" {
			t.Fatalf("%s: core/claim accepts it; the case is wrong", k.name)
		}
		if got := b.callClaim(t, usd.Address(), k.amount, k.to, k.proof, k.aux); got != want {
			t.Errorf("%s: the contract says %q, core/claim %q", k.name, got, want)
		}
	}

	if err := claim.Verify(h, quorum, c.Members, c.F); err != nil {
		t.Fatalf("core/claim refuses the n - f proof: %v", err)
	}
	tx, err = b.Bridge.Transact(b.owner, "claim", usd.Address(), amount, to, quorum, aux)
	mined(t, b.Client, tx, err)
	if got := balanceOf(t, usd, to); got.Cmp(amount) != 0 {
		t.Fatalf("the recipient holds %s after the claim, want %s", got, amount)
	}
	// The same claim hash again, even with another valid proof, is refused.
	if got := b.callClaim(t, usd.Address(), amount, to, claim.Proof(all), aux); got != "RequestAlreadyProcessed" {
		t.Errorf("a second claim: %q, want RequestAlreadyProcessed", got)
	}
	// Equal withdrawals with another suffix are another claim: it pays.
	aux2 := crypto.Keccak256([]byte("another withdraw transaction's hash"))
	proof2 := claim.Proof(c.SignClaim(hashOf(amount, to, aux2), []int{1, 2, 3}))
	tx, err = b.Bridge.Transact(b.owner, "claim", usd.Address(), amount, to, proof2, aux2)
	mined(t, b.Client, tx, err)
	if got := balanceOf(t, usd, to); got.Cmp(new(big.Int).Mul(amount, big.NewInt(2))) != 0 {
		t.Fatalf("the recipient holds %s after two claims, want twice %s", got, amount)
	}
	// A token the bridge does not know is refused before any signature.
	if got := b.callClaim(t, common.Address{1}, amount, to, quorum, aux); got != "TokenNotWhitelisted" {
		t.Errorf("an unknown token: %q", got)
	}
}

// attestKeySig is a signature of h by a key outside the committee.
func attestKeySig(t *testing.T, h [32]byte) claim.Signature {
	t.Helper()
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte("not a validator")))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := crypto.Sign(h[:], k)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return claim.Signature{Signer: crypto.PubkeyToAddress(k.PublicKey), Sig: [claim.SigLen]byte(sig)}
}

// reversed is a certificate with its signatures in descending signer order.
func reversed(proof []byte) []byte {
	out := []byte{proof[0]}
	for i := len(proof) - claim.SigLen; i >= 1; i -= claim.SigLen {
		out = append(out, proof[i:i+claim.SigLen]...)
	}
	return out
}
