package bots

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/ledgervenue/node/core/clob"
)

// order is one decided order: side, lots and limit price in price steps.
type order struct {
	Side  clob.Side
	Lots  uint64
	Steps uint64
}

// decider makes every choice of one bot from its own PRNG, seeded by the
// spec's seed and the bot's index: given the same spec and the same book
// answers, a bot decides the same orders (the wall clock only shifts when).
type decider struct {
	spec *Spec
	rng  *rand.Rand
}

func newDecider(spec *Spec, bot int) *decider {
	return &decider{spec: spec, rng: rand.New(rand.NewPCG(spec.Seed, uint64(bot)))}
}

// lots is an order size in [1, Spec.Lots] lots.
func (d *decider) lots() uint64 { return 1 + d.rng.Uint64N(uint64(d.spec.Lots)) }

// walk moves a spot reference (price steps) by up to ±Spec.WalkBps basis
// points, at least one step when it moves; it never goes below one step.
func (d *decider) walk(ref uint64) uint64 {
	if d.spec.WalkBps == 0 {
		return ref
	}
	bps := int64(d.rng.Uint64N(uint64(2*d.spec.WalkBps+1))) - int64(d.spec.WalkBps)
	delta := bpsOf(ref, uint64(max(bps, -bps)))
	switch {
	case bps > 0:
		return ref + delta
	case bps < 0 && ref > delta:
		return ref - delta
	case bps < 0:
		return 1
	}
	return ref
}

// RevertPct is how much of its distance to the start price a spot
// market's reference gives up each quote round: the walk then stays within
// a few walk steps of the start price, so the bots' book moves without
// drifting off (a user's order at a round price meets it where expected).
const RevertPct = 10

// revert pulls ref RevertPct of the way towards anchor (steps).
func revert(ref, anchor uint64) uint64 {
	if ref >= anchor {
		return ref - (ref-anchor)*RevertPct/100
	}
	return ref + (anchor-ref)*RevertPct/100
}

// ladder is a maker's quote round around ref (price steps): Spec.Levels
// bids and asks, level i (from 1) Spec.SpreadBps × i basis points away
// (at least i steps), bids rounded down and asks up to whole steps by
// construction; bids that would reach zero are left out. Bids and asks
// alternate, best first.
func (d *decider) ladder(dst []order, ref uint64) []order {
	for i := uint64(1); i <= uint64(d.spec.Levels); i++ {
		off := max(bpsOf(ref, uint64(d.spec.SpreadBps)*i), i)
		if ref > off {
			dst = append(dst, order{Side: clob.Buy, Lots: d.lots(), Steps: ref - off})
		}
		dst = append(dst, order{Side: clob.Sell, Lots: d.lots(), Steps: ref + off})
	}
	return dst
}

// take is a taker's IOC order against the best levels (price steps, 0:
// that side is empty): the side comes from the PRNG, the price is the best
// level of the other side, so the order crosses the spread. ok is false
// when that side is empty (nothing to take); the PRNG moves all the same.
func (d *decider) take(bestBid, bestAsk uint64) (o order, ok bool) {
	o = order{Side: clob.Buy, Lots: d.lots(), Steps: bestAsk}
	if d.rng.Uint64N(2) == 1 {
		o.Side, o.Steps = clob.Sell, bestBid
	}
	return o, o.Steps != 0
}

// pause is the time to a taker's next order: exponential with mean
// 1/Spec.TakerRate (Poisson arrivals), capped at 10 means.
func (d *decider) pause() time.Duration {
	mean := float64(time.Second) / float64(d.spec.TakerRate)
	return time.Duration(math.Min(d.rng.ExpFloat64(), 10) * mean)
}

// bpsOf is bps basis points of v, rounded down.
func bpsOf(v, bps uint64) uint64 {
	if v > math.MaxUint64/max(bps, 1) {
		return v / 10_000 * bps
	}
	return v * bps / 10_000
}
