package bots

import (
	"context"
	"testing"
)

// TestLockstepSchedule: in lockstep a maker acts only at the steps on a
// multiple of its quote period, and a taker's arrivals in one step stop at
// ArrivalsPerStepMax, the rest waiting for the next step. The bots talk to
// a port where no node listens: each action fails at its first read and
// counts one error, which is what is counted here.
func TestLockstepSchedule(t *testing.T) {
	ctx := context.Background()
	newBot := func(r role, spec *Spec) *bot {
		c, err := dial(ctx, "127.0.0.1:1", "http", "") // HTTP dials lazily: every call fails
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.close)
		return &bot{name: r.String(), role: r, spec: spec, c: c, d: newDecider(spec, int(r)), market: market{IntervalUs: 500_000}}
	}
	spec := DefaultSpec
	spec.QuoteEvery, spec.TakerRate = 2, TakerRateMax
	mk, tk := newBot(maker, &spec), newBot(taker, &spec)
	l := &Lockstep{bots: []*bot{mk, tk}, arrivalUs: make([]int64, 2)}

	l.Step(ctx, 1_500_000, 500_000) // 1.5 s: not a multiple of the 1 s quote period
	if n := mk.errors.Load(); n != 0 {
		t.Fatalf("the maker acted %d times at 1.5 s", n)
	}
	l.Step(ctx, 2_000_000, 500_000)
	if n := mk.errors.Load(); n != 1 {
		t.Fatalf("the maker acted %d times at 2 s, want 1", n)
	}
	before := tk.errors.Load()
	l.Step(ctx, 2_500_000, 60_000_000) // a minute at 50 orders a second
	if n := tk.errors.Load() - before; n != ArrivalsPerStepMax {
		t.Fatalf("the taker acted %d times in a minute-long step, want the bound %d", n, ArrivalsPerStepMax)
	}
	if l.arrivalUs[1] >= 62_500_000 {
		t.Fatalf("the taker's next arrival %d µs is past the step: the arrivals beyond the bound were dropped", l.arrivalUs[1])
	}
}
