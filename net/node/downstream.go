package node

import (
	"sync"
	"time"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
)

// The tick's downstream stage (issue 24, item 2; docs/decisions.md,
// "The tick's downstream off the lock"). What a tick produces for the
// readers — the market index's Tick, the tick's subscription record
// (finishTick), the republished order books — is built after the tick has
// applied and been logged, without the sequencer's lock: runTick opens a
// staging window (core.Ledger.BeginStaging) and runs the stage on the
// ticker's goroutine while the sequencer admits, staged, the transactions
// that change neither the engine's books nor the last tick's result
// (plain transfers, new orders on spot books), and makes everything else
// wait for the window's end, as during a tick's clearing. What the stage
// reads of the ledger's accounts was read under the lock before it
// (prepareTick, liquidatedEquity); the staged admissions' orders reach the
// index after its Tick (marketViews.hold), as in a replay, which applies
// the same log with the stage in line.

// tickDownstream is one tick's downstream work.
type tickDownstream struct {
	res   *clob.TickResult // the ledger's LastTick: unchanged until the next tick begins
	build *tickBuild       // nil: nothing to build (a tick replayed from the store)
	books bool             // republish the books that ran (the read views are live)
}

// runDownstream applies the tick to the market index, republishes the
// books that ran and finishes the tick's record.
// REQUIRES: n.mu held, or a downstream window open (runTick); nobody else
// writes the index.
func (n *Node) runDownstream(d *tickDownstream) {
	n.idxMu.Lock()
	n.market.tick(d.res)
	n.market.idx.SyncPerp() // marks, funding, open interest moved
	if hook := n.cfg.DuringIndexStep; hook != nil && d.build != nil {
		hook()
	}
	n.idxMu.Unlock()
	n.idxMu.RLock()
	defer n.idxMu.RUnlock()
	if d.books && len(d.res.Books) > 0 {
		ids := make([]clob.Hash, len(d.res.Books))
		for i := range d.res.Books {
			ids[i] = d.res.Books[i].Book
		}
		n.publishBooks(ids)
	}
	if b := d.build; b != nil {
		n.finishTick(b, d.res)
		b.e.publish = b.t
	}
}

// downstreamWindow runs d without mu, in a staging window, queues the
// tick's record for the store (done answers the tick once it is stored),
// and returns how long it held mu to open and close the window.
// REQUIRES: n.mu held for writing (again on return); called by runTick.
func (n *Node) downstreamWindow(d *tickDownstream, done func(*Entry, error)) (held time.Duration) {
	start := time.Now()
	n.ledger.BeginStaging()
	n.ticking = true
	n.market.hold = true
	n.liqEquity = n.liquidatedEquity(d.res)
	held = time.Since(start)
	n.mu.Unlock()
	released := time.Now()
	var hooked sync.WaitGroup
	if hook := n.cfg.DuringDownstream; hook != nil {
		hooked.Go(hook) // beside the stage, as DuringClearing beside the clearing
	}
	n.runDownstream(d)
	hooked.Wait()
	if b := d.build; b != nil && !n.admitQ.push(admission{body: b.e, done: done}) {
		done(nil, ErrStopped) // the pipeline has stopped: the record is built again on restart
	}
	n.mu.Lock()
	start = time.Now()
	n.stats.tickDownstreamSeconds.Observe(start.Sub(released).Seconds())
	n.ledger.EndStaging()
	n.liqEquity = nil
	n.idxMu.Lock()
	n.market.release()
	n.idxMu.Unlock()
	n.ticking = false
	n.tickDone.Broadcast()
	return held + time.Since(start)
}

// liquidatedEquity reads the equity of each account the tick liquidated,
// which the index records with the backstop transfer (Node.equity), before
// staged transfers can move it.
// REQUIRES: n.mu held, right after the tick applied.
func (n *Node) liquidatedEquity(res *clob.TickResult) map[clob.Address]clob.Signed {
	var m map[clob.Address]clob.Signed
	for i := range res.Events {
		if ev := &res.Events[i]; ev.Kind == clob.EventLiquidation {
			if m == nil {
				m = make(map[clob.Address]clob.Signed)
			}
			m[ev.Owner] = n.ledger.Margin(core.Address(ev.Owner)).Equity
		}
	}
	return m
}
