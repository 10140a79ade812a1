package bots

import (
	"slices"
	"testing"
	"time"
)

// intents runs n decision rounds of bot 0 and bot 1 of spec against a fixed
// book: a maker's ladder around a walking reference, a taker's order.
func intents(spec *Spec, n int) (ladders [][]order, takes []order, pauses []time.Duration) {
	m, tk := newDecider(spec, 0), newDecider(spec, 1)
	ref := uint64(200_000)
	for range n {
		ref = m.walk(ref)
		ladders = append(ladders, m.ladder(nil, ref))
		o, _ := tk.take(ref-10, ref+10)
		takes = append(takes, o)
		pauses = append(pauses, tk.pause())
	}
	return ladders, takes, pauses
}

// TestDecisionsRepeat: the same seed decides the same first intents;
// another seed does not.
func TestDecisionsRepeat(t *testing.T) {
	spec := DefaultSpec
	l1, t1, p1 := intents(&spec, 50)
	l2, t2, p2 := intents(&spec, 50)
	for i := range l1 {
		if !slices.Equal(l1[i], l2[i]) {
			t.Fatalf("round %d: ladders differ with one seed: %v, %v", i, l1[i], l2[i])
		}
	}
	if !slices.Equal(t1, t2) || !slices.Equal(p1, p2) {
		t.Fatal("taker decisions differ with one seed")
	}
	spec.Seed++
	_, t3, _ := intents(&spec, 50)
	if slices.Equal(t1, t3) {
		t.Fatal("seeds 1 and 2 decided the same taker orders")
	}
}

// TestLadder: levels on both sides, SpreadBps apart, sizes within Lots,
// bids never at zero.
func TestLadder(t *testing.T) {
	spec := DefaultSpec
	spec.Levels, spec.SpreadBps, spec.Lots = 3, 10, 4
	d := newDecider(&spec, 0)
	got := d.ladder(nil, 100_000) // 10 bps = 100 steps
	wantSteps := []uint64{99_900, 100_100, 99_800, 100_200, 99_700, 100_300}
	if len(got) != len(wantSteps) {
		t.Fatalf("%d orders, want %d", len(got), len(wantSteps))
	}
	for i, o := range got {
		if o.Steps != wantSteps[i] || o.Lots < 1 || o.Lots > 4 {
			t.Errorf("order %d: %+v, want %d steps and 1..4 lots", i, o, wantSteps[i])
		}
	}
	// Near zero the offsets are at least one step per level and bids that
	// would reach zero are left out.
	if got := d.ladder(nil, 2); len(got) != 4 || got[0].Steps != 1 {
		t.Fatalf("ladder at 2 steps: %+v", got)
	}
}

// TestWalk: a walk step stays within WalkBps (at least one step), never
// reaches zero, and does nothing at walk-bps=0.
func TestWalk(t *testing.T) {
	spec := DefaultSpec
	spec.WalkBps = 5
	d := newDecider(&spec, 0)
	for range 1000 {
		if r := d.walk(100_000); r < 99_950 || r > 100_050 {
			t.Fatalf("walk from 100000 by ≤ 5 bps gave %d", r)
		}
		if r := d.walk(1); r < 1 || r > 2 {
			t.Fatalf("walk from 1 gave %d", r)
		}
	}
	spec.WalkBps = 0
	if r := newDecider(&spec, 0).walk(1234); r != 1234 {
		t.Fatalf("walk-bps=0 moved to %d", r)
	}
}

// TestPause: taker pauses average 1/rate and stay under 10 means.
func TestPause(t *testing.T) {
	spec := DefaultSpec
	spec.TakerRate = 10
	d := newDecider(&spec, 0)
	var sum time.Duration
	const n = 10_000
	for range n {
		p := d.pause()
		if p < 0 || p > time.Second {
			t.Fatalf("pause %v", p)
		}
		sum += p
	}
	if mean := sum / n; mean < 90*time.Millisecond || mean > 110*time.Millisecond {
		t.Fatalf("mean pause %v at 10/s", mean)
	}
}

// TestRevert: the pull towards the start price is RevertPct of the way,
// from either side, and none at it.
func TestRevert(t *testing.T) {
	f := func(ref, anchor, want uint64) {
		t.Helper()
		if got := revert(ref, anchor); got != want {
			t.Fatalf("revert(%d, %d) = %d, want %d", ref, anchor, got, want)
		}
	}
	f(1100, 1000, 1090)
	f(900, 1000, 910)
	f(1000, 1000, 1000)
	f(1, 1_000_000, 1+99_999)
}
