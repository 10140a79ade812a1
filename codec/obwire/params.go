package obwire

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/valyala/fastjson"
)

// Decoders of the ob_ query parameters. Each takes one positional
// parameter (nil when absent, as jsonrpc.Request.Param gives it) and
// returns a -32602 error naming what is wrong (preallocated, except the
// one naming an unknown member). JSON null counts as absent for optional
// members. Integers are JSON integers or 0x hex quantities. A query object
// member the method does not take, or one given twice, is refused
// (checkMembers): ignoring a misspelt or misplaced filter would widen the
// answer silently.

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
	errBooks         = jsonrpc.InvalidParams("clob_ids: want an array of at most 64 orderbook ids, each 0x followed by 64 hex digits")
	errBooksAlias    = jsonrpc.InvalidParams("clob_ids and orderbook_ids are aliases: give one")
	errBooksAndBook  = jsonrpc.InvalidParams("orderbook_id and clob_ids (alias orderbook_ids) exclude each other: give one")
)

// The members each query object takes: the live openapi's (OrdersQuery,
// CandlesQuery, TriggersQuery, FillsQuery, BackstopTransfersQuery) plus
// ours, named in the error that refuses any other.
// Invariant: at most 64 members per list (checkMembers' bit set).
var (
	ordersMembers   = []string{"orderbook_id", "clob_ids", "orderbook_ids", "limit", "cursor", "status", "with_total", "with_fills"}
	candlesMembers  = []string{"resolution", "from_ts", "to_ts", "limit"}
	triggersMembers = []string{"orderbook_id", "limit", "cursor"}
	fillsMembers    = []string{"from_ts", "to_ts", "orderbook_id", "limit", "cursor"}
	backstopMembers = []string{"orderbook_id", "limit", "cursor"}
)

// memberNameMax bounds how much of an unknown member's name its error
// repeats.
const memberNameMax = 64

// checkMembers refuses a member of the object v that is not in known, or
// that is given twice, with a -32602 error naming it and what the query
// takes. It allocates only to refuse.
// REQUIRES: v is an object; len(known) ≤ 64.
// queryObject opens an optional query object: ok is false when it is
// absent or null (err nil: the defaults stand), or when it is not an
// object (errShape) or has a member the query does not take
// (checkMembers); the caller decodes the members only when ok.
func queryObject(v *fastjson.Value, errShape *jsonrpc.Error, query string, known []string) (ok bool, err *jsonrpc.Error) {
	switch {
	case absent(v):
		return false, nil
	case v.Type() != fastjson.TypeObject:
		return false, errShape
	}
	if err := checkMembers(v, query, known); err != nil {
		return false, err
	}
	return true, nil
}

func checkMembers(v *fastjson.Value, query string, known []string) *jsonrpc.Error {
	var seen uint64
	var bad *jsonrpc.Error
	v.GetObject().Visit(func(k []byte, _ *fastjson.Value) {
		if bad != nil {
			return
		}
		i := slices.Index(known, string(k))
		switch {
		case i < 0:
			bad = memberError(query, "unknown member ", k, known)
		case seen&(1<<i) != 0:
			bad = memberError(query, "member given twice: ", k, known)
		default:
			seen |= 1 << i
		}
	})
	return bad
}

func memberError(query, why string, k []byte, known []string) *jsonrpc.Error {
	name := k[:min(len(k), memberNameMax)]
	return jsonrpc.InvalidParams(query + ": " + why + strconv.Quote(string(name)) + "; it takes " + strings.Join(known, ", "))
}

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
func ParseOrdersQuery(v *fastjson.Value) (marketdata.OrdersQuery, *jsonrpc.Error) {
	q := marketdata.OrdersQuery{Limit: marketdata.OrdersLimitDefault}
	ok, err := queryObject(v, errOrdersQuery, "orders query", ordersMembers)
	if !ok {
		return q, err
	}
	if f := v.Get("orderbook_id"); !absent(f) {
		if q.Book, err = ParseOrderbookID(f); err != nil {
			return q, errOrdersBook
		}
		q.HasBook = true
	}
	if q.Books, err = parseBooks(v, q.HasBook); err != nil {
		return q, err
	}
	if f := v.Get("limit"); !absent(f) {
		n, err := jsonrpc.ParseQuantity(f)
		if err != nil || n < 1 {
			return q, errOrdersLimit
		}
		q.Limit = int(min(n, marketdata.OrdersLimitMax))
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
		if q.Status = marketdata.StatusNamed(s); ferr != nil || q.Status == marketdata.StatusAny {
			return q, errStatus
		}
	}
	if q.WithTotal, err = parseBool(v.Get("with_total"), errWithTotal); err != nil {
		return q, err
	}
	q.WithFills, err = parseBool(v.Get("with_fills"), errWithFills)
	return q, err
}

// parseBooks reads the orderbook list of an orders query, clob_ids or its
// alias orderbook_ids: at most OrdersBooksMax ids, returned sorted and
// distinct; nil when absent or empty (every book, as the spec's
// orderbook_ids of the subscriptions). It excludes orderbook_id (hasBook).
func parseBooks(v *fastjson.Value, hasBook bool) ([]clob.Hash, *jsonrpc.Error) {
	ids, alias := v.Get("clob_ids"), v.Get("orderbook_ids")
	switch {
	case !absent(ids) && !absent(alias):
		return nil, errBooksAlias
	case absent(ids):
		ids = alias
	}
	if absent(ids) {
		return nil, nil
	}
	if hasBook {
		return nil, errBooksAndBook
	}
	return ParseBookList(ids, marketdata.OrdersBooksMax, errBooks, errBooks)
}

// ParseBookList decodes a list of orderbook ids (an orders query's
// clob_ids, a subscription's orderbook_ids): a JSON array of at most max
// ids, returned sorted and distinct, nil when empty. errList refuses what
// is not such an array, errCount one longer than max.
func ParseBookList(v *fastjson.Value, max int, errList, errCount *jsonrpc.Error) ([]clob.Hash, *jsonrpc.Error) {
	arr, ferr := v.Array()
	if ferr != nil {
		return nil, errList
	}
	if len(arr) > max {
		return nil, errCount
	}
	if len(arr) == 0 {
		return nil, nil
	}
	books := make([]clob.Hash, len(arr))
	for i, x := range arr {
		h, err := jsonrpc.ParseHash(x)
		if err != nil {
			return nil, errList
		}
		books[i] = clob.Hash(h)
	}
	slices.SortFunc(books, compareHash)
	return slices.Compact(books), nil
}

// compareHash orders ids by their bytes, the order the index searches
// OrdersQuery.Books in.
func compareHash(a, b clob.Hash) int { return bytes.Compare(a[:], b[:]) }

// ParseCandlesQuery decodes ob_getCandles' query object: resolution and
// from_ts required; to_ts unbounded and limit CandlesLimitMax when absent.
func ParseCandlesQuery(v *fastjson.Value) (marketdata.CandlesQuery, *jsonrpc.Error) {
	q := marketdata.CandlesQuery{ToUs: math.MaxInt64, Limit: marketdata.CandlesLimitMax}
	if absent(v) || v.Type() != fastjson.TypeObject {
		return q, errCandlesQuery
	}
	if err := checkMembers(v, "candles query", candlesMembers); err != nil {
		return q, err
	}
	f := v.Get("resolution")
	if absent(f) {
		return q, errResolution
	}
	s, ferr := f.StringBytes()
	var ok bool
	if q.Resolution, ok = marketdata.ResolutionNamed(s); ferr != nil || !ok {
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
		q.Limit = int(min(n, marketdata.CandlesLimitMax))
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

// ParseCursor decodes a cursor's wire text "{ts}:{nonce}:{order_id_hex}":
// decimal ts (int64) and nonce (uint64) without signs, and the order id as
// 64 hex digits, with or without 0x.
func ParseCursor(s []byte) (marketdata.Cursor, bool) {
	var c marketdata.Cursor
	ok := parseCursor(&c, s)
	return c, ok
}

func parseCursor(c *marketdata.Cursor, s []byte) bool {
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

// Errors of ob_getCandles' positional form, named as the live guide names
// its parameters.
var (
	errCandlesArgs    = jsonrpc.InvalidParams("ob_getCandles: want [orderbook_id, query] or [orderbook_id, startTimestamp, endTimestamp, interval]")
	errInterval       = jsonrpc.InvalidParams("interval: want one of 1m, 5m, 15m, 1h, 4h, 1d, or its width in seconds: 60, 300, 900, 3600, 14400, 86400")
	errStartTs        = jsonrpc.InvalidParams("startTimestamp: want a non-negative integer of microseconds")
	errEndTs          = jsonrpc.InvalidParams("endTimestamp: want a non-negative integer of microseconds, or null")
	errEndBeforeStart = jsonrpc.InvalidParams("endTimestamp: must not be before startTimestamp")
)

// ParseCandlesParams decodes ob_getCandles' parameters after the orderbook
// id (args = params[1:]) in either of the live network's forms: the
// openapi's query object (ParseCandlesQuery), or the live guide's
// positional startTimestamp, endTimestamp, interval. The positional form
// is an alias: startTimestamp is from_ts, endTimestamp to_ts (null:
// unbounded), interval the resolution, either its name or its width in
// seconds (an integer: 60 is "1m", ..., 86400 is "1d"), and the limit is
// the object form's default; the answer is the object form's. Trailing
// nulls count as absent; a parameter beyond either form is refused.
func ParseCandlesParams(args []*fastjson.Value) (marketdata.CandlesQuery, *jsonrpc.Error) {
	for len(args) > 0 && absent(args[len(args)-1]) {
		args = args[:len(args)-1]
	}
	if len(args) == 0 {
		return ParseCandlesQuery(nil)
	}
	switch args[0].Type() {
	case fastjson.TypeNumber, fastjson.TypeString:
	default:
		if len(args) > 1 {
			return marketdata.CandlesQuery{}, errCandlesArgs
		}
		return ParseCandlesQuery(args[0])
	}
	q := marketdata.CandlesQuery{ToUs: math.MaxInt64, Limit: marketdata.CandlesLimitMax}
	if len(args) > 3 {
		return q, errCandlesArgs
	}
	var ok bool
	if q.FromUs, ok = parseTimestamp(args[0]); !ok {
		return q, errStartTs
	}
	if len(args) > 1 && !absent(args[1]) {
		if q.ToUs, ok = parseTimestamp(args[1]); !ok {
			return q, errEndTs
		}
		if q.ToUs < q.FromUs {
			return q, errEndBeforeStart
		}
	}
	if len(args) < 3 {
		return q, errInterval
	}
	if q.Resolution, ok = parseInterval(args[2]); !ok {
		return q, errInterval
	}
	return q, nil
}

// parseInterval reads a candle interval: a resolution's name, or its width
// in whole seconds (a JSON integer or 0x quantity).
func parseInterval(v *fastjson.Value) (marketdata.Resolution, bool) {
	if v.Type() == fastjson.TypeString {
		if r, ok := marketdata.ResolutionNamed(v.GetStringBytes()); ok {
			return r, true
		}
	}
	seconds, err := jsonrpc.ParseQuantity(v)
	if err != nil {
		return 0, false
	}
	return marketdata.ResolutionOfSeconds(seconds)
}
