// Package binread reads the node's binary encodings (core's, clob's and the
// market-data index's snapshots, persist's records, the stored ticks):
// big-endian fields, front to back. The first failure is kept in Err and
// every read after it returns zero, so decoders test Err once per record
// rather than after every field. It never panics on short or bad input.
//
// It also holds the one writer of each binary u256 form (AppendU256, the
// fixed 32 bytes; AppendU256Compact, length-prefixed), next to its reader,
// so the encoders cannot drift from the decoders.
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

// AppendU256 appends v as 32 big-endian bytes, the fixed form of the
// snapshots; U256 reads it. Four word appends rather than Bytes32: no
// temporary array (the market-data snapshot encoded about twice as fast).
func AppendU256(dst []byte, v *uint256.Int) []byte {
	dst = binary.BigEndian.AppendUint64(dst, v[3])
	dst = binary.BigEndian.AppendUint64(dst, v[2])
	dst = binary.BigEndian.AppendUint64(dst, v[1])
	return binary.BigEndian.AppendUint64(dst, v[0])
}

// U256 reads a 32-byte big-endian integer into dst (left as is after a
// failure).
func (r *Reader) U256(dst *uint256.Int) {
	if p := r.Take(32); p != nil {
		dst.SetBytes32(p)
	}
}

// AppendU256Compact appends v as its length (one byte, 0 to 32) and its
// big-endian bytes without leading zeros (zero is the lone byte 0): the
// form of persist's records and the stored ticks, whose amounts are mostly
// far below 2^256 and take a few bytes instead of 32. U256Compact reads it.
func AppendU256Compact(dst []byte, v *uint256.Int) []byte {
	n := (v.BitLen() + 7) / 8
	b := v.Bytes32()
	return append(append(dst, byte(n)), b[32-n:]...)
}

// U256Compact reads AppendU256Compact's form into dst (left as is after a
// failure) and refuses a non-minimal one (a length above 32, a leading
// zero byte), so each value has exactly one encoding.
func (r *Reader) U256Compact(dst *uint256.Int) {
	n := int(r.U8())
	if r.Err != nil {
		return
	}
	if n > 32 {
		r.Fail("a u256 of %d bytes", n)
		return
	}
	p := r.Take(n)
	switch {
	case r.Err != nil:
	case n > 0 && p[0] == 0:
		r.Fail("a u256 with a leading zero byte")
	default:
		dst.SetBytes(p)
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
