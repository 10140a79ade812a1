package obindex

import (
	"testing"

	"github.com/ledgervenue/node/codec/jsonrpc"
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
		if e == nil && (oq.Limit < 1 || oq.Limit > OrdersLimitMax || oq.Cursor.TsUs < 0) {
			t.Fatalf("orders query out of range: %+v", oq)
		}
		if e == nil && oq.HasCursor {
			text := AppendCursor(nil, &oq.Cursor)
			if c, ok := ParseCursor(text); !ok || c != oq.Cursor {
				t.Fatalf("cursor %q does not round-trip", text)
			}
		}
		cq, e := ParseCandlesQuery(v)
		check(e)
		if e == nil && (cq.Limit < 1 || cq.Limit > CandlesLimitMax || cq.FromUs < 0 || cq.ToUs < cq.FromUs || cq.Resolution >= resolutionCount) {
			t.Fatalf("candles query out of range: %+v", cq)
		}
		_, e = ParseOrderbookID(v)
		check(e)
		ParseCursor([]byte(head + tail))
	})
}
