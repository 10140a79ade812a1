package refbook

import (
	"sort"

	"github.com/ledgervenue/node/core/clob"
)

// landedEnv is an envelope with an intent drained in the current tick.
type landedEnv struct {
	seq, tag uint64
}

// tick is the context of one Tick call.
type tick struct {
	e      *Engine
	acc    clob.Accounts
	out    *clob.TickResult
	T      int64
	landed []landedEnv
}

// hasWork: pending intents, or a resting order due to expire; a perp book
// runs at every grid point after its last tick (docs/perps.md, "Mark").
func (b *book) hasWork(T int64) bool {
	if len(b.pending) > 0 || b.cfg.Kind == clob.Perp && T > b.lastTickUs {
		return true
	}
	for _, o := range b.orders {
		if o.live && !o.pending && o.expiresUs > 0 && o.expiresUs <= T {
			return true
		}
	}
	return false
}

// NextTickDue returns the smallest T ≤ nowUs, later than the book's last
// tick, at which some book or the transfer ring has work.
func (e *Engine) NextTickDue(nowUs int64) (int64, bool) {
	best, found := int64(0), false
	consider := func(t int64) {
		if !found || t < best {
			best, found = t, true
		}
	}
	for _, b := range e.books {
		iv := b.cfg.IntervalUs
		if len(b.pending) > 0 {
			consider(dueAfter(landing(b.pending[0].admitUs, iv), iv, b.ran, b.lastTickUs))
		}
		expMin, any := int64(0), false
		for _, o := range b.orders {
			if o.live && !o.pending && o.expiresUs > 0 && (!any || o.expiresUs < expMin) {
				expMin, any = o.expiresUs, true
			}
		}
		if any {
			t := (expMin + iv - 1) / iv * iv // first multiple ≥ expMin
			consider(dueAfter(t, iv, b.ran, b.lastTickUs))
		}
	}
	if len(e.transfers) > 0 {
		iv := int64(clob.TransferIntervalUs)
		consider(dueAfter(landing(e.transfers[0].admitUs, iv), iv, e.transfersRan, e.transfersLastTickUs))
	}
	if !found || best > nowUs {
		return 0, false
	}
	return best, true
}

// dueAfter raises t to at least last tick + interval.
func dueAfter(t, iv int64, ran bool, lastUs int64) int64 {
	if ran && t < lastUs+iv {
		return lastUs + iv
	}
	return t
}

// Tick runs the auction of every book due at T, then the transfers.
func (e *Engine) Tick(T int64, acc clob.Accounts, out *clob.TickResult) {
	out.TickUs = T
	out.Books = out.Books[:0]
	out.Events = out.Events[:0]
	out.Landed = out.Landed[:0]
	t := &tick{e: e, acc: acc, out: out, T: T}
	for _, b := range e.books {
		if T%b.cfg.IntervalUs != 0 || !b.hasWork(T) {
			continue
		}
		bt := clob.BookTick{Book: b.cfg.ID, FirstEvent: len(out.Events)}
		t.runBook(b, &bt)
		bt.EndEvent = len(out.Events)
		bt.HasPrice = b.hasPrice
		if b.hasPrice {
			bt.Price = b.priceWei(b.priceHalf)
		}
		out.Books = append(out.Books, bt)
	}
	if T%clob.TransferIntervalUs == 0 && len(e.transfers) > 0 {
		t.runTransfers()
	}
	// (reading) An envelope lands in every tick that drains one of its
	// intents, once, in admission order.
	sort.SliceStable(t.landed, func(i, j int) bool { return t.landed[i].seq < t.landed[j].seq })
	for i, l := range t.landed {
		if i > 0 && t.landed[i-1].seq == l.seq {
			continue
		}
		out.Landed = append(out.Landed, l.tag)
	}
}

func (t *tick) runBook(b *book, bt *clob.BookTick) {
	for i, it := range b.pending {
		if !it.injected {
			t.landed = append(t.landed, landedEnv{seq: it.envSeq, tag: it.tag})
		}
		t.drain(b, it, bt)
		b.pending[i] = nil
	}
	b.pending = b.pending[:0]
	t.expire(b)
	if b.cfg.Kind == clob.Perp {
		t.clipReduceOnly(b)
	}
	t.match(b, bt)
	t.cancelIOC(b)
	b.compact()
	b.ran, b.lastTickUs = true, t.T
}

func (t *tick) event(kind clob.EventKind, o *order, terminal bool) *clob.Event {
	b := o.bk
	t.out.Events = append(t.out.Events, clob.Event{
		Kind: kind, Book: b.cfg.ID, OrderID: o.id, Owner: o.owner, Side: o.side,
		TotalBase:  mul(steps(o.filledLots), &b.cfg.LotSize),
		TotalQuote: o.filledQuote,
		TotalFee:   o.fee,
		Terminal:   terminal,
	})
	return &t.out.Events[len(t.out.Events)-1]
}

// remove takes a live order out of its book and unlocks what it still holds.
func (t *tick) remove(o *order) {
	if !o.live {
		panic("BUG: removing a dead order")
	}
	o.live = false
	o.bk.live--
	delete(t.e.byID, o.id)
	if !o.reserved.IsZero() {
		t.acc.Unlock(o.bk.backing(o.side), o.owner, &o.reserved)
		o.reserved.Clear()
	}
}

// drain applies one pending intent (tick step 1).
func (t *tick) drain(b *book, it *intent, bt *clob.BookTick) {
	dropped := it.deadline < uint64(t.T)
	o := it.ord
	switch it.kind {
	case clob.IntentSubmitTrigger, clob.IntentCancelTrigger, clob.IntentUpdateTrigger:
		t.e.perp.DrainTrigger(it.ext, t.T, dropped, t.out)
	case clob.IntentSubmit:
		if !o.live {
			return // cancelled before its tick (liquidation)
		}
		if dropped {
			t.remove(o)
			t.event(clob.EventExpire, o, true)
			return
		}
		o.pending = false
		o.admitTickUs, o.entryTickUs = t.T, t.T
		if o.ttl > 0 {
			o.expiresUs = t.T + int64(o.ttl)
		}
		t.event(clob.EventPlaced, o, false)
		bt.NewOrders++
	case clob.IntentCancel:
		if dropped || !o.live {
			return
		}
		t.remove(o)
		t.event(clob.EventCancel, o, true)
	case clob.IntentUpdate:
		if !o.live {
			// (reading) The order left the book before this update ran; the
			// update's lock change was part of its reservation and left with it.
			return
		}
		o.pendingUpdates--
		if !dropped {
			requeue := it.newLots > o.remLots || it.newSteps != o.priceSteps
			o.sizeLots += it.newLots - o.remLots
			o.remLots, o.priceSteps = it.newLots, it.newSteps
			if requeue {
				o.entryTickUs = t.T
			}
			o.settled = b.reservation(o.side, o.remLots, o.priceSteps)
			t.event(clob.EventUpdate, o, false)
		}
		if o.pendingUpdates == 0 {
			t.settle(b, o)
		}
	}
}

// settle runs when an order's last pending update has drained: its lock
// becomes what it would be had the dropped updates never been admitted
// (its "settled" reservation). "Its lock change is undone" cannot be read
// update by update: a later update's change was computed on top of the
// dropped one, and undoing the first can underflow. (reading, the fast
// engine's) When the owner no longer has the cash to restore a dropped
// shrink's release, the order is cancelled instead.
func (t *tick) settle(b *book, o *order) {
	token := b.backing(o.side)
	switch {
	case o.settled.Lt(&o.reserved):
		d := sub(&o.reserved, &o.settled)
		t.acc.Unlock(token, o.owner, &d)
		o.reserved = o.settled
	case o.settled.Gt(&o.reserved):
		d := sub(&o.settled, &o.reserved)
		if av := t.acc.Available(token, o.owner); av.Lt(&d) {
			t.remove(o)
			t.event(clob.EventCancel, o, true)
			return
		}
		t.acc.Lock(token, o.owner, &d)
		o.reserved = o.settled
	}
}

// expire removes resting orders whose ttl ran out (tick step 2).
func (t *tick) expire(b *book) {
	var due []*order
	for _, o := range b.orders {
		if o.live && !o.pending && o.expiresUs > 0 && o.expiresUs <= t.T {
			due = append(due, o)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if due[i].expiresUs != due[j].expiresUs {
			return due[i].expiresUs < due[j].expiresUs
		}
		return less(due[i].id, due[j].id)
	})
	for _, o := range due {
		t.remove(o)
		t.event(clob.EventExpire, o, true)
	}
}

// cancelIOC removes IOC and market remainders (tick step 4), in admission
// order (reading).
func (t *tick) cancelIOC(b *book) {
	var left []*order
	for _, o := range b.orders {
		if o.live && o.isIOC() {
			left = append(left, o)
		}
	}
	sort.Slice(left, func(i, j int) bool { return left[i].admitSeq < left[j].admitSeq })
	for _, o := range left {
		t.remove(o)
		t.event(clob.EventCancel, o, true)
	}
}

func (t *tick) runTransfers() {
	e := t.e
	for i, it := range e.transfers {
		t.landed = append(t.landed, landedEnv{seq: it.envSeq, tag: it.tag})
		e.transfers[i] = nil
		if it.deadline < uint64(t.T) {
			t.acc.Unlock(it.token, it.owner, &it.amount)
			continue
		}
		t.acc.SpendLocked(it.token, it.owner, &it.amount)
		t.acc.Credit(it.token, it.to, &it.amount)
		// (reading) a transfer event carries no order id and no book
		t.out.Events = append(t.out.Events, clob.Event{
			Kind: clob.EventTransfer, Owner: it.owner,
			Token: it.token, To: it.to, Amount: it.amount,
		})
	}
	e.transfers = e.transfers[:0]
	e.transfersRan, e.transfersLastTickUs = true, t.T
}
