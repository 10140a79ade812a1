package clob

import (
	"bytes"
	"math"
	"slices"
	"unsafe"
)

// tickScratch holds buffers reused by every tick.
type tickScratch struct {
	chunks []chunk
	held   [2][]uint32 // settle: filled spot orders whose discard unlocks money, per side
	sorted []newEntry
	radix  []newEntry // sortNew's second buffer, as long as sorted
	landed []landedTag
	// The regrouping of late events (groupLate): the late events by book,
	// their books' indexes and per-book counts, and the events and
	// BookTicks it moves. They grow to the high-water mark of a tick with
	// late events, then stay.
	late     []Event
	lateBook []int32
	lateN    []int32
	moved    []Event
	books    []BookTick
}

// newEntry is an order entering its level in this tick, sorted by id. key
// is the id's first 8 bytes: it decides almost every comparison, and keeps
// the sorted items small (sorting 40-byte items with whole ids was slower).
type newEntry struct {
	key  uint64
	slot uint32
}

// landedTag is an envelope one of whose intents drained in this tick.
type landedTag struct{ seq, tag uint64 }

func (t *tickScratch) init(l *Limits) {
	t.chunks = make([]chunk, 0, preallocated(l.OrdersMax))
	t.held = [2][]uint32{make([]uint32, 0, 64), make([]uint32, 0, 64)}
	t.sorted = make([]newEntry, 0, l.PendingMax)
	t.landed = make([]landedTag, 0, l.PendingMax)
}

// NextTickDue returns the earliest tick time at which some book has work
// (pending intents or due expiries; a perp book every interval), or the
// transfer ring has work, and whether it is ≤ nowUs. A perp book idle for
// long is due at the latest grid point ≤ nowUs, not at every missed one:
// funding is prorated over the time since its last tick.
func (e *Engine) NextTickDue(nowUs int64) (int64, bool) { return e.NextTickAfter(-1, nowUs) }

// NextTickAfter is NextTickDue with every tick at or before afterUs passed
// over (afterUs < 0: none): each book's and the transfers' next tick is the
// first of their grid after afterUs. The node skips auctions with it (the
// strategy lab, docs/lab.md); the engine itself runs any tick it is given.
func (e *Engine) NextTickAfter(afterUs, nowUs int64) (int64, bool) {
	best := int64(math.MaxInt64)
	for _, b := range e.books {
		best = min(best, TickAfter(b.nextDue(nowUs), b.cfg.IntervalUs, afterUs))
	}
	if e.transfers.len() > 0 {
		t := max(e.transfers.at(0).landUs, e.transferLastUs+TransferIntervalUs)
		best = min(best, TickAfter(t, TransferIntervalUs, afterUs))
	}
	return best, best <= nowUs
}

// TickAfter lifts tick t of a grid of interval iv past afterUs (< 0: no lift).
func TickAfter(t, iv, afterUs int64) int64 {
	if afterUs < 0 || t > afterUs {
		return t
	}
	return (afterUs/iv + 1) * iv
}

// nextDue is the book's next tick with work, MaxInt64 if none.
func (b *book) nextDue(nowUs int64) int64 {
	iv := b.cfg.IntervalUs
	due := int64(math.MaxInt64)
	if b.perp != nil {
		due = max(b.lastTickUs+iv, nowUs/iv*iv)
	}
	if b.pending.len() > 0 {
		due = max(b.pending.at(0).landUs, b.lastTickUs+iv)
	}
	if exp, ok := b.expiryTop(); ok && exp <= math.MaxInt64-iv {
		t := (exp + iv - 1) / iv * iv
		due = min(due, max(t, b.lastTickUs+iv))
	}
	return due
}

// due reports whether the book runs at tickUs.
func (b *book) due(tickUs int64) bool {
	if tickUs%b.cfg.IntervalUs != 0 || tickUs <= b.lastTickUs {
		return false
	}
	exp, ok := b.expiryTop()
	return b.perp != nil || b.pending.len() > 0 || ok && exp <= tickUs
}

// Tick runs the auction of every book due at tickUs, then the transfers.
// out is truncated and refilled; its slices stay valid until the next call
// with the same out.
// REQUIRES: tickUs ≥ 0.
func (e *Engine) Tick(tickUs int64, acc Accounts, out *TickResult) {
	if tickUs < 0 {
		panic("BUG: negative tick time")
	}
	from := 0
	if ct := &e.ct; ct.begun { // BeginTick and ClearConcurrent ran the first books
		if ct.tickUs != tickUs || ct.out != out {
			panic("BUG: Tick finishing another tick than BeginTick's")
		}
		e.rec.replay(acc)
		from = ct.end
		*ct = concurrentTick{}
	} else {
		e.resetTick(tickUs, out)
	}
	for _, b := range e.books[from:] {
		if b.due(tickUs) {
			e.runBook(b, tickUs, acc, out)
		}
	}
	booksEnd := len(out.Events)
	if tickUs%TransferIntervalUs == 0 && tickUs > e.transferLastUs && e.transfers.len() > 0 {
		e.runTransfers(tickUs, acc, out)
	}
	lateStart := len(out.Events)
	e.perpTick(tickUs, acc, out)
	e.fireTriggers(tickUs, acc, out)
	if len(out.Events) > lateStart {
		e.groupLate(out, booksEnd, lateStart)
	}
	for _, b := range e.books {
		b.expiryPrune()
	}
	e.finishLanded(out)
	if e.stg.on {
		e.JoinStaged()
	}
}

// groupLate moves the late events — those emitted after every book
// matched and the transfers settled: the liquidation pass (cancelled
// orders and triggers, the liquidations), the flat sweep and the triggers'
// expiries and refusals, Events[lateStart:] — into their books' ranges, so
// that every event of a book but a trigger's firing lies in
// Events[FirstEvent:EndEvent] of its BookTick (subscriptions read only
// those). A book's range becomes its matching events, then its late events
// in the order they were emitted; a book that did not run in this tick but
// lost orders or triggers to a liquidation gets a BookTick of its own
// (nothing traded, no new orders, its last price), in book order. Events of
// no range follow the last range, in their order: the transfers, then the
// EventTriggerFired events (a fired trigger's order enters its book with
// its EventPlaced, in the range of the tick it lands in).
//
// Only ticks with late events pay: a counting sort of the late events by
// book, and one copy of the events from the first book concerned on.
// REQUIRES: Events[:booksEnd] are the ranges of out.Books, in order, and
// Events[booksEnd:lateStart] the transfers.
func (e *Engine) groupLate(out *TickResult, booksEnd, lateStart int) {
	tk := &e.tk
	nb := len(e.books)
	if cap(tk.lateN) < nb+1 {
		tk.lateN = make([]int32, nb+1, 2*nb+1)
	}
	counts := tk.lateN[:nb+1] // index nb: the fired triggers, after every range
	clear(counts)
	late := out.Events[lateStart:]
	tk.lateBook = tk.lateBook[:0]
	for i := range late {
		bi := int32(nb)
		if late[i].Kind != EventTriggerFired {
			j, ok := e.findBook(late[i].Book)
			if !ok {
				panic("BUG: a late event of no book")
			}
			bi = int32(j)
		}
		tk.lateBook = append(tk.lateBook, bi)
		counts[bi]++
	}
	first := int32(nb) // the first book with late events
	at := int32(0)     // counts become each book's start in tk.late
	for bi := range counts {
		n := counts[bi]
		if n > 0 && int32(bi) < first {
			first = int32(bi)
		}
		counts[bi] = at
		at += n
	}
	tk.late = slices.Grow(tk.late[:0], len(late))[:len(late)]
	for i := range late {
		bi := tk.lateBook[i]
		tk.late[counts[bi]] = late[i]
		counts[bi]++
	}
	// Now counts[bi] is the end of book bi's late events in tk.late.
	k := len(out.Books)
	for j := 0; j < len(out.Books) && first < int32(nb); j++ {
		if bytes.Compare(out.Books[j].Book[:], e.books[first].cfg.ID[:]) >= 0 {
			k = j
			break
		}
	}
	start := booksEnd
	if k < len(out.Books) {
		start = out.Books[k].FirstEvent
	}
	tk.moved = append(tk.moved[:0], out.Events[start:lateStart]...)
	tk.books = append(tk.books[:0], out.Books[k:]...)
	out.Events, out.Books = out.Events[:start], out.Books[:k]
	j, from := 0, int32(0)
	if first > 0 {
		from = counts[first-1]
	}
	for bi := int(first); bi < nb; bi++ {
		b, end := e.books[bi], counts[bi]
		ran := j < len(tk.books) && tk.books[j].Book == b.cfg.ID
		if !ran && end == from {
			continue
		}
		bt := BookTick{Book: b.cfg.ID, HasPrice: b.hasPrice}
		if ran {
			bt = tk.books[j]
			j++
			mine := tk.moved[bt.FirstEvent-start : bt.EndEvent-start]
			bt.FirstEvent = len(out.Events)
			out.Events = append(out.Events, mine...)
		} else {
			bt.FirstEvent = len(out.Events)
			if b.hasPrice {
				b.u.priceWei(&bt.Price, b.priceHalf)
			}
		}
		out.Events = append(out.Events, tk.late[from:end]...)
		from = end
		bt.EndEvent = len(out.Events)
		out.Books = append(out.Books, bt)
	}
	if j != len(tk.books) {
		panic("BUG: a BookTick out of book order")
	}
	out.Events = append(out.Events, tk.moved[booksEnd-start:]...)
	out.Events = append(out.Events, tk.late[from:]...)
}

// runBook runs one book's tick: drain, expire, match, IOC.
func (e *Engine) runBook(b *book, tickUs int64, acc Accounts, out *TickResult) {
	b.lastTickUs = tickUs
	bt := BookTick{Book: b.cfg.ID, FirstEvent: len(out.Events)}
	bt.NewOrders = e.drain(b, tickUs, acc, out)
	e.queueNew(b)
	e.expire(b, tickUs, acc, out)
	if b.perp != nil {
		e.clipReduceOnly(b, acc, out)
	}
	e.match(b, tickUs, acc, out, &bt)
	ioc := b.tickIOC
	for i, r := range ioc {
		// Most of an idle book's new orders are IOC remainders: fetch
		// their nodes, then the orders still live, then their index lines.
		if j := i + 3*prefetchDist; j < len(ioc) {
			b.prefetchSlot(ioc[j].slot(), 0)
		}
		if j := i + 2*prefetchDist; j < len(ioc) {
			if s := b.deref(ioc[j]); s != 0 {
				b.prefetchSlot(s, orderHotSize)
			}
		}
		if j := i + prefetchDist; j < len(ioc) {
			if s := b.deref(ioc[j]); s != 0 {
				b.prefetchRemoval(s)
			}
		}
		if s := b.deref(r); s != 0 {
			e.removeOrder(b, s, EventCancel, acc, out)
		}
	}
	b.tickIOC = ioc[:0]
	bt.HasPrice = b.hasPrice
	if b.hasPrice {
		b.u.priceWei(&bt.Price, b.priceHalf)
	}
	bt.EndEvent = len(out.Events)
	out.Books = append(out.Books, bt)
}

// eventAhead is how many events ahead of the one it writes event
// prefetches the tick's event buffer.
const eventAhead = 4

// event appends an event for the order at slot s, with its running totals.
func (b *book) event(out *TickResult, s uint32, kind EventKind, terminal bool) *Event {
	o := &b.ords[s]
	// Zeroed and filled in place: the composite literal was built on the
	// stack and then copied, twice the stores of an Event (472 bytes).
	out.Events = append(out.Events, Event{})
	if k := len(out.Events) + eventAhead; k < cap(out.Events) {
		// the buffer is written once per tick, from cold: fetch ahead
		prefetch(unsafe.Pointer(&out.Events[:k+1][k]), unsafe.Sizeof(Event{}))
	}
	ev := &out.Events[len(out.Events)-1]
	ev.Kind, ev.Book, ev.OrderID, ev.Owner, ev.Side = kind, b.cfg.ID, o.id, o.owner, b.nodes[s].side
	if kind != EventPlaced { // an order enters its book unfilled: its totals are zero
		ev.TotalBase, ev.TotalQuote, ev.TotalFee = o.filledBase, o.filledQuote, o.fee
	}
	ev.Terminal = terminal
	return ev
}

// removeOrder takes a live order out of its book for good: event, unlink,
// unlock what it still reserves, free its slot.
func (e *Engine) removeOrder(b *book, s uint32, kind EventKind, acc Accounts, out *TickResult) {
	b.event(out, s, kind, true)
	e.discard(b, s, acc)
}

// discard frees a live order's slot, unlocking its reservation.
func (e *Engine) discard(b *book, s uint32, acc Accounts) {
	n, o := &b.nodes[s], &b.ords[s]
	if n.state == stateResting {
		b.unlink(s)
	}
	if b.perp != nil { // exposedLots reads a line of the cold half a spot book need not touch
		e.expose(b, s, -b.exposedLots(s))
	}
	b.countLive(s, -1)
	if !o.reserved.IsZero() {
		acc.Unlock(b.u.backing(n.side), o.owner, &o.reserved)
	}
	b.release(s)
}

// drain applies the pending ring in admission order; it returns how many
// orders entered the book.
func (e *Engine) drain(b *book, tickUs int64, acc Accounts, out *TickResult) int {
	placed := 0
	lastSeq := uint64(math.MaxUint64)
	for b.pending.len() > 0 {
		if b.pending.len() > prefetchDist {
			end := orderHotSize
			if q := b.pending.at(prefetchDist); q.submits() {
				end = orderHeadSize
			}
			b.prefetchSlot(b.pending.at(prefetchDist).ref.slot(), end)
		}
		p := b.pending.pop()
		if p.seq != lastSeq && p.kind != intentFired { // a fired trigger's order has no transaction
			e.tk.landed = append(e.tk.landed, landedTag{p.seq, p.tag})
			lastSeq = p.seq
		}
		late := p.deadlineUs < uint64(tickUs)
		if p.kind >= IntentSubmitTrigger && p.kind <= IntentUpdateTrigger {
			e.drainTrigger(b, p, tickUs, late, acc, out)
			continue
		}
		s := b.deref(p.ref)
		switch {
		case s == 0: // the order left the book before this intent's turn
		case p.submits() && late:
			e.removeOrder(b, s, EventExpire, acc, out)
		case p.submits():
			e.place(b, s, p.ref, tickUs, out)
			placed++
		case p.kind == IntentCancel && !late:
			e.removeOrder(b, s, EventCancel, acc, out)
		case p.kind == IntentUpdate:
			e.drainUpdate(b, s, p, tickUs, late, acc, out)
		}
		if p.kind == IntentUpdate {
			b.updates--
		}
	}
	return placed
}

// place moves a pending order into this tick's new orders.
func (e *Engine) place(b *book, s uint32, r orderRef, tickUs int64, out *TickResult) {
	n, o := &b.nodes[s], &b.ords[s]
	n.state, n.queueTick, o.admitTickUs = stateNew, tickUs, tickUs
	if o.ttlUs > 0 {
		o.expiresUs = tickUs + int64(min(o.ttlUs, uint64(math.MaxInt64-tickUs)))
		b.expiryPush(s)
	}
	b.event(out, s, EventPlaced, false)
	if n.typ == Market || n.flags&FlagIOC != 0 {
		b.tickIOC = append(b.tickIOC, r)
	}
	e.tk.sorted = append(e.tk.sorted, newEntry{idKey(&o.id), s})
}

// drainUpdate applies (or, late, drops) an update. Repricing or growing a
// resting order re-queues it as new in this tick; shrinking keeps its place.
// The drain of an order's last pending update reconciles its ledger lock
// with the reservation of the order as it now is: a no-op unless an update
// was dropped.
func (e *Engine) drainUpdate(b *book, s uint32, p *pendingIntent, tickUs int64, late bool, acc Accounts, out *TickResult) {
	n, o := &b.nodes[s], &b.ords[s]
	exposed := b.exposedLots(s)
	o.pendingUpdates--
	if !late {
		if n.state == stateResting {
			if p.newSteps != n.priceSteps || p.newLots > n.remLots {
				b.unlink(s)
				n.state, n.queueTick = stateNew, tickUs
				e.tk.sorted = append(e.tk.sorted, newEntry{idKey(&o.id), s})
			} else {
				li, _ := b.findLevel(n.side, n.priceSteps)
				b.sides[n.side][li].vol.sub(n.remLots - p.newLots)
			}
		}
		n.remLots, n.priceSteps = p.newLots, p.newSteps
		b.u.baseOf(&o.sizeBase, p.newLots)
		o.sizeBase.Add(&o.sizeBase, &o.filledBase)
		o.settled = p.reserve
		b.event(out, s, EventUpdate, false)
	}
	e.expose(b, s, b.exposedLots(s)-exposed) // moves only when a dropped update was the last
	if o.pendingUpdates == 0 && o.reserved != o.settled {
		e.reconcile(b, s, acc, out)
	}
}

// reconcile moves the order's lock to its settled reservation; when the
// owner no longer has the cash to restore a dropped shrink's release, the
// order is cancelled instead.
func (e *Engine) reconcile(b *book, s uint32, acc Accounts, out *TickResult) {
	n, o := &b.nodes[s], &b.ords[s]
	token := b.u.backing(n.side)
	d := &e.tmp[0]
	if o.settled.Lt(&o.reserved) {
		d.Sub(&o.reserved, &o.settled)
		acc.Unlock(token, o.owner, d)
		o.reserved = o.settled
		return
	}
	d.Sub(&o.settled, &o.reserved)
	if avail := acc.Available(token, o.owner); avail.Lt(d) {
		e.removeOrder(b, s, EventCancel, acc, out)
		return
	}
	acc.Lock(token, o.owner, d)
	o.reserved = o.settled
}

// queueNew enqueues this tick's new orders: limit orders at the back of
// their level by ascending id, market orders at the front (ahead of limit
// orders at their cap), also by ascending id. The drain listed them in
// e.tk.sorted as it placed or re-queued them, while their ids were cached;
// an order may be listed twice (enqueue makes it resting, so its second
// entry is skipped), or have left the book since (its slot is free).
func (e *Engine) queueNew(b *book) {
	sorted := e.tk.sortNew(b, e.tk.sorted)
	for i, ne := range sorted {
		if j := i + prefetchDist; j < len(sorted) { // id order is slot order shuffled
			b.prefetchSlot(sorted[j].slot, 0)
		}
		if n := &b.nodes[ne.slot]; n.state == stateNew && n.typ == Limit {
			b.enqueue(ne.slot, false)
		}
	}
	for i := len(sorted) - 1; i >= 0; i-- {
		if n := &b.nodes[sorted[i].slot]; n.state == stateNew && n.typ == Market {
			b.enqueue(sorted[i].slot, true)
		}
	}
	e.tk.sorted = sorted[:0]
}

// radixSortMin is the count of new orders from which sortNew sorts by
// radix: below it a comparison sort is cheaper than the radix passes.
const radixSortMin = 256

// radixBits is the digit of sortNew's radix passes: 6 passes cover a
// 64-bit key, each with a count table of 2^11 entries (8 KiB, in L1).
const radixBits = 11

// sortNew sorts this tick's new orders by id, ascending: by the key (the
// id's first 8 bytes), then, for equal keys, by the whole id. With many
// orders it is an LSD radix sort of the keys (stable, into t.radix and
// back), then an insertion sort of each run of equal keys (the keys are
// keccak bytes: such runs are rare). slices.SortFunc on 10 000 keys was
// about 5 % of BenchmarkTick; the radix passes cost about a fifth of that.
func (t *tickScratch) sortNew(b *book, sorted []newEntry) []newEntry {
	cmpID := func(x, y newEntry) int {
		switch {
		case x.key < y.key:
			return -1
		case x.key > y.key:
			return 1
		}
		return bytes.Compare(b.ords[x.slot].id[:], b.ords[y.slot].id[:])
	}
	n := len(sorted)
	if n < radixSortMin {
		slices.SortFunc(sorted, cmpID)
		return sorted
	}
	t.radix = slices.Grow(t.radix[:0], n)[:n]
	src, dst := sorted, t.radix
	var count [1 << radixBits]int32
	for shift := uint(0); shift < 64; shift += radixBits {
		clear(count[:])
		for i := range src {
			count[src[i].key>>shift&(1<<radixBits-1)]++
		}
		at := int32(0)
		for d := range count {
			at, count[d] = at+count[d], at
		}
		for i := range src {
			d := src[i].key >> shift & (1<<radixBits - 1)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &sorted[0] { // an odd number of passes ended in t.radix
		copy(sorted, src)
	}
	for i := 1; i < n; i++ {
		if sorted[i].key == sorted[i-1].key { // rare: insertion sort the run by whole id
			for j := i; j > 0 && cmpID(sorted[j-1], sorted[j]) > 0; j-- {
				sorted[j-1], sorted[j] = sorted[j], sorted[j-1]
			}
		}
	}
	return sorted
}

// runTransfers settles (or, late, drops) every pending transfer.
func (e *Engine) runTransfers(tickUs int64, acc Accounts, out *TickResult) {
	e.transferLastUs = tickUs
	lastSeq := uint64(math.MaxUint64)
	for e.transfers.len() > 0 {
		t := e.transfers.pop()
		if t.seq != lastSeq {
			e.tk.landed = append(e.tk.landed, landedTag{t.seq, t.tag})
			lastSeq = t.seq
		}
		if t.deadlineUs < uint64(tickUs) {
			acc.Unlock(t.token, t.owner, &t.amount)
			continue
		}
		acc.SpendLocked(t.token, t.owner, &t.amount)
		acc.Credit(t.token, t.to, &t.amount)
		out.Events = append(out.Events, Event{Kind: EventTransfer, Owner: t.owner, Token: t.token, To: t.to, Amount: t.amount})
	}
}

// finishLanded reports each envelope that landed once, in admission order.
func (e *Engine) finishLanded(out *TickResult) {
	l := e.tk.landed
	if !slices.IsSortedFunc(l, cmpLanded) {
		slices.SortFunc(l, cmpLanded)
	}
	for i := range l {
		if i == 0 || l[i].seq != l[i-1].seq {
			out.Landed = append(out.Landed, l[i].tag)
		}
	}
}

func cmpLanded(x, y landedTag) int {
	switch {
	case x.seq < y.seq:
		return -1
	case x.seq > y.seq:
		return 1
	}
	return 0
}
