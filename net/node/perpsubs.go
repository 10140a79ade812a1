package node

import (
	"slices"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
)

// Perp data on the subscription channels (net/subs doc.go, "Channels"):
// what buildTick adds to a tick of perp markets, and the node-side state it
// needs: the hash of the transaction behind each live trigger, the trigger
// intents admitted but not yet landed, and each perp market's last
// published mark and funding index.

// perpViews is the node's perp bookkeeping for publishing, fed under the
// sequencer lock.
type perpViews struct {
	// trigTx maps a stored (or landing) trigger's id to its transaction's
	// hash; an entry goes when the trigger fires or is cancelled, or when
	// its submit landed without storing it. So it is bounded by the live
	// triggers and the intents in flight. Not in the node's snapshot: after
	// a restart, triggers stored before it show tx_hash null.
	trigTx map[clob.Hash]clob.Hash
	// trigLanding lists, per book, the trigger intents admitted since that
	// book's last tick: its next tick lands them and pushes their owners'
	// triggers.
	trigLanding map[clob.Hash][]landing
	// trigTouched is the accounts whose triggers the last tick changed
	// (tick sets it, whether or not anyone publishes).
	trigTouched map[clob.Address]bool
	// marks holds each perp market's mark and funding index as last
	// published, to tell which moved.
	marks map[clob.Hash]perpMark
}

// landing is a trigger intent admitted but not landed: its owner, and the
// trigger's id for a submit.
type landing struct {
	owner  clob.Address
	id     clob.Hash
	submit bool
}

type perpMark struct {
	mark  uint256.Int
	index clob.Signed
}

func newPerpViews() perpViews {
	return perpViews{
		trigTx:      make(map[clob.Hash]clob.Hash),
		trigLanding: make(map[clob.Hash][]landing),
		trigTouched: make(map[clob.Address]bool),
		marks:       make(map[clob.Hash]perpMark),
	}
}

// admitted records the trigger intents of an admitted orderbook
// transaction and reports whether it had any.
func (v *perpViews) admitted(tx *core.Tx, env *clob.Envelope) (triggers bool) {
	owner := envelopeOwner(tx, env)
	for i := range env.Intents {
		in := &env.Intents[i]
		l := landing{owner: owner}
		switch in.Kind {
		case clob.IntentSubmitTrigger:
			l.id, l.submit = env.OrderIDOf(i, clob.Address(tx.From), tx.Nonce), true
			v.trigTx[l.id] = clob.Hash(tx.Hash)
		case clob.IntentCancelTrigger, clob.IntentUpdateTrigger:
		default:
			continue
		}
		v.trigLanding[in.Book] = append(v.trigLanding[in.Book], l)
		triggers = true
	}
	return triggers
}

// tick folds an applied tick in: the trigger intents of the books that
// ran have landed (a submit that stored nothing forgets its hash), and
// fired or cancelled triggers are gone.
func (v *perpViews) tick(res *clob.TickResult, ob *clob.Engine) {
	clear(v.trigTouched)
	for i := range res.Events {
		if ev := &res.Events[i]; ev.Kind == clob.EventTriggerFired || ev.Kind == clob.EventTriggerCancel {
			v.trigTouched[ev.Owner] = true
			delete(v.trigTx, ev.OrderID)
		}
	}
	var stored []clob.TriggerInfo
	for i := range res.Books {
		id := res.Books[i].Book
		for _, l := range v.trigLanding[id] {
			v.trigTouched[l.owner] = true
			if !l.submit {
				continue
			}
			stored = ob.AppendTriggers(stored[:0], l.owner)
			if !slices.ContainsFunc(stored, func(t clob.TriggerInfo) bool { return t.ID == l.id }) {
				delete(v.trigTx, l.id)
			}
		}
		delete(v.trigLanding, id)
	}
}

// equity is the ledger's equity of a (marketdata.EquityFunc): as the tick
// left it for an account the tick liquidated while its downstream runs
// (liquidatedEquity).
// REQUIRES: n.mu held, or a downstream window open on this goroutine.
func (n *Node) equity(a clob.Address) clob.Signed {
	if eq, ok := n.liqEquity[a]; ok {
		return eq
	}
	return n.ledger.Margin(core.Address(a)).Equity
}

// perpTick adds a tick's perp data to t: the triggers of every account the
// tick changed (perpViews.tick ran first), and extends owners with the
// accounts touched by liquidations and trigger events and with the
// watched accounts holding a position in a market whose mark or funding
// index moved (a perp market moves when it ran, in ran, or its funding
// accrued at this tick).
// REQUIRES: n.mu held, right after the tick applied.
func (n *Node) perpTick(t *tickrec.Tick, res *clob.TickResult, ran map[clob.Hash]bool, owners map[clob.Address]bool) {
	ob := n.ledger.Orderbook()
	pv := &n.perp
	for i := range res.Events {
		switch ev := &res.Events[i]; ev.Kind {
		case clob.EventLiquidation:
			owners[ev.Owner], owners[clob.BackstopAddress] = true, true
		case clob.EventTriggerFired, clob.EventTriggerCancel:
			owners[ev.Owner] = true
		}
	}
	moved := make(map[clob.Hash]bool)
	for _, id := range ob.AppendMarkets(nil) {
		p, ok := ob.PerpMarket(id) // false for a spot market
		if !ok || !ran[id] && p.FundingLastUs != res.TickUs {
			continue
		}
		now := perpMark{mark: p.Mark, index: p.FundingIndex}
		if pv.marks[id] != now {
			pv.marks[id] = now
			moved[id] = true
		}
	}
	if len(moved) > 0 && n.pub != nil { // no publisher yet: nobody watches
		var ps []clob.PositionInfo
		for _, a := range n.pub.WatchedPositions(nil) {
			if owners[a] {
				continue
			}
			ps = ob.AppendPositions(ps[:0], a)
			if slices.ContainsFunc(ps, func(p clob.PositionInfo) bool { return moved[p.Book] }) {
				owners[a] = true
			}
		}
	}
	for _, a := range sortedOwners(pv.trigTouched) {
		t.Triggers = append(t.Triggers, tickrec.AccountTriggers{Account: a, Triggers: n.triggersLocked(a)})
	}
}

// triggersLocked lists a's stored triggers with their transactions' hashes.
// REQUIRES: n.mu held (read or write).
func (n *Node) triggersLocked(a clob.Address) []marketdata.Trigger {
	infos := n.ledger.Orderbook().AppendTriggers(nil, a)
	out := make([]marketdata.Trigger, len(infos))
	for i := range infos {
		out[i].Info = infos[i]
		out[i].TxHash, out[i].HasTx = n.perp.trigTx[infos[i].ID]
	}
	return out
}
