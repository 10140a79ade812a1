package clob

import "github.com/holiman/uint256"

// SKELETON (helper A replaces this file): the perp engine's entry points,
// so that the wire layer builds against them meanwhile.

// Margin returns the account's cross-margin summary.
func (e *Engine) Margin(owner Address, acc Accounts) MarginInfo { return MarginInfo{Owner: owner} }

// AppendPositions appends the owner's open perp positions, books ascending.
func (e *Engine) AppendPositions(dst []PositionInfo, owner Address) []PositionInfo { return dst }

// PerpMarket returns a perp market's dynamic state.
func (e *Engine) PerpMarket(book Hash) (PerpInfo, bool) { return PerpInfo{}, false }

// AppendPerpAccounts appends every account with an open position (the
// backstop included), in the order they first opened one.
func (e *Engine) AppendPerpAccounts(dst []Address) []Address { return dst }

// SetOraclePrice sets a perp market's oracle price and freezes its walk.
// (Skeleton: sets the mark too.)
func (e *Engine) SetOraclePrice(book Hash, price *uint256.Int) Reason {
	b := e.book(book)
	if b == nil || b.perp == nil {
		return ReasonUnknownBook
	}
	var steps, rem uint256.Int
	steps.DivMod(price, &b.u.tick, &rem)
	if steps.IsZero() || !rem.IsZero() || !steps.IsUint64() || steps.Uint64() > 1<<53 {
		return ReasonOraclePrice
	}
	b.perp.oracleSteps = int64(steps.Uint64())
	b.perp.markSteps = b.perp.oracleSteps
	return OK
}

// PerpCost is Σ cost over every open position, quote wei: the ledger's
// supply check subtracts it (docs/perps.md, "Invariants").
func (e *Engine) PerpCost() Signed { return Signed{} }

// perpBook is a perp market's state beside its book (helper A extends it).
type perpBook struct {
	oracleSteps int64
	markSteps   int64
}

func newPerpBook(cfg *MarketConfig, u *units) *perpBook {
	var steps, rem uint256.Int
	steps.DivMod(&cfg.Perp.OraclePrice, &u.tick, &rem)
	p := &perpBook{oracleSteps: int64(steps.Uint64())}
	p.markSteps = p.oracleSteps
	return p
}

// perpTick runs the perp markets' part of a tick after matching: oracle,
// mark, funding, liquidation (docs/perps.md).
func (e *Engine) perpTick(tickUs int64, acc Accounts, out *TickResult) {}

// marginCheck decides whether owner may add an order of lots on side to
// perp book b (docs/perps.md, "Admission of perp orders"); a REDUCE_ONLY
// order comes back cut to the position. Triggers call it when they fire.
func (e *Engine) marginCheck(owner Address, b *book, side Side, lots int64, flags uint8, acc Accounts) (int64, Reason) {
	return lots, OK
}

func (e *Engine) appendPerp(dst []byte) []byte { return dst }
func (e *Engine) loadPerp(r *snapReader)       {}
