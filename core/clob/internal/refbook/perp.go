package refbook

import (
	"bytes"
	"math/big"
	"sort"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
)

// Perp is the perpetual-market layer (internal/refperp) this package defers
// to on perp books: matching stays here, the money of a perp order (margin,
// positions, cash) and the triggers live there. A nil Perp makes every perp
// book refuse orders with ReasonMalformed (spot-only use).
type Perp interface {
	// AdmitOrder decides a perp order of lots on side at admission (submit,
	// or update to lots, replacing the replaced lots the order counted in
	// the exposure until now). stagedLock is what the envelope's earlier
	// intents lock in the native token for owner. It returns the admitted
	// size (a REDUCE_ONLY order cut to the position) or a reason.
	AdmitOrder(owner clob.Address, book clob.Hash, side clob.Side, lots int64, flags uint8, replaced int64, stagedLock *big.Int) (int64, clob.Reason)
	// Position is owner's signed size in lots on a perp book.
	Position(book clob.Hash, owner clob.Address) int64
	// Fill settles one side of a perp fill: delta signed lots (+ buyer) at
	// half half-steps, then the fee. It returns the owner's position after
	// the fill and the PnL it realized, in wei.
	Fill(book clob.Hash, owner clob.Address, delta, half int64, fee *uint256.Int, acc clob.Accounts) (pos, realized clob.Signed)
	// AdmitTrigger validates a trigger intent (kind ≥ IntentSubmitTrigger)
	// on book at admission without changing state; the payload it returns
	// rides in the book's pending ring and comes back to DrainTrigger.
	AdmitTrigger(a *clob.Admission, in *clob.Intent, seq uint32, book clob.Hash) (any, clob.Reason)
	// DrainTrigger runs a trigger intent at its tick (dropped: its deadline
	// passed).
	DrainTrigger(payload any, tickUs int64, dropped bool, out *clob.TickResult)
}

// SetPerp installs the perp layer.
func (e *Engine) SetPerp(p Perp) { e.perp = p }

// PendingPayloads returns the trigger payloads waiting in a book's pending
// ring, in admission order (the envelope being admitted included).
func (e *Engine) PendingPayloads(book clob.Hash) []any {
	b := e.book(book)
	if b == nil {
		return nil
	}
	var out []any
	for _, it := range b.pending {
		if it != nil && it.ext != nil {
			out = append(out, it.ext)
		}
	}
	return out
}

// PendingCount is the number of intents waiting in a book's pending ring.
func (e *Engine) PendingCount(book clob.Hash) int {
	if b := e.book(book); b != nil {
		return len(b.pending)
	}
	return 0
}

// exposureLots is what a live order counts in its owner's exposure: its
// remaining size, or the size of its last admitted update; a REDUCE_ONLY
// order counts nothing (docs/perps.md, "Accounts").
func (b *book) exposureLots(o *order) int64 {
	if o.flags&clob.FlagReduceOnly != 0 {
		return 0
	}
	lots := o.remLots
	for _, it := range b.pending { // nil: drained in the running tick
		if it != nil && it.kind == clob.IntentUpdate && it.ord == o {
			lots = it.newLots
		}
	}
	return lots
}

// OpenLots returns the lots of owner's live non-reduce-only buy and sell
// orders on a book, pending or resting (B and A in docs/perps.md).
func (e *Engine) OpenLots(book clob.Hash, owner clob.Address) (buy, sell int64) {
	b := e.book(book)
	if b == nil {
		return 0, 0
	}
	for _, o := range b.orders {
		if !o.live || o.owner != owner {
			continue
		}
		if o.isBuy() {
			buy += b.exposureLots(o)
		} else {
			sell += b.exposureLots(o)
		}
	}
	return buy, sell
}

// Top returns the best resting bid and ask of a book, in steps.
func (e *Engine) Top(book clob.Hash) (bid, ask int64, hasBid, hasAsk bool) {
	b := e.book(book)
	if b == nil {
		return 0, 0, false, false
	}
	bids, asks := b.sides()
	for _, o := range bids {
		if !o.isMarket() {
			bid, hasBid = o.priceSteps, true
			break
		}
	}
	for _, o := range asks {
		if !o.isMarket() {
			ask, hasAsk = o.priceSteps, true
			break
		}
	}
	return bid, ask, hasBid, hasAsk
}

// LastHalf returns the book's last clearing price in half-steps.
func (e *Engine) LastHalf(book clob.Hash) (int64, bool) {
	b := e.book(book)
	if b == nil || !b.hasPrice {
		return 0, false
	}
	return b.priceHalf, true
}

// IdleBookTick is the BookTick of a book that did not run in this tick:
// nothing traded, no new orders, its last clearing price (for a book that
// lost orders to a liquidation; its range is the caller's to set).
func (e *Engine) IdleBookTick(book clob.Hash) clob.BookTick {
	b := e.book(book)
	if b == nil {
		panic("BUG: refbook: IdleBookTick of an unknown book")
	}
	bt := clob.BookTick{Book: book, HasPrice: b.hasPrice}
	if b.hasPrice {
		bt.Price = b.priceWei(b.priceHalf)
	}
	return bt
}

// CancelOrdersOf removes every live order of owner, pending or resting,
// books ascending, each book's orders by ascending id (EventMarginCancel,
// terminal): the liquidation's step 1. The order's pending intents find it
// dead when they drain.
func (e *Engine) CancelOrdersOf(owner clob.Address, acc clob.Accounts, out *clob.TickResult) {
	t := &tick{e: e, acc: acc, out: out}
	for _, b := range e.books {
		t.cancelWhere(b, clob.EventMarginCancel, func(o *order) bool { return o.owner == owner })
	}
}

// CancelBound removes the live orders of a book that an Asset-grouped
// trigger fired and whose owner is flat(owner), by ascending id
// (EventCancel, terminal): the flat sweep (docs/perps.md, "Triggers").
func (e *Engine) CancelBound(book clob.Hash, flat func(clob.Address) bool, acc clob.Accounts, out *clob.TickResult) {
	t := &tick{e: e, acc: acc, out: out}
	t.cancelWhere(e.book(book), clob.EventCancel, func(o *order) bool { return o.bound && flat(o.owner) })
}

// cancelWhere removes b's live orders that match, by ascending id, each
// with an event of kind.
func (t *tick) cancelWhere(b *book, kind clob.EventKind, match func(*order) bool) {
	var mine []*order
	for _, o := range b.orders {
		if o.live && match(o) {
			mine = append(mine, o)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return bytes.Compare(mine[i].id[:], mine[j].id[:]) < 0 })
	for _, o := range mine {
		t.remove(o)
		t.event(kind, o, true)
	}
	b.compact()
}

// Inject admits an order that no envelope carries (a fired trigger) to a
// book's pending ring: it lands in the book's next tick and is reported in
// no TickResult.Landed; bound marks an Asset trigger's order (CancelBound).
// REQUIRES: the id is new, lots and priceSteps are in range; the caller
// did the margin check.
func (e *Engine) Inject(book clob.Hash, id clob.Hash, owner clob.Address, side clob.Side, typ clob.OrderType, flags uint8,
	lots, priceSteps int64, nowUs int64, deadline uint64, bound bool) clob.Reason {
	b := e.book(book)
	if b.live+1 > e.limits.OrdersMax || len(b.pending)+1 > e.limits.PendingMax {
		return clob.ReasonBookFull
	}
	if _, dup := e.byID[id]; dup {
		panic("BUG: injected order id exists")
	}
	e.intentSeq++
	o := &order{id: id, bk: b, owner: owner, side: side, typ: typ, flags: flags, bound: bound,
		priceSteps: priceSteps, remLots: lots, sizeLots: lots,
		live: true, pending: true, admitSeq: e.intentSeq, deadlineUs: int64(deadline)}
	e.byID[id] = o
	b.orders = append(b.orders, o)
	b.live++
	b.pending = append(b.pending, &intent{kind: clob.IntentSubmit, injected: true, admitUs: nowUs, deadline: deadline, ord: o})
	return clob.OK
}

// clipReduceOnly is the tick's REDUCE_ONLY rule (docs/perps.md, "Fills"):
// before the walk, per owner in queue order (bids best first, then asks),
// reduce-only orders are cut so that their total on the reducing side never
// exceeds the owner's position; an order cut to zero is cancelled.
// (reading) "Queue order" is the walk's order: price, then priority.
func (t *tick) clipReduceOnly(b *book) {
	bids, asks := b.sides()
	budget := map[clob.Address]int64{} // lookups only, never iterated
	var seen map[clob.Address]bool
	for _, side := range [][]*order{bids, asks} {
		seen = map[clob.Address]bool{}
		for _, o := range side {
			if o.flags&clob.FlagReduceOnly == 0 {
				continue
			}
			if !seen[o.owner] {
				seen[o.owner] = true
				s := t.e.perp.Position(b.cfg.ID, o.owner)
				switch {
				case o.isBuy() && s < 0:
					budget[o.owner] = -s
				case !o.isBuy() && s > 0:
					budget[o.owner] = s
				default:
					budget[o.owner] = 0
				}
			}
			left := budget[o.owner]
			if o.remLots <= left {
				budget[o.owner] = left - o.remLots
				continue
			}
			budget[o.owner] = 0
			if left == 0 {
				t.remove(o)
				t.event(clob.EventCancel, o, true)
				continue
			}
			o.sizeLots -= o.remLots - left
			o.remLots = left
		}
	}
}
