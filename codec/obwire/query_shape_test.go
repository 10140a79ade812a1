package obwire

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/valyala/fastjson"
)

// Every member the live openapi documents for a query object (OrdersQuery,
// CandlesQuery, TriggersQuery, FillsQuery, BackstopTransfersQuery), plus
// ours, is taken; any other member, or one given twice, is refused with
// -32602 naming it. Before, unknown members were ignored, so a misspelt
// or unsupported filter silently widened the answer.
func TestQueryMembers(t *testing.T) {
	type parser func(*fastjson.Value) *jsonrpc.Error
	parsers := map[string]parser{
		"orders query":             func(v *fastjson.Value) *jsonrpc.Error { _, e := ParseOrdersQuery(v); return e },
		"candles query":            func(v *fastjson.Value) *jsonrpc.Error { _, e := ParseCandlesQuery(v); return e },
		"triggers query":           func(v *fastjson.Value) *jsonrpc.Error { _, e := ParseTriggersQuery(v); return e },
		"fills query":              func(v *fastjson.Value) *jsonrpc.Error { _, e := ParseFillsQuery(v); return e },
		"backstop transfers query": func(v *fastjson.Value) *jsonrpc.Error { _, e := ParseBackstopQuery(v); return e },
	}
	// Each documented member once, with a valid value (the openapi's
	// members first, ours after).
	documented := map[string]string{
		"orders query": `{"orderbook_id":"` + idA + `","limit":10,"cursor":"1:2:` + idA[2:] + `","status":"active",` +
			`"with_fills":true,"with_total":true}`,
		"candles query":            `{"resolution":"1h","from_ts":1,"to_ts":2,"limit":100}`,
		"triggers query":           `{"orderbook_id":"` + idA + `","limit":10,"cursor":"` + idA + `:` + idA + `"}`,
		"fills query":              `{"from_ts":1,"to_ts":2,"orderbook_id":"` + idA + `","limit":10,"cursor":"1:2"}`,
		"backstop transfers query": `{"orderbook_id":"` + idA + `","limit":10,"cursor":"1:2"}`,
	}
	for name, parse := range parsers {
		doc := documented[name]
		if err := parse(param(t, doc)); err != nil {
			t.Fatalf("%s: documented members refused: %s: %v", name, doc, err)
		}
		takes := map[string][]string{"orders query": ordersMembers, "candles query": candlesMembers,
			"triggers query": triggersMembers, "fills query": fillsMembers, "backstop transfers query": backstopMembers}[name]
		list := strings.Join(takes, ", ")
		for _, bad := range []string{"unknown", "orderbookId", "clob_id", "bidder", "interval", "Limit", "depth"} {
			in := doc[:len(doc)-1] + `,"` + bad + `":1}`
			wantErr(t, in, parse(param(t, in)), name+`: unknown member "`+bad+`"; it takes `+list)
		}
		// A documented member given twice is refused too: which of the two
		// applies is not for us to guess.
		in := doc[:len(doc)-1] + `,"limit":1}`
		wantErr(t, in, parse(param(t, in)), name+`: member given twice: "limit"; it takes `+list)
	}
	// clob_ids is the orders query's only: elsewhere it is an unknown member.
	in := `{"clob_ids":["` + idA + `"]}`
	wantErr(t, in, func() *jsonrpc.Error { _, e := ParseTriggersQuery(param(t, in)); return e }(),
		`triggers query: unknown member "clob_ids"; it takes orderbook_id, limit, cursor`)
	// A long member name is cut in the error.
	long := strings.Repeat("x", 1000)
	_, err := ParseOrdersQuery(param(t, `{"`+long+`":1}`))
	if err == nil || len(err.Data) > 300 || !strings.Contains(string(err.Data), strings.Repeat("x", memberNameMax)) {
		t.Fatalf("long member: %v", err)
	}
}

// clob_ids (alias orderbook_ids) filters ob_getOrders on a list of books:
// sorted and distinct once parsed, at most OrdersBooksMax, exclusive with
// orderbook_id and with its alias; empty means every book.
func TestParseOrdersBooks(t *testing.T) {
	f := func(input string, want []clob.Hash, wantError string) {
		t.Helper()
		got, err := ParseOrdersQuery(param(t, input))
		if wantError != "" {
			wantErr(t, input, err, wantError)
			return
		}
		if err != nil || !reflect.DeepEqual(got.Books, want) || got.HasBook {
			t.Fatalf("%s: got %x %v", input, got.Books, err)
		}
	}
	f(`{"clob_ids":["`+idB+`","`+idA+`","`+idB+`"]}`, []clob.Hash{bookA, bookB}, "")
	f(`{"orderbook_ids":["`+idA+`"]}`, []clob.Hash{bookA}, "")
	f(`{"clob_ids":[]}`, nil, "")
	f(`{"clob_ids":null,"orderbook_ids":["`+idA+`"]}`, []clob.Hash{bookA}, "")
	many := make([]string, marketdata.OrdersBooksMax)
	for i := range many {
		many[i] = `"` + idA + `"`
	}
	f(`{"clob_ids":[`+strings.Join(many, ",")+`]}`, []clob.Hash{bookA}, "")
	const errText = "clob_ids: want an array of at most 64 orderbook ids, each 0x followed by 64 hex digits"
	f(`{"clob_ids":[`+strings.Join(append(many, `"`+idB+`"`), ",")+`]}`, nil, errText)
	f(`{"clob_ids":"`+idA+`"}`, nil, errText)
	f(`{"clob_ids":["0x01"]}`, nil, errText)
	f(`{"clob_ids":[1]}`, nil, errText)
	f(`{"clob_ids":["`+idA+`"],"orderbook_ids":["`+idA+`"]}`, nil, "clob_ids and orderbook_ids are aliases: give one")
	f(`{"orderbook_id":"`+idA+`","clob_ids":["`+idA+`"]}`, nil, "orderbook_id and clob_ids (alias orderbook_ids) exclude each other: give one")
	f(`{"orderbook_id":"`+idA+`","orderbook_ids":[]}`, nil, "orderbook_id and clob_ids (alias orderbook_ids) exclude each other: give one")
}

// ob_getCandles' positional form [id, startTimestamp, endTimestamp,
// interval] (the live guide's) is an alias of the object form: the same
// query, so the same answer.
func TestParseCandlesParams(t *testing.T) {
	args := func(s string) []*fastjson.Value {
		t.Helper()
		return param(t, s).GetArray()
	}
	f := func(positional, object string) {
		t.Helper()
		got, err := ParseCandlesParams(args(positional))
		want, werr := ParseCandlesQuery(param(t, object))
		if err != nil || werr != nil || got != want {
			t.Fatalf("%s: got %+v %v, want %+v %v (as %s)", positional, got, err, want, werr, object)
		}
	}
	f(`[1704067200000000, 1704153600000000, "1h"]`, `{"resolution":"1h","from_ts":1704067200000000,"to_ts":1704153600000000}`)
	f(`[1704067200000000, 1704153600000000, 3600]`, `{"resolution":"1h","from_ts":1704067200000000,"to_ts":1704153600000000}`)
	f(`["0x10", null, "0x3c"]`, `{"resolution":"1m","from_ts":16}`)
	f(`[0, 5, 86400, null]`, `{"resolution":"1d","from_ts":0,"to_ts":5}`)
	for r := marketdata.Res1m; r <= marketdata.Res1d; r++ {
		f(`[1, 2, "`+r.String()+`"]`, `{"resolution":"`+r.String()+`","from_ts":1,"to_ts":2}`)
		f(`[1, 2, `+strconv.FormatInt(r.Us()/1_000_000, 10)+`]`, `{"resolution":"`+r.String()+`","from_ts":1,"to_ts":2}`)
	}
	// The object form is unchanged.
	f(`[{"resolution":"5m","from_ts":3,"limit":7}]`, `{"resolution":"5m","from_ts":3,"limit":7}`)
	f(`[{"resolution":"5m","from_ts":3}, null]`, `{"resolution":"5m","from_ts":3}`)

	e := func(input, want string) {
		t.Helper()
		_, err := ParseCandlesParams(args(input))
		wantErr(t, input, err, want)
	}
	const interval = "interval: want one of 1m, 5m, 15m, 1h, 4h, 1d, or its width in seconds: 60, 300, 900, 3600, 14400, 86400"
	for _, bad := range []string{`"30m"`, `"60"`, `61`, `60000000`, `0`, `-60`, `60.5`, `"1H"`, `true`, `{}`, `3600000000`, `"0xffffffffffffffff"`} {
		e(`[1, 2, `+bad+`]`, interval)
	}
	e(`[1, 2]`, interval)
	e(`[1]`, interval)
	e(`[1, 2, null]`, interval)
	e(`[-1, 2, "1m"]`, "startTimestamp: want a non-negative integer of microseconds")
	e(`["x", 2, "1m"]`, "startTimestamp: want a non-negative integer of microseconds")
	e(`[1, "x", "1m"]`, "endTimestamp: want a non-negative integer of microseconds, or null")
	e(`[2, 1, "1m"]`, "endTimestamp: must not be before startTimestamp")
	e(`[1, 2, "1m", 5]`, "ob_getCandles: want [orderbook_id, query] or [orderbook_id, startTimestamp, endTimestamp, interval]")
	e(`[{"resolution":"1m","from_ts":1}, 5]`, "ob_getCandles: want [orderbook_id, query] or [orderbook_id, startTimestamp, endTimestamp, interval]")
	e(`[]`, "candles query: want an object with resolution and from_ts")
	e(`[null]`, "candles query: want an object with resolution and from_ts")
	e(`[[]]`, "candles query: want an object with resolution and from_ts")
	if q, err := ParseCandlesParams(args(`[0, null, "1m"]`)); err != nil || q.ToUs != math.MaxInt64 || q.Limit != marketdata.CandlesLimitMax {
		t.Fatalf("defaults: %+v %v", q, err)
	}
}

// The openapi Order: reduce_only and ioc are perp-only booleans, present on
// every perp order (false included) and omitted on spot ones; post_only is
// on both and omitted when false.
func TestAppendOrderFlags(t *testing.T) {
	f := func(kind clob.MarketKind, flags uint8, want, absent []string) {
		t.Helper()
		m := meta(1, bookA, alice, 1, 1000, clob.Buy)
		m.Flags = flags
		js := string(AppendOrder(nil, &marketdata.Order{Meta: *m, MarketKind: kind, Status: marketdata.StatusActive}, false))
		for _, w := range want {
			if !strings.Contains(js, w) {
				t.Fatalf("kind %d flags %#x: %s lacks %s", kind, flags, js, w)
			}
		}
		for _, a := range absent {
			if strings.Contains(js, a) {
				t.Fatalf("kind %d flags %#x: %s has %s", kind, flags, js, a)
			}
		}
	}
	f(clob.Perp, 0, []string{`"fills":[],"reduce_only":false,"ioc":false,"direction":"buy"}`}, []string{`post_only`})
	f(clob.Perp, clob.FlagReduceOnly|clob.FlagIOC, []string{`"reduce_only":true,"ioc":true,"direction"`}, []string{`post_only`})
	f(clob.Perp, clob.FlagPostOnly, []string{`"reduce_only":false,"ioc":false,"direction":"buy","post_only":true}`}, nil)
	f(clob.Spot, 0, []string{`"fills":[],"direction":"buy"}`}, []string{`reduce_only`, `"ioc"`, `post_only`})
	f(clob.Spot, clob.FlagIOC|clob.FlagPostOnly, []string{`"direction":"buy","post_only":true}`}, []string{`reduce_only`, `"ioc"`})
}

// One name per grouping: ob_getTriggers writes it always, an order only
// when it is not the default "none" (the openapi Order omits it then).
func TestGroupingNames(t *testing.T) {
	if GroupingName(clob.GroupingNone) != "none" || GroupingName(clob.GroupingAsset) != "asset" ||
		TriggerTypeName(clob.TriggerTakeProfit) != "take_profit" || TriggerTypeName(clob.TriggerStopLoss) != "stop_loss" {
		t.Fatal("names")
	}
	if got := string(AppendGrouping(nil, clob.GroupingNone)); got != "" {
		t.Fatalf("none: %q", got)
	}
	if got := string(AppendGrouping(nil, clob.GroupingAsset)); got != `,"grouping":"asset"` {
		t.Fatalf("asset: %q", got)
	}
	for v := range 256 {
		if marketdata.ValidTriggerType(uint8(v)) != (uint8(v) == clob.TriggerTakeProfit || uint8(v) == clob.TriggerStopLoss) ||
			marketdata.ValidGrouping(uint8(v)) != (uint8(v) == clob.GroupingNone || uint8(v) == clob.GroupingAsset) {
			t.Fatalf("validity of %d", v)
		}
	}
}
