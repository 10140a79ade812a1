package clob

import "unsafe"

// ring is a FIFO of fixed power-of-two capacity, indexed with a mask.
// Invariant: n ≤ len(buf); the live items are buf[(head+i)&mask], i < n.
type ring[T any] struct {
	buf  []T
	mask uint64
	head uint64
	n    uint64
}

// newRing returns an empty ring of capacity n.
// REQUIRES: n is a power of two.
func newRing[T any](n int) ring[T] {
	if n <= 0 || n&(n-1) != 0 {
		panic("BUG: ring capacity must be a power of two")
	}
	return ring[T]{buf: make([]T, n), mask: uint64(n - 1)}
}

func (r *ring[T]) len() int    { return int(r.n) }
func (r *ring[T]) at(i int) *T { return &r.buf[(r.head+uint64(i))&r.mask] }

// push appends v and returns a pointer to the stored copy.
// REQUIRES: the ring is not full.
func (r *ring[T]) push(v *T) {
	if r.n == uint64(len(r.buf)) {
		panic("BUG: ring overflow")
	}
	r.buf[(r.head+r.n)&r.mask] = *v
	r.n++
	// A ring is written once per lap, long after its last lap: fetch the
	// slot a few pushes ahead.
	prefetch(unsafe.Pointer(&r.buf[(r.head+r.n+4)&r.mask]), unsafe.Sizeof(*v))
}

// pop removes the oldest item; the returned pointer is valid until the
// next push.
// REQUIRES: len() > 0.
func (r *ring[T]) pop() *T {
	if r.n == 0 {
		panic("BUG: ring underflow")
	}
	p := &r.buf[r.head&r.mask]
	r.head++
	r.n--
	return p
}
