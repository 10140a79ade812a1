package obwire

import (
	"math"
	"reflect"
	"testing"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/valyala/fastjson"
)

// param parses s as one JSON value; "" is an absent parameter.
func param(t *testing.T, s string) *fastjson.Value {
	t.Helper()
	if s == "" {
		return nil
	}
	v, err := fastjson.Parse(s)
	if err != nil {
		t.Fatalf("bad test JSON %q: %v", s, err)
	}
	return v
}

func wantErr(t *testing.T, input string, err *jsonrpc.Error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s", input, want)
	}
	if err.Code != jsonrpc.CodeInvalidParams || string(err.Data) != string(jsonrpc.AppendString(nil, want)) {
		t.Fatalf("%s: error %d %s, want -32602 %q", input, err.Code, err.Data, want)
	}
}

func TestParseDepth(t *testing.T) {
	f := func(input string, want int, wantError string) {
		t.Helper()
		got, err := ParseDepth(param(t, input))
		if wantError != "" {
			wantErr(t, input, err, wantError)
			return
		}
		if err != nil || got != want {
			t.Fatalf("%s: got %d %v, want %d", input, got, err, want)
		}
	}
	f("", 0, "")
	f("null", 0, "")
	f("20", 20, "")
	f(`"0x14"`, 20, "")
	f("1e30", 0, "depth: want an integer of at least 1")
	f("0", 0, "depth: want an integer of at least 1")
	f("-1", 0, "depth: want an integer of at least 1")
	f("2.5", 0, "depth: want an integer of at least 1")
	f(`"20"`, 0, "depth: want an integer of at least 1")
	f("99999999999", math.MaxInt32, "")
}

func TestParseOrdersQuery(t *testing.T) {
	f := func(input string, want marketdata.OrdersQuery, wantError string) {
		t.Helper()
		got, err := ParseOrdersQuery(param(t, input))
		if wantError != "" {
			wantErr(t, input, err, wantError)
			return
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\ngot  %+v %v\nwant %+v", input, got, err, want)
		}
	}
	def := marketdata.OrdersQuery{Limit: marketdata.OrdersLimitDefault}
	f("", def, "")
	f("null", def, "")
	f("{}", def, "")
	f(`{"orderbook_id":null,"clob_ids":null,"limit":null,"cursor":null,"status":null,"with_total":null,"with_fills":null}`, def, "")
	f(`{"orderbook_id":"`+idA+`","limit":10,"status":"active","with_total":true,"with_fills":false}`,
		marketdata.OrdersQuery{Book: bookA, HasBook: true, Limit: 10, Status: marketdata.StatusActive, WithTotal: true}, "")
	f(`{"limit":100000}`, marketdata.OrdersQuery{Limit: marketdata.OrdersLimitMax}, "")
	f(`{"status":"post_only_refused","with_fills":true}`, marketdata.OrdersQuery{Limit: marketdata.OrdersLimitDefault, Status: marketdata.StatusPostOnlyRefused, WithFills: true}, "")
	var id clob.Hash
	id[0], id[31] = 0xab, 0xcd
	f(`{"cursor":"1704153600000000:42:ab000000000000000000000000000000000000000000000000000000000000cd"}`,
		marketdata.OrdersQuery{Limit: marketdata.OrdersLimitDefault, HasCursor: true, Cursor: marketdata.Cursor{TsUs: 1704153600000000, Nonce: 42, ID: id}}, "")
	f(`{"cursor":"0:0:0xAB000000000000000000000000000000000000000000000000000000000000CD"}`,
		marketdata.OrdersQuery{Limit: marketdata.OrdersLimitDefault, HasCursor: true, Cursor: marketdata.Cursor{ID: id}}, "")

	f(`[]`, def, "orders query: want an object")
	f(`"x"`, def, "orders query: want an object")
	f(`{"orderbook_id":"0x01"}`, def, "orderbook_id: want 0x followed by 64 hex digits")
	f(`{"limit":0}`, def, "limit: want an integer of at least 1")
	f(`{"limit":-5}`, def, "limit: want an integer of at least 1")
	f(`{"limit":"ten"}`, def, "limit: want an integer of at least 1")
	f(`{"status":"open"}`, def, "status: want one of pending, active, filled, expired, canceled, margin_canceled, post_only_refused, invalid")
	f(`{"status":1}`, def, "status: want one of pending, active, filled, expired, canceled, margin_canceled, post_only_refused, invalid")
	f(`{"with_total":"yes"}`, def, "with_total: want true or false")
	f(`{"with_fills":1}`, def, "with_fills: want true or false")
	const errCursorText = `cursor: want "{ts}:{nonce}:{order_id_hex}" as returned in next_cursor`
	for _, c := range []string{
		`""`, `"1:2"`, `"1:2:"`, `":2:` + idA[2:] + `"`, `"1::` + idA[2:] + `"`, `"-1:2:` + idA[2:] + `"`,
		`"1:2:` + idA[3:] + `"`, `"1:2:` + idA[2:] + `0"`, `"1:2:` + idA[2:65] + `g"`,
		`"9223372036854775808:2:` + idA[2:] + `"`, `"1:18446744073709551616:` + idA[2:] + `"`, `7`,
	} {
		f(`{"cursor":`+c+`}`, def, errCursorText)
	}
}

func TestParseCandlesQuery(t *testing.T) {
	f := func(input string, want marketdata.CandlesQuery, wantError string) {
		t.Helper()
		got, err := ParseCandlesQuery(param(t, input))
		if wantError != "" {
			wantErr(t, input, err, wantError)
			return
		}
		if err != nil || got != want {
			t.Fatalf("%s:\ngot  %+v %v\nwant %+v", input, got, err, want)
		}
	}
	f(`{"resolution":"1h","from_ts":1704067200000000,"to_ts":1704153600000000,"limit":100}`,
		marketdata.CandlesQuery{Resolution: marketdata.Res1h, FromUs: 1704067200000000, ToUs: 1704153600000000, Limit: 100}, "")
	f(`{"resolution":"1m","from_ts":0}`, marketdata.CandlesQuery{Resolution: marketdata.Res1m, ToUs: math.MaxInt64, Limit: marketdata.CandlesLimitMax}, "")
	f(`{"resolution":"1d","from_ts":"0x10","to_ts":null,"limit":1000000}`,
		marketdata.CandlesQuery{Resolution: marketdata.Res1d, FromUs: 16, ToUs: math.MaxInt64, Limit: marketdata.CandlesLimitMax}, "")
	f(`{"resolution":"5m","from_ts":5,"to_ts":5}`, marketdata.CandlesQuery{Resolution: marketdata.Res5m, FromUs: 5, ToUs: 5, Limit: marketdata.CandlesLimitMax}, "")
	for r := marketdata.Res1m; r <= marketdata.Res1d; r++ {
		f(`{"resolution":"`+r.String()+`","from_ts":1}`, marketdata.CandlesQuery{Resolution: r, FromUs: 1, ToUs: math.MaxInt64, Limit: marketdata.CandlesLimitMax}, "")
	}

	var zero marketdata.CandlesQuery
	f(``, zero, "candles query: want an object with resolution and from_ts")
	f(`null`, zero, "candles query: want an object with resolution and from_ts")
	f(`[]`, zero, "candles query: want an object with resolution and from_ts")
	f(`{"from_ts":1}`, zero, "resolution: want one of 1m, 5m, 15m, 1h, 4h, 1d")
	f(`{"resolution":"30m","from_ts":1}`, zero, "resolution: want one of 1m, 5m, 15m, 1h, 4h, 1d")
	f(`{"resolution":1,"from_ts":1}`, zero, "resolution: want one of 1m, 5m, 15m, 1h, 4h, 1d")
	f(`{"resolution":"1m"}`, zero, "from_ts: required")
	f(`{"resolution":"1m","from_ts":-1}`, zero, "from_ts: want a non-negative integer of microseconds")
	f(`{"resolution":"1m","from_ts":1.5}`, zero, "from_ts: want a non-negative integer of microseconds")
	f(`{"resolution":"1m","from_ts":"0xffffffffffffffff"}`, zero, "from_ts: want a non-negative integer of microseconds")
	f(`{"resolution":"1m","from_ts":1,"to_ts":"x"}`, zero, "to_ts: want a non-negative integer of microseconds")
	f(`{"resolution":"1m","from_ts":2,"to_ts":1}`, zero, "to_ts: must not be before from_ts")
	f(`{"resolution":"1m","from_ts":1,"limit":0}`, zero, "limit: want an integer of at least 1")
}

func TestParseOrderbookID(t *testing.T) {
	id, err := ParseOrderbookID(param(t, `"`+idB+`"`))
	if err != nil || id != bookB {
		t.Fatalf("got %x %v", id, err)
	}
	if _, err := ParseOrderbookID(nil); err == nil || err.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("missing id: %v", err)
	}
	if _, err := ParseOrderbookID(param(t, `"0x1"`)); err == nil || err.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("short id: %v", err)
	}
}
