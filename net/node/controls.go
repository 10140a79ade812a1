package node

import (
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
)

// The anvil-compatible controls (docs/anvil.md): balances, nonces and time.
// Each applies a logged input under the sequencer lock (core/controls.go),
// so a restart, a snapshot and a replay reproduce it; done runs once it is
// durable. Time only moves forward: the controls move the clock's offset
// (clock.go), and a time jump runs the auction ticks it makes due at once,
// as admin_advanceTime does.

// TimeJumpMaxUs bounds one time jump (evm_increaseTime, a timestamp of
// evm_setNextBlockTimestamp or evm_mine ahead of now, anvil_mine's interval
// × count): about 35.7 years, far beyond any test's horizon and far from
// overflowing the int64 µs clock.
const TimeJumpMaxUs = 1 << 50

// ControlSettleMax bounds how long a time control waits for the time it
// set to become past-perfect (its ticks attested).
const ControlSettleMax = 30 * time.Second

// ErrTimeJump refuses a jump beyond TimeJumpMaxUs.
var ErrTimeJump = errors.New("time jump too large (max " + strconv.FormatInt(TimeJumpMaxUs/1_000_000, 10) + " s)")

// ControlRefusedError is a control the ledger refused (core.RejectControl).
type ControlRefusedError struct{ Detail string }

func (e *ControlRefusedError) Error() string { return e.Detail }

// TimeInPastError refuses a timestamp before the node's time, with anvil's
// message.
type TimeInPastError struct{ Seconds int64 }

func (e *TimeInPastError) Error() string {
	return "Timestamp error: " + strconv.FormatInt(e.Seconds, 10) + " is lower than previous block's timestamp"
}

// SetBalance sets a's free native balance to wei (anvil_setBalance).
func (n *Node) SetBalance(a core.Address, wei *uint256.Int, done func(error)) error {
	return n.control(&core.Input{Kind: core.InputSetBalance, To: a, Amount: *wei}, done)
}

// SetNonce sets a's next nonce (anvil_setNonce); a lower one is refused.
func (n *Node) SetNonce(a core.Address, nonce uint64, done func(error)) error {
	return n.control(&core.Input{Kind: core.InputSetNonce, To: a, Nonce: nonce}, done)
}

func (n *Node) control(in *core.Input, done func(error)) error {
	rej, err := n.submit(in, func(_ *Entry, err error) { done(err) })
	if err != nil {
		return err
	}
	if !rej.OK() {
		return &ControlRefusedError{Detail: rej.Detail}
	}
	return nil
}

// IncreaseTime moves the node's time forward by deltaUs and runs the ticks
// that makes due; it returns the clock's offset after the jump. The
// channel yields once everything is durable and the new time is
// past-perfect (settle).
func (n *Node) IncreaseTime(deltaUs int64) (offsetUs int64, settled <-chan error, err error) {
	if deltaUs < 0 || deltaUs > TimeJumpMaxUs {
		return 0, nil, ErrTimeJump
	}
	wait, target, err := n.step(func(now int64) (int64, error) { return now + deltaUs, nil })
	if err != nil {
		return 0, nil, err
	}
	n.mu.RLock()
	offsetUs = n.ledger.ClockOffset()
	n.mu.RUnlock()
	return offsetUs, n.settle(wait, target), nil
}

// SetTime moves the node's time to us (evm_setNextBlockTimestamp, and
// evm_mine with a timestamp) and runs the ticks that makes due, as
// IncreaseTime. A time before the node's is refused (*TimeInPastError), as
// anvil refuses a timestamp before its latest block's; the node's own time
// is accepted and changes nothing.
func (n *Node) SetTime(us int64) (<-chan error, error) {
	wait, target, err := n.step(func(now int64) (int64, error) {
		switch {
		case us < now:
			return 0, &TimeInPastError{Seconds: us / 1_000_000}
		case us-now > TimeJumpMaxUs:
			return 0, ErrTimeJump
		}
		return us, nil
	})
	if err != nil {
		return nil, err
	}
	return n.settle(wait, target), nil
}

// Mine mines count blocks (evm_mine, anvil_mine): each intervalUs after the
// previous one, or with intervalUs 0 each at the next auction tick — the
// node's time jumps to the earliest tick that has work (a book's pending
// intents, a resting order's expiry, a perp market's interval, a
// withdrawal batch), or on an idle venue to the next slot of the tick grid,
// and every tick due then runs (a tick already due runs without a jump).
// The channel yields once everything is durable and the last block's time
// is past-perfect.
// REQUIRES: 0 <= intervalUs, count × intervalUs <= TimeJumpMaxUs.
func (n *Node) Mine(count int, intervalUs int64) (<-chan error, error) {
	grid := n.tickGridUs()
	next := func(now int64) (int64, error) {
		if intervalUs > 0 {
			return now + intervalUs, nil
		}
		t, due := n.ledger.NextTickDue(now)
		switch {
		case due:
			return now, nil
		case t == math.MaxInt64 || t-now > TimeJumpMaxUs:
			return (now/grid + 1) * grid, nil
		}
		return t, nil
	}
	var wait <-chan error
	target := n.clock.NowMicros()
	for range count {
		w, t, err := n.step(next)
		if err != nil {
			return nil, err
		}
		if w != nil {
			wait = w // the log keeps order: the newest input's durability covers the others
		}
		target = t
	}
	return n.settle(wait, target), nil
}

// step moves the node's time to to(now) under the sequencer lock, as a
// logged clock offset, then runs the ticks due. It returns a channel that
// yields once the newest input it applied is durable (nil: none) and the
// new time.
func (n *Node) step(to func(now int64) (int64, error)) (<-chan error, int64, error) {
	n.lockSettled()
	now := n.clock.NowMicros()
	us, err := to(now)
	var wait <-chan error
	if err == nil && us > now {
		wait, err = n.jumpLocked(us)
	}
	n.mu.Unlock()
	if err != nil {
		return nil, 0, err
	}
	ticks, err := n.RunDueTicks()
	if err != nil {
		return nil, 0, err
	}
	if ticks != nil {
		wait = ticks
	}
	return wait, max(us, now), nil
}

// jumpLocked sets the clock offset so that the node's time reads us, as a
// logged input; the channel yields once it is durable.
// REQUIRES: n.mu held for writing; us > the node's time.
func (n *Node) jumpLocked(us int64) (<-chan error, error) {
	off := us - n.cfg.Clock.NowMicros()
	wait := make(chan error, 1)
	rej, err := n.submitLocked(&core.Input{Kind: core.InputClockOffset, TimeUs: off}, func(_ *Entry, err error) { wait <- err })
	if err != nil {
		return nil, err
	}
	if !rej.OK() {
		panic("BUG: the ledger refused a clock offset")
	}
	n.resumeOffset()
	n.clock.raise(us) // the source may have moved on since: never read below us
	return wait, nil
}

// settle returns a channel that yields once wait (nil: nothing) yields and
// the past-perfect time has reached target: the ticks' records are
// attested, so whatever a client reads after the answer
// (svc_pastPerfectTime, eth_blockNumber, receipts) is at the new time.
// Attestation takes about a group commit, so it polls every millisecond,
// for at most ControlSettleMax.
func (n *Node) settle(wait <-chan error, target int64) <-chan error {
	settled := make(chan error, 1)
	quit := n.quitCh()
	go func() {
		if wait != nil {
			if err := <-wait; err != nil {
				settled <- err
				return
			}
		}
		deadline := time.Now().Add(ControlSettleMax)
		for n.PastPerfectTime() < target {
			if time.Now().After(deadline) {
				settled <- errNotSettled
				return
			}
			select {
			case <-quit:
				settled <- ErrStopped
				return
			case <-time.After(time.Millisecond):
			}
		}
		settled <- nil
	}()
	return settled
}

var errNotSettled = errors.New("the new time did not become past-perfect in time: is the committee short of a quorum?")
