package refperp

import (
	"bytes"
	"math/big"
	"slices"
	"sort"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/internal/refbook"
)

// trigger is a stored take-profit / stop-loss, or (stored == false) one
// whose submitTrigger waits in its book's pending ring.
type trigger struct {
	id, book    clob.Hash
	owner       clob.Address
	signer      clob.Address
	nonce       uint64
	side        clob.Side
	lots        int64
	limitSteps  int64 // 0 = market
	trigSteps   int64
	typ         uint8
	grouping    uint8
	flags       uint8 // FlagReduceOnly, FlagIOC
	ttl         uint64
	deadlineUs  int64
	admitTickUs int64
	expiresUs   int64
	gone        bool // cancelled while its submitTrigger was pending
}

// triggerOp is the payload of a pending trigger intent.
type triggerOp struct {
	kind     clob.IntentKind
	t        *trigger // submit: the new trigger
	book, id clob.Hash
	// update
	side                    clob.Side
	lots, limitSteps, trigS int64
}

// triggerFlags are the flags a trigger may carry.
const triggerFlags = clob.FlagReduceOnly | clob.FlagIOC

// find returns the live trigger id on book: stored, or pending submission.
func (e *Engine) find(book, id clob.Hash) *trigger {
	for _, t := range e.triggers {
		if t.book == book && t.id == id {
			return t
		}
	}
	for _, t := range e.pendingTriggers(book) {
		if t.id == id {
			return t
		}
	}
	return nil
}

// pendingTriggers lists the book's triggers whose submitTrigger waits in
// its pending ring (not cancelled since).
func (e *Engine) pendingTriggers(book clob.Hash) []*trigger {
	var ts []*trigger
	for _, x := range e.Engine.PendingPayloads(book) {
		if op := x.(*triggerOp); op.kind == clob.IntentSubmitTrigger && !op.t.gone {
			ts = append(ts, op.t)
		}
	}
	return ts
}

// values checks the order part of a submitTrigger or updateTrigger: side,
// flags, trigger type and grouping (submit), size, limit price and trigger
// price.
func values(m *market, in *clob.Intent) (lots, limit, trig int64, r clob.Reason) {
	switch {
	case in.Side != clob.Buy && in.Side != clob.Sell:
		return 0, 0, 0, clob.ReasonMalformed
	case in.Flags&^triggerFlags != 0:
		return 0, 0, 0, clob.ReasonFlagsUnknown
	case in.Kind == clob.IntentSubmitTrigger && in.TriggerType != clob.TriggerTakeProfit && in.TriggerType != clob.TriggerStopLoss:
		return 0, 0, 0, clob.ReasonTriggerType
	case in.Kind == clob.IntentSubmitTrigger && in.Grouping != clob.GroupingNone && in.Grouping != clob.GroupingAsset:
		return 0, 0, 0, clob.ReasonTriggerGrouping
	}
	if lots, r = refbook.Units(&in.Size, &m.cfg.LotSize, clob.ReasonSizeZero, clob.ReasonSizeLot); r != clob.OK {
		return
	}
	if !in.Price.IsZero() {
		if limit, r = refbook.Units(&in.Price, &m.cfg.TickPrecision, clob.ReasonPriceZero, clob.ReasonPriceStep); r != clob.OK {
			return
		}
	}
	trig, r = refbook.Units(&in.TriggerPrice, &m.cfg.TickPrecision, clob.ReasonTriggerPriceZero, clob.ReasonTriggerPriceStep)
	return
}

// AdmitTrigger validates a trigger intent (docs/perps.md, "Triggers"),
// after refbook's book, perp and deadline checks: for cancel and update
// the target (live in the book, the signer's account its owner), then the
// order part (values), then, for a submit, the per-book bound
// (Limits.OrdersMax stored or pending triggers).
func (e *Engine) AdmitTrigger(a *clob.Admission, in *clob.Intent, seq uint32, book clob.Hash) (any, clob.Reason) {
	m := e.market(book)
	switch in.Kind {
	case clob.IntentSubmitTrigger:
		lots, limit, trig, r := values(m, in)
		if r != clob.OK {
			return nil, r
		}
		n := 0
		for _, t := range e.triggers {
			if t.book == book {
				n++
			}
		}
		n += len(e.pendingTriggers(book))
		if n+1 > e.limits.OrdersMax {
			return nil, clob.ReasonTriggersFull
		}
		t := &trigger{id: refbook.OrderID(a.Signer, a.Nonce, seq), book: book, owner: a.Owner, signer: a.Signer,
			nonce: a.Nonce, side: in.Side, lots: lots, limitSteps: limit, trigSteps: trig, typ: in.TriggerType,
			grouping: in.Grouping, flags: in.Flags, ttl: in.TTL, deadlineUs: int64(in.Deadline)}
		return &triggerOp{kind: in.Kind, t: t, book: book, id: t.id}, clob.OK
	case clob.IntentCancelTrigger, clob.IntentUpdateTrigger:
		t := e.find(book, in.OrderID)
		if t == nil {
			return nil, clob.ReasonUnknownTrigger
		}
		if t.owner != a.Owner {
			return nil, clob.ReasonNotOwner
		}
		op := &triggerOp{kind: in.Kind, book: book, id: in.OrderID}
		if in.Kind == clob.IntentUpdateTrigger {
			lots, limit, trig, r := values(m, in)
			if r != clob.OK {
				return nil, r
			}
			op.side, op.lots, op.limitSteps, op.trigS = in.Side, lots, limit, trig
		}
		return op, clob.OK
	}
	return nil, clob.ReasonMalformed
}

// stored returns the stored trigger id on book.
func (e *Engine) stored(book, id clob.Hash) *trigger {
	for _, t := range e.triggers {
		if t.book == book && t.id == id {
			return t
		}
	}
	return nil
}

// DrainTrigger runs a trigger intent at its book's tick. A late
// submitTrigger (deadline passed) is cancelled (EventTriggerCancel); a late
// cancel or update is dropped silently; storing and updating a trigger emit no event (there is no
// event kind for them; AppendTriggers shows them).
func (e *Engine) DrainTrigger(payload any, tickUs int64, dropped bool, out *clob.TickResult) {
	op := payload.(*triggerOp)
	if op.kind == clob.IntentSubmitTrigger && op.t.gone {
		return // cancelled (liquidation) before its tick
	}
	if dropped {
		if op.kind == clob.IntentSubmitTrigger { // listed while pending: its end is reported
			t := op.t
			out.Events = append(out.Events, clob.Event{Kind: clob.EventTriggerCancel, Book: t.book, OrderID: t.id, Owner: t.owner, Side: t.side})
		}
		return
	}
	switch op.kind {
	case clob.IntentSubmitTrigger:
		t := op.t
		t.admitTickUs = tickUs
		if t.ttl > 0 {
			t.expiresUs = tickUs + int64(t.ttl)
		}
		e.triggers = append(e.triggers, t)
	case clob.IntentCancelTrigger:
		if t := e.stored(op.book, op.id); t != nil {
			e.removeTrigger(t, out)
		}
	case clob.IntentUpdateTrigger:
		if t := e.stored(op.book, op.id); t != nil {
			t.side, t.lots, t.limitSteps, t.trigSteps = op.side, op.lots, op.limitSteps, op.trigS
		}
	}
}

// removeTrigger drops a stored trigger with EventTriggerCancel.
func (e *Engine) removeTrigger(t *trigger, out *clob.TickResult) {
	for i, x := range e.triggers {
		if x == t {
			e.triggers = append(e.triggers[:i], e.triggers[i+1:]...)
			break
		}
	}
	out.Events = append(out.Events, clob.Event{Kind: clob.EventTriggerCancel, Book: t.book, OrderID: t.id, Owner: t.owner, Side: t.side})
}

// sortedTriggers returns the stored triggers matching keep, books
// ascending, then ids ascending.
func (e *Engine) sortedTriggers(keep func(*trigger) bool) []*trigger {
	var ts []*trigger
	for _, t := range e.triggers {
		if keep(t) {
			ts = append(ts, t)
		}
	}
	return sortTriggers(ts)
}

// sortTriggers sorts ts by book, then id, ascending.
func sortTriggers(ts []*trigger) []*trigger {
	sort.Slice(ts, func(i, j int) bool {
		if c := bytes.Compare(ts[i].book[:], ts[j].book[:]); c != 0 {
			return c < 0
		}
		return bytes.Compare(ts[i].id[:], ts[j].id[:]) < 0
	})
	return ts
}

// triggersOf lists owner's triggers, stored or pending, books ascending,
// then ids ascending.
func (e *Engine) triggersOf(owner clob.Address) []*trigger {
	ts := e.sortedTriggers(func(t *trigger) bool { return t.owner == owner })
	for _, m := range e.markets {
		for _, t := range e.pendingTriggers(m.cfg.ID) {
			if t.owner == owner {
				ts = append(ts, t)
			}
		}
	}
	return sortTriggers(ts)
}

// cancelTriggersOf cancels every trigger of owner, stored or pending
// (liquidation), books ascending, then ids ascending; a pending one's
// submitTrigger then does nothing at its tick.
func (e *Engine) cancelTriggersOf(owner clob.Address, out *clob.TickResult) {
	for _, t := range e.triggersOf(owner) {
		e.removeTrigger(t, out)
		t.gone = true
	}
}

// holds reports whether t's condition holds at mark: a buy take-profit
// and a sell stop-loss fire at or below their price, a buy stop-loss and a
// sell take-profit at or above (the live ABI's table).
func (t *trigger) holds(mark int64) bool {
	sellSL := t.side == clob.Sell && t.typ == clob.TriggerStopLoss
	buyTP := t.side == clob.Buy && t.typ == clob.TriggerTakeProfit
	if sellSL || buyTP {
		return mark <= t.trigSteps
	}
	return mark >= t.trigSteps
}

// fireTriggers ends the tick of the markets that ticked. Per market: the
// flat sweep, then, ascending id, the triggers whose ttl ran out
// (EventTriggerCancel), then the firing.
func (e *Engine) fireTriggers(ticked []*market, tickUs int64, acc clob.Accounts, out *clob.TickResult) {
	for _, m := range ticked {
		book := m.cfg.ID
		e.sweepFlat(m, acc, out)
		due := e.sortedTriggers(func(t *trigger) bool { return t.book == book && t.expiresUs > 0 && t.expiresUs <= tickUs })
		for _, t := range due {
			e.removeTrigger(t, out)
		}
		for _, t := range e.sortedTriggers(func(t *trigger) bool { return t.book == book }) {
			if !t.holds(m.mark) {
				continue
			}
			e.fire(m, t, tickUs, out)
		}
	}
}

// sweepFlat is the Asset grouping (docs/perps.md, "Triggers"): for every
// owner a fill of this tick left with no position on m and still flat
// now, the live orders its Asset triggers fired are cancelled, ids
// ascending, then its Asset triggers, ids ascending.
func (e *Engine) sweepFlat(m *market, acc clob.Accounts, out *clob.TickResult) {
	var owners []clob.Address
	for _, k := range e.flat {
		if k.book == m.cfg.ID && e.Position(k.book, k.owner) == 0 {
			owners = append(owners, k.owner)
		}
	}
	flat := func(owner clob.Address) bool { return slices.Contains(owners, owner) }
	e.Engine.CancelBound(m.cfg.ID, flat, acc, out)
	for _, t := range e.sortedTriggers(func(t *trigger) bool {
		return t.book == m.cfg.ID && t.grouping == clob.GroupingAsset && flat(t.owner)
	}) {
		e.removeTrigger(t, out)
	}
}

// fire turns a trigger into an order in its book's pending ring. A refused
// order (margin, REDUCE_ONLY, book full) cancels the trigger instead.
func (e *Engine) fire(m *market, t *trigger, tickUs int64, out *clob.TickResult) {
	typ, flags, price := clob.Limit, t.flags, t.limitSteps
	if price == 0 {
		typ, flags = clob.Market, flags|clob.FlagIOC
		d := max(1, m.mark*clob.TriggerSlippageBps/10_000) // the mark ± 10 % (docs/perps.md, "Triggers")
		price = max(1, m.mark-d)
		if t.side == clob.Buy {
			price = min(m.mark+d, unitsMax)
		}
	}
	lots, r := e.AdmitOrder(t.owner, t.book, t.side, t.lots, flags, 0, nil)
	if r == clob.OK {
		// the fired order lands in the next tick, and that tick
		// is its deadline.
		next := uint64(tickUs + m.cfg.IntervalUs)
		r = e.Engine.Inject(t.book, t.id, t.owner, t.side, typ, flags, lots, price, tickUs, next, t.grouping == clob.GroupingAsset)
	}
	if r != clob.OK {
		e.removeTrigger(t, out)
		return
	}
	for i, x := range e.triggers {
		if x == t {
			e.triggers = append(e.triggers[:i], e.triggers[i+1:]...)
			break
		}
	}
	out.Events = append(out.Events, clob.Event{Kind: clob.EventTriggerFired, Book: t.book, OrderID: t.id, Owner: t.owner,
		Side: t.side, Price: toU(new(big.Int).Mul(bi(m.mark), m.cfg.TickPrecision.ToBig()))})
}

// AppendTriggers appends the owner's stored triggers, books ascending, then
// ids ascending.
// A submitTrigger still pending is listed too, with AdmitTickUs 0.
func (e *Engine) AppendTriggers(dst []clob.TriggerInfo, owner clob.Address) []clob.TriggerInfo {
	for _, t := range e.triggersOf(owner) {
		m := e.market(t.book)
		tick := &m.cfg.TickPrecision
		var lim, trig, size uint256.Int
		lim.Mul(uint256.NewInt(uint64(t.limitSteps)), tick)
		trig.Mul(uint256.NewInt(uint64(t.trigSteps)), tick)
		size.Mul(uint256.NewInt(uint64(t.lots)), &m.cfg.LotSize)
		dst = append(dst, clob.TriggerInfo{ID: t.id, Book: t.book, Owner: t.owner, Signer: t.signer, Nonce: t.nonce,
			Side: t.side, Size: size, LimitPrice: lim, TriggerPrice: trig, TriggerType: t.typ, Grouping: t.grouping,
			Flags: t.flags, DeadlineUs: t.deadlineUs, AdmitTickUs: t.admitTickUs, ExpiresUs: t.expiresUs})
	}
	return dst
}
