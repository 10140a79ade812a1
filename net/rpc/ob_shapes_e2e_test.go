//go:build unix

package rpc_test

import (
	"context"
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// obOrder is an ob_getOrders order (or svc_orders "new" update) read as
// raw members, so that an absent member is told apart from a false one.
type obOrder map[string]json.RawMessage

func (o obOrder) str(k string) string {
	var s string
	_ = json.Unmarshal(o[k], &s)
	return s
}

func (o obOrder) id() common.Hash { return common.HexToHash(o.str("order_id")) }

func getOrders(t *testing.T, tn *testNode, owner common.Address, q map[string]any) (orders []obOrder, next *string) {
	t.Helper()
	var page struct {
		Orders []obOrder `json:"orders"`
		Next   *string   `json:"next_cursor"`
	}
	if err := tn.rpc.CallContext(context.Background(), &page, "ob_getOrders", owner, q); err != nil {
		t.Fatalf("ob_getOrders %v: %v (%v)", q, err, errorData(err))
	}
	return page.Orders, page.Next
}

var zeroHash = "0x" + strings.Repeat("00", 32)

// TestObOrdersShapesE2E: the live openapi's Order over the wire, for the
// order a fired trigger became and for plain spot and perp orders.
//   - tx_hash is zero for the fired trigger's order ("Zero for
//     engine-generated orders (liquidations, fired-trigger synthetics)"),
//     in ob_getOrders, svc_orders' "new" and svc_orders_v2's tx;
//   - its grouping is "asset" (TriggerGrouping; omitted when "none") there
//     too, its trigger_type "take_profit";
//   - reduce_only and ioc are present on every perp order (false
//     included) and absent on spot ones; post_only only when true.
func TestObOrdersShapesE2E(t *testing.T) {
	tn := startNode(t, withPerpMarket)
	ws := tn.dialWS(t)
	var v1, v2 frameLog
	ch1, sub1 := tn.ethSubscribe(t, ws, "svc_orders", map[string]any{"orderbook_ids": []common.Hash{perpBook}})
	v1.collect(ch1, sub1.Err())
	ch2, sub2 := tn.ethSubscribe(t, ws, "svc_orders_v2", map[string]any{"orderbook_ids": []common.Hash{perpBook}})
	v2.collect(ch2, sub2.Err())

	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	plainPerp := orderID(alice.addr(), alice.nonce, 0)
	tn.cross(t, alice, bob, perpBook, eth(10), eth(100))
	spotID := orderID(alice.addr(), alice.nonce, 0)
	alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1000), 0, 0, 0x04)) // post-only: rests
	tn.tick(t)
	trigNonce := alice.nonce
	trig := alice.mustSend(t, packTrigger(t, "submitTrigger", perpBook, eth(-4), new(big.Int), eth(105), abiTakeProfit, abiGroupingAsset,
		tn.nextDeadline(), new(big.Int), true, false))
	fired := orderID(alice.addr(), trigNonce, 0)
	bob.mustSend(t, tn.submit(t, perpBook, eth(5), eth(106), 0, 0, 0)) // rests: the fired order's counterparty
	tn.tick(t)
	tn.setOracle(t, perpBook, eth(107))
	for range 3 {
		tn.tick(t)
	}

	orders, _ := getOrders(t, tn, alice.addr(), map[string]any{})
	byID := map[common.Hash]obOrder{}
	for _, o := range orders {
		byID[o.id()] = o
	}
	f, ok := byID[fired]
	if !ok {
		t.Fatalf("the fired trigger's order is not listed: %v", orders)
	}
	if f.str("kind") != "triggered" || f.str("tx_hash") != zeroHash || f.str("grouping") != "asset" || f.str("trigger_type") != "take_profit" ||
		string(f["reduce_only"]) != "true" || string(f["ioc"]) != "true" { // a market trigger's order is IOC (the engine's terms)
		t.Fatalf("fired order (trigger tx %s): kind %s tx_hash %s grouping %s trigger_type %s reduce_only %s ioc %s", trig.TxHash,
			f.str("kind"), f.str("tx_hash"), f["grouping"], f.str("trigger_type"), f["reduce_only"], f["ioc"])
	}
	p := byID[plainPerp]
	if p == nil || p.str("kind") != "user_signed" || p.str("tx_hash") == zeroHash || string(p["reduce_only"]) != "false" ||
		string(p["ioc"]) != "false" || p["post_only"] != nil || p["grouping"] != nil || p["trigger_type"] != nil {
		t.Fatalf("plain perp order: %v", p)
	}
	s := byID[spotID]
	if s == nil || s.str("market_type") != "spot" || s["reduce_only"] != nil || s["ioc"] != nil || string(s["post_only"]) != "true" {
		t.Fatalf("spot post-only order: %v", s)
	}

	// svc_orders: the fired order's "new" is the same Order.
	var news []obOrder
	for _, raw := range v1.waitQuiet(300 * time.Millisecond) {
		var ups []obOrder
		if err := json.Unmarshal(raw, &ups); err != nil {
			t.Fatal(err)
		}
		for _, u := range ups {
			if u.str("type") == "new" && u.id() == fired {
				news = append(news, u)
			}
		}
	}
	if len(news) != 1 || news[0].str("tx_hash") != zeroHash || news[0].str("grouping") != "asset" || news[0].str("kind") != "triggered" ||
		string(news[0]["reduce_only"]) != "true" {
		t.Fatalf("svc_orders new of the fired order: %v", news)
	}
	// svc_orders_v2: its entity's tx is zero, its grouping "asset".
	var entities []map[string]json.RawMessage
	for _, raw := range v2.waitQuiet(300 * time.Millisecond) {
		var fr framesV2
		if err := json.Unmarshal(raw, &fr); err != nil {
			t.Fatal(err)
		}
		for _, o := range fr.Orders {
			if common.HexToHash(obOrder(o).str("id")) == fired {
				entities = append(entities, o)
			}
		}
	}
	if len(entities) != 1 || obOrder(entities[0]).str("tx") != zeroHash || obOrder(entities[0]).str("grouping") != "asset" ||
		obOrder(entities[0]).str("trigger") != "take_profit" {
		t.Fatalf("svc_orders_v2 entity of the fired order: %v", entities)
	}
}

// TestObOrdersBookListE2E: the live guide's ob_getOrders [address,
// {clob_ids: [orderbookId]}] lists that book's orders only (before, the
// unknown member was ignored and every book's orders came back), pages
// correctly under the filter, takes the alias orderbook_ids, and any
// member the query does not take is refused with -32602 naming it.
func TestObOrdersBookListE2E(t *testing.T) {
	tn := startNode(t, withPerpMarket)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	for i := range 3 {
		tn.cross(t, alice, bob, wethBook, eth(1), eth(int64(1000+i)))
		tn.cross(t, alice, bob, perpBook, eth(1), eth(int64(100+i)))
	}
	tn.tick(t)
	all, _ := getOrders(t, tn, alice.addr(), map[string]any{})
	if len(all) != 6 {
		t.Fatalf("%d orders, want 6", len(all))
	}
	only := func(q map[string]any, book common.Hash, n int) {
		t.Helper()
		orders, _ := getOrders(t, tn, alice.addr(), q)
		for _, o := range orders {
			if common.HexToHash(o.str("orderbook_id")) != book {
				t.Fatalf("%v lists an order of %s", q, o.str("orderbook_id"))
			}
		}
		if len(orders) != n {
			t.Fatalf("%v: %d orders, want %d", q, len(orders), n)
		}
	}
	only(map[string]any{"clob_ids": []common.Hash{wethBook}}, wethBook, 3)
	only(map[string]any{"orderbook_ids": []common.Hash{perpBook}}, perpBook, 3)
	both, _ := getOrders(t, tn, alice.addr(), map[string]any{"clob_ids": []common.Hash{perpBook, wethBook}})
	if len(both) != 6 {
		t.Fatalf("both books: %d orders", len(both))
	}
	// Pages of one under the filter: each of the book's orders once, newest first.
	var paged []common.Hash
	q := map[string]any{"clob_ids": []common.Hash{perpBook}, "limit": 1}
	for {
		orders, next := getOrders(t, tn, alice.addr(), q)
		for _, o := range orders {
			if common.HexToHash(o.str("orderbook_id")) != perpBook {
				t.Fatalf("page lists an order of %s", o.str("orderbook_id"))
			}
			paged = append(paged, o.id())
		}
		if next == nil {
			break
		}
		q["cursor"] = *next
	}
	var want []common.Hash
	for _, o := range all {
		if common.HexToHash(o.str("orderbook_id")) == perpBook {
			want = append(want, o.id())
		}
	}
	if !reflect.DeepEqual(paged, want) {
		t.Fatalf("paged %v, want %v", paged, want)
	}

	refused := func(q map[string]any, data string) {
		t.Helper()
		var out json.RawMessage
		err := tn.rpc.CallContext(context.Background(), &out, "ob_getOrders", alice.addr(), q)
		wantRPCError(t, err, -32602, "Invalid params", data)
	}
	const takes = "; it takes orderbook_id, clob_ids, orderbook_ids, limit, cursor, status, with_total, with_fills"
	refused(map[string]any{"clob_id": wethBook}, `orders query: unknown member "clob_id"`+takes)
	refused(map[string]any{"bidder": bob.addr()}, `orders query: unknown member "bidder"`+takes)
	refused(map[string]any{"orderbook_id": wethBook, "clob_ids": []common.Hash{wethBook}},
		"orderbook_id and clob_ids (alias orderbook_ids) exclude each other: give one")
	refused(map[string]any{"clob_ids": []common.Hash{wethBook}, "orderbook_ids": []common.Hash{wethBook}},
		"clob_ids and orderbook_ids are aliases: give one")
	refused(map[string]any{"clob_ids": make([]common.Hash, 65)},
		"clob_ids: want an array of at most 64 orderbook ids, each 0x followed by 64 hex digits")
	// The other query objects refuse unknown members too.
	var out json.RawMessage
	err := tn.rpc.CallContext(context.Background(), &out, "ob_getCandles", wethBook, map[string]any{"resolution": "1m", "from_ts": 0, "interval": "1h"})
	wantRPCError(t, err, -32602, "Invalid params", `candles query: unknown member "interval"; it takes resolution, from_ts, to_ts, limit`)
	err = tn.rpc.CallContext(context.Background(), &out, "ob_getTriggers", alice.addr(), map[string]any{"clob_ids": []common.Hash{perpBook}})
	wantRPCError(t, err, -32602, "Invalid params", `triggers query: unknown member "clob_ids"; it takes orderbook_id, limit, cursor`)
	err = tn.rpc.CallContext(context.Background(), &out, "ob_getFills", alice.addr(), map[string]any{"account": alice.addr()})
	wantRPCError(t, err, -32602, "Invalid params", `fills query: unknown member "account"; it takes from_ts, to_ts, orderbook_id, limit, cursor`)
	err = tn.rpc.CallContext(context.Background(), &out, "ob_getBackstopTransfers", alice.addr(), map[string]any{"since": 1})
	wantRPCError(t, err, -32602, "Invalid params", `backstop transfers query: unknown member "since"; it takes orderbook_id, limit, cursor`)
}

// TestObCandlesPositionalE2E: the live guide's ob_getCandles [orderbookId,
// startTimestamp, endTimestamp, interval] answers exactly as the openapi's
// [orderbookId, {resolution, from_ts, to_ts}] (before, it was refused);
// interval is a resolution or its width in seconds, nothing else.
func TestObCandlesPositionalE2E(t *testing.T) {
	tn := startNode(t)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	for i := range 3 {
		tn.cross(t, alice, bob, wethBook, eth(1), eth(int64(1000+i)))
		tn.tick(t)
	}
	now := tn.node.Clock().NowMicros()
	from, to := now-3_600_000_000, now+60_000_000
	call := func(params ...any) (json.RawMessage, error) {
		var out json.RawMessage
		err := tn.rpc.CallContext(context.Background(), &out, "ob_getCandles", params...)
		return out, err
	}
	for _, res := range []struct {
		name    string
		seconds int
	}{{"1m", 60}, {"5m", 300}, {"15m", 900}, {"1h", 3600}, {"4h", 14400}, {"1d", 86400}} {
		want, err := call(wethBook, map[string]any{"resolution": res.name, "from_ts": from, "to_ts": to})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(want), `"close"`) {
			t.Fatalf("%s: no candle: %s", res.name, want)
		}
		for _, interval := range []any{res.name, res.seconds} {
			got, err := call(wethBook, from, to, interval)
			if err != nil || string(got) != string(want) {
				t.Fatalf("positional %v: %s %v, want %s", interval, got, err, want)
			}
		}
		// endTimestamp null: unbounded, as to_ts absent.
		open, err := call(wethBook, map[string]any{"resolution": res.name, "from_ts": from})
		if got, err2 := call(wethBook, from, nil, res.seconds); err != nil || err2 != nil || string(got) != string(open) {
			t.Fatalf("positional open-ended: %s %v %v", got, err, err2)
		}
	}
	const interval = "interval: want one of 1m, 5m, 15m, 1h, 4h, 1d, or its width in seconds: 60, 300, 900, 3600, 14400, 86400"
	for _, bad := range []any{"30m", 61, 60_000_000, "60", true} {
		_, err := call(wethBook, from, to, bad)
		wantRPCError(t, err, -32602, "Invalid params", interval)
	}
	_, err := call(wethBook, from, to)
	wantRPCError(t, err, -32602, "Invalid params", interval)
	_, err = call(wethBook, to, from, "1m")
	wantRPCError(t, err, -32602, "Invalid params", "endTimestamp: must not be before startTimestamp")
	_, err = call(wethBook, from, to, "1m", 10)
	wantRPCError(t, err, -32602, "Invalid params",
		"ob_getCandles: want [orderbook_id, query] or [orderbook_id, startTimestamp, endTimestamp, interval]")
	_, err = call(common.Hash{31: 0x99}, from, to, "1m")
	wantRPCError(t, err, -32602, "Invalid params", "unknown orderbook")
}
