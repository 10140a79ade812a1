package clob

import (
	"math/bits"

	"github.com/holiman/uint256"
)

// Number limits. Inside a book sizes are int64 lots and prices int64 steps;
// both are capped at 2^53 so that half-steps (2 × steps), lots × half-steps
// (a 107-bit product) and their sums stay exact.
const (
	// unitsMax is the largest lot or step count an intent may carry.
	unitsMax = 1 << 53
	// unitQuoteMaxBits bounds unitQuote and the lot size (in bits) so that
	// every quote amount (< 2^235) and base amount (< 2^181) fits a uint256.
	unitQuoteMaxBits = 128
)

// wad is 1e18, the fee and price denominator.
var wad = uint256.NewInt(1_000_000_000_000_000_000)

// units are a market's conversion constants, derived once at CreateMarket.
type units struct {
	lot, tick, unitQuote uint256.Int
	makerFee, takerFee   uint256.Int
	feeMaxRate           uint256.Int // max(makerFee, takerFee)
	base, quote          Address
	intervalUs           int64
	// lot, tick and intervalUs as divisors (lotDiv and tickDiv serve only
	// when lot and tick fit 64 bits).
	lotDiv, tickDiv, ivDiv divisor
}

// wadDiv and transferDiv are wad and TransferIntervalUs as divisors.
var (
	wadDiv      = newDivisor(1_000_000_000_000_000_000)
	transferDiv = newDivisor(TransferIntervalUs)
)

// toLots and toSteps are toUnits by the lot size and by the tick.
func (u *units) toLots(v *uint256.Int, zero, notMultiple Reason) (int64, Reason) {
	return toUnits(v, &u.lot, &u.lotDiv, zero, notMultiple)
}

func (u *units) toSteps(v *uint256.Int, zero, notMultiple Reason) (int64, Reason) {
	return toUnits(v, &u.tick, &u.tickDiv, zero, notMultiple)
}

// landing is the tick an intent admitted at nowUs is scheduled for
// (landing(nowUs, intervalUs)).
// REQUIRES: nowUs ≥ 0.
func (u *units) landing(nowUs int64) int64 {
	q, _ := u.ivDiv.divRem(0, uint64(nowUs))
	return int64(q+1) * u.intervalUs
}

// toUnits converts a wire amount into a whole count of unit, or the reason
// it cannot: zero, not a multiple, or more than unitsMax units.
// div is unit as a divisor when unit fits 64 bits.
func toUnits(v, unit *uint256.Int, div *divisor, zero, notMultiple Reason) (int64, Reason) {
	if v.IsZero() {
		return 0, zero
	}
	if v[2]|v[3]|unit[1]|unit[2]|unit[3] == 0 && v[1] < unit[0] {
		// Fast path: a value below 2^128 whose quotient fits 64 bits, by a
		// unit that fits 64 bits (wire sizes and prices are such): one
		// 128-by-64-bit division instead of uint256's long division.
		q, r := div.divRem(v[1], v[0])
		switch {
		case r != 0:
			return 0, notMultiple
		case q > unitsMax:
			return 0, ReasonValueRange
		}
		return int64(q), OK
	}
	var q, r uint256.Int
	q.DivMod(v, unit, &r)
	if !r.IsZero() {
		return 0, notMultiple
	}
	if !q.IsUint64() || q.Uint64() > unitsMax {
		return 0, ReasonValueRange
	}
	return int64(q.Uint64()), OK
}

// quoteOf sets dst to the quote amount of lots at halfSteps: lots ×
// halfSteps × unitQuote, exact.
// REQUIRES: 0 ≤ lots ≤ 2^53, 0 ≤ halfSteps ≤ 2^54.
func (u *units) quoteOf(dst *uint256.Int, lots, halfSteps int64) {
	hi, lo := bits.Mul64(uint64(lots), uint64(halfSteps))
	mul128(dst, lo, hi, &u.unitQuote)
}

// mul128 sets dst to (hi·2^64 + lo) × m, the product of two numbers below
// 2^128 (lot size and unitQuote are, CreateMarket checks): four 64-bit
// multiplies rather than uint256's sixteen.
// REQUIRES: m < 2^128.
func mul128(dst *uint256.Int, lo, hi uint64, m *uint256.Int) {
	m0, m1 := m[0], m[1]
	h00, l00 := bits.Mul64(lo, m0)
	h01, l01 := bits.Mul64(lo, m1)
	h10, l10 := bits.Mul64(hi, m0)
	h11, l11 := bits.Mul64(hi, m1)
	var c uint64
	w1, c1 := bits.Add64(h00, l01, 0)
	w1, c2 := bits.Add64(w1, l10, 0)
	w2, c := bits.Add64(h01, h10, c1)
	w3 := h11 + c
	w2, c = bits.Add64(w2, l11, c2)
	w3 += c
	*dst = uint256.Int{l00, w1, w2, w3}
}

// feeOf sets dst to floor(quote × rate / 1e18).
func feeOf(dst, quote, rate *uint256.Int) {
	if quote[2]|quote[3]|rate[1]|rate[2]|rate[3] != 0 {
		dst.MulDivOverflow(quote, rate, wad)
		return
	}
	// Fast path (every fee rate is < 1e18, and quotes below 2^128 are the
	// rule): the 192-bit product divided by 1e18 word by word, each step's
	// remainder < 1e18 feeding the next, instead of uint256's MulDiv.
	h0, w0 := bits.Mul64(quote[0], rate[0])
	h1, l1 := bits.Mul64(quote[1], rate[0])
	w1, c := bits.Add64(h0, l1, 0)
	w2 := h1 + c
	const d = 1_000_000_000_000_000_000
	if w2 == 0 && w1 < d { // the product fits the last step: one division, not three
		q0, _ := wadDiv.divRem(w1, w0)
		*dst = uint256.Int{q0, 0, 0, 0}
		return
	}
	q2, r := wadDiv.divRem(0, w2)
	q1, r := wadDiv.divRem(r, w1)
	q0, _ := wadDiv.divRem(r, w0)
	*dst = uint256.Int{q0, q1, q2, 0}
}

// baseOf sets dst to lots × lot size.
func (u *units) baseOf(dst *uint256.Int, lots int64) {
	mul128(dst, uint64(lots), 0, &u.lot)
}

// buyReserve sets dst to what a buy of lots at priceSteps reserves:
// quote(lots, 2×steps) + feeMax of it. tmp is scratch.
func (u *units) buyReserve(dst, tmp *uint256.Int, lots, priceSteps int64) {
	u.quoteOf(dst, lots, 2*priceSteps)
	feeOf(tmp, dst, &u.feeMaxRate)
	dst.Add(dst, tmp)
}

// reserve sets dst to the reservation of an order of lots at priceSteps.
func (u *units) reserve(dst, tmp *uint256.Int, side Side, lots, priceSteps int64) {
	if side == Buy {
		u.buyReserve(dst, tmp, lots, priceSteps)
		return
	}
	u.baseOf(dst, lots)
}

// backing is the token an order of side locks.
func (u *units) backing(side Side) Address {
	if side == Buy {
		return u.quote
	}
	return u.base
}

// priceWei sets dst to the wire price of halfSteps: halfSteps × tick / 2.
func (u *units) priceWei(dst *uint256.Int, halfSteps int64) {
	dst.SetUint64(uint64(halfSteps))
	dst.Mul(dst, &u.tick)
	dst.Rsh(dst, 1)
}

// landing is the first tick of interval strictly after nowUs: the tick an
// intent admitted at nowUs is scheduled for.
// REQUIRES: nowUs ≥ 0.
func landing(nowUs, intervalUs int64) int64 {
	return (nowUs/intervalUs + 1) * intervalUs
}

// volume is a level's resting size in lots as a 128-bit sum (hi, lo): up to
// 2^31 orders of up to 2^53 lots do not fit an int64.
type volume struct{ hi, lo uint64 }

func (v *volume) add(lots int64) {
	var c uint64
	v.lo, c = bits.Add64(v.lo, uint64(lots), 0)
	v.hi += c
}

func (v *volume) sub(lots int64) {
	var b uint64
	v.lo, b = bits.Sub64(v.lo, uint64(lots), 0)
	v.hi -= b
}

// wei sets dst to the volume in base wei.
func (v *volume) wei(dst *uint256.Int, u *units) {
	*dst = uint256.Int{v.lo, v.hi, 0, 0}
	dst.Mul(dst, &u.lot)
}
