// Package tickrec is the tick record: what one auction tick hands the
// subscription hub (net/subs), as plain data the node fills under its lock
// (Tick), and the canonical bytes that keep it on disk across a restart
// (AppendTick, DecodeTick; layout in codec.go). It is pure like the core
// (core/lint_test.go): no clock, no goroutines, no I/O, so the same tick
// encodes to the same bytes on every node and every run, and DecodeTick
// refuses every byte string AppendTick cannot have written.
package tickrec

import (
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
)

// Tick is everything the tick-driven channels need from one auction tick,
// as plain data the node fills under its lock: copies, no encoding.
//
// Ownership: subs.Hub.PublishTick takes t. From that call on the hub reads
// t (and every slice it references) from other goroutines for as long as
// the tick stays in the replay buffer, so the node must build a fresh Tick
// per tick and never modify one it published. Nothing in it may alias a buffer the
// engine reuses: use CopyResult for the clob.TickResult, and copy level
// slices out of the engine (clob.Engine.AppendLevels into a new slice).
type Tick struct {
	// TickUs is the tick's deadline in microseconds (the wire's `batch`).
	// Invariant: strictly increasing across PublishTick calls.
	TickUs int64
	// Hash and ParentHash identify the tick for newHeads (blockHash of the
	// tick's receipts, and the previous tick's hash).
	Hash, ParentHash clob.Hash
	// Result is the engine's report, deep-copied (see CopyResult).
	Result clob.TickResult
	// Books holds one entry per Result.Books entry, same index.
	// REQUIRES: len(Books) == len(Result.Books).
	Books []BookUpdate
	// Markets holds the ob_getMarkets entry of every market whose entry
	// changed in this tick (at least each book that ran), after the tick.
	// Config must point to memory nobody modifies afterwards.
	Markets []marketdata.Market
	// Positions holds the ob_getPositions data of every account the tick
	// touched (owners of fills, cancels, transfers, liquidations, trigger
	// events) and of every watched account (subs.Hub.WatchedPositions) holding
	// a perp position in a market whose mark or funding index moved, after
	// the tick.
	Positions []AccountPositions
	// Triggers holds the stored triggers, after the tick, of every account
	// whose triggers the tick changed (stored, updated, fired, cancelled).
	Triggers []AccountTriggers
	// Withdrawals holds the bridge withdrawals that settled in this tick,
	// pre-encoded (the bridge owns the WithdrawalUpdate shape). Empty until
	// the bridge exists.
	Withdrawals []Withdrawal
}

// BookUpdate is what one book that ran in the tick needs beyond its
// clob.BookTick.
type BookUpdate struct {
	// Snapshot is the ob_getOrderbook answer after the tick
	// (marketdata.Index.Orderbook with depth 0): its Buys and Sells are copies
	// of the engine's levels, best first, at most the depth the node is
	// willing to serve (subscribers' depth slices them further).
	Snapshot marketdata.Snapshot
	// Kind is the market's kind (spot or perpetual).
	Kind clob.MarketKind
	// Created is the metadata of every order created in this book in this
	// tick (the orders its placed, refused and deadline-missed events name),
	// in creation order. svc_orders_v2 lists each once in `orders`.
	Created []marketdata.OrderMeta
	// Touched optionally holds the metadata of orders from earlier ticks
	// that this tick's events name; svc_orders then adds their tx_hash.
	Touched []marketdata.OrderMeta
	// Modified gives the new price and size of every order an update event
	// of this book names (svc_orders `modified`, svc_orders_v2 `modify`).
	Modified []Modification
}

// Modification is an order's limit price and remaining size after update().
type Modification struct {
	OrderID clob.Hash
	Price   uint256.Int
	Size    uint256.Int
}

// AccountPositions is one account's ob_getPositions data.
type AccountPositions struct {
	Account clob.Address
	Data    marketdata.PositionsData
}

// AccountTriggers is one account's stored triggers (the ob_getTriggers
// page), books ascending, then ids ascending.
type AccountTriggers struct {
	Account  clob.Address
	Triggers []marketdata.Trigger
}

// Withdrawal is one settled bridge withdrawal: its WithdrawalUpdate object,
// pre-encoded, and the account it debited (matched by `account`).
type Withdrawal struct {
	Account clob.Address
	JSON    []byte
}

// CopyResult deep-copies r into t.Result, so the engine may reuse r.
func (t *Tick) CopyResult(r *clob.TickResult) {
	t.Result.TickUs = r.TickUs
	t.Result.Books = append([]clob.BookTick(nil), r.Books...)
	t.Result.Events = append([]clob.Event(nil), r.Events...)
	t.Result.Landed = append([]uint64(nil), r.Landed...)
}
