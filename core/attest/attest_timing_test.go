package attest

import (
	"strconv"
	"testing"
)

var (
	sinkHash  [32]byte
	sinkErr   error
	sinkBatch *Batch
	sinkNodes [][32]byte
)

var benchLeafCounts = []int{1, 64, 256, MaxBatchLeaves}

// BenchmarkAttest measures a whole batch: tree build plus one signature per
// member of the default committee of 4.
func BenchmarkAttest(b *testing.B) {
	c := NewCommittee(testSeed, 4, 0)
	for _, n := range benchLeafCounts {
		b.Run("leaves="+strconv.Itoa(n), func(b *testing.B) {
			leaves := testLeaves(n, 1)
			batch := c.Attest(nil, 0, 0, leaves)
			b.ReportAllocs()
			seq := uint64(0)
			for b.Loop() {
				seq++
				batch = c.Attest(batch, seq, int64(seq), leaves)
			}
			sinkBatch = batch
			reportPerLeaf(b, n)
		})
	}
}

// BenchmarkBuildTree isolates the Merkle build, which must not allocate.
func BenchmarkBuildTree(b *testing.B) {
	h := newHasher()
	for _, n := range benchLeafCounts {
		b.Run("leaves="+strconv.Itoa(n), func(b *testing.B) {
			leaves := testLeaves(n, 1)
			nodes := buildTree(&h, nil, leaves)
			b.ReportAllocs()
			b.SetBytes(int64(32 * n))
			for b.Loop() {
				nodes = buildTree(&h, nodes, leaves)
			}
			sinkNodes = nodes
			reportPerLeaf(b, n)
		})
	}
}

func reportPerLeaf(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/leaf")
}

// BenchmarkVerify verifies one receipt: a depth-3 proof and 4 signatures.
func BenchmarkVerify(b *testing.B) {
	s := newSignedReceipt(b)
	leaf := s.commit.Leaf()
	b.ReportAllocs()
	for b.Loop() {
		sinkErr = Verify(s.info, leaf, s.proof, s.root, s.atts)
	}
	if sinkErr != nil {
		b.Fatal(sinkErr)
	}
}

func BenchmarkLeaf(b *testing.B) {
	small := ReceiptCommitment{Status: 1, GasUsed: 21000}
	medium := sampleCommitment(1)
	large := sampleCommitment(2)
	for range 6 {
		large.Logs = append(large.Logs, LogCommitment{Topics: make([][32]byte, 3), Data: make([]byte, 256)})
	}
	for _, bc := range []struct {
		name string
		r    *ReceiptCommitment
	}{{"small", &small}, {"medium", &medium}, {"large", &large}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(AppendReceiptCommitment(nil, bc.r))))
			for b.Loop() {
				sinkHash = bc.r.Leaf()
			}
		})
	}
}

func BenchmarkDigest(b *testing.B) {
	var root [32]byte
	b.ReportAllocs()
	for b.Loop() {
		sinkHash = Digest(1, 2, 3, root)
	}
}
