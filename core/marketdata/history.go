package marketdata

import (
	"math"
	"strconv"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/valyala/fastjson"
)

// Fills and backstop transfers history (ob_getFills,
// ob_getBackstopTransfers): append-only rows numbered by one index-wide
// sequence, so "newest first" is "sequence descending" and a cursor
// "{ts}:{seq}" names one row exactly.

const (
	// FillsPerAccount bounds the fill rows kept per account; past it the
	// oldest row is forgotten.
	FillsPerAccount = 2048
	// BackstopTransfersMax bounds the backstop transfers kept (all
	// accounts together); past it the oldest is forgotten.
	BackstopTransfersMax = 16384
	// FillsLimitMax bounds one ob_getFills page (the live network's 500),
	// also the default.
	FillsLimitMax = 500
	// BackstopLimitMax bounds one ob_getBackstopTransfers page (the
	// openapi clamps to [1, 200]); BackstopLimitDefault is the default.
	BackstopLimitMax     = 200
	BackstopLimitDefault = 50
)

// FillRow is one fill event of one account's order.
type FillRow struct {
	Seq     uint64 // index-wide, increasing in event order
	TickUs  int64
	Book    clob.Hash
	OrderID clob.Hash
	Side    clob.Side
	Maker   bool
	// HasOrder: the index knew the order (Type and Size are its admitted
	// type and size); orders of fired triggers are not admitted here.
	HasOrder bool
	Type     clob.OrderType
	Size     uint256.Int
	Base     uint256.Int
	Quote    uint256.Int
	Fee      uint256.Int
	Price    uint256.Int // the tick's clearing price
	// Perp markets: the position after the fill and the PnL it realized.
	Perp     bool
	Position clob.Signed
	Realized clob.Signed
}

// BackstopTransfer is one position taken over by the backstop
// (clob.EventLiquidation).
type BackstopTransfer struct {
	Seq    uint64
	TickUs int64
	User   clob.Address
	Book   clob.Hash
	Size   clob.Signed // the position taken over, base wei
	Cash   clob.Signed // the PnL the account realized at the mark
	Mark   uint256.Int
	Equity clob.Signed // the account's equity right after the tick (EquityFunc)
}

// EquityFunc reads an account's equity after the tick being indexed (the
// ledger's Margin(a).Equity); the node sets it with SetEquity.
type EquityFunc func(owner clob.Address) clob.Signed

// SetEquity sets where backstop transfers read the account's equity; nil
// records zero.
func (x *Index) SetEquity(f EquityFunc) { x.equity = f }

// ring is a bounded FIFO of rows, oldest first.
type ring[T any] struct {
	buf   []T
	start int
}

func (r *ring[T]) len() int    { return len(r.buf) }
func (r *ring[T]) at(i int) *T { return &r.buf[(r.start+i)%len(r.buf)] }

// push appends v, dropping the oldest row once max are held.
func (r *ring[T]) push(v T, max int) {
	if len(r.buf) < max {
		r.buf = append(r.buf, v)
		return
	}
	r.buf[r.start] = v
	r.start = (r.start + 1) % len(r.buf)
}

// search returns the number of rows whose sequence is below seq (rows are
// ascending by sequence).
func (r *ring[T]) search(seq uint64, seqOf func(*T) uint64) int {
	lo, hi := 0, r.len()
	for lo < hi {
		m := (lo + hi) / 2
		if seqOf(r.at(m)) < seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// recordFill adds a fill event of book to its owner's history, at the
// tick's clearing price.
func (x *Index) recordFill(e *clob.Event, tickUs int64, book clob.Hash, price *uint256.Int, kind clob.MarketKind) {
	x.seq++
	row := FillRow{
		Seq: x.seq, TickUs: tickUs, Book: book, OrderID: e.OrderID, Side: e.Side, Maker: e.Maker,
		Base: e.Base, Quote: e.Quote, Fee: e.Fee, Price: *price,
		Perp: kind == clob.Perp, Position: e.Position, Realized: e.Realized,
	}
	if o, ok := x.orders[e.OrderID]; ok {
		row.HasOrder, row.Type, row.Size = true, o.Meta.Type, o.Meta.Size
	}
	r := x.fills[e.Owner]
	if r == nil {
		r = &ring[FillRow]{}
		x.fills[e.Owner] = r
	}
	r.push(row, FillsPerAccount)
}

// recordBackstop adds a liquidation event to the backstop history.
func (x *Index) recordBackstop(e *clob.Event, tickUs int64) {
	if x.books[e.Book] == nil {
		return // not a market of this index: Load would refuse the row
	}
	x.seq++
	t := BackstopTransfer{
		Seq: x.seq, TickUs: tickUs, User: e.Owner, Book: e.Book,
		Size: e.Position, Cash: e.Realized, Mark: e.Price,
	}
	if x.equity != nil {
		t.Equity = x.equity(e.Owner)
	}
	x.backstop.push(t, BackstopTransfersMax)
}

// SeqCursor is a position in a newest-first history: "{ts}:{seq}".
type SeqCursor struct {
	TsUs int64
	Seq  uint64
}

// FillsQuery is the decoded ob_getFills query.
type FillsQuery struct {
	Book      clob.Hash
	HasBook   bool
	FromUs    int64 // inclusive
	ToUs      int64 // exclusive
	Limit     int   // 1..FillsLimitMax
	Cursor    SeqCursor
	HasCursor bool // page strictly after (older than) Cursor
}

// FillsPage is one ob_getFills answer; rows point into the index (valid
// until the next Tick).
type FillsPage struct {
	Fills   []*FillRow // newest first
	Next    SeqCursor
	HasNext bool
}

// Fills returns one page of the owner's fills, newest first.
func (x *Index) Fills(owner clob.Address, q *FillsQuery) FillsPage {
	var p FillsPage
	r := x.fills[owner]
	if r == nil {
		return p
	}
	end := r.len()
	if q.HasCursor {
		end = r.search(q.Cursor.Seq, func(f *FillRow) uint64 { return f.Seq })
	}
	for i := end - 1; i >= 0; i-- {
		f := r.at(i)
		if f.TickUs < q.FromUs {
			break // rows are in time order
		}
		if f.TickUs >= q.ToUs || q.HasBook && f.Book != q.Book {
			continue
		}
		if len(p.Fills) == q.Limit {
			last := p.Fills[len(p.Fills)-1]
			p.Next, p.HasNext = SeqCursor{TsUs: last.TickUs, Seq: last.Seq}, true
			break
		}
		p.Fills = append(p.Fills, f)
	}
	return p
}

// BackstopQuery is the decoded ob_getBackstopTransfers query.
type BackstopQuery struct {
	User      clob.Address
	HasUser   bool
	Book      clob.Hash
	HasBook   bool
	Limit     int
	Cursor    SeqCursor
	HasCursor bool
}

// BackstopPage is one ob_getBackstopTransfers answer.
type BackstopPage struct {
	Transfers []*BackstopTransfer // newest first
	Total     int                 // matching rows, before pagination
	Next      SeqCursor
	HasNext   bool
}

// BackstopTransfers returns one page of the backstop transfers, newest
// first. It scans the whole (bounded) history for the total.
func (x *Index) BackstopTransfers(q *BackstopQuery) BackstopPage {
	var p BackstopPage
	r := &x.backstop
	end := r.len()
	if q.HasCursor {
		end = r.search(q.Cursor.Seq, func(t *BackstopTransfer) uint64 { return t.Seq })
	}
	for i := r.len() - 1; i >= 0; i-- {
		t := r.at(i)
		if q.HasUser && t.User != q.User || q.HasBook && t.Book != q.Book {
			continue
		}
		p.Total++
		if i >= end {
			continue
		}
		switch {
		case len(p.Transfers) < q.Limit:
			p.Transfers = append(p.Transfers, t)
		case !p.HasNext:
			last := p.Transfers[len(p.Transfers)-1]
			p.Next, p.HasNext = SeqCursor{TsUs: last.TickUs, Seq: last.Seq}, true
		}
	}
	return p
}

// AppendFills appends the ob_getFills object: {"fills":[…],"next_cursor":…}.
// A fill carries the openapi FillResponse fields (order_type and
// initial_size null when the index did not know the order; fee is this
// fill's fee), plus side and maker, and on perp markets position_before,
// position_after and realized_pnl (signed decimal strings).
func (x *Index) AppendFills(dst []byte, p *FillsPage) []byte {
	dst = append(dst, `{"fills":[`...)
	for i, f := range p.Fills {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = x.appendFillRow(dst, f)
	}
	dst = append(dst, `],"next_cursor":`...)
	return append(appendSeqCursor(dst, &p.Next, p.HasNext), '}')
}

func (x *Index) appendFillRow(dst []byte, f *FillRow) []byte {
	dst = append(dst, `{"orderbook_id":`...)
	dst = jsonrpc.AppendData(dst, f.Book[:])
	if b := x.books[f.Book]; b != nil {
		dst = append(dst, `,"base_token":`...)
		dst = jsonrpc.AppendData(dst, b.cfg.Base[:])
		dst = append(dst, `,"quote_token":`...)
		dst = jsonrpc.AppendData(dst, b.cfg.Quote[:])
	}
	dst = append(dst, `,"order_id":`...)
	dst = jsonrpc.AppendData(dst, f.OrderID[:])
	switch {
	case !f.HasOrder:
		dst = append(dst, `,"order_type":null,"initial_size":null`...)
	case f.Type == clob.Market:
		dst = append(dst, `,"order_type":"market","initial_size":`...)
	default:
		dst = append(dst, `,"order_type":"limit","initial_size":`...)
	}
	if f.HasOrder {
		dst = AppendSignedDecimal(dst, &f.Size, f.Side == clob.Sell)
	}
	dst = appendU256Field(dst, `,"fee":`, &f.Fee)
	dst = appendU256Field(dst, `,"base_amount":`, &f.Base)
	dst = appendU256Field(dst, `,"quote_amount":`, &f.Quote)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, f.TickUs, 10)
	dst = appendU256Field(dst, `,"price":`, &f.Price)
	dst = append(dst, `,"side":`...)
	dst = appendSide(dst, f.Side)
	if f.Maker {
		dst = append(dst, `,"maker":true`...)
	} else {
		dst = append(dst, `,"maker":false`...)
	}
	if f.Perp {
		before := PositionBefore(f.Side, &f.Base, f.Position)
		dst = append(dst, `,"position_before":`...)
		dst = AppendSignedDecimal(dst, &before.Abs, before.Neg)
		dst = append(dst, `,"position_after":`...)
		dst = AppendSignedDecimal(dst, &f.Position.Abs, f.Position.Neg)
		dst = append(dst, `,"realized_pnl":`...)
		dst = AppendSignedDecimal(dst, &f.Realized.Abs, f.Realized.Neg)
	}
	return append(dst, '}')
}

// PositionBefore is the position before a fill of base on side that left
// it at after: after minus what the fill traded (+base for a buy, −base
// for a sell).
func PositionBefore(side clob.Side, base *uint256.Int, after clob.Signed) clob.Signed {
	d := clob.Signed{Abs: *base, Neg: side == clob.Buy} // subtract a buy: add its negation
	if d.Abs.IsZero() {
		d.Neg = false
	}
	return addSigned(after, d)
}

// addSigned returns a + b.
func addSigned(a, b clob.Signed) clob.Signed {
	var s clob.Signed
	switch {
	case a.Neg == b.Neg:
		s.Abs.Add(&a.Abs, &b.Abs)
		s.Neg = a.Neg
	case a.Abs.Lt(&b.Abs):
		s.Abs.Sub(&b.Abs, &a.Abs)
		s.Neg = b.Neg
	default:
		s.Abs.Sub(&a.Abs, &b.Abs)
		s.Neg = a.Neg
	}
	if s.Abs.IsZero() {
		s.Neg = false
	}
	return s
}

// AppendBackstopTransfers appends the ob_getBackstopTransfers object:
// {"transfers":[…],"total_count":N,"next_cursor":…}, each transfer the
// openapi BackstopTransferResponse (size, cash and equity signed decimal
// strings, mark_price hex).
func AppendBackstopTransfers(dst []byte, p *BackstopPage) []byte {
	dst = append(dst, `{"transfers":[`...)
	for i, t := range p.Transfers {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"user":`...)
		dst = jsonrpc.AppendData(dst, t.User[:])
		dst = append(dst, `,"orderbook_id":`...)
		dst = jsonrpc.AppendData(dst, t.Book[:])
		dst = append(dst, `,"size":`...)
		dst = AppendSignedDecimal(dst, &t.Size.Abs, t.Size.Neg)
		dst = append(dst, `,"cash":`...)
		dst = AppendSignedDecimal(dst, &t.Cash.Abs, t.Cash.Neg)
		dst = appendU256Field(dst, `,"mark_price":`, &t.Mark)
		dst = append(dst, `,"equity":`...)
		dst = AppendSignedDecimal(dst, &t.Equity.Abs, t.Equity.Neg)
		dst = append(dst, `,"timestamp":`...)
		dst = strconv.AppendInt(dst, t.TickUs, 10)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"total_count":`...)
	dst = strconv.AppendInt(dst, int64(p.Total), 10)
	dst = append(dst, `,"next_cursor":`...)
	return append(appendSeqCursor(dst, &p.Next, p.HasNext), '}')
}

// AppendSignedDecimal appends a quoted decimal string, "-" first when neg
// and v is not zero (the openapi's signed amounts).
func AppendSignedDecimal(dst []byte, v *uint256.Int, neg bool) []byte {
	dst = append(dst, '"')
	if neg && !v.IsZero() {
		dst = append(dst, '-')
	}
	dst = jsonrpc.AppendDecimalU256(dst, v)
	return append(dst, '"')
}

func appendSeqCursor(dst []byte, c *SeqCursor, ok bool) []byte {
	if !ok {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = strconv.AppendInt(dst, c.TsUs, 10)
	dst = append(dst, ':')
	dst = strconv.AppendUint(dst, c.Seq, 10)
	return append(dst, '"')
}

var (
	errFillsQuery    = jsonrpc.InvalidParams("fills query: want an object")
	errSeqCursor     = jsonrpc.InvalidParams(`cursor: want "{ts}:{seq}" as returned in next_cursor`)
	errBackstopQuery = jsonrpc.InvalidParams("backstop transfers query: want an object")
)

// ParseFillsQuery decodes ob_getFills' optional query: from_ts (inclusive,
// default 0), to_ts (exclusive, default none), orderbook_id, limit
// (default and maximum FillsLimitMax) and cursor.
func ParseFillsQuery(v *fastjson.Value) (FillsQuery, *jsonrpc.Error) {
	q := FillsQuery{ToUs: math.MaxInt64, Limit: FillsLimitMax}
	if absent(v) {
		return q, nil
	}
	if v.Type() != fastjson.TypeObject {
		return q, errFillsQuery
	}
	if err := checkMembers(v, "fills query", fillsMembers); err != nil {
		return q, err
	}
	var ok bool
	if f := v.Get("from_ts"); !absent(f) {
		if q.FromUs, ok = parseTimestamp(f); !ok {
			return q, errFromTs
		}
	}
	if f := v.Get("to_ts"); !absent(f) {
		if q.ToUs, ok = parseTimestamp(f); !ok {
			return q, errToTs
		}
		if q.ToUs < q.FromUs {
			return q, errTimeRange
		}
	}
	var err *jsonrpc.Error
	if q.Book, q.HasBook, err = parseBookFilter(v); err != nil {
		return q, err
	}
	if q.Limit, err = parseLimit(v, FillsLimitMax, FillsLimitMax); err != nil {
		return q, err
	}
	q.Cursor, q.HasCursor, err = parseSeqCursor(v)
	return q, err
}

// ParseBackstopQuery decodes ob_getBackstopTransfers' optional query:
// orderbook_id, limit (clamped to [1, BackstopLimitMax]) and cursor.
func ParseBackstopQuery(v *fastjson.Value) (BackstopQuery, *jsonrpc.Error) {
	q := BackstopQuery{Limit: BackstopLimitDefault}
	if absent(v) {
		return q, nil
	}
	if v.Type() != fastjson.TypeObject {
		return q, errBackstopQuery
	}
	if err := checkMembers(v, "backstop transfers query", backstopMembers); err != nil {
		return q, err
	}
	var err *jsonrpc.Error
	if q.Book, q.HasBook, err = parseBookFilter(v); err != nil {
		return q, err
	}
	if q.Limit, err = parseLimit(v, BackstopLimitDefault, BackstopLimitMax); err != nil {
		return q, err
	}
	q.Cursor, q.HasCursor, err = parseSeqCursor(v)
	return q, err
}

func parseBookFilter(v *fastjson.Value) (clob.Hash, bool, *jsonrpc.Error) {
	f := v.Get("orderbook_id")
	if absent(f) {
		return clob.Hash{}, false, nil
	}
	id, err := ParseOrderbookID(f)
	if err != nil {
		return id, false, errOrdersBook
	}
	return id, true, nil
}

func parseLimit(v *fastjson.Value, def, max int) (int, *jsonrpc.Error) {
	f := v.Get("limit")
	if absent(f) {
		return def, nil
	}
	n, err := jsonrpc.ParseQuantity(f)
	if err != nil || n < 1 {
		return 0, errOrdersLimit
	}
	return int(min(n, uint64(max))), nil
}

func parseSeqCursor(v *fastjson.Value) (SeqCursor, bool, *jsonrpc.Error) {
	var c SeqCursor
	f := v.Get("cursor")
	if absent(f) {
		return c, false, nil
	}
	s, ferr := f.StringBytes()
	if ferr != nil {
		return c, false, errSeqCursor
	}
	ts, rest, ok := cutDecimal(s)
	if !ok || ts > math.MaxInt64 || len(rest) == 0 || rest[0] != ':' {
		return c, false, errSeqCursor
	}
	seq, rest, ok := cutDecimal(rest[1:])
	if !ok || len(rest) > 0 {
		return c, false, errSeqCursor
	}
	return SeqCursor{TsUs: int64(ts), Seq: seq}, true, nil
}
