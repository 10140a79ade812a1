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

func marketPH() *clob.MarketConfig {
	c := marketA()
	c.ID, c.Name, c.Kind, c.BaseSymbol, c.Base = bookP, "ETH-PERP", clob.Perp, "ETH", addrOf(0x44)
	c.Perp.MaxLeverage = 10
	return c
}

// historyIndex has alice's fills: order 1 (limit buy of 1 on book A) in
// ticks 1000 and 2000, order 2 (unknown to the index) on book B in tick
// 2000, and a perp fill of order 3 (sell 1, from long 3 to long 2) in tick
// 3000; bob's fill of order 4 in tick 3000; and two liquidations in tick
// 3000 (alice on the perp book, bob on book A).
func historyIndex() *marketdata.Index {
	x := newTestIndex()
	x.AddMarket(marketPH())
	x.SetEquity(func(a clob.Address) clob.Signed {
		if a == alice {
			return clob.Signed{Abs: dec("42")}
		}
		return clob.Signed{Neg: true, Abs: dec("7")}
	})
	x.Admitted(meta(1, bookA, alice, 1, 100, clob.Buy))
	m := meta(3, bookP, alice, 3, 200, clob.Sell)
	m.Type = clob.Market
	x.Admitted(m)
	x.Admitted(meta(4, bookP, bob, 1, 200, clob.Buy))
	fill := func(id byte, owner clob.Address, side clob.Side, base string) clob.Event {
		e := fillEv(id, base, "5"+base[1:], base, base, false)
		e.Owner, e.Side = owner, side
		return e
	}
	x.Tick(mkTick(1000, bookTick{book: bookA, price: "5" + e18[1:], volume: e17, events: []clob.Event{fill(1, alice, clob.Buy, e17)}}))
	x.Tick(mkTick(2000,
		bookTick{book: bookA, price: "5" + e18[1:], volume: e17, events: []clob.Event{fill(1, alice, clob.Buy, e17)}},
		bookTick{book: bookB, price: "6" + e18[1:], volume: e17, events: []clob.Event{fill(2, alice, clob.Sell, e17)}}))
	perp := fill(3, alice, clob.Sell, e18)
	perp.Position, perp.Realized, perp.Maker = clob.Signed{Abs: dec("2" + e18[1:])}, clob.Signed{Neg: true, Abs: dec("12")}, true
	res := mkTick(3000, bookTick{book: bookP, price: "5" + e18[1:], volume: e18, events: []clob.Event{perp, fill(4, bob, clob.Buy, e18)}})
	res.Events = append(res.Events,
		clob.Event{Kind: clob.EventLiquidation, Book: bookP, Owner: alice, Position: clob.Signed{Abs: dec("2" + e18[1:])},
			Realized: clob.Signed{Neg: true, Abs: dec("3")}, Price: dec("4" + e18[1:])},
		clob.Event{Kind: clob.EventLiquidation, Book: bookA, Owner: bob, Position: clob.Signed{Neg: true, Abs: dec(e17)}, Price: dec("9")},
		clob.Event{Kind: clob.EventLiquidation, Book: hashOf(0x99), Owner: bob}) // not a market of the index
	x.Tick(res)
	return x
}

func fillsQuery(t *testing.T, q string) marketdata.FillsQuery {
	t.Helper()
	fq, err := ParseFillsQuery(fastjson.MustParse(q))
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return fq
}

func fillTimes(p marketdata.FillsPage) string {
	var s []string
	for _, f := range p.Fills {
		s = append(s, fmt.Sprintf("%d/%x", f.TickUs, f.OrderID[31]))
	}
	return strings.Join(s, " ")
}

func TestFillsPages(t *testing.T) {
	x := historyIndex()
	all := x.Fills(alice, &marketdata.FillsQuery{ToUs: math.MaxInt64, Limit: marketdata.FillsLimitMax})
	if got := fillTimes(all); got != "3000/3 2000/2 2000/1 1000/1" || all.HasNext {
		t.Fatalf("all fills %s (next %v)", got, all.HasNext)
	}
	// Pages of one, through the cursor's wire text: neither skip nor repeat.
	var walked []string
	q := fillsQuery(t, `{"limit":1}`)
	for range 10 {
		p := x.Fills(alice, &q)
		walked = append(walked, fillTimes(p))
		if !p.HasNext {
			break
		}
		cur := appendSeqCursor(nil, &p.Next, true)
		q = fillsQuery(t, `{"limit":1,"cursor":`+string(cur)+`}`)
	}
	if got := strings.Join(walked, " "); got != fillTimes(all) {
		t.Fatalf("pages %q, want %q", got, fillTimes(all))
	}
	for _, c := range []struct{ q, want string }{
		{`{"orderbook_id":"` + fmt.Sprintf("0x%x", bookA) + `"}`, "2000/1 1000/1"},
		{`{"from_ts":2000,"to_ts":3000}`, "2000/2 2000/1"},
		{`{"from_ts":2001}`, "3000/3"},
		{`{"to_ts":1000}`, ""},
		{`{"cursor":"0:2"}`, "1000/1"}, // seq 1 is the only older row; ts is not checked
	} {
		q := fillsQuery(t, c.q)
		if got := fillTimes(x.Fills(alice, &q)); got != c.want {
			t.Fatalf("%s: %q, want %q", c.q, got, c.want)
		}
	}
	p := x.Fills(alice, &marketdata.FillsQuery{ToUs: math.MaxInt64, Limit: 2})
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
	q := fillsQuery(t, `{"limit":100000}`)
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

func TestBackstopTransfersJSON(t *testing.T) {
	x := historyIndex()
	mine := x.BackstopTransfers(&marketdata.BackstopQuery{User: alice, HasUser: true, Limit: 1})
	got := string(AppendBackstopTransfers(nil, &mine))
	want := `{"transfers":[{"user":"0x00000000000000000000000000000000000000a1","orderbook_id":"0x` + fmt.Sprintf("%x", bookP) +
		`","size":"2000000000000000000","cash":"-3","mark_price":"0x3782dace9d900000","equity":"42","timestamp":3000}],` +
		`"total_count":1,"next_cursor":null}`
	if got != want {
		t.Fatalf("JSON\n got %s\nwant %s", got, want)
	}
}
