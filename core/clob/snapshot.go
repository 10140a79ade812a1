package clob

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/binread"
)

// snapshotMagic starts an engine snapshot; the layout is in doc.go. Bump
// it when the layout or the meaning of a stored value changes: LoadEngine
// refuses any other, and the node then replays its intent log instead.
// CLOB2: trigger types follow the live ABI (0 take-profit, 1 stop-loss;
// CLOB1 stored them swapped), grouping is None or Asset (CLOB1: a group
// number), and an order records whether an Asset trigger fired it.
const snapshotMagic = "CLOB2"

// AppendSnapshot appends the canonical encoding of the engine's state: the
// bytes depend only on the state (books by id, levels best first, orders in
// queue order, pending intents in admission order), never on arena slots or
// map order.
// REQUIRES: not called from inside Tick (between ticks no order is "new").
func (e *Engine) AppendSnapshot(dst []byte) []byte {
	if e.stg.on || e.ct.begun {
		panic("BUG: a snapshot while admissions are staged")
	}
	dst = append(dst, snapshotMagic...)
	dst = binary.BigEndian.AppendUint64(dst, e.seq)
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.transferLastUs))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(e.books)))
	for _, b := range e.books {
		dst = b.appendSnapshot(dst)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(e.transfers.len()))
	for i := range e.transfers.len() {
		t := e.transfers.at(i)
		dst = append(dst, t.owner[:]...)
		dst = append(dst, t.token[:]...)
		dst = append(dst, t.to[:]...)
		dst = binread.AppendU256(dst, &t.amount)
		dst = binary.BigEndian.AppendUint64(dst, t.deadlineUs)
		dst = binary.BigEndian.AppendUint64(dst, uint64(t.landUs))
		dst = binary.BigEndian.AppendUint64(dst, t.seq)
		dst = binary.BigEndian.AppendUint64(dst, t.tag)
	}
	dst = e.appendPerp(dst)
	return e.appendTriggers(dst)
}

func (b *book) appendSnapshot(dst []byte) []byte {
	c := &b.cfg
	dst = append(dst, c.ID[:]...)
	dst = append(dst, byte(c.Kind))
	dst = append(dst, c.Base[:]...)
	dst = append(dst, c.Quote[:]...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.IntervalUs))
	for _, v := range [...]*uint256.Int{&c.TickPrecision, &c.LotSize, &c.MakerFee, &c.TakerFee} {
		dst = binread.AppendU256(dst, v)
	}
	for _, s := range [...]string{c.Name, c.BaseSymbol, c.QuoteSymbol} {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
		dst = append(dst, s...)
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.lastTickUs))
	dst = appendBool(dst, b.hasPrice)
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.priceHalf))
	for _, side := range [2]Side{Buy, Sell} {
		lv := b.sides[side]
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(lv)))
		for i := len(lv) - 1; i >= 0; i-- {
			dst = binary.BigEndian.AppendUint64(dst, uint64(lv[i].priceSteps))
			dst = binary.BigEndian.AppendUint32(dst, uint32(lv[i].count))
			for s := lv[i].head; s != 0; s = b.nodes[s].next {
				dst = b.appendOrder(dst, s)
			}
		}
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.pending.len()))
	for i := range b.pending.len() {
		dst = b.appendPending(dst, b.pending.at(i))
	}
	return dst
}

func (b *book) appendPending(dst []byte, p *pendingIntent) []byte {
	dst = append(dst, byte(p.kind))
	dst = binary.BigEndian.AppendUint64(dst, p.seq)
	dst = binary.BigEndian.AppendUint64(dst, p.tag)
	dst = binary.BigEndian.AppendUint64(dst, p.deadlineUs)
	dst = binary.BigEndian.AppendUint64(dst, uint64(p.landUs))
	if p.kind >= IntentSubmitTrigger && p.kind <= IntentUpdateTrigger {
		return b.appendPendingTrigger(dst, p)
	}
	s := b.deref(p.ref)
	switch {
	case p.submits():
		return b.appendOrder(dst, s)
	case s == 0:
		var zero Hash
		dst = append(dst, zero[:]...)
	default:
		dst = append(dst, b.ords[s].id[:]...)
	}
	if p.kind == IntentUpdate {
		dst = binary.BigEndian.AppendUint64(dst, uint64(p.newLots))
		dst = binary.BigEndian.AppendUint64(dst, uint64(p.newSteps))
		dst = binread.AppendU256(dst, &p.reserve)
	}
	return dst
}

func (b *book) appendOrder(dst []byte, s uint32) []byte {
	n, o := &b.nodes[s], &b.ords[s]
	dst = append(dst, o.id[:]...)
	dst = append(dst, o.owner[:]...)
	dst = append(dst, byte(n.side), byte(n.typ), n.flags, n.state)
	dst = appendBool(dst, o.assetBound)
	for _, v := range [...]int64{n.priceSteps, n.remLots, n.queueTick, o.admitTickUs, o.expiresUs} {
		dst = binary.BigEndian.AppendUint64(dst, uint64(v))
	}
	dst = binary.BigEndian.AppendUint64(dst, o.deadlineUs)
	dst = binary.BigEndian.AppendUint64(dst, o.ttlUs)
	dst = binary.BigEndian.AppendUint32(dst, o.pendingUpdates)
	var settled uint256.Int // meaningful only while updates are pending
	if o.pendingUpdates > 0 {
		settled = o.settled
	}
	for _, v := range [...]*uint256.Int{&o.reserved, &settled, &o.sizeBase, &o.filledBase, &o.filledQuote, &o.fee} {
		dst = binread.AppendU256(dst, v)
	}
	return dst
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// VisitLocks calls fn with every amount the engine holds locked in the
// ledger — each live order's reservation, in the token backing its side,
// then each pending transfer's amount — in snapshot order. By the
// invariant in doc.go these add up, per (token, owner), to the ledger's
// locked amounts; a loader checks that from both sides. amount is valid
// only during the call. Cold path.
// REQUIRES: not called from inside Tick.
func (e *Engine) VisitLocks(fn func(token, owner Address, amount *uint256.Int)) {
	for _, b := range e.books {
		for _, side := range [2]Side{Buy, Sell} {
			lv := b.sides[side]
			for i := len(lv) - 1; i >= 0; i-- {
				for s := lv[i].head; s != 0; s = b.nodes[s].next {
					fn(b.u.backing(side), b.ords[s].owner, &b.ords[s].reserved)
				}
			}
		}
		for i := range b.pending.len() {
			p := b.pending.at(i)
			if s := b.deref(p.ref); s != 0 && p.submits() {
				fn(b.u.backing(b.nodes[s].side), b.ords[s].owner, &b.ords[s].reserved)
			}
		}
	}
	for i := range e.transfers.len() {
		t := e.transfers.at(i)
		fn(t.token, t.owner, &t.amount)
	}
}

// LoadEngine rebuilds an engine from the snapshot AppendSnapshot wrote at
// the start of snap, and returns the bytes after it (a caller that expects
// none must check that rest is empty). The Limits are not part of the
// snapshot: they are taken as NewEngine takes them.
//
// The loaded engine behaves exactly like the one that wrote the snapshot:
// the same inputs give the same reasons, events and snapshots. Arena slots,
// generations, the free list, the id index, the expiry queue and the level
// links are rebuilt (the snapshot holds none of them); everything else is
// read as written.
//
// snap comes from disk and may be corrupt, so LoadEngine never panics on
// it. It refuses, with an error naming the byte offset, every input that is
// not what AppendSnapshot writes for a state the engine can be in between
// ticks, as far as the engine relies on it: truncation, a wrong magic,
// counts over the Limits, unknown sides, types, flags and intent kinds,
// books or levels out of order, empty levels, an order whose level, state,
// price or size cannot be, duplicate or unknown order ids, update counts
// that disagree with the pending rings, intents out of admission order, and
// bytes AppendSnapshot always writes as zero. Hence whatever loads
// re-encodes to the same bytes. It does not check money: the ledger does
// (VisitLocks). snap is not retained.
//
// REQUIRES: l as for NewEngine, which panics on bad Limits.
func LoadEngine(l Limits, snap []byte) (e *Engine, rest []byte, err error) {
	e = NewEngine(l)
	r := snapReader{binread.Reader{B: snap}}
	if m := r.Take(len(snapshotMagic)); r.Err == nil && string(m) != snapshotMagic {
		r.Fail("magic %q, want %q", m, snapshotMagic)
	}
	e.seq = r.U64()
	e.transferLastUs = r.tickUs("transfer", TransferIntervalUs)
	nBooks := r.count("books", MarketsMax)
	for i := 0; i < nBooks && r.Err == nil; i++ {
		b := e.loadBook(&r)
		if r.Err == nil && i > 0 && bytes.Compare(e.books[i-1].cfg.ID[:], b.cfg.ID[:]) >= 0 {
			r.Fail("book %x after book %x", b.cfg.ID, e.books[i-1].cfg.ID)
		}
		e.books = append(e.books, b)
	}
	e.loadTransfers(&r)
	e.loadPerp(&r)
	e.loadTriggers(&r)
	if r.Err != nil {
		return nil, nil, fmt.Errorf("cannot load engine snapshot: %w", r.Err)
	}
	return e, snap[r.Off:], nil
}

// loadTransfers reads the transfer ring.
func (e *Engine) loadTransfers(r *snapReader) {
	n := r.count("pending transfers", len(e.transfers.buf))
	lastSeq := uint64(0)
	for i := 0; i < n && r.Err == nil; i++ {
		var t pendingTransfer
		t.owner, t.token, t.to = r.addr(), r.addr(), r.addr()
		r.U256(&t.amount)
		t.deadlineUs = r.U64()
		t.landUs = int64(r.U64())
		t.seq, t.tag = r.U64(), r.U64()
		r.admissionOrder(t.seq, &lastSeq, e.seq)
		if r.Err == nil {
			e.transfers.push(&t)
		}
	}
}

// loadBook reads one book: its market, its tick state, its sides and its
// pending ring.
func (e *Engine) loadBook(r *snapReader) *book {
	var cfg MarketConfig
	cfg.ID = r.hash()
	cfg.Kind = MarketKind(r.U8())
	cfg.Base, cfg.Quote = r.addr(), r.addr()
	cfg.IntervalUs = int64(r.U64())
	for _, v := range [...]*uint256.Int{&cfg.TickPrecision, &cfg.LotSize, &cfg.MakerFee, &cfg.TakerFee} {
		r.U256(v)
	}
	cfg.Name, cfg.BaseSymbol, cfg.QuoteSymbol = r.str(), r.str(), r.str()
	if r.Err != nil {
		return nil
	}
	u, err := marketUnits(&cfg)
	if err != nil {
		r.Fail("market %x: %v", cfg.ID, err)
		return nil
	}
	b := newBook(&cfg, &u, &e.limits)
	b.lastTickUs = r.tickUs("book", cfg.IntervalUs)
	b.hasPrice = r.boolean()
	b.priceHalf = int64(r.U64())
	if r.Err == nil && (b.hasPrice && (b.priceHalf < 1 || b.priceHalf > 2*unitsMax) || !b.hasPrice && b.priceHalf != 0) {
		r.Fail("last price %d half-steps (has price: %v)", b.priceHalf, b.hasPrice)
	}
	b.loadSide(r, Buy)
	b.loadSide(r, Sell)
	updates := b.loadPending(r, e.seq)
	// Invariant: a fresh arena hands out slots 1, 2, ... so the live
	// orders are exactly slots 1..live().
	for s := 1; s <= b.live() && r.Err == nil; s++ {
		if want := countAt(updates, s); b.ords[s].pendingUpdates != want {
			r.Fail("order %x counts %d pending updates, the ring holds %d", b.ords[s].id, b.ords[s].pendingUpdates, want)
		}
	}
	return b
}

func countAt(counts []uint32, i int) uint32 {
	if i < len(counts) {
		return counts[i]
	}
	return 0
}

// loadSide reads one side's levels, best first, and queues their orders.
func (b *book) loadSide(r *snapReader, side Side) {
	n := r.count("levels", b.ordersMax) // no level is empty
	lv := b.sides[side][:0]
	for i := 0; i < n && r.Err == nil; i++ {
		l := level{priceSteps: int64(r.U64())}
		if r.Err == nil && (l.priceSteps < 1 || l.priceSteps > unitsMax || i > 0 && key(side, l.priceSteps) >= key(side, lv[i-1].priceSteps)) {
			r.Fail("side %d: level at %d steps out of range or out of order", side, l.priceSteps)
		}
		if count := r.count("orders in a level", b.ordersMax); r.Err == nil && count == 0 {
			r.Fail("side %d: empty level at %d steps", side, l.priceSteps)
		} else {
			b.loadLevel(r, side, &l, count)
		}
		lv = append(lv, l)
	}
	slices.Reverse(lv) // best last
	b.sides[side] = lv
}

// loadLevel reads count resting orders into l, in queue order.
func (b *book) loadLevel(r *snapReader, side Side, l *level, count int) {
	for range count {
		s := b.loadOrder(r, stateResting)
		if r.Err != nil {
			return
		}
		n := &b.nodes[s]
		if n.side != side || n.priceSteps != l.priceSteps {
			r.Fail("order %x (side %d, %d steps) in level %d/%d", b.ords[s].id, n.side, n.priceSteps, side, l.priceSteps)
			return
		}
		n.prev = l.tail
		if l.tail == 0 {
			l.head = s
		} else {
			b.nodes[l.tail].next = s
		}
		l.tail = s
		l.count++
		l.vol.add(n.remLots)
		if b.ords[s].expiresUs != 0 {
			b.expiryPush(s)
		}
	}
}

// loadPending reads the pending ring; it returns, by slot, how many pending
// updates name each order.
func (b *book) loadPending(r *snapReader, engineSeq uint64) (updates []uint32) {
	n := r.count("pending intents", len(b.pending.buf))
	lastSeq := uint64(0)
	for i := 0; i < n && r.Err == nil; i++ {
		var p pendingIntent
		p.kind = IntentKind(r.U8())
		p.seq, p.tag, p.deadlineUs = r.U64(), r.U64(), r.U64()
		p.landUs = int64(r.U64())
		r.admissionOrder(p.seq, &lastSeq, engineSeq)
		switch {
		case r.Err != nil:
		case p.kind >= IntentSubmitTrigger && p.kind <= IntentUpdateTrigger && b.perp != nil:
			b.loadPendingTrigger(r, &p)
		case p.submits():
			s := b.loadOrder(r, statePending)
			p.ref = makeRef(s, b.nodes[s].gen)
		case p.kind == IntentCancel:
			p.ref = b.loadTarget(r)
		case p.kind == IntentUpdate:
			b.updates++
			p.ref = b.loadTarget(r)
			p.newLots, p.newSteps = int64(r.U64()), int64(r.U64())
			r.U256(&p.reserve)
			if r.Err == nil && (p.newLots < 1 || p.newLots > unitsMax || p.newSteps < 1 || p.newSteps > unitsMax) {
				r.Fail("update to %d lots at %d steps", p.newLots, p.newSteps)
			}
			if s := int(p.ref.slot()); s != 0 {
				if s >= len(updates) { // the arena grows as orders load
					updates = append(updates, make([]uint32, len(b.nodes)-len(updates))...)
				}
				updates[s]++
			}
		default:
			r.Fail("pending intent kind %d", p.kind)
		}
		if r.Err == nil {
			b.pending.push(&p)
		}
	}
	return updates
}

// loadTarget reads the order a pending cancel or update names: a live
// order, or zero for one that has left the book.
func (b *book) loadTarget(r *snapReader) orderRef {
	id := r.hash()
	if r.Err != nil || id == (Hash{}) {
		return 0
	}
	s := b.index.find(&id, b.ords)
	if s == 0 {
		r.Fail("pending intent names order %x, which is not live", id)
		return 0
	}
	return makeRef(s, b.nodes[s].gen)
}

// loadOrder reads one order into a fresh slot and indexes it. state is
// what its place in the snapshot says it is: resting (in a level) or
// pending (in a submit). It returns the slot, 0 on error.
func (b *book) loadOrder(r *snapReader, state uint8) uint32 {
	var n node
	var o order
	o.id, o.owner = r.hash(), r.addr()
	n.side, n.typ, n.flags, n.state = Side(r.U8()), OrderType(r.U8()), r.U8(), r.U8()
	o.assetBound = r.boolean()
	n.priceSteps, n.remLots, n.queueTick = int64(r.U64()), int64(r.U64()), int64(r.U64())
	o.admitTickUs, o.expiresUs = int64(r.U64()), int64(r.U64())
	o.deadlineUs, o.ttlUs, o.pendingUpdates = r.U64(), r.U64(), r.U32()
	for _, v := range [...]*uint256.Int{&o.reserved, &o.settled, &o.sizeBase, &o.filledBase, &o.filledQuote, &o.fee} {
		r.U256(v)
	}
	if r.Err != nil {
		return 0
	}
	if why := b.orderProblem(&n, &o, state); why != "" {
		r.Fail("order %x: %s", o.id, why)
		return 0
	}
	s := b.alloc().slot()
	n.gen = b.nodes[s].gen
	b.nodes[s], b.ords[s] = n, o
	b.index.insert(&o.id, s, b.ords)
	return s
}

// orderProblem says what is wrong with a decoded order, "" if nothing.
func (b *book) orderProblem(n *node, o *order, state uint8) string {
	switch {
	case o.id == Hash{}:
		return "zero id"
	case b.index.find(&o.id, b.ords) != 0:
		return "id appears twice"
	case b.full():
		return fmt.Sprintf("more than OrdersMax = %d live orders", b.ordersMax)
	case n.side > Sell || n.typ > Market || n.flags&^flagsKnown != 0:
		return fmt.Sprintf("side %d, type %d, flags %#x", n.side, n.typ, n.flags)
	case n.state != state:
		return fmt.Sprintf("state %d where only %d can be", n.state, state)
	case o.assetBound && b.cfg.Kind != Perp:
		return "an Asset trigger's order on a spot book"
	case n.priceSteps < 1 || n.priceSteps > unitsMax || n.remLots < 1 || n.remLots > unitsMax:
		return fmt.Sprintf("%d lots at %d steps", n.remLots, n.priceSteps)
	case o.pendingUpdates == 0 && !o.settled.IsZero():
		return "settled reservation without pending updates"
	case state == stateResting && (n.typ != Limit || n.flags&FlagIOC != 0):
		return "a market or IOC order rests between ticks"
	case state == statePending && (n.queueTick != 0 || o.admitTickUs != 0 || o.expiresUs != 0):
		return "a pending order has tick times"
	}
	return ""
}

// snapReader is the shared snapshot reader with this package's field
// types.
type snapReader struct{ binread.Reader }

func (r *snapReader) hash() (h Hash) {
	copy(h[:], r.Take(len(h)))
	return h
}

func (r *snapReader) addr() (a Address) {
	copy(a[:], r.Take(len(a)))
	return a
}

func (r *snapReader) boolean() bool {
	v := r.U8()
	if v > 1 {
		r.Fail("bool byte %d", v)
	}
	return v == 1
}

func (r *snapReader) str() string {
	n := r.U32()
	if uint64(n) > uint64(r.Left()) {
		r.Fail("string of %d bytes, %d left", n, r.Left())
		return ""
	}
	return string(r.Take(int(n)))
}

// count reads a u32 count of at most max what.
func (r *snapReader) count(what string, max int) int {
	n := r.U32()
	if uint64(n) > uint64(max) {
		r.Fail("%d %s, at most %d", n, what, max)
		return 0
	}
	return int(n)
}

// tickUs reads the time of a last tick: on the grid of intervalUs, ≥ 0.
func (r *snapReader) tickUs(what string, intervalUs int64) int64 {
	t := int64(r.U64())
	if r.Err == nil && (t < 0 || t%intervalUs != 0) {
		r.Fail("%s tick at %dµs, off the %dµs grid", what, t, intervalUs)
	}
	return t
}

// admissionOrder checks that a ring's intents come in admission order,
// from envelopes the engine has counted.
func (r *snapReader) admissionOrder(seq uint64, last *uint64, engineSeq uint64) {
	if r.Err == nil && (seq < *last || seq >= engineSeq) {
		r.Fail("envelope %d after %d (engine counted %d)", seq, *last, engineSeq)
	}
	*last = seq
}
