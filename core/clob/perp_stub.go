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
func (e *Engine) SetOraclePrice(book Hash, price *uint256.Int) Reason { return ReasonUnknownBook }

// PerpCost is Σ cost over every open position, quote wei: the ledger's
// supply check subtracts it (docs/perps.md, "Invariants").
func (e *Engine) PerpCost() Signed { return Signed{} }
