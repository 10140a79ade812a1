package marketdata

import (
	"fmt"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// benchReportInput is a report's input of fills fills, half on a spot and
// half on a perp book, one fill a tick (500 ms apart) alternating sides,
// each tick with a sample whose reference and funding moved.
func benchReportInput(fills int) *ReportInput {
	const tickUs = 500_000
	in := &ReportInput{rep: &Report{ToUs: int64(fills) * tickUs, Complete: true}}
	for k, kind := range []clob.MarketKind{clob.Spot, clob.Perp} {
		m := &reportMarket{cfg: clob.MarketConfig{ID: clob.Hash{31: byte(k + 1)}, Name: fmt.Sprint("M", k), QuoteSymbol: ReportQuote,
			Kind: kind, IntervalUs: tickUs, LotSize: *uint256.NewInt(1e15), TickPrecision: *uint256.NewInt(1e16)}}
		var pos clob.Signed
		for i := range fills / 2 {
			t := int64(i+1) * tickUs
			f := FillRow{TickUs: t, Book: m.cfg.ID, Side: clob.Side(i % 2), Maker: i%3 == 0, Perp: kind == clob.Perp}
			f.Base.SetUint64(1e18)
			price := uint64(2000+i%7) * 1e18
			f.Price.SetUint64(price)
			f.Quote.SetUint64(price)
			f.Fee.SetUint64(2e14)
			if f.Perp {
				pos = addSigned(pos, clob.Signed{Abs: f.Base, Neg: f.Side == clob.Sell})
				f.Position = pos
			}
			m.rows = append(m.rows, f)
			s := reportSample{TickUs: t, top: [2]bool{i%2 == 0, i%5 == 0}}
			s.Ref2.SetUint64(2 * (2000 + uint64(i%11)) * 1e18)
			if kind == clob.Perp {
				s.Funding.Abs.SetUint64(uint64(i) * 1e13)
			}
			m.samples = append(m.samples, s)
		}
		in.ms = append(in.ms, m)
	}
	return in
}

// BenchmarkReport is the strategy report's computation (ReportInput.Report,
// without the index's lock) per report of N fills.
func BenchmarkReport(b *testing.B) {
	for _, n := range []int{2_048, 10_000, 100_000} {
		b.Run(fmt.Sprint(n, "fills"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				in := benchReportInput(n) // Report fills it in
				b.StartTimer()
				if rep := in.Report(); rep.Total.Fills != n {
					b.Fatalf("%d fills", rep.Total.Fills)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/fill")
		})
	}
}

// BenchmarkReportInput is how long a report holds the index's read lock
// (ReportInput's copy), at the bounds: an account with FillsPerAccount
// fills on one book whose ring holds SamplesPerBook samples of 16 owners
// a side, every sample searched for the account.
func BenchmarkReportInput(b *testing.B) {
	x := aliceBuying(SamplesPerBook+1, FillsPerAccount)
	q := &ReportQuery{Owner: alice, HasFrom: true, FromUs: x.books[bookA].samples.at(0).TickUs + 1}
	b.ReportAllocs()
	for b.Loop() {
		if in, err := x.ReportInput(q); err != nil || len(in.ms[0].samples) != SamplesPerBook {
			b.Fatalf("%v", err)
		}
	}
}
