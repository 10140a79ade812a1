package attest

import (
	"encoding/binary"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

// testLeaves returns n distinct leaves derived from salt.
func testLeaves(n int, salt byte) [][32]byte {
	leaves := make([][32]byte, n)
	for i := range leaves {
		var pre [9]byte
		pre[0] = salt
		binary.BigEndian.PutUint64(pre[1:], uint64(i))
		copy(leaves[i][:], crypto.Keccak256(pre[:]))
	}
	return leaves
}

// naiveRoot is the reference: pad the leaf level with zero nodes up to a
// power of two, then hash pairs level by level, with nothing precomputed.
func naiveRoot(leaves [][32]byte) [32]byte {
	width := 1
	for width < len(leaves) {
		width *= 2
	}
	level := make([][32]byte, width)
	for i := range leaves {
		level[i] = [32]byte(crypto.Keccak256(append([]byte{0x00}, leaves[i][:]...)))
	}
	for len(level) > 1 {
		next := make([][32]byte, len(level)/2)
		for i := range next {
			pre := append(append([]byte{0x01}, level[2*i][:]...), level[2*i+1][:]...)
			next[i] = [32]byte(crypto.Keccak256(pre))
		}
		level = next
	}
	return level[0]
}

func TestDepthFor(t *testing.T) {
	f := func(n, want int) {
		t.Helper()
		if got := depthFor(n); got != want {
			t.Fatalf("depthFor(%d) = %d, want %d", n, got, want)
		}
	}
	f(1, 0)
	f(2, 1)
	f(3, 2)
	f(4, 2)
	f(5, 3)
	f(255, 8)
	f(256, 8)
	f(257, 9)
	f(MaxBatchLeaves, MaxBatchDepth)
}

func TestTreeMatchesNaive(t *testing.T) {
	h := newHasher()
	var nodes [][32]byte
	sizes := []int{255, 256, 257, 511, 512, 513, MaxBatchLeaves - 1, MaxBatchLeaves}
	for n := 1; n <= 70; n++ {
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		leaves := testLeaves(n, byte(n))
		// The same slice is reused across sizes, as a Batch reuses it.
		nodes = buildTree(&h, nodes, leaves)
		if want := naiveRoot(leaves); nodes[1] != want {
			t.Fatalf("n=%d: root %x, naive %x", n, nodes[1], want)
		}
	}
}

func TestProofsFoldToRoot(t *testing.T) {
	c := NewCommittee(testSeed, 1, 0)
	h := newHasher()
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 100, 255, 256, 257, MaxBatchLeaves} {
		leaves := testLeaves(n, 7)
		b := c.Attest(nil, 1, 1, leaves)
		if b.Len() != n {
			t.Fatalf("n=%d: Len() = %d", n, b.Len())
		}
		for i := range leaves {
			p := b.Proof(i)
			if want := uint64(1)<<depthFor(n) + uint64(i); p.GeneralizedIndex != want {
				t.Fatalf("n=%d leaf %d: gi %d, want %d", n, i, p.GeneralizedIndex, want)
			}
			root, index, ok := proofRoot(&h, &leaves[i], &p)
			if !ok || root != b.Root || index != uint64(i) {
				t.Fatalf("n=%d leaf %d: proof does not fold to the root (ok=%v index=%d)", n, i, ok, index)
			}
		}
	}
}

func TestProofShapeLimits(t *testing.T) {
	h := newHasher()
	var leaf [32]byte
	f := func(gi uint64, pathLen int, wantOK bool) {
		t.Helper()
		p := Proof{GeneralizedIndex: gi, Path: make([][32]byte, pathLen)}
		if _, _, ok := proofRoot(&h, &leaf, &p); ok != wantOK {
			t.Fatalf("gi=%d path=%d: ok=%v, want %v", gi, pathLen, ok, wantOK)
		}
	}
	f(0, 0, false)
	f(1, 0, true)
	f(1, 1, false)
	f(2, 1, true)
	f(3, 0, false)
	f(3, 2, false)
	f(1<<MaxBatchDepth, MaxBatchDepth, true)
	f(1<<(MaxBatchDepth+1)-1, MaxBatchDepth, true)
	f(1<<(MaxBatchDepth+1), MaxBatchDepth+1, false)
	f(1<<63, 63, false)
	f(^uint64(0), 63, false)
}

// TestPaddingIsNotALeaf checks that a padding slot holds the zero node, which
// no leaf hashes to, and that its proof cannot place the zero leaf there.
func TestPaddingIsNotALeaf(t *testing.T) {
	c := NewCommittee(testSeed, 1, 0)
	b := c.Attest(nil, 1, 1, testLeaves(3, 1))
	if b.nodes[7] != ([32]byte{}) {
		t.Fatalf("padding slot is %x, want zero", b.nodes[7])
	}
	h := newHasher()
	var zeroLeaf [32]byte
	p := Proof{GeneralizedIndex: 7, Path: [][32]byte{b.nodes[6], b.nodes[2]}}
	if root, _, ok := proofRoot(&h, &zeroLeaf, &p); !ok || root == b.Root {
		t.Fatalf("zero leaf proven at a padding slot (ok=%v)", ok)
	}
}

func TestEmptyNodes(t *testing.T) {
	h := newHasher()
	if emptyNodes[0] != ([32]byte{}) {
		t.Fatalf("emptyNodes[0] is not zero")
	}
	for d := 1; d <= MaxBatchDepth; d++ {
		if want := h.innerNode(&emptyNodes[d-1], &emptyNodes[d-1]); emptyNodes[d] != want {
			t.Fatalf("emptyNodes[%d] wrong", d)
		}
	}
}

func TestBuildTreeDoesNotAllocate(t *testing.T) {
	h := newHasher()
	leaves := testLeaves(MaxBatchLeaves, 3)
	nodes := buildTree(&h, nil, leaves)
	for _, n := range []int{1, 3, 256, MaxBatchLeaves} {
		allocs := testing.AllocsPerRun(20, func() {
			nodes = buildTree(&h, nodes, leaves[:n])
		})
		if allocs != 0 {
			t.Fatalf("n=%d: %v allocs per build", n, allocs)
		}
	}
}
