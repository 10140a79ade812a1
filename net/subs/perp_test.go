package subs

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
)

// perpBook is the perp market of the perp tests.
var perpBook = bookID(0x30)

var perpCfg = &clob.MarketConfig{ID: perpBook, Kind: clob.Perp, Name: "ETH-PERP", BaseSymbol: "ETH", QuoteSymbol: "USD",
	IntervalUs: 500_000, TickPrecision: u(1e15), LotSize: u(1e15), Base: addr(0x31), Quote: addr(0xee),
	Perp: clob.PerpParams{MaxLeverage: 20, InterestRate: u(1e14), MaxFundingRate: u(32e16), OraclePrice: w(2000), WalkBps: 5, WalkSeed: 9}}

func testTrigger(n byte, owner clob.Address, side clob.Side, typ uint8) marketdata.Trigger {
	t := marketdata.Trigger{Info: clob.TriggerInfo{ID: orderID(n), Book: perpBook, Owner: owner, Signer: owner, Nonce: uint64(n),
		Side: side, Size: w(1), TriggerPrice: w(1900), TriggerType: typ, Grouping: clob.GroupingAsset, Flags: clob.FlagReduceOnly,
		DeadlineUs: 1_000_000, AdmitTickUs: 500_000}}
	if n%2 == 1 {
		t.TxHash, t.HasTx = txHash(n), true
	}
	return t
}

// perpTestTick is a tick of the perp market: a fill with position fields,
// a liquidation, trigger events, the market's perp state and one
// account's triggers.
func perpTestTick(us int64, owner clob.Address, mark uint64) *tickrec.Tick {
	tk := newTick(us).book(perpBook, true, nil,
		clob.Event{Kind: clob.EventFill, OrderID: orderID(1), Owner: owner, Side: clob.Buy, Base: w(1), Quote: w(2000),
			Position: clob.Signed{Abs: w(3)}, Realized: clob.Signed{Neg: true, Abs: u(7)}},
		clob.Event{Kind: clob.EventLiquidation, OrderID: orderID(2), Owner: addr(0x44), Side: clob.Buy, Base: w(2),
			Position: clob.Signed{Abs: w(2)}, Realized: clob.Signed{Neg: true, Abs: w(5)}, Price: w(mark)},
		clob.Event{Kind: clob.EventTriggerFired, OrderID: orderID(3), Owner: owner, Price: w(mark)},
		clob.Event{Kind: clob.EventTriggerCancel, OrderID: orderID(4), Owner: owner},
	).t
	m := &tk.Markets[0]
	m.Config = perpCfg
	m.HasPerp, m.MaxLeverage = true, perpCfg.Perp.MaxLeverage
	m.Perp = clob.PerpInfo{Book: perpBook, Oracle: w(mark), Mark: w(mark), FundingRate: clob.Signed{Neg: true, Abs: u(3e13)},
		FundingIndex: clob.Signed{Abs: u(12345)}, FundingLastUs: us, OpenInterest: w(5)}
	tk.Books[0].Kind = clob.Perp
	tk.Triggers = []tickrec.AccountTriggers{{Account: owner, Triggers: []marketdata.Trigger{testTrigger(5, owner, clob.Sell, clob.TriggerStopLoss),
		testTrigger(6, owner, clob.Sell, clob.TriggerTakeProfit)}}}
	return tk
}

// svc_triggers: the snapshot comes from Config.Triggers until a tick
// publishes the account's triggers; then every tick that does pushes them.
func TestTriggersChannel(t *testing.T) {
	acct := addr(7)
	h := New(Config{Triggers: func(a clob.Address) []marketdata.Trigger {
		if a != acct {
			return nil
		}
		return []marketdata.Trigger{testTrigger(1, acct, clob.Buy, clob.TriggerTakeProfit)}
	}})
	c := &fakeConn{}
	mine := subscribe(t, h, c, "svc_triggers", `{"account":"`+hexAddr(acct)+`"}`)
	other := subscribe(t, h, c, "svc_triggers", `{"account":"`+hexAddr(addr(8))+`"}`)
	want := `{"account":"` + hexAddr(acct) + `","triggers":[{"orderbook_id":"` + hexHash(perpBook) + `","order_id":"` + hexHash(orderID(1)) +
		`","tx_hash":"` + hexHash(txHash(1)) + `","bidder":"` + hexAddr(acct) + `","nonce":1,"size":"1000000000000000000",` +
		`"limit_price":"0x0","trigger_price":"0x66ffcbfd5e5a300000","trigger_type":"take_profit","grouping":"asset","reduce_only":true,` +
		`"ioc":false,"deadline":1000000,"end":null}],"total_count":1,"next_cursor":null}`
	if got := rawResults(t, c, mine); len(got) != 1 || got[0] != want {
		t.Fatalf("snapshot\n got %v\nwant %s", got, want)
	}
	if got := rawResults(t, c, other); len(got) != 1 || got[0] != `{"account":"`+hexAddr(addr(8))+`","triggers":[],"total_count":0,"next_cursor":null}` {
		t.Fatalf("empty snapshot %v", got)
	}
	h.PublishTick(perpTestTick(1_000_000, acct, 1950))
	h.Pump()
	got := results(t, c, mine)
	if len(got) != 2 || got[1]["total_count"] != float64(2) {
		t.Fatalf("live %v", got)
	}
	tr := got[1]["triggers"].([]any)
	if tr[0].(map[string]any)["size"] != "-1000000000000000000" || tr[0].(map[string]any)["trigger_type"] != "stop_loss" ||
		tr[1].(map[string]any)["tx_hash"] != nil {
		t.Fatalf("live triggers %v", tr)
	}
	if got := results(t, c, other); len(got) != 1 {
		t.Fatalf("untouched account got %v", got)
	}
	// A later subscriber's snapshot is the newest published, not the source.
	late := subscribe(t, h, c, "svc_triggers", `{"account":"`+hexAddr(acct)+`"}`)
	if got := results(t, c, late); len(got) != 1 || got[0]["total_count"] != float64(2) {
		t.Fatalf("late snapshot %v", got)
	}
}

// svc_markets carries a perp market's live fields; a spot market's stay
// null.
func TestMarketsPerpFields(t *testing.T) {
	h := New(Config{})
	c := &fakeConn{}
	id := subscribe(t, h, c, "svc_markets", ``)
	tk := perpTestTick(1_000_000, addr(7), 1950)
	h.PublishTick(tk)
	h.PublishTick(newTick(2_000_000).book(bookID(1), false, nil).t)
	h.Pump()
	got := results(t, c, id)
	if len(got) != 2 {
		t.Fatalf("markets %v", got)
	}
	p := got[0]
	if p["orderbook"] != hexHash(perpBook) || p["market_type"] != "perpetual" || p["max_leverage"] != float64(20) ||
		p["oracle_price"] != "0x69b5afac750bb80000" || p["mark_price"] != "0x69b5afac750bb80000" ||
		p["funding_rate"] != "-30000000000000" || p["funding_index"] != "12345" ||
		p["funding_last_updated"] != float64(1_000_000) || p["open_interest"] != "0x4563918244f40000" {
		t.Fatalf("perp entry %v", p)
	}
	s := got[1]
	if s["market_type"] != "spot" || s["max_leverage"] != float64(1) || s["oracle_price"] != nil || s["funding_last_updated"] != nil {
		t.Fatalf("spot entry %v", s)
	}
}

// WatchedPositions lists the accounts with svc_positions subscriptions,
// pending ones included, and forgets them when the last one goes.
func TestWatchedPositions(t *testing.T) {
	h := New(Config{})
	c1, c2 := &fakeConn{}, &fakeConn{}
	a, b := addr(9), addr(3)
	s1 := subscribe(t, h, c1, "svc_positions", `{"account":"`+hexAddr(a)+`"}`)
	subscribe(t, h, c2, "svc_positions", `{"account":"`+hexAddr(a)+`"}`)
	if _, err := subscribeErr(h, c2, "svc_positions", `{"account":"`+hexAddr(b)+`"}`); err != nil { // pending
		t.Fatal(err)
	}
	subscribe(t, h, c2, "svc_triggers", `{"account":"`+hexAddr(addr(5))+`"}`) // not a positions watch
	if got := h.WatchedPositions(nil); !slices.Equal(got, []clob.Address{b, a}) {
		t.Fatalf("watched %x", got)
	}
	h.Unsubscribe(c1, s1)
	if got := h.WatchedPositions(nil); !slices.Equal(got, []clob.Address{b, a}) {
		t.Fatalf("after one unsubscribe %x", got)
	}
	h.DropConn(c2)
	if got := h.WatchedPositions(nil); len(got) != 0 {
		t.Fatalf("after drop %x", got)
	}
}

// PositionsKeptMax and TriggersKeptMax bound the latest state entries the
// hub keeps: past them an arbitrary older account is forgotten (its
// snapshot then comes from Config), never the one just published.
func TestLatestStateBounds(t *testing.T) {
	h := New(Config{})
	tk := newTick(1000).t
	for i := range PositionsKeptMax + 1 {
		a := clob.Address{0: byte(i >> 16), 1: byte(i >> 8), 2: byte(i)}
		tk.Positions = append(tk.Positions, tickrec.AccountPositions{Account: a})
		tk.Triggers = append(tk.Triggers, tickrec.AccountTriggers{Account: a})
	}
	if err := h.PublishTick(tk); err != nil {
		t.Fatal(err)
	}
	last := tk.Positions[PositionsKeptMax].Account
	if len(h.latestPos) != PositionsKeptMax || h.latestPos[last] == nil {
		t.Fatalf("%d positions kept (last kept %v), want %d", len(h.latestPos), h.latestPos[last] != nil, PositionsKeptMax)
	}
	if len(h.latestTrig) != TriggersKeptMax || h.latestTrig[last] == nil {
		t.Fatalf("%d triggers kept (last kept %v), want %d", len(h.latestTrig), h.latestTrig[last] != nil, TriggersKeptMax)
	}
}

// The orders channels on a perp book: svc_orders_v2 fills carry pa (the
// position after) and the liquidation and trigger events appear with
// their own kinds; svc_orders fills carry position_before/after, and its
// closed union leaves the perp-only events out.
func TestOrdersPerpEvents(t *testing.T) {
	h := New(Config{})
	c := &fakeConn{}
	v2 := subscribe(t, h, c, "svc_orders_v2", ``)
	v1 := subscribe(t, h, c, "svc_orders", ``)
	h.PublishTick(perpTestTick(1_000_000, addr(7), 1950))
	h.Pump()
	got := rawResults(t, c, v2)
	want := `{"book":"` + hexHash(perpBook) + `","batch":1000000,"accts":["` + hexAddr(addr(7)) + `","` + hexAddr(addr(0x44)) + `"],"orders":[],"events":[` +
		`{"k":"fill","id":"` + hexHash(orderID(1)) + `","a":0,"b":"1000000000000000000","q":"2000000000000000000000","tb":"0","tq":"0","tf":"0","pa":"3000000000000000000"},` +
		`{"k":"liquidation","id":"` + hexHash(orderID(2)) + `","a":1,"sz":"2000000000000000000","px":"1950000000000000000000"},` +
		`{"k":"trigger_fired","id":"` + hexHash(orderID(3)) + `","a":0,"px":"1950000000000000000000"},` +
		`{"k":"trigger_cancel","id":"` + hexHash(orderID(4)) + `","a":0}]}`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("v2\n got %v\nwant %s", got, want)
	}
	v1s := rawResults(t, c, v1)
	var arr []map[string]any
	if len(v1s) != 1 || json.Unmarshal([]byte(v1s[0]), &arr) != nil {
		t.Fatalf("v1 %v", v1s)
	}
	if len(arr) != 1 || arr[0]["type"] != "fill" || arr[0]["position_before"] != "2000000000000000000" ||
		arr[0]["position_after"] != "3000000000000000000" {
		t.Fatalf("v1 %v", arr)
	}
}
