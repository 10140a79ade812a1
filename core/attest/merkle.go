package attest

import (
	"math/bits"
	"sync"

	"github.com/ethereum/go-ethereum/crypto"
)

const (
	// MaxBatchLeaves bounds the leaves of one batch. 1024 keeps a batch's
	// tree at 64 KiB and its proofs at 10 hashes.
	MaxBatchLeaves = 1024
	// MaxBatchDepth is the depth of a full batch: log2(MaxBatchLeaves).
	MaxBatchDepth = 10

	leafPrefix  = 0x00
	innerPrefix = 0x01
)

// Proof locates a leaf under a batch root.
type Proof struct {
	// GeneralizedIndex is 2^depth + the leaf's index in the batch.
	GeneralizedIndex uint64
	// Path holds the sibling hashes, bottom-up; len(Path) == depth.
	Path [][32]byte
}

// emptyNodes[d] is the hash of a subtree of height d made only of padding.
var emptyNodes = func() (e [MaxBatchDepth + 1][32]byte) {
	h := newHasher()
	for d := 1; d <= MaxBatchDepth; d++ {
		e[d] = h.innerNode(&e[d-1], &e[d-1])
	}
	return e
}()

// hasher wraps a keccak state with scratch input and output buffers that
// live on the heap, so hashing through the KeccakState interface does not
// make callers' arrays escape.
type hasher struct {
	st  crypto.KeccakState
	buf [1 + 2*32]byte
	out [32]byte
	enc []byte // variable-length preimages (Digest, Leaf)
}

func newHasher() hasher { return hasher{st: crypto.NewKeccakState()} }

// hasherPool serves the functions that run on many goroutines (Leaf,
// Digest, Verify); a Committee keeps its own hasher.
var hasherPool = sync.Pool{New: func() any { h := newHasher(); return &h }}

func getHasher() *hasher { return hasherPool.Get().(*hasher) }

// maxPooledEncSize stops one receipt with huge logs from pinning a large
// buffer in the pool for ever.
const maxPooledEncSize = 64 << 10

func putHasher(h *hasher) {
	if cap(h.enc) > maxPooledEncSize {
		h.enc = nil
	}
	hasherPool.Put(h)
}

func (h *hasher) sum(p []byte) [32]byte {
	h.st.Reset()
	h.st.Write(p)
	h.st.Read(h.out[:])
	return h.out
}

func (h *hasher) leafNode(leaf *[32]byte) [32]byte {
	h.buf[0] = leafPrefix
	copy(h.buf[1:], leaf[:])
	return h.sum(h.buf[:1+32])
}

func (h *hasher) innerNode(left, right *[32]byte) [32]byte {
	h.buf[0] = innerPrefix
	copy(h.buf[1:], left[:])
	copy(h.buf[1+32:], right[:])
	return h.sum(h.buf[:])
}

// depthFor returns the depth of the tree over n leaves: ceil(log2(n)).
func depthFor(n int) int { return bits.Len(uint(n - 1)) }

// buildTree hashes leaves into nodes, indexed by generalized index, and
// returns the grown nodes slice. Padding subtrees take their precomputed
// hash, so the cost is about 2*len(leaves) hashes.
//
// REQUIRES: 1 <= len(leaves) <= MaxBatchLeaves.
func buildTree(h *hasher, nodes [][32]byte, leaves [][32]byte) [][32]byte {
	depth := depthFor(len(leaves))
	width := 1 << depth
	if cap(nodes) < 2*width {
		nodes = make([][32]byte, 2*width)
	}
	nodes = nodes[:2*width]
	for i := range leaves {
		nodes[width+i] = h.leafNode(&leaves[i])
	}
	clear(nodes[width+len(leaves):])
	for d := 1; d <= depth; d++ {
		levelStart := width >> d
		for p := range levelStart {
			gi := levelStart + p
			if p<<d >= len(leaves) {
				nodes[gi] = emptyNodes[d]
				continue
			}
			nodes[gi] = h.innerNode(&nodes[2*gi], &nodes[2*gi+1])
		}
	}
	return nodes
}

// proofRoot folds leaf up the proof and returns the root it implies, and
// the leaf's index in its batch. ok is false when the proof's shape is
// invalid (gi zero, deeper than MaxBatchDepth, or a path of the wrong
// length).
func proofRoot(h *hasher, leaf *[32]byte, p *Proof) (root [32]byte, index uint64, ok bool) {
	gi := p.GeneralizedIndex
	if gi == 0 {
		return root, 0, false
	}
	depth := bits.Len64(gi) - 1
	if depth > MaxBatchDepth || len(p.Path) != depth {
		return root, 0, false
	}
	index = gi - 1<<depth
	node := h.leafNode(leaf)
	for i := range p.Path {
		if gi&1 == 1 {
			node = h.innerNode(&p.Path[i], &node)
		} else {
			node = h.innerNode(&node, &p.Path[i])
		}
		gi >>= 1
	}
	return node, index, true
}
