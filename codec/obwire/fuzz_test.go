package obwire

import (
	"slices"
	"testing"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/valyala/fastjson"
)

// FuzzParams feeds arbitrary JSON to every query decoder. They must never
// panic, must answer only -32602, and what they accept must be in range.
// The input arrives in two halves, joined, as the codec fuzz targets do.
func FuzzParams(f *testing.F) {
	for _, seed := range []string{
		`{"orderbook_id":"` + idA + `","limit":10,"status":"active","with_total":true}`,
		`{"cursor":"1704153600000000:42:abcdef1234567890abcdef1234567890abcdef1234567890abcdef1234567890"}`,
		`{"resolution":"1h","from_ts":1704067200000000,"to_ts":1704153600000000,"limit":100}`,
		`{"resolution":"1d","from_ts":"0x10","to_ts":null}`,
		`20`, `"0x14"`, `null`, `[]`, `{"limit":-1}`, `{"cursor":"1:2:3"}`,
		`{"clob_ids":["` + idB + `","` + idA + `"],"limit":2}`, `{"orderbook_ids":[],"status":"filled"}`,
		`{"limit":1,"limit":2,"unknown":3}`,
		`[1704067200000000,1704153600000000,"1h"]`, `["0x10",null,3600]`, `[{"resolution":"1m","from_ts":0},null]`,
	} {
		f.Add(seed[:len(seed)/2], seed[len(seed)/2:])
	}
	f.Fuzz(func(t *testing.T, head, tail string) {
		var p fastjson.Parser
		v, err := p.Parse(head + tail)
		if err != nil {
			return
		}
		check := func(e *jsonrpc.Error) {
			if e != nil && e.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("error code %d", e.Code)
			}
		}
		depth, e := ParseDepth(v)
		check(e)
		if e == nil && depth < 0 {
			t.Fatalf("depth %d", depth)
		}
		oq, e := ParseOrdersQuery(v)
		check(e)
		if e == nil && (oq.Limit < 1 || oq.Limit > marketdata.OrdersLimitMax || oq.Cursor.TsUs < 0) {
			t.Fatalf("orders query out of range: %+v", oq)
		}
		if e == nil && (len(oq.Books) > marketdata.OrdersBooksMax || oq.HasBook && len(oq.Books) > 0 ||
			!slices.IsSortedFunc(oq.Books, compareHash) || len(slices.Compact(slices.Clone(oq.Books))) != len(oq.Books)) {
			t.Fatalf("orders query books out of range: %+v", oq)
		}
		if e == nil && oq.HasCursor {
			text := AppendCursor(nil, &oq.Cursor)
			if c, ok := ParseCursor(text); !ok || c != oq.Cursor {
				t.Fatalf("cursor %q does not round-trip", text)
			}
		}
		cq, e := ParseCandlesQuery(v)
		check(e)
		if e == nil && (cq.Limit < 1 || cq.Limit > marketdata.CandlesLimitMax || cq.FromUs < 0 || cq.ToUs < cq.FromUs || cq.Resolution > marketdata.Res1d) {
			t.Fatalf("candles query out of range: %+v", cq)
		}
		if v.Type() == fastjson.TypeArray {
			cq, e := ParseCandlesParams(v.GetArray())
			check(e)
			if e == nil && (cq.Limit < 1 || cq.Limit > marketdata.CandlesLimitMax || cq.FromUs < 0 || cq.ToUs < cq.FromUs || cq.Resolution > marketdata.Res1d) {
				t.Fatalf("candles params out of range: %+v", cq)
			}
		}
		for _, parse := range []func(*fastjson.Value) *jsonrpc.Error{
			func(v *fastjson.Value) *jsonrpc.Error { _, e := ParseTriggersQuery(v); return e },
			func(v *fastjson.Value) *jsonrpc.Error { _, e := ParseFillsQuery(v); return e },
			func(v *fastjson.Value) *jsonrpc.Error { _, e := ParseBackstopQuery(v); return e },
		} {
			check(parse(v))
		}
		_, e = ParseOrderbookID(v)
		check(e)
		ParseCursor([]byte(head + tail))
	})
}
