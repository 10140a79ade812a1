package secp

import "math/bits"

// sc is an integer modulo the group order n, four little-endian limbs.
//
// Invariant: always fully reduced, in [0, n).
type sc [4]uint64

var (
	scN     = sc{0xbfd25e8cd0364141, 0xbaaedce6af48a03b, 0xfffffffffffffffe, 0xffffffffffffffff}
	scHalfN = sc{0xdfe92f46681b20a0, 0x5d576e7357a4501d, 0xffffffffffffffff, 0x7fffffffffffffff}
)

// 2^256 - n = scC0 + scC1*2^64 + 2^128: folding by it reduces mod n.
const (
	scC0 = 0x402da1732fc9bebf
	scC1 = 0x4551231950b75fc4
)

// setBytes sets z to the big-endian value b mod n and reports whether b >= n.
func (z *sc) setBytes(b *[32]byte) (overflow bool) {
	for i := range 4 {
		z[3-i] = be64(b[8*i:])
	}
	return z.reduceOnce()
}

// reduceOnce subtracts n if z >= n and reports whether it did. Any 256-bit
// value is below 2n, so one subtraction reaches [0, n).
func (z *sc) reduceOnce() bool {
	r0, b := bits.Sub64(z[0], scN[0], 0)
	r1, b := bits.Sub64(z[1], scN[1], b)
	r2, b := bits.Sub64(z[2], scN[2], b)
	r3, b := bits.Sub64(z[3], scN[3], b)
	if b != 0 {
		return false
	}
	z[0], z[1], z[2], z[3] = r0, r1, r2, r3
	return true
}

func (x *sc) isZero() bool { return x[0]|x[1]|x[2]|x[3] == 0 }

// greater reports whether x > y as integers.
func (x *sc) greater(y *sc) bool {
	_, b := bits.Sub64(y[0], x[0], 0)
	_, b = bits.Sub64(y[1], x[1], b)
	_, b = bits.Sub64(y[2], x[2], b)
	_, b = bits.Sub64(y[3], x[3], b)
	return b != 0
}

// neg sets z = -x mod n.
func (z *sc) neg(x *sc) *sc {
	if x.isZero() {
		*z = sc{}
		return z
	}
	var b uint64
	z[0], b = bits.Sub64(scN[0], x[0], 0)
	z[1], b = bits.Sub64(scN[1], x[1], b)
	z[2], b = bits.Sub64(scN[2], x[2], b)
	z[3], _ = bits.Sub64(scN[3], x[3], b)
	return z
}

// add sets z = x+y mod n.
func (z *sc) add(x, y *sc) *sc {
	var c uint64
	z[0], c = bits.Add64(x[0], y[0], 0)
	z[1], c = bits.Add64(x[1], y[1], c)
	z[2], c = bits.Add64(x[2], y[2], c)
	z[3], c = bits.Add64(x[3], y[3], c)
	if c != 0 {
		// x+y-n = (x+y-2^256) + (2^256-n), which cannot carry again.
		z[0], c = bits.Add64(z[0], scC0, 0)
		z[1], c = bits.Add64(z[1], scC1, c)
		z[2], c = bits.Add64(z[2], 1, c)
		z[3] += c
		return z
	}
	z.reduceOnce()
	return z
}

// mul sets z = x*y mod n.
func (z *sc) mul(x, y *sc) *sc {
	t := mul512((*[4]uint64)(x), (*[4]uint64)(y))
	z.reduce512(&t)
	return z
}

// mul512 returns the full product x*y as eight little-endian limbs.
func mul512(x, y *[4]uint64) (t [8]uint64) {
	for i := range 4 {
		var carry uint64
		for j := range 4 {
			h, l := bits.Mul64(x[i], y[j])
			var c uint64
			l, c = bits.Add64(l, t[i+j], 0)
			h += c
			l, c = bits.Add64(l, carry, 0)
			t[i+j] = l
			carry = h + c
		}
		t[i+4] = carry
	}
	return t
}

// reduce512 sets z = t mod n by folding the high half with 2^256 = 2^256-n
// (mod n) three times: 512 -> 386 -> 260 -> 257 bits, then one subtraction.
func (z *sc) reduce512(t *[8]uint64) {
	var m [8]uint64
	copy(m[:4], t[:4])
	foldHigh(&m, t[4:8])
	var m2 [8]uint64
	copy(m2[:4], m[:4])
	foldHigh(&m2, m[4:7])
	var m3 [8]uint64
	copy(m3[:4], m2[:4])
	foldHigh(&m3, m2[4:5])
	// m3 < 2^256 + 2^133: a carry into limb 4 folds once more without
	// carrying again.
	z[0], z[1], z[2], z[3] = m3[0], m3[1], m3[2], m3[3]
	if m3[4] != 0 {
		var c uint64
		z[0], c = bits.Add64(z[0], scC0, 0)
		z[1], c = bits.Add64(z[1], scC1, c)
		z[2], c = bits.Add64(z[2], 1, c)
		z[3] += c
	}
	z.reduceOnce()
}

// foldHigh adds hi*(2^256-n) into acc. REQUIRES: the sum fits in acc.
func foldHigh(acc *[8]uint64, hi []uint64) {
	for i, w := range hi {
		addMulWord(acc[i:], w, scC0)
		addMulWord(acc[i+1:], w, scC1)
		addWord(acc[i+2:], w)
	}
}

// addMulWord adds x*y into acc (little-endian), propagating the carry.
func addMulWord(acc []uint64, x, y uint64) {
	h, l := bits.Mul64(x, y)
	var c uint64
	acc[0], c = bits.Add64(acc[0], l, 0)
	acc[1], c = bits.Add64(acc[1], h, c)
	for i := 2; c != 0 && i < len(acc); i++ {
		acc[i], c = bits.Add64(acc[i], 0, c)
	}
}

// addWord adds x into acc (little-endian), propagating the carry.
func addWord(acc []uint64, x uint64) {
	var c uint64
	acc[0], c = bits.Add64(acc[0], x, 0)
	for i := 1; c != 0 && i < len(acc); i++ {
		acc[i], c = bits.Add64(acc[i], 0, c)
	}
}
