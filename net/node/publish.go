package node

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
	"github.com/ledgervenue/node/net/subs"
)

// Publishing to subscriptions. The node builds each tick's tickrec.Tick
// right after the tick applied: what it reads of the ledger under the
// sequencer lock (prepareTick), the rest in the tick's downstream stage
// (finishTick, downstream.go), while the engine's levels and the index are
// still exactly the tick's. It hands the record to the publisher only once
// the tick is durable: a subscriber never sees a fill that a crash could
// take back. Attested receipts go to Publisher.Attested after each
// batch.

// PublishDepthMax bounds the levels per side a tick publishes for
// svc_orderbook (a subscriber's depth slices it further).
const PublishDepthMax = 100

// ReplayTicks is the subscription hub's replay buffer in ticks (rpc.NewHub
// configures the hub with it). The node stores the newest ReplayTicks+1
// published ticks: the extra one sets the restored buffer's floor exactly
// where a hub that never stopped would have it (subs.Hub.Preload).
const ReplayTicks = subs.ReplayTicksDefault

// Publisher receives what the node made durable or attested.
type Publisher interface {
	// PublishTick takes t (see tickrec.Tick for ownership). Called on the
	// node's writer goroutine, in tick order; must not block.
	PublishTick(t *tickrec.Tick)
	// Attested receives each attested group's receipts, in attestation
	// order, on the attester goroutine; must not block. The receipts are
	// consistent copies.
	Attested(rs []Receipt)
	// IdleSlot reports an auction slot the wall clock reached with no tick
	// due (t carries only the header fields: TickUs, Hash, ParentHash) and
	// the past-perfect time then, so that heads and time move on an idle
	// node. Called on the ticker goroutine; must not block.
	IdleSlot(t tickrec.Tick, pastPerfectUs int64)
	// WatchedPositions appends the accounts with an svc_positions
	// subscription (subs.Hub.WatchedPositions). Called under the node's
	// sequencer lock: must take no lock (the hub's is one atomic load)
	// and must not call into the node.
	WatchedPositions(dst []clob.Address) []clob.Address
	// Reverted says the node's state was replaced (evm_revert,
	// anvil_loadState: revert.go): what was published before is no longer
	// its history; ticks and floorUs are what to preload instead (as
	// SetPublisherWith gives them). Called with the pipeline stopped,
	// before it starts again; may call into the node.
	Reverted(ticks []*tickrec.Tick, floorUs int64, err error)
}

// idleSlotDomain prefixes the hash of an idle slot's header.
const idleSlotDomain = "ledgervenue/idle-slot/v1"

// publishIdleSlot reports slotUs, which ran no tick, to the publisher. Its
// header hash is keccak256(idleSlotDomain ‖ slotUs as 8 big-endian bytes);
// its parent is the newest tick, which stays the parent of the next tick:
// idle slots hang off the chain of ticks, none is another's parent.
func (n *Node) publishIdleSlot(slotUs int64) {
	n.mu.RLock()
	pub, parent := n.pub, n.lastTickHash
	n.mu.RUnlock()
	if pub == nil {
		return
	}
	var be [8]byte
	binary.BigEndian.PutUint64(be[:], uint64(slotUs))
	hash := core.Keccak256Hash([]byte(idleSlotDomain), be[:])
	pub.IdleSlot(tickrec.Tick{TickUs: slotUs, Hash: clob.Hash(hash), ParentHash: parent}, n.PastPerfectTime())
}

// SetPublisherWith installs the publisher attach returns, given the stored
// ticks (StoredTicks) and the time of the newest of them (else of the
// newest tick applied): the floor a hub preloading them starts from. It
// all happens under the sequencer lock, so each tick is either among those
// given or published to the new publisher once durable, never neither: a
// tick that became durable between a hub's reading of the floor and of
// the ticks used to cost it its whole replay buffer. The lock holds the
// sequencer for one read of the stored ticks (ReplayTicks + 1 at most):
// for start-up. attach must not call into the node.
func (n *Node) SetPublisherWith(attach func(ticks []*tickrec.Tick, floorUs int64, err error) Publisher) {
	n.mu.Lock()
	defer n.mu.Unlock()
	pub := attach(n.preloadTicks())
	n.pubMu.Lock()
	n.pub = pub
	n.pubMu.Unlock()
}

// preloadTicks returns what a hub starting over preloads: the stored ticks
// and the floor, the newest of their times (else the newest tick applied).
// REQUIRES: n.mu held, or the pipeline stopped.
func (n *Node) preloadTicks() ([]*tickrec.Tick, int64, error) {
	ticks, err := n.StoredTicks()
	floorUs := n.lastTickUs
	if len(ticks) > 0 {
		floorUs = ticks[len(ticks)-1].TickUs
	}
	return ticks, floorUs, err
}

// tickBuild is a tick's subscription record while it is built, in two
// halves: prepareTick reads what the ledger holds (owners' balances,
// margins and perp positions, triggers, withdrawals) under the sequencer's
// lock right after the tick applied; finishTick adds what the market index
// and the engine's books give (orders, levels, markets, spot positions at
// the new prices) once the index has applied the tick, which the tick's
// downstream stage does without the sequencer's lock (downstream.go).
type tickBuild struct {
	t      *tickrec.Tick
	e      *Entry
	ran    map[clob.Hash]bool // the books the tick ran
	owners []ownerHoldings    // ascending by account
	// spot is each owner's cash and locked balance in each market's base
	// token (keyed token, owner), as the tick left them.
	spot map[[2]clob.Address][2]uint256.Int
}

// ownerHoldings is what the ledger holds of one owner of the tick.
type ownerHoldings struct {
	account clob.Address
	perps   []clob.PositionInfo
	margin  clob.MarginInfo
}

// prepareTick reads what a tick's record needs of the ledger.
// REQUIRES: n.mu held; the ledger's LastTick is this tick, e its entry.
func (n *Node) prepareTick(res *clob.TickResult, e *Entry) *tickBuild {
	ob := n.ledger.Orderbook()
	t := &tickrec.Tick{TickUs: res.TickUs, Hash: clob.Hash(e.Rec.Tx.Hash), ParentHash: n.lastTickHash}
	owners := make(map[clob.Address]bool)
	ran := make(map[clob.Hash]bool, len(res.Books))
	for i := range res.Books {
		bt := &res.Books[i]
		ran[bt.Book] = true
		for j := bt.FirstEvent; j < bt.EndEvent; j++ {
			owners[res.Events[j].Owner] = true
		}
	}
	for i := range res.Events {
		if ev := &res.Events[i]; ev.Kind == clob.EventTransfer {
			owners[ev.Owner], owners[ev.To] = true, true
		}
	}
	n.perpTick(t, res, ran, owners)
	var bases []clob.Address // each market's base token, once
	for _, id := range ob.AppendMarkets(nil) {
		if m, ok := ob.Market(id); ok && !slices.Contains(bases, m.Base) {
			bases = append(bases, m.Base)
		}
	}
	b := &tickBuild{t: t, e: e, ran: ran, spot: make(map[[2]clob.Address][2]uint256.Int, len(owners)*len(bases))}
	for _, a := range sortedOwners(owners) {
		b.owners = append(b.owners, ownerHoldings{account: a,
			perps: n.ledger.Positions(nil, core.Address(a)), margin: n.ledger.Margin(core.Address(a))})
		for _, token := range bases {
			cash, locked := n.balances(token, a)
			b.spot[[2]clob.Address{token, a}] = [2]uint256.Int{cash, locked}
		}
	}
	n.recordWithdrawals(e, t)
	return b
}

// finishTick completes the record with what the index and the books give:
// each book's orders created and touched, its levels and modifications,
// the markets that ran, and the owners' positions.
// REQUIRES: the index has applied the tick (idxMu held, at least for
// reading); the engine's books and LastTick are still the tick's, and
// nothing but staged admissions changes the ledger meanwhile.
func (n *Node) finishTick(b *tickBuild, res *clob.TickResult) {
	t := b.t
	t.CopyResult(res)
	ob := n.ledger.Orderbook()
	idx := n.market.idx
	// The orders each book's events named, once each, as the index just
	// applied them: an order lands in Created or Touched once however many
	// events it has, by its first one.
	named := idx.TickOrders()
	t.Books = make([]tickrec.BookUpdate, len(res.Books))
	for i := range res.Books {
		bt := &res.Books[i]
		bu := &t.Books[i]
		// Sized once: a busy book lists thousands of orders, and growing a
		// list of OrderMeta (248 bytes each) copied each of them again.
		if bt.NewOrders > 0 {
			bu.Created = make([]marketdata.OrderMeta, 0, bt.NewOrders)
		}
		if n := bt.EndEvent - bt.FirstEvent - bt.NewOrders; n > 0 {
			bu.Touched = make([]marketdata.OrderMeta, 0, n)
		}
		buys := ob.AppendLevels(nil, bt.Book, clob.Buy, PublishDepthMax)
		sells := ob.AppendLevels(nil, bt.Book, clob.Sell, PublishDepthMax)
		bu.Snapshot, _ = idx.Orderbook(bt.Book, buys, sells, 0)
		if m, ok := ob.Market(bt.Book); ok {
			bu.Kind = m.Kind
		}
		for ; len(named) > 0 && named[0].Event < bt.EndEvent; named = named[1:] {
			o, ev := named[0].Order, &res.Events[named[0].Event]
			if ev.Kind == clob.EventPlaced || o.EnteredUs == 0 || o.EnteredUs == res.TickUs {
				bu.Created = append(bu.Created, o.Meta)
			} else {
				bu.Touched = append(bu.Touched, o.Meta)
			}
		}
		for j := bt.FirstEvent; j < bt.EndEvent; j++ {
			if ev := &res.Events[j]; ev.Kind == clob.EventUpdate {
				if info, ok := ob.Order(ev.OrderID); ok {
					bu.Modified = append(bu.Modified, tickrec.Modification{OrderID: ev.OrderID, Price: info.Price, Size: info.Remaining})
				}
			}
		}
	}
	for _, m := range idx.Markets(nil) {
		// A perp market runs every interval, whether or not its book had
		// work: its funding accrued in this tick.
		if b.ran[m.Config.ID] || m.HasPerp && m.Perp.FundingLastUs == res.TickUs {
			t.Markets = append(t.Markets, m)
		}
	}
	spot := func(token, a clob.Address) (cash, locked uint256.Int) {
		h := b.spot[[2]clob.Address{token, a}]
		return h[0], h[1]
	}
	for i := range b.owners {
		o := &b.owners[i]
		t.Positions = append(t.Positions, tickrec.AccountPositions{Account: o.account, Data: marketdata.PositionsData{
			Spot: idx.Positions(nil, o.account, spot), Perps: idx.PerpPositions(nil, o.perps), Margin: o.margin, HasMargin: true}})
	}
}

// balances reads the ledger for the index's positions.
// REQUIRES: n.mu held.
func (n *Node) balances(token, a clob.Address) (cash, locked uint256.Int) {
	b := n.ledger.Balance(core.Address(token), core.Address(a))
	return b.Cash, b.Locked
}

// sortedOwners lists the set's accounts in ascending order, so a tick's
// positions come out in the same order every time.
func sortedOwners(set map[clob.Address]bool) []clob.Address {
	out := make([]clob.Address, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b clob.Address) int { return bytes.Compare(a[:], b[:]) })
	return out
}

// StoredTicks returns the ticks stored with their inputs, oldest first,
// for subs.Hub.Preload: the newest run of them chained by ParentHash. Every
// tick is stored, with or without a publisher; a data directory written
// before that rule can have gaps, and a gap cuts the run. An error (a
// stored tick that does not decode) means: run without them.
func (n *Node) StoredTicks() ([]*tickrec.Tick, error) {
	stored, err := n.log.Ticks()
	if err != nil {
		return nil, err
	}
	ticks := make([]*tickrec.Tick, len(stored))
	for i := range stored {
		t, err := tickrec.DecodeTick(stored[i].Body)
		if err == nil && t.TickUs != stored[i].TickUs {
			err = fmt.Errorf("it holds the tick at %d", t.TickUs)
		}
		if err != nil {
			return nil, fmt.Errorf("stored tick at %d: %w", stored[i].TickUs, err)
		}
		ticks[i] = t
	}
	first := len(ticks) - 1
	for first > 0 && ticks[first].ParentHash == ticks[first-1].Hash {
		first--
	}
	return ticks[max(first, 0):], nil
}

// TickRef names an auction tick: its time and its record's hash.
type TickRef struct {
	Us   int64
	Hash core.Hash
}

// LastTick returns the newest auction tick applied; false before any. It
// takes no lock: an event loop may call it.
func (n *Node) LastTick() (TickRef, bool) {
	if t := n.lastTick.Load(); t != nil {
		return *t, true
	}
	return TickRef{}, false
}

// LastTickUs is the time of the newest auction tick applied (0 before any).
func (n *Node) LastTickUs() int64 {
	t, _ := n.LastTick()
	return t.Us
}

// Markets answers the ob_getMarkets entries, perp markets with their live
// state (the hub's svc_markets snapshot for markets no tick has covered
// since start).
func (n *Node) Markets() []marketdata.Market {
	n.idxMu.RLock()
	defer n.idxMu.RUnlock()
	return n.market.idx.Markets(nil)
}
