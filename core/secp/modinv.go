package secp

import "math/bits"

// Variable-time modular inversion by Bernstein-Yang "safegcd" divsteps.
//
// Starting from (f, g) = (M, x) and (d, e) = (0, 1), each divstep replaces
// g by (g + c*f)/2 (possibly after swapping f and g) while keeping
// f = d*x and g = e*x (mod M). When g reaches 0, f = +-1 and d = +-1/x.
//
// Divsteps are batched 30 at a time: the decisions of 30 steps depend only
// on the low 30 bits of f and g, so they are run on single words and
// recorded as a 2x2 matrix (entries below 2^30 in magnitude), which is then
// applied to the full numbers. 30-bit limbs keep every product and sum of
// two products inside int64; 62-bit limbs would halve the batches but need
// signed 128-bit products, which Go has no primitive for.
//
// All inputs are public (signatures, hashes, curve points), so running
// time may depend on them. Fermat exponentiation costs about 3x more for
// the field and far more for the scalar field, whose reduction is slower.

const (
	invLimbs    = 9 // 9*30 = 270 bits: 257 bits and a sign, with room to spare
	invLimbBits = 30
	invLimbMask = 1<<invLimbBits - 1
	// invBatchesMax bounds the loop: 256-bit inputs need at most 741
	// divsteps (25 batches) even in the worst case.
	invBatchesMax = 32
)

// limbs30 is a signed integer: limbs 0..len-2 in [0, 2^30), the top limb
// signed.
type limbs30 [invLimbs]int64

// invModulus describes an odd modulus M for modInv.
type invModulus struct {
	m    limbs30
	minv int64 // M^-1 mod 2^30
}

// matrix is the transition of a batch of divsteps, scaled by 2^30:
// 2^30 * (f', g') = (u*f + v*g, q*f + r*g).
type matrix struct{ u, v, q, r int64 }

func toLimbs30(x *[4]uint64) limbs30 {
	var l limbs30
	for i := range l {
		bit := i * invLimbBits
		limb, off := bit/64, uint(bit%64)
		if limb >= 4 {
			break
		}
		w := x[limb] >> off
		if off > 64-invLimbBits && limb < 3 {
			w |= x[limb+1] << (64 - off)
		}
		l[i] = int64(w & invLimbMask)
	}
	return l
}

// fromLimbs30 converts l to four 64-bit limbs. REQUIRES: 0 <= l < 2^256
// with limbs normalized to [0, 2^30).
func fromLimbs30(l *limbs30) [4]uint64 {
	var x [4]uint64
	for i, v := range l {
		bit := i * invLimbBits
		limb, off := bit/64, uint(bit%64)
		if limb >= 4 {
			break
		}
		x[limb] |= uint64(v) << off
		if off > 64-invLimbBits && limb < 3 {
			x[limb+1] |= uint64(v) >> (64 - off)
		}
	}
	return x
}

// modInv returns x^-1 mod M for 0 < x < M (0 for x = 0).
func modInv(x *[4]uint64, mod *invModulus) [4]uint64 {
	if x[0]|x[1]|x[2]|x[3] == 0 {
		return [4]uint64{}
	}
	f, g := mod.m, toLimbs30(x)
	var d, e limbs30
	e[0] = 1
	eta := int64(-1)
	n := invLimbs
	for range invBatchesMax {
		var t matrix
		eta, t = divsteps30(eta, uint32(f[0]), uint32(g[0]))
		updateDE(&d, &e, &t, mod)
		updateFG(&f, &g, n, &t)
		if isZero30(&g, n) {
			return finishInv(&d, f[n-1] < 0, mod)
		}
		n = shrink(&f, &g, n)
	}
	panic("BUG: secp: modInv did not converge")
}

// divsteps30 runs 30 divsteps on the low bits f0, g0 (f0 odd). It removes
// runs of zero bits at once and cancels up to 6 low bits of g per addition,
// but never more than eta+1, so it takes exactly the decisions of the
// one-step-at-a-time algorithm.
func divsteps30(eta int64, f0, g0 uint32) (int64, matrix) {
	f, g := f0, g0
	u, v, q, r := uint32(1), uint32(0), uint32(0), uint32(1)
	i := 30
	for {
		zeros := bits.TrailingZeros32(g | ^uint32(0)<<uint(i))
		g >>= uint(zeros)
		u <<= uint(zeros)
		v <<= uint(zeros)
		eta -= int64(zeros)
		i -= zeros
		if i == 0 {
			break
		}
		if eta < 0 {
			eta = -eta
			f, g = g, -f
			u, v, q, r = q, r, -u, -v
		}
		limit := min(int(eta)+1, i, 6)
		// f*(2-f*f) is f^-1 mod 64 for odd f (f*f = 1 mod 8).
		finv := f * (2 - f*f)
		w := -g * finv & (^uint32(0) >> uint(32-limit))
		g += f * w
		q += u * w
		r += v * w
	}
	// Matrix entries are below 2^30 in magnitude, so the uint32 values
	// sign-extend to the exact integers.
	return eta, matrix{int64(int32(u)), int64(int32(v)), int64(int32(q)), int64(int32(r))}
}

// updateFG sets (f, g) = t*(f, g)/2^30 on the low n limbs; the divisions are
// exact by construction of t.
func updateFG(f, g *limbs30, n int, t *matrix) {
	cf := t.u*f[0] + t.v*g[0]
	cg := t.q*f[0] + t.r*g[0]
	cf >>= invLimbBits
	cg >>= invLimbBits
	for i := 1; i < n; i++ {
		cf += t.u*f[i] + t.v*g[i]
		cg += t.q*f[i] + t.r*g[i]
		f[i-1] = cf & invLimbMask
		g[i-1] = cg & invLimbMask
		cf >>= invLimbBits
		cg >>= invLimbBits
	}
	f[n-1], g[n-1] = cf, cg
}

// updateDE sets (d, e) = t*(d, e)/2^30 mod M, adding multiples of M that
// make the divisions exact. Invariant: d and e stay in (-2M, M).
func updateDE(d, e *limbs30, t *matrix, mod *invModulus) {
	sd, se := d[invLimbs-1]>>63, e[invLimbs-1]>>63
	// Start from u*M (v*M, ...) for negative inputs so that the sums stay
	// in (-2^30*M, 2^30*M) before the correction term.
	md := t.u&sd + t.v&se
	me := t.q&sd + t.r&se
	cd := t.u*d[0] + t.v*e[0]
	ce := t.q*d[0] + t.r*e[0]
	md -= (mod.minv*cd + md) & invLimbMask
	me -= (mod.minv*ce + me) & invLimbMask
	cd += mod.m[0] * md
	ce += mod.m[0] * me
	cd >>= invLimbBits
	ce >>= invLimbBits
	for i := 1; i < invLimbs; i++ {
		cd += t.u*d[i] + t.v*e[i] + mod.m[i]*md
		ce += t.q*d[i] + t.r*e[i] + mod.m[i]*me
		d[i-1] = cd & invLimbMask
		e[i-1] = ce & invLimbMask
		cd >>= invLimbBits
		ce >>= invLimbBits
	}
	d[invLimbs-1], e[invLimbs-1] = cd, ce
}

func isZero30(g *limbs30, n int) bool {
	var acc int64
	for _, v := range g[:n] {
		acc |= v
	}
	return acc == 0
}

// shrink drops the top limb of f and g while both are 0 or -1, folding it
// into the next limb, which becomes the signed top. It returns the new length.
func shrink(f, g *limbs30, n int) int {
	for n > 1 {
		tf, tg := f[n-1], g[n-1]
		if (tf != 0 && tf != -1) || (tg != 0 && tg != -1) {
			break
		}
		f[n-2] |= tf << invLimbBits
		g[n-2] |= tg << invLimbBits
		n--
	}
	return n
}

// finishInv returns d (negated when f = -1) reduced into [0, M).
func finishInv(d *limbs30, negate bool, mod *invModulus) [4]uint64 {
	// d in (-2M, M); after negation in (-M, 2M).
	var s int64 = 1
	if negate {
		s = -1
	}
	var r limbs30
	var c int64
	for i := range r {
		c += s * d[i]
		r[i] = c & invLimbMask
		c >>= invLimbBits
	}
	r[invLimbs-1] |= c << invLimbBits
	for r[invLimbs-1] < 0 {
		addLimbs30(&r, &mod.m, 1)
	}
	for !lessLimbs30(&r, &mod.m) {
		addLimbs30(&r, &mod.m, -1)
	}
	return fromLimbs30(&r)
}

// addLimbs30 sets r += s*m for s = +-1, keeping limbs normalized.
func addLimbs30(r, m *limbs30, s int64) {
	var c int64
	for i := range r {
		c += r[i] + s*m[i]
		r[i] = c & invLimbMask
		c >>= invLimbBits
	}
	r[invLimbs-1] |= c << invLimbBits
}

// lessLimbs30 reports r < m for normalized non-negative values.
func lessLimbs30(r, m *limbs30) bool {
	for i := invLimbs - 1; i >= 0; i-- {
		if r[i] != m[i] {
			return r[i] < m[i]
		}
	}
	return false
}

var (
	invModP = newInvModulus((*[4]uint64)(&feP))
	invModN = newInvModulus((*[4]uint64)(&scN))
)

func newInvModulus(m *[4]uint64) invModulus {
	// Newton's iteration doubles the correct low bits of m^-1 each round;
	// m*m = 1 (mod 8) seeds it with 3 bits.
	x := m[0]
	for range 5 {
		x *= 2 - m[0]*x
	}
	return invModulus{m: toLimbs30(m), minv: int64(x & invLimbMask)}
}

// invVar sets z = 1/x (variable time); the inverse of 0 is 0.
func (z *fe) invVar(x *fe) *fe {
	n := *x
	n.normalize()
	*z = modInv((*[4]uint64)(&n), &invModP)
	return z
}

// invVar sets z = 1/x mod n (variable time); the inverse of 0 is 0.
func (z *sc) invVar(x *sc) *sc {
	*z = modInv((*[4]uint64)(x), &invModN)
	return z
}
