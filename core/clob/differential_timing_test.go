package clob_test

import (
	"fmt"
	"testing"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/internal/refbook"
)

// Benchmarks of the naive reference engine on exactly the shape of the fast
// engine's BenchmarkTick (engine_timing_test.go), so BENCHMARKS.md can put
// fast and naive side by side from one run: a book of R one-lot resting
// orders, 100 per level, kept in steady state by rounds of two ticks with
// 10 000 new intents each (takers that clear `take` levels, as many makers
// that rebuild them on the other side, idle IOC orders for the rest).
// Admission is inside the timer, as in the fast benchmark; ns/order is the
// time per new intent.

const (
	refBenchPerLevel = 100
	refBenchIntents  = 10_000
	refBenchTakeMax  = 50
	refBenchIv       = 1_000_000
)

type refBench struct {
	e      *refbook.Engine
	acc    *accounts
	cfg    clob.MarketConfig
	a      clob.Admission
	env    clob.Envelope
	nowUs  int64
	bestB  int64
	bestA  int64
	take   int
	owners [8]clob.Address
	out    clob.TickResult
}

func newRefBench(tb testing.TB, resting int) *refBench {
	e15 := pow10(15)
	bb := &refBench{
		e:     refbook.NewEngine(clob.Limits{OrdersMax: resting + 2*refBenchIntents, PendingMax: 1 << 14}),
		acc:   newAccounts(),
		env:   clob.Envelope{Intents: make([]clob.Intent, 1)},
		nowUs: 100,
	}
	bb.cfg = clob.MarketConfig{ID: clob.Hash{0x01}, Base: clob.Address{0xBA}, Quote: clob.Address{0x90},
		IntervalUs: refBenchIv, LotSize: e15, MakerFee: e15}
	bb.cfg.TickPrecision.Mul(&e15, uint256.NewInt(2))
	bb.cfg.TakerFee.Mul(&e15, uint256.NewInt(2))
	if err := bb.e.CreateMarket(&bb.cfg); err != nil {
		tb.Fatal(err)
	}
	for i := range bb.owners {
		bb.owners[i] = clob.Address{'o', 'w', 'n', 'e', 'r', '0' + byte(i)}
		var base, quote uint256.Int
		base.Mul(uint256.NewInt(1<<50), &e15)
		quote.Mul(uint256.NewInt(1<<60), uint256.NewInt(1e12))
		bb.acc.Credit(bb.cfg.Base, bb.owners[i], &base)
		bb.acc.Credit(bb.cfg.Quote, bb.owners[i], &quote)
	}
	levels := max(resting/2/refBenchPerLevel, 1)
	bb.take = min(levels, refBenchTakeMax)
	bb.bestB = 1_000_000
	bb.bestA = bb.bestB + 2*refBenchTakeMax + 1
	T := int64(refBenchIv)
	n := 0
	for lv := range levels {
		for range refBenchPerLevel {
			bb.admit(tb, clob.Sell, bb.bestA+int64(lv), 0, n)
			bb.admit(tb, clob.Buy, bb.bestB-int64(lv), 0, n+1)
			n += 2
			if n%(1<<13) == 0 {
				bb.e.Tick(T, bb.acc, &bb.out)
				T += refBenchIv
				bb.nowUs = T - refBenchIv + 1
			}
		}
	}
	bb.e.Tick(T, bb.acc, &bb.out)
	bb.nowUs = T + 1
	return bb
}

// admit submits one 1-lot limit order.
func (bb *refBench) admit(tb testing.TB, side clob.Side, priceSteps int64, flags uint8, i int) {
	a := &bb.a
	a.Signer = bb.owners[i%len(bb.owners)]
	a.Owner, a.NowUs = a.Signer, bb.nowUs
	a.Nonce++
	in := &bb.env.Intents[0]
	*in = clob.Intent{Kind: clob.IntentSubmit, Book: bb.cfg.ID, Side: side, Type: clob.Limit, Flags: flags,
		Deadline: uint64(landingUs(bb.nowUs, refBenchIv))}
	in.Size = bb.cfg.LotSize
	in.Price.Mul(uint256.NewInt(uint64(priceSteps)), &bb.cfg.TickPrecision)
	if r := bb.e.Admit(a, &bb.env, bb.acc); r != clob.OK {
		tb.Fatalf("bench admit: %v", r)
	}
}

func (bb *refBench) tick(tb testing.TB, side clob.Side, takerSteps, idleSteps int64, makerSteps func(i int) int64) {
	k := bb.take * refBenchPerLevel
	for i := range k {
		bb.admit(tb, side, takerSteps, clob.FlagIOC, i)
		bb.admit(tb, side, makerSteps(i), 0, i+1)
	}
	for i := range refBenchIntents - 2*k {
		bb.admit(tb, side, idleSteps, clob.FlagIOC, i)
	}
	T := landingUs(bb.nowUs, refBenchIv)
	bb.e.Tick(T, bb.acc, &bb.out)
	bb.nowUs = T + 1
}

// round runs the two ticks that bring the book back to where it was.
func (bb *refBench) round(tb testing.TB) {
	bA, bB, take := bb.bestA, bb.bestB, int64(bb.take)
	bb.tick(tb, clob.Buy, bA+take-1, bB, func(i int) int64 { return bB + 1 + int64(i/refBenchPerLevel) })
	bb.tick(tb, clob.Sell, bB+1, bA, func(i int) int64 { return bA + int64(i/refBenchPerLevel) })
}

func (bb *refBench) resting() int {
	n := 0
	for _, sd := range []clob.Side{clob.Buy, clob.Sell} {
		for _, l := range bb.e.AppendLevels(nil, bb.cfg.ID, sd, 0) {
			n += l.Orders
		}
	}
	return n
}

func BenchmarkRefTick(b *testing.B) {
	for _, c := range []struct {
		name    string
		resting int
	}{{"resting=1k", 1_000}, {"resting=100k", 100_000}, {"resting=1m", 1_000_000}} {
		b.Run(c.name, func(b *testing.B) {
			if c.resting >= 1_000_000 && testing.Short() {
				b.Skip("-short: the reference needs about 2 s per round at 1m resting orders")
			}
			bb := newRefBench(b, c.resting)
			bb.round(b)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				bb.round(b)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(2*refBenchIntents), "ns/order")
			if !bb.out.Books[0].Traded {
				b.Fatal("the last tick did not trade")
			}
			refBenchSink = bb.out.Books[0].VolumeBase
		})
	}
}

var refBenchSink uint256.Int

// The benchmark's rounds must keep the book at its size and trade, or it
// would measure an idle book.
func TestRefTickBenchShape(t *testing.T) {
	for _, resting := range []int{1_000, 20_000} {
		bb := newRefBench(t, resting)
		if got := bb.resting(); got != resting {
			t.Fatalf("set-up: %d resting, want %d", got, resting)
		}
		for i := 0; i < 2; i++ {
			bb.round(t)
			if bb.acc.err != nil {
				t.Fatal(bb.acc.err)
			}
			if got := bb.resting(); got != resting || !bb.out.Books[0].Traded {
				t.Fatal(fmt.Sprintf("round %d: %d resting, want %d; traded %v", i, got, resting, bb.out.Books[0].Traded))
			}
		}
	}
}
