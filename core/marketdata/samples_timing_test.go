package marketdata

import (
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// movingBook is a Sampler whose book changes at every sample: a new
// reference (and funding, when perp), and 16 owners at each best price,
// one of them new (the worst case: every tick keeps a sample).
type movingBook struct {
	Live
	n    uint64
	perp bool
}

func (m *movingBook) SampleBook(_ clob.Hash, owners *[2][]clob.Address, max int) (clob.BookSample, bool) {
	m.n++
	var s clob.BookSample
	s.Ref2.SetUint64(2e18 + m.n)
	if m.perp {
		s.Funding.Abs.SetUint64(m.n)
	}
	for side := range owners {
		owners[side] = owners[side][:0]
		for i := range max {
			owners[side] = append(owners[side], clob.Address{byte(max - i), byte(m.n), byte(side)})
		}
	}
	return s, true
}

// BenchmarkSample is what the strategy report's book samples cost the
// index per book and tick when the book changed every tick, 16 owners a
// side (SampleBook's own cost is clob's BenchmarkSampleBook): 0
// allocations once the book's ring is full.
func BenchmarkSample(b *testing.B) {
	x := New(&movingBook{perp: true})
	x.AddMarket(&clob.MarketConfig{ID: clob.Hash{1}, LotSize: *uint256.NewInt(1), TickPrecision: *uint256.NewInt(1)})
	bk := x.books[clob.Hash{1}]
	for i := range SamplesPerBook {
		x.sample(bk, int64(i))
	}
	t := int64(SamplesPerBook)
	b.ReportAllocs()
	for b.Loop() {
		t++
		x.sample(bk, t)
	}
	if bk.samples.len() != SamplesPerBook || bk.samples.at(SamplesPerBook-1).TickUs != t {
		b.Fatal("no sample kept")
	}
}
