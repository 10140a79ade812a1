package obwire

import (
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
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
	page := x.Orders(nil, alice, &marketdata.OrdersQuery{Limit: 10, WithTotal: true, WithFills: true})
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
	page = x.Orders(nil, alice, &marketdata.OrdersQuery{Limit: 10})
	got = string(AppendOrders(nil, &page))
	if want := `"fills":[],"direction":"sell","post_only":true}],"next_cursor":null}`; got[len(got)-len(want):] != want {
		t.Fatalf("orders without fills: %s", got)
	}
	page = x.Orders(nil, bob, &marketdata.OrdersQuery{Limit: 10, WithTotal: true})
	if got := string(AppendOrders(nil, &page)); got != `{"orders":[],"total_count":0,"next_cursor":null}` {
		t.Fatalf("empty account: %s", got)
	}
}

func TestCursorJSON(t *testing.T) {
	x := newTestIndex()
	x.Admitted(meta(1, bookA, alice, 41, 1704153600000000, clob.Buy))
	x.Admitted(meta(0xab, bookA, alice, 42, 1704153600000000, clob.Buy))
	page := x.Orders(nil, alice, &marketdata.OrdersQuery{Limit: 1})
	got := string(AppendOrders(nil, &page))
	want := `"next_cursor":"1704153600000000:42:00000000000000000000000000000000000000000000000000000000000000ab"}`
	if got[len(got)-len(want):] != want {
		t.Fatalf("cursor: %s", got)
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
	got := string(AppendPositions(nil, &marketdata.PositionsData{Spot: x.Positions(nil, alice, balances)}))
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
	if got := string(AppendPositions(nil, &marketdata.PositionsData{Spot: x.Positions(nil, bob, balances)})); got[:16] != `{"positions":[],` {
		t.Fatalf("empty positions: %s", got)
	}
}

func TestCandlesJSON(t *testing.T) {
	x := newTestIndex()
	x.Tick(mkTick(3_600_000_000, bookTick{book: bookA, price: "4" + e18[1:], volume: e18}))
	cs, _ := x.Candles(nil, bookA, &marketdata.CandlesQuery{Resolution: marketdata.Res1h, ToUs: 1 << 62, Limit: 1})
	if got := string(AppendCandles(nil, cs)); got != `[{"timestamp":3600000000,"open":"0x3782dace9d900000",`+
		`"close":"0x3782dace9d900000","high":"0x3782dace9d900000","low":"0x3782dace9d900000","volume":"0xde0b6b3a7640000"}]` {
		t.Fatalf("candles JSON: %s", got)
	}
}
