//go:build unix

package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ledgervenue/node/net/node"
)

// ordersByID reads account's orders through ob_getOrders with query,
// keyed by id.
func ordersByID(t *testing.T, tn *testNode, account common.Address, query map[string]any) map[common.Hash]obOrder {
	t.Helper()
	orders, _ := getOrders(t, tn, account, query)
	m := make(map[common.Hash]obOrder, len(orders))
	for _, o := range orders {
		m[o.id()] = o
	}
	return m
}

// hexAmount reads an ob_getOrders hex quantity.
func (o obOrder) hexAmount(k string) *big.Int { return hexutil.MustDecodeBig(o.str(k)) }

// rawOf renders a decoded object for a failure message.
func rawOf(m map[string]json.RawMessage) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// eventsOf returns the events of one svc_orders_v2 frame as k plus the
// raw fields, and checks the frame is the book's.
func eventsOf(t *testing.T, raw json.RawMessage, book common.Hash) (framesV2, []string) {
	t.Helper()
	var f framesV2
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if f.Book != book || f.Accts != nil {
		t.Fatalf("frame of book %s with accts %v, want book %s for a single account: %s", f.Book, f.Accts, book, raw)
	}
	ks := make([]string, len(f.Events))
	for i, e := range f.Events {
		_ = json.Unmarshal(e["k"], &ks[i])
	}
	return f, ks
}

// TestSelfTradeOverTheWire: one account's buy and crossing sell, sent with
// eth_sendRawTransaction, match each other in the tick as any two orders do
// (the live network has no self-trade prevention, docs/auction.md): both
// are filled at the price, ob_getOrders says "filled", a svc_orders_v2
// subscriber for the account gets both fills with st "filled", and the
// account's WETH is unchanged while its cash lost only the two taker fees
// and the gas. Then the statuses the engine sets on its own: a post-only
// sell that would trade with the account's own resting bid is refused —
// ob_getOrders "post_only_refused", svc_orders_v2 a cancel carrying st
// "post_only_refused" and the totals, svc_orders "canceled".
func TestSelfTradeOverTheWire(t *testing.T) {
	tn := startNode(t)
	alice := tn.sender(t, 0)
	ws := tn.dialWS(t)
	v2, sub2 := tn.ethSubscribe(t, ws, "svc_orders_v2", map[string]any{"account": alice.addr()})
	v1, sub1 := tn.ethSubscribe(t, ws, "svc_orders", map[string]any{"bidder": alice.addr()})
	cash0 := callView(t, tn, "balanceOf", native, alice.addr())
	weth0 := callView(t, tn, "balanceOf", weth, alice.addr())

	buyNonce := alice.nonce
	buy := alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(3000), 0, 0, 0))
	sell := alice.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(3000), 0, 0, 0))
	buyID, sellID := orderID(alice.addr(), buyNonce, 0), orderID(alice.addr(), buyNonce+1, 0)
	tn.tick(t)

	// Both entered in this tick: both takers, 0.03 % of 3000 each.
	fee := new(big.Int).Div(new(big.Int).Mul(eth(3000), big.NewInt(3)), big.NewInt(10_000))
	wantCash := new(big.Int).Sub(cash0, new(big.Int).Add(new(big.Int).Mul(fee, big.NewInt(2)), new(big.Int).Add(gasCost(buy), gasCost(sell))))
	if c := callView(t, tn, "balanceOf", native, alice.addr()); c.Cmp(wantCash) != 0 {
		t.Fatalf("cash %v, want %v: only the two fees and the gas may go", c, wantCash)
	}
	if w := callView(t, tn, "balanceOf", weth, alice.addr()); w.Cmp(weth0) != 0 {
		t.Fatalf("WETH %v, want %v unchanged", w, weth0)
	}
	if w := callView(t, tn, "withdrawableBalance", native, alice.addr()); w.Cmp(wantCash) != 0 {
		t.Fatalf("withdrawable %v, want all the cash %v: nothing rests", w, wantCash)
	}
	orders := ordersByID(t, tn, alice.addr(), map[string]any{"orderbook_id": wethBook})
	for _, id := range []common.Hash{buyID, sellID} {
		o, ok := orders[id]
		if !ok || o.str("status") != "filled" || o.hexAmount("filled_base_amount").Cmp(e18) != 0 || o.hexAmount("fee").Cmp(fee) != 0 {
			t.Fatalf("ob_getOrders %s: %+v %v, want filled 1 WETH with fee %v", id, o, ok, fee)
		}
	}

	f, ks := eventsOf(t, recv(t, v2, sub2), wethBook)
	if len(f.Orders) != 2 || len(ks) != 4 || ks[0] != "new" || ks[1] != "new" || ks[2] != "fill" || ks[3] != "fill" {
		t.Fatalf("svc_orders_v2 frame: %d orders, events %v", len(f.Orders), ks)
	}
	for i, want := range []string{"0", "1"} { // the buyer's fill (the buy is o 0), then the seller's
		e := f.Events[2+i]
		if string(e["o"]) != want || obOrder(e).str("st") != "filled" || obOrder(e).str("b") != e18.String() ||
			obOrder(e).str("q") != eth(3000).String() || obOrder(e).str("tf") != fee.String() || e["a"] != nil {
			t.Fatalf("fill event %d: %s", i, rawOf(e))
		}
	}
	if id := obOrder(f.Orders[0]).str("id"); common.HexToHash(id) != buyID {
		t.Fatalf("frame's first order %s, want the buy %s", id, buyID)
	}
	var ups []map[string]json.RawMessage
	if err := json.Unmarshal(recv(t, v1, sub1), &ups); err != nil {
		t.Fatal(err)
	}
	if len(ups) != 4 || obOrder(ups[2]).str("type") != "fill" || obOrder(ups[2]).str("status") != "filled" || obOrder(ups[3]).str("status") != "filled" {
		t.Fatalf("svc_orders: %d updates, the fills %s %s", len(ups), rawOf(ups[min(2, len(ups)-1)]), rawOf(ups[len(ups)-1]))
	}

	// The post-only refusal, against the account's own resting bid.
	bidNonce := alice.nonce
	alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2990), 0, 0, 0))
	tn.tick(t)
	recv(t, v2, sub2)
	recv(t, v1, sub1)
	poNonce := alice.nonce
	alice.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(2980), 0, 0, 0x04)) // POST_ONLY
	tn.tick(t)
	bidID, poID := orderID(alice.addr(), bidNonce, 0), orderID(alice.addr(), poNonce, 0)
	orders = ordersByID(t, tn, alice.addr(), map[string]any{"status": "post_only_refused"})
	if o, ok := orders[poID]; len(orders) != 1 || !ok || o.str("status") != "post_only_refused" || o.hexAmount("filled_base_amount").Sign() != 0 {
		t.Fatalf("ob_getOrders status=post_only_refused: %+v", orders)
	}
	if o := ordersByID(t, tn, alice.addr(), map[string]any{})[bidID]; o.str("status") != "active" {
		t.Fatalf("the bid the post-only order would have hit: %+v, want active", o)
	}
	f, ks = eventsOf(t, recv(t, v2, sub2), wethBook)
	if len(f.Orders) != 1 || len(ks) != 2 || ks[0] != "new" || ks[1] != "cancel" {
		t.Fatalf("svc_orders_v2 frame of the refusal: %d orders, events %v", len(f.Orders), ks)
	}
	if e := f.Events[1]; string(e["o"]) != "0" || obOrder(e).str("st") != "post_only_refused" || obOrder(e).str("tb") != "0" ||
		obOrder(e).str("tq") != "0" || obOrder(e).str("tf") != "0" || e["why"] != nil {
		t.Fatalf("the refusal's event: %s", rawOf(e))
	}
	raw := recv(t, v1, sub1)
	ups = nil // a fresh slice: Unmarshal would merge into the maps it holds
	if err := json.Unmarshal(raw, &ups); err != nil {
		t.Fatal(err)
	}
	if len(ups) != 2 || obOrder(ups[0]).str("type") != "new" || obOrder(ups[1]).str("type") != "canceled" ||
		common.HexToHash(obOrder(ups[1]).str("order_id")) != poID || ups[1]["status"] != nil {
		t.Fatalf("svc_orders of the refusal: %s", raw)
	}
}

// TestReplaySelfTradeAndEngineRemovals: `ledgerd replay` of a session with
// a self-match, a post-only refusal and a liquidation that margin-cancels a
// resting order ends at the live node's state and writes the frames a live
// subscriber got, byte for byte.
func TestReplaySelfTradeAndEngineRemovals(t *testing.T) {
	var dir string
	tn := startNode(t, func(c *node.Config) { dir = c.DataDir })
	record, live := tn.recordReplayChannels(t)
	ticks := 0
	tick := func() {
		tn.tick(t)
		ticks++
		record()
	}
	book := tn.createMarket(t, perpMarket("L-PERP"))
	alice, long, short := tn.sender(t, 0), tn.sender(t, 1), tn.sender(t, 2)
	tn.cross(t, alice, alice, wethBook, eth(1), eth(3000))
	tn.cross(t, long, short, book, eth(50), eth(3000))
	tick()
	alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2990), 0, 0, 0))
	long.mustSend(t, tn.submit(t, book, eth(1), eth(1000), 0, 0, 0)) // the liquidation cancels it
	tick()
	alice.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(2980), 0, 0, 0x04)) // POST_ONLY: refused
	tick()
	tn.setOracle(t, book, eth(2860))
	for range 6 {
		tick()
	}
	for _, want := range []string{`"st":"post_only_refused"`, `{"k":"cancel","id":"` + strings.ToLower(orderID(long.addr(), 1, 0).Hex())} {
		if !strings.Contains(live.String(), want) {
			t.Fatalf("the live frames have no %s:\n%s", want, live.String())
		}
	}
	var liveState json.RawMessage
	if err := tn.admin.CallContext(context.Background(), &liveState, "admin_stateHash"); err != nil {
		t.Fatal(err)
	}
	tn.stop()
	var out, frames bytes.Buffer
	res, err := node.Replay(node.ReplayConfig{DataDir: dir, Out: &out, Frames: &frames})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if res.Ticks != uint64(ticks) || lines[len(lines)-1] != string(liveState) {
		t.Fatalf("replay: %d ticks (live %d), ends at %s, live state %s", res.Ticks, ticks, lines[len(lines)-1], liveState)
	}
	if !bytes.Equal(frames.Bytes(), live.Bytes()) {
		t.Fatalf("replayed frames differ from the live notifications:\nreplay:\n%s\nlive:\n%s", frames.String(), live.String())
	}
}
