package obwire

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/valyala/fastjson"
)

// ob_getFills' shape: the openapi FillResponse fields, order_type and
// initial_size null for an order the index did not know, the perp fields
// on perp markets only, and the cursor of the page's last row.
func TestFillsJSON(t *testing.T) {
	x := newTestIndex()
	x.AddMarket(marketP()) // the index names each row's market tokens
	p := marketdata.FillsPage{Fills: []*marketdata.FillRow{
		{Seq: 4, TickUs: 3000, Book: bookP, OrderID: hashOf(3), Side: clob.Sell, Maker: true, HasOrder: true, Type: clob.Market,
			Size: dec(e18), Base: dec(e18), Quote: dec("5" + e18[1:]), Price: dec("5" + e18[1:]),
			Perp: true, Position: pos("2" + e18[1:]), Realized: neg("12")},
		{Seq: 3, TickUs: 2000, Book: bookB, OrderID: hashOf(2), Side: clob.Sell, Base: dec(e17), Quote: dec("5" + e17[1:]),
			Price: dec("6" + e18[1:])},
	}, Next: marketdata.SeqCursor{TsUs: 2000, Seq: 3}, HasNext: true}
	got := string(AppendFills(nil, x, &p))
	want := `{"fills":[{"orderbook_id":"0x` + fmt.Sprintf("%x", bookP) + `","base_token":"0x0000000000000000000000000000000000000044",` +
		`"quote_token":"0x0000000000000000000000000000000000000022","order_id":"0x` + fmt.Sprintf("%x", hashOf(3)) + `",` +
		`"order_type":"market","initial_size":"-1000000000000000000","fee":"0x0","base_amount":"0xde0b6b3a7640000",` +
		`"quote_amount":"0x4563918244f40000","timestamp":3000,"price":"0x4563918244f40000","side":"sell","maker":true,` +
		`"position_before":"3000000000000000000","position_after":"2000000000000000000","realized_pnl":"-12"},` +
		`{"orderbook_id":"0x` + fmt.Sprintf("%x", bookB) + `","base_token":"0x0000000000000000000000000000000000000033",` +
		`"quote_token":"0x0000000000000000000000000000000000000022","order_id":"0x` + fmt.Sprintf("%x", hashOf(2)) + `",` +
		`"order_type":null,"initial_size":null,"fee":"0x0","base_amount":"0x16345785d8a0000","quote_amount":"0x6f05b59d3b20000",` +
		`"timestamp":2000,"price":"0x53444835ec580000","side":"sell","maker":false}],"next_cursor":"2000:3"}`
	if got != want {
		t.Fatalf("JSON\n got %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Fatal("invalid JSON")
	}
}

// The fills query's filters and cursor decode to the query the index
// pages by; a cursor's wire text reads back as the cursor.
func TestFillsQueryDecodes(t *testing.T) {
	all := marketdata.FillsQuery{ToUs: math.MaxInt64, Limit: marketdata.FillsLimitMax}
	with := func(edit func(q *marketdata.FillsQuery)) marketdata.FillsQuery {
		q := all
		edit(&q)
		return q
	}
	for _, c := range []struct {
		q    string
		want marketdata.FillsQuery
	}{
		{`{"orderbook_id":"` + fmt.Sprintf("0x%x", bookA) + `"}`, with(func(q *marketdata.FillsQuery) { q.Book, q.HasBook = bookA, true })},
		{`{"from_ts":2000,"to_ts":3000}`, with(func(q *marketdata.FillsQuery) { q.FromUs, q.ToUs = 2000, 3000 })},
		{`{"from_ts":2001}`, with(func(q *marketdata.FillsQuery) { q.FromUs = 2001 })},
		{`{"to_ts":1000}`, with(func(q *marketdata.FillsQuery) { q.ToUs = 1000 })},
		{`{"limit":1}`, with(func(q *marketdata.FillsQuery) { q.Limit = 1 })},
		{`{"cursor":"0:2"}`, with(func(q *marketdata.FillsQuery) { q.Cursor, q.HasCursor = marketdata.SeqCursor{Seq: 2}, true })},
	} {
		if got, err := ParseFillsQuery(fastjson.MustParse(c.q)); err != nil || got != c.want {
			t.Fatalf("%s: %+v %v, want %+v", c.q, got, err, c.want)
		}
	}
	for _, c := range []marketdata.SeqCursor{{}, {TsUs: 2000, Seq: 3}, {TsUs: math.MaxInt64, Seq: math.MaxUint64}} {
		text := appendSeqCursor(nil, &c, true)
		q, err := ParseFillsQuery(fastjson.MustParse(`{"cursor":` + string(text) + `}`))
		if err != nil || !q.HasCursor || q.Cursor != c {
			t.Fatalf("cursor %s: %+v %v", text, q.Cursor, err)
		}
	}
}

// ob_getBackstopTransfers' shape: the openapi BackstopTransferResponse,
// signed amounts as decimal strings.
func TestBackstopTransfersJSON(t *testing.T) {
	p := marketdata.BackstopPage{Total: 1, Transfers: []*marketdata.BackstopTransfer{{Seq: 6, TickUs: 3000, User: alice, Book: bookP,
		Size: pos("2" + e18[1:]), Cash: neg("3"), Mark: dec("4" + e18[1:]), Equity: pos("42")}}}
	got := string(AppendBackstopTransfers(nil, &p))
	want := `{"transfers":[{"user":"0x00000000000000000000000000000000000000a1","orderbook_id":"0x` + fmt.Sprintf("%x", bookP) +
		`","size":"2000000000000000000","cash":"-3","mark_price":"0x3782dace9d900000","equity":"42","timestamp":3000}],` +
		`"total_count":1,"next_cursor":null}`
	if got != want {
		t.Fatalf("JSON\n got %s\nwant %s", got, want)
	}
}

func TestHistoryParams(t *testing.T) {
	for _, c := range []struct{ q, err string }{
		{`[]`, "fills query: want an object"},
		{`{"limit":0}`, "limit: want an integer of at least 1"},
		{`{"cursor":"1:"}`, `cursor: want "{ts}:{seq}" as returned in next_cursor`},
		{`{"cursor":"1:2x"}`, `cursor: want "{ts}:{seq}" as returned in next_cursor`},
		{`{"cursor":5}`, `cursor: want "{ts}:{seq}" as returned in next_cursor`},
		{`{"from_ts":-1}`, "from_ts: want a non-negative integer of microseconds"},
		{`{"from_ts":3,"to_ts":2}`, "to_ts: must not be before from_ts"},
	} {
		if _, err := ParseFillsQuery(fastjson.MustParse(c.q)); err == nil || string(err.Data) != `"`+strings.ReplaceAll(c.err, `"`, `\"`)+`"` {
			t.Fatalf("%s: %v, want %q", c.q, err, c.err)
		}
	}
	q, _ := ParseFillsQuery(fastjson.MustParse(`{"limit":100000}`))
	if q.Limit != marketdata.FillsLimitMax || q.ToUs != math.MaxInt64 {
		t.Fatalf("defaults %+v", q)
	}
	b, err := ParseBackstopQuery(fastjson.MustParse(`{"limit":100000,"cursor":"7:9"}`))
	if err != nil || b.Limit != marketdata.BackstopLimitMax || b.Cursor != (marketdata.SeqCursor{TsUs: 7, Seq: 9}) || !b.HasCursor {
		t.Fatalf("backstop query %+v %v", b, err)
	}
	if b, _ := ParseBackstopQuery(nil); b.Limit != marketdata.BackstopLimitDefault {
		t.Fatalf("backstop default %+v", b)
	}
}
