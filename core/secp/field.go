package secp

import "math/bits"

// fe is an element of the base field GF(p), p = 2^256 - 2^32 - 977, held as
// four little-endian 64-bit limbs.
//
// Invariant: every operation returns a "weakly reduced" value: it fits in
// 256 bits but may lie in [p, 2^256). Only normalize, isZero, equal and
// putBytes look at the canonical value.
type fe [4]uint64

// fieldC is 2^256 mod p. Because it has only 33 bits, a 512-bit product folds
// back under 2^256 with one short multiply per limb: this is why the field
// uses a plain (non-Montgomery) representation.
const fieldC = 0x1000003d1

var feP = fe{0xfffffffefffffc2f, 0xffffffffffffffff, 0xffffffffffffffff, 0xffffffffffffffff}

// mulGeneric sets z = x*y.
//
// Operand scanning, one row per limb of x, written out in full: Go does not
// inline a row helper, and the calls cost a third of the multiply; product
// scanning measured 30% slower. No row carry overflows: after row i the
// partial sum is below 2^(64*(i+5)).
func (z *fe) mulGeneric(x, y *fe) *fe {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	y0, y1, y2, y3 := y[0], y[1], y[2], y[3]
	var c, h0, l0, h1, l1, h2, l2, h3, l3 uint64
	var t0, t1, t2, t3, t4, t5, t6, t7 uint64

	h0, t0 = bits.Mul64(x0, y0)
	h1, l1 = bits.Mul64(x0, y1)
	h2, l2 = bits.Mul64(x0, y2)
	h3, l3 = bits.Mul64(x0, y3)
	t1, c = bits.Add64(l1, h0, 0)
	t2, c = bits.Add64(l2, h1, c)
	t3, c = bits.Add64(l3, h2, c)
	t4 = h3 + c

	h0, l0 = bits.Mul64(x1, y0)
	h1, l1 = bits.Mul64(x1, y1)
	h2, l2 = bits.Mul64(x1, y2)
	h3, l3 = bits.Mul64(x1, y3)
	l1, c = bits.Add64(l1, h0, 0)
	l2, c = bits.Add64(l2, h1, c)
	l3, c = bits.Add64(l3, h2, c)
	h3 += c
	t1, c = bits.Add64(t1, l0, 0)
	t2, c = bits.Add64(t2, l1, c)
	t3, c = bits.Add64(t3, l2, c)
	t4, c = bits.Add64(t4, l3, c)
	t5 = h3 + c

	h0, l0 = bits.Mul64(x2, y0)
	h1, l1 = bits.Mul64(x2, y1)
	h2, l2 = bits.Mul64(x2, y2)
	h3, l3 = bits.Mul64(x2, y3)
	l1, c = bits.Add64(l1, h0, 0)
	l2, c = bits.Add64(l2, h1, c)
	l3, c = bits.Add64(l3, h2, c)
	h3 += c
	t2, c = bits.Add64(t2, l0, 0)
	t3, c = bits.Add64(t3, l1, c)
	t4, c = bits.Add64(t4, l2, c)
	t5, c = bits.Add64(t5, l3, c)
	t6 = h3 + c

	h0, l0 = bits.Mul64(x3, y0)
	h1, l1 = bits.Mul64(x3, y1)
	h2, l2 = bits.Mul64(x3, y2)
	h3, l3 = bits.Mul64(x3, y3)
	l1, c = bits.Add64(l1, h0, 0)
	l2, c = bits.Add64(l2, h1, c)
	l3, c = bits.Add64(l3, h2, c)
	h3 += c
	t3, c = bits.Add64(t3, l0, 0)
	t4, c = bits.Add64(t4, l1, c)
	t5, c = bits.Add64(t5, l2, c)
	t6, c = bits.Add64(t6, l3, c)
	t7 = h3 + c

	z.reduce512(t0, t1, t2, t3, t4, t5, t6, t7)
	return z
}

// sqrGeneric sets z = x*x. The six cross products are computed once and doubled,
// so a square costs 10 word multiplies instead of 16.
func (z *fe) sqrGeneric(x *fe) *fe {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	var c uint64

	// Cross products x_i*x_j, i < j, at limb i+j. Their sum is below 2^448.
	t2, t1 := bits.Mul64(x0, x1)
	h, l := bits.Mul64(x0, x2)
	t2, c = bits.Add64(t2, l, 0)
	t3 := h + c
	h, l = bits.Mul64(x0, x3)
	t3, c = bits.Add64(t3, l, 0)
	t4 := h + c
	h0, l0 := bits.Mul64(x1, x2)
	h1, l1 := bits.Mul64(x1, x3)
	l1, c = bits.Add64(l1, h0, 0)
	h1 += c
	t3, c = bits.Add64(t3, l0, 0)
	t4, c = bits.Add64(t4, l1, c)
	t5 := h1 + c
	h, l = bits.Mul64(x2, x3)
	t5, c = bits.Add64(t5, l, 0)
	t6 := h + c

	// Double them.
	t7 := t6 >> 63
	t6 = t6<<1 | t5>>63
	t5 = t5<<1 | t4>>63
	t4 = t4<<1 | t3>>63
	t3 = t3<<1 | t2>>63
	t2 = t2<<1 | t1>>63
	t1 <<= 1

	// Add the squares x_i^2 at limb 2i.
	h, t0 := bits.Mul64(x0, x0)
	t1, c = bits.Add64(t1, h, 0)
	h, l = bits.Mul64(x1, x1)
	t2, c = bits.Add64(t2, l, c)
	t3, c = bits.Add64(t3, h, c)
	h, l = bits.Mul64(x2, x2)
	t4, c = bits.Add64(t4, l, c)
	t5, c = bits.Add64(t5, h, c)
	h, l = bits.Mul64(x3, x3)
	t6, c = bits.Add64(t6, l, c)
	t7, _ = bits.Add64(t7, h, c)

	z.reduce512(t0, t1, t2, t3, t4, t5, t6, t7)
	return z
}

// reduce512 sets z to the 512-bit value t (little-endian limbs) mod p, weakly
// reduced, using 2^256 = fieldC (mod p) twice.
func (z *fe) reduce512(t0, t1, t2, t3, t4, t5, t6, t7 uint64) {
	h0, l0 := bits.Mul64(t4, fieldC)
	h1, l1 := bits.Mul64(t5, fieldC)
	h2, l2 := bits.Mul64(t6, fieldC)
	h3, l3 := bits.Mul64(t7, fieldC)
	var c uint64
	t0, c = bits.Add64(t0, l0, 0)
	t1, c = bits.Add64(t1, l1, c)
	t2, c = bits.Add64(t2, l2, c)
	t3, c = bits.Add64(t3, l3, c)
	t4 = h3 + c
	t1, c = bits.Add64(t1, h0, 0)
	t2, c = bits.Add64(t2, h1, c)
	t3, c = bits.Add64(t3, h2, c)
	t4 += c

	// t4 < 2^34, so t4*fieldC < 2^67.
	h, l := bits.Mul64(t4, fieldC)
	t0, c = bits.Add64(t0, l, 0)
	t1, c = bits.Add64(t1, h, c)
	t2, c = bits.Add64(t2, 0, c)
	t3, c = bits.Add64(t3, 0, c)

	// A final wrap leaves a value below 2^67, so adding fieldC again cannot
	// carry past limb 1.
	t0, c = bits.Add64(t0, fieldC&-c, 0)
	z[0], z[1], z[2], z[3] = t0, t1+c, t2, t3
}

// add sets z = x+y.
func (z *fe) add(x, y *fe) *fe {
	r0, c := bits.Add64(x[0], y[0], 0)
	r1, c := bits.Add64(x[1], y[1], c)
	r2, c := bits.Add64(x[2], y[2], c)
	r3, c := bits.Add64(x[3], y[3], c)
	z.foldCarry(r0, r1, r2, r3, c)
	return z
}

// foldCarry sets z = r + c*2^256 mod p for a carry bit c.
func (z *fe) foldCarry(r0, r1, r2, r3, c uint64) {
	r0, c = bits.Add64(r0, fieldC&-c, 0)
	r1, c = bits.Add64(r1, 0, c)
	r2, c = bits.Add64(r2, 0, c)
	r3, c = bits.Add64(r3, 0, c)
	// A second wrap leaves r below fieldC, so this add cannot carry.
	z[0], z[1], z[2], z[3] = r0+fieldC&-c, r1, r2, r3
}

// sub sets z = x-y.
func (z *fe) sub(x, y *fe) *fe {
	r0, b := bits.Sub64(x[0], y[0], 0)
	r1, b := bits.Sub64(x[1], y[1], b)
	r2, b := bits.Sub64(x[2], y[2], b)
	r3, b := bits.Sub64(x[3], y[3], b)
	// On borrow r = x-y+2^256; adding p means subtracting fieldC.
	r0, b = bits.Sub64(r0, fieldC&-b, 0)
	r1, b = bits.Sub64(r1, 0, b)
	r2, b = bits.Sub64(r2, 0, b)
	r3, b = bits.Sub64(r3, 0, b)
	// A second borrow leaves r >= 2^256-fieldC, so r0 cannot borrow again.
	z[0], z[1], z[2], z[3] = r0-fieldC&-b, r1, r2, r3
	return z
}

// mulInt sets z = k*x for a small constant k < 2^30.
func (z *fe) mulInt(x *fe, k uint64) *fe {
	h0, l0 := bits.Mul64(x[0], k)
	h1, l1 := bits.Mul64(x[1], k)
	h2, l2 := bits.Mul64(x[2], k)
	h3, l3 := bits.Mul64(x[3], k)
	var c uint64
	l1, c = bits.Add64(l1, h0, 0)
	l2, c = bits.Add64(l2, h1, c)
	l3, c = bits.Add64(l3, h2, c)
	// The top limb h3+c is below k < 2^30, so its fold (h3+c)*fieldC fits
	// in a word, and a final wrap leaves l0 small enough to add fieldC.
	l0, c = bits.Add64(l0, (h3+c)*fieldC, 0)
	l1, c = bits.Add64(l1, 0, c)
	l2, c = bits.Add64(l2, 0, c)
	l3, c = bits.Add64(l3, 0, c)
	z[0], z[1], z[2], z[3] = l0+fieldC&-c, l1, l2, l3
	return z
}

// neg sets z = -x.
func (z *fe) neg(x *fe) *fe {
	return z.sub(&fe{}, x)
}

// dbl sets z = 2x.
func (z *fe) dbl(x *fe) *fe {
	return z.add(x, x)
}

// normalize reduces z to its canonical value in [0, p).
func (z *fe) normalize() *fe {
	// z >= p exactly when z + fieldC carries out of 256 bits; a weakly
	// reduced value is below 2p, so one subtraction suffices.
	r0, c := bits.Add64(z[0], fieldC, 0)
	r1, c := bits.Add64(z[1], 0, c)
	r2, c := bits.Add64(z[2], 0, c)
	r3, c := bits.Add64(z[3], 0, c)
	if c != 0 {
		z[0], z[1], z[2], z[3] = r0, r1, r2, r3
	}
	return z
}

// isZero reports whether x = 0 (mod p).
func (x *fe) isZero() bool {
	if x[0]|x[1]|x[2]|x[3] == 0 {
		return true
	}
	return *x == feP
}

// equal reports whether x = y (mod p).
func (x *fe) equal(y *fe) bool {
	var d fe
	return d.sub(x, y).isZero()
}

// setBytes sets z to the big-endian value b and reports whether b < p.
func (z *fe) setBytes(b *[32]byte) bool {
	for i := range 4 {
		z[3-i] = be64(b[8*i:])
	}
	_, c := bits.Add64(z[0], fieldC, 0)
	_, c = bits.Add64(z[1], 0, c)
	_, c = bits.Add64(z[2], 0, c)
	_, c = bits.Add64(z[3], 0, c)
	return c == 0
}

// putBytes writes the canonical big-endian encoding of x to b.
func (x *fe) putBytes(b []byte) {
	_ = b[31]
	n := *x
	n.normalize()
	for i := range 4 {
		putBE64(b[8*i:], n[3-i])
	}
}

func be64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[7]) | uint64(b[6])<<8 | uint64(b[5])<<16 | uint64(b[4])<<24 |
		uint64(b[3])<<32 | uint64(b[2])<<40 | uint64(b[1])<<48 | uint64(b[0])<<56
}

func putBE64(b []byte, v uint64) {
	_ = b[7]
	b[0], b[1], b[2], b[3] = byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32)
	b[4], b[5], b[6], b[7] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}
