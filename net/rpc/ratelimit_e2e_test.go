package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/gorilla/websocket"
	"github.com/ledgervenue/node/net/node"
)

// The rate-limit emulation over the wire (docs/lab.md, "Rate-limit
// emulation"): go-ethereum clients over HTTP and WebSocket, each dialing
// from its own loopback address (127.0.0.x) so that each has its own
// address budget and the test's own clients (127.0.0.1) stay apart.

// dialFrom returns a go-ethereum client of tn whose connections come from
// ip, over WebSocket or HTTP.
func dialFrom(t *testing.T, tn *testNode, ip string, ws bool, opts ...gethrpc.ClientOption) *gethrpc.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	var (
		c   *gethrpc.Client
		err error
	)
	if ws {
		c, err = gethrpc.DialOptions(context.Background(), tn.ws, append(opts, gethrpc.WithWebsocketDialer(websocket.Dialer{NetDialContext: d.DialContext}))...)
	} else {
		c, err = gethrpc.DialOptions(context.Background(), tn.url, append(opts, gethrpc.WithHTTPClient(&http.Client{Transport: &http.Transport{DialContext: d.DialContext}}))...)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// setRateLimits puts cfg in force through lab_setRateLimits and returns
// its answer.
func (tn *testNode) setRateLimits(t *testing.T, cfg any) json.RawMessage {
	t.Helper()
	var out json.RawMessage
	if err := tn.admin.CallContext(context.Background(), &out, "lab_setRateLimits", cfg); err != nil {
		t.Fatalf("lab_setRateLimits %v: %v", cfg, err)
	}
	return out
}

// rateRefusal is the data of a rate-limit refusal.
type rateRefusal struct {
	Limit        string  `json:"limit"`
	Key          string  `json:"key"`
	Weight       uint64  `json:"weight"`
	Budget       float64 `json:"budget"`
	Capacity     float64 `json:"capacity"`
	RefillPerS   float64 `json:"refill_per_s"`
	RetryAfterMs int64   `json:"retry_after_ms"`
}

// wantRateLimited asserts err is the documented refusal of limit and
// returns its data.
func wantRateLimited(t *testing.T, err error, limit string) rateRefusal {
	t.Helper()
	var re gethrpc.Error
	if !errors.As(err, &re) || re.ErrorCode() != -32005 || re.Error() != "rate limit exceeded: "+limit {
		t.Fatalf("want -32005 rate limit exceeded: %s, got %v", limit, err)
	}
	var de gethrpc.DataError
	if !errors.As(err, &de) {
		t.Fatalf("refusal without data: %v", err)
	}
	raw, _ := json.Marshal(de.ErrorData())
	var r rateRefusal
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("refusal data %s: %v", raw, err)
	}
	var fields map[string]any
	_ = json.Unmarshal(raw, &fields)
	if len(fields) != 7 || r.Limit != limit {
		t.Fatalf("refusal data %s: want the 7 documented fields, limit %q", raw, limit)
	}
	return r
}

// rateMetrics reads svc_metrics' rate_limits.
func (tn *testNode) rateMetrics(t *testing.T) (enabled bool, refused map[string]uint64) {
	t.Helper()
	var m struct {
		RateLimits struct {
			Enabled bool              `json:"enabled"`
			Refused map[string]uint64 `json:"refused"`
			Buckets map[string]int    `json:"buckets"`
		} `json:"rate_limits"`
	}
	if err := json.Unmarshal(tn.rawCall("svc_metrics"), &m); err != nil {
		t.Fatal(err)
	}
	return m.RateLimits.Enabled, m.RateLimits.Refused
}

// TestRateLimitRefusal: a client over its address budget gets exactly the
// documented error, over HTTP and over WebSocket, and the metric moves;
// another address is not affected.
func TestRateLimitRefusal(t *testing.T) {
	tn := startNode(t)
	// 5 units a minute: nothing refills noticeably during the test.
	tn.setRateLimits(t, "address=5/60s")
	ctx := context.Background()
	for i, c := range []struct {
		ip string
		ws bool
	}{{"127.0.0.2", false}, {"127.0.0.3", true}} {
		cl := dialFrom(t, tn, c.ip, c.ws)
		eth := ethclient.NewClient(cl)
		for range 5 {
			if _, err := eth.ChainID(ctx); err != nil {
				t.Fatalf("%s ws=%v: a call within the budget: %v", c.ip, c.ws, err)
			}
		}
		_, err := eth.ChainID(ctx)
		r := wantRateLimited(t, err, "address")
		if r.Key != c.ip || r.Weight != 1 || r.Budget != 0 || r.Capacity != 5 || r.RefillPerS != 5.0/60 ||
			r.RetryAfterMs <= 0 || r.RetryAfterMs > 12_000 {
			t.Fatalf("%s ws=%v: refusal %+v, want key %s weight 1 budget 0 capacity 5 refill 1/12 s, retry in (0, 12000] ms", c.ip, c.ws, r, c.ip)
		}
		// eth_getLogs weighs 10: beyond the capacity, it never passes.
		_, err = eth.FilterLogs(ctx, ethereum.FilterQuery{})
		if r := wantRateLimited(t, err, "address"); r.Weight != 10 || r.RetryAfterMs != -1 {
			t.Fatalf("eth_getLogs refusal %+v, want weight 10, retry_after_ms -1", r)
		}
		if enabled, refused := tn.rateMetrics(t); !enabled || refused["address"] != uint64(2*(i+1)) || refused["account"] != 0 {
			t.Fatalf("svc_metrics rate_limits after %d refusals: enabled %v refused %v", 2*(i+1), enabled, refused)
		}
	}
}

// TestRateLimitRefill: once retry_after_ms has passed, the refused call
// passes. The budget refills 2 units a second, so the wait is at most
// 500 ms; the test waits retry_after_ms + 50 ms (a slower machine only
// refills more).
func TestRateLimitRefill(t *testing.T) {
	tn := startNode(t)
	tn.setRateLimits(t, "address=2/1s")
	for _, ws := range []bool{false, true} {
		ip := map[bool]string{false: "127.0.0.4", true: "127.0.0.5"}[ws]
		eth := ethclient.NewClient(dialFrom(t, tn, ip, ws))
		ctx := context.Background()
		// Spend the budget: the third call is refused, a later one if the
		// machine is so slow that the budget refills meanwhile.
		var err error
		for i := 0; i < 20 && err == nil; i++ {
			_, err = eth.ChainID(ctx)
		}
		r := wantRateLimited(t, err, "address")
		if r.RetryAfterMs <= 0 || r.RetryAfterMs > 500 {
			t.Fatalf("ws=%v: retry_after_ms %d, want (0, 500]", ws, r.RetryAfterMs)
		}
		time.Sleep(time.Duration(r.RetryAfterMs+50) * time.Millisecond)
		if _, err := eth.ChainID(ctx); err != nil {
			t.Fatalf("ws=%v: after retry_after_ms %d + 50 ms: %v", ws, r.RetryAfterMs, err)
		}
	}
}

// TestRateLimitCancelsPass: an account whose budget is spent cannot place
// an order, but its cancels still pass, from the cancel reserve, until the
// reserve is spent too.
func TestRateLimitCancelsPass(t *testing.T) {
	tn := startNode(t)
	// A transaction with one orderbook call weighs 2: the account's budget
	// holds two orders, the reserve one cancel.
	tn.setRateLimits(t, "address=1000/60s,account=4/60s,cancel=2/60s")
	alice := tn.sender(t, 2)
	alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2000), 0, 0, 0))
	alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1990), 0, 0, 0))
	_, err := alice.send(t, tn.submit(t, wethBook, eth(1), eth(1980), 0, 0, 0))
	r := wantRateLimited(t, err, "account")
	if r.Key != strings.ToLower(alice.addr().Hex()) || r.Weight != 2 || r.Capacity != 4 {
		t.Fatalf("order refusal %+v, want key %s weight 2 capacity 4", r, strings.ToLower(alice.addr().Hex()))
	}
	alice.mustSend(t, pack(t, "cancel", wethBook, orderID(alice.addr(), 0, 0), tn.nextDeadline()))
	// The reserve is spent: a second cancel is refused, and so is an order.
	_, err = alice.send(t, pack(t, "cancel", wethBook, orderID(alice.addr(), 1, 0), tn.nextDeadline()))
	wantRateLimited(t, err, "account")
	_, err = alice.send(t, tn.submit(t, wethBook, eth(1), eth(1980), 0, 0, 0))
	wantRateLimited(t, err, "account")
	// The cancel took effect at the next tick: the first order is
	// canceled, the second rests.
	tn.tick(t)
	orders, _ := getOrders(t, tn, alice.addr(), map[string]any{"orderbook_id": wethBook})
	status := map[common.Hash]string{}
	for _, o := range orders {
		status[o.id()] = o.str("status")
	}
	if first, second := status[orderID(alice.addr(), 0, 0)], status[orderID(alice.addr(), 1, 0)]; first != "canceled" || second == "canceled" || second == "" {
		t.Fatalf("alice's orders after the tick: first %q, second %q; want canceled, and resting", first, second)
	}
	if _, refused := tn.rateMetrics(t); refused["account"] != 3 {
		t.Fatalf("account refusals %d, want 3", refused["account"])
	}
}

// TestRateLimitAddressAndAccount: two accounts from one address share the
// address budget; one account from two addresses (HTTP and WebSocket)
// shares its account budget.
func TestRateLimitAddressAndAccount(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	transfer := func(cl *gethrpc.Client, key int, nonce uint64) error {
		tx := dynTx(t, node.DevKey(key), chainID, nonce, devAddr(9), big.NewInt(1), gwei, new(big.Int).Mul(gwei, big.NewInt(3)))
		return ethclient.NewClient(cl).SendTransaction(ctx, tx)
	}
	tn.setRateLimits(t, "address=3/60s,account=100/60s")
	one := dialFrom(t, tn, "127.0.0.6", false)
	for _, s := range []struct{ key, nonce int }{{2, 0}, {2, 1}, {3, 0}} {
		if err := transfer(one, s.key, uint64(s.nonce)); err != nil {
			t.Fatalf("account %d nonce %d within the address budget: %v", s.key, s.nonce, err)
		}
	}
	if r := wantRateLimited(t, transfer(one, 3, 1), "address"); r.Key != "127.0.0.6" {
		t.Fatalf("refusal key %q, want 127.0.0.6", r.Key)
	}

	tn.setRateLimits(t, "address=100/60s,account=2/60s")
	httpC, wsC := dialFrom(t, tn, "127.0.0.7", false), dialFrom(t, tn, "127.0.0.8", true)
	if err := transfer(httpC, 4, 0); err != nil {
		t.Fatal(err)
	}
	if err := transfer(wsC, 4, 1); err != nil {
		t.Fatal(err)
	}
	r := wantRateLimited(t, transfer(wsC, 4, 2), "account")
	if want := strings.ToLower(devAddr(4).Hex()); r.Key != want || r.Budget != 0 {
		t.Fatalf("refusal %+v, want key %s budget 0", r, want)
	}
	// Its address budget was given back: the refused call charged nothing.
	if err := transfer(httpC, 5, 0); err != nil {
		t.Fatalf("another account from the same address: %v", err)
	}
}

// TestRateLimitBatch: a batch costs the sum of its calls, each checked in
// turn, and a refused call refuses only itself; the others are answered,
// on the event loop (reads) and on a worker (a batch with a transaction).
func TestRateLimitBatch(t *testing.T) {
	tn := startNode(t)
	tn.setRateLimits(t, "address=3/60s")
	for _, ws := range []bool{false, true} {
		ip := map[bool]string{false: "127.0.0.9", true: "127.0.0.10"}[ws]
		cl := dialFrom(t, tn, ip, ws)
		key := map[bool]int{false: 2, true: 3}[ws]
		raw, err := dynTx(t, node.DevKey(key), chainID, 0, devAddr(9), big.NewInt(1), gwei, new(big.Int).Mul(gwei, big.NewInt(3))).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var hash common.Hash
		var ids [3]string
		batch := []gethrpc.BatchElem{
			{Method: "eth_sendRawTransaction", Args: []any{hexutil.Bytes(raw)}, Result: &hash},
			{Method: "eth_chainId", Result: &ids[0]},
			{Method: "eth_chainId", Result: &ids[1]},
			{Method: "eth_chainId", Result: &ids[2]},
		}
		if err := cl.BatchCallContext(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		if batch[0].Error != nil || batch[1].Error != nil || batch[2].Error != nil || ids[0] != "0x50d" || hash == (common.Hash{}) {
			t.Fatalf("ws=%v: the calls within the budget: %v %v %v", ws, batch[0].Error, batch[1].Error, batch[2].Error)
		}
		if r := wantRateLimited(t, batch[3].Error, "address"); r.Key != ip {
			t.Fatalf("refusal key %q, want %s", r.Key, ip)
		}
	}
}

// TestRateLimitControls: lab_setRateLimits turns the limits on and off
// (the string and the object form), lab_rateLimits reports the
// configuration and a budget, bad configurations are refused naming the
// field, and the controls are never limited.
func TestRateLimitControls(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	var before json.RawMessage
	if err := tn.admin.CallContext(ctx, &before, "admin_stateHash"); err != nil {
		t.Fatal(err)
	}
	cfg := tn.setRateLimits(t, map[string]any{"address": map[string]any{"capacity": 2, "refill_per_s": 0.5},
		"weights": map[string]any{"eth_chainId": 2}})
	want := `{"address":{"capacity":2,"refill_per_s":0.5},"account":null,"cancel":{"capacity":20,"refill_per_s":2},"weights":{`
	if !strings.HasPrefix(string(cfg), want) || !strings.Contains(string(cfg), `"eth_chainId":2`) || !strings.Contains(string(cfg), `"eth_getLogs":10`) {
		t.Fatalf("lab_setRateLimits answered %s, want %s…", cfg, want)
	}
	eth := ethclient.NewClient(dialFrom(t, tn, "127.0.0.11", false))
	if _, err := eth.ChainID(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := eth.ChainID(ctx)
	if r := wantRateLimited(t, err, "address"); r.Weight != 2 {
		t.Fatalf("eth_chainId weighs %d, want the override 2", r.Weight)
	}
	var st struct {
		Enabled bool            `json:"enabled"`
		Config  json.RawMessage `json:"config"`
		Bucket  *struct {
			Limit  string  `json:"limit"`
			Key    string  `json:"key"`
			Live   bool    `json:"live"`
			Budget float64 `json:"budget"`
		} `json:"bucket"`
	}
	if err := tn.admin.CallContext(ctx, &st, "lab_rateLimits", "127.0.0.11"); err != nil {
		t.Fatal(err)
	}
	if !st.Enabled || string(st.Config) != string(cfg) || st.Bucket == nil || st.Bucket.Key != "127.0.0.11" || !st.Bucket.Live || st.Bucket.Budget >= 1 {
		t.Fatalf("lab_rateLimits: %+v %+v", st, st.Bucket)
	}
	// The controls are never limited, even from a spent address.
	adminFrom := dialFrom(t, tn, "127.0.0.11", false, gethrpc.WithHeader("Authorization", "Bearer "+testAdminToken))
	for _, m := range []string{"lab_rateLimits", "lab_rateLimits", "admin_stateHash", "admin_stateHash", "evm_snapshot"} {
		if err := adminFrom.CallContext(ctx, nil, m); err != nil {
			t.Fatalf("%s from a spent address: %v", m, err)
		}
	}
	for _, bad := range []struct {
		cfg  any
		want string
	}{
		{"address=1/1s,foo=1", "rate limits: foo: unknown key"},
		{"address=1/0s", "rate limits: address: want a PERIOD"},
		{"weight.eth_chainId=1", "rate limits: address, account: name at least one"},
		{"address=1/1s,weight.eth_getLog=3", "rate limits: weight.eth_getLog: not a method this node serves"},
		{map[string]any{"address": map[string]any{"capacity": -1, "refill_per_s": 1}}, "rate limits: address.capacity: want an integer"},
		{map[string]any{"address": map[string]any{"capacity": 1}}, "rate limits: address: want both capacity and refill_per_s"},
		{map[string]any{"acount": nil}, "rate limits: acount: unknown key"},
		{map[string]any{"address": map[string]any{"capacity": 1, "refill_per_s": 1}, "weights": map[string]any{"lab_rateLimits": 3}}, "rate limits: weights.lab_rateLimits: the lab_, admin_ and anvil controls are never limited"},
		{7, "rate limits: want the --rate-limit SPEC as a string, an object, or null"},
	} {
		err := tn.admin.CallContext(ctx, nil, "lab_setRateLimits", bad.cfg)
		if got, _ := errorData(err).(string); !strings.HasPrefix(got, bad.want) {
			t.Fatalf("lab_setRateLimits %v: %v (%q), want -32602 %q…", bad.cfg, err, got, bad.want)
		}
	}
	// Neither the configuration nor a refusal is in the ledger's state.
	var after json.RawMessage
	if err := tn.admin.CallContext(ctx, &after, "admin_stateHash"); err != nil || string(after) != string(before) {
		t.Fatalf("admin_stateHash %s after rate limits and a refusal, want %s (%v)", after, before, err)
	}
	// A live network's pod_ name weighs its svc_ method.
	if out := tn.setRateLimits(t, "address=5/60s,weight.pod_getTransactions=7"); !strings.Contains(string(out), `"svc_getTransactions":7`) {
		t.Fatalf("weight.pod_getTransactions: %s, want svc_getTransactions 7", out)
	}
	tn.setRateLimits(t, cfg)
	if _, err := eth.ChainID(ctx); err != nil {
		t.Fatalf("a new configuration keeps no bucket: %v", err)
	}
	// A refused configuration changed nothing: still limited.
	if _, err := eth.ChainID(ctx); err == nil {
		t.Fatal("a refused lab_setRateLimits turned the limits off")
	}
	for _, off := range []any{nil, map[string]any{}, "off"} {
		tn.setRateLimits(t, "address=1/60s")
		if out := tn.setRateLimits(t, off); string(out) != "null" {
			t.Fatalf("lab_setRateLimits %v answered %s, want null", off, out)
		}
		for range 3 {
			if _, err := eth.ChainID(ctx); err != nil {
				t.Fatalf("after lab_setRateLimits %v: %v", off, err)
			}
		}
		if enabled, _ := tn.rateMetrics(t); enabled {
			t.Fatalf("svc_metrics: enabled after lab_setRateLimits %v", off)
		}
	}
}
