// Package binread reads the node's binary encodings (core's and clob's
// snapshots, persist's records): big-endian fields, front to back. The
// first failure is kept in Err and every read after it returns zero, so
// decoders test Err once per record rather than after every field. It never
// panics on short or bad input.
package binread

import (
	"encoding/binary"
	"fmt"

	"github.com/holiman/uint256"
)

// Reader reads B from Off on; Err is the first failure.
type Reader struct {
	B   []byte
	Off int
	Err error
}

// Fail records a failure at the current offset (the first one stays).
func (r *Reader) Fail(format string, args ...any) {
	if r.Err == nil {
		r.Err = fmt.Errorf("byte %d: %s", r.Off, fmt.Sprintf(format, args...))
	}
}

// Left is the number of bytes not read yet.
func (r *Reader) Left() int { return len(r.B) - r.Off }

// Take returns the next n bytes (aliasing the input), nil after a failure.
func (r *Reader) Take(n int) []byte {
	if r.Err != nil {
		return nil
	}
	if n < 0 || n > r.Left() {
		r.Fail("truncated: %d bytes left, %d needed", r.Left(), n)
		return nil
	}
	p := r.B[r.Off : r.Off+n]
	r.Off += n
	return p
}

// U8 reads one byte.
func (r *Reader) U8() uint8 {
	if p := r.Take(1); p != nil {
		return p[0]
	}
	return 0
}

// U32 reads a big-endian uint32.
func (r *Reader) U32() uint32 {
	if p := r.Take(4); p != nil {
		return binary.BigEndian.Uint32(p)
	}
	return 0
}

// U64 reads a big-endian uint64.
func (r *Reader) U64() uint64 {
	if p := r.Take(8); p != nil {
		return binary.BigEndian.Uint64(p)
	}
	return 0
}

// U256 reads a 32-byte big-endian integer into dst (left as is after a
// failure).
func (r *Reader) U256(dst *uint256.Int) {
	if p := r.Take(32); p != nil {
		dst.SetBytes32(p)
	}
}

// Count reads a u32 count of entries at least sizeMin bytes each and
// refuses one the bytes left cannot hold, so no allocation is sized beyond
// the input.
func (r *Reader) Count(sizeMin int) int {
	n := r.U32()
	if left := r.Left(); uint64(n) > uint64(left/sizeMin) {
		r.Fail("%d entries of ≥ %d bytes: the count exceeds the %d bytes left", n, sizeMin, left)
		return 0
	}
	return int(n)
}
