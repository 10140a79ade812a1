package marketdata

import (
	"slices"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// Market is one ob_getMarkets entry.
type Market struct {
	Config    *clob.MarketConfig // owned by the index; read-only
	LastPrice uint256.Int        // zero until the book has cleared
	HasPrice  bool
	Volume24h uint256.Int // base wei
	High24h   uint256.Int // zero without trades in the window
	Low24h    uint256.Int
	// Change24hBps is the last clearing price against the open of the
	// window's oldest traded bucket, in basis points.
	Change24hBps int64
	// A perp market's live state and leverage (HasPerp: read from the
	// engine; false for a spot market).
	Perp        clob.PerpInfo
	MaxLeverage uint32
	HasPerp     bool
}

// Markets appends every market, ascending by id. Config pointers are valid
// until the next AddMarket of that id.
func (x *Index) Markets(dst []Market) []Market { return x.MarketsAt(dst, x.nowUs) }

// MarketsAt is Markets as of atUs (GET /v1/clob/markets/stats?to=): the
// 24h statistics over the 1m buckets overlapping (atUs − 24 h, atUs], and
// the last clearing price the close of the newest of them that starts at
// or before atUs (the bucket holding atUs counts whole). The kept 1m
// buckets (CandleBucketsMax, 25 h) bound how far back that reaches: before
// them a market reads as never traded. The perp state is the newest: the
// index keeps no history of it. An atUs at or after NowUs is Markets.
func (x *Index) MarketsAt(dst []Market, atUs int64) []Market {
	atUs = min(atUs, x.nowUs)
	for _, id := range x.bookIDs {
		b := x.books[id]
		m := Market{Config: &b.cfg, LastPrice: b.price, HasPrice: b.hasPrice}
		if atUs < x.nowUs {
			m.LastPrice, m.HasPrice = b.closeAt(atUs)
		}
		s := b.stats24h(atUs, &m.LastPrice, m.HasPrice)
		m.Volume24h, m.High24h, m.Low24h, m.Change24hBps = s.volume, s.high, s.low, s.changeBps
		m.Perp, m.MaxLeverage, m.HasPerp = x.perpOf(b)
		dst = append(dst, m)
	}
	return dst
}

// Snapshot is one ob_getOrderbook answer. Buys and Sells alias the
// caller's level slices.
type Snapshot struct {
	Book           clob.Hash
	Buys, Sells    []clob.Level // best first
	ClearingPrice  uint256.Int  // zero until the book has cleared
	GroupingPrice  uint256.Int  // the tick precision: levels are exact prices
	TimestampUs    int64        // the book's last tick; 0 before its first
	NewOrdersCount int          // orders created in that tick
	BuysCount      int          // resting buy orders, whatever the depth
	SellsCount     int
	Perp           clob.PerpInfo // a perp market's live state, when HasPerp
	HasPerp        bool
}

// Orderbook completes a snapshot around the engine's aggregated levels
// (best first, as clob.Engine.AppendLevels returns them), keeping at most
// depth levels per side (depth ≤ 0: all). It reports false for an unknown
// market.
func (x *Index) Orderbook(bookID clob.Hash, buys, sells []clob.Level, depth int) (Snapshot, bool) {
	b, ok := x.books[bookID]
	if !ok {
		return Snapshot{}, false
	}
	if depth > 0 {
		buys = buys[:min(depth, len(buys))]
		sells = sells[:min(depth, len(sells))]
	}
	s := Snapshot{
		Book: bookID, Buys: buys, Sells: sells,
		GroupingPrice:  b.cfg.TickPrecision,
		NewOrdersCount: b.newOrders,
		BuysCount:      b.activeCount[clob.Buy],
		SellsCount:     b.activeCount[clob.Sell],
	}
	if b.hasPrice {
		s.ClearingPrice = b.price
	}
	if b.ran {
		s.TimestampUs = b.lastTickUs
	}
	s.Perp, _, s.HasPerp = x.perpOf(b)
	return s, true
}

// OrdersBooksMax bounds the orderbook list of an ob_getOrders query
// (clob_ids, alias orderbook_ids), as the subscriptions bound theirs.
const OrdersBooksMax = 64

// OrdersQuery is the decoded ob_getOrders query.
type OrdersQuery struct {
	Book    clob.Hash
	HasBook bool
	// Books is the clob_ids list (alias orderbook_ids): sorted, distinct,
	// at most OrdersBooksMax; empty means every book. A query has Books or
	// HasBook, never both.
	Books     []clob.Hash
	Limit     int // 1..OrdersLimitMax; ≤ 0 means OrdersLimitDefault
	Cursor    Cursor
	HasCursor bool // page strictly after (older than) Cursor
	Status    Status
	WithTotal bool
	WithFills bool
}

// OrdersPage is one ob_getOrders answer. Orders point into the index: valid
// until the next call to Admitted or Tick.
type OrdersPage struct {
	Orders    []*Order // newest first
	Total     int      // set when the query asked WithTotal
	WithTotal bool
	WithFills bool
	Next      Cursor // the last returned order's key, when HasNext
	HasNext   bool
}

// Orders returns one page of an account's orders, newest first by
// (admission time, nonce, order id), the page's slice appended to dst.
func (x *Index) Orders(dst []*Order, owner clob.Address, q *OrdersQuery) OrdersPage {
	p := OrdersPage{Orders: dst, WithTotal: q.WithTotal, WithFills: q.WithFills}
	a := x.accounts[owner]
	if a == nil {
		return p
	}
	if q.WithTotal {
		for _, o := range a.orders {
			if q.matches(o) {
				p.Total++
			}
		}
	}
	end := len(a.orders)
	if q.HasCursor {
		end, _ = slices.BinarySearchFunc(a.orders, q.Cursor, func(o *Order, c Cursor) int {
			return compareCursor(keyOf(o), c)
		})
	}
	limit := q.Limit
	if limit <= 0 {
		limit = OrdersLimitDefault
	}
	limit = min(limit, OrdersLimitMax)
	returned := 0
	for i := end - 1; i >= 0; i-- {
		o := a.orders[i]
		if !q.matches(o) {
			continue
		}
		if returned == limit {
			p.HasNext = true
			p.Next = keyOf(p.Orders[len(p.Orders)-1])
			break
		}
		p.Orders = append(p.Orders, o)
		returned++
	}
	return p
}

// HasPending reports whether owner has an order admitted and not yet
// drained by a tick (StatusPending). The walk goes from the newest order,
// where the pending ones are, and stops at the first; an account without
// one is walked whole (its live orders and at most
// TerminalOrdersPerAccount terminal ones).
func (x *Index) HasPending(owner clob.Address) bool {
	a := x.accounts[owner]
	if a == nil {
		return false
	}
	for i := len(a.orders) - 1; i >= 0; i-- {
		if a.orders[i].Status == StatusPending {
			return true
		}
	}
	return false
}

// matches is the query's filter. Pagination applies it after the cursor,
// so every page of one query holds the matching orders strictly older than
// the previous page's last one, whatever the filter.
func (q *OrdersQuery) matches(o *Order) bool {
	if q.HasBook && o.Meta.Book != q.Book {
		return false
	}
	if len(q.Books) > 0 {
		if _, ok := slices.BinarySearchFunc(q.Books, o.Meta.Book, compareHash); !ok {
			return false
		}
	}
	return q.Status == StatusAny || o.Status == q.Status
}

// Balances returns an account's cash in a token and the part of it locked
// behind live orders and pending transfers (the ledger's figures).
type Balances func(token, owner clob.Address) (cash, locked uint256.Int)

// Position is one spot holding: an account's base token of one market.
type Position struct {
	Book        clob.Hash
	BaseSymbol  string
	QuoteSymbol string
	Balance     uint256.Int // cash, free plus locked
	Free        uint256.Int
	Locked      uint256.Int
	MarkPrice   uint256.Int // the market's last clearing price
	HasMark     bool
}

// Positions appends the account's holding of every market's base token,
// ascending by market id; markets where it holds nothing are left out.
func (x *Index) Positions(dst []Position, owner clob.Address, balance Balances) []Position {
	for _, id := range x.bookIDs {
		b := x.books[id]
		cash, locked := balance(b.cfg.Base, owner)
		if cash.IsZero() && locked.IsZero() {
			continue
		}
		p := Position{
			Book: id, BaseSymbol: b.cfg.BaseSymbol, QuoteSymbol: b.cfg.QuoteSymbol,
			Balance: cash, Locked: locked, MarkPrice: b.price, HasMark: b.hasPrice,
		}
		if !locked.Gt(&cash) {
			p.Free.Sub(&cash, &locked)
		}
		dst = append(dst, p)
	}
	return dst
}
