package clob

import "github.com/holiman/uint256"

// Engine holds every orderbook of the venue. Not safe for concurrent use.
type Engine struct{}

// NewEngine returns an engine with no markets.
func NewEngine(l Limits) *Engine { panic("BUG: unimplemented") }

// CreateMarket adds a book (cold path: errors are values with context).
func (e *Engine) CreateMarket(cfg *MarketConfig) error { panic("BUG: unimplemented") }

// Market returns the book's configuration (read-only).
func (e *Engine) Market(id Hash) (*MarketConfig, bool) { panic("BUG: unimplemented") }

// AppendMarkets appends every book id, ascending.
func (e *Engine) AppendMarkets(dst []Hash) []Hash { panic("BUG: unimplemented") }

// Admit validates and applies an envelope atomically: every intent or none.
func (e *Engine) Admit(a *Admission, env *Envelope, acc Accounts) Reason {
	panic("BUG: unimplemented")
}

// NextTickDue returns the earliest tick time ≤ nowUs at which some book has
// work (pending intents or due expiries).
func (e *Engine) NextTickDue(nowUs int64) (int64, bool) { panic("BUG: unimplemented") }

// Tick runs the auction of every book due at tickUs.
func (e *Engine) Tick(tickUs int64, acc Accounts, out *TickResult) { panic("BUG: unimplemented") }

// AppendLevels appends up to depth aggregated levels of one side, best first
// (depth ≤ 0: all).
func (e *Engine) AppendLevels(dst []Level, book Hash, side Side, depth int) []Level {
	panic("BUG: unimplemented")
}

// Order returns a live order.
func (e *Engine) Order(id Hash) (OrderInfo, bool) { panic("BUG: unimplemented") }

// LastPrice returns the book's last clearing price.
func (e *Engine) LastPrice(book Hash) (uint256.Int, bool) { panic("BUG: unimplemented") }

// AppendSnapshot appends the canonical encoding of the engine's state.
func (e *Engine) AppendSnapshot(dst []byte) []byte { panic("BUG: unimplemented") }

// OrderID is keccak256(abi.encode(signer, uint64 nonce, uint32 sequence)).
func OrderID(signer Address, nonce uint64, seq uint32) Hash { panic("BUG: unimplemented") }
