package clob

import (
	"unsafe"

	"github.com/holiman/uint256"
)

// orderRef is a handle to an order: slot index (low 32 bits) and the slot's
// generation when the handle was taken (high 32 bits). Slot 0 is nil.
type orderRef uint64

func makeRef(slot, gen uint32) orderRef { return orderRef(uint64(gen)<<32 | uint64(slot)) }
func (r orderRef) slot() uint32         { return uint32(r) }
func (r orderRef) gen() uint32          { return uint32(r >> 32) }

// Order states.
const (
	stateFree    uint8 = iota
	statePending       // admitted, waiting in the pending ring
	stateNew           // drained in this tick, not yet queued in a level
	stateResting       // queued in a level
)

// node is the hot part of an order: what the matching walk touches. It is
// padded to one cache line, and order to five: the arenas are large
// allocations, page-aligned, so a slot never straddles a line it does not
// need (a 48-byte node spanned two lines in a quarter of the slots).
type node struct {
	next, prev uint32 // queue neighbours in its level; 0 = none
	gen        uint32
	state      uint8
	side       Side
	typ        OrderType
	flags      uint8
	remLots    int64
	priceSteps int64 // limit, or a market order's cap
	queueTick  int64 // the tick it (re-)entered its level: taker iff == the current tick
	_          [24]byte
}

// order is the cold part of an order: orderHot, the fields a tick touches
// (placing, filling and discarding an order), in four cache lines, then
// orderUpd, what only updates use.
type order struct {
	orderHot
	orderUpd
}

type orderHot struct {
	id    Hash
	owner Address
	// pendingUpdates counts updates admitted and not yet drained. While it
	// is > 0, reserved already holds the last one's target and settled holds
	// the reservation of the order as it actually is; the drain of the last
	// one reconciles the two (see drainUpdate).
	pendingUpdates uint32
	// assetBound marks an order an Asset-grouped trigger fired (perp
	// books): the flat sweep cancels it when its owner's position goes flat.
	assetBound                   bool
	admitTickUs, expiresUs       int64 // expiresUs 0 = never
	ttlUs                        uint64
	deadlineUs                   uint64
	reserved                     uint256.Int // what it still holds locked
	filledBase, filledQuote, fee uint256.Int
	sizeBase                     uint256.Int // filled + remaining, base wei (for OrderInfo)
}

// orderUpd is meaningful only while pendingUpdates > 0: alloc leaves it as
// the slot's last order left it.
type orderUpd struct {
	settled uint256.Int
	// projLots is, while pendingUpdates > 0, the remaining size the last
	// admitted update sets: what a perp order counts in its owner's B or A
	// (docs/perps.md, "Accounts"). Derived from the pending ring on load.
	projLots int64
	_        [24]byte
}

// level is one price of one side: a FIFO of orders linked through node.
type level struct {
	priceSteps int64
	head, tail uint32
	count      int32
	vol        volume
}

// pendingIntent is an admitted book intent waiting for its tick.
type pendingIntent struct {
	kind       IntentKind
	ref        orderRef // submit: the new order; cancel, update: the target
	deadlineUs uint64
	landUs     int64       // landing(admission time)
	seq, tag   uint64      // envelope admission sequence and tag
	newLots    int64       // update: new remaining size
	newSteps   int64       // update: new price
	reserve    uint256.Int // update: the reservation of the updated order
	trigSteps  int64       // updateTrigger: new trigger price (newLots is signed: < 0 = sell)
}

// book is one market's shard: arena, sides, pending ring, expiry queue.
type book struct {
	cfg   MarketConfig
	u     units
	nodes []node  // arena, hot half; nodes[0] unused; grows up to ordersMax+1
	ords  []order // arena, cold half, as long as nodes
	free  []uint32
	index idIndex
	// ordersMax is Limits.OrdersMax: live orders at most.
	ordersMax int
	// Invariant: sides[s] is sorted by key(s, price) ascending, best last,
	// and holds no empty level.
	sides   [2][]level
	pending ring[pendingIntent]
	expiry  expiryQueue
	// tickIOC lists the IOC and market orders placed in this tick, which
	// its end cancels if still live (an update re-queues only resting
	// limit orders, never one of them).
	tickIOC    []orderRef
	lastTickUs int64
	hasPrice   bool
	priceHalf  int64
	perp       *perpBook // Kind == Perp only
	trig       triggers  // Kind == Perp only (trigger.go)
	// updates counts the updates in pending: a book with one does not
	// clear concurrently (stage.go).
	updates int
	frz     bookFacts // what staged admissions read (stage.go)
}

func newBook(cfg *MarketConfig, u *units, l *Limits) *book {
	n := l.OrdersMax
	c := preallocated(n)
	b := &book{
		cfg: *cfg, u: *u, ordersMax: n,
		nodes: make([]node, 1, c+1), ords: make([]order, 1, c+1), free: make([]uint32, 0, c),
		index:   newIDIndex(c),
		pending: newRing[pendingIntent](l.PendingMax),
		tickIOC: make([]orderRef, 0, l.PendingMax),
	}
	b.sides[Buy] = make([]level, 0, c)
	b.sides[Sell] = make([]level, 0, c)
	if cfg.Kind == Perp {
		b.perp = newPerpBook(cfg, u)
		b.trig = newTriggers(n)
	}
	return b
}

// arenaCapMin bounds what a book allocates up front for its orders and
// triggers (arenas, free lists, id index, levels). Beyond it
// they grow by append up to OrdersMax and never shrink: a book's memory
// follows its high-water mark of live orders, not its limit (a dev node's
// four books at OrdersMax = 2^18 would otherwise hold ~400 MB from start,
// and rebuild it on every evm_revert), and once grown nothing allocates.
const arenaCapMin = 1 << 12

// preallocated is the capacity a book starts with for up to ordersMax
// orders or triggers.
func preallocated(ordersMax int) int { return min(ordersMax, arenaCapMin) }

func (b *book) live() int { return len(b.nodes) - 1 - len(b.free) }

// full reports whether the book holds OrdersMax live orders.
func (b *book) full() bool { return b.live() >= b.ordersMax }

// takeSlot takes a slot of an arena kept as two parallel slices (x, y)
// with a free list: the last freed slot first, then the next never-used
// one, which extends both slices. Those are the same slots, in the same
// order, as a free list preloaded with every slot, lowest on top. Growth
// may move the arena: callers take pointers into it only afterwards.
func takeSlot[X, Y any](free *[]uint32, x *[]X, y *[]Y) uint32 {
	if k := len(*free); k > 0 {
		s := (*free)[k-1]
		*free = (*free)[:k-1]
		return s
	}
	var zx X
	var zy Y
	*x, *y = append(*x, zx), append(*y, zy)
	return uint32(len(*x) - 1)
}

// alloc takes a free slot.
// REQUIRES: live() < OrdersMax.
func (b *book) alloc() orderRef {
	s := takeSlot(&b.free, &b.nodes, &b.ords)
	if k := len(b.free); k > 0 {
		b.prefetchSlot(b.free[k-1], orderHotSize) // the next admission's slot, long evicted since its release
	}
	n := &b.nodes[s]
	gen := n.gen
	*n = node{gen: gen}
	b.ords[s].orderHot = orderHot{}
	return makeRef(s, gen)
}

// prefetchDist is how many orders ahead the tick's loops prefetch: far
// enough for a line to arrive from memory while the orders before it are
// worked on, near enough for it to stay in the cache until then.
const prefetchDist = 8

// prefetchSlot prefetches slot s's node and the first end bytes of its
// order (the hot fields come first).
func (b *book) prefetchSlot(s uint32, end uintptr) {
	if int(s) < len(b.nodes) {
		prefetch(unsafe.Pointer(&b.nodes[s]), unsafe.Sizeof(node{}))
		if end > 0 {
			prefetch(unsafe.Pointer(&b.ords[s]), end)
		}
	}
}

// prefetchRemoval prefetches what removing slot s touches beyond its order:
// the index line of its id (the order's first line is already cached by
// the time its id is read here, or the caller's loop had prefetched it).
func (b *book) prefetchRemoval(s uint32) {
	if s != 0 && int(s) < len(b.nodes) {
		b.index.prefetch(&b.ords[s].id)
	}
}

// prefetchSlot's ends: the fields a tick reads and writes, and the first of
// them, what placing and removing an order touch (not the fill totals).
const (
	orderHotSize  = unsafe.Sizeof(orderHot{})
	orderHeadSize = unsafe.Offsetof(orderHot{}.filledBase)
)

// release frees a slot: its handles go stale.
func (b *book) release(s uint32) {
	n := &b.nodes[s]
	b.index.remove(&b.ords[s].id, b.ords)
	n.state = stateFree
	n.gen++
	b.free = append(b.free, s)
}

// deref returns the slot of a handle that still names a live order, or 0.
func (b *book) deref(r orderRef) uint32 {
	s := r.slot()
	if s == 0 || int(s) >= len(b.nodes) {
		return 0
	}
	if n := &b.nodes[s]; n.gen != r.gen() || n.state == stateFree {
		return 0
	}
	return s
}

// key orders a side's levels so that the best price is the largest key.
func key(side Side, priceSteps int64) int64 {
	if side == Buy {
		return priceSteps
	}
	return -priceSteps
}

// findLevel returns the index of the level at priceSteps, or where it
// would be inserted, and whether it exists.
func (b *book) findLevel(side Side, priceSteps int64) (int, bool) {
	lv := b.sides[side]
	k := key(side, priceSteps)
	lo, hi := 0, len(lv)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if key(side, lv[m].priceSteps) < k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(lv) && lv[lo].priceSteps == priceSteps
}

// levelFor returns the index of the level at priceSteps, creating it.
func (b *book) levelFor(side Side, priceSteps int64) int {
	i, ok := b.findLevel(side, priceSteps)
	if !ok {
		lv := append(b.sides[side], level{})
		copy(lv[i+1:], lv[i:])
		lv[i] = level{priceSteps: priceSteps}
		b.sides[side] = lv
	}
	return i
}

// enqueue appends (front = false) or prepends the order at slot s to its
// price level and marks it resting.
func (b *book) enqueue(s uint32, front bool) {
	n := &b.nodes[s]
	li := b.levelFor(n.side, n.priceSteps)
	l := &b.sides[n.side][li]
	n.state, n.next, n.prev = stateResting, 0, 0
	switch {
	case l.head == 0:
		l.head, l.tail = s, s
	case front:
		n.next = l.head
		b.nodes[l.head].prev = s
		l.head = s
	default:
		n.prev = l.tail
		b.nodes[l.tail].next = s
		l.tail = s
	}
	l.count++
	l.vol.add(n.remLots)
}

// unlink removes a resting order from its level, dropping the level when it
// empties.
func (b *book) unlink(s uint32) {
	n := &b.nodes[s]
	li, ok := b.findLevel(n.side, n.priceSteps)
	if !ok {
		panic("BUG: resting order without a level")
	}
	l := &b.sides[n.side][li]
	if n.prev != 0 {
		b.nodes[n.prev].next = n.next
	} else {
		l.head = n.next
	}
	if n.next != 0 {
		b.nodes[n.next].prev = n.prev
	} else {
		l.tail = n.prev
	}
	l.count--
	l.vol.sub(n.remLots)
	n.next, n.prev = 0, 0
	if l.count == 0 {
		lv := b.sides[n.side]
		b.sides[n.side] = append(lv[:li], lv[li+1:]...)
	}
}
