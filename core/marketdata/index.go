package marketdata

import (
	"bytes"
	"slices"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// Limits of the index's memory. See doc.go for what happens at each.
const (
	// TerminalOrdersPerAccount bounds the terminal orders (filled,
	// expired, canceled, margin canceled, post-only refused) kept per
	// account: past it the oldest, by (admission time, nonce, order id),
	// is forgotten. Live
	// orders (pending, active) are never dropped: the engine's OrdersMax
	// and PendingMax per book bound them.
	TerminalOrdersPerAccount = 1024
	// OrderFillsMax bounds the per-tick fill rows kept per order; the oldest
	// row is dropped first (the cumulative totals stay exact).
	OrderFillsMax = 64
	// CandleBucketsMax bounds the buckets kept per market and resolution;
	// the oldest bucket is dropped first. It covers more than 24 h of 1m
	// buckets, from which the 24h statistics are computed.
	CandleBucketsMax = 1500
	// OrdersLimitMax bounds one ob_getOrders page.
	OrdersLimitMax = 200
	// OrdersLimitDefault is the page size when the query names none.
	OrdersLimitDefault = 50
	// CandlesLimitMax bounds one ob_getCandles answer.
	CandlesLimitMax = CandleBucketsMax
)

const (
	dayUs    = 24 * 60 * 60 * 1_000_000
	minuteUs = 60 * 1_000_000
)

// The 24h statistics need a full day of 1m buckets plus the one straddling
// the window's start.
var _ [CandleBucketsMax - (dayUs/minuteUs + 1)]struct{}

// Status is an order's state, named as the openapi OrderStatus enum.
type Status uint8

const (
	StatusAny Status = iota // a query filter that matches every status
	StatusPending
	StatusActive
	StatusFilled
	StatusExpired
	StatusCanceled
	StatusMarginCanceled // removed by its owner's liquidation, on any book
	StatusPostOnlyRefused
	StatusInvalid // refused at execution; never set by this engine
	statusCount
)

var statusText = [statusCount]string{
	StatusAny:             "",
	StatusPending:         "pending",
	StatusActive:          "active",
	StatusFilled:          "filled",
	StatusExpired:         "expired",
	StatusCanceled:        "canceled",
	StatusMarginCanceled:  "margin_canceled",
	StatusPostOnlyRefused: "post_only_refused",
	StatusInvalid:         "invalid",
}

func (s Status) String() string {
	if s < statusCount {
		return statusText[s]
	}
	return "unknown"
}

// StatusNamed returns the status whose name (String) is name, or
// StatusAny when none is (the empty name included).
func StatusNamed(name []byte) Status {
	for s := StatusPending; s < statusCount; s++ {
		if string(name) == statusText[s] {
			return s
		}
	}
	return StatusAny
}

// Terminal reports whether the order has left (or never entered) its book.
func (s Status) Terminal() bool { return s > StatusActive }

// OrderKind is an order's origin, named as the openapi OrderKind enum.
type OrderKind uint8

const (
	KindUserSigned OrderKind = iota // placed by a signed submit intent
	// KindTriggered: the order a fired trigger became. It keeps the
	// trigger's id, owner, signer and nonce; the engine created it in the
	// tick that fired it, so it has no transaction (TxHash zero).
	KindTriggered
	kindCount
)

var kindText = [kindCount]string{KindUserSigned: "user_signed", KindTriggered: "triggered"}

func (k OrderKind) String() string {
	if k < kindCount {
		return kindText[k]
	}
	return "unknown"
}

// OrderMeta is one order created by an admitted transaction, or by the
// engine from one (a fired trigger's): what the node knows at creation.
type OrderMeta struct {
	ID     clob.Hash
	Book   clob.Hash
	Owner  clob.Address // the account (the master when delegated)
	Signer clob.Address // the key that signed; the id keys on it
	TxHash clob.Hash    // the creating transaction; zero for a triggered order (engine-made)
	Nonce  uint64       // the signer's transaction nonce
	Side   clob.Side
	Type   clob.OrderType
	Flags  uint8
	Price  uint256.Int // limit price (a market order's cap), 18 decimals
	Size   uint256.Int // base wei
	// DeadlineUs and TTLUs are the intent's deadline and ttl (0: rests
	// until filled or cancelled), in microseconds.
	DeadlineUs int64
	TTLUs      int64
	AdmittedUs int64 // the sequencer's time at admission; a fired trigger's: the tick that fired it
	Kind       OrderKind
	// TriggerType and Grouping are the trigger's (clob.TriggerStopLoss or
	// clob.TriggerTakeProfit, and its group) when Kind is KindTriggered;
	// zero otherwise.
	TriggerType uint8
	Grouping    uint8
}

// Fill is what one order traded in one tick (the engine's fill events of
// that order in that tick, summed), at the tick's clearing price.
type Fill struct {
	TickUs int64
	Base   uint256.Int
	Quote  uint256.Int
	Price  uint256.Int
}

// Order is the index's record of one order. The index owns it: callers
// read it and never modify it; a pointer from a query is valid until the
// next call to Admitted or Tick.
type Order struct {
	Meta       OrderMeta
	MarketKind clob.MarketKind
	Status     Status
	// Price is the current limit price: Meta.Price until an update()
	// changes it.
	Price       uint256.Int
	FilledBase  uint256.Int
	FilledQuote uint256.Int
	Fee         uint256.Int
	EnteredUs   int64 // the tick the order entered its book; 0 while pending
	EndUs       int64 // ttl expiry; 0 when the order has no ttl
	Fills       []Fill
	// mark is the Index.marks count of the last book range of a tick's
	// events that named the order (TickOrders), 0 once trim forgot it.
	mark uint64
}

// Live is what the index reads from the engine instead of keeping it: a
// live order (its new price after an update), a market's configuration as
// the engine holds it (the perp parameters, which the snapshot does not
// carry), and a perp market's state (oracle, mark, funding), which moves
// every tick. *clob.Engine implements it.
type Live interface {
	Order(id clob.Hash) (clob.OrderInfo, bool)
	Market(id clob.Hash) (*clob.MarketConfig, bool)
	PerpMarket(book clob.Hash) (clob.PerpInfo, bool)
}

// book is the index's view of one market.
type book struct {
	cfg        clob.MarketConfig
	ran        bool  // some tick has run this book
	lastTickUs int64 // the last tick that ran it
	newOrders  int   // orders created in that tick
	price      uint256.Int
	hasPrice   bool
	// Invariant: activeCount[side] is the number of this book's orders
	// (Meta.Book) with StatusActive on that side.
	activeCount [2]int
	candles     [resolutionCount]candleRing
	// perp is a perp market's live state and maximum leverage as of the
	// last SyncPerp (hasPerp false for a spot market, or without Live).
	perp         clob.PerpInfo
	perpLeverage uint32
	hasPerp      bool
	samples      ring[Sample] // samples.go
}

// account is one owner's order history.
type account struct {
	// Invariant: orders is sorted ascending by (admission time, nonce,
	// order id), and never empty.
	orders []*Order
	// Invariant: terminalCount is the number of terminal orders in orders,
	// and ≤ TerminalOrdersPerAccount between calls.
	terminalCount int
	overfull      bool // listed in Index.overfull (a tick is trimming it)
}

// Index is the market-data indexer behind the ob_ read methods. Not safe
// for concurrent use: the node calls it under its own lock.
type Index struct {
	live    Live
	books   map[clob.Hash]*book
	bookIDs []clob.Hash // ascending
	// Invariant: orders holds exactly the orders of the accounts' lists
	// (a forgotten order leaves both).
	orders   map[clob.Hash]*Order
	accounts map[clob.Address]*account
	// armed holds, by id, the meta of every trigger admitted and neither
	// fired nor cancelled: a trigger that fires becomes an order the index
	// must know (owner, signer, transaction, nonce), and the engine's
	// trigger record is gone by then. Every trigger ends with a fired or
	// cancel event, so armed is bounded by the engine's live triggers.
	armed map[clob.Hash]OrderMeta
	nowUs int64 // the latest tick time seen
	// overfull lists the accounts a tick took past
	// TerminalOrdersPerAccount; the tick trims them as it ends (trim).
	overfull []*account
	// Histories (history.go). seq numbers their rows: it grows by one per
	// row recorded, so rows of one history ascend by it.
	fills    map[clob.Address]*ring[FillRow]
	backstop ring[BackstopTransfer]
	seq      uint64
	equity   EquityFunc
	// marks counts the book ranges of events Tick walked; tickOrders is
	// the last tick's TickOrders.
	marks      uint64
	tickOrders []TickOrder
	topScratch [2][]clob.Address // sample's owners at the best bid and ask
}

// TickOrder is an order the last tick's book events named: Event is the
// index in the tick's Events of the first of them.
type TickOrder struct {
	Event int
	Order *Order
}

// TickOrders lists, in event order, each order the last Tick's book events
// (those between a book's FirstEvent and EndEvent) named, once per book, at
// its first event there: those the index knows and did not forget at the
// tick's end.
// What a tick publishes is built from it without a second lookup of each
// order. The slice and its pointers are valid until the next Admitted or
// Tick.
func (x *Index) TickOrders() []TickOrder { return x.tickOrders }

// New returns an empty index. live (may be nil) is asked for an order's new
// price after an update event, and for the perp fields; without it updates
// change nothing but the fill totals the event carries, and perp markets
// answer without their live state.
func New(live Live) *Index {
	return &Index{
		live:     live,
		books:    make(map[clob.Hash]*book),
		orders:   make(map[clob.Hash]*Order),
		accounts: make(map[clob.Address]*account),
		armed:    make(map[clob.Hash]OrderMeta),
		fills:    make(map[clob.Address]*ring[FillRow]),
	}
}

// AddMarket registers a market. Adding a market twice replaces its
// configuration and keeps its history.
//
// REQUIRES: cfg.Kind is clob.Spot or clob.Perp (Load refuses others).
func (x *Index) AddMarket(cfg *clob.MarketConfig) {
	if cfg.Kind > clob.Perp {
		panic("BUG: marketdata: unknown market kind")
	}
	if b, ok := x.books[cfg.ID]; ok {
		b.cfg = *cfg
		return
	}
	x.books[cfg.ID] = &book{cfg: *cfg}
	i, _ := slices.BinarySearchFunc(x.bookIDs, cfg.ID, compareHash)
	x.bookIDs = slices.Insert(x.bookIDs, i, cfg.ID)
}

// Order returns the record of an order the index knows (live or kept in
// history); the pointer is valid until the next Admitted or Tick.
func (x *Index) Order(id clob.Hash) (*Order, bool) {
	o, ok := x.orders[id]
	return o, ok
}

// NowUs returns the latest tick time the index has seen: the "now" of the
// 24h statistics.
func (x *Index) NowUs() int64 { return x.nowUs }

// Admitted records an order created by an admitted transaction. An id
// already known is ignored.
//
// REQUIRES: the market was added; side, type and flags are ones the engine
// admits (Load refuses others).
func (x *Index) Admitted(m *OrderMeta) {
	b, ok := x.books[m.Book]
	if !ok {
		panic("BUG: marketdata: order admitted to an unknown market")
	}
	if m.Side > clob.Sell || m.Type > clob.Market || m.Flags&^clob.FlagsKnown != 0 {
		panic("BUG: marketdata: order admitted with an unknown side, type or flag")
	}
	if _, ok := x.orders[m.ID]; ok {
		return
	}
	if m.Kind >= kindCount || m.Kind == KindUserSigned && (m.TriggerType != 0 || m.Grouping != 0) {
		panic("BUG: marketdata: order admitted with an unknown kind or stray trigger fields")
	}
	o := &Order{Meta: *m, MarketKind: b.cfg.Kind, Status: StatusPending, Price: m.Price}
	x.orders[m.ID] = o
	a := x.accounts[m.Owner]
	if a == nil {
		a = &account{}
		x.accounts[m.Owner] = a
	}
	// Admission times only grow: the new order is almost always the newest.
	if k := len(a.orders); k == 0 || compareOrders(a.orders[k-1], o) < 0 {
		a.orders = append(a.orders, o)
		return
	}
	i, _ := slices.BinarySearchFunc(a.orders, o, compareOrders)
	a.orders = slices.Insert(a.orders, i, o)
}

// AdmittedTrigger records a trigger created by an admitted transaction
// (m.Type and m.Price are its order's: limit price, zero for market), so
// that the order it becomes when it fires is known like any other. An id
// already armed is ignored. m.TxHash is dropped: the order is the
// engine's, and the openapi Order's tx_hash is "zero for engine-generated
// orders (liquidations, fired-trigger synthetics)". ob_getTriggers names
// the trigger's own transaction; the order does not.
//
// REQUIRES: as Admitted; m.Kind is KindTriggered, with a valid trigger
// type and grouping.
func (x *Index) AdmittedTrigger(m *OrderMeta) {
	if b, ok := x.books[m.Book]; !ok || b.cfg.Kind != clob.Perp || m.Kind != KindTriggered {
		panic("BUG: marketdata: trigger admitted to an unknown or spot market, or not of kind triggered")
	}
	if !ValidTriggerType(m.TriggerType) || !ValidGrouping(m.Grouping) {
		panic("BUG: marketdata: trigger admitted with an unknown type or grouping")
	}
	if _, ok := x.armed[m.ID]; !ok {
		a := *m
		a.TxHash = clob.Hash{}
		x.armed[m.ID] = a
	}
}

// fired turns an armed trigger into the order it became: pending in its
// book, created at tickUs, with the terms the engine gave it (an update
// may have changed them; a market trigger's price is its slippage cap).
func (x *Index) fired(e *clob.Event, tickUs int64) {
	m, ok := x.armed[e.OrderID]
	if !ok {
		return // armed before the index knew it (never admitted through it)
	}
	delete(x.armed, e.OrderID)
	m.AdmittedUs, m.TTLUs = tickUs, 0
	if x.live != nil {
		if info, ok := x.live.Order(m.ID); ok {
			m.Side, m.Type, m.Flags, m.Price, m.Size = info.Side, info.Type, info.Flags, info.Price, info.Size
			m.DeadlineUs = info.DeadlineUs
		}
	}
	x.Admitted(&m)
}

// Tick applies one tick's outcome: order events and each book's clearing
// price and volume.
//
// REQUIRES: res.TickUs ≥ 0, and a book's traded ticks come in time order
// (the engine's ticks do).
func (x *Index) Tick(res *clob.TickResult) {
	if res.TickUs < 0 {
		panic("BUG: marketdata: negative tick time")
	}
	if res.TickUs > x.nowUs {
		x.nowUs = res.TickUs
	}
	clear(x.tickOrders) // let forgotten orders go
	x.tickOrders = x.tickOrders[:0]
	for i := range res.Books {
		bt := &res.Books[i]
		b, ok := x.books[bt.Book]
		if !ok {
			continue
		}
		b.ran = true
		b.lastTickUs = res.TickUs
		b.newOrders = bt.NewOrders
		x.marks++
		if bt.HasPrice {
			b.price, b.hasPrice = bt.Price, true
		}
		for j := bt.FirstEvent; j < bt.EndEvent; j++ {
			e := &res.Events[j]
			o := x.orders[e.OrderID] // nil: never admitted through this index, or dropped from history
			if e.Kind == clob.EventFill {
				x.recordFill(e, o, res.TickUs, bt.Book, &bt.Price, b.cfg.Kind)
			}
			if o == nil {
				continue
			}
			if o.mark != x.marks {
				o.mark = x.marks
				x.tickOrders = append(x.tickOrders, TickOrder{Event: j, Order: o})
			}
			x.apply(o, e, res.TickUs, &bt.Price)
		}
		if bt.Traded {
			for r := range b.candles {
				b.candles[r].add(Resolution(r).Us(), res.TickUs, &bt.Price, &bt.VolumeBase)
			}
		}
		x.sample(b, res.TickUs)
	}
	// Liquidations and trigger outcomes come after matching, wherever the
	// engine lists them.
	for i := range res.Events {
		switch e := &res.Events[i]; e.Kind {
		case clob.EventLiquidation:
			x.recordBackstop(e, res.TickUs)
		case clob.EventTriggerFired:
			x.fired(e, res.TickUs)
		case clob.EventTriggerCancel:
			delete(x.armed, e.OrderID)
		}
	}
	if x.trim() {
		x.tickOrders = slices.DeleteFunc(x.tickOrders, func(t TickOrder) bool { return t.Order.mark == 0 })
	}
}

// apply folds one event into its order's record.
func (x *Index) apply(o *Order, e *clob.Event, tickUs int64, price *uint256.Int) {
	o.FilledBase, o.FilledQuote, o.Fee = e.TotalBase, e.TotalQuote, e.TotalFee
	switch e.Kind {
	case clob.EventPlaced:
		o.EnteredUs = tickUs
		if o.Meta.TTLUs > 0 {
			o.EndUs = tickUs + o.Meta.TTLUs
		}
		x.setStatus(o, StatusActive)
	case clob.EventFill:
		o.addFill(tickUs, e, price)
		if e.Terminal {
			x.setStatus(o, StatusFilled)
		}
	case clob.EventCancel:
		x.setStatus(o, StatusCanceled)
	case clob.EventExpire:
		x.setStatus(o, StatusExpired)
	case clob.EventPostOnlyRefused:
		x.setStatus(o, StatusPostOnlyRefused)
	case clob.EventMarginCancel:
		x.setStatus(o, StatusMarginCanceled)
	case clob.EventUpdate:
		if x.live == nil {
			return
		}
		if info, ok := x.live.Order(o.Meta.ID); ok {
			o.Price = info.Price
			if info.ExpiresUs > 0 {
				o.EndUs = info.ExpiresUs
			}
		}
	}
}

// setStatus moves an order to s, keeping its book's active counts and the
// account's history bound. The count is kept on the order's own book, not
// on the book whose events carried it (the same with the engine): so it is
// always what Load derives from the orders.
func (x *Index) setStatus(o *Order, s Status) {
	if o.Status == s || o.Status.Terminal() {
		return
	}
	b := x.books[o.Meta.Book]
	side := o.Meta.Side
	if o.Status == StatusActive {
		b.activeCount[side]--
	}
	if s == StatusActive {
		b.activeCount[side]++
	}
	o.Status = s
	if s.Terminal() {
		a := x.accounts[o.Meta.Owner]
		a.terminalCount++
		if a.terminalCount > TerminalOrdersPerAccount && !a.overfull {
			a.overfull = true
			x.overfull = append(x.overfull, a)
		}
	}
}

// trim forgets, in each account a tick took past the bound, its oldest
// terminal orders until TerminalOrdersPerAccount remain, and reports
// whether it forgot any. The list is in admission order, so the oldest
// terminal orders are near its front: the walk stops at the last one
// forgotten and the rest of the list moves down in one copy, where a walk
// of the whole list read every order of a market maker's thousands each
// tick. The orders kept are those "drop the oldest terminal order whenever
// over the bound" keeps: terminal is for good and the list's order fixed.
func (x *Index) trim() bool {
	for _, a := range x.overfull {
		excess := a.terminalCount - TerminalOrdersPerAccount
		kept, i := 0, 0
		for ; excess > 0; i++ { // the list holds terminalCount terminal orders
			o := a.orders[i]
			if o.Status.Terminal() {
				delete(x.orders, o.Meta.ID)
				o.mark = 0
				excess--
				continue
			}
			a.orders[kept] = o
			kept++
		}
		n := kept + copy(a.orders[kept:], a.orders[i:])
		clear(a.orders[n:]) // let the dropped orders go
		a.orders = a.orders[:n]
		a.terminalCount = TerminalOrdersPerAccount
		a.overfull = false
	}
	forgot := len(x.overfull) > 0
	x.overfull = x.overfull[:0]
	return forgot
}

// addFill folds one fill event into the order's per-tick fill rows.
func (o *Order) addFill(tickUs int64, e *clob.Event, price *uint256.Int) {
	if n := len(o.Fills); n > 0 && o.Fills[n-1].TickUs == tickUs {
		f := &o.Fills[n-1]
		f.Base.Add(&f.Base, &e.Base)
		f.Quote.Add(&f.Quote, &e.Quote)
		return
	}
	if len(o.Fills) == OrderFillsMax {
		o.Fills = slices.Delete(o.Fills, 0, 1)
	}
	o.Fills = append(o.Fills, Fill{TickUs: tickUs, Base: e.Base, Quote: e.Quote, Price: *price})
}

// Cursor is a position in an account's newest-first order history: the
// wire's "{ts}:{nonce}:{order_id_hex}", ts being the admission time.
type Cursor struct {
	TsUs  int64
	Nonce uint64
	ID    clob.Hash
}

func keyOf(o *Order) Cursor {
	return Cursor{TsUs: o.Meta.AdmittedUs, Nonce: o.Meta.Nonce, ID: o.Meta.ID}
}

func compareCursor(a, b Cursor) int {
	switch {
	case a.TsUs != b.TsUs:
		return cmpInt(a.TsUs, b.TsUs)
	case a.Nonce != b.Nonce:
		if a.Nonce < b.Nonce {
			return -1
		}
		return 1
	}
	return bytes.Compare(a.ID[:], b.ID[:])
}

func compareOrders(a, b *Order) int { return compareCursor(keyOf(a), keyOf(b)) }

func compareHash(a, b clob.Hash) int { return bytes.Compare(a[:], b[:]) }

func cmpInt(a, b int64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}
