package node

import (
	"bytes"
	"errors"
	"math/big"
	"slices"
	"sync"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
)

// The perpetual markets' part of the node (docs/perps.md): the oracle
// control, the balances the margin rules define, and the ranking of the
// accounts at risk. The perp reads answer from the read views
// (readviews.go), never under the sequencer's lock.

// OracleRefusedError is a refused admin_setOraclePrice: the orderbook's
// reason (unknown book, or a price off the tick grid).
type OracleRefusedError struct{ Reason clob.Reason }

func (e *OracleRefusedError) Error() string { return "CLOB validation failed: " + e.Reason.String() }

// SetOraclePrice sets a perp market's oracle price exactly and freezes its
// walk, as a logged input (a replay sets it at the same place); done runs
// once the input is durable. A refusal is an *OracleRefusedError, and done
// never runs.
func (n *Node) SetOraclePrice(book clob.Hash, price *uint256.Int, done func(error)) error {
	rej, err := n.submit(&core.Input{Kind: core.InputSetOracle, Book: book, Price: *price}, func(_ *Entry, err error) { done(err) })
	if err != nil {
		return err
	}
	if !rej.OK() {
		return &OracleRefusedError{Reason: rej.Reason}
	}
	return nil
}

// IsOracleRefused reports whether err is a refused oracle setting.
func IsOracleRefused(err error) bool {
	var r *OracleRefusedError
	return errors.As(err, &r)
}

// positionsLocked assembles an account's ob_getPositions data: its spot
// holdings, its perp positions and its margin summary.
// REQUIRES: n.mu held.
func (n *Node) positionsLocked(a clob.Address) marketdata.PositionsData {
	return marketdata.PositionsData{
		Spot:      n.market.idx.Positions(nil, a, n.balances),
		Perps:     n.market.idx.PerpPositions(nil, n.ledger.Positions(nil, core.Address(a))),
		Margin:    n.ledger.Margin(core.Address(a)),
		HasMargin: true,
	}
}

// ByPnL returns the margin summary of every account with an open perp
// position, the backstop left out (it is never liquidated), best net PnL
// (unrealized plus realized) first, ties by address: the live network's
// leaderboard order (ob_getRankedPositions, GET /v1/clob/leaderboard). The
// slice is shared: callers must not modify it.
//
// It reads the read views, never the sequencer's lock: each summary is
// the account's as of the newest input that changed it (a perp tick
// republishes every such account). One ranking costs a summary per such
// account (the ledger bounds how many there are) and a sort; it is kept
// until one of those accounts is republished (readViews.ranked), so
// repeated reads between inputs cost one scan.
func (n *Node) ByPnL() []clob.MarginInfo {
	c := &n.ranking
	v := n.views.Load()
	version := v.ranked.Load() // before the views: a ranking newer than its version is only recomputed
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.views == v && c.version == version {
		return c.ranked
	}
	accounts := *v.positioned.Load()
	ranked := make([]clob.MarginInfo, 0, len(accounts))
	for _, a := range accounts {
		p, ok := v.accounts.get(a[0], a)
		if !ok || clob.Address(a) == clob.BackstopAddress {
			continue
		}
		ranked = append(ranked, p.Load().marginOf(clob.Address(a)))
	}
	slices.SortFunc(ranked, comparePnL)
	c.views, c.version, c.ranked = v, version, ranked
	return ranked
}

// ranking is the last ByPnL, with the views and the count of republished
// positioned accounts it is of.
type ranking struct {
	mu      sync.Mutex
	views   *readViews
	version uint64
	ranked  []clob.MarginInfo
}

// reset forgets the ranking (a revert replaces the views).
func (c *ranking) reset() {
	c.mu.Lock()
	c.views, c.ranked = nil, nil
	c.mu.Unlock()
}

// comparePnL orders by descending unrealized + realized PnL, then address.
func comparePnL(a, b clob.MarginInfo) int {
	var l, r big.Int
	l.Add(signedBig(&a.Unrealized), signedBig(&a.Realized))
	r.Add(signedBig(&b.Unrealized), signedBig(&b.Realized))
	if c := r.Cmp(&l); c != 0 {
		return c
	}
	return bytes.Compare(a.Owner[:], b.Owner[:])
}

func signedBig(s *clob.Signed) *big.Int {
	v := s.Abs.ToBig()
	if s.Neg {
		v.Neg(v)
	}
	return v
}
