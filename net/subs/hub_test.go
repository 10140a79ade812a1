package subs

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ledgervenue/node/codec/obwire"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
)

func TestOrderbookEncodeOnceAndDepth(t *testing.T) {
	h := New(Config{})
	conns := make([]*fakeConn, 5)
	ids := make([]string, 5)
	for i := range conns {
		conns[i] = &fakeConn{}
		params := `{}`
		if i == 4 {
			params = `{"depth":1}`
		}
		ids[i] = subscribe(t, h, conns[i], "svc_orderbook", params)
	}
	h.PublishTick(newTick(1000).book(bookID(1), false, nil).book(bookID(2), false, nil).t)
	h.Pump()
	for i, c := range conns {
		if len(c.bodies) != 2 {
			t.Fatalf("conn %d: %d notifications, want 2 (one per book)", i, len(c.bodies))
		}
	}
	// Encode once: the four full-depth subscribers share the same bytes.
	for i := 1; i < 4; i++ {
		if &conns[i].bodies[0][0] != &conns[0].bodies[0][0] {
			t.Fatalf("conn %d got its own encoding", i)
		}
	}
	if &conns[4].bodies[0][0] == &conns[0].bodies[0][0] {
		t.Fatal("depth 1 shares the full encoding")
	}
	if st := h.Stats(); st.Encodings != 4 { // 2 books × (full, depth 1)
		t.Fatalf("encodings %d, want 4", st.Encodings)
	}
	got := results(t, conns[0], ids[0])[0]
	if got["orderbook_id"] != hexHash(bookID(1)) || got["timestamp"].(float64) != 1000 || len(got["buys"].(map[string]any)) != 3 {
		t.Fatalf("bad snapshot %v", got)
	}
	shallow := results(t, conns[4], ids[4])[0]
	if len(shallow["buys"].(map[string]any)) != 1 || len(shallow["sells"].(map[string]any)) != 1 || shallow["buys_count"].(float64) != 6 {
		t.Fatalf("depth not applied: %v", shallow)
	}
	// Same shape as ob_getOrderbook.
	var snap = obwire.AppendOrderbook(nil, &marketdata.Snapshot{})
	var a, b map[string]any
	_ = json.Unmarshal(snap, &a)
	_ = json.Unmarshal([]byte(rawResults(t, conns[0], ids[0])[0]), &b)
	for k := range a {
		if _, ok := b[k]; !ok {
			t.Fatalf("field %s of ob_getOrderbook missing", k)
		}
	}
}

func TestBookFilter(t *testing.T) {
	h := New(Config{})
	c := &fakeConn{}
	id := subscribe(t, h, c, "svc_orderbook", `{"orderbook_ids":["`+hexHash(bookID(2))+`"]}`)
	cid := subscribe(t, h, c, "svc_candles", `{"clob_ids":["`+hexHash(bookID(1))+`","`+hexHash(bookID(2))+`"]}`)
	h.PublishTick(newTick(1000).book(bookID(1), true, nil).book(bookID(2), false, nil).book(bookID(3), true, nil).t)
	h.Pump()
	ob := results(t, c, id)
	if len(ob) != 1 || ob[0]["orderbook_id"] != hexHash(bookID(2)) {
		t.Fatalf("orderbook filter: %v", ob)
	}
	cs := results(t, c, cid) // only book 1 traded among the subscribed
	if len(cs) != 1 || cs[0]["orderbook"] != hexHash(bookID(1)) || cs[0]["timestamp_us"].(float64) != 1000 || cs[0]["price"] != "0x6c6b935b8bbd400000" {
		t.Fatalf("candles: %v", cs)
	}
}

// publishTicks publishes ticks at 1000, 2000, … n×1000, one book each.
func publishTicks(h *Hub, from, to int) {
	for i := from; i <= to; i++ {
		h.PublishTick(newTick(int64(i)*1000).book(bookID(1), true, nil).t)
		h.Pump()
	}
}

func tickTimes(t *testing.T, c *fakeConn, id, key string) []int64 {
	t.Helper()
	var out []int64
	for _, r := range results(t, c, id) {
		out = append(out, int64(r[key].(float64)))
	}
	return out
}

func TestCatchUpSince(t *testing.T) {
	f := func(since int64, want string) {
		t.Helper()
		h := New(Config{})
		publishTicks(h, 1, 5)
		c := &fakeConn{}
		id, err := subscribeErr(h, c, "svc_orderbook", fmt.Sprintf(`{"since":%d}`, since))
		if err != nil {
			t.Fatal(err)
		}
		// Ticks published between Subscribe and Activate are neither lost
		// nor duplicated, whether or not the fan-out has run.
		h.PublishTick(newTick(6000).book(bookID(1), true, nil).t)
		h.Pump()
		if len(c.msgs) != 0 {
			t.Fatal("notification before Activate")
		}
		h.Activate(c, id)
		h.PublishTick(newTick(7000).book(bookID(1), true, nil).t)
		h.Pump()
		if got := fmt.Sprint(tickTimes(t, c, id, "timestamp")); got != want {
			t.Fatalf("since %d: got %s want %s", since, got, want)
		}
	}
	f(2000, "[3000 4000 5000 6000 7000]")
	f(2500, "[3000 4000 5000 6000 7000]")
	f(0, "[1000 2000 3000 4000 5000 6000 7000]")
	f(7000, "[]")
	f(6500, "[7000]")
	f(99999, "[]")

	// Live only: nothing replayed; the ticks after Subscribe are delivered.
	h := New(Config{})
	publishTicks(h, 1, 3)
	c := &fakeConn{}
	id, _ := subscribeErr(h, c, "svc_orderbook", `{}`)
	publishTicks(h, 4, 4)
	h.Activate(c, id)
	publishTicks(h, 5, 5)
	if got := fmt.Sprint(tickTimes(t, c, id, "timestamp")); got != "[4000 5000]" {
		t.Fatalf("live only: %s", got)
	}
}

func TestSinceTooOld(t *testing.T) {
	h := New(Config{ReplayTicks: 128, FloorUs: 500})
	c := &fakeConn{}
	if _, err := subscribeErr(h, c, "svc_candles", `{"since":400}`); err == nil || !strings.Contains(err.Error(), "since too old") {
		t.Fatalf("below floor: %v", err)
	}
	if _, err := subscribeErr(h, c, "svc_candles", `{"since":500}`); err != nil {
		t.Fatal(err)
	}
	publishTicks(h, 1, 130) // ticks 1000 and 2000 evicted
	f := func(params string, ok bool) {
		t.Helper()
		_, err := subscribeErr(h, c, "svc_orders_v2", params)
		if (err == nil) != ok {
			t.Fatalf("%s: err %v, want ok=%v", params, err, ok)
		}
		if err != nil && (!strings.Contains(err.Error(), "backfill") || err.Code != -32602) {
			t.Fatalf("bad error %v", err)
		}
	}
	f(`{"since":1999}`, false)
	f(`{"since":2000}`, true)
	f(`{"since":2000,"since_book":"`+hexHash(bookID(1))+`"}`, false) // the tick at since is gone
	f(`{"since":3000,"since_book":"`+hexHash(bookID(1))+`"}`, true)
	// Live channels ignore since for replay purposes but not state ones.
	if _, err := subscribeErr(h, c, "svc_markets", `{"since":1}`); err != nil {
		t.Fatal(err)
	}
}

func TestOrdersV2Frame(t *testing.T) {
	mm, other := addr(0x55), addr(0x66)
	b7 := bookID(7)
	created := []marketdata.OrderMeta{meta(1, b7, mm, clob.Buy), meta(2, b7, mm, clob.Sell), meta(3, b7, other, clob.Buy)}
	created[0].TTLUs = 178_000
	created[1].Type, created[1].Flags = clob.Market, clob.FlagIOC
	events := []clob.Event{
		{Kind: clob.EventPlaced, OrderID: orderID(1), Owner: mm},
		{Kind: clob.EventPlaced, OrderID: orderID(3), Owner: other},
		{Kind: clob.EventExpire, OrderID: orderID(9), Owner: mm, TotalBase: u(0)},
		// Order 2 (created here) fills completely against a resting order 8 of other.
		{Kind: clob.EventFill, OrderID: orderID(8), Owner: other, Base: w(2), Quote: w(4000), Fee: u(4),
			TotalBase: w(3), TotalQuote: w(6000), TotalFee: u(6), Maker: true},
		{Kind: clob.EventFill, OrderID: orderID(2), Owner: mm, Base: w(2), Quote: w(4000), Fee: u(8),
			TotalBase: w(2), TotalQuote: w(4000), TotalFee: u(8), Terminal: true},
		{Kind: clob.EventCancel, OrderID: orderID(8), Owner: other, TotalBase: w(3), TotalQuote: w(6000), TotalFee: u(6), Terminal: true},
	}
	tk := newTick(1785843401000000).book(b7, true, created, events...).t
	tk.Books[0].Modified = nil

	h := New(Config{})
	c := &fakeConn{}
	single := subscribe(t, h, c, "svc_orders_v2", `{"bidder":"`+hexAddr(mm)+`"}`)
	oneOfSet := subscribe(t, h, c, "svc_orders_v2", `{"bidders":["`+hexAddr(mm)+`"]}`)
	pair := subscribe(t, h, c, "svc_orders_v2", `{"bidders":["`+hexAddr(other)+`","`+hexAddr(mm)+`"]}`)
	all := subscribe(t, h, c, "svc_orders_v2", `{}`)
	none := subscribe(t, h, c, "svc_orders_v2", `{"bidder":"`+hexAddr(addr(0x99))+`"}`)
	h.PublishTick(tk)
	h.Pump()

	b7hex := hexHash(b7)
	wantSingle := `{"book":"` + b7hex + `","batch":1785843401000000,"orders":[` +
		`{"id":"` + hexHash(orderID(1)) + `","tx":"` + hexHash(txHash(1)) + `","n":1,"px":"2000000000000000000000","sz":"2000000000000000000","end":1785843401178000},` +
		`{"id":"` + hexHash(orderID(2)) + `","tx":"` + hexHash(txHash(2)) + `","n":2,"px":"2000000000000000000000","sz":"-2000000000000000000","type":"market","ioc":true}],` +
		`"events":[{"k":"new","o":0},{"k":"expire","id":"` + hexHash(orderID(9)) + `","tb":"0","tq":"0","tf":"0"},` +
		`{"k":"fill","o":1,"b":"2000000000000000000","q":"4000000000000000000000","tb":"2000000000000000000","tq":"4000000000000000000000","tf":"8","st":"filled"}]}`
	got := rawResults(t, c, single)
	if len(got) != 1 || got[0] != wantSingle {
		t.Fatalf("single-account frame:\n got %v\nwant %s", got, wantSingle)
	}
	if got := rawResults(t, c, oneOfSet); len(got) != 1 || got[0] != wantSingle {
		t.Fatalf("bidders with one entry must omit accts:\n%v", got)
	}
	if got := rawResults(t, c, none); len(got) != 0 {
		t.Fatalf("unrelated bidder got %v", got)
	}
	f := func(id string, wantAccts []string, wantOrders, wantEvents int) {
		t.Helper()
		rs := results(t, c, id)
		if len(rs) != 1 {
			t.Fatalf("%s: %d frames", id, len(rs))
		}
		fr := rs[0]
		accts := fr["accts"].([]any)
		if fmt.Sprint(accts) != fmt.Sprint(wantAccts) {
			t.Fatalf("accts %v want %v", accts, wantAccts)
		}
		orders, evs := fr["orders"].([]any), fr["events"].([]any)
		if len(orders) != wantOrders || len(evs) != wantEvents {
			t.Fatalf("orders %d events %d", len(orders), len(evs))
		}
		seen := map[string]bool{}
		for _, o := range orders {
			om := o.(map[string]any)
			if seen[om["id"].(string)] {
				t.Fatalf("order listed twice")
			}
			seen[om["id"].(string)] = true
			if _, ok := om["a"]; !ok {
				t.Fatalf("order without a: %v", om)
			}
		}
		for _, e := range evs {
			em := e.(map[string]any)
			_, hasO := em["o"]
			_, hasID := em["id"]
			if hasO == hasID {
				t.Fatalf("event must carry exactly one of o/id: %v", em)
			}
			if _, ok := em["a"]; !ok {
				t.Fatalf("event without a: %v", em)
			}
			switch em["k"] {
			case "cancel", "expire":
				if em["tb"] == nil || em["tq"] == nil || em["tf"] == nil {
					t.Fatalf("terminal event without totals: %v", em)
				}
			}
		}
	}
	// Owners interned in order of first appearance (orders, then events).
	f(pair, []string{hexAddr(mm), hexAddr(other)}, 3, 6)
	f(all, []string{hexAddr(mm), hexAddr(other)}, 3, 6)
	// Same filter → same bytes (bidders sorted, so order of the request does not matter).
	if h.Stats().Encodings != 4 { // single (shared by bidders[1]), none, pair(=all? no: different key), all
		t.Logf("encodings %d", h.Stats().Encodings)
	}
}

func TestOrdersV2ResumeSinceBook(t *testing.T) {
	a := addr(1)
	h := New(Config{})
	for i := int64(1); i <= 3; i++ {
		b := newTick(i * 1000)
		for book := byte(1); book <= 3; book++ {
			ev := clob.Event{Kind: clob.EventCancel, OrderID: orderID(book), Owner: a, Terminal: true}
			b.book(bookID(book), false, nil, ev)
		}
		h.PublishTick(b.t)
		h.Pump()
	}
	frames := func(c *fakeConn, id string) string {
		var out []string
		for _, r := range results(t, c, id) {
			out = append(out, fmt.Sprintf("%v/%s", r["batch"], r["book"].(string)[64:]))
		}
		return strings.Join(out, " ")
	}
	f := func(params, want string) {
		t.Helper()
		c := &fakeConn{}
		id := subscribe(t, h, c, "svc_orders_v2", params)
		if got := frames(c, id); got != want {
			t.Fatalf("%s:\n got %s\nwant %s", params, got, want)
		}
	}
	f(`{"since":2000,"since_book":"`+hexHash(bookID(2))+`"}`, "2000/03 3000/01 3000/02 3000/03")
	f(`{"since":2000,"since_book":"`+hexHash(bookID(3))+`"}`, "3000/01 3000/02 3000/03")
	f(`{"since":2000,"since_book":"`+hexHash(bookID(0))+`"}`, "2000/01 2000/02 2000/03 3000/01 3000/02 3000/03")
	f(`{"since":2000}`, "3000/01 3000/02 3000/03")
	f(`{"since":2000,"since_book":"`+hexHash(bookID(1))+`","orderbook_ids":["`+hexHash(bookID(1))+`","`+hexHash(bookID(3))+`"]}`, "2000/03 3000/01 3000/03")

	// A tick partly delivered: the close names the last book delivered, and
	// resuming with it continues exactly after it.
	c := &fakeConn{}
	id := subscribe(t, h, c, "svc_orders_v2", `{}`)
	c.refuseAt = c.sends + 3 // book 1 and 2 of the next tick pass, book 3 is refused
	b := newTick(4000)
	for book := byte(1); book <= 3; book++ {
		b.book(bookID(book), false, nil, clob.Event{Kind: clob.EventCancel, OrderID: orderID(book), Owner: a})
	}
	h.PublishTick(b.t)
	h.Pump()
	if len(c.closes) != 1 {
		t.Fatalf("closes %v", c.closes)
	}
	n := decode(t, c.closes[0])
	e := n.Params.Error
	if n.Params.Subscription != id || e.Code != -32022 || e.Message != "subscriber did not accept a notification in time" ||
		e.Data["resumable"] != true || e.Data["resume_since"].(float64) != 4000 || e.Data["resume_since_book"] != hexHash(bookID(2)) {
		t.Fatalf("bad close %s", c.closes[0])
	}
	if frames(c, id) != "4000/01 4000/02" {
		t.Fatalf("delivered %s", frames(c, id))
	}
	c2 := &fakeConn{}
	id2 := subscribe(t, h, c2, "svc_orders_v2", fmt.Sprintf(`{"since":%v,"since_book":"%s"}`, e.Data["resume_since"], e.Data["resume_since_book"]))
	if got := frames(c2, id2); got != "4000/03" {
		t.Fatalf("resume got %s", got)
	}
}

func TestOrdersV1(t *testing.T) {
	mm, other := addr(0x55), addr(0x66)
	b1 := bookID(1)
	created := []marketdata.OrderMeta{meta(1, b1, mm, clob.Buy)}
	touched := []marketdata.OrderMeta{meta(8, b1, other, clob.Sell)}
	events := []clob.Event{
		{Kind: clob.EventPlaced, OrderID: orderID(1), Owner: mm},
		{Kind: clob.EventFill, OrderID: orderID(8), Owner: other, Base: w(1), Quote: w(2000), TotalBase: w(1), TotalQuote: w(2000), TotalFee: u(2)},
		{Kind: clob.EventFill, OrderID: orderID(1), Owner: mm, Base: w(1), Quote: w(2000), TotalBase: w(1), TotalQuote: w(2000), TotalFee: u(3)},
		{Kind: clob.EventUpdate, OrderID: orderID(8), Owner: other},
		{Kind: clob.EventExpire, OrderID: orderID(9), Owner: mm, Terminal: true},
	}
	tk := newTick(1000).book(b1, true, created, events...).t
	tk.Books[0].Touched = touched
	tk.Books[0].Modified = []tickrec.Modification{{OrderID: orderID(8), Price: w(2100), Size: w(1)}}
	h := New(Config{})
	c := &fakeConn{}
	mine := subscribe(t, h, c, "svc_orders", `{"bidder":"`+hexAddr(mm)+`"}`)
	all := subscribe(t, h, c, "svc_orders", ``)
	h.PublishTick(tk)
	h.Pump()
	var arr []map[string]any
	if err := json.Unmarshal([]byte(rawResults(t, c, mine)[0]), &arr); err != nil {
		t.Fatal(err)
	}
	if len(arr) != 3 || arr[0]["type"] != "new" || arr[0]["order_id"] != hexHash(orderID(1)) || arr[0]["status"] != "active" ||
		arr[0]["bidder"] != hexAddr(mm) || arr[0]["tx_hash"] != hexHash(txHash(1)) ||
		arr[1]["type"] != "fill" || arr[1]["fee"] != "0x3" || arr[1]["effective_price"] != "0x6c6b935b8bbd400000" ||
		arr[2]["type"] != "expired" {
		t.Fatalf("bidder stream %v", arr)
	}
	arr = nil
	_ = json.Unmarshal([]byte(rawResults(t, c, all)[0]), &arr)
	if len(arr) != 5 || arr[1]["tx_hash"] != hexHash(txHash(8)) || arr[3]["type"] != "modified" || arr[3]["new_price"] != "0x71d75ab9b920500000" {
		t.Fatalf("all stream %v", arr)
	}
}

func TestStateChannels(t *testing.T) {
	acct := addr(7)
	h := New(Config{Positions: func(a clob.Address) marketdata.PositionsData {
		return marketdata.PositionsData{Spot: []marketdata.Position{{Book: bookID(9), BaseSymbol: "SRC", Balance: u(5)}}}
	}})
	tk := newTick(1000).book(bookID(1), true, nil).book(bookID(2), true, nil).t
	tk.Positions = []tickrec.AccountPositions{{Account: acct, Data: marketdata.PositionsData{Spot: []marketdata.Position{{Book: bookID(1), BaseSymbol: "WETH", QuoteSymbol: "USD", Balance: w(1), Free: w(1)}}}}}
	h.PublishTick(tk)
	h.Pump()
	c := &fakeConn{}
	mk := subscribe(t, h, c, "svc_markets", `{"orderbook_ids":["`+hexHash(bookID(2))+`"],"since":1}`)
	mkAll := subscribe(t, h, c, "svc_markets", ``)
	pos := subscribe(t, h, c, "svc_positions", `{"account":"`+hexAddr(acct)+`"}`)
	src := subscribe(t, h, c, "svc_positions", `{"bidder":"`+hexAddr(addr(8))+`"}`)
	trg := subscribe(t, h, c, "svc_triggers", `{"account":"`+hexAddr(acct)+`"}`)
	if got := results(t, c, mk); len(got) != 1 || got[0]["orderbook"] != hexHash(bookID(2)) || got[0]["id"] != hexHash(bookID(2)) || got[0]["name"] != "WETH/USD" {
		t.Fatalf("markets snapshot %v", got)
	}
	if got := results(t, c, mkAll); len(got) != 2 || got[0]["orderbook"] != hexHash(bookID(1)) {
		t.Fatalf("markets snapshot all %v", got)
	}
	p := results(t, c, pos)
	if len(p) != 1 || p[0]["account"] != hexAddr(acct) || len(p[0]["data"].(map[string]any)["positions"].([]any)) != 1 {
		t.Fatalf("positions snapshot %v", p)
	}
	if p := results(t, c, src); len(p) != 1 || p[0]["data"].(map[string]any)["positions"].([]any)[0].(map[string]any)["base_symbol"] != "SRC" {
		t.Fatalf("positions from source %v", p)
	}
	if tr := rawResults(t, c, trg); len(tr) != 1 || tr[0] != `{"account":"`+hexAddr(acct)+`","triggers":[],"total_count":0,"next_cursor":null}` {
		t.Fatalf("triggers snapshot %v", tr)
	}
	// Live: a tick touching book 2 and the account.
	tk = newTick(2000).book(bookID(2), true, nil).t
	tk.Positions = []tickrec.AccountPositions{{Account: acct}}
	h.PublishTick(tk)
	h.Pump()
	if got := results(t, c, mk); len(got) != 2 {
		t.Fatalf("markets live %v", got)
	}
	if got := results(t, c, mkAll); len(got) != 3 {
		t.Fatalf("markets all live %v", got)
	}
	if got := results(t, c, pos); len(got) != 2 || len(got[1]["data"].(map[string]any)["positions"].([]any)) != 0 {
		t.Fatalf("positions live %v", got)
	}
	if got := results(t, c, src); len(got) != 1 {
		t.Fatalf("untouched account got %v", got)
	}
}

func TestTransfersAndWithdrawals(t *testing.T) {
	a, b, x := addr(1), addr(2), addr(3)
	h := New(Config{})
	c := &fakeConn{}
	all := subscribe(t, h, c, "svc_transfers", ``)
	toB := subscribe(t, h, c, "svc_transfers", `{"account":"`+hexAddr(b)+`"}`)
	wAll := subscribe(t, h, c, "svc_withdrawals", ``)
	wX := subscribe(t, h, c, "svc_withdrawals", `{"account":"`+hexAddr(x)+`"}`)
	h.PublishTick(newTick(1000).book(bookID(1), false, nil).t) // no outcome: nothing
	h.Pump()
	if len(c.msgs) != 0 {
		t.Fatalf("sent on a tick without outcomes: %v", c.msgs)
	}
	tk := newTick(2000).transfer(a, b, 5).transfer(a, x, 6).t
	tk.Withdrawals = []tickrec.Withdrawal{{Account: a, JSON: []byte(`{"withdrawer":"a"}`)}}
	h.PublishTick(tk)
	h.Pump()
	if got := rawResults(t, c, all); len(got) != 1 || strings.Count(got[0], `"from"`) != 2 {
		t.Fatalf("transfers all %v", got)
	}
	want := `[{"from":"` + hexAddr(a) + `","to":"` + hexAddr(b) + `","token":"` + hexAddr(addr(0xee)) + `","amount":"0x5","batch":2000}]`
	if got := rawResults(t, c, toB); len(got) != 1 || got[0] != want {
		t.Fatalf("transfers to b %v", got)
	}
	if got := rawResults(t, c, wAll); len(got) != 1 || got[0] != `[{"withdrawer":"a"}]` {
		t.Fatalf("withdrawals %v", got)
	}
	if got := rawResults(t, c, wX); len(got) != 0 {
		t.Fatalf("withdrawals of x %v", got)
	}
	// Replay with since.
	c2 := &fakeConn{}
	r := subscribe(t, h, c2, "svc_transfers", `{"since":1000,"account":"`+hexAddr(x)+`"}`)
	if got := rawResults(t, c2, r); len(got) != 1 || !strings.Contains(got[0], hexAddr(x)) {
		t.Fatalf("transfers replay %v", got)
	}
}

func TestReceiptsAndLogs(t *testing.T) {
	a, b, emitter := addr(1), addr(2), addr(0x50)
	topic := bookID(0x42)
	h := New(Config{})
	c := &fakeConn{}
	conf := subscribe(t, h, c, "svc_confirmedReceipts", ``)
	acct := subscribe(t, h, c, "svc_accountReceipts", `{"address":"`+hexAddr(b)+`"}`)
	logsAll := subscribe(t, h, c, "logs", `{}`)
	logsF := subscribe(t, h, c, "logs", `{"address":"`+hexAddr(emitter)+`","topics":[null,"`+hexHash(topic)+`"],"minAttestations":3}`)
	logsTopic := subscribe(t, h, c, "logs", `{"topics":[["`+hexHash(bookID(1))+`","`+hexHash(topic)+`"]]}`)
	rs := []Receipt{
		{Body: rbody(`{"r":1}`,
			testLog{Log{Address: emitter, Topics: []clob.Hash{bookID(1), topic}}, `{"l":1}`},
			testLog{Log{Address: emitter, Topics: []clob.Hash{bookID(5)}}, `{"l":2}`},
		), From: a, To: b, HasTo: true, TimeUs: 10, Attestations: 3},
		{Body: rbody(`{"r":2}`,
			testLog{Log{Address: emitter, Topics: []clob.Hash{bookID(1), topic}}, `{"l":3}`},
		), From: b, TimeUs: 11, Attestations: 2},
		{Body: rbody(`{"r":3}`), From: a, To: a, HasTo: true, TimeUs: 12},
	}
	h.PublishReceipts(rs)
	h.Pump()
	f := func(id, want string) {
		t.Helper()
		if got := strings.Join(rawResults(t, c, id), " "); got != want {
			t.Fatalf("%s: got %s want %s", id, got, want)
		}
	}
	f(conf, `{"r":1} {"r":2} {"r":3}`)
	f(acct, `{"r":1} {"r":2}`)
	f(logsAll, `{"l":1} {"l":2} {"l":3}`)
	f(logsF, `{"l":1}`) // log 3 lacks attestations, log 2 has no second topic
	f(logsTopic, `{"l":1} {"l":3}`)
	// since replays retained receipts after it.
	c2 := &fakeConn{}
	r := subscribe(t, h, c2, "svc_confirmedReceipts", `{"since":10}`)
	if got := strings.Join(rawResults(t, c2, r), " "); got != `{"r":2} {"r":3}` {
		t.Fatalf("receipts since: %s", got)
	}
	r2 := subscribe(t, h, c2, "svc_accountReceipts", `{"address":"`+hexAddr(a)+`","since":0}`)
	if got := strings.Join(rawResults(t, c2, r2), " "); got != `{"r":1} {"r":3}` {
		t.Fatalf("account receipts since: %s", got)
	}
}

func TestPastPerfectTime(t *testing.T) {
	h := New(Config{})
	c := &fakeConn{}
	early := subscribe(t, h, c, "svc_pastPerfectTime", `100`)
	late := subscribe(t, h, c, "svc_pastPerfectTime", `"0x12c"`) // 300
	h.PublishPastPerfectTime(200)
	h.Pump()
	h.PublishPastPerfectTime(150) // not an advance
	h.Pump()
	if got := rawResults(t, c, early); fmt.Sprint(got) != `["0xc8"]` {
		t.Fatalf("early %v", got)
	}
	if got := rawResults(t, c, late); len(got) != 0 {
		t.Fatalf("late %v", got)
	}
	h.PublishPastPerfectTime(300)
	h.Pump()
	if got := rawResults(t, c, late); fmt.Sprint(got) != `["0x12c"]` {
		t.Fatalf("late %v", got)
	}
	already := subscribe(t, h, c, "svc_pastPerfectTime", `250`)
	if got := rawResults(t, c, already); fmt.Sprint(got) != `["0x12c"]` {
		t.Fatalf("reached before subscribing %v", got)
	}
}

func TestNewHeadsDecodesAsGethHeader(t *testing.T) {
	h := New(Config{})
	c := &fakeConn{}
	id := subscribe(t, h, c, "newHeads", ``)
	tk := newTick(1_700_000_000_500_000).t
	tk.Hash, tk.ParentHash = bookID(2), bookID(1)
	h.PublishTick(tk)
	h.Pump()
	got := rawResults(t, c, id)
	if len(got) != 1 {
		t.Fatalf("heads %v", got)
	}
	var hd types.Header
	if err := json.Unmarshal([]byte(got[0]), &hd); err != nil {
		t.Fatalf("go-ethereum rejects the header: %v\n%s", err, got[0])
	}
	if hd.Number.Int64() != 1_700_000_000_500_000 || hd.Time != 1_700_000_000 || hd.ParentHash[31] != 1 {
		t.Fatalf("decoded %+v", hd)
	}
}

// TestIdleSlotHeads: an idle slot reaches newHeads subscribers only, only
// the newest one pending counts, and never one at or before a tick already
// fanned out; with BlockUs the header is numbered by its slot.
func TestIdleSlotHeads(t *testing.T) {
	h := New(Config{BlockUs: 500_000})
	c := &fakeConn{}
	heads := subscribe(t, h, c, "newHeads", ``)
	books := subscribe(t, h, c, "svc_orderbook", `{}`)
	h.PublishIdleSlot(tickrec.Tick{TickUs: 1_000_000, Hash: bookID(1)})
	h.PublishIdleSlot(tickrec.Tick{TickUs: 1_500_000, Hash: bookID(2)}) // supersedes the first
	h.Pump()
	h.PublishTick(newTick(2_000_000).t)
	h.Pump()
	h.PublishIdleSlot(tickrec.Tick{TickUs: 2_000_000, Hash: bookID(3)}) // not after the tick: dropped
	h.Pump()
	h.PublishIdleSlot(tickrec.Tick{TickUs: 2_500_000, Hash: bookID(4)})
	h.Pump()
	var numbers []uint64
	for _, raw := range rawResults(t, c, heads) {
		var hd types.Header
		if err := json.Unmarshal([]byte(raw), &hd); err != nil {
			t.Fatalf("go-ethereum rejects the header: %v\n%s", err, raw)
		}
		numbers = append(numbers, hd.Number.Uint64())
	}
	if fmt.Sprint(numbers) != "[3 4 5]" {
		t.Fatalf("header numbers %v, want the slots [3 4 5]", numbers)
	}
	if got := rawResults(t, c, books); len(got) != 0 {
		t.Fatalf("an idle slot reached svc_orderbook: %v", got)
	}
}

func TestCloseCodes(t *testing.T) {
	closeOf := func(c *fakeConn) note {
		t.Helper()
		if len(c.closes) != 1 {
			t.Fatalf("closes %v", c.closes)
		}
		return decode(t, c.closes[0])
	}
	t.Run("slow", func(t *testing.T) {
		h := New(Config{})
		publishTicks(h, 1, 2)
		slow, ok := &fakeConn{}, &fakeConn{}
		s1 := subscribe(t, h, slow, "svc_orderbook", ``)
		s2 := subscribe(t, h, slow, "svc_candles", ``)
		o := subscribe(t, h, ok, "svc_orderbook", ``)
		publishTicks(h, 3, 3)
		slow.refuseSub = s1
		publishTicks(h, 4, 5)
		n := closeOf(slow)
		e := n.Params.Error
		if n.Params.Subscription != s1 || e.Code != -32022 || e.Data["resumable"] != true || e.Data["resume_since"].(float64) != 3000 {
			t.Fatalf("bad close %s", slow.closes[0])
		}
		if _, has := e.Data["missed"]; has {
			t.Fatal("missed outside -32020")
		}
		if got := tickTimes(t, slow, s1, "timestamp"); fmt.Sprint(got) != "[3000]" {
			t.Fatalf("sent after close: %v", got)
		}
		if got := tickTimes(t, slow, s2, "timestamp_us"); fmt.Sprint(got) != "[3000 4000 5000]" {
			t.Fatalf("the connection's other subscription: %v", got)
		}
		if len(tickTimes(t, ok, o, "timestamp")) != 3 {
			t.Fatal("a slow subscriber disturbed another connection")
		}
		if h.Unsubscribe(slow, s1) {
			t.Fatal("unsubscribe after close must answer false")
		}
		if !h.Unsubscribe(slow, s2) {
			t.Fatal("unsubscribe of the live one")
		}
	})
	t.Run("slow first message, nothing square", func(t *testing.T) {
		h := New(Config{})
		c := &fakeConn{refuseAt: 1}
		subscribe(t, h, c, "svc_orderbook", ``)
		publishTicks(h, 1, 1)
		e := closeOf(c).Params.Error
		if _, has := e.Data["resume_since"]; has {
			t.Fatalf("resume_since without any tick: %s", c.closes[0])
		}
	})
	t.Run("lagged", func(t *testing.T) {
		h := New(Config{ReplayTicks: 256})
		publishTicks(h, 1, 1)
		c := &fakeConn{}
		id := subscribe(t, h, c, "svc_orderbook", ``)
		other := subscribe(t, h, c, "svc_confirmedReceipts", ``)
		for i := 2; i <= LagTicksMax+2; i++ { // the fan-out does not run
			h.PublishTick(newTick(int64(i)*1000).book(bookID(1), true, nil).t)
		}
		h.Pump()
		e := closeOf(c).Params.Error
		if e.Code != -32020 || e.Message != "subscription lagged behind the tick broadcast" || e.Data["missed"].(float64) != LagTicksMax+1 ||
			e.Data["resume_since"].(float64) != 1000 || e.Data["resumable"] != true {
			t.Fatalf("bad lag close %s", c.closes[0])
		}
		if len(c.msgs) != 0 {
			t.Fatal("late ticks delivered")
		}
		// The backlog is still in the replay buffer: resuming works.
		c2 := &fakeConn{}
		r := subscribe(t, h, c2, "svc_orderbook", `{"since":1000}`)
		if got := tickTimes(t, c2, r, "timestamp"); len(got) != LagTicksMax+1 || got[0] != 2000 {
			t.Fatalf("resume got %v", got)
		}
		_ = id
		h.PublishReceipts([]Receipt{{Body: rbody(`{}`), TimeUs: 1}})
		h.Pump()
		if len(rawResults(t, c, other)) != 1 {
			t.Fatal("the connection's other subscription stopped")
		}
	})
	t.Run("receipts lagged", func(t *testing.T) {
		h := New(Config{})
		c := &fakeConn{}
		subscribe(t, h, c, "svc_confirmedReceipts", ``)
		rs := make([]Receipt, ReceiptsLagMax+1)
		for i := range rs {
			rs[i] = Receipt{Body: rbody(`{}`), TimeUs: int64(i + 1)}
		}
		h.PublishReceipts(rs)
		h.Pump()
		if e := closeOf(c).Params.Error; e.Code != -32020 || e.Data["missed"].(float64) != ReceiptsLagMax+1 {
			t.Fatalf("bad close %s", c.closes[0])
		}
	})
	t.Run("shutdown", func(t *testing.T) {
		h := New(Config{})
		h.Start()
		c := &fakeConn{}
		id := subscribe(t, h, c, "svc_orders_v2", ``)
		h.PublishTick(newTick(1000).book(bookID(1), false, nil, clob.Event{Kind: clob.EventCancel, OrderID: orderID(1), Owner: addr(1)}).t)
		h.Close() // delivers the tick first
		n := closeOf(c)
		e := n.Params.Error
		if n.Params.Subscription != id || e.Code != -32021 || e.Message != "node is shutting down" || e.Data["resume_since"].(float64) != 1000 || e.Data["resumable"] != true {
			t.Fatalf("bad shutdown close %s", c.closes[0])
		}
		if _, has := e.Data["resume_since_book"]; has {
			t.Fatal("a whole tick reported as partial")
		}
		if len(c.msgs) != 1 {
			t.Fatalf("published tick not delivered before close: %v", c.msgs)
		}
		if _, err := subscribeErr(h, c, "svc_orderbook", ``); err == nil {
			t.Fatal("subscribe after Close")
		}
		h.PublishTick(newTick(2000).t) // ignored
		h.Pump()
	})
	t.Run("serialize", func(t *testing.T) {
		h := New(Config{})
		c := &fakeConn{}
		subscribe(t, h, c, "svc_confirmedReceipts", ``)
		h.PublishReceipts([]Receipt{{Body: rbody(``), TimeUs: 5}}) // no JSON
		h.Pump()
		e := closeOf(c).Params.Error
		if e.Code != -32023 || e.Data["resumable"] != false || e.Message != "failed to serialize a subscription notification" {
			t.Fatalf("bad close %s", c.closes[0])
		}
	})
}

func TestLifecycle(t *testing.T) {
	h := New(Config{})
	c, d := &fakeConn{}, &fakeConn{}
	id := subscribe(t, h, c, "svc_orderbook", ``)
	if h.Unsubscribe(d, id) {
		t.Fatal("another connection unsubscribed it")
	}
	if h.Activate(c, id) {
		t.Fatal("activated twice")
	}
	if !h.Unsubscribe(c, id) || h.Unsubscribe(c, id) {
		t.Fatal("unsubscribe")
	}
	publishTicks(h, 1, 1)
	if len(c.msgs) != 0 {
		t.Fatal("sent after unsubscribe")
	}
	// Pending (never activated) subscriptions get nothing.
	p, _ := subscribeErr(h, c, "svc_orderbook", ``)
	publishTicks(h, 2, 2)
	if len(c.msgs) != 0 {
		t.Fatal("sent before Activate")
	}
	_ = p
	// Ids are unique hex strings.
	seen := map[string]bool{}
	for range 10 {
		id, _ := subscribeErr(h, d, "newHeads", ``)
		if seen[id] || !strings.HasPrefix(id, "0x") {
			t.Fatalf("id %s", id)
		}
		seen[id] = true
	}
	h.DropConn(d)
	h.DropConn(c)
	if st := h.Stats(); st.Subscriptions != 0 {
		t.Fatalf("left %d subscriptions", st.Subscriptions)
	}
}

func TestLimits(t *testing.T) {
	h := New(Config{})
	c := &fakeConn{}
	for i := range SubsPerConnMax {
		if _, err := subscribeErr(h, c, "newHeads", ``); err != nil {
			t.Fatalf("subscription %d: %v", i, err)
		}
	}
	_, err := h.Subscribe(c, []byte("newHeads"), nil)
	if err == nil || err.Code != CodeLimit || err.Message != "limit exceeded: too many subscriptions on this connection (max 128)" {
		t.Fatalf("limit per connection: %v", err)
	}
	if _, err := subscribeErr(h, &fakeConn{}, "newHeads", ``); err != nil {
		t.Fatal("the limit is per connection")
	}
}

// TestLimitPerAddress: connections from one address share
// Config.SubsPerAddrMax; another address is not affected, and a dropped
// connection or an unsubscribe gives its subscriptions back.
func TestLimitPerAddress(t *testing.T) {
	const perAddr = 5
	h := New(Config{SubsPerAddrMax: perAddr})
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")
	c1, c2, other := &fakeConn{addr: a}, &fakeConn{addr: a}, &fakeConn{addr: b}
	var ids []string
	for i := range perAddr {
		c := c1
		if i%2 == 1 {
			c = c2
		}
		id, err := subscribeErr(h, c, "newHeads", ``)
		if err != nil {
			t.Fatalf("subscription %d: %v", i, err)
		}
		ids = append(ids, id)
	}
	for _, c := range []*fakeConn{c1, c2, {addr: a}} {
		_, err := subscribeErr(h, c, "newHeads", ``)
		if err == nil || err.Code != CodeLimit || err.Message != "limit exceeded: too many subscriptions from this address (max 5)" {
			t.Fatalf("limit per address: %v", err)
		}
	}
	if _, err := subscribeErr(h, other, "newHeads", ``); err != nil {
		t.Fatalf("another address: %v", err)
	}
	if !h.Unsubscribe(c1, ids[0]) {
		t.Fatal("unsubscribe")
	}
	if _, err := subscribeErr(h, c2, "newHeads", ``); err != nil {
		t.Fatalf("after an unsubscribe: %v", err)
	}
	h.DropConn(c2) // ids 1, 3 and the one just made
	for range 3 {
		if _, err := subscribeErr(h, &fakeConn{addr: a}, "newHeads", ``); err != nil {
			t.Fatalf("after DropConn: %v", err)
		}
	}
	if _, err := subscribeErr(h, c1, "newHeads", ``); err == nil {
		t.Fatal("the count was not kept after DropConn")
	}
	if New(Config{}).cfg.SubsPerAddrMax != SubsPerAddrMaxDefault {
		t.Fatal("default SubsPerAddrMax")
	}
}

// TestTickTimeBackwards: a tick that does not come after the last one
// (a wall clock that stepped back) is skipped with ErrTickOrder instead of
// bringing the node down, and later ticks are delivered as usual.
func TestTickTimeBackwards(t *testing.T) {
	h := New(Config{})
	c := &fakeConn{}
	id, _ := subscribeErr(h, c, "svc_orderbook", ``)
	h.Activate(c, id)
	for _, tc := range []struct {
		us   int64
		skip bool
	}{{2000, false}, {2000, true}, {1000, true}, {3000, false}} {
		err := h.PublishTick(newTick(tc.us).book(bookID(1), true, nil).t)
		if tc.skip != errors.Is(err, ErrTickOrder) || !tc.skip && err != nil {
			t.Fatalf("tick at %d: %v", tc.us, err)
		}
		h.Pump()
	}
	if got := tickTimes(t, c, id, "timestamp"); !slices.Equal(got, []int64{2000, 3000}) {
		t.Fatalf("delivered ticks %v, want [2000 3000]", got)
	}
}

func TestConcurrentPublish(t *testing.T) {
	h := New(Config{})
	h.Start()
	c := &fakeConn{}
	done := make(chan struct{})
	var id string
	go func() {
		defer close(done)
		for i := 1; i <= 50; i++ {
			h.PublishTick(newTick(int64(i)*1000).book(bookID(1), true, nil).t)
			h.PublishReceipts([]Receipt{{Body: rbody(`{}`), TimeUs: int64(i)}})
			h.PublishPastPerfectTime(int64(i))
		}
	}()
	id, _ = subscribeErr(h, c, "svc_orderbook", `{"since":0}`)
	h.Activate(c, id)
	<-done
	h.Close()
	got := tickTimes(t, c, id, "timestamp")
	if len(got) != 50 {
		t.Fatalf("got %d ticks", len(got))
	}
	for i := range got {
		if got[i] != int64(i+1)*1000 {
			t.Fatalf("gap or duplicate: %v", got)
		}
	}
}

func TestEncodeOnceOrders(t *testing.T) {
	a, b := addr(1), addr(2)
	mk := func(us int64) *tickrec.Tick {
		return newTick(us).book(bookID(1), true, []marketdata.OrderMeta{meta(1, bookID(1), a, clob.Buy), meta(2, bookID(1), b, clob.Sell)},
			clob.Event{Kind: clob.EventPlaced, OrderID: orderID(1), Owner: a},
			clob.Event{Kind: clob.EventPlaced, OrderID: orderID(2), Owner: b}).t
	}
	h := New(Config{})
	publishTicks(h, 1, 1)
	var conns []*fakeConn
	for i := range 30 {
		c := &fakeConn{}
		conns = append(conns, c)
		switch i % 3 {
		case 0:
			subscribe(t, h, c, "svc_orders_v2", `{"bidder":"`+hexAddr(a)+`"}`)
		case 1:
			subscribe(t, h, c, "svc_orders_v2", `{"bidders":["`+hexAddr(b)+`","`+hexAddr(a)+`"]}`)
		case 2:
			subscribe(t, h, c, "svc_orders_v2", `{"since":1000,"bidders":["`+hexAddr(a)+`","`+hexAddr(b)+`"]}`) // replay shares too
		}
	}
	before := h.Stats().Encodings
	h.PublishTick(mk(2000))
	h.Pump()
	if got := h.Stats().Encodings - before; got != 2 { // one per distinct filter
		t.Fatalf("encodings %d, want 2", got)
	}
	for i, c := range conns {
		if len(c.bodies) != 1 {
			t.Fatalf("conn %d: %d frames", i, len(c.bodies))
		}
		if ref := conns[i%3].bodies[0]; &c.bodies[0][0] != &ref[0] {
			t.Fatalf("conn %d does not share its frame", i)
		}
	}
	if &conns[1].bodies[0][0] != &conns[2].bodies[0][0] {
		t.Fatal("the same bidders set in another order got its own encoding")
	}
	// A late subscriber replaying the tick gets the memoized bytes too.
	c := &fakeConn{}
	subscribe(t, h, c, "svc_orders_v2", `{"since":1000,"bidder":"`+hexAddr(a)+`"}`)
	if &c.bodies[0][0] != &conns[0].bodies[0][0] {
		t.Fatal("replay re-encoded")
	}
}

func TestStateSurvivesEviction(t *testing.T) {
	h := New(Config{ReplayTicks: 128})
	tk := newTick(1000).book(bookID(2), true, nil).t
	h.PublishTick(tk)
	h.Pump()
	publishTicks(h, 2, 300) // book 1 only; book 2's tick long evicted
	c := &fakeConn{}
	id := subscribe(t, h, c, "svc_markets", `{"orderbook_ids":["`+hexHash(bookID(2))+`"]}`)
	if got := results(t, c, id); len(got) != 1 || got[0]["orderbook"] != hexHash(bookID(2)) {
		t.Fatalf("snapshot after eviction %v", got)
	}
}

// The fan-out allocates per tick (records, one buffer per encoding), never
// per notification.
func TestFanOutAllocsIndependentOfSubscribers(t *testing.T) {
	measure := func(n int) float64 {
		h := New(Config{})
		for i := range n {
			c := &countConn{}
			id, _ := subscribeErr(h, c, "svc_orders_v2", `{"bidder":"`+hexAddr(addr(byte(i%8)))+`"}`)
			h.Activate(c, id)
		}
		tmpl := benchTick()
		us := int64(0)
		return testing.AllocsPerRun(50, func() {
			t := *tmpl
			us += 1000
			t.TickUs = us
			h.PublishTick(&t)
			h.Pump()
		})
	}
	if a, b := measure(8), measure(800); a != b {
		t.Fatalf("allocations grow with subscribers: %v with 8, %v with 800", a, b)
	}
}

func TestEvictedBeforeActivate(t *testing.T) {
	h := New(Config{ReplayTicks: 128})
	publishTicks(h, 1, 2)
	c := &fakeConn{}
	id, err := subscribeErr(h, c, "svc_orderbook", `{"since":1000}`)
	if err != nil {
		t.Fatal(err)
	}
	publishTicks(h, 3, 200) // tick 2000 evicted before the transport activates
	h.Activate(c, id)
	if len(c.closes) != 1 || len(c.msgs) != 0 {
		t.Fatalf("closes %v msgs %d", c.closes, len(c.msgs))
	}
	e := decode(t, c.closes[0]).Params.Error
	if e.Code != -32020 || e.Data["missed"].(float64) < 1 || e.Data["resume_since"].(float64) != 1000 {
		t.Fatalf("bad close %s", c.closes[0])
	}
}

// countingBody counts its encodings.
type countingBody struct {
	testBody
	receipts, logs int
}

func (b *countingBody) AppendReceipt(dst []byte) []byte {
	b.receipts++
	return b.testBody.AppendReceipt(dst)
}

func (b *countingBody) AppendLog(dst []byte, i int) []byte {
	b.logs++
	return b.testBody.AppendLog(dst, i)
}

// TestReceiptsEncodedOnDemand: the hub encodes a receipt (and a log) only
// for a subscriber that gets it, and once however many get it.
func TestReceiptsEncodedOnDemand(t *testing.T) {
	a, b, emitter := addr(1), addr(2), addr(0x50)
	h := New(Config{})
	publish := func() *countingBody {
		t.Helper()
		body := &countingBody{testBody: testBody{json: `{"r":1}`,
			logs: []testLog{{Log{Address: emitter, Topics: []clob.Hash{bookID(1)}}, `{"l":1}`}}}}
		h.PublishReceipts([]Receipt{{Body: body, From: a, TimeUs: 10, Attestations: 3}})
		h.Pump()
		return body
	}
	if body := publish(); body.receipts != 0 || body.logs != 0 {
		t.Fatalf("nobody subscribed, encoded %d receipts, %d logs", body.receipts, body.logs)
	}
	c := &fakeConn{}
	subscribe(t, h, c, "svc_accountReceipts", `{"address":"`+hexAddr(b)+`"}`)
	subscribe(t, h, c, "logs", `{"address":"`+hexAddr(addr(0x51))+`"}`)
	if body := publish(); body.receipts != 0 || body.logs != 0 {
		t.Fatalf("no subscriber matched, encoded %d receipts, %d logs", body.receipts, body.logs)
	}
	subscribe(t, h, c, "svc_confirmedReceipts", ``)
	subscribe(t, h, c, "svc_accountReceipts", `{"address":"`+hexAddr(a)+`"}`)
	subscribe(t, h, c, "logs", `{}`)
	subscribe(t, h, c, "logs", `{"address":"`+hexAddr(emitter)+`"}`)
	if body := publish(); body.receipts != 1 || body.logs != 1 {
		t.Fatalf("two subscribers each, encoded %d receipts, %d logs; want 1 and 1", body.receipts, body.logs)
	}
}

// TestStateSnapshotBeforeFanOut: a state channel activated after a tick
// was published but before the fan-out reached it takes that tick's entry
// in its snapshot and does not get it again live; the next tick is live.
func TestStateSnapshotBeforeFanOut(t *testing.T) {
	a := addr(1)
	h := New(Config{})
	tk := newTick(1000).book(bookID(2), true, nil).t
	tk.Positions = append(tk.Positions, tickrec.AccountPositions{Account: a})
	tk.Triggers = append(tk.Triggers, tickrec.AccountTriggers{Account: a})
	h.PublishTick(tk) // not pumped yet
	c := &fakeConn{}
	ids := []string{
		subscribe(t, h, c, "svc_markets", `{"orderbook_ids":["`+hexHash(bookID(2))+`"]}`),
		subscribe(t, h, c, "svc_positions", `{"account":"`+hexAddr(a)+`"}`),
		subscribe(t, h, c, "svc_triggers", `{"account":"`+hexAddr(a)+`"}`),
	}
	h.Pump()
	for _, id := range ids {
		if got := rawResults(t, c, id); len(got) != 1 {
			t.Fatalf("%s: %d notifications, want the snapshot alone: %v", id, len(got), got)
		}
	}
	tk = newTick(2000).book(bookID(2), true, nil).t
	tk.Positions = append(tk.Positions, tickrec.AccountPositions{Account: a})
	tk.Triggers = append(tk.Triggers, tickrec.AccountTriggers{Account: a})
	h.PublishTick(tk)
	h.Pump()
	for _, id := range ids {
		if got := rawResults(t, c, id); len(got) != 2 {
			t.Fatalf("%s: %d notifications after the next tick, want 2", id, len(got))
		}
	}
}
