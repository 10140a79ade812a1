package node

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
)

// The strategy lab's market faults (docs/lab.md). A skipped auction and a
// held tick change no input: the log holds the ticks that ran, at the
// times they ran, so a replay or a follower reproduces them without
// knowing there was a fault. An oracle jump or gap is an input
// (core.InputMoveOracle), logged like admin_setOraclePrice.

// Bounds of the market faults.
const (
	// SkipAuctionsMax bounds the auction ticks armed to be skipped at once.
	SkipAuctionsMax = 120
	// HoldTickMax bounds how long one tick is held back.
	HoldTickMax = 10 * time.Second
	// OracleGapMax bounds an oracle gap (an hour of node time).
	OracleGapMax = time.Hour
)

// ErrSkipsArmed refuses a skip that would arm more than SkipAuctionsMax.
var ErrSkipsArmed = errors.New("too many auction ticks armed to be skipped")

// labFaults is the armed market faults. skip and hold are set by the
// controls and taken by RunDueTicks; skipAfter is the newest skipped tick
// while no later tick has run (-1: none), under tickMu.
type labFaults struct {
	skip      atomic.Int64
	hold      atomic.Int64 // ns
	skipAfter int64
	// Counters for svc_metrics.
	skipped, held atomic.Uint64
}

// SkipAuctions arms the next count auction ticks to be passed over: the
// venue runs no auction, batch or perp tick then (a slot publishes as
// idle), and what was due waits for the next tick of its grid. It answers
// how many are armed now.
func (n *Node) SkipAuctions(count int) (int, error) {
	for {
		armed := n.lab.skip.Load()
		if armed+int64(count) > SkipAuctionsMax {
			return int(armed), ErrSkipsArmed
		}
		if n.lab.skip.CompareAndSwap(armed, armed+int64(count)) {
			return int(armed) + count, nil
		}
	}
}

// HoldTick holds the next auction tick back by d of wall time once it is
// due (a later hold replaces an earlier one not yet taken). Orders sent
// meanwhile land at the tick after it, as they would have.
// REQUIRES: 0 <= d <= HoldTickMax.
func (n *Node) HoldTick(d time.Duration) { n.lab.hold.Store(int64(d)) }

// LabCounts returns the auction ticks skipped and the ticks held since start.
func (n *Node) LabCounts() (skipped, held uint64) { return n.lab.skipped.Load(), n.lab.held.Load() }

// nextTick returns the next tick due at nowUs past the skipped ones, and
// takes an armed skip or hold for it: skip reports it passed over; a hold
// is waited out here, without mu (false if the node stopped meanwhile).
// REQUIRES: n.tickMu held, n.mu held; returns with n.mu held.
func (n *Node) nextTick(nowUs int64) (tickUs int64, ok, skip bool) {
	if n.lab.skipAfter > nowUs {
		n.lab.skipAfter = -1 // time went back (evm_revert): nothing is skipped there
	}
	tickUs, ok = n.ledger.NextTickAfter(n.lab.skipAfter, nowUs)
	if !ok {
		return tickUs, false, false
	}
	if n.lab.skip.Load() > 0 {
		n.lab.skip.Add(-1)
		n.lab.skipAfter = tickUs
		n.lab.skipped.Add(1)
		return tickUs, true, true
	}
	n.lab.skipAfter = -1
	if d := time.Duration(n.lab.hold.Swap(0)); d > 0 {
		n.lab.held.Add(1)
		n.mu.Unlock()
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-n.quit:
			t.Stop()
		}
		n.mu.Lock()
	}
	return tickUs, true, false
}

// MoveOracle moves a perp market's oracle by bps basis points, now (gap 0)
// or after a gap of its feed lasting gap of node time (docs/lab.md), as a
// logged input; done runs once it is durable. A refusal is an
// *OracleRefusedError, and done never runs.
// REQUIRES: 0 <= gap <= OracleGapMax.
func (n *Node) MoveOracle(book clob.Hash, bps int32, gap time.Duration, done func(error)) error {
	in := &core.Input{Kind: core.InputMoveOracle, Book: book, Bps: bps}
	if gap > 0 {
		in.TimeUs = n.clock.NowMicros() + gap.Microseconds()
	}
	rej, err := n.submit(in, func(_ *Entry, err error) { done(err) })
	if err != nil {
		return err
	}
	if !rej.OK() {
		return &OracleRefusedError{Reason: rej.Reason}
	}
	return nil
}
