package marketdata

import (
	"fmt"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

const (
	idA = "0x0000000000000000000000000000000000000000000000000000000000000001"
	idB = "0x0000000000000000000000000000000000000000000000000000000000000002"
)

func TestMarketsJSON(t *testing.T) {
	x := newTestIndex()
	x.Tick(mkTick(1_000_000, bookTick{book: bookA, price: "5" + e18[1:], volume: "2" + e18[1:], newOrders: 2}))
	got := string(AppendMarkets(nil, x.Markets(nil)))
	want := `[{"id":"` + idA + `","name":"WETH/USD",` +
		`"base_token_address":"0x0000000000000000000000000000000000000011",` +
		`"quote_token_address":"0x0000000000000000000000000000000000000022",` +
		`"base_token_symbol":"WETH","quote_token_symbol":"USD","base_token_name":"WETH","quote_token_name":"USD",` +
		`"market_type":"spot","last_clearing_price":"0x4563918244f40000","auction_interval":500000,` +
		`"volume_24h":"0x1bc16d674ec80000","high_24h":"0x4563918244f40000","low_24h":"0x4563918244f40000",` +
		`"price_change_24h":0,"maker_fee":"0x0","taker_fee":"0x38d7ea4c68000","tick_precision":"0x38d7ea4c68000",` +
		`"lot_size":"0x16345785d8a0000","max_leverage":1,"oracle_price":null,"mark_price":null,"funding_rate":null,` +
		`"funding_index":null,"funding_last_updated":null,"open_interest":null},` +
		`{"id":"` + idB + `","name":"WBTC/USD",` +
		`"base_token_address":"0x0000000000000000000000000000000000000033",` +
		`"quote_token_address":"0x0000000000000000000000000000000000000022",` +
		`"base_token_symbol":"WBTC","quote_token_symbol":"USD","base_token_name":"WBTC","quote_token_name":"USD",` +
		`"market_type":"spot","last_clearing_price":"0x0","auction_interval":500000,` +
		`"volume_24h":"0x0","high_24h":"0x0","low_24h":"0x0",` +
		`"price_change_24h":0,"maker_fee":"0x0","taker_fee":"0x38d7ea4c68000","tick_precision":"0x38d7ea4c68000",` +
		`"lot_size":"0x16345785d8a0000","max_leverage":1,"oracle_price":null,"mark_price":null,"funding_rate":null,` +
		`"funding_index":null,"funding_last_updated":null,"open_interest":null}]`
	if got != want {
		t.Fatalf("markets:\ngot  %s\nwant %s", got, want)
	}
	checkRoundTrip(t, x)
}

func TestStats24hRolling(t *testing.T) {
	x := newTestIndex()
	f := func(nowUs int64, volume, high, low string, changeBps int64) {
		t.Helper()
		if nowUs > x.NowUs() {
			x.Tick(mkTick(nowUs, bookTick{book: bookB})) // another book's quiet tick moves time
		}
		m := x.Markets(nil)[0]
		if m.Config.ID != bookA {
			t.Fatalf("first market %x", m.Config.ID)
		}
		if m.Volume24h != dec(volume) || m.High24h != dec(high) || m.Low24h != dec(low) || m.Change24hBps != changeBps {
			t.Fatalf("now %d: got volume %s high %s low %s change %d; want %s %s %s %d", nowUs,
				m.Volume24h.Dec(), m.High24h.Dec(), m.Low24h.Dec(), m.Change24hBps, volume, high, low, changeBps)
		}
	}
	five, six, four := "5"+e18[1:], "6"+e18[1:], "4"+e18[1:]
	x.Tick(mkTick(1_000_000, bookTick{book: bookA, price: five, volume: "2" + e18[1:]}))
	f(1_000_000, "2"+e18[1:], five, five, 0)
	x.Tick(mkTick(61_000_000, bookTick{book: bookA, price: six, volume: e18}))
	f(61_000_000, "3"+e18[1:], six, five, 2000) // (6 − 5) / 5
	x.Tick(mkTick(62_000_000, bookTick{book: bookA, price: four, volume: e18}))
	f(62_000_000, "4"+e18[1:], six, four, -2000) // (4 − 5) / 5
	// A tick that clears nothing keeps the price and adds nothing.
	x.Tick(mkTick(63_000_000, bookTick{book: bookA, price: four}))
	f(63_000_000, "4"+e18[1:], six, four, -2000)
	// The first minute's bucket [0, 60 s) leaves the window once now − 24h ≥ 60 s.
	f(dayUs+59_000_000, "4"+e18[1:], six, four, -2000)
	f(dayUs+60_000_000, "2"+e18[1:], six, four, -3333) // (4 − 6) / 6, truncated
	f(dayUs+120_000_000, "0", "0", "0", 0)
	if m := x.Markets(nil)[0]; m.LastPrice != dec(four) || !m.HasPrice {
		t.Fatalf("last price %s", m.LastPrice.Dec())
	}
	checkRoundTrip(t, x)
}

func TestChangeBps(t *testing.T) {
	f := func(from, to string, want int64) {
		t.Helper()
		a, b := dec(from), dec(to)
		if got := changeBps(&a, &b); got != want {
			t.Fatalf("changeBps(%s, %s) = %d, want %d", from, to, got, want)
		}
	}
	f("0", "5", 0)
	f("100", "101", 100)
	f("100", "99", -100)
	f("3", "1", -6666)
	f("1", "115792089237316195423570985008687907853269984665640564039457584007913129639935", 9223372036854775807)
}

func TestOrderbookJSON(t *testing.T) {
	x := newTestIndex()
	f := func(depth int, want string) {
		t.Helper()
		buys := []clob.Level{
			{Price: dec("5" + e18[1:]), Volume: dec(e18), Orders: 1},
			{Price: dec("49" + e17[1:]), Volume: dec("2" + e18[1:]), Orders: 1},
		}
		sells := []clob.Level{{Price: dec("51" + e17[1:]), Volume: dec("15" + e17[1:]), Orders: 1}}
		s, ok := x.Orderbook(bookA, buys, sells, depth)
		if !ok {
			t.Fatalf("unknown book")
		}
		if got := string(AppendOrderbook(nil, &s)); got != want {
			t.Fatalf("orderbook depth %d:\ngot  %s\nwant %s", depth, got, want)
		}
	}
	f(0, `{"orderbook_id":"`+idA+`","buys":{"5000000000000000000":{"volume":"0xde0b6b3a7640000"},`+
		`"4900000000000000000":{"volume":"0x1bc16d674ec80000"}},"sells":{"5100000000000000000":{"volume":"0x14d1120d7b160000"}},`+
		`"clearing_price":"0x0","grouping_precision":"0x38d7ea4c68000","timestamp":0,"new_orders_count":0,`+
		`"buys_count":0,"sells_count":0,"oracle_price":null,"funding_rate":null,"funding_index":null,"funding_last_updated":null}`)

	x.Admitted(meta(1, bookA, alice, 1, 100, clob.Buy))
	x.Admitted(meta(2, bookA, alice, 2, 200, clob.Buy))
	x.Admitted(meta(3, bookA, bob, 1, 300, clob.Sell))
	x.Tick(mkTick(500_000, bookTick{book: bookA, price: "5" + e18[1:], newOrders: 3,
		events: []clob.Event{ev(clob.EventPlaced, 1), ev(clob.EventPlaced, 2), ev(clob.EventPlaced, 3)}}))
	f(1, `{"orderbook_id":"`+idA+`","buys":{"5000000000000000000":{"volume":"0xde0b6b3a7640000"}},`+
		`"sells":{"5100000000000000000":{"volume":"0x14d1120d7b160000"}},`+
		`"clearing_price":"0x4563918244f40000","grouping_precision":"0x38d7ea4c68000","timestamp":500000,"new_orders_count":3,`+
		`"buys_count":2,"sells_count":1,"oracle_price":null,"funding_rate":null,"funding_index":null,"funding_last_updated":null}`)

	// A cancel leaves the count; a quiet tick of the book resets new_orders_count.
	x.Tick(mkTick(1_000_000, bookTick{book: bookA, price: "5" + e18[1:], events: []clob.Event{ev(clob.EventCancel, 2)}}))
	s, _ := x.Orderbook(bookA, nil, nil, 0)
	if s.BuysCount != 1 || s.SellsCount != 1 || s.NewOrdersCount != 0 || s.TimestampUs != 1_000_000 {
		t.Fatalf("after cancel: %+v", s)
	}
	if _, ok := x.Orderbook(hashOf(9), nil, nil, 0); ok {
		t.Fatalf("unknown book answered")
	}
	checkRoundTrip(t, x)
}

func TestOrderLifecycle(t *testing.T) {
	x := newTestIndex()
	status := func(id byte) Status {
		t.Helper()
		o, ok := x.orders[hashOf(id)]
		if !ok {
			t.Fatalf("order %d unknown", id)
		}
		return o.Status
	}
	f := func(id byte, want Status) {
		t.Helper()
		if got := status(id); got != want {
			t.Fatalf("order %d: status %s, want %s", id, got, want)
		}
	}
	for id := byte(1); id <= 6; id++ {
		x.Admitted(meta(id, bookA, alice, uint64(id), int64(id)*10, clob.Buy))
	}
	f(1, StatusPending)
	x.Tick(mkTick(500_000, bookTick{book: bookA, price: "5" + e18[1:], volume: e17, events: []clob.Event{
		ev(clob.EventPlaced, 1), ev(clob.EventPlaced, 2), ev(clob.EventPlaced, 3),
		ev(clob.EventPostOnlyRefused, 4), ev(clob.EventExpire, 5),
		fillEv(1, e17, "5"+e17[1:], e17, "5"+e17[1:], false),
	}}))
	f(1, StatusActive)
	f(2, StatusActive)
	f(4, StatusPostOnlyRefused)
	f(5, StatusExpired)
	f(6, StatusPending)
	x.Tick(mkTick(1_000_000, bookTick{book: bookA, price: "5" + e18[1:], volume: "9" + e17[1:], events: []clob.Event{
		ev(clob.EventCancel, 2), ev(clob.EventPlaced, 6),
		fillEv(1, "4"+e17[1:], "2"+e18[1:], "5"+e17[1:], "25"+e17[1:], false),
		fillEv(1, "5"+e17[1:], "25"+e17[1:], e18, "5"+e18[1:], true),
		ev(clob.EventExpire, 3),
	}}))
	f(1, StatusFilled)
	f(2, StatusCanceled)
	f(3, StatusExpired)
	f(6, StatusActive)
	// Terminal orders stay terminal whatever comes later.
	x.Tick(mkTick(1_500_000, bookTick{book: bookA, price: "5" + e18[1:], events: []clob.Event{ev(clob.EventCancel, 1)}}))
	f(1, StatusFilled)

	o := x.orders[hashOf(1)]
	if len(o.Fills) != 2 || o.Fills[1].Base != dec("9"+e17[1:]) || o.Fills[1].Quote != dec("45"+e17[1:]) || o.Fills[1].TickUs != 1_000_000 {
		t.Fatalf("fills merged per tick: %+v", o.Fills)
	}
	s, _ := x.Orderbook(bookA, nil, nil, 0)
	if s.BuysCount != 1 {
		t.Fatalf("buys_count %d, want 1 (order 6)", s.BuysCount)
	}
	checkRoundTrip(t, x)
}

func TestOrderJSON(t *testing.T) {
	x := newTestIndex()
	m := meta(7, bookA, alice, 42, 123, clob.Sell)
	m.Flags = clob.FlagPostOnly
	m.TTLUs = 3_000_000
	x.Admitted(m)
	x.Tick(mkTick(500_000, bookTick{book: bookA, price: "5" + e18[1:], volume: "5" + e17[1:], events: []clob.Event{
		ev(clob.EventPlaced, 7),
		{Kind: clob.EventFill, OrderID: hashOf(7), Base: dec("5" + e17[1:]), Quote: dec("25" + e17[1:]),
			TotalBase: dec("5" + e17[1:]), TotalQuote: dec("25" + e17[1:]), TotalFee: dec("25" + e17[3:])},
	}}))
	page := x.Orders(nil, alice, &OrdersQuery{Limit: 10, WithTotal: true, WithFills: true})
	got := string(AppendOrders(nil, &page))
	want := `{"orders":[{"orderbook_id":"` + idA + `","market_type":"spot","kind":"user_signed",` +
		`"order_id":"0x0000000000000000000000000000000000000000000000000000000000000007",` +
		`"tx_hash":"0x0000000000000000000000000000000000000000000000000000000000000087",` +
		`"bidder":"0x00000000000000000000000000000000000000a1","nonce":42,"timestamp":123,` +
		`"order_type":"limit","status":"active","side":"sell","price":"0x4563918244f40000",` +
		`"initial_size":"-1000000000000000000","filled_base_amount":"0x6f05b59d3b20000",` +
		`"filled_quote_amount":"0x22b1c8c1227a0000","fee":"0x58d15e17628000","deadline":1000000,"end":3500000,` +
		`"effective_price":"0x4563918244f40000",` +
		`"fills":[{"base_amount":"0x6f05b59d3b20000","quote_amount":"0x22b1c8c1227a0000","timestamp":500000,"price":"0x4563918244f40000"}],` +
		`"direction":"sell","post_only":true}],"total_count":1,"next_cursor":null}`
	if got != want {
		t.Fatalf("orders:\ngot  %s\nwant %s", got, want)
	}
	// Without with_fills the array is empty and total_count is absent.
	page = x.Orders(nil, alice, &OrdersQuery{Limit: 10})
	got = string(AppendOrders(nil, &page))
	if want := `"fills":[],"direction":"sell","post_only":true}],"next_cursor":null}`; got[len(got)-len(want):] != want {
		t.Fatalf("orders without fills: %s", got)
	}
	page = x.Orders(nil, bob, &OrdersQuery{Limit: 10, WithTotal: true})
	if got := string(AppendOrders(nil, &page)); got != `{"orders":[],"total_count":0,"next_cursor":null}` {
		t.Fatalf("empty account: %s", got)
	}
	checkRoundTrip(t, x)
}

func TestOrdersPagination(t *testing.T) {
	x := newTestIndex()
	// 23 orders; several share an admission time, and a batch shares a nonce.
	for i := range 23 {
		book := bookA
		if i%3 == 0 {
			book = bookB
		}
		x.Admitted(meta(byte(100-i), book, alice, uint64(i/2), int64(i/4)*1000, clob.Side(i%2)))
	}
	x.Admitted(meta(200, bookA, bob, 0, 0, clob.Buy)) // another account: never listed
	var eventsA, eventsB []clob.Event
	for i := range 23 {
		switch {
		case i%5 != 0:
		case i%3 == 0:
			eventsB = append(eventsB, ev(clob.EventPlaced, byte(100-i)))
		default:
			eventsA = append(eventsA, ev(clob.EventPlaced, byte(100-i)))
		}
	}
	x.Tick(mkTick(500_000, bookTick{book: bookA, events: eventsA}, bookTick{book: bookB, events: eventsB}))

	f := func(q OrdersQuery, wantCount int) {
		t.Helper()
		var all []*Order
		seen := map[clob.Hash]bool{}
		pages := 0
		for {
			page := x.Orders(nil, alice, &q)
			if q.WithTotal && page.Total != wantCount {
				t.Fatalf("total %d, want %d", page.Total, wantCount)
			}
			if len(page.Orders) > q.Limit {
				t.Fatalf("page of %d orders, limit %d", len(page.Orders), q.Limit)
			}
			for _, o := range page.Orders {
				if seen[o.Meta.ID] {
					t.Fatalf("order %x returned twice", o.Meta.ID)
				}
				seen[o.Meta.ID] = true
				all = append(all, o)
			}
			pages++
			if !page.HasNext {
				break
			}
			// Round-trip the cursor through its wire text.
			text := AppendCursor(nil, &page.Next)
			c, ok := ParseCursor(text)
			if !ok || c != page.Next {
				t.Fatalf("cursor %q does not round-trip", text)
			}
			q.Cursor, q.HasCursor = c, true
		}
		if len(all) != wantCount {
			t.Fatalf("%d orders over %d pages, want %d", len(all), pages, wantCount)
		}
		for i := 1; i < len(all); i++ {
			if compareOrders(all[i-1], all[i]) <= 0 {
				t.Fatalf("not newest first at %d", i)
			}
		}
		for _, o := range all {
			if o.Meta.Owner != alice || !q.matches(o) {
				t.Fatalf("order %x does not match the query", o.Meta.ID)
			}
		}
	}
	for _, limit := range []int{1, 2, 3, 7, 23, 50} {
		f(OrdersQuery{Limit: limit, WithTotal: true}, 23)
		f(OrdersQuery{Limit: limit, Book: bookB, HasBook: true}, 8)
		f(OrdersQuery{Limit: limit, Status: StatusActive, WithTotal: true}, 5)
		f(OrdersQuery{Limit: limit, Status: StatusPending}, 18)
		f(OrdersQuery{Limit: limit, Status: StatusFilled, WithTotal: true}, 0)
		f(OrdersQuery{Limit: limit, Book: bookA, HasBook: true, Status: StatusActive}, 3)
	}
	// A full last page has no next cursor.
	page := x.Orders(nil, alice, &OrdersQuery{Limit: 23})
	if len(page.Orders) != 23 || page.HasNext {
		t.Fatalf("full page: %d orders, next %v", len(page.Orders), page.HasNext)
	}
	// The limit is clamped.
	if got := len(x.Orders(nil, alice, &OrdersQuery{Limit: 0}).Orders); got != 23 {
		t.Fatalf("default limit gave %d", got)
	}
	checkRoundTrip(t, x)
}

func TestCursorJSON(t *testing.T) {
	x := newTestIndex()
	x.Admitted(meta(1, bookA, alice, 41, 1704153600000000, clob.Buy))
	x.Admitted(meta(0xab, bookA, alice, 42, 1704153600000000, clob.Buy))
	page := x.Orders(nil, alice, &OrdersQuery{Limit: 1})
	got := string(AppendOrders(nil, &page))
	want := `"next_cursor":"1704153600000000:42:00000000000000000000000000000000000000000000000000000000000000ab"}`
	if got[len(got)-len(want):] != want {
		t.Fatalf("cursor: %s", got)
	}
	checkRoundTrip(t, x)
}

func TestTerminalOrdersPerAccount(t *testing.T) {
	x := newTestIndex()
	// One live order first: it must survive every drop.
	x.Admitted(&OrderMeta{ID: hashOf(0), Book: bookA, Owner: alice})
	x.Tick(mkTick(500_000, bookTick{book: bookA, events: []clob.Event{ev(clob.EventPlaced, 0)}}))
	total := TerminalOrdersPerAccount + 10
	for i := 1; i <= total; i++ {
		var id clob.Hash
		id[0], id[1] = byte(i>>8), byte(i)
		x.Admitted(&OrderMeta{ID: id, Book: bookA, Owner: alice, AdmittedUs: int64(i)})
		res := mkTick(500_000+int64(i)*500_000, bookTick{book: bookA})
		res.Events = []clob.Event{{Kind: clob.EventCancel, OrderID: id}}
		res.Books[0].EndEvent = 1
		x.Tick(res)
	}
	page := x.Orders(nil, alice, &OrdersQuery{Limit: OrdersLimitMax, WithTotal: true})
	if page.Total != TerminalOrdersPerAccount+1 {
		t.Fatalf("kept %d orders, want %d", page.Total, TerminalOrdersPerAccount+1)
	}
	if len(x.orders) != TerminalOrdersPerAccount+1 {
		t.Fatalf("id map holds %d", len(x.orders))
	}
	a := x.accounts[alice]
	if a.orders[0].Meta.ID != hashOf(0) || a.orders[0].Status != StatusActive {
		t.Fatalf("live order dropped")
	}
	if a.orders[1].Meta.AdmittedUs != 11 {
		t.Fatalf("oldest kept terminal order admitted at %d, want 11", a.orders[1].Meta.AdmittedUs)
	}
	checkRoundTrip(t, x)
}

func TestUpdateUsesLiveOrders(t *testing.T) {
	live := fakeLive{hashOf(1): {Price: dec("6" + e18[1:]), ExpiresUs: 9_000_000}}
	x := New(live)
	x.AddMarket(marketA())
	x.Admitted(meta(1, bookA, alice, 1, 10, clob.Buy))
	x.Tick(mkTick(500_000, bookTick{book: bookA, events: []clob.Event{ev(clob.EventPlaced, 1), ev(clob.EventUpdate, 1)}}))
	o := x.orders[hashOf(1)]
	if o.Price != dec("6"+e18[1:]) || o.Meta.Price != dec("5"+e18[1:]) || o.EndUs != 9_000_000 || o.Status != StatusActive {
		t.Fatalf("after update: price %s end %d status %s", o.Price.Dec(), o.EndUs, o.Status)
	}
	checkRoundTrip(t, x)
}

type fakeLive map[clob.Hash]clob.OrderInfo

func (f fakeLive) Order(id clob.Hash) (clob.OrderInfo, bool) {
	o, ok := f[id]
	return o, ok
}

// fakeLive has no markets of its own: perp reads find nothing.
func (fakeLive) Market(clob.Hash) (*clob.MarketConfig, bool) { return nil, false }
func (fakeLive) PerpMarket(clob.Hash) (clob.PerpInfo, bool)  { return clob.PerpInfo{}, false }
func (fakeLive) AppendPositions(dst []clob.PositionInfo, _ clob.Address) []clob.PositionInfo {
	return dst
}

func TestCandles(t *testing.T) {
	x := newTestIndex()
	p := func(n int) string { return fmt.Sprint(n) + e18[1:] }
	// Ticks (seconds → price, volume): no trade at 30 s, nothing between 2 and 59 minutes.
	x.Tick(mkTick(10_000_000, bookTick{book: bookA, price: p(5), volume: e18}))
	x.Tick(mkTick(30_000_000, bookTick{book: bookA, price: p(5)}))
	x.Tick(mkTick(50_000_000, bookTick{book: bookA, price: p(7), volume: e18}))
	x.Tick(mkTick(70_000_000, bookTick{book: bookA, price: p(3), volume: "2" + e18[1:]}))
	x.Tick(mkTick(3_600_000_000, bookTick{book: bookA, price: p(4), volume: e18}))
	f := func(q CandlesQuery, want string) {
		t.Helper()
		cs, ok := x.Candles(nil, bookA, &q)
		if !ok {
			t.Fatalf("unknown book")
		}
		var got string
		for _, c := range cs {
			got += fmt.Sprintf("%d:%s/%s/%s/%s/%s ", c.StartUs/1_000_000, c.Open.Dec()[:1], c.High.Dec()[:1],
				c.Low.Dec()[:1], c.Close.Dec()[:1], c.Volume.Dec()[:1])
		}
		if got != want {
			t.Fatalf("%s from %d to %d limit %d:\ngot  %s\nwant %s", q.Resolution, q.FromUs, q.ToUs, q.Limit, got, want)
		}
	}
	all := CandlesQuery{ToUs: 1 << 62, Limit: CandlesLimitMax}
	q := all
	f(q, "3600:4/4/4/4/1 60:3/3/3/3/2 0:5/7/5/7/2 ")
	q.Resolution = Res5m
	f(q, "3600:4/4/4/4/1 0:5/7/3/3/4 ")
	q.Resolution = Res1h
	f(q, "3600:4/4/4/4/1 0:5/7/3/3/4 ")
	q.Resolution = Res4h
	f(q, "0:5/7/3/4/5 ")
	q.Resolution = Res1d
	f(q, "0:5/7/3/4/5 ")
	q = all
	q.Limit = 2
	f(q, "3600:4/4/4/4/1 60:3/3/3/3/2 ")
	q = all
	q.FromUs, q.ToUs = 60_000_000, 60_000_000 // both ends inclusive
	f(q, "60:3/3/3/3/2 ")
	q.FromUs, q.ToUs = 61_000_000, 3_599_000_000
	f(q, "")

	cs, _ := x.Candles(nil, bookA, &CandlesQuery{Resolution: Res1h, ToUs: 1 << 62, Limit: 1})
	if got := string(AppendCandles(nil, cs)); got != `[{"timestamp":3600000000,"open":"0x3782dace9d900000",`+
		`"close":"0x3782dace9d900000","high":"0x3782dace9d900000","low":"0x3782dace9d900000","volume":"0xde0b6b3a7640000"}]` {
		t.Fatalf("candles JSON: %s", got)
	}
	if _, ok := x.Candles(nil, hashOf(9), &all); ok {
		t.Fatalf("unknown book answered")
	}
	checkRoundTrip(t, x)
}

func TestCandleBucketsMax(t *testing.T) {
	var ring candleRing
	price, volume := dec("1"), dec("1")
	total := CandleBucketsMax + 7
	for i := range total {
		ring.add(minuteUs, int64(i)*minuteUs, &price, &volume)
	}
	if ring.len() != CandleBucketsMax {
		t.Fatalf("ring holds %d", ring.len())
	}
	for i := range ring.len() {
		if want := int64(i+7) * minuteUs; ring.at(i).StartUs != want {
			t.Fatalf("bucket %d starts at %d, want %d", i, ring.at(i).StartUs, want)
		}
	}
}

func TestPositionsJSON(t *testing.T) {
	x := newTestIndex()
	x.Tick(mkTick(500_000, bookTick{book: bookA, price: "5" + e18[1:], volume: e18}))
	balances := func(token, owner clob.Address) (cash, locked uint256.Int) {
		if owner == alice && token == baseA {
			return dec("3" + e18[1:]), dec(e18)
		}
		if owner == alice && token == addrOf(0x33) {
			return dec(e17), dec("0")
		}
		return
	}
	got := string(AppendPositions(nil, &PositionsData{Spot: x.Positions(nil, alice, balances)}))
	want := `{"positions":[{"kind":"spot","orderbook_id":"` + idA + `","base_symbol":"WETH","quote_symbol":"USD",` +
		`"balance":"0x29a2241af62c0000","free_balance":"0x1bc16d674ec80000","locked_balance":"0xde0b6b3a7640000",` +
		`"cost_basis":null,"mark_price":"0x4563918244f40000","unrealized_pnl":null,"realized_pnl":null},` +
		`{"kind":"spot","orderbook_id":"` + idB + `","base_symbol":"WBTC","quote_symbol":"USD",` +
		`"balance":"0x16345785d8a0000","free_balance":"0x16345785d8a0000","locked_balance":"0x0",` +
		`"cost_basis":null,"mark_price":null,"unrealized_pnl":null,"realized_pnl":null}],` +
		`"total_unrealized_pnl":null,"total_realized_pnl":null,"perps_equity":null,"account_value":null,` +
		`"cash":null,"withdrawable_cash":null,"net_deposits":null}`
	if got != want {
		t.Fatalf("positions:\ngot  %s\nwant %s", got, want)
	}
	if got := string(AppendPositions(nil, &PositionsData{Spot: x.Positions(nil, bob, balances)})); got[:16] != `{"positions":[],` {
		t.Fatalf("empty positions: %s", got)
	}
	checkRoundTrip(t, x)
}

func TestDeterminism(t *testing.T) {
	run := func() string {
		x := newTestIndex()
		for i := range 40 {
			x.Admitted(meta(byte(i), []clob.Hash{bookA, bookB}[i%2], []clob.Address{alice, bob}[i%3%2], uint64(i), int64(i)*7, clob.Side(i%2)))
		}
		var out []byte
		for tick := int64(1); tick <= 10; tick++ {
			var evs []clob.Event
			for i := range 40 {
				if i%10 == int(tick%10) {
					evs = append(evs, ev(clob.EventPlaced, byte(i)))
				}
			}
			x.Tick(mkTick(tick*500_000, bookTick{book: bookA, price: fmt.Sprint(tick) + e17[1:], volume: e17, events: evs}))
		}
		out = AppendMarkets(out, x.Markets(nil))
		page := x.Orders(nil, alice, &OrdersQuery{Limit: 100, WithTotal: true, WithFills: true})
		out = AppendOrders(out, &page)
		return string(checkRoundTrip(t, x)) + string(out)
	}
	if a, b := run(), run(); a != b {
		t.Fatalf("two runs differ")
	}
}
