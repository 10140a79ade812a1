package refbook

import (
	"sort"

	"github.com/ledgervenue/node/core/clob"
)

// pair is one step of the walk: lots traded between a bid and an ask.
type pair struct {
	bid, ask *order
	lots     int64
}

// sides collects the live resting orders (minus none: refused ones are no
// longer live) and sorts each side by price, then queue priority: market
// orders first, then by the tick the order entered its queue, then by id.
// Invariant: orders that entered in this tick have entryTickUs == T, so
// "entered in this tick by ascending order id" is the same key.
func (b *book) sides() (bids, asks []*order) {
	for _, o := range b.orders {
		if !o.live || o.pending {
			continue
		}
		if o.isBuy() {
			bids = append(bids, o)
		} else {
			asks = append(asks, o)
		}
	}
	queue := func(x, y *order) bool {
		if x.isMarket() != y.isMarket() {
			return x.isMarket()
		}
		if x.entryTickUs != y.entryTickUs {
			return x.entryTickUs < y.entryTickUs
		}
		return less(x.id, y.id)
	}
	sort.Slice(bids, func(i, j int) bool {
		if bids[i].priceSteps != bids[j].priceSteps {
			return bids[i].priceSteps > bids[j].priceSteps
		}
		return queue(bids[i], bids[j])
	})
	sort.Slice(asks, func(i, j int) bool {
		if asks[i].priceSteps != asks[j].priceSteps {
			return asks[i].priceSteps < asks[j].priceSteps
		}
		return queue(asks[i], asks[j])
	})
	return bids, asks
}

// walk is matching step 1. left[i] is what bids[i] / asks[i] has unmatched.
func walk(bids, asks []*order) (pairs []pair, bidLeft, askLeft []int64) {
	bidLeft = make([]int64, len(bids))
	for i, o := range bids {
		bidLeft[i] = o.remLots
	}
	askLeft = make([]int64, len(asks))
	for j, o := range asks {
		askLeft[j] = o.remLots
	}
	i, j := 0, 0
	for i < len(bids) && j < len(asks) && bids[i].priceSteps >= asks[j].priceSteps {
		q := min(bidLeft[i], askLeft[j])
		pairs = append(pairs, pair{bid: bids[i], ask: asks[j], lots: q})
		bidLeft[i] -= q
		askLeft[j] -= q
		if bidLeft[i] == 0 {
			i++
		}
		if askLeft[j] == 0 {
			j++
		}
	}
	return pairs, bidLeft, askLeft
}

// clearingPrice is matching steps 2 and 3, in half-steps.
func (b *book) clearingPrice(bids, asks []*order, pairs []pair, bidLeft, askLeft []int64) (int64, bool) {
	var pb, ps, bl, sl int64
	var havePb, havePs, haveBl, haveSl bool
	for _, p := range pairs {
		if !p.bid.isMarket() && (!havePb || p.bid.halfSteps() < pb) {
			pb, havePb = p.bid.halfSteps(), true
		}
		if !p.ask.isMarket() && (!havePs || p.ask.halfSteps() > ps) {
			ps, havePs = p.ask.halfSteps(), true
		}
	}
	for i, o := range bids { // best first
		if !o.isMarket() && bidLeft[i] > 0 {
			bl, haveBl = o.halfSteps(), true
			break
		}
	}
	for j, o := range asks {
		if !o.isMarket() && askLeft[j] > 0 {
			sl, haveSl = o.halfSteps(), true
			break
		}
	}
	lo, haveLo := bound(ps, havePs, bl, haveBl, func(a, b int64) int64 { return max(a, b) })
	hi, haveHi := bound(pb, havePb, sl, haveSl, func(a, b int64) int64 { return min(a, b) })
	var p int64
	switch {
	case haveLo && haveHi:
		p = (lo + hi) / 2
		if (lo+hi)%2 != 0 {
			panic("BUG: bounds are whole steps, their midpoint a whole half-step")
		}
	case haveLo:
		p = lo
	case haveHi:
		p = hi
	case b.hasPrice:
		p = b.priceHalf
	default:
		return 0, false
	}
	sellMax, buyMin := pairs[0].ask.halfSteps(), pairs[0].bid.halfSteps()
	for _, x := range pairs {
		sellMax = max(sellMax, x.ask.halfSteps())
		buyMin = min(buyMin, x.bid.halfSteps())
	}
	if sellMax > buyMin {
		panic("BUG: the walk matched a bid below an ask")
	}
	p = max(p, sellMax)
	p = min(p, buyMin)
	return p, true
}

func bound(x int64, haveX bool, y int64, haveY bool, pick func(a, b int64) int64) (int64, bool) {
	switch {
	case haveX && haveY:
		return pick(x, y), true
	case haveX:
		return x, true
	case haveY:
		return y, true
	}
	return 0, false
}

// match is matching: walk, price, POST_ONLY refusal loop, fills.
func (t *tick) match(b *book, bt *clob.BookTick) {
	for {
		bids, asks := b.sides()
		pairs, bidLeft, askLeft := walk(bids, asks)
		if len(pairs) == 0 {
			return
		}
		p, ok := b.clearingPrice(bids, asks, pairs, bidLeft, askLeft)
		if !ok {
			return // a book that never cleared emits no fills
		}
		refused := t.newPostOnly(pairs)
		if len(refused) == 0 {
			t.fill(b, pairs, p, bt)
			return
		}
		for _, o := range refused {
			t.remove(o)
			t.event(clob.EventPostOnlyRefused, o, true)
		}
	}
}

// newPostOnly lists the POST_ONLY orders that entered in this tick and would
// fill, in allocation order (each pair: bid, then ask).
func (t *tick) newPostOnly(pairs []pair) []*order {
	var out []*order
	seen := func(o *order) bool {
		for _, x := range out {
			if x == o {
				return true
			}
		}
		return false
	}
	for _, p := range pairs {
		for _, o := range []*order{p.bid, p.ask} {
			if o.postOnly() && o.entryTickUs == t.T && !seen(o) {
				out = append(out, o)
			}
		}
	}
	return out
}

// fill is matching steps 5 and 6: money, events, clearing price.
func (t *tick) fill(b *book, pairs []pair, p int64, bt *clob.BookTick) {
	for _, x := range pairs {
		cost := b.quote(x.lots, p)
		base := mul(steps(x.lots), &b.cfg.LotSize)
		if b.cfg.Kind == clob.Perp {
			t.fillPerp(b, x.bid, x.lots, p, &cost, &base)
			t.fillPerp(b, x.ask, -x.lots, p, &cost, &base)
		} else {
			t.fillBuy(b, x.bid, x.lots, &cost, &base)
			t.fillSell(b, x.ask, x.lots, &cost, &base)
		}
		bt.VolumeBase = add(&bt.VolumeBase, &base)
		bt.VolumeQuote = add(&bt.VolumeQuote, &cost)
	}
	bt.Traded = true
	b.hasPrice, b.priceHalf = true, p
}

// feeRate is the fee rate of an order's fill in this tick: maker if it
// rested from an earlier tick.
func (t *tick) feeRate(b *book, o *order) (*uintT, bool) {
	if o.entryTickUs < t.T {
		return &b.cfg.MakerFee, true
	}
	return &b.cfg.TakerFee, false
}

// fillPerp settles one side of a perp fill through the perp layer (delta
// signed, + for the buyer) and emits its event with the position fields.
func (t *tick) fillPerp(b *book, o *order, delta, p int64, cost, base *uintT) {
	rate, maker := t.feeRate(b, o)
	fee := feeOf(cost, rate)
	pos, realized := t.e.perp.Fill(b.cfg.ID, o.owner, delta, p, &fee, t.acc)
	ev := t.account(o, max(delta, -delta), cost, &fee, *base, maker)
	ev.Position, ev.Realized = pos, realized
}

func (t *tick) fillBuy(b *book, o *order, lots int64, cost, base *uintT) {
	rate, maker := t.feeRate(b, o)
	fee := feeOf(cost, rate)
	r := b.reservation(clob.Buy, lots, o.priceSteps)
	spend := add(cost, &fee)
	back := sub(&r, &spend)
	o.reserved = sub(&o.reserved, &r)
	t.acc.SpendLocked(b.cfg.Quote, o.owner, &spend)
	t.acc.Unlock(b.cfg.Quote, o.owner, &back)
	t.acc.Credit(b.cfg.Base, o.owner, base)
	t.acc.CollectFee(b.cfg.Quote, &fee)
	t.account(o, lots, cost, &fee, *base, maker)
}

func (t *tick) fillSell(b *book, o *order, lots int64, cost, base *uintT) {
	rate, maker := t.feeRate(b, o)
	fee := feeOf(cost, rate)
	gain := sub(cost, &fee)
	o.reserved = sub(&o.reserved, base)
	t.acc.SpendLocked(b.cfg.Base, o.owner, base)
	t.acc.Credit(b.cfg.Quote, o.owner, &gain)
	t.acc.CollectFee(b.cfg.Quote, &fee)
	t.account(o, lots, cost, &fee, *base, maker)
}

// account books one fill chunk on the order and emits its event.
func (t *tick) account(o *order, lots int64, cost, fee *uintT, base uintT, maker bool) *clob.Event {
	o.remLots -= lots
	o.filledLots += lots
	o.filledQuote = add(&o.filledQuote, cost)
	o.fee = add(&o.fee, fee)
	done := o.remLots == 0
	ev := t.event(clob.EventFill, o, done)
	ev.Base, ev.Quote, ev.Fee, ev.Maker = base, *cost, *fee, maker
	if done {
		t.remove(o)
	}
	return ev
}
