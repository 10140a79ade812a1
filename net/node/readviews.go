package node

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
)

// Read views (doc.go, "Read views"): what the hot reads answer from without
// Node.mu. The sequencer is their only writer: right after the ledger
// applies an input, still under its lock, it republishes what the input
// changed, each as a new immutable value behind an atomic pointer. Readers
// load the pointer and never wait for the sequencer, a tick or the writer.
//
// An account's view is republished whole (nonce and every holding) from the
// ledger's own reads, so a reader gets one account as of one applied input.
// Which accounts an input changed is derived here, not asked of the core
// (whose API has no such report): publishInput lists them per input kind, and
// after a tick of a perp market (or an oracle change) every account whose
// margin depends on a mark (perpExposed) is republished too.
// TestReadViewsMatchLedger checks the derivation against the ledger after
// every input of a mixed spot, perp, transfer and withdrawal workload.

// shardsCount is the number of shards of a readers' map (a power of two).
const shardsCount = 64

// shardedMap is a map readers and the sequencer share. A shard's lock is
// held only around one map access, never across anything else: a reader
// waits at most for one insertion or deletion, never for an input.
type shardedMap[K comparable, V any] struct {
	shards [shardsCount]struct {
		mu sync.RWMutex
		m  map[K]V
	}
}

func newShardedMap[K comparable, V any]() *shardedMap[K, V] {
	m := new(shardedMap[K, V])
	for i := range m.shards {
		m.shards[i].m = make(map[K]V)
	}
	return m
}

// get returns the value of k; s is k's shard hint (its first byte: keys
// are addresses and hashes, uniformly spread).
func (m *shardedMap[K, V]) get(s byte, k K) (V, bool) {
	sh := &m.shards[s&(shardsCount-1)]
	sh.mu.RLock()
	v, ok := sh.m[k]
	sh.mu.RUnlock()
	return v, ok
}

func (m *shardedMap[K, V]) put(s byte, k K, v V) {
	sh := &m.shards[s&(shardsCount-1)]
	sh.mu.Lock()
	sh.m[k] = v
	sh.mu.Unlock()
}

// deleteIf removes k if drop(its value) is true.
func (m *shardedMap[K, V]) deleteIf(s byte, k K, drop func(V) bool) {
	sh := &m.shards[s&(shardsCount-1)]
	sh.mu.Lock()
	if v, ok := sh.m[k]; ok && drop(v) {
		delete(sh.m, k)
	}
	sh.mu.Unlock()
}

// entryIndex maps a record's hash to its entry: the records not yet
// attested and the newest attested ones (state.entries).
type entryIndex struct {
	m *shardedMap[core.Hash, *Entry]
}

func newEntryIndex() entryIndex { return entryIndex{newShardedMap[core.Hash, *Entry]()} }

func (x entryIndex) get(h core.Hash) *Entry {
	e, _ := x.m.get(h[0], h)
	return e
}

// len counts the entries (tests).
func (x entryIndex) len() int {
	total := 0
	for i := range x.m.shards {
		sh := &x.m.shards[i]
		sh.mu.RLock()
		total += len(sh.m)
		sh.mu.RUnlock()
	}
	return total
}

// REQUIRES: n.mu held for writing (the sequencer, a start-up).
func (x entryIndex) put(h core.Hash, e *Entry) { x.m.put(h[0], h, e) }

// deleteIf removes h's entry if it is e.
// REQUIRES: n.mu held for writing.
func (x entryIndex) deleteIf(h core.Hash, e *Entry) {
	x.m.deleteIf(h[0], h, func(v *Entry) bool { return v == e })
}

// holdingView is one holding of an account as of one applied input.
type holdingView struct {
	token core.Address
	bal   core.Balance
}

// accountView is one account as of one applied input. Immutable once
// published.
type accountView struct {
	nonce uint64
	// withdrawable is the native withdrawable balance (the margin's: it
	// needs the engine, so it is computed here, not by the reader).
	withdrawable uint256.Int
	// holdings[0] is the native collateral; the other tokens follow,
	// ascending, those with a zero balance left out.
	holdings []holdingView
	// margin is the cross-margin summary of an account with a perp
	// position or perp orders, nil for the others (whose summary is their
	// native cash alone: marginOf), and perps its open perp positions:
	// ob_getPositions' ledger part, and what ob_getRankedPositions ranks.
	margin *clob.MarginInfo
	perps  []clob.PositionInfo
	// newest is the account's newest transaction (hasNewest: it has one);
	// locked says the account is locked, newest then being its recovery
	// target (core.Ledger.RecoveryTarget).
	newest    core.TxRef
	hasNewest bool
	locked    bool
}

func (v *accountView) holding(token core.Address) *holdingView {
	if token == core.NativeToken {
		return &v.holdings[0]
	}
	for i := 1; i < len(v.holdings); i++ {
		if v.holdings[i].token == token {
			return &v.holdings[i]
		}
	}
	return nil
}

// readViews are the read views of one state (a revert replaces them with
// the state). Readers reach them through Node.views; the fields below the
// line are the sequencer's bookkeeping, guarded by Node.mu.
type readViews struct {
	accounts *shardedMap[core.Address, *atomic.Pointer[accountView]]
	entries  entryIndex
	baseFee  atomic.Pointer[uint256.Int]
	// books holds ob_getOrderbook's answer of every book at full depth,
	// replaced (copy on write) after every input that changes one.
	books atomic.Pointer[map[clob.Hash]*marketdata.Snapshot]
	// triggers holds each account's live triggers with their transactions'
	// hashes (triggersLocked), republished after every input that changes
	// them; an account without one has none or an empty list.
	triggers *shardedMap[clob.Address, []marketdata.Trigger]
	// finalized is each account's newest attested transaction, written by
	// the attester (finalize).
	finalized *shardedMap[core.Address, core.TxRef]
	// positioned is the accounts with an open perp position, the backstop
	// included, ascending; republished when one opens its first or closes
	// its last. ranked counts the republished views of those accounts, so
	// that a ranking (ByPnL) is kept until one of them changes.
	positioned atomic.Pointer[[]core.Address]
	ranked     atomic.Uint64

	// live: publish as inputs apply; false while load replays the log (one
	// rebuild at its end publishes everything).
	live bool
	// tokens is every token an account may hold besides the native one:
	// genesis, deposit and market tokens, ascending.
	tokens []core.Address
	// perpExposed is the accounts whose margin may depend on a mark: those
	// with a perp position or perp orders (a superset: it is pruned when an
	// account is found flat).
	perpExposed map[core.Address]struct{}
	// touched is the accounts the input being applied changed (with
	// repeats until publishInput sorts them).
	touched []core.Address
	// positions is positioned's set; moved says it changed since
	// positioned was published.
	positions map[core.Address]struct{}
	moved     bool
}

func newReadViews() *readViews {
	v := &readViews{
		accounts:    newShardedMap[core.Address, *atomic.Pointer[accountView]](),
		entries:     newEntryIndex(),
		triggers:    newShardedMap[clob.Address, []marketdata.Trigger](),
		finalized:   newShardedMap[core.Address, core.TxRef](),
		perpExposed: make(map[core.Address]struct{}),
		positions:   make(map[core.Address]struct{}),
	}
	v.positioned.Store(&[]core.Address{})
	return v
}

// addToken notes a token accounts may hold.
func (v *readViews) addToken(t core.Address) {
	if t == core.NativeToken {
		return
	}
	if i, found := slices.BinarySearchFunc(v.tokens, t, compareAddress); !found {
		v.tokens = slices.Insert(v.tokens, i, t)
	}
}

func compareAddress(a, b core.Address) int { return bytes.Compare(a[:], b[:]) }

// touch notes that the input being applied changed a.
func (v *readViews) touch(a core.Address) { v.touched = append(v.touched, a) }

// publishAccount republishes a from the ledger.
// REQUIRES: n.mu held for writing.
func (n *Node) publishAccount(a core.Address) {
	v := n.rviews
	l := n.ledger
	m := l.Margin(a)
	nat := l.Balance(core.NativeToken, a)
	av := &accountView{nonce: l.Nonce(a), withdrawable: m.Withdrawable, holdings: make([]holdingView, 1, 1+len(v.tokens))}
	av.holdings[0] = holdingView{token: core.NativeToken, bal: nat}
	for _, t := range v.tokens {
		if b := l.Balance(t, a); !b.Cash.IsZero() || !b.Debt.IsZero() { // Locked ≤ Cash
			av.holdings = append(av.holdings, holdingView{token: t, bal: b})
		}
	}
	av.newest, av.hasNewest = l.Newest(a)
	_, av.locked = l.RecoveryTarget(a)
	if m.Positions > 0 || !m.OrderMargin.IsZero() {
		av.margin = new(clob.MarginInfo)
		*av.margin = m
		v.perpExposed[a] = struct{}{}
	} else {
		delete(v.perpExposed, a)
	}
	_, was := v.positions[a]
	if m.Positions > 0 {
		av.perps = l.Positions(nil, a)
		v.positions[a] = struct{}{}
	} else {
		delete(v.positions, a)
	}
	if is := m.Positions > 0; is != was {
		v.moved = true // positioned is republished once per input (publishPositioned)
	}
	if p, ok := v.accounts.get(a[0], a); ok {
		p.Store(av)
	} else {
		p = new(atomic.Pointer[accountView])
		p.Store(av)
		v.accounts.put(a[0], a, p)
	}
	// After the view: a ranking read before the count moves is not kept.
	if m.Positions > 0 || was {
		v.ranked.Add(1)
	}
}

// publishPositioned republishes positioned from its set if it changed,
// then moves the ranking's count (a ranking of the old list is not kept).
func (v *readViews) publishPositioned() {
	if !v.moved {
		return
	}
	v.moved = false
	defer v.ranked.Add(1)
	list := make([]core.Address, 0, len(v.positions))
	for a := range v.positions {
		list = append(list, a)
	}
	slices.SortFunc(list, compareAddress)
	v.positioned.Store(&list)
}

// publishTriggers republishes a's triggers.
// REQUIRES: n.mu held for writing.
func (n *Node) publishTriggers(a clob.Address) {
	n.rviews.triggers.put(a[0], a, n.triggersLocked(a))
}

// publishInput republishes what in (just applied, with record rec) changed.
// REQUIRES: n.mu held for writing, right after the ledger applied in.
func (n *Node) publishInput(in *core.Input, rec *core.TxRecord) {
	v := n.rviews
	if !v.live {
		return
	}
	perp := false
	switch in.Kind {
	case core.InputTx:
		if rec == nil {
			return
		}
		v.touch(in.Tx.From)
		if in.Tx.HasTo {
			v.touch(in.Tx.To)
		}
		switch in.Tx.To {
		case core.OrderbookAddress:
			env := n.ledger.LastEnvelope()
			if env.Delegated {
				v.touch(core.Address(env.Master))
			}
		case core.MintAddress:
			m := n.ledger.LastMint()
			v.touch(m.To)
			for i := range m.Tokens {
				v.addToken(m.Tokens[i].Token)
			}
		}
	case core.InputDeposit:
		v.addToken(in.Token)
		v.touch(in.To)
	case core.InputSetBaseFee:
		fee := n.ledger.BaseFee()
		v.baseFee.Store(&fee)
	case core.InputTick:
		perp = n.touchTick()
	case core.InputCreateMarket:
		v.addToken(core.Address(in.Market.Base))
		v.addToken(core.Address(in.Market.Quote))
		n.publishBooks(nil)
	case core.InputSetOracle, core.InputMoveOracle:
		perp = true
		n.publishBooks([]clob.Hash{in.Book})
	case core.InputLockAccount, core.InputSetBalance, core.InputSetNonce:
		v.touch(in.To)
	}
	if perp {
		for a := range v.perpExposed {
			v.touch(a)
		}
	}
	if len(v.touched) > 1 {
		slices.SortFunc(v.touched, compareAddress)
		v.touched = slices.Compact(v.touched)
	}
	for _, a := range v.touched {
		n.publishAccount(a)
	}
	v.publishPositioned()
	v.touched = v.touched[:0]
}

// touchTick notes the accounts the tick just applied changed, and reports
// whether a perp market ran (every perp-exposed account's margin then
// moved with its mark and funding). The books that ran are republished by
// the tick's downstream stage (runDownstream), after the index's Tick.
func (n *Node) touchTick() (perp bool) {
	v := n.rviews
	res := n.ledger.LastTick()
	ob := n.ledger.Orderbook()
	// A busy tick has thousands of events from a few owners: each owner
	// once, not a sort of them all (publishInput sorts what is touched).
	owners := make(map[clob.Address]struct{})
	for i := range res.Events {
		ev := &res.Events[i]
		if _, ok := owners[ev.Owner]; !ok {
			owners[ev.Owner] = struct{}{}
			v.touch(core.Address(ev.Owner))
		}
		switch ev.Kind {
		case clob.EventTransfer:
			v.touch(core.Address(ev.To))
		case clob.EventLiquidation:
			v.touch(core.Address(clob.BackstopAddress))
			perp = true
		}
	}
	for _, w := range n.ledger.LastWithdrawals() {
		v.touch(w.Withdrawer)
	}
	for i := range res.Books {
		if cfg, ok := ob.Market(res.Books[i].Book); ok && cfg.Kind == clob.Perp {
			perp = true
		}
	}
	return perp
}

// publishBooks republishes the ob_getOrderbook answers of ids (nil: every
// book), copying the map of the others.
// REQUIRES: n.mu held for writing, or a downstream window open (which
// makes the inputs that call it wait) and idxMu held for reading.
func (n *Node) publishBooks(ids []clob.Hash) {
	v := n.rviews
	old := v.books.Load()
	size := len(ids)
	if old != nil {
		size += len(*old)
	}
	next := make(map[clob.Hash]*marketdata.Snapshot, size)
	if old != nil && ids != nil {
		for id, s := range *old {
			next[id] = s
		}
	}
	if ids == nil {
		ids = n.ledger.Orderbook().AppendMarkets(nil)
	}
	ob := n.ledger.Orderbook()
	for _, id := range ids {
		buys := ob.AppendLevels(nil, id, clob.Buy, 0)
		sells := ob.AppendLevels(nil, id, clob.Sell, 0)
		if s, ok := n.market.idx.Orderbook(id, buys, sells, 0); ok {
			next[id] = &s
		}
	}
	v.books.Store(&next)
}

// rebuildViews publishes everything of the state load built: every
// account the ledger holds, every book, the base fee; from now on each
// input republishes what it changed.
// REQUIRES: n.mu held for writing, or the node not yet shared.
func (n *Node) rebuildViews() {
	v := n.rviews
	for i := range n.cfg.Genesis {
		v.addToken(n.cfg.Genesis[i].Token)
	}
	for _, id := range n.ledger.Orderbook().AppendMarkets(nil) {
		if cfg, ok := n.ledger.Orderbook().Market(id); ok {
			v.addToken(core.Address(cfg.Base))
			v.addToken(core.Address(cfg.Quote))
		}
	}
	var tokens []core.Address // reused by every account
	for _, a := range n.ledger.AppendAccounts(nil) {
		tokens = n.ledger.AppendTokens(tokens[:0], a)
		for _, t := range tokens {
			v.addToken(t)
		}
		n.publishAccount(a)
	}
	ob := n.ledger.Orderbook()
	for _, a := range ob.AppendTriggerOwners(nil) {
		n.publishTriggers(a)
	}
	v.publishPositioned()
	fee := n.ledger.BaseFee()
	v.baseFee.Store(&fee)
	n.publishBooks(nil)
	v.live = true
}

// Reads. Each loads the views of the current state (Node.views) and never
// takes Node.mu.

// Balance returns the account's holding of token: cash, and how much of it
// is locked behind orders and pending transfers.
func (n *Node) Balance(token, a core.Address) core.Balance {
	if h := n.holding(token, a); h != nil {
		return h.bal
	}
	return core.Balance{}
}

// Nonce returns the account's next nonce.
func (n *Node) Nonce(a core.Address) uint64 {
	if av := n.account(a); av != nil {
		return av.nonce
	}
	return 0
}

// Withdrawable is what withdrawableBalance(token, a) reports, and for the
// native token eth_getBalance: never negative, and for an account with
// positions its equity minus the initial margin they and its orders reserve.
// Other tokens' is their free cash, as core.Ledger.Withdrawable computes it.
func (n *Node) Withdrawable(token, a core.Address) uint256.Int {
	av := n.account(a)
	switch {
	case av == nil:
		return uint256.Int{}
	case token == core.NativeToken:
		return av.withdrawable
	}
	if h := av.holding(token); h != nil {
		return h.bal.Available()
	}
	return uint256.Int{}
}

// BalanceOf is what balanceOf(token, a) reports: cash minus debt, signed
// (core.Balance.Net, as core.Ledger.BalanceOf).
func (n *Node) BalanceOf(token, a core.Address) clob.Signed {
	if h := n.holding(token, a); h != nil {
		return h.bal.Net()
	}
	return clob.Signed{}
}

// BaseFee returns the current base fee.
func (n *Node) BaseFee() uint256.Int { return *n.views.Load().baseFee.Load() }

// Orderbook returns ob_getOrderbook's answer for book at depth (0: every
// level), as of the newest tick; ok is false for an unknown book.
func (n *Node) Orderbook(book clob.Hash, depth int) (s marketdata.Snapshot, ok bool) {
	p, ok := (*n.views.Load().books.Load())[book]
	if !ok {
		return s, false
	}
	s = *p
	if depth > 0 {
		s.Buys = s.Buys[:min(depth, len(s.Buys)):min(depth, len(s.Buys))]
		s.Sells = s.Sells[:min(depth, len(s.Sells)):min(depth, len(s.Sells))]
	}
	return s, true
}

// Positions answers ob_getPositions for a (and the svc_positions snapshot
// of an account no tick has covered): its holdings, open perp positions
// and margin as of one applied input, with the markets' symbols and last
// clearing prices from the index (read under idxMu: as of the index's
// newest update, which a tick makes before it republishes the accounts).
func (n *Node) Positions(a clob.Address) marketdata.PositionsData {
	av := n.account(core.Address(a))
	if av == nil {
		av = &accountView{holdings: make([]holdingView, 1)}
	}
	balance := func(token, _ clob.Address) (cash, locked uint256.Int) {
		if h := av.holding(core.Address(token)); h != nil {
			return h.bal.Cash, h.bal.Locked
		}
		return cash, locked
	}
	n.idxMu.RLock()
	defer n.idxMu.RUnlock()
	x := n.market.idx
	return marketdata.PositionsData{Spot: x.Positions(nil, a, balance), Perps: x.PerpPositions(nil, av.perps),
		Margin: av.marginOf(a), HasMargin: true}
}

// marginOf is the account's cross-margin summary. Without a perp position
// or perp orders nothing but the native cash enters it: the summary is
// that cash (less debt) as cash and equity, and the withdrawable amount,
// which is what core.Ledger.Margin computes then (TestReadViewsMatchLedger
// compares the two); the view keeps the whole summary only for the others.
func (av *accountView) marginOf(a clob.Address) clob.MarginInfo {
	if av.margin != nil {
		return *av.margin
	}
	net := av.holdings[0].bal.Net()
	return clob.MarginInfo{Owner: a, Cash: net, Equity: net, Withdrawable: av.withdrawable}
}

// Triggers answers ob_getTriggers' and svc_triggers' list of a's live
// triggers, as of the newest input that changed them. The slice is shared:
// callers must not modify it.
func (n *Node) Triggers(a clob.Address) []marketdata.Trigger {
	ts, _ := n.views.Load().triggers.get(a[0], a)
	return ts
}

// RecoveryTarget returns a locked account's recovery target; false if the
// account is open.
func (n *Node) RecoveryTarget(a core.Address) (core.TxRef, bool) {
	if av := n.account(a); av != nil && av.locked {
		return av.newest, true
	}
	return core.TxRef{}, false
}

// AccountInfo returns a's finalized and expected nonces.
func (n *Node) AccountInfo(a core.Address) AccountInfo {
	v := n.views.Load()
	var av accountView
	if p, ok := v.accounts.get(a[0], a); ok {
		av = *p.Load()
	}
	info := AccountInfo{Expected: av.nonce, Newest: av.newest, HasNewest: av.hasNewest, Locked: av.locked}
	if f, ok := v.finalized.get(a[0], a); ok {
		info.Finalized, info.HasFinalized = f, true
		return info
	}
	// The newest transaction is final once attested: its entry carries
	// its batch, or it left RAM (only attested records do).
	if e := v.entries.get(av.newest.Hash); av.hasNewest && (e == nil || e.batch.Load() != nil) {
		info.Finalized, info.HasFinalized = av.newest, true
	}
	return info
}

func (n *Node) account(a core.Address) *accountView {
	p, ok := n.views.Load().accounts.get(a[0], a)
	if !ok {
		return nil
	}
	return p.Load()
}

func (n *Node) holding(token, a core.Address) *holdingView {
	if av := n.account(a); av != nil {
		return av.holding(token)
	}
	return nil
}
