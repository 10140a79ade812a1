package attest

import (
	"crypto/ecdsa"
	"encoding/binary"
	"errors"

	"github.com/ethereum/go-ethereum/crypto"
)

// digestDomain prefixes every signed digest; see doc.go.
const digestDomain = "ledgervenue/attest/batch/v1"

// Attestation is one validator's signature over a batch root, as carried by
// each receipt of the batch.
type Attestation struct {
	Validator  [20]byte
	Seq        uint64   // the batch's sequence number (wire: sequence_number)
	BatchIndex uint32   // the receipt's leaf index inside the batch (wire: batch_index)
	Timestamp  int64    // µs (wire: timestamp)
	Signature  [65]byte // r || s || v, v in {27, 28}
}

// ValidatorSig is one validator's signature over a batch digest.
type ValidatorSig struct {
	Validator [20]byte
	Signature [65]byte // r || s || v, v in {27, 28}
}

// Batch is a signed Merkle batch of leaves. The caller owns it and may pass
// it back to Attest to reuse its memory.
//
// Invariant: len(nodes) == 2 << depth, nodes[1] == Root, and Sigs holds one
// signature per signing member (every member, or those AttestBy named), in
// key order.
type Batch struct {
	Epoch     uint64
	Seq       uint64
	Timestamp int64 // µs
	Root      [32]byte
	// Digest is what every member signed: Digest(Epoch, Seq, Timestamp,
	// Root). It names the batch (the node serves it as the blockHash of
	// the plain transactions the batch attests).
	Digest [32]byte
	Sigs   []ValidatorSig

	leafCount int
	depth     int
	nodes     [][32]byte // by generalized index; nodes[0] is unused
}

// Attest builds the Merkle tree over leaves and has every committee member
// sign Digest(c.Epoch, seq, ts, root). It fills dst, reusing its memory, and
// returns it; a nil dst allocates a new Batch. Leaves are hashed, not kept.
// With a reused dst the tree build does not allocate; signing does (inside
// go-ethereum's crypto.Sign).
//
// REQUIRES: 1 <= len(leaves) <= MaxBatchLeaves.
func (c *Committee) Attest(dst *Batch, seq uint64, ts int64, leaves [][32]byte) *Batch {
	return c.AttestBy(dst, seq, ts, leaves, nil)
}

// AttestBy is Attest signed by the members at the given indices only (nil:
// every member): the validators that are not silent (a committee fault). A
// batch with fewer than Quorum signatures does not verify, so the caller
// waits for a quorum of signers before it attests.
//
// REQUIRES: 1 <= len(leaves) <= MaxBatchLeaves; members ascending, each in
// [0, N).
func (c *Committee) AttestBy(dst *Batch, seq uint64, ts int64, leaves [][32]byte, members []int) *Batch {
	if len(leaves) < 1 || len(leaves) > MaxBatchLeaves {
		panic("BUG: attest.Committee.Attest: leaf count out of [1, MaxBatchLeaves]")
	}
	if dst == nil {
		dst = new(Batch)
	}
	dst.Epoch, dst.Seq, dst.Timestamp = c.Epoch, seq, ts
	dst.leafCount = len(leaves)
	dst.depth = depthFor(len(leaves))
	dst.nodes = buildTree(&c.h, dst.nodes, leaves)
	dst.Root = dst.nodes[1]

	dst.Digest = c.h.digest(c.Epoch, seq, ts, &dst.Root)
	dst.Sigs = dst.Sigs[:0]
	signers := len(members)
	if members == nil {
		signers = c.N
	}
	for k := range signers {
		i := k
		if members != nil {
			if i = members[k]; i < 0 || i >= c.N || (k > 0 && i <= members[k-1]) {
				panic("BUG: attest.Committee.AttestBy: members not ascending indices in [0, N)")
			}
		}
		dst.Sigs = append(dst.Sigs, ValidatorSig{Validator: c.Members[i], Signature: sign(&dst.Digest, c.keys[i])})
	}
	return dst
}

// ErrRootMismatch means a stored batch's leaves do not hash to the root
// its signatures are over: the leaves or the batch are not what was signed.
var ErrRootMismatch = errors.New("attest: the leaves do not hash to the batch's root")

// Restore rebuilds a batch the committee signed earlier from its stored
// parts, without signing anything: the tree over leaves, whose root must be
// root, and the stored signatures. A restarted node restores its batches so
// that no record is ever signed twice (two roots under one sequence number
// would look like equivocation to a verifier).
//
// REQUIRES: 1 <= len(leaves) <= MaxBatchLeaves.
func Restore(epoch, seq uint64, ts int64, root [32]byte, leaves [][32]byte, sigs []ValidatorSig) (*Batch, error) {
	if len(leaves) < 1 || len(leaves) > MaxBatchLeaves {
		panic("BUG: attest.Restore: leaf count out of [1, MaxBatchLeaves]")
	}
	h := getHasher()
	defer putHasher(h)
	b := &Batch{Epoch: epoch, Seq: seq, Timestamp: ts, leafCount: len(leaves), depth: depthFor(len(leaves))}
	b.nodes = buildTree(h, nil, leaves)
	if b.Root = b.nodes[1]; b.Root != root {
		return nil, ErrRootMismatch
	}
	b.Digest = h.digest(epoch, seq, ts, &b.Root)
	b.Sigs = append([]ValidatorSig(nil), sigs...)
	return b, nil
}

func sign(d *[32]byte, key *ecdsa.PrivateKey) (out [65]byte) {
	sig, err := crypto.Sign(d[:], key)
	if err != nil {
		// Only a malformed digest or key fails, and both are ours.
		panic("BUG: attest: crypto.Sign failed: " + err.Error())
	}
	copy(out[:], sig)
	out[64] += 27
	return out
}

// Len returns the number of leaves in the batch.
func (b *Batch) Len() int { return b.leafCount }

// Proof returns the Merkle proof of leaf i. It allocates the path.
//
// REQUIRES: 0 <= i < b.Len().
func (b *Batch) Proof(i int) Proof {
	b.checkIndex(i)
	gi := 1<<b.depth + i
	p := Proof{GeneralizedIndex: uint64(gi), Path: make([][32]byte, b.depth)}
	for d := range b.depth {
		p.Path[d] = b.nodes[gi^1]
		gi >>= 1
	}
	return p
}

// Attestations returns what receipt i of the batch carries: one attestation
// per signing member, in key order. It allocates the slice.
//
// REQUIRES: 0 <= i < b.Len().
func (b *Batch) Attestations(i int) []Attestation {
	b.checkIndex(i)
	atts := make([]Attestation, len(b.Sigs))
	for k := range b.Sigs {
		atts[k] = Attestation{
			Validator:  b.Sigs[k].Validator,
			Seq:        b.Seq,
			BatchIndex: uint32(i),
			Timestamp:  b.Timestamp,
			Signature:  b.Sigs[k].Signature,
		}
	}
	return atts
}

func (b *Batch) checkIndex(i int) {
	if i < 0 || i >= b.leafCount {
		panic("BUG: attest.Batch: leaf index out of range")
	}
}

// Digest is the hash every validator signs for a batch; its layout is in
// doc.go. Safe for concurrent use.
func Digest(epoch, seq uint64, ts int64, root [32]byte) [32]byte {
	h := getHasher()
	d := h.digest(epoch, seq, ts, &root)
	putHasher(h)
	return d
}

func (h *hasher) digest(epoch, seq uint64, ts int64, root *[32]byte) [32]byte {
	p := append(h.enc[:0], digestDomain...)
	p = binary.BigEndian.AppendUint64(p, epoch)
	p = binary.BigEndian.AppendUint64(p, seq)
	p = binary.BigEndian.AppendUint64(p, uint64(ts))
	p = append(p, root[:]...)
	h.enc = p
	return h.sum(p)
}
