package clob

import "testing"

// BenchmarkSampleBook is what the strategy report's book samples cost the
// engine per book and tick (marketdata.Index samples each book that ran):
// a book of 1 000 resting orders, 100 a level from 4 owners a side, the best
// level of each side walked for its owners (at most 16).
func BenchmarkSampleBook(b *testing.B) {
	bb := newBenchBook(b, 1_000)
	var owners [2][]Address
	b.ReportAllocs()
	for b.Loop() {
		s, ok := bb.h.e.SampleBook(tBookID, &owners, 16)
		if !ok || s.Ref2.IsZero() || len(owners[Buy]) == 0 || len(owners[Sell]) == 0 {
			b.Fatalf("sample %v %v, owners %v", ok, s.Ref2, owners)
		}
	}
}
