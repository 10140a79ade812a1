package rpc_test

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/gorilla/websocket"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/subs"
)

// dialWS opens a go-ethereum client on the node's WebSocket endpoint.
func (tn *testNode) dialWS(t *testing.T, opts ...gethrpc.ClientOption) *gethrpc.Client {
	t.Helper()
	c, err := gethrpc.DialOptions(context.Background(), tn.ws, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestWebSocketMethods: every JSON-RPC method works over WebSocket, writes
// and batches included, with go-ethereum's client.
func TestWebSocketMethods(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	c := tn.dialWS(t)
	eth := ethclient.NewClient(c)
	if id, err := eth.ChainID(ctx); err != nil || id.Uint64() != chainID {
		t.Fatalf("chain id over ws %v %v", id, err)
	}
	if b, err := eth.BalanceAt(ctx, devAddr(2), nil); err != nil || b.Cmp(node.DevBalanceWei.ToBig()) != 0 {
		t.Fatalf("balance over ws %v %v", b, err)
	}
	tx := dynTx(t, node.DevKey(2), chainID, 0, devAddr(3), big.NewInt(5), gwei, new(big.Int).Mul(gwei, big.NewInt(2)))
	if err := eth.SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if r := tn.waitReceipt(tx.Hash()); r.Status != 1 {
		t.Fatalf("receipt %+v", r)
	}
	raw, _ := dynTx(t, node.DevKey(2), chainID, 1, devAddr(3), big.NewInt(5), gwei, new(big.Int).Mul(gwei, big.NewInt(2))).MarshalBinary()
	var chain, sent string
	var bal hexutil.Big
	batch := []gethrpc.BatchElem{
		{Method: "eth_chainId", Result: &chain},
		{Method: "eth_getBalance", Args: []any{devAddr(4), "latest"}, Result: &bal},
		{Method: "eth_sendRawTransaction", Args: []any{hexutil.Encode(raw)}, Result: &sent},
		{Method: "no_such_method", Result: new(json.RawMessage)},
	}
	if err := c.BatchCallContext(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if chain != "0x50d" || bal.ToInt().Cmp(node.DevBalanceWei.ToBig()) != 0 || batch[2].Error != nil || sent == "" {
		t.Fatalf("batch over ws: %q %v %v %q", chain, bal.ToInt(), batch[2].Error, sent)
	}
	wantRPCError(t, batch[3].Error, -32601, "Method not found", nil)
	// Admin methods need the header on the upgrade request.
	if err := c.CallContext(ctx, nil, "admin_setBaseFee", "0x1"); err == nil {
		t.Fatal("admin call over ws without a token succeeded")
	}
	admin := tn.dialWS(t, gethrpc.WithHeader("Authorization", "Bearer "+testAdminToken))
	if err := admin.CallContext(ctx, nil, "admin_setBaseFee", "0x3b9aca00"); err != nil {
		t.Fatalf("admin over ws: %v", err)
	}
	// Over HTTP there are no subscriptions.
	err := tn.rpc.CallContext(ctx, new(string), "eth_subscribe", "newHeads")
	wantRPCError(t, err, -32601, "Method not found", nil)
}

// TestSubscriptionsFlow: svc_orderbook, newHeads (ethclient.SubscribeNewHead)
// and logs (SubscribeFilterLogs) deliver a tick in which two orders cross.
func TestSubscriptionsFlow(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	c := tn.dialWS(t)
	eth := ethclient.NewClient(c)
	books := make(chan json.RawMessage, 16)
	sub, err := c.EthSubscribe(ctx, books, "svc_orderbook", map[string]any{"orderbook_ids": []common.Hash{wethBook}, "depth": 5})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	heads := make(chan *types.Header, 16)
	hsub, err := eth.SubscribeNewHead(ctx, heads)
	if err != nil {
		t.Fatal(err)
	}
	defer hsub.Unsubscribe()
	logs := make(chan types.Log, 16)
	lsub, err := eth.SubscribeFilterLogs(ctx, ethereum.FilterQuery{Addresses: []common.Address{orderbookAddr},
		Topics: [][]common.Hash{{common.Hash(core.TopicSolutionExecuted)}}}, logs)
	if err != nil {
		t.Fatal(err)
	}
	defer lsub.Unsubscribe()

	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	alice.mustSend(t, tn.submit(t, wethBook, eth18(2), eth18(3000), 0, 0, 0))
	bob.mustSend(t, tn.submit(t, wethBook, eth18(-1), eth18(2990), 0, 0, 0))
	tn.tick(t)
	tickUs := tn.clock.NowMicros()

	var snap struct {
		Book  common.Hash  `json:"orderbook_id"`
		Price *hexutil.Big `json:"clearing_price"`
		Buys  map[string]struct {
			Volume *hexutil.Big `json:"volume"`
		} `json:"buys"`
	}
	select {
	case raw := <-books:
		if err := json.Unmarshal(raw, &snap); err != nil || snap.Book != wethBook || snap.Price.ToInt().Cmp(eth18(3000)) != 0 || len(snap.Buys) != 1 {
			t.Fatalf("svc_orderbook notification %s (%v)", raw, err)
		}
	case err := <-sub.Err():
		t.Fatal(err)
	case <-time.After(5 * time.Second):
		t.Fatal("no svc_orderbook notification")
	}
	select {
	case h := <-heads:
		if h.Number.Int64() != tickUs {
			t.Fatalf("newHeads number %v, want the tick %d", h.Number, tickUs)
		}
	case err := <-hsub.Err():
		t.Fatal(err)
	case <-time.After(5 * time.Second):
		t.Fatal("no newHeads notification")
	}
	select {
	case l := <-logs:
		if l.Topics[1] != wethBook {
			t.Fatalf("log %+v", l)
		}
	case err := <-lsub.Err():
		t.Fatal(err)
	case <-time.After(5 * time.Second):
		t.Fatal("no logs notification")
	}
}

func eth18(n int64) *big.Int { return eth(n) }

// wsRaw is a gorilla connection speaking raw JSON-RPC, to see close
// notifications that go-ethereum's client turns into errors.
type wsRaw struct {
	t    *testing.T
	conn *websocket.Conn
}

func (tn *testNode) dialRaw(t *testing.T) *wsRaw {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(tn.ws, http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &wsRaw{t: t, conn: conn}
}

func (w *wsRaw) call(id int, method string, params ...any) {
	w.t.Helper()
	if err := w.conn.WriteJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		w.t.Fatal(err)
	}
}

// next reads the next message as a generic object.
func (w *wsRaw) next() map[string]json.RawMessage {
	w.t.Helper()
	_ = w.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var m map[string]json.RawMessage
	if err := w.conn.ReadJSON(&m); err != nil {
		w.t.Fatalf("reading: %v", err)
	}
	return m
}

// subscribe sends eth_subscribe and returns the id; the answer must come
// before any notification.
func (w *wsRaw) subscribe(id int, params ...any) string {
	w.t.Helper()
	w.call(id, "eth_subscribe", params...)
	m := w.next()
	if _, isNote := m["method"]; isNote {
		w.t.Fatalf("a notification came before the subscribe answer: %s", m["params"])
	}
	var sid string
	if err := json.Unmarshal(m["result"], &sid); err != nil {
		w.t.Fatalf("subscribe answer %v: %s", err, m["error"])
	}
	return sid
}

type notification struct {
	Subscription string          `json:"subscription"`
	Result       json.RawMessage `json:"result"`
	Error        *struct {
		Code    int                        `json:"code"`
		Message string                     `json:"message"`
		Data    map[string]json.RawMessage `json:"data"`
	} `json:"error"`
}

func (w *wsRaw) notification() notification {
	w.t.Helper()
	m := w.next()
	var n notification
	if string(m["method"]) != `"eth_subscription"` || json.Unmarshal(m["params"], &n) != nil {
		w.t.Fatalf("not a notification: %v", m)
	}
	return n
}

// TestSubscriptionCatchUp: ticks that happened before a subscription with
// `since` are replayed exactly (strictly after since, no gap, no
// duplicate), then the live tick follows.
func TestSubscriptionCatchUp(t *testing.T) {
	tn := startNode(t)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	var ticks []int64
	trade := func(price int64) {
		alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(price), 0, 0, 0))
		bob.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(price), 0, 0, 0))
		tn.tick(t)
		ticks = append(ticks, tn.clock.NowMicros())
	}
	trade(2000)
	trade(2001)
	trade(2002)
	w := tn.dialRaw(t)
	w.subscribe(1, "svc_candles", map[string]any{"orderbook_ids": []common.Hash{wethBook}, "since": ticks[0]})
	want := func(price int64) {
		t.Helper()
		n := w.notification()
		var c struct {
			Price *hexutil.Big `json:"price"`
		}
		if err := json.Unmarshal(n.Result, &c); err != nil || c.Price.ToInt().Cmp(eth(price)) != 0 {
			t.Fatalf("candle %s, want price %d", n.Result, price)
		}
	}
	want(2001)
	want(2002)
	trade(2003)
	want(2003)
	// The answer of a bad subscription is -32602.
	w.call(2, "eth_subscribe", "svc_no_such_channel", map[string]any{})
	if m := w.next(); !strings.Contains(string(m["error"]), "-32602") {
		t.Fatalf("bad subscription type: %s", m["error"])
	}
	w.call(3, "eth_subscribe", "svc_positions", map[string]any{})
	if m := w.next(); !strings.Contains(string(m["error"]), "-32602") {
		t.Fatalf("svc_positions without account: %s", m["error"])
	}
}

// TestSubscriptionClosedOnShutdown: closing the hub sends -32021 with
// resume data on every open subscription, on a connection that stays
// open; an eth_unsubscribe afterwards is answered false.
func TestSubscriptionClosedOnShutdown(t *testing.T) {
	tn := startNode(t)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	w := tn.dialRaw(t)
	id := w.subscribe(1, "svc_orders_v2", map[string]any{"bidder": alice.addr()})
	alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2500), 0, 0, 0))
	bob.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(2500), 0, 0, 0))
	tn.tick(t)
	n := w.notification()
	var frame struct {
		Batch  int64             `json:"batch"`
		Orders []json.RawMessage `json:"orders"`
		Events []map[string]any  `json:"events"`
		Accts  []string          `json:"accts"`
	}
	if err := json.Unmarshal(n.Result, &frame); err != nil || n.Subscription != id || frame.Batch != tn.clock.NowMicros() ||
		len(frame.Orders) != 1 || len(frame.Events) == 0 || frame.Accts != nil {
		t.Fatalf("svc_orders_v2 frame %s (%v)", n.Result, err)
	}
	tn.hub.Close()
	n = w.notification()
	if n.Error == nil || n.Error.Code != -32021 || n.Error.Message != "node is shutting down" || n.Subscription != id ||
		string(n.Error.Data["resumable"]) != "true" || string(n.Error.Data["resume_since"]) == "" {
		t.Fatalf("close notification %+v", n.Error)
	}
	w.call(2, "eth_unsubscribe", id)
	if m := w.next(); string(m["result"]) != "false" {
		t.Fatalf("unsubscribe after a close: %v", m)
	}
}

// TestSubscriptionLaggedBehind: when the fan-out falls more than
// subs.LagTicksMax ticks behind the published ones, live subscriptions are
// closed with -32020 carrying how many ticks were dropped and where to
// resume; the connection stays usable and resuming replays what was missed.
func TestSubscriptionLaggedBehind(t *testing.T) {
	tn := startNodeWith(t, nodeSetup{pumpHub: true})
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	w := tn.dialRaw(t)
	id := w.subscribe(1, "svc_candles", map[string]any{"orderbook_ids": []common.Hash{wethBook}})
	tn.hub.Pump()
	var ticks []int64
	for i := range subs.LagTicksMax + 6 {
		buyer, seller := alice, bob
		if i%2 == 1 { // swap roles so that neither runs out of cash
			buyer, seller = bob, alice
		}
		buyer.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2000+int64(i)), 0, 0, 0))
		seller.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(2000+int64(i)), 0, 0, 0))
		tn.tick(t)
		ticks = append(ticks, tn.clock.NowMicros())
	}
	tn.hub.Pump() // the fan-out wakes up far behind
	n := w.notification()
	if n.Error == nil || n.Error.Code != -32020 || n.Error.Message != "subscription lagged behind the tick broadcast" || n.Subscription != id {
		t.Fatalf("want a -32020 close, got %+v / %s", n.Error, n.Result)
	}
	var missed int
	if err := json.Unmarshal(n.Error.Data["missed"], &missed); err != nil || missed < 1 || string(n.Error.Data["resumable"]) != "true" {
		t.Fatalf("close data %v", n.Error.Data)
	}
	// Resuming replays every tick after resume_since (or all, when the
	// subscription was square on nothing).
	since := int64(0)
	if raw, ok := n.Error.Data["resume_since"]; ok {
		if err := json.Unmarshal(raw, &since); err != nil {
			t.Fatal(err)
		}
	}
	w.subscribe(2, "svc_candles", map[string]any{"orderbook_ids": []common.Hash{wethBook}, "since": since})
	tn.hub.Pump()
	want := 0
	for _, tk := range ticks {
		if tk > since {
			want++
		}
	}
	for range want {
		if got := w.notification(); got.Error != nil {
			t.Fatalf("replay after the lag: %+v", got.Error)
		}
	}
}
