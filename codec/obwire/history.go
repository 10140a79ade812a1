package obwire

import (
	"math"
	"strconv"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/valyala/fastjson"
)

// AppendFills appends the ob_getFills object: {"fills":[…],"next_cursor":…}.
// A fill carries the openapi FillResponse fields (order_type and
// initial_size null when the index did not know the order; fee is this
// fill's fee), plus side and maker, and on perp markets position_before,
// position_after and realized_pnl (signed decimal strings).
//
// x is the index the page came from: it names each row's market tokens.
func AppendFills(dst []byte, x *marketdata.Index, p *marketdata.FillsPage) []byte {
	dst = append(dst, `{"fills":[`...)
	for i, f := range p.Fills {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendFillRow(dst, x, f)
	}
	dst = append(dst, `],"next_cursor":`...)
	return append(appendSeqCursor(dst, &p.Next, p.HasNext), '}')
}

func appendFillRow(dst []byte, x *marketdata.Index, f *marketdata.FillRow) []byte {
	dst = append(dst, `{"orderbook_id":`...)
	dst = jsonrpc.AppendData(dst, f.Book[:])
	if base, quote, ok := x.MarketTokens(f.Book); ok {
		dst = append(dst, `,"base_token":`...)
		dst = jsonrpc.AppendData(dst, base[:])
		dst = append(dst, `,"quote_token":`...)
		dst = jsonrpc.AppendData(dst, quote[:])
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
		before := marketdata.PositionBefore(f.Side, &f.Base, f.Position)
		dst = append(dst, `,"position_before":`...)
		dst = AppendSignedDecimal(dst, &before.Abs, before.Neg)
		dst = append(dst, `,"position_after":`...)
		dst = AppendSignedDecimal(dst, &f.Position.Abs, f.Position.Neg)
		dst = append(dst, `,"realized_pnl":`...)
		dst = AppendSignedDecimal(dst, &f.Realized.Abs, f.Realized.Neg)
	}
	return append(dst, '}')
}

// AppendBackstopTransfers appends the ob_getBackstopTransfers object:
// {"transfers":[…],"total_count":N,"next_cursor":…}, each transfer the
// openapi BackstopTransferResponse (size, cash and equity signed decimal
// strings, mark_price hex).
func AppendBackstopTransfers(dst []byte, p *marketdata.BackstopPage) []byte {
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

func appendSeqCursor(dst []byte, c *marketdata.SeqCursor, ok bool) []byte {
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
func ParseFillsQuery(v *fastjson.Value) (marketdata.FillsQuery, *jsonrpc.Error) {
	q := marketdata.FillsQuery{ToUs: math.MaxInt64, Limit: marketdata.FillsLimitMax}
	if ok, err := queryObject(v, errFillsQuery, "fills query", fillsMembers); !ok {
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
	if q.Limit, err = parseLimit(v, marketdata.FillsLimitMax, marketdata.FillsLimitMax); err != nil {
		return q, err
	}
	q.Cursor, q.HasCursor, err = parseSeqCursor(v)
	return q, err
}

// ParseBackstopQuery decodes ob_getBackstopTransfers' optional query:
// orderbook_id, limit (clamped to [1, BackstopLimitMax]) and cursor.
func ParseBackstopQuery(v *fastjson.Value) (marketdata.BackstopQuery, *jsonrpc.Error) {
	q := marketdata.BackstopQuery{Limit: marketdata.BackstopLimitDefault}
	if ok, err := queryObject(v, errBackstopQuery, "backstop transfers query", backstopMembers); !ok {
		return q, err
	}
	var err *jsonrpc.Error
	if q.Book, q.HasBook, err = parseBookFilter(v); err != nil {
		return q, err
	}
	if q.Limit, err = parseLimit(v, marketdata.BackstopLimitDefault, marketdata.BackstopLimitMax); err != nil {
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

func parseSeqCursor(v *fastjson.Value) (marketdata.SeqCursor, bool, *jsonrpc.Error) {
	var c marketdata.SeqCursor
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
	return marketdata.SeqCursor{TsUs: int64(ts), Seq: seq}, true, nil
}
