package clob

import "math/bits"

// divisor divides 128-bit numbers by a fixed 64-bit d with two
// multiplications instead of a hardware division (tens of cycles on the
// CPUs the node runs on, and admission and fills divide by the same few
// numbers: lot size, tick, interval, 1e18). It uses a precomputed
// reciprocal of d shifted left until its top bit is set, as in Möller and
// Granlund, "Improved division by invariant integers" (2011), algorithm 4.
type divisor struct {
	d  uint64 // the divisor
	dn uint64 // d << s: top bit set
	v  uint64 // floor((2^128 − 1) / dn) − 2^64
	s  uint
}

// newDivisor returns the divisor d; d = 0 gives the zero divisor, which
// must not be used.
func newDivisor(d uint64) divisor {
	if d == 0 {
		return divisor{}
	}
	s := uint(bits.LeadingZeros64(d))
	dn := d << s
	// (2^128 − 1) − 2^64·dn = (2^64 − 1 − dn)·2^64 + (2^64 − 1), and
	// 2^64 − 1 − dn < dn since dn ≥ 2^63.
	v, _ := bits.Div64(^dn, ^uint64(0), dn)
	return divisor{d: d, dn: dn, v: v, s: s}
}

// divRem returns the quotient and remainder of hi·2^64 + lo by d.
// REQUIRES: hi < d (the quotient fits 64 bits), d ≠ 0.
func (x *divisor) divRem(hi, lo uint64) (q, r uint64) {
	n1, n0 := hi, lo
	if x.s > 0 {
		n1, n0 = hi<<x.s|lo>>(64-x.s), lo<<x.s
	}
	q1, q0 := bits.Mul64(x.v, n1)
	var c uint64
	q0, c = bits.Add64(q0, n0, 0)
	q1, _ = bits.Add64(q1, n1, c)
	q1++
	r = n0 - q1*x.dn
	if r > q0 {
		q1--
		r += x.dn
	}
	if r >= x.dn {
		q1++
		r -= x.dn
	}
	return q1, r >> x.s
}
