package obindex

import (
	"math"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/valyala/fastjson"
)

// Decoders of the ob_ query parameters. Each takes one positional
// parameter (nil when absent, as jsonrpc.Request.Param gives it) and
// returns a preallocated -32602 error naming what is wrong. JSON null counts
// as absent for optional members. Integers are JSON integers or 0x hex
// quantities; unknown object members are ignored.

var (
	errDepth         = jsonrpc.InvalidParams("depth: want an integer of at least 1")
	errOrdersQuery   = jsonrpc.InvalidParams("orders query: want an object")
	errOrdersBook    = jsonrpc.InvalidParams("orderbook_id: want 0x followed by 64 hex digits")
	errOrdersLimit   = jsonrpc.InvalidParams("limit: want an integer of at least 1")
	errCursor        = jsonrpc.InvalidParams(`cursor: want "{ts}:{nonce}:{order_id_hex}" as returned in next_cursor`)
	errStatus        = jsonrpc.InvalidParams("status: want one of pending, active, filled, expired, canceled, margin_canceled, post_only_refused, invalid")
	errWithTotal     = jsonrpc.InvalidParams("with_total: want true or false")
	errWithFills     = jsonrpc.InvalidParams("with_fills: want true or false")
	errCandlesQuery  = jsonrpc.InvalidParams("candles query: want an object with resolution and from_ts")
	errResolution    = jsonrpc.InvalidParams("resolution: want one of 1m, 5m, 15m, 1h, 4h, 1d")
	errFromTsMissing = jsonrpc.InvalidParams("from_ts: required")
	errFromTs        = jsonrpc.InvalidParams("from_ts: want a non-negative integer of microseconds")
	errToTs          = jsonrpc.InvalidParams("to_ts: want a non-negative integer of microseconds")
	errTimeRange     = jsonrpc.InvalidParams("to_ts: must not be before from_ts")
	errCandlesLimit  = jsonrpc.InvalidParams("limit: want an integer of at least 1")
)

// ParseOrderbookID decodes the orderbook id parameter.
func ParseOrderbookID(v *fastjson.Value) (clob.Hash, *jsonrpc.Error) {
	h, err := jsonrpc.ParseHash(v)
	return clob.Hash(h), err
}

// ParseDepth decodes ob_getOrderbook's optional depth: 0 (all levels) when
// absent or null, else an integer ≥ 1.
func ParseDepth(v *fastjson.Value) (int, *jsonrpc.Error) {
	if absent(v) {
		return 0, nil
	}
	n, err := jsonrpc.ParseQuantity(v)
	if err != nil || n < 1 {
		return 0, errDepth
	}
	return int(min(n, math.MaxInt32)), nil
}

// ParseOrdersQuery decodes ob_getOrders' optional query object. Limit is
// OrdersLimitDefault when absent and clamped to OrdersLimitMax.
func ParseOrdersQuery(v *fastjson.Value) (OrdersQuery, *jsonrpc.Error) {
	q := OrdersQuery{Limit: OrdersLimitDefault}
	if absent(v) {
		return q, nil
	}
	if v.Type() != fastjson.TypeObject {
		return q, errOrdersQuery
	}
	var err *jsonrpc.Error
	if f := v.Get("orderbook_id"); !absent(f) {
		if q.Book, err = ParseOrderbookID(f); err != nil {
			return q, errOrdersBook
		}
		q.HasBook = true
	}
	if f := v.Get("limit"); !absent(f) {
		n, err := jsonrpc.ParseQuantity(f)
		if err != nil || n < 1 {
			return q, errOrdersLimit
		}
		q.Limit = int(min(n, OrdersLimitMax))
	}
	if f := v.Get("cursor"); !absent(f) {
		s, ferr := f.StringBytes()
		if ferr != nil || !parseCursor(&q.Cursor, s) {
			return q, errCursor
		}
		q.HasCursor = true
	}
	if f := v.Get("status"); !absent(f) {
		s, ferr := f.StringBytes()
		if q.Status = parseStatus(s); ferr != nil || q.Status == StatusAny {
			return q, errStatus
		}
	}
	if q.WithTotal, err = parseBool(v.Get("with_total"), errWithTotal); err != nil {
		return q, err
	}
	q.WithFills, err = parseBool(v.Get("with_fills"), errWithFills)
	return q, err
}

// ParseCandlesQuery decodes ob_getCandles' query object: resolution and
// from_ts required; to_ts unbounded and limit CandlesLimitMax when absent.
func ParseCandlesQuery(v *fastjson.Value) (CandlesQuery, *jsonrpc.Error) {
	q := CandlesQuery{ToUs: math.MaxInt64, Limit: CandlesLimitMax}
	if absent(v) || v.Type() != fastjson.TypeObject {
		return q, errCandlesQuery
	}
	f := v.Get("resolution")
	if absent(f) {
		return q, errResolution
	}
	s, ferr := f.StringBytes()
	var ok bool
	if q.Resolution, ok = parseResolution(s); ferr != nil || !ok {
		return q, errResolution
	}
	f = v.Get("from_ts")
	if absent(f) {
		return q, errFromTsMissing
	}
	if q.FromUs, ok = parseTimestamp(f); !ok {
		return q, errFromTs
	}
	if f = v.Get("to_ts"); !absent(f) {
		if q.ToUs, ok = parseTimestamp(f); !ok {
			return q, errToTs
		}
		if q.ToUs < q.FromUs {
			return q, errTimeRange
		}
	}
	if f = v.Get("limit"); !absent(f) {
		n, err := jsonrpc.ParseQuantity(f)
		if err != nil || n < 1 {
			return q, errCandlesLimit
		}
		q.Limit = int(min(n, CandlesLimitMax))
	}
	return q, nil
}

func absent(v *fastjson.Value) bool {
	return v == nil || v.Type() == fastjson.TypeNull
}

func parseBool(v *fastjson.Value, errType *jsonrpc.Error) (bool, *jsonrpc.Error) {
	if absent(v) {
		return false, nil
	}
	switch v.Type() {
	case fastjson.TypeTrue:
		return true, nil
	case fastjson.TypeFalse:
		return false, nil
	}
	return false, errType
}

func parseTimestamp(v *fastjson.Value) (int64, bool) {
	n, err := jsonrpc.ParseQuantity(v)
	if err != nil || n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

func parseStatus(s []byte) Status {
	for st := StatusPending; st < statusCount; st++ {
		if string(s) == statusText[st] {
			return st
		}
	}
	return StatusAny
}

func parseResolution(s []byte) (Resolution, bool) {
	for r := range resolutionCount {
		if string(s) == resolutionText[r] {
			return r, true
		}
	}
	return 0, false
}

// ParseCursor decodes a cursor's wire text "{ts}:{nonce}:{order_id_hex}":
// decimal ts (int64) and nonce (uint64) without signs, and the order id as
// 64 hex digits, with or without 0x.
func ParseCursor(s []byte) (Cursor, bool) {
	var c Cursor
	ok := parseCursor(&c, s)
	return c, ok
}

func parseCursor(c *Cursor, s []byte) bool {
	ts, rest, ok := cutDecimal(s)
	if !ok || ts > math.MaxInt64 || len(rest) == 0 || rest[0] != ':' {
		return false
	}
	nonce, rest, ok := cutDecimal(rest[1:])
	if !ok || len(rest) == 0 || rest[0] != ':' {
		return false
	}
	if !parseHash32(&c.ID, rest[1:]) {
		return false
	}
	c.TsUs, c.Nonce = int64(ts), nonce
	return true
}

// parseHash32 reads 64 hex digits, 0x first or not.
func parseHash32(h *clob.Hash, s []byte) bool {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	if len(s) != 2*len(h) {
		return false
	}
	for i := range h {
		hi, lo := nibble(s[2*i]), nibble(s[2*i+1])
		if hi > 0xf || lo > 0xf {
			return false
		}
		h[i] = hi<<4 | lo
	}
	return true
}

// cutDecimal parses 1 to 20 leading decimal digits that fit a uint64.
func cutDecimal(s []byte) (n uint64, rest []byte, ok bool) {
	i := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, nil, false
		}
		n = n*10 + d
	}
	return n, s[i:], i > 0
}

func nibble(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0xff
}
