package node

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/persist"
)

// Ticks. The orderbook clears at multiples of each market's auction
// interval, but only when it has work: the sequencer asks the ledger for the
// next due tick and applies it as an input (logged like any other, so a
// replay runs the same ticks). With the wall clock a goroutine wakes at
// every multiple of the tick grid; with the manual clock admin_advanceTime
// runs the due ticks itself.

// ErrTickStuck means the engine reported the same tick as due twice: a bug
// guard that stops the tick loop instead of spinning.
var ErrTickStuck = errors.New("BUG: the orderbook reported an executed tick as due again")

// RunDueTicks applies every auction tick due at the clock's current time,
// in order, each an input like any other (runTick). The returned
// channel yields once the last of them is durable (the log keeps order, so
// all are then); it is nil when no tick was due.
func (n *Node) RunDueTicks() (<-chan error, error) {
	n.tickMu.Lock()
	defer n.tickMu.Unlock()
	now := n.clock.NowMicros()
	last := int64(-1)
	var durable chan error
	for {
		n.mu.Lock()
		tickUs, ok, skip := n.nextTick(now) // lab.go: the strategy lab's skips and holds
		if !ok || n.stopErr != nil {
			n.mu.Unlock()
			return durable, nil
		}
		if tickUs <= last {
			n.mu.Unlock()
			return nil, ErrTickStuck
		}
		last = tickUs
		if skip {
			n.mu.Unlock()
			continue
		}
		wait := make(chan error, 1)
		start := time.Now()
		err := n.runTick(tickUs, func(_ *Entry, err error) { wait <- err })
		if err == nil {
			n.stats.observeTick(start, len(n.ledger.LastTick().Landed))
		}
		n.mu.Unlock()
		if err != nil {
			return nil, err
		}
		durable = wait
	}
}

// runTick applies the tick at tickUs in three steps (core/clob/stage.go):
// the ledger begins it under the lock; the lock is released while its
// leading spot books clear, so that transactions are admitted meanwhile,
// staged (submitLocked); the tick is then finished and logged under the
// lock, after the transactions staged during it, as an input like any
// other. A tick is one input still: a replay stages the same
// transactions, then runs the whole tick, to the same state. Its
// downstream stage then runs without the lock too, in a staging window
// (downstream.go).
// REQUIRES: n.mu held for writing, n.tickMu held; returns with n.mu held.
func (n *Node) runTick(tickUs int64, done func(*Entry, error)) error {
	if n.inflight.Load() >= MaxInflight {
		return ErrOverloaded
	}
	start := time.Now()
	n.ledger.BeginTick(tickUs)
	n.ticking, n.clearing = true, true
	n.ppView.pending.Add(1) // the tick is in flight from now: PastPerfectTime
	held := time.Since(start)
	n.mu.Unlock()
	var hooked sync.WaitGroup
	if hook := n.cfg.DuringClearing; hook != nil {
		// Beside the clearing, not after it: what the hook admits races
		// with the clearing as a client's send would (the race detector
		// sees them as concurrent).
		hooked.Go(hook)
	}
	n.ledger.ClearConcurrent()
	hooked.Wait()
	n.mu.Lock()
	relocked := time.Now()
	defer func() { n.stats.tickHoldSeconds.Observe(held.Seconds()) }()
	n.ticking, n.clearing = false, false
	n.tickDone.Broadcast()
	n.ppView.pending.Add(-1) // submitLocked counts it again
	in := &core.Input{Kind: core.InputTick, TimeUs: tickUs}
	if n.stopErr != nil {
		// Stopped meanwhile (Close, a failed write): finish the tick in
		// memory, unlogged, so that the state is whole for a dump.
		n.ledger.Apply(in)
		held += time.Since(relocked)
		return n.stopErr
	}
	n.deferTick = !n.cfg.InlineDownstream
	inputDone := done
	if n.deferTick {
		inputDone = nil // answered with its record (downstreamWindow)
	}
	_, err := n.submitLocked(in, inputDone)
	n.deferTick = false
	held += time.Since(relocked)
	if d := n.downstream; d != nil {
		n.downstream = nil
		held += n.downstreamWindow(d, done)
	}
	return err
}

// lockSettled takes mu for writing once no tick's books are clearing: for
// whoever reads or changes what the clearing may be writing (the engine's
// books, the whole state).
func (n *Node) lockSettled() {
	n.mu.Lock()
	for n.ticking {
		n.tickDone.Wait()
	}
}

// tickGridUs is the greatest common divisor of every market's interval and
// the transfer interval: every tick time is a multiple of it.
func (n *Node) tickGridUs() int64 {
	g := int64(clob.TransferIntervalUs)
	n.mu.RLock()
	ob := n.ledger.Orderbook()
	for _, id := range ob.AppendMarkets(nil) {
		if m, ok := ob.Market(id); ok {
			g = gcd(g, m.IntervalUs)
		}
	}
	n.mu.RUnlock()
	return g
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// followIdleSlots is how many slots a follower waits for the leader's tick
// of a slot before it reports the slot idle.
const followIdleSlots = 2

// ticker drives ticks from the wall clock. A slot of the grid that has no
// tick due is reported to the publisher as idle: newHeads and past-perfect
// time move on an idle node too. A slot runs only once the node's time has
// reached it, so slots increase strictly even when the wall clock steps
// back (the node's time then holds until the wall clock catches up).
func (n *Node) ticker() {
	defer n.wg.Done()
	for {
		grid := n.tickGridUs()
		now := n.clock.NowMicros()
		slotUs := (now/grid + 1) * grid
		select {
		case <-n.quit:
			return
		case <-time.After(time.Duration(slotUs-now) * time.Microsecond):
		}
		if n.clock.NowMicros() < slotUs {
			continue // the wall clock stepped back: wait for it
		}
		if n.Following() {
			// Ticks come from the leader, which may still send one for
			// this slot: a follower that has caught up reports a slot idle
			// followIdleSlots slots later, if no tick came for it or after
			// it by then (heads stay in order).
			idle := slotUs - followIdleSlots*grid
			if inputs, _ := n.Lag(); inputs == 0 && idle > n.LastTickUs() {
				n.publishIdleSlot(idle)
			}
			continue
		}
		durable, err := n.RunDueTicks()
		switch {
		case err != nil && n.cfg.Logf != nil:
			n.cfg.Logf("tick: %v", err)
		case err == nil && durable == nil:
			n.publishIdleSlot(slotUs)
		}
	}
}

// CreateMarket adds a market; done runs once the creation is durable.
func (n *Node) CreateMarket(cfg *clob.MarketConfig, done func(error)) error {
	rej, err := n.submit(&core.Input{Kind: core.InputCreateMarket, Market: *cfg}, func(_ *Entry, err error) { done(err) })
	if err != nil {
		return err
	}
	if !rej.OK() {
		return fmt.Errorf("market refused: %s", rej.Detail)
	}
	return nil
}

// afterApply keeps the node's views in step with an applied input; rec is
// its record and e its entry (nil for inputs without a record; e also nil
// for a replayed record the history already holds). A tick returns the
// links from the orderbook transactions it landed to itself, which the
// writer stores with it.
// REQUIRES: n.mu held, called right after the ledger applied in.
func (n *Node) afterApply(in *core.Input, rec *core.TxRecord, e *Entry) []persist.TickLink {
	links := n.applyViews(in, rec, e)
	n.publishInput(in, rec) // after applyViews: the books read the index
	return links
}

// applyViews is afterApply's part for the node's own bookkeeping: the
// intents awaiting their tick, the market index, the perp views and a
// tick's subscription record; publishInput then does the read views.
// REQUIRES: as afterApply.
func (n *Node) applyViews(in *core.Input, rec *core.TxRecord, e *Entry) []persist.TickLink {
	switch in.Kind {
	case core.InputTx:
		if rec != nil && core.LandsInTick(&in.Tx) { // an intent, or a withdrawal (its batch)
			n.awaiting[rec.Seq] = awaitRef{hash: rec.Tx.Hash, e: e}
		}
		if rec != nil && in.Tx.To == core.OrderbookAddress {
			n.idxMu.Lock()
			n.market.admitted(&rec.Tx, in.TimeUs, n.ledger.LastEnvelope())
			n.idxMu.Unlock()
			if env := n.ledger.LastEnvelope(); n.perp.admitted(&rec.Tx, env) && n.rviews.live {
				n.publishTriggers(envelopeOwner(&rec.Tx, env)) // its pending triggers are listed
			}
		}
	case core.InputTick:
		res := n.ledger.LastTick()
		n.lastTickUs = res.TickUs
		var links []persist.TickLink
		for _, tag := range res.Landed {
			if ref, ok := n.awaiting[tag]; ok {
				if ref.e != nil {
					ref.e.tick.Store(e)
				}
				links = append(links, persist.TickLink{Intent: ref.hash, TickUs: res.TickUs, TickHash: rec.Tx.Hash})
				delete(n.awaiting, tag)
			}
		}
		n.perp.tick(res, n.ledger.Orderbook())
		if n.rviews.live {
			for a := range n.perp.trigTouched {
				n.publishTriggers(a)
			}
		}
		d := &tickDownstream{res: res, books: n.rviews.live}
		if e != nil && !e.durable.Load() {
			// A live tick (a replayed one is durable already) is built and
			// stored even before a publisher is attached: perp markets tick
			// every interval, from start-up to shutdown, and a tick missing
			// from the store would cut the chain a restarted hub replays
			// `since` from (StoredTicks).
			d.build = n.prepareTick(res, e) // chains to the previous tick
		}
		n.lastTickHash = clob.Hash(rec.Tx.Hash)
		n.lastTick.Store(&TickRef{Us: res.TickUs, Hash: rec.Tx.Hash})
		if n.deferTick {
			n.downstream = d // runTick runs it without mu
			if d.build != nil {
				e.recordLater = true // before the writer can see e
			}
		} else {
			n.runDownstream(d)
		}
		return links
	case core.InputCreateMarket:
		n.idxMu.Lock()
		n.market.addMarket(&in.Market)
		n.market.idx.SyncPerp()
		n.idxMu.Unlock()
	case core.InputSetOracle, core.InputMoveOracle:
		n.idxMu.Lock()
		n.market.idx.SyncPerp()
		n.idxMu.Unlock()
	}
	return nil
}

// marketViews is the node's market-data index (core/marketdata), fed under the
// sequencer lock (and Node.idxMu) as inputs apply, read under either lock
// (ReadIndex, Node.Positions).
type marketViews struct {
	idx *marketdata.Index
	// hold: a tick's downstream stage is applying the tick to the index
	// without the sequencer lock; the orders admitted meanwhile wait in
	// held, in admission order, for release (after the index's Tick, as
	// in a replay).
	hold bool
	held []heldOrder
}

// heldOrder is an order admitted while the index was held.
type heldOrder struct {
	meta    marketdata.OrderMeta
	trigger bool
}

// release applies the held orders and ends the hold.
// REQUIRES: n.mu and n.idxMu held for writing.
func (v *marketViews) release() {
	v.hold = false
	for i := range v.held {
		v.record(&v.held[i].meta, v.held[i].trigger)
	}
	clear(v.held)
	v.held = v.held[:0]
}

// record adds an admitted order (or trigger) to the index, or holds it.
func (v *marketViews) record(m *marketdata.OrderMeta, trigger bool) {
	switch {
	case v.hold:
		v.held = append(v.held, heldOrder{meta: *m, trigger: trigger})
	case trigger:
		v.idx.AdmittedTrigger(m)
	default:
		v.idx.Admitted(m)
	}
}

func newMarketViews(live marketdata.Live) *marketViews {
	return &marketViews{idx: marketdata.New(live)}
}

func (v *marketViews) addMarket(cfg *clob.MarketConfig) { v.idx.AddMarket(cfg) }

func (v *marketViews) tick(res *clob.TickResult) { v.idx.Tick(res) }

// envelopeOwner is the account an orderbook transaction's intents act
// for: the delegation's master, else the signer.
func envelopeOwner(tx *core.Tx, env *clob.Envelope) clob.Address {
	if env.Delegated {
		return env.Master
	}
	return clob.Address(tx.From)
}

// admitted records the orders an admitted orderbook transaction created.
func (v *marketViews) admitted(tx *core.Tx, timeUs int64, env *clob.Envelope) {
	owner := envelopeOwner(tx, env)
	for i := range env.Intents {
		in := &env.Intents[i]
		if in.Kind != clob.IntentSubmit && in.Kind != clob.IntentSubmitTrigger {
			continue
		}
		m := marketdata.OrderMeta{
			ID: env.OrderIDOf(i, clob.Address(tx.From), tx.Nonce), Book: in.Book, Owner: owner,
			Signer: clob.Address(tx.From), TxHash: clob.Hash(tx.Hash), Nonce: tx.Nonce, Side: in.Side,
			Type: in.Type, Flags: in.Flags, Price: in.Price, Size: in.Size,
			DeadlineUs: int64(in.Deadline), TTLUs: int64(in.TTL), AdmittedUs: timeUs,
		}
		if in.Kind == clob.IntentSubmit {
			v.record(&m, false)
			continue
		}
		// The order a trigger becomes when it fires (marketdata.KindTriggered).
		m.Kind, m.TriggerType, m.Grouping = marketdata.KindTriggered, in.TriggerType, in.Grouping
		m.Type = clob.Limit
		if in.Price.IsZero() {
			m.Type = clob.Market
		}
		v.record(&m, true)
	}
}

// ReadIndex runs fn with the market index under the index's own read lock
// (Node.idxMu), not the sequencer's: for the answers the index gives alone
// (markets and their perp state as of the last SyncPerp, orders, candles,
// fills, backstop transfers), which then do not wait for a tick's auction,
// only for the index's own update after it. fn must not read what the
// index takes from the ledger or the engine (Positions and its balances:
// Node.Positions), nor keep anything it returns beyond its own return.
func (n *Node) ReadIndex(fn func(x *marketdata.Index)) {
	n.idxMu.RLock()
	defer n.idxMu.RUnlock()
	fn(n.market.idx)
}

// IndexBusy reports whether ReadIndex would wait now: the index is taking
// a tick's step (or an admitted order, or a writer waits for it). The RPC
// service then runs the read on a worker, not on its event loop.
func (n *Node) IndexBusy() bool {
	if n.idxMu.TryRLock() {
		n.idxMu.RUnlock()
		return false
	}
	return true
}
