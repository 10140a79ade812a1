package clob

import (
	"slices"

	"github.com/holiman/uint256"
)

// SampleOrdersMax bounds the orders SampleBook walks at each best price
// for their owners, in queue order: a tick's cost, whatever the level's
// size.
const SampleOrdersMax = 256

// BookSample is what the strategy report (core/marketdata, report.go)
// samples of a book after each tick: its reference price and, on a perp
// market, its funding index.
type BookSample struct {
	// Ref2 is twice the reference price, in wei (exact: the mid of two
	// prices on the tick grid is a half step): on a spot market best bid +
	// best ask when both sides rest, else twice the last clearing price,
	// zero before the book ever cleared; on a perp market twice the mark.
	Ref2 uint256.Int
	// Funding is a perp market's funding index in quote wei per lot: a
	// position of S lots pays S × (its rise) between two samples.
	Funding Signed
}

// SampleBook returns a book's BookSample and sets owners[Buy] and
// owners[Sell] (truncated first) to the distinct owners of the orders
// resting at the best bid and the best ask, at most max each, in queue
// order among the level's first SampleOrdersMax orders. ok is false for an unknown book. It reads the books as a tick
// left them (between ticks only resting orders are in the levels) and
// allocates nothing once the owners' slices have grown to max.
func (e *Engine) SampleBook(book Hash, owners *[2][]Address, max int) (s BookSample, ok bool) {
	b := e.book(book)
	if b == nil {
		return s, false
	}
	var best [2]int64
	for side := Buy; side <= Sell; side++ {
		owners[side] = owners[side][:0]
		lv := b.sides[side]
		if len(lv) == 0 {
			continue
		}
		top := &lv[len(lv)-1]
		best[side] = top.priceSteps
		walked := 0
		for n := top.head; n != 0 && len(owners[side]) < max && walked < SampleOrdersMax; n = b.nodes[n].next {
			walked++
			if o := b.ords[n].owner; !slices.Contains(owners[side], o) {
				owners[side] = append(owners[side], o)
			}
		}
	}
	switch {
	case b.perp != nil:
		s.Ref2.SetUint64(2 * uint64(b.perp.mark))
		s.Ref2.Mul(&s.Ref2, &b.u.tick)
		s.Funding = signedOf(&b.perp.index)
		s.Funding.Abs.Mul(&s.Funding.Abs, &b.u.unitQuote)
		s.Funding.Neg = s.Funding.Neg && !s.Funding.Abs.IsZero()
	case best[Buy] != 0 && best[Sell] != 0:
		s.Ref2.SetUint64(uint64(best[Buy] + best[Sell]))
		s.Ref2.Mul(&s.Ref2, &b.u.tick)
	case b.hasPrice:
		s.Ref2.SetUint64(uint64(b.priceHalf))
		s.Ref2.Mul(&s.Ref2, &b.u.tick)
	}
	return s, true
}
