package node

import "sync"

// queue is a FIFO handed from one goroutine to another. Bounding is done by
// the node's inflight count, not here.
type queue[T any] struct {
	mu     sync.Mutex
	cond   sync.Cond
	items  []T
	closed bool
}

func newQueue[T any]() *queue[T] {
	q := &queue[T]{}
	q.cond.L = &q.mu
	return q
}

// push appends item unless the queue is closed, and reports whether it did:
// a closed queue's consumer may be gone.
func (q *queue[T]) push(item T) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, item)
	q.mu.Unlock()
	q.cond.Signal()
	return true
}

// take waits for items and moves up to max of them into dst. It returns dst
// empty only once the queue is closed and drained.
func (q *queue[T]) take(dst []T, max int) []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.cond.Wait()
	}
	n := min(len(q.items), max)
	dst = append(dst, q.items[:n]...)
	rest := copy(q.items, q.items[n:])
	clear(q.items[rest:]) // drop references for the collector
	q.items = q.items[:rest]
	return dst
}

func (q *queue[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}
