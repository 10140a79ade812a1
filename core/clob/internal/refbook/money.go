package refbook

import (
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
)

// Checked uint256 arithmetic: an overflow or underflow is a bug in the
// engine (or a market config the doc's bounds should have refused), never a
// value to wrap silently.

func steps(n int64) *uint256.Int {
	if n < 0 {
		panic("BUG: negative count")
	}
	return uint256.NewInt(uint64(n))
}

func mul(x, y *uint256.Int) uint256.Int {
	var z uint256.Int
	if _, over := z.MulOverflow(x, y); over {
		panic("BUG: uint256 multiplication overflows")
	}
	return z
}

func add(x, y *uint256.Int) uint256.Int {
	var z uint256.Int
	if _, over := z.AddOverflow(x, y); over {
		panic("BUG: uint256 addition overflows")
	}
	return z
}

func sub(x, y *uint256.Int) uint256.Int {
	var z uint256.Int
	if _, under := z.SubOverflow(x, y); under {
		panic("BUG: uint256 subtraction underflows")
	}
	return z
}

// feeOf is floor(x × rate / 1e18).
func feeOf(x, rate *uint256.Int) uint256.Int {
	var z uint256.Int
	if _, over := z.MulDivOverflow(x, rate, one18); over {
		panic("BUG: fee overflows")
	}
	return z
}

// quote is the quote amount of lots at half half-steps: lots × half × unitQuote.
func (b *book) quote(lots, half int64) uint256.Int {
	x := mul(steps(lots), steps(half))
	return mul(&x, &b.unitQuote)
}

// reservation is what an order of lots at priceSteps locks: for a buy
// quote(lots, 2×steps) + feeMax of it in the quote token, for a sell
// lots × lot_size in the base token; on a perp book nothing (its margin is
// the perp layer's).
func (b *book) reservation(side clob.Side, lots, priceSteps int64) uint256.Int {
	if b.cfg.Kind == clob.Perp {
		return uint256.Int{}
	}
	if side == clob.Sell {
		return mul(steps(lots), &b.cfg.LotSize)
	}
	q := b.quote(lots, 2*priceSteps)
	f := feeOf(&q, &b.feeMax)
	return add(&q, &f)
}

// Units converts a wire amount to a whole count of step (lots or price
// steps), with the doc's reasons: zero, not a multiple, more than 2^53.
func Units(v, step *uint256.Int, zero, notMultiple clob.Reason) (int64, clob.Reason) {
	if v.IsZero() {
		return 0, zero
	}
	var q, r uint256.Int
	q.DivMod(v, step, &r)
	if !r.IsZero() {
		return 0, notMultiple
	}
	if !q.IsUint64() || q.Uint64() > unitsMax {
		return 0, clob.ReasonValueRange
	}
	return int64(q.Uint64()), clob.OK
}

type uintT = uint256.Int
