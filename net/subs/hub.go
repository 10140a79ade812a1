package subs

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
	"github.com/valyala/fastjson"
)

// Conn is the transport's side of one WebSocket connection.
//
// A Conn is a map key of the hub: it must be comparable and stable (a
// pointer to the transport's connection state).
//
// Both methods are called with the hub's lock held, from the hub's pump
// goroutine or from the goroutine calling Activate/Pump/Close: they must
// not block and must not call back into the hub.
type Conn interface {
	// Send queues one text message, the concatenation head‖body‖tail, on
	// the connection's bounded outbound buffer, in call order. It returns
	// false when the buffer cannot take it; the hub then closes the
	// subscription with -32022 (the message was not queued).
	//
	// The three slices are immutable for ever: the hub never writes into
	// a slice it has passed to Send, so the transport may keep references
	// until the bytes are on the wire (writev) instead of copying. It must
	// not modify them.
	Send(head, body, tail []byte) bool
	// SendClose queues one server-initiated close notification (a
	// complete message, immutable like Send's parts). It must not refuse:
	// the transport keeps headroom beyond Send's bound for at most one
	// close per subscription (SubsPerConnMax per connection) or, failing
	// that, drops the connection.
	SendClose(msg []byte)
	// RemoteIP is the peer's address, the key of Config.SubsPerAddrMax.
	// It must not change for the life of the Conn.
	RemoteIP() netip.Addr
}

// Limits of the hub. Each is checked and tested.
const (
	// SubsPerConnMax bounds the subscriptions of one connection.
	SubsPerConnMax = 128
	// SubsPerAddrMaxDefault is Config.SubsPerAddrMax when it is zero: the
	// subscriptions of all connections from one remote address, so that
	// one client cannot take all SubsMax of the node by opening more
	// connections (one well-behaved client needs a few dozen).
	SubsPerAddrMaxDefault = 1024
	// SubsMax bounds the subscriptions of the hub.
	SubsMax = 1 << 16
	// ReplayTicksDefault is the replay buffer length when Config names none.
	ReplayTicksDefault = 1 << 10
	// ReplayTicksMax bounds Config.ReplayTicks (the live network keeps 16384).
	ReplayTicksMax = 1 << 14
	// LagTicksMax: when the fan-out falls more than this many ticks behind
	// the published ones, every live tick-driven subscription is closed with
	// -32020 and the fan-out skips ahead. Far below the replay buffer, so
	// resume_since is always still replayable.
	LagTicksMax = 64
	// ReceiptsRingSize is the receipts kept for the receipt channels' since.
	ReceiptsRingSize = 1 << 14
	// ReceiptsLagMax is LagTicksMax for receipts.
	ReceiptsLagMax = 1 << 12
	// NotificationSizeMax bounds one payload; a larger one closes the
	// subscription with -32023 rather than overrun the transport.
	NotificationSizeMax = 16 << 20
	// PositionsKeptMax bounds the accounts whose latest positions the hub
	// keeps as svc_positions snapshots (past it, an arbitrary one is
	// forgotten and Config.Positions answers for it).
	PositionsKeptMax = 1 << 16
	// TriggersKeptMax is PositionsKeptMax for svc_triggers snapshots
	// (Config.Triggers answers for a forgotten account).
	TriggersKeptMax = 1 << 16
)

// CodeLimit is the error code of a subscribe refused by a limit (EIP-1474
// "limit exceeded").
const CodeLimit = jsonrpc.CodeLimitExceeded

var (
	errTooManyConn = jsonrpc.LimitExceeded("too many subscriptions on this connection", SubsPerConnMax)
	errTooMany     = jsonrpc.LimitExceeded("too many subscriptions on this node", SubsMax)
	errShutdown    = &jsonrpc.Error{Code: jsonrpc.CodeInternal, Message: "node is shutting down"}
)

// ErrTickOrder refuses a published tick whose time is not after the
// previous one's: the replay buffer is ordered by tick time.
var ErrTickOrder = errors.New("subs: tick times must increase")

// Config configures a Hub.
type Config struct {
	// ReplayTicks is the replay buffer length in ticks, a power of two in
	// [LagTicksMax*2, ReplayTicksMax]; 0 means ReplayTicksDefault.
	ReplayTicks int
	// FloorUs is the newest tick the node executed before the hub started
	// (0 on a fresh ledger): a since below it predates the buffer, unless
	// Preload restores the ticks up to it.
	FloorUs int64
	// Positions, when set, answers an svc_positions snapshot for an account
	// no published tick has touched. Called with the hub's lock held: it
	// must not call into the hub.
	Positions func(account clob.Address) marketdata.PositionsData
	// Triggers, when set, answers an svc_triggers snapshot for an account
	// no published tick has covered. Called with the hub's lock held: it
	// must not call into the hub.
	Triggers func(account clob.Address) []marketdata.Trigger
	// Markets, when set, answers the ob_getMarkets entries for an
	// svc_markets snapshot: markets no published tick has covered are taken
	// from it. Called with the hub's lock held: it must not call into the
	// hub.
	Markets func() []marketdata.Market
	// BlockUs is the time one newHeads block number spans: 0 or 1 numbers
	// blocks by their µs (the spec); the node's compat mode numbers 500 ms
	// slots (rpc.CompatBlockUs).
	BlockUs int64
	// SubsPerAddrMax bounds the subscriptions of all connections from one
	// Conn.RemoteIP; 0 means SubsPerAddrMaxDefault.
	SubsPerAddrMax int
}

// Stats are counters for tests and metrics.
type Stats struct {
	Subscriptions int    // open subscriptions
	Notifications uint64 // messages accepted by Conn.Send
	Encodings     uint64 // payloads encoded
	Closes        uint64 // server-initiated closes
	// ByChannel counts the open subscriptions per Channel; Ended the
	// subscriptions ended, by EndReason (stats.go).
	ByChannel [channelEnd]int
	Ended     [endReasons]uint64
}

// Hub turns published ticks, receipts and past-perfect times into
// subscription notifications. See doc.go.
type Hub struct {
	cfg Config

	// mu guards the subscriptions, the memos of published records and the
	// fan-out cursors. Lock order: mu, then ringMu.
	mu       sync.Mutex
	subs     map[string]*sub
	conns    map[Conn][]*sub
	perAddr  map[netip.Addr]int // open subscriptions per Conn.RemoteIP
	errAddr  *jsonrpc.Error     // the refusal beyond Config.SubsPerAddrMax
	regs     [channelEnd]registry
	nextID   uint64
	stamp    uint64
	scratch  []*sub
	topics   []clob.Hash // a log's topics while fanReceipt filters it
	enc      scratch
	closed   bool
	tickNext uint64 // next tick seq to fan out
	doneUs   int64  // newest tick fanned out
	hasDone  bool
	rcptNext uint64
	rcptUs   int64 // newest receipt time fanned out
	hasRcpt  bool
	pptUs    int64 // newest past-perfect time fanned out
	pptBody  []byte
	idleUs   int64 // newest idle slot's header fanned out
	stats    Stats
	lagging  []*sub // subscriptions with a lab lag (lab.go)

	// ringMu guards what the publishers write: the rings, the floors and
	// the latest state entries. Held for O(1) (plus the tick's state
	// entries) by the publishers.
	ringMu      sync.Mutex
	ticks       []*tickRec
	tickHead    uint64 // seqs [tickFirst, tickHead) are retained
	tickFirst   uint64
	floorUs     int64 // newest evicted tick (or Config.FloorUs)
	lastPubUs   int64
	rcpts       []Receipt
	rcptHead    uint64
	rcptFirst   uint64
	rcptFloorUs int64
	latestMkt   map[clob.Hash]*marketEnt
	latestPos   map[clob.Address]*posEnt
	latestTrig  map[clob.Address]*trigEnt
	pubPPT      int64
	pubIdle     tickrec.Tick // the newest idle slot (TickUs 0: none), header fields only
	pubClosed   bool
	preloaded   bool
	// chainCheck: the next published tick is the first after Preload, and
	// its ParentHash must be chainHash, the newest preloaded tick's Hash.
	chainCheck bool
	chainHash  clob.Hash

	// watchMu guards watched: the number of svc_positions subscriptions
	// per account. Taken alone by Subscribe and removal, which republish
	// watchedList, the accounts ascending, when an account comes or goes:
	// the node reads it (WatchedPositions) under its sequencer lock, so
	// that read takes no lock of the hub's.
	watchMu     sync.Mutex
	watched     map[clob.Address]int
	watchedList atomic.Pointer[[]clob.Address]

	wake chan struct{}
	stop chan struct{}
	wg   sync.WaitGroup
}

// New returns a hub. It does nothing on its own until Start (or calls to
// Pump).
func New(cfg Config) *Hub {
	if cfg.ReplayTicks == 0 {
		cfg.ReplayTicks = ReplayTicksDefault
	}
	if cfg.BlockUs <= 0 {
		cfg.BlockUs = 1
	}
	if cfg.SubsPerAddrMax <= 0 {
		cfg.SubsPerAddrMax = SubsPerAddrMaxDefault
	}
	n := cfg.ReplayTicks
	if n&(n-1) != 0 || n < 2*LagTicksMax || n > ReplayTicksMax {
		panic("BUG: subs.Config.ReplayTicks must be a power of two in [2*LagTicksMax, ReplayTicksMax]")
	}
	return &Hub{
		cfg:         cfg,
		subs:        make(map[string]*sub),
		conns:       make(map[Conn][]*sub),
		perAddr:     make(map[netip.Addr]int),
		errAddr:     jsonrpc.LimitExceeded("too many subscriptions from this address", cfg.SubsPerAddrMax),
		ticks:       make([]*tickRec, n),
		floorUs:     cfg.FloorUs,
		lastPubUs:   cfg.FloorUs,
		rcpts:       make([]Receipt, ReceiptsRingSize),
		rcptFloorUs: -1,
		latestMkt:   make(map[clob.Hash]*marketEnt),
		latestPos:   make(map[clob.Address]*posEnt),
		latestTrig:  make(map[clob.Address]*trigEnt),
		watched:     make(map[clob.Address]int),
		pubPPT:      -1,
		pptUs:       -1,
		wake:        make(chan struct{}, 1),
		stop:        make(chan struct{}),
	}
}

// Start runs the fan-out on a hub goroutine: every Publish wakes it.
// Without Start, the caller drives the fan-out with Pump.
func (h *Hub) Start() {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		for {
			select {
			case <-h.wake:
				h.Pump()
			case <-h.stop:
				return
			}
		}
	}()
}

func (h *Hub) signal() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// PublishTick hands a tick to the hub (see Tick for ownership) and wakes
// the fan-out. It never blocks on subscribers: it stores the tick in the
// replay ring (evicting the oldest) and the tick's state entries as the
// latest, in O(books + markets + accounts).
//
// A tick whose time is not after every earlier tick's (a clock that
// stepped back) is skipped, and the error, wrapping ErrTickOrder, says so:
// the hub's input must never bring the node down.
func (h *Hub) PublishTick(t *tickrec.Tick) error {
	h.ringMu.Lock()
	if h.pubClosed {
		h.ringMu.Unlock()
		return nil
	}
	if t.TickUs <= h.lastPubUs && h.tickHead > 0 {
		last := h.lastPubUs
		h.ringMu.Unlock()
		return fmt.Errorf("%w: tick at %d µs is not after the last published one at %d µs: skipped",
			ErrTickOrder, t.TickUs, last)
	}
	r := newTickRec(h.tickHead, t)
	mask := uint64(len(h.ticks) - 1)
	if h.tickHead-h.tickFirst == uint64(len(h.ticks)) {
		h.floorUs = h.ticks[h.tickFirst&mask].t.TickUs
		h.tickFirst++
	}
	if h.chainCheck {
		h.chainCheck = false
		if t.ParentHash != h.chainHash {
			h.distrustPreloaded()
		}
	}
	h.ticks[h.tickHead&mask] = r
	h.tickHead++
	h.lastPubUs = t.TickUs
	h.recordState(r)
	h.ringMu.Unlock()
	h.signal()
	return nil
}

// recordState makes r's market and position entries the latest ones.
// REQUIRES: h.ringMu held.
func (h *Hub) recordState(r *tickRec) {
	for i := range r.markets {
		h.latestMkt[r.markets[i].m.Config.ID] = &r.markets[i]
	}
	for i := range r.positions {
		keepLatest(h.latestPos, r.positions[i].p.Account, &r.positions[i], PositionsKeptMax)
	}
	for i := range r.triggers {
		keepLatest(h.latestTrig, r.triggers[i].p.Account, &r.triggers[i], TriggersKeptMax)
	}
}

// keepLatest sets m[a] = v, first forgetting an arbitrary account when m
// already holds max others.
func keepLatest[T any](m map[clob.Address]*T, a clob.Address, v *T, max int) {
	if _, ok := m[a]; !ok && len(m) >= max {
		for k := range m {
			delete(m, k)
			break
		}
	}
	m[a] = v
}

// PublishReceipts hands attested receipts to the hub (it takes them; see
// Receipt) and wakes the fan-out. O(len(rs)); never blocks on subscribers.
func (h *Hub) PublishReceipts(rs []Receipt) {
	h.ringMu.Lock()
	if h.pubClosed {
		h.ringMu.Unlock()
		return
	}
	h.pushReceipts(rs)
	h.ringMu.Unlock()
	h.signal()
}

// pushReceipts adds rs to the receipts ring, evicting the oldest (the
// floor rises to the newest evicted). REQUIRES: h.ringMu held.
func (h *Hub) pushReceipts(rs []Receipt) {
	mask := uint64(len(h.rcpts) - 1)
	for i := range rs {
		if h.rcptHead-h.rcptFirst == uint64(len(h.rcpts)) {
			h.rcptFloorUs = max(h.rcptFloorUs, h.rcpts[h.rcptFirst&mask].TimeUs)
			h.rcpts[h.rcptFirst&mask] = Receipt{}
			h.rcptFirst++
		}
		h.rcpts[h.rcptHead&mask] = rs[i]
		h.rcptHead++
	}
}

// PublishPastPerfectTime records the newest past-perfect time (µs) and
// wakes the fan-out. Only the newest value matters: intermediate ones the
// fan-out did not see are superseded, not lost.
func (h *Hub) PublishPastPerfectTime(us int64) {
	h.ringMu.Lock()
	if !h.pubClosed && us > h.pubPPT {
		h.pubPPT = us
	}
	h.ringMu.Unlock()
	h.signal()
}

// PublishIdleSlot records an auction slot that ran no tick, so that
// newHeads still gets a header every interval on an idle node (an empty
// batch is still a batch). Only t's TickUs, Hash and ParentHash are read;
// nothing enters the replay buffer and no other channel hears of it. Only
// the newest slot matters: one the fan-out did not reach is superseded.
func (h *Hub) PublishIdleSlot(t tickrec.Tick) {
	h.ringMu.Lock()
	if !h.pubClosed && t.TickUs > h.pubIdle.TickUs {
		h.pubIdle = tickrec.Tick{TickUs: t.TickUs, Hash: t.Hash, ParentHash: t.ParentHash}
	}
	h.ringMu.Unlock()
	h.signal()
}

// sub is one subscription.
type sub struct {
	n    uint64 // creation order
	id   string
	conn Conn
	addr netip.Addr // conn.RemoteIP(), counted in Hub.perAddr
	spec
	key  string // the account filter as a memo key ("" = every account)
	head []byte // envelope head, immutable

	live     bool   // activated: the fan-out delivers to it
	closed   bool   // unsubscribed or closed: nothing more is sent
	startSeq uint64 // delta channels: first tick seq to replay at activation
	// stateSeq, for the state channels (markets, positions, triggers): the
	// first tick seq the fan-out delivers. The snapshot took the latest
	// entries as published, which may include ticks the fan-out has not
	// reached yet; those it skips, or they would repeat the snapshot.
	stateSeq uint64
	stamp    uint64 // dedup mark of the current collect

	// Delivery position, for resume_since.
	squareUs  int64 // newest tick (or receipt time) fully delivered
	hasSquare bool
	partUs    int64 // svc_orders_v2: the tick of the last frame delivered
	partBook  clob.Hash
	hasPart   bool
	// lag: the lab withholds ticks from it (lab.go); nil normally.
	lag *lagState
}

// Subscribe decodes and registers a subscription of c. The subscription is
// inert until Activate: the transport writes the eth_subscribe response
// carrying id, then calls Activate, so the response always precedes the
// subscription's first notification. typ is params[0], params is params[1]
// (nil when absent; for svc_pastPerfectTime the bare timestamp). Neither is
// retained.
func (h *Hub) Subscribe(c Conn, typ []byte, params *fastjson.Value) (string, *jsonrpc.Error) {
	sp, err := parseSpec(typ, params)
	if err != nil {
		return "", err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return "", errShutdown
	}
	if len(h.conns[c]) >= SubsPerConnMax {
		return "", errTooManyConn
	}
	addr := c.RemoteIP()
	if h.perAddr[addr] >= h.cfg.SubsPerAddrMax {
		return "", h.errAddr
	}
	if len(h.subs) >= SubsMax {
		return "", errTooMany
	}
	s := &sub{conn: c, addr: addr, spec: sp, startSeq: h.tickNext}
	if sp.ch.delta() && sp.hasSince {
		if err := h.locateSince(s); err != nil {
			return "", err
		}
	}
	if sp.ch.receiptDriven() && sp.hasSince {
		h.ringMu.Lock()
		tooOld := sp.since < h.rcptFloorUs
		h.ringMu.Unlock()
		if tooOld {
			return "", errSinceTooOld
		}
	}
	if sp.ch == ChannelLogs {
		s.accounts = sp.logs.addresses // index logs subscriptions by address
	}
	if sp.ch == ChannelOrders || sp.ch == ChannelOrdersV2 || sp.ch == ChannelWithdrawals || sp.ch == ChannelTransfers {
		key := make([]byte, 0, len(s.accounts)*len(clob.Address{}))
		for i := range s.accounts {
			key = append(key, s.accounts[i][:]...)
		}
		s.key = string(key)
	}
	h.nextID++
	s.n = h.nextID
	s.id = "0x" + strconv.FormatUint(h.nextID, 16)
	s.head = appendHead(nil, s.id)
	h.subs[s.id] = s
	h.conns[c] = append(h.conns[c], s)
	h.perAddr[addr]++
	h.regs[sp.ch].add(s)
	h.stats.ByChannel[sp.ch]++
	if sp.ch == ChannelPositions {
		h.watch(s.accounts[0], 1)
	}
	return s.id, nil
}

func (h *Hub) watch(a clob.Address, d int) {
	h.watchMu.Lock()
	defer h.watchMu.Unlock()
	h.watched[a] += d
	switch h.watched[a] {
	case 0:
		delete(h.watched, a)
	case d: // a new account
	default:
		return // the set of accounts did not change
	}
	list := make([]clob.Address, 0, len(h.watched))
	for w := range h.watched {
		list = append(list, w)
	}
	slices.SortFunc(list, compareAddress)
	h.watchedList.Store(&list)
}

// WatchedPositions appends, ascending, every account with an open
// svc_positions subscription (pending or live): the node adds their
// positions to a tick whose mark moves touch them, so that cost grows
// with subscriptions, not with accounts. Safe from any goroutine; it
// takes no lock (one atomic load of the list Subscribe and removal
// publish).
func (h *Hub) WatchedPositions(dst []clob.Address) []clob.Address {
	if list := h.watchedList.Load(); list != nil {
		dst = append(dst, *list...)
	}
	return dst
}

// locateSince checks a delta subscription's since against the replay
// buffer and finds the first retained tick at or after it.
// REQUIRES: h.mu held.
func (h *Hub) locateSince(s *sub) *jsonrpc.Error {
	h.ringMu.Lock()
	defer h.ringMu.Unlock()
	if s.since < h.floorUs || (s.hasSinceBook && s.since <= h.floorUs) {
		return errSinceTooOld
	}
	mask := uint64(len(h.ticks) - 1)
	lo, hi := h.tickFirst, h.tickHead
	for lo < hi {
		mid := lo + (hi-lo)/2
		if h.ticks[mid&mask].t.TickUs < s.since {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	s.startSeq = lo
	return nil
}

// Activate starts delivery of a subscription returned by Subscribe, after
// the transport has written the eth_subscribe response. Delta channels with
// since replay the buffered ticks after it, then go live; state channels
// send their snapshot first. It reports false for an id that is not a
// pending subscription of c.
func (h *Hub) Activate(c Conn, id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.subs[id]
	if s == nil || s.conn != c || s.live || h.closed {
		return false
	}
	switch {
	case s.ch.delta():
		h.replayTicks(s)
	case s.ch == ChannelMarkets:
		h.snapshotMarkets(s)
	case s.ch == ChannelPositions:
		h.snapshotPositions(s)
	case s.ch == ChannelTriggers:
		h.snapshotTriggers(s)
	case s.ch.receiptDriven():
		h.replayReceipts(s)
	case s.ch == ChannelPastPerfectTime:
		if h.pptBody != nil && h.pptUs >= s.pptUs {
			h.deliver(s, h.pptBody)
		}
	}
	if !s.closed {
		s.live = true
	}
	return true
}

// Unsubscribe ends a subscription of c. It reports false when id is not an
// open subscription of c, which includes one the server has closed: after
// a close notification the id is gone, as it is after eth_unsubscribe.
func (h *Hub) Unsubscribe(c Conn, id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.subs[id]
	if s == nil || s.conn != c {
		return false
	}
	h.remove(s)
	h.stats.Ended[EndUnsubscribed]++
	return true
}

// DropConn forgets every subscription of a closed connection, sending
// nothing.
func (h *Hub) DropConn(c Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range slices.Clone(h.conns[c]) {
		h.remove(s)
		h.stats.Ended[EndConnClosed]++
	}
	delete(h.conns, c)
}

// Close delivers what was published, then closes every subscription with
// -32021 and stops the hub: later publishes are ignored and Subscribe
// fails.
func (h *Hub) Close() {
	h.ringMu.Lock()
	already := h.pubClosed
	h.pubClosed = true
	h.ringMu.Unlock()
	if already {
		return
	}
	close(h.stop)
	h.wg.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pumpLocked()
	h.closeAll(CodeShutdown, nil)
	h.closed = true
}

// closeAll closes every subscription with code, oldest first, but those
// of the channels keep reports (nil: none).
// REQUIRES: h.mu held.
func (h *Hub) closeAll(code int, keep func(Channel) bool) {
	ids := make([]*sub, 0, len(h.subs))
	for _, s := range h.subs {
		if keep == nil || !keep(s.ch) {
			ids = append(ids, s)
		}
	}
	slices.SortFunc(ids, func(a, b *sub) int { return cmp.Compare(a.n, b.n) })
	for _, s := range ids {
		h.closeSub(s, code, 0)
	}
}

// Stats returns the hub's counters.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.stats
	st.Subscriptions = len(h.subs)
	return st
}

// remove unregisters s. REQUIRES: h.mu held.
func (h *Hub) remove(s *sub) {
	if s.closed {
		return
	}
	s.closed = true
	delete(h.subs, s.id)
	cs := h.conns[s.conn]
	if i := slices.Index(cs, s); i >= 0 {
		cs = slices.Delete(cs, i, i+1)
	}
	if len(cs) == 0 {
		delete(h.conns, s.conn)
	} else {
		h.conns[s.conn] = cs
	}
	if h.perAddr[s.addr]--; h.perAddr[s.addr] == 0 {
		delete(h.perAddr, s.addr)
	}
	h.regs[s.ch].remove(s)
	h.stats.ByChannel[s.ch]--
	if s.ch == ChannelPositions {
		h.watch(s.accounts[0], -1)
	}
}

// deliver sends one notification; on refusal or a bad payload it closes s.
// REQUIRES: h.mu held; body immutable from now on.
func (h *Hub) deliver(s *sub, body []byte) bool {
	if s.closed || s.lag != nil { // a lab lag withholds everything
		return false
	}
	if len(body) == 0 || len(body) > NotificationSizeMax {
		h.closeSub(s, CodeSerialize, 0)
		return false
	}
	if !s.conn.Send(s.head, body, envelopeTail) {
		h.closeSub(s, CodeSlow, 0)
		return false
	}
	h.stats.Notifications++
	return true
}

// deliverFresh counts an encoding made for one subscriber and sends it.
func (h *Hub) deliverFresh(s *sub, body []byte) {
	h.stats.Encodings++
	h.deliver(s, body)
}

// closeSub sends a close notification and unregisters s.
// REQUIRES: h.mu held.
func (h *Hub) closeSub(s *sub, code int, missed uint64) {
	if s.closed {
		return
	}
	d := h.resume(s)
	d.missed = missed
	h.remove(s)
	h.stats.Closes++
	h.stats.Ended[endReasonOf(code)]++
	s.conn.SendClose(appendClose(nil, s.id, code, &d))
}

// resume computes where s is square: the newest tick (receipt time) it has
// everything up to, and for svc_orders_v2 a partly delivered tick.
func (h *Hub) resume(s *sub) resumeData {
	var d resumeData
	switch {
	case s.ch.receiptDriven():
		if s.live && h.hasRcpt {
			d.since, d.hasSince = h.rcptUs, true
		}
	case s.ch.tickDriven():
		if s.lag != nil {
			d.since, d.hasSince = s.lag.fromUs, s.lag.hasFrom
		} else if s.live && h.hasDone {
			d.since, d.hasSince = h.doneUs, true
		} else if s.hasSquare {
			d.since, d.hasSince = s.squareUs, true
		}
	default:
		return d
	}
	if s.hasSince && (!d.hasSince || s.since >= d.since) {
		d.since, d.hasSince = s.since, true
		d.sinceBook, d.hasSinceBook = s.sinceBook, s.hasSinceBook
	}
	if s.ch == ChannelOrdersV2 && s.hasPart && (!d.hasSince || s.partUs > d.since ||
		(s.partUs == d.since && d.hasSinceBook && compareHash(s.partBook, d.sinceBook) > 0)) {
		d.since, d.hasSince = s.partUs, true
		d.sinceBook, d.hasSinceBook = s.partBook, true
	}
	return d
}

// registry indexes the subscriptions of one channel so a tick touches only
// those it may match: by account when the subscription names accounts,
// else by orderbook when it names books, else in all.
type registry struct {
	all       []*sub
	byBook    map[clob.Hash][]*sub
	byAccount map[clob.Address][]*sub
}

// empty reports whether the channel has no subscription at all.
func (r *registry) empty() bool {
	return len(r.all) == 0 && len(r.byBook) == 0 && len(r.byAccount) == 0
}

func (r *registry) add(s *sub) {
	switch {
	case len(s.accounts) > 0:
		if r.byAccount == nil {
			r.byAccount = make(map[clob.Address][]*sub)
		}
		for _, a := range s.accounts {
			r.byAccount[a] = append(r.byAccount[a], s)
		}
	case len(s.books) > 0:
		if r.byBook == nil {
			r.byBook = make(map[clob.Hash][]*sub)
		}
		for _, b := range s.books {
			r.byBook[b] = append(r.byBook[b], s)
		}
	default:
		r.all = append(r.all, s)
	}
}

func (r *registry) remove(s *sub) {
	switch {
	case len(s.accounts) > 0:
		for _, a := range s.accounts {
			r.byAccount[a] = deleteSub(r.byAccount[a], s)
			if len(r.byAccount[a]) == 0 {
				delete(r.byAccount, a)
			}
		}
	case len(s.books) > 0:
		for _, b := range s.books {
			r.byBook[b] = deleteSub(r.byBook[b], s)
			if len(r.byBook[b]) == 0 {
				delete(r.byBook, b)
			}
		}
	default:
		r.all = deleteSub(r.all, s)
	}
}

func deleteSub(ss []*sub, s *sub) []*sub {
	if i := slices.Index(ss, s); i >= 0 {
		return slices.Delete(ss, i, i+1)
	}
	return ss
}

func (s *sub) wantsBook(b clob.Hash) bool {
	if len(s.books) == 0 {
		return true
	}
	_, ok := slices.BinarySearchFunc(s.books, b, compareHash)
	return ok
}

func compareHash(a, b clob.Hash) int {
	for i := range a {
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	return 0
}

// skips reports whether a delta subscription's since excludes book b of
// the tick at tickUs: ticks at or before since, except for svc_orders_v2
// with since_book the books after since_book of the tick at since.
func (s *sub) skips(tickUs int64, b clob.Hash) bool {
	if !s.hasSince || tickUs > s.since {
		return false
	}
	if tickUs < s.since || !s.hasSinceBook {
		return true
	}
	return compareHash(b, s.sinceBook) <= 0
}
