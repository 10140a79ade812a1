package clob

// expiryQueue holds the expiries of a book's placed orders with a ttl, by
// expiresUs. Removal is lazy: an order that leaves the book before its
// expiry leaves its entry behind, stale (its ref no longer derefs), and
// costs nothing when it leaves. The old min-heap on (expiresUs, id) with
// each order's heap position paid O(log n) random arena lines per removal,
// most of a market maker's tick. Entries are small and hold their key, so
// ordering them never touches the arena either.
//
// Almost every order is pushed with an expiry no earlier than the one
// pushed before it (tickUs only grows and ttls repeat), so such pushes go
// to run, a FIFO sorted by construction; only the others go to a min-heap.
// The earliest entry is at the head of one of the two.
//
// The queue orders entries by expiresUs alone: the orders of one
// expiresUs are sorted by id when they expire (Engine.expire), which gives
// the same (expiresUs, id) order the heap gave.
//
// Invariants: every placed order with an expiry has exactly one entry,
// with its expiresUs; between ticks the earliest entry is live (prune);
// after a push, at most 2 × live() + expiryCompactMin entries, stale ones
// included: the queue's memory follows the book's high-water mark.
type expiryQueue struct {
	run  []expiryEntry // run[head:] nondecreasing in us
	head int
	heap []expiryEntry // min-heap on us
}

type expiryEntry struct {
	us  int64 // the order's expiresUs
	ref orderRef
}

// expiryCompactMin is the slack of stale entries a book keeps before push
// compacts its queue.
const expiryCompactMin = 64

func (q *expiryQueue) len() int { return len(q.run) - q.head + len(q.heap) }

// top returns the earliest entry (live or stale), if any, and whether it
// is the run's (else the heap's).
func (q *expiryQueue) top() (expiryEntry, bool, bool) {
	inRun := q.head < len(q.run)
	switch {
	case inRun && (len(q.heap) == 0 || q.run[q.head].us <= q.heap[0].us):
		return q.run[q.head], true, true
	case len(q.heap) > 0:
		return q.heap[0], false, true
	}
	return expiryEntry{}, false, false
}

// pop removes the earliest entry.
// REQUIRES: len() > 0.
func (q *expiryQueue) pop() expiryEntry {
	x, inRun, _ := q.top()
	if !inRun {
		last := len(q.heap) - 1
		q.heap[0] = q.heap[last]
		q.heap = q.heap[:last]
		q.down(0)
		return x
	}
	q.head++
	if q.head == len(q.run) {
		q.run, q.head = q.run[:0], 0
	} else if 2*q.head >= len(q.run) { // drop the consumed half: O(1) per pop
		q.run = q.run[:copy(q.run, q.run[q.head:])]
		q.head = 0
	}
	return x
}

func (q *expiryQueue) down(i int) {
	h := q.heap
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1].us < h[c].us {
			c++
		}
		if h[i].us <= h[c].us {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

func (q *expiryQueue) up(i int) {
	h := q.heap
	for i > 0 {
		p := (i - 1) / 2
		if h[p].us <= h[i].us {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *expiryQueue) add(x expiryEntry) {
	if n := len(q.run); n == q.head || q.run[n-1].us <= x.us {
		q.run = append(q.run, x)
		return
	}
	q.heap = append(q.heap, x)
	q.up(len(q.heap) - 1)
}

// expiryPush adds the placed order at slot s, whose expiresUs is set, to
// the expiry queue, first dropping the stale entries if they have grown
// beyond the live orders: each compaction keeps at most live() entries
// and comes after at least live() pushes, so it costs O(1) per push.
func (b *book) expiryPush(s uint32) {
	q := &b.expiry
	if q.len() >= 2*b.live()+expiryCompactMin {
		b.expiryCompact()
	}
	q.add(expiryEntry{b.ords[s].expiresUs, makeRef(s, b.nodes[s].gen)})
}

// expiryCompact drops the stale entries, keeping the run's order and
// rebuilding the heap.
func (b *book) expiryCompact() {
	q := &b.expiry
	run := q.run[:0]
	for _, x := range q.run[q.head:] {
		if b.deref(x.ref) != 0 {
			run = append(run, x)
		}
	}
	q.run, q.head = run, 0
	h := q.heap[:0]
	for _, x := range q.heap {
		if b.deref(x.ref) != 0 {
			h = append(h, x)
		}
	}
	q.heap = h
	for i := len(h)/2 - 1; i >= 0; i-- {
		q.down(i)
	}
}

// expiryPrune pops stale entries until the earliest is live, so that
// expiryTop answers for live orders only. Orders leave the book only in
// ticks: Tick prunes every book at its end.
func (b *book) expiryPrune() {
	for {
		x, _, ok := b.expiry.top()
		if !ok || b.deref(x.ref) != 0 {
			return
		}
		b.expiry.pop()
	}
}

// expiryTop returns the earliest expiry, if any.
// REQUIRES: pruned since the last removal of an order.
func (b *book) expiryTop() (int64, bool) {
	x, _, ok := b.expiry.top()
	return x.us, ok
}

// expire removes the orders whose ttl ran out by tickUs, in (expiresUs,
// id) order: the queue yields them by expiresUs, and each run of one
// expiresUs is sorted by id as the tick's new orders are.
func (e *Engine) expire(b *book, tickUs int64, acc Accounts, out *TickResult) {
	for {
		b.expiryPrune()
		us, ok := b.expiryTop()
		if !ok || us > tickUs {
			return
		}
		run := e.tk.sorted[:0]
		for {
			x, _, ok := b.expiry.top()
			if !ok || x.us != us {
				break
			}
			b.expiry.pop()
			if s := b.deref(x.ref); s != 0 {
				run = append(run, newEntry{idKey(&b.ords[s].id), s})
			}
		}
		run = e.tk.sortNew(b, run)
		for i, ne := range run {
			if j := i + prefetchDist; j < len(run) {
				b.prefetchRemoval(run[j].slot)
			}
			e.removeOrder(b, ne.slot, EventExpire, acc, out)
		}
		e.tk.sorted = run[:0]
	}
}
