package subs

import (
	"errors"
	"fmt"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/tickrec"
)

// Preload restores the replay buffer after a restart from ticks the node
// published before it (typically kept with tickrec.AppendTick and read
// back with tickrec.DecodeTick), so that a client resuming with a since from before the
// restart gets the ticks it missed instead of -32602. It takes the ticks,
// as PublishTick does.
//
// ticks must be the node's newest ticks, oldest first, each chained to the
// one before (ParentHash = previous Hash), the newest being the node's last
// tick (Config.FloorUs). At most ReplayTicks of them are kept; every one
// given counts:
//
//   - the newest ReplayTicks enter the buffer as if published and fanned out
//     before any subscription existed: a since at or after the floor
//     replays the ones after it, byte for byte as a live hub would;
//   - the floor (a since below it gets -32602) is the tick just before the
//     kept ones when one was given; else 0 when ticks[0] is the ledger's
//     first tick (zero ParentHash); else ticks[0]'s time, since ticks
//     before it are unknown (ticks[0] then only bounds the range);
//   - the market and position entries of every tick given become the
//     latest state, in order, as PublishTick records them: the svc_markets
//     and svc_positions snapshots are those a live hub would send.
//
// The next PublishTick must chain on the newest tick given: if its
// ParentHash differs, the preloaded ticks were not this ledger's history,
// and the hub forgets them (the floor rises to Config.FloorUs, the state
// entries go) rather than replay them.
//
// Preload returns an error, and changes nothing, when ticks break those
// rules or one of them is not a tick PublishTick accepts: the caller then
// runs without them (as before Preload existed).
//
// REQUIRES: called at most once (a call that returned an error does not
// count), before the first PublishTick and the first Subscribe.
func (h *Hub) Preload(ticks []*tickrec.Tick) error {
	if err := checkPreload(ticks, h.cfg.FloorUs); err != nil {
		return fmt.Errorf("cannot preload the replay buffer: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ringMu.Lock()
	defer h.ringMu.Unlock()
	if h.preloaded || h.tickHead != 0 || h.nextID != 0 || h.pubClosed {
		panic("BUG: subs.Hub.Preload must come once, before any PublishTick and Subscribe")
	}
	h.preloadLocked(ticks)
	return nil
}

// preloadLocked is Preload's work, on checked ticks.
// REQUIRES: h.mu and h.ringMu held.
func (h *Hub) preloadLocked(ticks []*tickrec.Tick) {
	h.preloaded = true
	if len(ticks) == 0 {
		return
	}
	n := len(ticks)
	keep := min(n, len(h.ticks))
	switch {
	case keep < n:
		h.floorUs = ticks[n-keep-1].TickUs
	case ticks[0].ParentHash == clob.Hash{}:
		h.floorUs = 0
	default:
		h.floorUs = ticks[0].TickUs
	}
	for i, t := range ticks {
		seq := uint64(i - (n - keep)) // meaningful for the kept ones only
		r := newTickRec(seq, t)
		if i >= n-keep {
			h.ticks[seq] = r
		}
		h.recordState(r)
	}
	newest := ticks[n-1]
	h.tickFirst, h.tickHead = 0, uint64(keep)
	h.lastPubUs = newest.TickUs
	h.chainCheck, h.chainHash = true, newest.Hash
	// Fanned out already: no subscription existed to receive them.
	h.tickNext = uint64(keep)
	h.doneUs, h.hasDone = newest.TickUs, true
}

// PreloadReceipts refills the receipts ring after a restart from the
// node's history, so that svc_accountReceipts and svc_confirmedReceipts
// with a since from before the restart replay the receipts attested after
// it, as a hub that never stopped would (logs has no replay). rs are the
// node's newest attested receipts, oldest first; the newest
// ReceiptsRingSize are kept. floorUs is the attestation time of the newest
// receipt not given (-1 when rs start at the ledger's first receipt): a
// since below it, or below a receipt given but not kept, gets -32602.
//
// It returns an error, and changes nothing, when the attestation times in
// rs decrease: the caller then runs without them.
//
// REQUIRES: called at most once, before the first PublishReceipts and the
// first Subscribe.
func (h *Hub) PreloadReceipts(rs []Receipt, floorUs int64) error {
	if err := checkReceipts(rs); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ringMu.Lock()
	defer h.ringMu.Unlock()
	if h.rcptHead != 0 || h.nextID != 0 || h.pubClosed {
		panic("BUG: subs.Hub.PreloadReceipts must come once, before any PublishReceipts and Subscribe")
	}
	h.preloadReceiptsLocked(rs, floorUs)
	return nil
}

// preloadReceiptsLocked is PreloadReceipts' work, on checked receipts.
// REQUIRES: h.mu and h.ringMu held.
func (h *Hub) preloadReceiptsLocked(rs []Receipt, floorUs int64) {
	h.rcptFloorUs = floorUs
	h.pushReceipts(rs)
	// Fanned out already: no subscription existed to receive them.
	h.rcptNext = h.rcptHead
	if n := len(rs); n > 0 {
		h.rcptUs, h.hasRcpt = rs[n-1].TimeUs, true
	}
}

// checkPreload verifies that ticks are a chain of valid ticks ending at the
// node's last tick lastUs.
func checkPreload(ticks []*tickrec.Tick, lastUs int64) error {
	for i, t := range ticks {
		if t == nil {
			return fmt.Errorf("tick %d is nil", i)
		}
		if err := tickrec.Check(t); err != nil {
			return fmt.Errorf("tick %d at %d: %w", i, t.TickUs, err)
		}
		if i == 0 {
			continue
		}
		prev := ticks[i-1]
		if t.TickUs <= prev.TickUs {
			return fmt.Errorf("tick %d at %d does not follow %d", i, t.TickUs, prev.TickUs)
		}
		if t.ParentHash != prev.Hash {
			return fmt.Errorf("tick %d at %d does not chain on the tick at %d (parent %x, previous hash %x)",
				i, t.TickUs, prev.TickUs, t.ParentHash[:4], prev.Hash[:4])
		}
	}
	if n := len(ticks); n > 0 && ticks[n-1].TickUs != lastUs {
		return fmt.Errorf("the newest tick is at %d, the node's last tick (Config.FloorUs) at %d", ticks[n-1].TickUs, lastUs)
	}
	return nil
}

// distrustPreloaded forgets the preloaded ticks: nothing before the first
// live tick is replayable, and their state entries go (Config.Markets and
// Config.Positions answer instead). REQUIRES: h.ringMu held.
func (h *Hub) distrustPreloaded() {
	h.floorUs = max(h.floorUs, h.lastPubUs)
	clear(h.latestMkt)
	clear(h.latestPos)
	clear(h.latestTrig)
}

// checkReceipts verifies that rs are in attestation order.
func checkReceipts(rs []Receipt) error {
	for i := 1; i < len(rs); i++ {
		if rs[i].TimeUs < rs[i-1].TimeUs {
			return fmt.Errorf("cannot preload the receipts: receipt %d at %d is older than the one before it at %d",
				i, rs[i].TimeUs, rs[i-1].TimeUs)
		}
	}
	return nil
}

// Reset is for a node whose state was replaced (evm_revert,
// anvil_loadState): what the hub holds is no longer the node's history. It
// delivers nothing more of it, ends every subscription with CodeReverted
// (not resumable) but those of newHeads and svc_pastPerfectTime, which hold
// nothing of the history and go on from the restored head and time (as
// anvil's newHeads go on across a revert), and empties the hub as New made
// it, with floorUs (the node's last tick now) as Config.FloorUs; then it
// preloads ticks and receipts as Preload and PreloadReceipts do, in the
// same critical section, so no subscription sees the hub between the two.
// Either that breaks their rules is left out, and the error says which.
// Subscription ids go on counting.
func (h *Hub) Reset(floorUs int64, ticks []*tickrec.Tick, rs []Receipt, rcptFloorUs int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closeAll(CodeReverted, func(c Channel) bool { return c == ChannelNewHeads || c == ChannelPastPerfectTime })
	h.ringMu.Lock()
	defer h.ringMu.Unlock()
	h.cfg.FloorUs = floorUs
	clear(h.ticks)
	h.tickHead, h.tickFirst, h.tickNext = 0, 0, 0
	h.floorUs, h.lastPubUs = floorUs, floorUs
	clear(h.rcpts)
	h.rcptHead, h.rcptFirst, h.rcptNext, h.rcptFloorUs = 0, 0, 0, -1
	clear(h.latestMkt)
	clear(h.latestPos)
	clear(h.latestTrig)
	h.pubPPT, h.pptUs, h.pptBody = -1, -1, nil
	h.pubIdle, h.idleUs = tickrec.Tick{}, 0
	h.doneUs, h.hasDone, h.rcptUs, h.hasRcpt = 0, false, 0, false
	h.preloaded, h.chainCheck, h.chainHash = false, false, clob.Hash{}
	var errs []error
	if err := checkPreload(ticks, floorUs); err != nil {
		errs = append(errs, fmt.Errorf("cannot preload the replay buffer: %w", err))
		ticks = nil
	}
	h.preloadLocked(ticks)
	if err := checkReceipts(rs); err != nil {
		errs = append(errs, err)
		rs, rcptFloorUs = nil, -1
	}
	h.preloadReceiptsLocked(rs, rcptFloorUs)
	return errors.Join(errs...)
}
