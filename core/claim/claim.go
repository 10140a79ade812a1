// Package claim computes what a bridge withdrawal's claim on the bridged
// chain is checked against: the claim hash the validators sign, the proof
// that carries their signatures, and a verifier that does what the bridged
// chain's contract does with them (docs/bridge.md §4).
//
// The layout is the live network's bridge contract's, so that a real
// contract verifies our proofs:
//
//	domain    = keccak256(keccak256("pod network") ‖ keccak256("attest_tx_bridge") ‖ uint256(chainID) ‖ uint256(version))
//	dataHash  = keccak256(bytes4(keccak256("deposit(address,uint256,address)")) ‖ pad32(token) ‖ uint256(amount) ‖ pad32(to))
//	claimHash = keccak256(domain ‖ pad32(bridge) ‖ dataHash ‖ aux)
//
// where token is the ledger-side token, amount is in the token's
// bridged-chain decimals, bridge is the ledger's Bridge address and aux the
// withdraw transaction's hash. A proof is the type byte ProofCertificate
// followed by 65-byte signatures (r ‖ s ‖ v, v ∈ {27, 28}) over claimHash
// itself, in strictly ascending signer order.
//
// The package is pure: no clock, no I/O, no state.
package claim

import (
	"bytes"
	"errors"
	"slices"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
)

// ProofCertificate is the proof type byte of a validator certificate (the
// contract also knows 1, a Merkle proof, which this venue never issues).
const ProofCertificate = 0

// SigLen is the length of one signature in a proof.
const SigLen = 65

var (
	depositSelector = crypto.Keccak256([]byte("deposit(address,uint256,address)"))[:4]
	domainName      = crypto.Keccak256([]byte("pod network"))
	domainPurpose   = crypto.Keccak256([]byte("attest_tx_bridge"))
)

// Domain is the domain separator of claims for a ledger chain id and bridge
// configuration version.
func Domain(chainID, version uint64) [32]byte {
	var b [128]byte
	copy(b[0:], domainName)
	copy(b[32:], domainPurpose)
	uint256.NewInt(chainID).PutUint256(b[64:96])
	uint256.NewInt(version).PutUint256(b[96:128])
	return [32]byte(crypto.Keccak256(b[:]))
}

// Hash is the claim hash of a withdrawal of amount (bridged-chain decimals)
// of the ledger-side token to the bridged-chain address to, with aux the
// auxiliary suffix (the withdraw transaction's hash).
func Hash(domain [32]byte, bridge, token, to [20]byte, amount *uint256.Int, aux []byte) [32]byte {
	var data [4 + 32*3]byte
	copy(data[:4], depositSelector)
	copy(data[4+12:], token[:])
	amount.PutUint256(data[36:68])
	copy(data[68+12:], to[:])
	dataHash := crypto.Keccak256(data[:])
	buf := make([]byte, 0, 96+len(aux))
	buf = append(buf, domain[:]...)
	buf = append(buf, make([]byte, 12)...)
	buf = append(buf, bridge[:]...)
	buf = append(buf, dataHash...)
	buf = append(buf, aux...)
	return [32]byte(crypto.Keccak256(buf))
}

// Signature is one validator's signature over a claim hash.
type Signature struct {
	Signer [20]byte
	Sig    [SigLen]byte // r ‖ s ‖ v, v ∈ {27, 28}
}

// Proof assembles a certificate from sigs: the type byte, then the
// signatures sorted by ascending signer. It does not check them.
func Proof(sigs []Signature) []byte {
	sorted := slices.Clone(sigs)
	slices.SortFunc(sorted, func(a, b Signature) int { return bytes.Compare(a.Signer[:], b.Signer[:]) })
	out := make([]byte, 1, 1+len(sorted)*SigLen)
	out[0] = ProofCertificate
	for i := range sorted {
		out = append(out, sorted[i].Sig[:]...)
	}
	return out
}

// Errors of Verify, one per way a proof fails the contract's checks.
var (
	ErrEmpty          = errors.New("claim: empty proof")
	ErrProofType      = errors.New("claim: unknown proof type")
	ErrLength         = errors.New("claim: proof length is not a whole number of signatures")
	ErrBadSignature   = errors.New("claim: invalid signature")
	ErrOrder          = errors.New("claim: signers not in strictly ascending order (a duplicate or out of order)")
	ErrNotValidator   = errors.New("claim: signer is not an active validator")
	ErrTooFewSigners  = errors.New("claim: fewer signatures than validators minus the tolerated faults")
	errMalformedValue = errors.New("claim: signature v is not 27 or 28")
)

// Verify checks proof for claimHash against a committee of validators of
// which f may be faulty, as the bridged chain's contract does: a
// certificate of signatures in strictly ascending signer order, every signer
// a validator, at least len(validators) − f of them.
func Verify(claimHash [32]byte, proof []byte, validators [][20]byte, f int) error {
	if len(proof) == 0 {
		return ErrEmpty
	}
	if proof[0] != ProofCertificate {
		return ErrProofType
	}
	sigs := proof[1:]
	if len(sigs)%SigLen != 0 {
		return ErrLength
	}
	var last [20]byte
	n := len(sigs) / SigLen
	for i := range n {
		signer, err := recoverSigner(claimHash, sigs[i*SigLen:(i+1)*SigLen])
		if err != nil {
			return err
		}
		if bytes.Compare(signer[:], last[:]) <= 0 {
			return ErrOrder
		}
		if !slices.Contains(validators, signer) {
			return ErrNotValidator
		}
		last = signer
	}
	if n < len(validators)-f {
		return ErrTooFewSigners
	}
	return nil
}

// recoverSigner is ecrecover over a 65-byte r ‖ s ‖ v signature.
func recoverSigner(digest [32]byte, sig []byte) ([20]byte, error) {
	v := sig[64]
	if v != 27 && v != 28 {
		return [20]byte{}, errMalformedValue
	}
	var rsv [SigLen]byte
	copy(rsv[:], sig)
	rsv[64] = v - 27
	pub, err := crypto.SigToPub(digest[:], rsv[:])
	if err != nil {
		return [20]byte{}, ErrBadSignature
	}
	return crypto.PubkeyToAddress(*pub), nil
}
