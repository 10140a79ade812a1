package node

import (
	"sync/atomic"
	"time"
)

// Clock gives the node's notion of now, in Unix microseconds. The committee
// stamps attestations with it and eth_blockNumber reports it.
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
