package clob

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/holiman/uint256"
)

// Triggers (take-profit / stop-loss) on perp books: docs/perps.md,
// "Triggers". A trigger is admitted like an order (its intent waits in the
// book's pending ring and lands in a tick), is stored when its intent
// drains, and at each tick of its book either expires, fires (becoming an
// order in the book's pending ring) or waits. An Asset-grouped one, and a
// resting order it fired, is cancelled at the end of the tick in which its
// owner's position on the book goes flat (sweepFlat).

const (
	// TriggerSlippageBps caps the price of the market order a trigger
	// without a limit price becomes: the mark that fired it ± 10 %, the
	// live network's TP/SL market slippage.
	TriggerSlippageBps = 1000
)

// intentFired is the pending-ring kind of an order a trigger became: a
// submit without a transaction of its own, so it adds no Landed tag.
const intentFired = IntentUpdateTrigger + 1

// Trigger states.
const (
	trigFree    uint8 = iota
	trigPending       // admitted: its submitTrigger waits in the pending ring
	trigStored        // watched at every tick of its book
)

// trigger is one trigger in a book's arena.
type trigger struct {
	id            Hash
	owner, signer Address
	nonce         uint64
	gen           uint32
	state         uint8
	side          Side
	typ           uint8 // TriggerTakeProfit, TriggerStopLoss
	grouping      uint8 // GroupingNone, GroupingAsset
	flags         uint8 // FlagReduceOnly, FlagIOC
	lots          int64
	limitSteps    int64 // 0 = market
	trigSteps     int64
	deadlineUs    uint64
	ttlUs         uint64
	admitTickUs   int64 // 0 while pending
	expiresUs     int64 // 0 = no ttl
}

// triggers is one perp book's trigger store: an arena addressed by orderRef
// (slot and generation, slot 0 = nil) with its hot part beside it (what
// the tick's scan reads, in slot order), a free list, the live slots sorted
// by id, and the live Asset-grouped ones sorted by (owner, id): what the
// flat sweep looks an owner's up in.
// Invariant: byID holds exactly the live (pending or stored) slots, byAsset
// exactly those with grouping GroupingAsset, and hot[s] mirrors arena[s]
// (sync).
type triggers struct {
	arena   []trigger
	hot     []trigHot
	free    []uint32
	byID    []uint32
	byAsset []uint32
	max     int // the book's OrdersMax: live triggers at most
	// exp and fire are the tick's scratch: the triggers that expire (or
	// that the flat sweep cancels) and those whose condition holds.
	exp, fire []uint32
	// targets holds, while LoadEngine reads the book, the pending trigger
	// intents whose target is resolved after the stored triggers load.
	targets []pendingTarget
}

// trigHot is what the tick's scan reads of a trigger.
type trigHot struct {
	trigSteps int64
	expiresUs int64 // 0 = no ttl
	state     uint8
	below     bool // fires when mark ≤ trigSteps (a sell stop-loss, a buy take-profit), else when mark ≥ trigSteps
}

func newTriggers(max int) triggers {
	c := preallocated(max)
	return triggers{arena: make([]trigger, 1, c+1), hot: make([]trigHot, 1, c+1), free: make([]uint32, 0, c),
		byID: make([]uint32, 0, c), byAsset: make([]uint32, 0, c), max: max}
}

// sync copies slot s's scanned fields into its hot part.
func (ts *triggers) sync(s uint32) {
	t := &ts.arena[s]
	ts.hot[s] = trigHot{trigSteps: t.trigSteps, expiresUs: t.expiresUs, state: t.state,
		below: (t.side == Sell) == (t.typ == TriggerStopLoss)}
}

func (ts *triggers) live() int { return max(0, len(ts.arena)-1) - len(ts.free) } // a spot book has no arena

// alloc takes a slot for a trigger with id, indexed at once.
// REQUIRES: live() < max; id is not live.
func (ts *triggers) alloc(id *Hash) orderRef {
	s := takeSlot(&ts.free, &ts.arena, &ts.hot)
	gen := ts.arena[s].gen
	ts.arena[s] = trigger{id: *id, gen: gen}
	i, found := ts.search(id)
	if found {
		panic("BUG: trigger id already live: (signer, nonce) admitted twice")
	}
	ts.byID = slices.Insert(ts.byID, i, s)
	return makeRef(s, gen)
}

// filled indexes slot s, whose fields are now set, by owner if it is
// Asset-grouped and syncs its hot part.
func (ts *triggers) filled(s uint32) {
	if t := &ts.arena[s]; t.grouping == GroupingAsset {
		i, _ := ts.assetSearch(&t.owner, &t.id)
		ts.byAsset = slices.Insert(ts.byAsset, i, s)
	}
	ts.sync(s)
}

// release frees live slot s: its handles go stale.
func (ts *triggers) release(s uint32) {
	t := &ts.arena[s]
	i, _ := ts.search(&t.id)
	ts.byID = slices.Delete(ts.byID, i, i+1)
	if t.grouping == GroupingAsset {
		i, _ = ts.assetSearch(&t.owner, &t.id)
		ts.byAsset = slices.Delete(ts.byAsset, i, i+1)
	}
	t.state = trigFree
	t.gen++
	ts.sync(s)
	ts.free = append(ts.free, s)
}

// assetSearch returns the position of (owner, id) in byAsset, or where it
// would go.
func (ts *triggers) assetSearch(owner *Address, id *Hash) (int, bool) {
	cmp := func(s uint32) int {
		t := &ts.arena[s]
		if c := bytes.Compare(t.owner[:], owner[:]); c != 0 {
			return c
		}
		return bytes.Compare(t.id[:], id[:])
	}
	lo, hi := 0, len(ts.byAsset)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cmp(ts.byAsset[m]) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(ts.byAsset) && cmp(ts.byAsset[lo]) == 0
}

// search returns the position of id in byID, or where it would go.
func (ts *triggers) search(id *Hash) (int, bool) {
	lo, hi := 0, len(ts.byID)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(ts.arena[ts.byID[m]].id[:], id[:]) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(ts.byID) && ts.arena[ts.byID[lo]].id == *id
}

// deref returns the slot of a handle that still names a live trigger, or 0.
func (ts *triggers) deref(r orderRef) uint32 {
	s := r.slot()
	if s == 0 || int(s) >= len(ts.arena) {
		return 0
	}
	if t := &ts.arena[s]; t.gen != r.gen() || t.state == trigFree {
		return 0
	}
	return s
}

// createdTrigger is a trigger the envelope being admitted creates.
type createdTrigger struct {
	id  Hash
	b   *book
	ref orderRef // set by apply
}

// triggerScratch is the envelope's trigger state during admission.
type triggerScratch struct {
	created [BatchIntentsMax]createdTrigger
	n       int
}

// AppendTriggers appends the owner's live triggers (a pending one has
// AdmitTickUs 0), books ascending, then ids ascending.
func (e *Engine) AppendTriggers(dst []TriggerInfo, owner Address) []TriggerInfo {
	for _, b := range e.books {
		for _, s := range b.trig.byID {
			if t := &b.trig.arena[s]; t.owner == owner {
				dst = append(dst, b.triggerInfo(t))
			}
		}
	}
	return dst
}

// AppendTriggerOwners appends every account with a live trigger, each
// once, in ascending order.
func (e *Engine) AppendTriggerOwners(dst []Address) []Address {
	start := len(dst)
	for _, b := range e.books {
		for _, s := range b.trig.byID {
			dst = append(dst, b.trig.arena[s].owner)
		}
	}
	owners := dst[start:]
	slices.SortFunc(owners, func(x, y Address) int { return bytes.Compare(x[:], y[:]) })
	return dst[:start+len(slices.Compact(owners))]
}

func (b *book) triggerInfo(t *trigger) TriggerInfo {
	info := TriggerInfo{ID: t.id, Book: b.cfg.ID, Owner: t.owner, Signer: t.signer, Nonce: t.nonce, Side: t.side,
		TriggerType: t.typ, Grouping: t.grouping, Flags: t.flags, DeadlineUs: int64(t.deadlineUs),
		AdmitTickUs: t.admitTickUs, ExpiresUs: t.expiresUs}
	b.u.baseOf(&info.Size, t.lots)
	b.u.priceWei(&info.LimitPrice, 2*t.limitSteps)
	b.u.priceWei(&info.TriggerPrice, 2*t.trigSteps)
	return info
}

// checkTrigger validates trigger intent i (submit, cancel, update) and
// records its plan: p.b, p.side, p.lots, p.steps (the limit price) and, for
// cancel and update, the target in p.target or p.created.
func (e *Engine) checkTrigger(a *Admission, in *Intent, i int, p *plan, acc Accounts) Reason {
	b := e.book(in.Book)
	switch {
	case b == nil:
		return ReasonUnknownBook
	case b.perp == nil:
		return ReasonTriggerSpot
	}
	p.b = b
	if r := checkDeadline(in.Deadline, a.NowUs, &b.u.ivDiv, b.lastTickUs); r != OK {
		return r
	}
	s := &e.adm.trig
	if in.Kind != IntentSubmitTrigger {
		if r := e.checkTriggerTarget(a, in, p); r != OK {
			return r
		}
	}
	if in.Kind != IntentCancelTrigger {
		if r := checkTriggerOrder(b, in, p); r != OK {
			return r
		}
	}
	if in.Kind == IntentSubmitTrigger {
		n := b.trig.live()
		for j := range s.n {
			if s.created[j].b == b {
				n++
			}
		}
		if n >= b.trig.max {
			return ReasonTriggersFull
		}
	}
	if r := e.checkCapacity(b, false); r != OK {
		return r
	}
	if in.Kind == IntentSubmitTrigger {
		c := &s.created[s.n]
		*c = createdTrigger{b: b}
		e.newID(&c.id, a, in, i)
		p.created = s.n
		s.n++
	}
	return OK
}

// checkTriggerOrder checks the order part of a submitTrigger or
// updateTrigger: side, flags, trigger type and grouping (submit), size,
// limit price (0 = market) and trigger price, as for orders.
func checkTriggerOrder(b *book, in *Intent, p *plan) Reason {
	switch {
	case in.Side > Sell:
		return ReasonMalformed
	case in.Flags&^(FlagReduceOnly|FlagIOC) != 0:
		return ReasonFlagsUnknown
	case in.Kind == IntentSubmitTrigger && in.TriggerType > TriggerStopLoss:
		return ReasonTriggerType
	case in.Kind == IntentSubmitTrigger && in.Grouping > GroupingAsset:
		return ReasonTriggerGrouping
	}
	var r Reason
	if p.lots, r = b.u.toLots(&in.Size, ReasonSizeZero, ReasonSizeLot); r != OK {
		return r
	}
	if !in.Price.IsZero() {
		if p.steps, r = b.u.toSteps(&in.Price, ReasonPriceZero, ReasonPriceStep); r != OK {
			return r
		}
	}
	if _, r = b.u.toSteps(&in.TriggerPrice, ReasonTriggerPriceZero, ReasonTriggerPriceStep); r != OK {
		return r
	}
	p.side = in.Side
	return OK
}

// checkTriggerTarget finds the trigger a cancel or update names: one the
// envelope creates, or a live one of the owner's.
func (e *Engine) checkTriggerTarget(a *Admission, in *Intent, p *plan) Reason {
	s := &e.adm.trig
	for j := range s.n {
		if s.created[j].id == in.OrderID {
			if s.created[j].b != p.b {
				return ReasonUnknownTrigger
			}
			p.created = j
			return OK
		}
	}
	ts := &p.b.trig
	i, ok := ts.search(&in.OrderID)
	if !ok {
		return ReasonUnknownTrigger
	}
	slot := ts.byID[i]
	if ts.arena[slot].owner != a.Owner {
		return ReasonNotOwner
	}
	p.target = makeRef(slot, ts.arena[slot].gen)
	return OK
}

// applyTrigger carries out a validated trigger intent at admission and
// fills its pending ring entry q: a submit takes its arena slot now (so the
// book's capacity counts it), pending until it drains.
func (e *Engine) applyTrigger(a *Admission, in *Intent, p *plan, q *pendingIntent, acc Accounts) {
	s, ts := &e.adm.trig, &p.b.trig
	if in.Kind == IntentSubmitTrigger {
		c := &s.created[p.created]
		c.ref = ts.alloc(&c.id)
		t := &ts.arena[c.ref.slot()]
		t.owner, t.signer, t.nonce, t.state = a.Owner, a.Signer, a.Nonce, trigPending
		t.side, t.typ, t.grouping, t.flags = in.Side, in.TriggerType, in.Grouping, in.Flags
		t.lots, t.limitSteps, t.trigSteps = p.lots, p.steps, triggerSteps(p.b, in)
		t.deadlineUs, t.ttlUs = in.Deadline, in.TTL
		ts.filled(c.ref.slot())
		q.ref = c.ref
		return
	}
	q.ref = p.target
	if p.created >= 0 {
		q.ref = s.created[p.created].ref
	}
	if in.Kind == IntentUpdateTrigger {
		q.newLots, q.newSteps, q.trigSteps = p.lots, p.steps, triggerSteps(p.b, in)
		if p.side == Sell {
			q.newLots = -p.lots
		}
	}
}

// triggerSteps is a validated intent's trigger price in steps.
func triggerSteps(b *book, in *Intent) int64 {
	steps, _ := b.u.toSteps(&in.TriggerPrice, ReasonTriggerPriceZero, ReasonTriggerPriceStep)
	return steps
}

// drainTrigger runs a trigger intent at its tick: a submit stores its
// trigger, which its admission tick starts the ttl of. A late submitTrigger
// is cancelled; a late cancel or update is dropped, as for orders.
func (e *Engine) drainTrigger(b *book, p *pendingIntent, tickUs int64, late bool, acc Accounts, out *TickResult) {
	ts := &b.trig
	s := ts.deref(p.ref)
	if s == 0 {
		return // cancelled (liquidation, an earlier cancel) before its turn
	}
	t := &ts.arena[s]
	switch {
	case p.kind == IntentSubmitTrigger && late:
		e.removeTrigger(b, s, out)
	case p.kind == IntentSubmitTrigger:
		t.state, t.admitTickUs = trigStored, tickUs
		if t.ttlUs > 0 {
			t.expiresUs = tickUs + int64(min(t.ttlUs, uint64(1<<63-1-tickUs)))
		}
		ts.sync(s)
	case late:
	case p.kind == IntentCancelTrigger:
		e.removeTrigger(b, s, out)
	case p.kind == IntentUpdateTrigger:
		t.side, t.lots = Buy, p.newLots
		if p.newLots < 0 {
			t.side, t.lots = Sell, -p.newLots
		}
		t.limitSteps, t.trigSteps = p.newSteps, p.trigSteps
		ts.sync(s)
	}
}

// removeTrigger cancels the live trigger at slot s (EventTriggerCancel).
func (e *Engine) removeTrigger(b *book, s uint32, out *TickResult) {
	b.triggerEvent(out, s, EventTriggerCancel)
	b.trig.release(s)
}

func (b *book) triggerEvent(out *TickResult, s uint32, kind EventKind) *Event {
	t := &b.trig.arena[s]
	out.Events = append(out.Events, Event{Kind: kind, Book: b.cfg.ID, OrderID: t.id, Owner: t.owner, Side: t.side})
	return &out.Events[len(out.Events)-1]
}

// fireTriggers ends the tick of every perp book that ran in it, after the
// liquidation pass (books ascending): first the flat sweep (sweepFlat),
// then its triggers, by id: expired ones are cancelled, then each whose
// condition holds at the book's new mark (b.perp.mark) fires.
func (e *Engine) fireTriggers(tickUs int64, acc Accounts, out *TickResult) {
	for _, b := range e.books {
		if b.perp == nil || b.lastTickUs != tickUs {
			continue
		}
		if len(b.perp.flat) > 0 {
			e.sweepFlat(b, acc, out)
		}
		if len(b.trig.byID) > 0 {
			e.runTriggers(b, tickUs, acc, out)
		}
	}
}

// sweepFlat ends the Asset grouping of the owners whose position on perp
// book b a fill of this tick brought to size 0 and that are still flat
// after the liquidation pass (docs/perps.md, "Triggers"): the resting
// orders their Asset triggers fired are cancelled (EventCancel), ids
// ascending, then those triggers (EventTriggerCancel), ids ascending. It
// runs before the book's triggers fire, so no Asset trigger of a flat
// owner fires in the tick that closed the position.
func (e *Engine) sweepFlat(b *book, acc Accounts, out *TickResult) {
	pb, ts, accts := b.perp, &b.trig, e.pp.accts
	flat := pb.flat
	pb.flat = flat[:0]
	if pb.bound == 0 && len(ts.byAsset) == 0 {
		return
	}
	flat = slices.DeleteFunc(flat, func(a int32) bool { return pb.sizeOf(a) != 0 })
	slices.SortFunc(flat, func(x, y int32) int { return bytes.Compare(accts[x].owner[:], accts[y].owner[:]) })
	flat = slices.Compact(flat) // a position may go flat twice in a tick
	if pb.bound > 0 {
		sl := e.pp.slots[:0]
		for s := 1; s < len(b.nodes); s++ {
			if o := &b.ords[s]; b.nodes[s].state != stateFree && o.assetBound && isFlat(accts, flat, &o.owner) {
				sl = append(sl, uint32(s))
			}
		}
		slices.SortFunc(sl, func(x, y uint32) int { return bytes.Compare(b.ords[x].id[:], b.ords[y].id[:]) })
		for _, s := range sl {
			e.removeOrder(b, s, EventCancel, acc, out)
		}
		e.pp.slots = sl[:0]
	}
	sl := ts.exp[:0]
	for _, a := range flat {
		owner := &accts[a].owner
		for i, _ := ts.assetSearch(owner, &Hash{}); i < len(ts.byAsset) && ts.arena[ts.byAsset[i]].owner == *owner; i++ {
			sl = append(sl, ts.byAsset[i])
		}
	}
	ts.sortByID(sl)
	for _, s := range sl {
		e.removeTrigger(b, s, out)
	}
	ts.exp = sl[:0]
}

// runTriggers scans the hot parts in slot order (the scan is the tick's
// cost: sequential, 24 bytes a trigger), then handles what it found by id.
func (e *Engine) runTriggers(b *book, tickUs int64, acc Accounts, out *TickResult) {
	ts := &b.trig
	mark := b.perp.mark
	exp, fire := ts.exp[:0], ts.fire[:0]
	for s := 1; s < len(ts.hot); s++ {
		h := &ts.hot[s]
		switch {
		case h.state != trigStored:
		case h.expiresUs != 0 && h.expiresUs <= tickUs:
			exp = append(exp, uint32(s))
		case h.below && mark <= h.trigSteps || !h.below && mark >= h.trigSteps:
			fire = append(fire, uint32(s))
		}
	}
	ts.sortByID(exp)
	for _, s := range exp {
		e.removeTrigger(b, s, out)
	}
	ts.sortByID(fire)
	for _, s := range fire {
		e.fire(b, s, tickUs, acc, out)
	}
	ts.exp, ts.fire = exp[:0], fire[:0]
}

func (ts *triggers) sortByID(slots []uint32) {
	slices.SortFunc(slots, func(x, y uint32) int { return bytes.Compare(ts.arena[x].id[:], ts.arena[y].id[:]) })
}

// isFlat reports whether owner is one of the accounts in flat, which is
// sorted by owner.
func isFlat(accts []perpAccount, flat []int32, owner *Address) bool {
	_, ok := slices.BinarySearchFunc(flat, owner, func(a int32, o *Address) int { return bytes.Compare(accts[a].owner[:], o[:]) })
	return ok
}

// fire turns the stored trigger at slot s into an order in the book's
// pending ring, landing in the book's next tick (an Asset trigger's order
// is asset-bound: the flat sweep cancels it while it rests); a refused
// order (margin, REDUCE_ONLY, capacity) cancels the trigger instead.
func (e *Engine) fire(b *book, s uint32, tickUs int64, acc Accounts, out *TickResult) {
	t := &b.trig.arena[s]
	mark := b.perp.mark
	typ, flags, steps := Limit, t.flags, t.limitSteps
	if steps == 0 {
		typ, flags = Market, flags|FlagIOC
		steps = triggerCap(t.side, mark)
	}
	lots, r := e.marginCheck(t.owner, b, t.side, t.lots, flags, acc)
	if r != OK || lots <= 0 || b.full() || b.pending.len() >= len(b.pending.buf) {
		e.removeTrigger(b, s, out)
		return
	}
	ev := b.triggerEvent(out, s, EventTriggerFired)
	b.u.priceWei(&ev.Price, 2*mark)
	land := landing(tickUs, b.cfg.IntervalUs)
	// Triggers live on perp books only, whose orders reserve nothing.
	ref := b.newOrder(&t.id, t.owner, t.side, typ, flags, lots, steps, uint64(land), 0, &uint256.Int{})
	b.ords[ref.slot()].assetBound = t.grouping == GroupingAsset
	e.perpOrderLive(b, ref.slot())
	// The ring is empty (this tick drained it): the latest envelope's
	// sequence keeps it in admission order for the snapshot loader.
	b.pending.push(&pendingIntent{kind: intentFired, ref: ref, deadlineUs: uint64(land), landUs: land, seq: max(e.seq, 1) - 1})
	b.trig.release(s)
}

// triggerCap is the price cap of a fired market order: the mark ±
// TriggerSlippageBps, at least one step, at most unitsMax.
func triggerCap(side Side, mark int64) int64 {
	d := max(1, mark*TriggerSlippageBps/10_000) // mark ≤ 2^53: no overflow
	if side == Buy {
		return min(unitsMax, mark+d)
	}
	return max(1, mark-d)
}

// cancelTriggersOf cancels every live trigger of owner, pending or stored,
// books ascending, ids ascending (liquidation).
func (e *Engine) cancelTriggersOf(owner Address, out *TickResult) {
	for _, b := range e.books {
		ts := &b.trig
		for i := 0; i < len(ts.byID); { // removal shifts the rest down to i
			if s := ts.byID[i]; ts.arena[s].owner == owner {
				e.removeTrigger(b, s, out)
			} else {
				i++
			}
		}
	}
}

// submits reports whether a pending intent enters an order into its book.
func (p *pendingIntent) submits() bool { return p.kind == IntentSubmit || p.kind == intentFired }

// appendTriggers writes, per perp book, its stored triggers by id (layout
// in doc.go); pending ones are in their book's pending ring.
func (e *Engine) appendTriggers(dst []byte) []byte {
	for _, b := range e.books {
		if b.perp == nil {
			continue
		}
		n := 0
		for _, s := range b.trig.byID {
			if b.trig.arena[s].state == trigStored {
				n++
			}
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(n))
		for _, s := range b.trig.byID {
			if t := &b.trig.arena[s]; t.state == trigStored {
				dst = appendTrigger(dst, t)
			}
		}
	}
	return dst
}

func appendTrigger(dst []byte, t *trigger) []byte {
	dst = append(dst, t.id[:]...)
	dst = append(dst, t.owner[:]...)
	dst = append(dst, t.signer[:]...)
	dst = binary.BigEndian.AppendUint64(dst, t.nonce)
	dst = append(dst, byte(t.side), t.typ, t.grouping, t.flags)
	for _, v := range [...]uint64{uint64(t.lots), uint64(t.limitSteps), uint64(t.trigSteps), t.deadlineUs, t.ttlUs,
		uint64(t.admitTickUs), uint64(t.expiresUs)} {
		dst = binary.BigEndian.AppendUint64(dst, v)
	}
	return dst
}

// appendPendingTrigger writes the body of a pending trigger intent:
//
//	submitTrigger: | live u8 | trigger (if live; admitTickUs, expiresUs 0) |
//	cancelTrigger: | target id 32 (zero if gone) |
//	updateTrigger: | target id 32 (zero if gone) | signed lots u64 | limitSteps u64 | triggerSteps u64 |
func (b *book) appendPendingTrigger(dst []byte, p *pendingIntent) []byte {
	s := b.trig.deref(p.ref)
	if p.kind == IntentSubmitTrigger {
		dst = appendBool(dst, s != 0)
		if s != 0 {
			dst = appendTrigger(dst, &b.trig.arena[s])
		}
		return dst
	}
	var id Hash
	if s != 0 {
		id = b.trig.arena[s].id
	}
	dst = append(dst, id[:]...)
	if p.kind == IntentUpdateTrigger {
		for _, v := range [...]int64{p.newLots, p.newSteps, p.trigSteps} {
			dst = binary.BigEndian.AppendUint64(dst, uint64(v))
		}
	}
	return dst
}

// loadPendingTrigger reads the body appendPendingTrigger wrote into p, the
// next entry of the ring. A cancel or update may name a stored trigger,
// which loads later: loadTriggers resolves its target.
func (b *book) loadPendingTrigger(r *snapReader, p *pendingIntent) {
	if p.kind == IntentSubmitTrigger {
		if r.boolean() {
			p.ref = b.loadTrigger(r, trigPending)
		}
		return
	}
	id := r.hash()
	if p.kind == IntentUpdateTrigger {
		p.newLots, p.newSteps, p.trigSteps = int64(r.U64()), int64(r.U64()), int64(r.U64())
		if r.Err == nil && (p.newLots == 0 || p.newLots < -unitsMax || p.newLots > unitsMax ||
			p.newSteps < 0 || p.newSteps > unitsMax || p.trigSteps < 1 || p.trigSteps > unitsMax) {
			r.Fail("trigger update to %d lots at %d steps, trigger %d steps", p.newLots, p.newSteps, p.trigSteps)
		}
	}
	if r.Err == nil && id != (Hash{}) {
		b.trig.targets = append(b.trig.targets, pendingTarget{ring: b.pending.len(), id: id})
	}
}

// pendingTarget is a pending cancel or update of a trigger whose target
// the loader resolves once the book's stored triggers are in.
type pendingTarget struct {
	ring int // index in the pending ring
	id   Hash
}

// loadTriggers reads the stored triggers of every perp book, then resolves
// the pending trigger intents that name them.
func (e *Engine) loadTriggers(r *snapReader) {
	if r.Err != nil {
		return // e.books may hold nil
	}
	for _, b := range e.books {
		if b.perp == nil || r.Err != nil {
			continue
		}
		n := r.count("triggers", b.trig.max)
		var last Hash
		for i := 0; i < n && r.Err == nil; i++ {
			ref := b.loadTrigger(r, trigStored)
			if r.Err != nil {
				break
			}
			t := &b.trig.arena[ref.slot()]
			if i > 0 && bytes.Compare(last[:], t.id[:]) >= 0 {
				r.Fail("trigger %x after trigger %x", t.id, last)
			}
			last = t.id
		}
		for _, pt := range b.trig.targets {
			if r.Err != nil {
				break
			}
			i, ok := b.trig.search(&pt.id)
			if !ok {
				r.Fail("pending intent names trigger %x, which is not live", pt.id)
				break
			}
			s := b.trig.byID[i]
			b.pending.at(pt.ring).ref = makeRef(s, b.trig.arena[s].gen)
		}
		b.trig.targets = nil
	}
}

// loadTrigger reads one trigger into a fresh slot, in state.
func (b *book) loadTrigger(r *snapReader, state uint8) orderRef {
	var t trigger
	t.id, t.owner, t.signer = r.hash(), r.addr(), r.addr()
	t.nonce = r.U64()
	t.side, t.typ, t.grouping, t.flags = Side(r.U8()), r.U8(), r.U8(), r.U8()
	t.lots, t.limitSteps, t.trigSteps = int64(r.U64()), int64(r.U64()), int64(r.U64())
	t.deadlineUs, t.ttlUs = r.U64(), r.U64()
	t.admitTickUs, t.expiresUs = int64(r.U64()), int64(r.U64())
	if r.Err != nil {
		return 0
	}
	if why := b.triggerProblem(&t, state); why != "" {
		r.Fail("trigger %x: %s", t.id, why)
		return 0
	}
	ref := b.trig.alloc(&t.id)
	t.gen, t.state = ref.gen(), state
	b.trig.arena[ref.slot()] = t
	b.trig.filled(ref.slot())
	return ref
}

// triggerProblem says what is wrong with a decoded trigger, "" if nothing.
func (b *book) triggerProblem(t *trigger, state uint8) string {
	_, dup := b.trig.search(&t.id)
	wantExpiry := int64(0)
	if state == trigStored && t.ttlUs > 0 && t.admitTickUs >= 0 {
		wantExpiry = t.admitTickUs + int64(min(t.ttlUs, uint64(1<<63-1-t.admitTickUs)))
	}
	switch {
	case t.id == Hash{}:
		return "zero id"
	case dup:
		return "id appears twice"
	case b.trig.live() >= b.trig.max:
		return "more triggers than the book holds"
	case t.side > Sell || t.typ > TriggerStopLoss || t.grouping > GroupingAsset || t.flags&^(FlagReduceOnly|FlagIOC) != 0:
		return "side, type, grouping or flags unknown"
	case t.lots < 1 || t.lots > unitsMax || t.limitSteps < 0 || t.limitSteps > unitsMax || t.trigSteps < 1 || t.trigSteps > unitsMax:
		return "size or prices out of range"
	case state == trigPending && (t.admitTickUs != 0 || t.expiresUs != 0):
		return "a pending trigger has tick times"
	case state == trigStored && (t.admitTickUs < 0 || t.expiresUs != wantExpiry):
		return "expiry does not follow from admission and ttl"
	}
	return ""
}
