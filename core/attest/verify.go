package attest

import (
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/crypto"
)

// Verify's failures. The returned error wraps one of these with detail
// (which attestation, which validator); test with errors.Is.
var (
	ErrInvalidCommittee      = errors.New("attest: invalid committee info")
	ErrBadProof              = errors.New("attest: bad merkle proof")
	ErrNotEnoughAttestations = errors.New("attest: not enough attestations")
	ErrTooManyAttestations   = errors.New("attest: more attestations than committee members")
	ErrBatchIndexMismatch    = errors.New("attest: batch index does not match proof")
	ErrUnknownValidator      = errors.New("attest: unknown validator")
	ErrDuplicateValidator    = errors.New("attest: duplicate validator")
	ErrBadSignature          = errors.New("attest: bad signature")
)

// Verify checks that leaf is at proof.GeneralizedIndex under root and that at
// least info.Quorum distinct members signed Digest(info.Epoch, seq, ts, root),
// where seq and ts are each attestation's own. It is strict: every
// attestation must name a member, appear once, carry the proof's leaf index
// and a signature that recovers to its Validator; one bad attestation fails
// the receipt even if the others reach the quorum.
//
// Cheap checks run before any signature is recovered, and at most
// len(info.Members) signatures are recovered, so hostile input costs a
// bounded amount of work. Safe for concurrent use. It allocates (signature
// recovery does), and builds its error with fmt only on failure.
func Verify(info Info, leaf [32]byte, proof Proof, root [32]byte, atts []Attestation) error {
	if info.Quorum < 1 || info.Quorum > len(info.Members) || len(info.Members) > MaxCommitteeSize {
		return fmt.Errorf("%w: quorum %d of %d members", ErrInvalidCommittee, info.Quorum, len(info.Members))
	}
	h := getHasher()
	defer putHasher(h)
	got, index, ok := proofRoot(h, &leaf, &proof)
	if !ok {
		return fmt.Errorf("%w: generalized index %d with %d path hashes", ErrBadProof, proof.GeneralizedIndex, len(proof.Path))
	}
	if got != root {
		return fmt.Errorf("%w: leaf does not hash up to root %x", ErrBadProof, root)
	}
	if len(atts) < info.Quorum {
		return fmt.Errorf("%w: %d of %d required", ErrNotEnoughAttestations, len(atts), info.Quorum)
	}
	if len(atts) > len(info.Members) {
		return fmt.Errorf("%w: %d for %d members", ErrTooManyAttestations, len(atts), len(info.Members))
	}
	if err := checkSigners(info.Members, index, atts); err != nil {
		return err
	}
	return checkSignatures(h, info.Epoch, &root, atts)
}

// checkSigners rejects attestations for another leaf, from non-members, or
// from a member seen before. It hashes nothing.
func checkSigners(members [][20]byte, index uint64, atts []Attestation) error {
	var seen [MaxCommitteeSize / 64]uint64
	for i := range atts {
		a := &atts[i]
		if uint64(a.BatchIndex) != index {
			return fmt.Errorf("%w: attestation %d has batch index %d, proof has %d", ErrBatchIndexMismatch, i, a.BatchIndex, index)
		}
		j := indexOf(members, a.Validator)
		if j < 0 {
			return fmt.Errorf("%w: attestation %d from %x", ErrUnknownValidator, i, a.Validator)
		}
		if seen[j/64]&(1<<(j%64)) != 0 {
			return fmt.Errorf("%w: attestation %d from %x", ErrDuplicateValidator, i, a.Validator)
		}
		seen[j/64] |= 1 << (j % 64)
	}
	return nil
}

// checkSignatures recovers each attestation's signer and compares it with
// its Validator. Consecutive attestations of one batch share seq and ts, so
// the digest is recomputed only when they change.
func checkSignatures(h *hasher, epoch uint64, root *[32]byte, atts []Attestation) error {
	var d [32]byte
	var sig [65]byte
	for i := range atts {
		a := &atts[i]
		if i == 0 || a.Seq != atts[i-1].Seq || a.Timestamp != atts[i-1].Timestamp {
			d = h.digest(epoch, a.Seq, a.Timestamp, root)
		}
		v := a.Signature[64]
		if v != 27 && v != 28 {
			return fmt.Errorf("%w: attestation %d from %x has v = %d", ErrBadSignature, i, a.Validator, v)
		}
		sig = a.Signature
		sig[64] = v - 27
		pub, err := crypto.Ecrecover(d[:], sig[:])
		if err != nil || len(pub) != 65 {
			return fmt.Errorf("%w: attestation %d from %x: cannot recover signer", ErrBadSignature, i, a.Validator)
		}
		if signer := h.address(pub); signer != a.Validator {
			return fmt.Errorf("%w: attestation %d names %x but was signed by %x", ErrBadSignature, i, a.Validator, signer)
		}
	}
	return nil
}

// address derives an Ethereum address from a 65-byte uncompressed key.
func (h *hasher) address(pub []byte) (addr [20]byte) {
	full := h.sum(pub[1:])
	copy(addr[:], full[12:])
	return addr
}
