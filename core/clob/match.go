package clob

import (
	"math"

	"github.com/holiman/uint256"
)

// chunk is one pair of the matching walk: lots traded between a bid and an
// ask, with the index of each one's level (levels do not move while the
// chunks are settled).
type chunk struct {
	bid, ask           uint32
	bidLevel, askLevel int32
	lots               int64
}

// of returns the chunk's order of side.
func (c *chunk) of(side Side) uint32 {
	if side == Buy {
		return c.bid
	}
	return c.ask
}

// walkResult is what the walk learns about prices, in steps (0 = none).
type walkResult struct {
	pb, ps          int64 // lowest matched limit buy, highest matched limit sell
	minBuy, maxSell int64 // lowest matched buy, highest matched sell, market caps included
	bLeft, sLeft    int64 // best limit buy and sell left with unmatched size
}

// match runs the auction of one book: walk, price, POST_ONLY refusals
// (re-walking until none fills), then settles the fills.
func (e *Engine) match(b *book, tickUs int64, acc Accounts, out *TickResult, bt *BookTick) {
	for {
		w := e.walk(b)
		if len(e.tk.chunks) == 0 {
			return
		}
		p, ok := b.clearing(&w)
		if !ok {
			return
		}
		if e.refusePostOnly(b, tickUs, acc, out) {
			continue
		}
		e.settle(b, p, tickUs, acc, out, bt)
		b.hasPrice, b.priceHalf = true, p
		if b.perp != nil {
			b.perp.tradedUs = tickUs
		}
		return
	}
}

// cursor is a position in one side's walk order: best level first, each
// level in queue order.
type cursor struct {
	level int32
	slot  uint32
}

// first returns the best order of a side.
// Invariant: levels are never empty.
func (b *book) first(side Side) cursor {
	lv := b.sides[side]
	if len(lv) == 0 {
		return cursor{-1, 0}
	}
	return cursor{int32(len(lv) - 1), lv[len(lv)-1].head}
}

// next returns the order after c in walk order.
func (b *book) next(side Side, c cursor) cursor {
	if n := b.nodes[c.slot].next; n != 0 {
		return cursor{c.level, n}
	}
	if c.level == 0 {
		return cursor{-1, 0}
	}
	return cursor{c.level - 1, b.sides[side][c.level-1].head}
}

// walk pairs bids (descending price) with asks (ascending) in queue
// priority while they cross, into e.tk.chunks; it does not change the book.
func (e *Engine) walk(b *book) walkResult {
	w := walkResult{minBuy: math.MaxInt64}
	chunks := e.tk.chunks[:0]
	bc, ac := b.first(Buy), b.first(Sell)
	var bidRem, askRem int64
	if bc.slot != 0 && ac.slot != 0 {
		bidRem, askRem = b.nodes[bc.slot].remLots, b.nodes[ac.slot].remLots
	}
	for bc.slot != 0 && ac.slot != 0 {
		bn, an := &b.nodes[bc.slot], &b.nodes[ac.slot]
		if bn.priceSteps < an.priceSteps {
			break
		}
		q := min(bidRem, askRem)
		chunks = append(chunks, chunk{bid: bc.slot, ask: ac.slot, bidLevel: bc.level, askLevel: ac.level, lots: q})
		w.noteBuy(bn)
		w.noteSell(an)
		bidRem -= q
		askRem -= q
		if bidRem == 0 {
			if bc = b.next(Buy, bc); bc.slot != 0 {
				bidRem = b.nodes[bc.slot].remLots
			}
		}
		if askRem == 0 {
			if ac = b.next(Sell, ac); ac.slot != 0 {
				askRem = b.nodes[ac.slot].remLots
			}
		}
	}
	e.tk.chunks = chunks
	w.bLeft = b.firstLimit(Buy, bc)
	w.sLeft = b.firstLimit(Sell, ac)
	return w
}

func (w *walkResult) noteBuy(n *node) {
	w.minBuy = min(w.minBuy, n.priceSteps)
	if n.typ == Limit && (w.pb == 0 || n.priceSteps < w.pb) {
		w.pb = n.priceSteps
	}
}

func (w *walkResult) noteSell(n *node) {
	w.maxSell = max(w.maxSell, n.priceSteps)
	if n.typ == Limit {
		w.ps = max(w.ps, n.priceSteps)
	}
}

// firstLimit returns the price of the first limit order at or after c (0 if
// none): the best limit order of the side left with unmatched size.
func (b *book) firstLimit(side Side, c cursor) int64 {
	for ; c.slot != 0; c = b.next(side, c) {
		if n := &b.nodes[c.slot]; n.typ == Limit {
			return n.priceSteps
		}
	}
	return 0
}

// clearing returns the clearing price in half-steps, or false when the
// limit orders cannot set one and the book never cleared.
func (b *book) clearing(w *walkResult) (int64, bool) {
	lo, hi := max(w.ps, w.bLeft), w.pb
	if w.sLeft != 0 && (hi == 0 || w.sLeft < hi) {
		hi = w.sLeft
	}
	var p int64
	switch {
	case lo != 0 && hi != 0:
		p = lo + hi
	case lo != 0:
		p = 2 * lo
	case hi != 0:
		p = 2 * hi
	case b.hasPrice:
		p = b.priceHalf
	default:
		return 0, false
	}
	return min(max(p, 2*w.maxSell), 2*w.minBuy), true
}

// refusePostOnly removes every order that entered the book in this tick
// with POST_ONLY and has a chunk, in allocation order (bid before ask);
// it reports whether it removed any.
func (e *Engine) refusePostOnly(b *book, tickUs int64, acc Accounts, out *TickResult) bool {
	refused := false
	for i := range e.tk.chunks {
		c := &e.tk.chunks[i]
		for _, s := range [2]uint32{c.bid, c.ask} {
			n := &b.nodes[s]
			if n.state == stateResting && n.queueTick == tickUs && n.flags&FlagPostOnly != 0 {
				e.removeOrder(b, s, EventPostOnlyRefused, acc, out)
				refused = true
			}
		}
	}
	return refused
}

// settle books every chunk at p half-steps, then drops the orders it filled
// completely (a prefix of each side's walk order) from their levels. On a
// spot book it drops each such order right after its last fill, while its
// lines are still cached, unless dropping it unlocks money (a reservation
// an update left behind): those are dropped after every fill, in the
// order the prefix gives, so that the ledger sees the same calls in the
// same order. Only the free list's order differs, which no output
// depends on. The chunks' level indexes stay valid: chunks go from a
// side's best level (its last) down, and dropping a level moves only the
// levels above it, which no later chunk refers to.
func (e *Engine) settle(b *book, p, tickUs int64, acc Accounts, out *TickResult, bt *BookTick) {
	base, cost := &e.tmp[0], &e.tmp[1]
	chunks := e.tk.chunks
	held := &e.tk.held
	held[Buy], held[Sell] = held[Buy][:0], held[Sell][:0]
	for i := range chunks {
		if j := i + prefetchDist; j < len(chunks) {
			b.prefetchSlot(chunks[j].bid, orderHotSize)
			b.prefetchSlot(chunks[j].ask, orderHotSize)
		}
		c := &chunks[i]
		b.u.baseOf(base, c.lots)
		b.u.quoteOf(cost, c.lots, p)
		if b.perp != nil {
			e.perpFill(b, c.bid, c.bidLevel, c.lots, p, base, cost, tickUs, acc, out)
			e.perpFill(b, c.ask, c.askLevel, c.lots, p, base, cost, tickUs, acc, out)
		} else {
			if j := i + prefetchDist/2; j < len(chunks) { // their orders' lines have arrived
				b.prefetchRemoval(chunks[j].bid)
				b.prefetchRemoval(chunks[j].ask)
			}
			e.fillBuy(b, c, base, cost, tickUs, acc, out)
			e.fillSell(b, c, base, cost, tickUs, acc, out)
			e.dropFilled(b, Buy, c.bid, acc)
			e.dropFilled(b, Sell, c.ask, acc)
		}
		bt.VolumeBase.Add(&bt.VolumeBase, base)
		bt.VolumeQuote.Add(&bt.VolumeQuote, cost)
	}
	bt.Traded = true
	if b.perp == nil {
		for _, side := range [2]Side{Buy, Sell} {
			for _, s := range held[side] {
				e.discard(b, s, acc)
			}
		}
		return
	}
	for _, side := range [2]Side{Buy, Sell} {
		// The filled orders are a prefix of the side's chunks, long evicted
		// since their fills: prefetch their orders, and once those arrived
		// their index lines (an order of several chunks is prefetched more
		// than once, which costs little).
		for k := 0; ; k++ {
			c := b.first(side)
			if c.slot == 0 || b.nodes[c.slot].remLots != 0 {
				break
			}
			if j := k + 2*prefetchDist; j < len(chunks) {
				b.prefetchSlot(chunks[j].of(side), orderHeadSize)
			}
			if j := k + prefetchDist; j < len(chunks) {
				b.prefetchRemoval(chunks[j].of(side))
			}
			e.discard(b, c.slot, acc)
		}
	}
}

// dropFilled discards the spot order at slot s of side if the fill just
// settled filled it completely, or holds it for the end of settle if
// discarding it would unlock money.
func (e *Engine) dropFilled(b *book, side Side, s uint32, acc Accounts) {
	switch {
	case b.nodes[s].remLots != 0:
	case !b.ords[s].reserved.IsZero():
		e.tk.held[side] = append(e.tk.held[side], s)
	default:
		e.discard(b, s, acc)
	}
}

// rate is the fee rate of an order's fill: maker if it rested from an
// earlier tick.
func (b *book) rate(n *node, tickUs int64) (*uint256.Int, bool) {
	if n.queueTick < tickUs {
		return &b.u.makerFee, true
	}
	return &b.u.takerFee, false
}

// fillBuy settles the buyer's side of a chunk: it pays cost + fee out of
// its lock, the rest of the chunk's reservation is unlocked, it receives
// the base.
func (e *Engine) fillBuy(b *book, c *chunk, base, cost *uint256.Int, tickUs int64, acc Accounts, out *TickResult) {
	n, o := &b.nodes[c.bid], &b.ords[c.bid]
	rate, maker := b.rate(n, tickUs)
	fee, r, spend := &e.tmp[2], &e.tmp[3], &e.tmp[4]
	feeOf(fee, cost, rate)
	b.u.buyReserve(r, spend, c.lots, n.priceSteps)
	spend.Add(cost, fee)
	acc.SpendLocked(b.u.quote, o.owner, spend)
	o.reserved.Sub(&o.reserved, r)
	if r.Sub(r, spend); !r.IsZero() {
		acc.Unlock(b.u.quote, o.owner, r)
	}
	acc.Credit(b.u.base, o.owner, base)
	acc.CollectFee(b.u.quote, fee)
	b.filled(c.bid, c.bidLevel, c.lots, base, cost, fee, maker, out)
	if n.remLots == 0 && !o.reserved.IsZero() {
		acc.Unlock(b.u.quote, o.owner, &o.reserved)
		o.reserved.Clear()
	}
}

// fillSell settles the seller's side of a chunk: it delivers the base out
// of its lock and receives cost − fee.
func (e *Engine) fillSell(b *book, c *chunk, base, cost *uint256.Int, tickUs int64, acc Accounts, out *TickResult) {
	n, o := &b.nodes[c.ask], &b.ords[c.ask]
	rate, maker := b.rate(n, tickUs)
	fee, proceeds := &e.tmp[2], &e.tmp[3]
	feeOf(fee, cost, rate)
	proceeds.Sub(cost, fee)
	acc.SpendLocked(b.u.base, o.owner, base)
	o.reserved.Sub(&o.reserved, base)
	acc.Credit(b.u.quote, o.owner, proceeds)
	acc.CollectFee(b.u.quote, fee)
	b.filled(c.ask, c.askLevel, c.lots, base, cost, fee, maker, out)
}

// filled records a fill on the order at slot s and emits its event.
func (b *book) filled(s uint32, li int32, lots int64, base, cost, fee *uint256.Int, maker bool, out *TickResult) {
	n, o := &b.nodes[s], &b.ords[s]
	n.remLots -= lots
	b.sides[n.side][li].vol.sub(lots)
	o.filledBase.Add(&o.filledBase, base)
	o.filledQuote.Add(&o.filledQuote, cost)
	o.fee.Add(&o.fee, fee)
	ev := b.event(out, s, EventFill, n.remLots == 0)
	ev.Base, ev.Quote, ev.Fee, ev.Maker = *base, *cost, *fee, maker
}
