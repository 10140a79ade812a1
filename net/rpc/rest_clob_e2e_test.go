//go:build unix

package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/rpc"
	"github.com/ledgervenue/node/net/server"
)

// The market-data REST reads (docs/rest.md) over plain HTTP against a
// node with real orders sent through eth_sendRawTransaction: every member
// the live network's SDK decodes (its wire.ts), with its type and unit,
// and the same values as the ob_ methods give for the same data.

// restObj GETs path (200) and decodes its JSON, numbers kept exact.
func restObj(t *testing.T, tn *testNode, path string) any {
	t.Helper()
	return decodeExact(t, restOK(t, tn, path))
}

func decodeExact(t *testing.T, body []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return v
}

// rpcObj calls an ob_ method and decodes its result as decodeExact does.
func rpcObj(t *testing.T, tn *testNode, method string, args ...any) any {
	t.Helper()
	return decodeExact(t, tn.rawCall(method, args...))
}

// field kinds of the wire.ts shapes.
type kind int

const (
	kDec     kind = iota // a decimal string, "-" first when negative
	kDecNull             // kDec or null
	kInt                 // a JSON integer
	kIntNull             // kInt or null
	kHex                 // a 0x string
	kHexNull             // kHex or null
	kStr
	kBool
	kArr
	kObj
	kObjNull
)

var decimalRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// checkShape checks that obj has every member of spec with its kind.
func checkShape(t *testing.T, where string, v any, spec map[string]kind) map[string]any {
	t.Helper()
	obj, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: not an object: %v", where, v)
	}
	for k, want := range spec {
		x, present := obj[k]
		if !present {
			t.Fatalf("%s: member %q missing in %v", where, k, obj)
		}
		if x == nil && (want == kDecNull || want == kIntNull || want == kHexNull || want == kObjNull) {
			continue
		}
		ok := false
		switch s, isStr := x.(string); want {
		case kDec, kDecNull:
			ok = isStr && decimalRE.MatchString(s)
		case kInt, kIntNull:
			n, isNum := x.(json.Number)
			_, err := strconv.ParseInt(string(n), 10, 64)
			ok = isNum && err == nil
		case kHex, kHexNull:
			ok = isStr && strings.HasPrefix(s, "0x")
		case kStr:
			ok = isStr
		case kBool:
			_, ok = x.(bool)
		case kArr:
			_, ok = x.([]any)
		case kObj, kObjNull:
			_, ok = x.(map[string]any)
		}
		if !ok {
			t.Fatalf("%s: member %q = %#v, want kind %d", where, k, x, want)
		}
	}
	return obj
}

// sameData reports how rest (a REST value) differs from rpc (the ob_
// method's value for the same data), or "": objects on the members both
// have, arrays element by element, and a hex quantity of rpc equal to a
// decimal string of rest.
func sameData(path string, rest, rpc any) string {
	switch r := rest.(type) {
	case map[string]any:
		o, ok := rpc.(map[string]any)
		if !ok {
			return path + ": object against " + fmt.Sprint(rpc)
		}
		for k, v := range r {
			if w, ok := o[k]; ok {
				if d := sameData(path+"."+k, v, w); d != "" {
					return d
				}
			}
		}
		return ""
	case []any:
		o, ok := rpc.([]any)
		if !ok || len(o) != len(r) {
			return fmt.Sprintf("%s: %d elements against %v", path, len(r), rpc)
		}
		for i := range r {
			if d := sameData(path+"["+strconv.Itoa(i)+"]", r[i], o[i]); d != "" {
				return d
			}
		}
		return ""
	case string:
		if s, ok := rpc.(string); ok && strings.HasPrefix(s, "0x") && decimalRE.MatchString(r) && len(s) <= 66 {
			a, _ := new(big.Int).SetString(r, 10)
			b, _ := new(big.Int).SetString(s[2:], 16)
			if a.Cmp(b) == 0 {
				return ""
			}
		}
	}
	if fmt.Sprint(rest) != fmt.Sprint(rpc) {
		return fmt.Sprintf("%s: REST %v, ob_ %v", path, rest, rpc)
	}
	return ""
}

func mustSame(t *testing.T, what string, rest, rpc any) {
	t.Helper()
	if d := sameData(what, rest, rpc); d != "" {
		t.Fatal(d)
	}
}

func num(t *testing.T, v any) int64 {
	t.Helper()
	n, err := strconv.ParseInt(string(v.(json.Number)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var (
	orderSpec = map[string]kind{
		"orderbook_id": kHex, "market_type": kStr, "kind": kStr, "order_id": kHex, "tx_hash": kHex, "bidder": kHex,
		"nonce": kInt, "order_type": kStr, "status": kStr, "price": kDec, "initial_size": kDec,
		"filled_base_amount": kDec, "filled_quote_amount": kDec, "fee": kDec, "deadline": kInt, "end": kIntNull,
		"included_batch": kIntNull, "effective_price": kDec, "fills": kArr, "side": kStr, "direction": kStr,
	}
	marketStaticSpec = map[string]kind{
		"id": kHex, "name": kStr, "base_token_address": kHex, "quote_token_address": kHex, "base_token_symbol": kStr,
		"quote_token_symbol": kStr, "base_token_name": kStr, "quote_token_name": kStr, "market_type": kStr,
		"auction_interval_us": kInt, "maker_fee": kDec, "taker_fee": kDec, "tick_precision": kDec, "lot_size": kDec,
		"max_leverage": kInt, "funding_window_us": kInt,
	}
	marketDynamicsSpec = map[string]kind{
		"orderbook_id": kHex, "last_clearing_price": kDec, "volume_24h": kDec, "high_24h": kDec, "low_24h": kDec,
		"price_change_24h": kInt, "oracle_price": kDecNull, "mark_price": kDecNull, "funding_rate": kDecNull,
		"funding_index": kDecNull, "funding_last_updated_us": kIntNull, "open_interest": kDecNull,
	}
	orderbookSpec = map[string]kind{
		"orderbook_id": kHex, "buys": kObj, "sells": kObj, "buys_count": kInt, "sells_count": kInt,
		"grouping_precision": kDec, "timestamp": kInt, "new_orders_count": kInt, "clearing_price": kDecNull,
		"oracle_price": kDecNull, "funding_rate": kDecNull, "funding_index": kDecNull, "funding_last_updated": kIntNull,
	}
	totalsSpec = map[string]kind{
		"positions": kArr, "total_unrealized_pnl": kDec, "total_realized_pnl": kDec, "perps_equity": kDec,
		"account_value": kDec, "cash": kDec, "withdrawable_cash": kDec,
	}
	perpPositionSpec = map[string]kind{
		"kind": kStr, "orderbook_id": kHex, "side": kStr, "size": kDec, "notional": kDec, "entry_price": kDec,
		"mark_price": kDec, "margin": kDec, "leverage": kDec, "funding_accrued": kDec, "entry_funding": kDec,
		"liquidation_price": kDec, "unrealized_pnl": kDec, "realized_pnl": kDec,
	}
	holdingSpec = map[string]kind{
		"orderbook_id": kHex, "base_symbol": kStr, "quote_symbol": kStr, "balance": kDec, "free_balance": kDec,
		"locked_balance": kDec, "cost_basis": kDecNull, "mark_price": kDecNull, "unrealized_pnl": kDecNull,
		"realized_pnl": kDecNull,
	}
	triggerSpec = map[string]kind{
		"orderbook_id": kHex, "order_id": kHex, "tx_hash": kHexNull, "bidder": kHex, "nonce": kInt, "size": kDec,
		"limit_price": kDec, "trigger_price": kDec, "trigger_type": kStr, "reduce_only": kBool, "ioc": kBool,
		"deadline": kInt, "end": kIntNull,
	}
)

// without is a copy of obj without the members keys.
func without(obj map[string]any, keys ...string) map[string]any {
	c := make(map[string]any, len(obj))
	for k, v := range obj {
		c[k] = v
	}
	for _, k := range keys {
		delete(c, k)
	}
	return c
}

// perpsOf is who's ob_getPositions answer with its perp positions only,
// what GET /v1/clob/positions lists (its spot holdings are the balances').
func perpsOf(t *testing.T, tn *testNode, who common.Address) map[string]any {
	t.Helper()
	p := rpcObj(t, tn, "ob_getPositions", who).(map[string]any)
	var perps []any
	for _, x := range p["positions"].([]any) {
		if x.(map[string]any)["kind"] == "perp" {
			perps = append(perps, x)
		}
	}
	c := without(p, "positions")
	c["positions"] = perps
	return c
}

// restCandles GETs the candles of book with query q.
func restCandles(t *testing.T, tn *testNode, book common.Hash, q string) map[string]any {
	t.Helper()
	c := checkShape(t, "candles", restObj(t, tn, "/v1/clob/candles/"+book.Hex()+"?"+q), map[string]kind{
		"candles": kArr, "resolution": kStr, "range": kObjNull, "solution_now_us": kInt,
	})
	for _, x := range c["candles"].([]any) {
		checkShape(t, "candle", x, map[string]kind{
			"timestamp": kInt, "open": kDec, "close": kDec, "high": kDec, "low": kDec, "volume": kDec, "quote_volume": kDecNull,
		})
	}
	return c
}

// TestRESTClobSpotE2E: spot orders crossed and resting on WETH/USD, then
// every spot read: status, markets and their stats, candles (the forming
// bucket withheld, from/to in seconds, newest first), the orderbook, the
// orders (a cursor walk to the end, until), the balances and the explorer
// view of an order's transaction, each against the ob_ method or eth_
// read of the same data, and HEAD on each.
func TestRESTClobSpotE2E(t *testing.T) {
	tn := startNode(t, withPerpMarket)
	seller, buyer := tn.sender(t, 1), tn.sender(t, 2)
	first := seller.mustSend(t, tn.submit(t, wethBook, eth(-2), eth(3000), 0, 0, 0))
	buyer.mustSend(t, tn.submit(t, wethBook, eth(1), eth(3000), 0, 0, 0))
	buyer.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2900), 0, 0, 0))
	tn.tick(t)
	t0 := tn.node.Clock().NowMicros() / 60_000_000 * 60_000_000 // the traded 1m bucket

	status := checkShape(t, "status", restObj(t, tn, "/v1/clob/status"), map[string]kind{"solution_now": kInt})
	if now := num(t, status["solution_now"]); now != tn.node.LastTickUs() || now < t0 {
		t.Fatalf("solution_now %d, want the last tick %d", now, tn.node.LastTickUs())
	}

	// Markets: the static half of ob_getMarkets, perp spelt "perp".
	markets := restObj(t, tn, "/v1/clob/markets").([]any)
	obMarkets := rpcObj(t, tn, "ob_getMarkets").([]any)
	if len(markets) != len(obMarkets) || len(markets) < 3 {
		t.Fatalf("%d markets, ob_getMarkets %d", len(markets), len(obMarkets))
	}
	for i := range markets {
		m := checkShape(t, "market", markets[i], marketStaticSpec)
		o := obMarkets[i].(map[string]any)
		mustSame(t, "market", without(m, "market_type"), o)
		wantType, window := "spot", int64(0)
		if o["market_type"] == "perpetual" {
			wantType, window = "perp", int64(clob.FundingWindowUs)
		}
		if m["market_type"] != wantType || num(t, m["funding_window_us"]) != window ||
			num(t, m["auction_interval_us"]) != num(t, o["auction_interval"]) {
			t.Fatalf("market %v against %v", m, o)
		}
	}
	stats := checkShape(t, "stats", restObj(t, tn, "/v1/clob/markets/stats"), map[string]kind{"solution_now": kInt, "markets": kArr})
	if num(t, stats["solution_now"]) != num(t, status["solution_now"]) {
		t.Fatalf("stats solution_now %v, status %v", stats["solution_now"], status["solution_now"])
	}
	for i, x := range stats["markets"].([]any) {
		m := checkShape(t, "stats market", x, marketDynamicsSpec)
		o := obMarkets[i].(map[string]any)
		mustSame(t, "stats", m, o)
		if o["market_type"] == "perpetual" && (m["mark_price"] == nil || m["funding_rate"] == nil) {
			t.Fatalf("perp stats without perp members: %v", m)
		}
		if m["orderbook_id"] == strings.ToLower(wethBook.Hex()) && (m["last_clearing_price"] != eth(3000).String() || m["volume_24h"] != eth(1).String()) {
			t.Fatalf("WETH/USD stats: %v", m)
		}
	}
	// to (seconds, exclusive): as of before the trade's 1m bucket, and after it.
	for to, want := range map[int64][2]string{t0 / 1_000_000: {"0", "0"}, t0/1_000_000 + 60: {eth(3000).String(), eth(1).String()}} {
		s := restObj(t, tn, fmt.Sprintf("/v1/clob/markets/stats?to=%d", to)).(map[string]any)
		for _, x := range s["markets"].([]any) {
			if m := x.(map[string]any); m["orderbook_id"] == strings.ToLower(wethBook.Hex()) && (m["last_clearing_price"] != want[0] || m["volume_24h"] != want[1]) {
				t.Fatalf("WETH/USD stats to %d: %v, want price %s volume %s", to, m, want[0], want[1])
			}
		}
	}

	// Candles: the bucket is still forming, so withheld; ob_getCandles has it.
	if c := restCandles(t, tn, wethBook, "resolution=1m"); len(c["candles"].([]any)) != 0 || c["range"] != nil {
		t.Fatalf("the forming 1m bucket was served: %v", c)
	}
	if err := tn.admin.CallContext(context.Background(), nil, "admin_advanceTime", 60_000_000); err != nil {
		t.Fatal(err)
	}
	tn.tick(t)
	sec := t0 / 1_000_000
	c := restCandles(t, tn, wethBook, "resolution=1m")
	bars := c["candles"].([]any)
	obBars := rpcObj(t, tn, "ob_getCandles", wethBook, map[string]any{"resolution": "1m", "from_ts": 0}).([]any)
	if len(bars) != 1 || len(obBars) != 1 || c["resolution"] != "1m" || num(t, c["solution_now_us"]) != tn.node.LastTickUs() {
		t.Fatalf("1m candles after the bucket closed: %v (ob_getCandles %v)", c, obBars)
	}
	mustSame(t, "candle", bars[0], obBars[0])
	bar := bars[0].(map[string]any)
	if num(t, bar["timestamp"]) != t0 || bar["open"] != eth(3000).String() || bar["volume"] != eth(1).String() {
		t.Fatalf("candle %v, want bucket %d at 3000, volume 1", bar, t0)
	}
	rng := c["range"].(map[string]any)
	if num(t, rng["from_us"]) != t0 || num(t, rng["to_us"]) != t0 {
		t.Fatalf("range %v", rng)
	}
	for q, want := range map[string]int{
		fmt.Sprintf("resolution=1m&from=%d&to=%d", sec, sec+60): 1, // [from, to) holds the bucket
		fmt.Sprintf("resolution=1m&from=%d&to=%d", sec, sec):    0, // to is exclusive
		fmt.Sprintf("resolution=1m&from=%d", sec+1):             0, // the bucket starts before from
		"resolution=1m&limit=1":                                 1,
		"resolution=5m":                                         0, // its bucket, to t0 + 5 min, is still forming
		"resolution=1d":                                         0,
	} {
		if got := len(restCandles(t, tn, wethBook, q)["candles"].([]any)); got != want {
			t.Fatalf("candles?%s: %d bars, want %d", q, got, want)
		}
	}

	// The orderbook: what ob_getOrderbook gives, amounts decimal.
	book := checkShape(t, "orderbook", restObj(t, tn, "/v1/clob/orderbook/"+wethBook.Hex()), orderbookSpec)
	mustSame(t, "orderbook", book, rpcObj(t, tn, "ob_getOrderbook", wethBook))
	buys, sells := book["buys"].(map[string]any), book["sells"].(map[string]any)
	if len(buys) != 1 || len(sells) != 1 || buys[eth(2900).String()].(map[string]any)["volume"] != eth(1).String() ||
		sells[eth(3000).String()].(map[string]any)["volume"] != eth(1).String() {
		t.Fatalf("levels: buys %v sells %v", buys, sells)
	}

	// Orders: three more, a second later, then a walk of one per page.
	for i := range 3 {
		seller.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(int64(3100+100*i)), 0, 0, 0))
	}
	tn.tick(t)
	ob := rpcObj(t, tn, "ob_getOrders", seller.addr(), map[string]any{"with_total": true, "with_fills": true}).(map[string]any)
	page := checkShape(t, "orders", restObj(t, tn, "/v1/clob/orders/"+seller.addr().Hex()), map[string]kind{
		"orders": kArr, "next_cursor": kObjNull, "total_count": kInt, "solution_now": kInt,
	})
	mustSame(t, "orders", page, ob)
	if num(t, page["total_count"]) != 4 || page["next_cursor"] != nil || num(t, page["solution_now"]) != tn.node.LastTickUs() {
		t.Fatalf("orders page %v", page)
	}
	orders := page["orders"].([]any)
	last := checkShape(t, "order", orders[3], orderSpec)
	if last["tx_hash"] != strings.ToLower(first.TxHash.Hex()) || last["status"] != "active" || last["initial_size"] != eth(-2).String() ||
		last["filled_base_amount"] != eth(1).String() || last["filled_quote_amount"] != eth(3000).String() ||
		last["side"] != "sell" || last["included_batch"] == nil || len(last["fills"].([]any)) != 1 || last["effective_price"] != eth(3000).String() {
		t.Fatalf("the partly filled sell: %v", last)
	}
	checkShape(t, "fill", last["fills"].([]any)[0], map[string]kind{"base_amount": kDec, "quote_amount": kDec, "timestamp": kInt, "price": kDec})
	var walked []any
	for cursor := ""; ; {
		q := url.Values{"limit": {"1"}}
		if cursor != "" {
			q.Set("cursor", cursor) // escaped as the SDK's URLSearchParams does: ':' is %3A
		}
		p := restObj(t, tn, "/v1/clob/orders/"+seller.addr().Hex()+"?"+q.Encode()).(map[string]any)
		if num(t, p["total_count"]) != 4 || len(p["orders"].([]any)) != 1 {
			t.Fatalf("page after %q: %v", cursor, p)
		}
		walked = append(walked, p["orders"].([]any)...)
		if p["next_cursor"] == nil {
			break
		}
		cursor = p["next_cursor"].(string)
	}
	mustSame(t, "walk", walked, orders)
	// until (seconds, exclusive): the first sell only, admitted in t0's second.
	if p := restObj(t, tn, fmt.Sprintf("/v1/clob/orders/%s?until=%d", seller.addr().Hex(), sec+1)).(map[string]any); len(p["orders"].([]any)) != 1 ||
		p["orders"].([]any)[0].(map[string]any)["tx_hash"] != strings.ToLower(first.TxHash.Hex()) || num(t, p["total_count"]) != 4 {
		t.Fatalf("orders until %d: %v", sec+1, p)
	}
	if p := restObj(t, tn, "/v1/clob/orders/"+seller.addr().Hex()+"?limit=100000").(map[string]any); len(p["orders"].([]any)) != 4 {
		t.Fatalf("a limit past the maximum is clamped: %v", p)
	}

	// Balances: the spot holdings and the cash of ob_getPositions; the
	// positions endpoint has no perp position to list.
	obPos := rpcObj(t, tn, "ob_getPositions", seller.addr()).(map[string]any)
	bal := checkShape(t, "balances", restObj(t, tn, "/v1/clob/balances/"+seller.addr().Hex()), map[string]kind{
		"balances": kArr, "cash": kDec, "withdrawable_cash": kDec, "net_deposits": kDecNull,
	})
	holdings := bal["balances"].([]any)
	if len(holdings) == 0 {
		t.Fatalf("no holdings: %v", bal)
	}
	for i, h := range holdings {
		checkShape(t, "holding", h, holdingSpec)
		mustSame(t, "holding", h, obPos["positions"].([]any)[i])
	}
	mustSame(t, "cash", bal["cash"], obPos["cash"])
	mustSame(t, "withdrawable", bal["withdrawable_cash"], obPos["withdrawable_cash"])
	pos := checkShape(t, "positions", restObj(t, tn, "/v1/clob/positions/"+seller.addr().Hex()), totalsSpec)
	if len(pos["positions"].([]any)) != 0 {
		t.Fatalf("spot holdings listed as positions: %v", pos)
	}
	mustSame(t, "totals", pos, map[string]any{"total_unrealized_pnl": obPos["total_unrealized_pnl"], "cash": obPos["cash"],
		"account_value": obPos["account_value"], "perps_equity": obPos["perps_equity"], "withdrawable_cash": obPos["withdrawable_cash"]})

	// The explorer view of the first sell's transaction: its members are
	// eth_getTransactionByHash's and eth_getTransactionReceipt's.
	tn.waitBlock(first.TxHash)
	tx := checkShape(t, "tx", restObj(t, tn, "/v1/tx/"+first.TxHash.Hex()), map[string]kind{
		"hash": kHex, "type": kHex, "nonce": kHex, "from": kHex, "to": kHexNull, "value": kHex, "gas": kHex, "gasUsed": kHex,
		"status": kHex, "input": kHex, "logs": kArr, "attestations": kArr, "committee_epoch": kInt, "chainId": kHex,
		"maxFeePerGas": kHex, "effectiveGasPrice": kHex, "blockNumber": kHex, "contractAddress": kHexNull,
	})
	ethTx := rpcObj(t, tn, "eth_getTransactionByHash", first.TxHash).(map[string]any)
	receipt := rpcObj(t, tn, "eth_getTransactionReceipt", first.TxHash).(map[string]any)
	for _, k := range []string{"hash", "type", "nonce", "from", "to", "value", "gas", "input", "chainId", "maxFeePerGas"} {
		mustSame(t, "tx."+k, tx[k], ethTx[k])
	}
	for _, k := range []string{"gasUsed", "status", "logs", "effectiveGasPrice", "blockNumber", "blockHash", "transactionIndex"} {
		mustSame(t, "tx."+k, tx[k], receipt[k])
	}
	meta := receipt["svc_metadata"].(map[string]any)
	if len(tx["attestations"].([]any)) == 0 || tx["status"] != "0x1" || len(tx["logs"].([]any)) == 0 {
		t.Fatalf("explorer view: %v", tx)
	}
	mustSame(t, "tx.attestations", tx["attestations"], meta["attestations"])
	mustSame(t, "tx.committee_epoch", tx["committee_epoch"], meta["committee_epoch"])
	checkShape(t, "attestation", tx["attestations"].([]any)[0], map[string]kind{
		"validator_address": kHex, "sequence_number": kInt, "batch_index": kInt, "timestamp": kInt, "signature": kHex,
	})

	// HEAD: GET's headers and length, no body.
	for _, p := range []string{
		"/v1/clob/status", "/v1/clob/markets", "/v1/clob/markets/stats", "/v1/clob/candles/" + wethBook.Hex() + "?resolution=1m",
		"/v1/clob/orderbook/" + wethBook.Hex(), "/v1/clob/orders/" + seller.addr().Hex(), "/v1/clob/positions/" + seller.addr().Hex(),
		"/v1/clob/balances/" + seller.addr().Hex(), "/v1/clob/triggers/" + seller.addr().Hex(),
		"/v1/clob/backstop-transfers/" + seller.addr().Hex(), "/v1/clob/leaderboard", "/v1/tx/" + first.TxHash.Hex(),
	} {
		get := restOK(t, tn, p)
		status, resp, body := restGet(t, tn, "HEAD", p)
		if status != 200 || len(body) != 0 || resp.ContentLength != int64(len(get)) {
			t.Fatalf("HEAD %s: %d, length %d, body %q; GET's length %d", p, status, resp.ContentLength, body, len(get))
		}
	}
}

// TestRESTClobPerpE2E: a long and a short on a perp market with triggers
// on the long: the positions, triggers (a cursor walk, the orderbook
// filter), leaderboard (best net PnL first, as ob_getRankedPositions) and,
// after the long is liquidated, its
// backstop transfer, each against the ob_ method's answer.
func TestRESTClobPerpE2E(t *testing.T) {
	tn := startNode(t)
	book := tn.createMarket(t, perpMarket("T-PERP"))
	long, short := tn.sender(t, 1), tn.sender(t, 2)
	tn.cross(t, long, short, book, eth(50), eth(3000))
	tn.tick(t)
	for _, tr := range []struct {
		typ   uint8
		price int64
	}{{abiTakeProfit, 3500}, {abiStopLoss, 2000}, {abiStopLoss, 1900}} {
		long.mustSend(t, tn.trigger(t, book, eth(-50), new(big.Int), eth(tr.price), tr.typ, abiGroupingAsset, true))
	}
	tn.setOracle(t, book, eth(3100))
	tn.tick(t)

	pos := checkShape(t, "positions", restObj(t, tn, "/v1/clob/positions/"+long.addr().Hex()), totalsSpec)
	mustSame(t, "positions", pos, perpsOf(t, tn, long.addr()))
	ps := pos["positions"].([]any)
	if len(ps) != 1 {
		t.Fatalf("positions %v", pos)
	}
	p := checkShape(t, "perp position", ps[0], perpPositionSpec)
	if p["kind"] != "perp" || p["side"] != "long" || p["size"] != eth(50).String() || p["unrealized_pnl"] != eth(5000).String() ||
		p["leverage"] != eth(20).String() || p["mark_price"] != eth(3100).String() || pos["total_unrealized_pnl"] != eth(5000).String() {
		t.Fatalf("the long at 3100: %v", p)
	}

	obTr := rpcObj(t, tn, "ob_getTriggers", long.addr()).(map[string]any)
	tr := checkShape(t, "triggers", restObj(t, tn, "/v1/clob/triggers/"+long.addr().Hex()), map[string]kind{
		"triggers": kArr, "total_count": kInt, "next_cursor": kObjNull,
	})
	mustSame(t, "triggers", tr, obTr)
	if num(t, tr["total_count"]) != 3 || len(tr["triggers"].([]any)) != 3 {
		t.Fatalf("triggers %v", tr)
	}
	for _, x := range tr["triggers"].([]any) {
		if g := checkShape(t, "trigger", x, triggerSpec); g["size"] != eth(-50).String() || g["reduce_only"] != true {
			t.Fatalf("trigger %v", g)
		}
	}
	var walked []any
	for cursor := ""; ; {
		q := url.Values{"limit": {"2"}, "orderbook": {book.Hex()}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		pg := restObj(t, tn, "/v1/clob/triggers/"+long.addr().Hex()+"?"+q.Encode()).(map[string]any)
		if num(t, pg["total_count"]) != 3 {
			t.Fatalf("triggers page %v", pg)
		}
		walked = append(walked, pg["triggers"].([]any)...)
		if pg["next_cursor"] == nil {
			break
		}
		cursor = pg["next_cursor"].(string)
	}
	mustSame(t, "trigger walk", walked, tr["triggers"])
	if pg := restObj(t, tn, "/v1/clob/triggers/"+long.addr().Hex()+"?orderbook="+wethBook.Hex()).(map[string]any); num(t, pg["total_count"]) != 0 {
		t.Fatalf("triggers of another book: %v", pg)
	}

	lb := checkShape(t, "leaderboard", restObj(t, tn, "/v1/clob/leaderboard?address="+short.addr().Hex()), map[string]kind{
		"ranked": kArr, "total": kInt, "queried": kObj,
	})
	ranked := lb["ranked"].([]any)
	if num(t, lb["total"]) != 2 || len(ranked) != 2 {
		t.Fatalf("leaderboard %v", lb)
	}
	for i, who := range []common.Address{long.addr(), short.addr()} { // +5000, then −5000
		r := checkShape(t, "ranked", ranked[i], map[string]kind{"account": kHex, "positions": kObj})
		if r["account"] != strings.ToLower(who.Hex()) {
			t.Fatalf("rank %d: %v, want %s", i, r["account"], who)
		}
		checkShape(t, "ranked positions", r["positions"], totalsSpec)
		mustSame(t, "ranked positions", r["positions"], perpsOf(t, tn, who))
	}
	if q := lb["queried"].(map[string]any); q["account"] != strings.ToLower(short.addr().Hex()) || num(t, q["rank"]) != 1 {
		t.Fatalf("queried %v", q)
	}
	if pg := restObj(t, tn, "/v1/clob/leaderboard?limit=1&offset=1").(map[string]any); len(pg["ranked"].([]any)) != 1 ||
		pg["ranked"].([]any)[0].(map[string]any)["account"] != strings.ToLower(short.addr().Hex()) || num(t, pg["total"]) != 2 {
		t.Fatalf("leaderboard page 2: %v", pg)
	}

	// The long is liquidated at 2860: one backstop transfer.
	if bs := restObj(t, tn, "/v1/clob/backstop-transfers/"+long.addr().Hex()).(map[string]any); num(t, bs["total_count"]) != 0 {
		t.Fatalf("backstop transfers before the liquidation: %v", bs)
	}
	tn.setOracle(t, book, eth(2860))
	tn.tick(t)
	bs := checkShape(t, "backstop", restObj(t, tn, "/v1/clob/backstop-transfers/"+long.addr().Hex()), map[string]kind{
		"backstop_transfers": kArr, "total_count": kInt, "solution_now": kInt,
	})
	obBs := rpcObj(t, tn, "ob_getBackstopTransfers", long.addr()).(map[string]any)
	rows, obRows := bs["backstop_transfers"].([]any), obBs["transfers"].([]any)
	if num(t, bs["total_count"]) != 1 || len(rows) != 1 || len(obRows) != 1 || num(t, bs["solution_now"]) != tn.node.LastTickUs() {
		t.Fatalf("backstop transfers %v (ob_ %v)", bs, obBs)
	}
	row := checkShape(t, "backstop transfer", rows[0], map[string]kind{
		"orderbook_id": kHex, "size": kDec, "cash": kDec, "mark_price": kDec, "equity": kDec, "timestamp_us": kInt,
	})
	mustSame(t, "backstop transfer", row, obRows[0])
	if row["mark_price"] != eth(2860).String() || num(t, row["timestamp_us"]) != num(t, obRows[0].(map[string]any)["timestamp"]) {
		t.Fatalf("backstop transfer %v", row)
	}
}

// TestRESTClobErrors: bad input is a 400 with the JSON error body, an
// unknown path a 404, another method a 405 (a POST's Allow: GET, HEAD).
func TestRESTClobErrors(t *testing.T) {
	tn := startNode(t)
	a := devAddr(1).Hex()
	unknown := common.Hash{1}.Hex()
	for _, c := range []struct {
		method, path string
		status       int
		msg          string
	}{
		{"GET", "/v1/clob/orders/0x1234", 400, "bad account"},
		{"GET", "/v1/clob/positions/" + a + "00", 400, "bad account"},
		{"GET", "/v1/clob/balances/xyz", 400, "bad account"},
		{"GET", "/v1/clob/backstop-transfers/0x", 400, "bad account"},
		{"GET", "/v1/clob/candles/" + unknown + "?resolution=1m", 400, "unknown market id"},
		{"GET", "/v1/clob/candles/0x12?resolution=1m", 400, "bad market id"},
		{"GET", "/v1/clob/candles/" + wethBook.Hex() + "?resolution=2m", 400, "bad resolution"},
		{"GET", "/v1/clob/candles/" + wethBook.Hex() + "?resolution=1W", 400, "bad resolution"},
		{"GET", "/v1/clob/candles/" + wethBook.Hex(), 400, "resolution is required"},
		{"GET", "/v1/clob/candles/" + wethBook.Hex() + "?resolution=1m&from=10&to=5", 400, "bad to"},
		{"GET", "/v1/clob/candles/" + wethBook.Hex() + "?resolution=1m&from=-1", 400, "bad from"},
		{"GET", "/v1/clob/candles/" + wethBook.Hex() + "?resolution=1m&to=9223372036855", 400, "bad to"},
		{"GET", "/v1/clob/candles/" + wethBook.Hex() + "?resolution=1m&limit=0", 400, "bad limit"},
		{"GET", "/v1/clob/candles/" + wethBook.Hex() + "?resolution=1m&depth=3", 400, `unknown query parameter "depth"`},
		{"GET", "/v1/clob/orderbook/" + unknown, 400, "unknown market id"},
		{"GET", "/v1/clob/orderbook/0xzz", 400, "bad market id"},
		{"GET", "/v1/clob/orders/" + a + "?cursor=12", 400, "bad cursor"},
		{"GET", "/v1/clob/orders/" + a + "?cursor=%zz", 400, "malformed query parameter"},
		{"GET", "/v1/clob/orders/" + a + "?until=x", 400, "bad until"},
		{"GET", "/v1/clob/orders/" + a + "?limit=-3", 400, "bad limit"},
		{"GET", "/v1/clob/orders/" + a + "?status=active", 400, `unknown query parameter "status"`},
		{"GET", "/v1/clob/orders/" + a + "?limit=1&limit=2", 400, "given twice"},
		{"GET", "/v1/clob/triggers/" + a + "?orderbook=" + unknown, 400, "unknown market id"},
		{"GET", "/v1/clob/triggers/" + a + "?cursor=0x12:0x34", 400, "bad cursor"},
		{"GET", "/v1/clob/leaderboard?offset=-1", 400, "bad offset"},
		{"GET", "/v1/clob/leaderboard?address=0x12", 400, "bad address"},
		{"GET", "/v1/clob/leaderboard?limit=0", 400, "bad limit"},
		{"GET", "/v1/clob/markets/stats?to=later", 400, "bad to"},
		{"GET", "/v1/clob/markets?x=1", 400, `unknown query parameter "x"`},
		{"GET", "/v1/clob/status?x", 400, "malformed query parameter"},
		{"GET", "/v1/tx/0x12", 400, "bad tx hash"},
		{"GET", "/v1/tx/" + unknown, 404, "transaction not found"},
		{"GET", "/v1/clob", 404, "not found"},
		{"GET", "/v1/clob/", 404, "not found"},
		{"GET", "/v1/clob/nope", 404, "not found"},
		{"GET", "/v1/clob/orders/", 404, "not found"},
		{"GET", "/v1/clob/orders/" + a + "/x", 404, "not found"},
		{"GET", "/v1/clob/markets/stats/x", 404, "not found"},
		{"GET", "/v1/tx", 404, "not found"},
		{"POST", "/v1/clob/status", 405, "method not allowed"},
		{"PUT", "/v1/clob/orders/" + a, 405, "method not allowed"},
		{"DELETE", "/v1/tx/" + unknown, 405, "method not allowed"},
	} {
		status, resp, body := restGet(t, tn, c.method, c.path)
		var e struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(body, &e); err != nil || status != c.status || !strings.Contains(e.Error, c.msg) {
			t.Fatalf("%s %s: %d %s, want %d with %q", c.method, c.path, status, body, c.status, c.msg)
		}
		// POST reaches the REST surface; the server refuses other methods itself.
		if c.method == "POST" && resp.Header.Get("Allow") != "GET, HEAD" {
			t.Fatalf("%s %s: Allow %q", c.method, c.path, resp.Header.Get("Allow"))
		}
	}
}

// TestRESTClobReadsLeaveTheLoop: on a node with one event loop, while a
// tick's downstream stage holds the market index, a REST read of it
// (orders) waits on a worker, not on the loop: a JSON-RPC read and a REST
// read of the published book are answered meanwhile, at once, and the
// orders read answers once the step is done, with the tick's outcome.
func TestRESTClobReadsLeaveTheLoop(t *testing.T) {
	var st stallTick
	tn := startNodeSrv(t, func(c *server.Config) { c.Multicore = false }, st.option())
	s := tn.sender(t, 0)
	order := s.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2000), 0, 0, 0)).TxHash
	ticked := st.stallIndex(t, tn)
	held := time.Now()
	type answer struct {
		body []byte
		at   time.Duration
	}
	done := make(chan answer, 1)
	go func() {
		_, _, body := restGet(t, tn, "GET", "/v1/clob/orders/"+s.addr().Hex())
		done <- answer{body, time.Since(held)}
	}()
	time.Sleep(50 * time.Millisecond) // the orders read reaches the loop first
	start := time.Now()
	if _, err := tn.eth.BalanceAt(context.Background(), s.addr(), nil); err != nil {
		t.Fatal(err)
	}
	restOK(t, tn, "/v1/clob/orderbook/"+wethBook.Hex())
	if d := time.Since(start); d > stallReadMax() {
		t.Fatalf("eth_getBalance and the orderbook answered in %v behind a REST index read, want ≤ %v", d, stallReadMax())
	}
	a := <-done
	if a.at < stallDuration/2 || !strings.Contains(string(a.body), `"tx_hash":"`+strings.ToLower(order.Hex())) ||
		!strings.Contains(string(a.body), `"status":"active"`) {
		t.Fatalf("orders answered %v into the hold: %s, want the order active after the step", a.at, a.body)
	}
	if err := <-ticked; err != nil {
		t.Fatal(err)
	}
}

// TestRESTClobQueueFull: REST reads deferred while a tick holds the index
// share the workers' queue: with two workers (one runs the held
// admin_advanceTime) and a queue of one, a third read is refused at once
// with 503 and the JSON error naming the bound, and the two others are
// answered after the step.
func TestRESTClobQueueFull(t *testing.T) {
	var st stallTick
	tn := startNodeWith(t, nodeSetup{rpc: func(c *rpc.Config) { c.Workers, c.QueueMax = 2, 1 }}, st.option())
	s := tn.sender(t, 0)
	s.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2000), 0, 0, 0))
	ticked := st.stallIndex(t, tn)
	done := make(chan int, 2)
	for range 2 {
		go func() {
			status, _, _ := restGet(t, tn, "GET", "/v1/clob/orders/"+s.addr().Hex())
			done <- status
		}()
		time.Sleep(100 * time.Millisecond) // the first is on the worker, the second queued
	}
	start := time.Now()
	status, _, body := restGet(t, tn, "GET", "/v1/clob/markets")
	if status != 503 || !strings.Contains(string(body), "too many requests with writes queued on this node (max 1)") ||
		time.Since(start) > stallReadMax() {
		t.Fatalf("a third deferred read: %d %s after %v, want 503 at once", status, body, time.Since(start))
	}
	for range 2 {
		if status := <-done; status != 200 {
			t.Fatalf("a deferred read answered %d", status)
		}
	}
	if err := <-ticked; err != nil {
		t.Fatal(err)
	}
}
