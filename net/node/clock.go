package node

import (
	"sync/atomic"
	"time"
)

// Clock gives the time, in Unix microseconds: Config.Clock is the source the
// node reads through its monotonic clock (monotonic), never directly.
type Clock interface {
	NowMicros() int64
}

// WallClock is the system clock.
type WallClock struct{}

// NowMicros returns the wall-clock time.
func (WallClock) NowMicros() int64 { return time.Now().UnixMicro() }

// ManualClock moves only when told to (tests, and --clock manual).
type ManualClock struct{ us atomic.Int64 }

// NewManualClock returns a clock stopped at startUs.
func NewManualClock(startUs int64) *ManualClock {
	c := &ManualClock{}
	c.us.Store(startUs)
	return c
}

// NowMicros returns the clock's current time.
func (c *ManualClock) NowMicros() int64 { return c.us.Load() }

// Advance moves the clock forward by deltaUs and returns the new time.
// REQUIRES: deltaUs >= 0.
func (c *ManualClock) Advance(deltaUs int64) int64 {
	if deltaUs < 0 {
		panic("BUG: ManualClock.Advance with a negative delta")
	}
	return c.us.Add(deltaUs)
}

// monotonic is the node's notion of now: its source plus an offset
// (evm_increaseTime, evm_setNextBlockTimestamp: controls.go), read through
// a floor, so that no reading is below an earlier one. When the source steps back
// (an NTP correction, a VM resumed), the node holds its last time until the
// source catches up, rather than stamp an input, attest a batch or run a
// tick before one it already did: the subscription hub and the history
// indexes rely on those times never decreasing. Start-up raises the floor
// to the newest time in the restored state, so this holds across restarts
// too. The offset is ledger state (core.Ledger.ClockOffset), set under the
// sequencer lock as its input applies and again after start-up restored
// the ledger. Safe for concurrent use, lock-free.
type monotonic struct {
	src    Clock
	offset atomic.Int64 // µs added to src
	floor
}

// NowMicros returns max(the source's time plus the offset, every earlier
// reading).
func (c *monotonic) NowMicros() int64 { return c.raise(c.src.NowMicros() + c.offset.Load()) }

// resumeOffset takes the clock offset from the restored ledger: start-up
// calls it once the snapshot and the log are applied.
// REQUIRES: n.mu held, or the node not started.
func (n *Node) resumeOffset() { n.clock.offset.Store(n.ledger.ClockOffset()) }

// floor is a running maximum, lock-free.
type floor struct{ last atomic.Int64 }

// raise lifts the floor to us and returns the floor.
func (f *floor) raise(us int64) int64 {
	for {
		last := f.last.Load()
		if us <= last {
			return last
		}
		if f.last.CompareAndSwap(last, us) {
			return us
		}
	}
}
