package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/gorilla/websocket"
	"github.com/ledgervenue/node/core"

	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
)

// The JSON-RPC-level bounds (net/rpc doc, "Limits"), end to end.

// holdWrites makes the node's writer wait before each group commit until
// release (idempotent); entered gets one value per group commit that
// reached the writer. The test registers release as a cleanup after
// starting the node, so it runs first: the node cannot stop while writes
// wait.
func holdWrites() (opt nodeOption, entered <-chan struct{}, release func()) {
	gate, in := make(chan struct{}), make(chan struct{}, 1024)
	release = sync.OnceFunc(func() { close(gate) })
	opt = func(c *node.Config) {
		c.BeforeAppend = func() error {
			in <- struct{}{}
			<-gate
			return nil
		}
	}
	return opt, in, release
}

// wait receives from ch or fails the test after a while.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

type httpAnswer struct {
	status int
	body   string
	err    error
}

// postAsync posts body on a connection of its own and delivers the answer.
func postAsync(url, body string, admin bool) <-chan httpAnswer {
	ch := make(chan httpAnswer, 1)
	go func() {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if admin {
			req.Header.Set("Authorization", "Bearer "+testAdminToken)
		}
		// A client of its own: one connection per request, as distinct
		// clients would have.
		c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Do(req)
		if err != nil {
			ch <- httpAnswer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		ch <- httpAnswer{status: resp.StatusCode, body: string(b), err: err}
	}()
	return ch
}

func postNow(t *testing.T, url, body string) httpAnswer {
	t.Helper()
	a := wait(t, postAsync(url, body, false), "an answer")
	if a.err != nil {
		t.Fatal(a.err)
	}
	return a
}

// sendBody is eth_sendRawTransaction of a transfer from dev account i at
// nonce 0, alone or (batch) as a batch of one.
func sendBody(t *testing.T, id, i int, batch bool) string {
	raw := hexBytes(t, dynTx(t, node.DevKey(i), chainID, 0, devAddr(9), big.NewInt(1), gwei, new(big.Int).Mul(gwei, big.NewInt(2))))
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_sendRawTransaction","params":[%q]}`, id, raw)
	if batch {
		return "[" + body + "]"
	}
	return body
}

// TestFeeHistoryPercentilesBound: rewardPercentiles are at most 100, each
// in [0, 100] and non-decreasing (as go-ethereum), so one request can no
// longer ask for a response a thousand times its size.
func TestFeeHistoryPercentilesBound(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	pcts := make([]float64, rpc.RewardPercentilesMax)
	for i := range pcts {
		pcts[i] = float64(i)
	}
	pcts[1] = pcts[0] // equal neighbours are allowed
	h, err := tn.eth.FeeHistory(ctx, 4, nil, pcts)
	if err != nil || len(h.Reward) != 4 || len(h.Reward[0]) != rpc.RewardPercentilesMax {
		t.Fatalf("100 percentiles: %v", err)
	}
	for _, c := range []struct {
		pcts []float64
		data string
	}{
		{append(pcts, 100), "rewardPercentiles: too many percentiles (max 100)"},
		{[]float64{-1}, "rewardPercentiles: each must be in [0, 100]"},
		{[]float64{10, 100.5}, "rewardPercentiles: each must be in [0, 100]"},
		{[]float64{50, 10}, "rewardPercentiles: must be non-decreasing"},
	} {
		_, err := tn.eth.FeeHistory(ctx, 4, nil, c.pcts)
		wantRPCError(t, err, -32602, "Invalid params", c.data)
	}
	// The request: 120 KB asking for 1024 blocks × 20 000 rewards
	// (123 MB before the bound) gets a short error.
	body := `{"jsonrpc":"2.0","id":1,"method":"eth_feeHistory","params":["0x400","latest",[` +
		strings.TrimSuffix(strings.Repeat("50.0,", 20_000), ",") + `]]}`
	a := postNow(t, tn.url, body)
	if a.status != 200 || len(a.body) > 512 || !strings.Contains(a.body, `"code":-32602`) ||
		!strings.Contains(a.body, "too many percentiles (max 100)") {
		t.Fatalf("20 000 percentiles: status %d, %d bytes: %.300s", a.status, len(a.body), a.body)
	}
}

// TestGetLogsFilterBounds: eth_getLogs takes the logs subscription's
// filter bounds, with the same errors on both.
func TestGetLogsFilterBounds(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	addrs := make([]common.Address, 65)
	for i := range addrs {
		addrs[i] = common.BigToAddress(big.NewInt(int64(i + 1)))
	}
	alts := make([]common.Hash, 17)
	for i := range alts {
		alts[i] = common.BigToHash(big.NewInt(int64(i + 1)))
	}
	ws := ethclient.NewClient(tn.dialWS(t))
	for _, c := range []struct {
		q    ethereum.FilterQuery
		data string // "": accepted
	}{
		{ethereum.FilterQuery{Addresses: addrs[:64]}, ""},
		{ethereum.FilterQuery{Addresses: addrs}, "address: too many addresses (max 64)"},
		{ethereum.FilterQuery{Topics: [][]common.Hash{nil, nil, nil, alts[:16]}}, ""},
		{ethereum.FilterQuery{Topics: [][]common.Hash{nil, nil, nil, nil, nil}}, "topics: too many topic positions (max 4)"},
		{ethereum.FilterQuery{Topics: [][]common.Hash{alts}}, "topics: too many topic alternatives (max 16)"},
	} {
		_, err := tn.eth.FilterLogs(ctx, c.q)
		sub, serr := ws.SubscribeFilterLogs(ctx, c.q, make(chan types.Log, 1))
		if c.data == "" {
			if err != nil || serr != nil {
				t.Fatalf("%+v: eth_getLogs %v, subscribe %v", c.q, err, serr)
			}
			sub.Unsubscribe()
			continue
		}
		wantRPCError(t, err, -32602, "Invalid params", c.data)
		wantRPCError(t, serr, -32602, "Invalid params", c.data)
	}
}

// TestGetLogsScanBudget: the eth_getLogs calls of one batch share
// Config.LogScanMax, so a batch of many calls scans no more than one may:
// the call that would pass what is left gets -32602 saying so, and a lone
// call still gets the whole budget.
func TestGetLogsScanBudget(t *testing.T) {
	tn := startNodeWith(t, nodeSetup{rpc: func(c *rpc.Config) { c.LogScanMax = 5 }})
	ctx := context.Background()
	var last struct {
		TxHash common.Hash `json:"tx_hash"`
	}
	for i := range 3 { // three deposits: three logs
		deposit := map[string]any{"token": common.Address(core.NativeToken), "to": devAddr(i), "amount": "0x1"}
		if err := tn.admin.CallContext(ctx, &last, "admin_deposit", deposit); err != nil {
			t.Fatal(err)
		}
	}
	tn.waitReceipt(last.TxHash)
	all := map[string]any{"fromBlock": "earliest", "toBlock": "latest"}
	var batch []gethrpc.BatchElem
	for range 3 {
		batch = append(batch, gethrpc.BatchElem{Method: "eth_getLogs", Args: []any{all}, Result: new([]types.Log)})
	}
	if err := tn.rpc.BatchCallContext(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if batch[0].Error != nil || len(*batch[0].Result.(*[]types.Log)) != 3 {
		t.Fatalf("first call: %v", batch[0].Error)
	}
	for _, e := range batch[1:] {
		wantRPCError(t, e.Error, -32602, "Invalid params",
			"the eth_getLogs calls of this request looked at more than 5 logs in all: narrow their ranges or split the batch")
	}
	var logs []types.Log
	if err := tn.rpc.CallContext(ctx, &logs, "eth_getLogs", all); err != nil || len(logs) != 3 {
		t.Fatalf("a lone call after the batch: %d logs, %v", len(logs), err)
	}
}

// TestResponseBytesMax: the answers of one request or batch stop at
// Config.ResponseBytesMax: the call that would cross it and every later
// one answer -32600 naming the bound, without running (a transaction
// after it is not sent); the earlier answers stand.
func TestResponseBytesMax(t *testing.T) {
	const bound = 64 << 10
	tn := startNodeWith(t, nodeSetup{rpc: func(c *rpc.Config) { c.ResponseBytesMax = bound }})
	ctx := context.Background()
	const message = "response too large (max 65536 bytes)"
	raw := hexBytes(t, dynTx(t, node.DevKey(5), chainID, 0, devAddr(9), big.NewInt(1), gwei, new(big.Int).Mul(gwei, big.NewInt(2))))
	for _, withWrite := range []bool{false, true} { // on the event loop, on a worker
		var batch []gethrpc.BatchElem
		for range 8 { // each about 15 KB
			batch = append(batch, gethrpc.BatchElem{Method: "eth_feeHistory", Args: []any{"0x400", "latest", nil}, Result: new(json.RawMessage)})
		}
		if withWrite {
			batch = append(batch, gethrpc.BatchElem{Method: "eth_sendRawTransaction", Args: []any{raw}, Result: new(string)})
		}
		batch = append(batch, gethrpc.BatchElem{Method: "eth_chainId", Result: new(string)})
		if err := tn.rpc.BatchCallContext(ctx, batch); err != nil {
			t.Fatal(err)
		}
		first, size := -1, 0
		for i, e := range batch {
			switch {
			case e.Error == nil && first < 0:
				size += len(*e.Result.(*json.RawMessage))
			case e.Error == nil:
				t.Fatalf("call %d answered after the bound was crossed at %d", i, first)
			case first < 0:
				first = i
				fallthrough
			default:
				wantRPCError(t, e.Error, -32600, message, nil)
			}
		}
		if first < 1 || first > 4 || size > bound {
			t.Fatalf("refused from call %d on, %d bytes of results before", first, size)
		}
	}
	if n, err := tn.eth.NonceAt(ctx, devAddr(5), nil); err != nil || n != 0 {
		t.Fatalf("the refused transaction ran: nonce %d %v", n, err)
	}
	// A single call whose answer alone is too large (1024 × 100 rewards).
	pcts := make([]float64, 100)
	_, err := tn.eth.FeeHistory(ctx, 1024, nil, pcts)
	wantRPCError(t, err, -32600, message, nil)
}

// TestBatchAndDepthBounds: a batch over BatchLimit and JSON nested 100 000
// deep get one -32600 naming the bound, over HTTP and WebSocket, and
// cheaply: the node answers the next request as usual.
func TestBatchAndDepthBounds(t *testing.T) {
	tn := startNode(t)
	one := `{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`
	batch := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat(one+",", n), ",") + "]" }
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	tooLarge := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch too large (max 1000 requests)"}}`
	tooDeep := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON nested too deep (max 300 levels)"}}`
	ws := tn.dialRaw(t)
	for _, c := range []struct{ body, want string }{
		{batch(1001), tooLarge},
		{deep, tooDeep},
		{strings.Repeat("{\"a\":", 100_000), tooDeep}, // deep and never closed
	} {
		if a := postNow(t, tn.url, c.body); a.status != 200 || a.body != c.want {
			t.Fatalf("HTTP: status %d %.200s, want %s", a.status, a.body, c.want)
		}
		if err := ws.conn.WriteMessage(websocket.TextMessage, []byte(c.body)); err != nil {
			t.Fatal(err)
		}
		_ = ws.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, msg, err := ws.conn.ReadMessage(); err != nil || string(msg) != c.want {
			t.Fatalf("WebSocket: %v %.200s, want %s", err, msg, c.want)
		}
	}
	var answers []json.RawMessage
	if a := postNow(t, tn.url, batch(1000)); json.Unmarshal([]byte(a.body), &answers) != nil || len(answers) != 1000 {
		t.Fatalf("a batch of 1000: %.200s", a.body)
	}
	if id, err := tn.eth.ChainID(context.Background()); err != nil || id.Uint64() != chainID {
		t.Fatalf("after the refusals: %v %v", id, err)
	}
}

// TestHTTPQueueFull: with the workers busy and the node's queue full, a
// request with a write is answered at once with HTTP 503 and -32005 naming
// the bound, never queued; an unauthorized admin write is refused without
// a worker (not 503); the queued request runs once a worker is free.
func TestHTTPQueueFull(t *testing.T) {
	hold, entered, release := holdWrites()
	tn := startNodeWith(t, nodeSetup{rpc: func(c *rpc.Config) { c.Workers, c.QueueMax = 1, 1 }}, hold)
	t.Cleanup(release)
	first := postAsync(tn.url, sendBody(t, 1, 1, true), false)
	wait(t, entered, "the first write at the writer") // the worker waits for it
	second, third := postAsync(tn.url, sendBody(t, 2, 2, true), false), postAsync(tn.url, sendBody(t, 3, 3, true), false)
	var refused httpAnswer
	var queued <-chan httpAnswer
	select { // one takes the queue's one place, the other is refused at once
	case refused = <-second:
		queued = third
	case refused = <-third:
		queued = second
	case <-time.After(10 * time.Second):
		t.Fatal("no request was refused")
	}
	const full = `"error":{"code":-32005,"message":"limit exceeded: too many requests with writes queued on this node (max 1)"}}]`
	if refused.err != nil || refused.status != 503 || !strings.HasPrefix(refused.body, `[{"jsonrpc":"2.0","id":`) ||
		!strings.HasSuffix(refused.body, full) {
		t.Fatalf("queue full: %v %d %s", refused.err, refused.status, refused.body)
	}
	unauthorized := postNow(t, tn.url, `[{"jsonrpc":"2.0","id":7,"method":"admin_setBaseFee","params":["0x1"]},{"jsonrpc":"2.0","id":8,"method":"eth_chainId"}]`)
	if unauthorized.status != 200 || !strings.Contains(unauthorized.body, `"id":7,"error":{"code":-32600`) ||
		!strings.Contains(unauthorized.body, `"id":8,"result":"0x50d"`) {
		t.Fatalf("unauthorized admin write with the queue full: %d %s", unauthorized.status, unauthorized.body)
	}
	release()
	for _, ch := range []<-chan httpAnswer{first, queued} {
		if a := wait(t, ch, "a queued answer"); a.err != nil || a.status != 200 || !strings.Contains(a.body, `"result":"0x`) {
			t.Fatalf("queued write: %v %d %s", a.err, a.status, a.body)
		}
	}
}

// TestQueueBytesBound: the bodies queued for or running on the workers
// are bounded in bytes too; the bound frees when a job finishes.
func TestQueueBytesBound(t *testing.T) {
	hold, entered, release := holdWrites()
	const bound = 1000
	tn := startNodeWith(t, nodeSetup{rpc: func(c *rpc.Config) { c.QueueBytesMax = bound }}, hold)
	t.Cleanup(release)
	padded := sendBody(t, 1, 1, true) + strings.Repeat(" ", bound) // alone it is admitted
	first := postAsync(tn.url, padded, false)
	wait(t, entered, "the first write at the writer")
	a := postNow(t, tn.url, sendBody(t, 2, 2, true))
	if a.status != 503 || !strings.Contains(a.body, `"code":-32005,"message":"limit exceeded: too many bytes of requests with writes queued on this node (max 1000)"`) {
		t.Fatalf("over the bytes: %d %s", a.status, a.body)
	}
	release()
	if a := wait(t, first, "the first answer"); a.err != nil || !strings.Contains(a.body, `"result":"0x`) {
		t.Fatalf("first write: %v %s", a.err, a.body)
	}
	if a := postNow(t, tn.url, sendBody(t, 2, 2, true)); a.status != 200 || !strings.Contains(a.body, `"result":"0x`) {
		t.Fatalf("after the first finished: %d %s", a.status, a.body)
	}
}

// wsMessages reads n messages and returns them by the id of their first
// answer (a batch answer is an array).
func wsMessages(t *testing.T, c *websocket.Conn, n int) map[int]string {
	t.Helper()
	out := map[int]string{}
	for range n {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, msg, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("reading: %v", err)
		}
		var first struct{ ID int }
		var batch []struct{ ID int }
		if json.Unmarshal(msg, &batch) == nil && len(batch) > 0 {
			first = batch[0]
		} else if err := json.Unmarshal(msg, &first); err != nil {
			t.Fatalf("answer %s: %v", msg, err)
		}
		out[first.ID] = string(msg)
	}
	return out
}

// TestWSInFlightBound: one WebSocket connection has at most WSInFlightMax
// messages waiting for a later answer (here a deferred lone send and a
// batch on a worker); beyond, a message with a write is answered at once
// with -32005 naming the bound and is not run, while reads and an
// unauthorized admin write (refused without a worker) are answered as
// usual. Answers free their slots.
func TestWSInFlightBound(t *testing.T) {
	hold, entered, release := holdWrites()
	tn := startNodeWith(t, nodeSetup{rpc: func(c *rpc.Config) { c.WSInFlightMax = 2 }}, hold)
	t.Cleanup(release)
	ws := tn.dialRaw(t)
	write := func(body string) {
		t.Helper()
		if err := ws.conn.WriteMessage(websocket.TextMessage, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	write(sendBody(t, 1, 1, false)) // deferred until durable
	wait(t, entered, "the first write at the writer")
	write(sendBody(t, 2, 2, true)) // on a worker, waiting
	write(sendBody(t, 3, 3, false))
	write(`[` + strings.TrimSuffix(strings.TrimPrefix(sendBody(t, 4, 4, true), "["), "]") + `,{"jsonrpc":"2.0","id":5,"method":"eth_chainId"}]`)
	write(`{"jsonrpc":"2.0","id":6,"method":"admin_setBaseFee","params":["0x1"]}`)
	write(`{"jsonrpc":"2.0","id":7,"method":"eth_chainId"}`)
	got := wsMessages(t, ws.conn, 4)
	const limit = `"error":{"code":-32005,"message":"limit exceeded: too many requests in flight on this connection (max 2)"}}`
	for id, want := range map[int]string{
		3: `{"jsonrpc":"2.0","id":3,` + limit,
		4: `[{"jsonrpc":"2.0","id":4,` + limit + `,{"jsonrpc":"2.0","id":5,` + limit + `]`,
		7: `{"jsonrpc":"2.0","id":7,"result":"0x50d"}`,
	} {
		if got[id] != want {
			t.Fatalf("message %d: %s\nwant %s", id, got[id], want)
		}
	}
	if !strings.Contains(got[6], `"code":-32600`) {
		t.Fatalf("unauthorized admin write: %s", got[6])
	}
	release()
	got = wsMessages(t, ws.conn, 2)
	if !strings.Contains(got[1], `"result":"0x`) || !strings.Contains(got[2], `"result":"0x`) {
		t.Fatalf("answers after the writes: %v", got)
	}
	// The refused send did not run, and the slots are free again.
	write(sendBody(t, 3, 3, false))
	if got := wsMessages(t, ws.conn, 1); !strings.Contains(got[3], `"result":"0x`) {
		t.Fatalf("send after the answers: %s", got[3])
	}
}

// TestWorkersBounded: requests with writes run on the fixed workers, so 40
// of them waiting for durability hold no goroutine each.
func TestWorkersBounded(t *testing.T) {
	hold, entered, release := holdWrites()
	const messages = 40
	tn := startNodeWith(t, nodeSetup{rpc: func(c *rpc.Config) { c.Workers, c.WSInFlightMax = 4, messages }}, hold)
	t.Cleanup(release)
	conn, _, err := websocket.DefaultDialer.Dial(tn.ws, http.Header{"Authorization": {"Bearer " + testAdminToken}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	before := runtime.NumGoroutine()
	for i := range messages {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"admin_setBaseFee","params":["0x3b9aca00"]}`, i+1)
		if err := conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	// Messages are served in order: once this is answered, every write
	// above was handed on.
	if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":0,"method":"eth_chainId"}`)); err != nil {
		t.Fatal(err)
	}
	if got := wsMessages(t, conn, 1); got[0] != `{"jsonrpc":"2.0","id":0,"result":"0x50d"}` {
		t.Fatalf("read behind the writes: %v", got)
	}
	wait(t, entered, "a write at the writer")
	if grew := runtime.NumGoroutine() - before; grew > messages/4 {
		t.Fatalf("%d goroutines more with %d writes waiting", grew, messages)
	}
	release()
	for id, msg := range wsMessages(t, conn, messages) {
		if msg != fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":true}`, id) {
			t.Fatalf("answer %s", msg)
		}
	}
}

// TestClosedConnJobsDropped: the writes a WebSocket client left queued
// when it went away are dropped, not run, and hold no worker.
func TestClosedConnJobsDropped(t *testing.T) {
	hold, entered, release := holdWrites()
	tn := startNodeWith(t, nodeSetup{rpc: func(c *rpc.Config) { c.Workers = 1 }}, hold)
	t.Cleanup(release)
	first := postAsync(tn.url, sendBody(t, 1, 1, true), false)
	wait(t, entered, "the first write at the writer") // the one worker waits
	ws := tn.dialRaw(t)
	ws.subscribe(1, "logs", quietLogs) // DropConn shows the server saw the close
	if err := ws.conn.WriteMessage(websocket.TextMessage, []byte(sendBody(t, 2, 2, true))); err != nil {
		t.Fatal(err)
	}
	if err := ws.conn.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":3,"method":"eth_chainId"}`)); err != nil {
		t.Fatal(err)
	}
	if got := wsMessages(t, ws.conn, 1); !strings.Contains(got[3], "0x50d") { // the write is queued
		t.Fatalf("read: %v", got)
	}
	ws.conn.Close()
	for deadline := time.Now().Add(10 * time.Second); tn.hub.Stats().Subscriptions > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server did not see the close")
		}
	}
	release()
	if a := wait(t, first, "the first answer"); a.err != nil || !strings.Contains(a.body, `"result":"0x`) {
		t.Fatalf("first write: %v %s", a.err, a.body)
	}
	// One worker, jobs in order: once this batch is answered, the dropped
	// one was taken before it.
	if a := postNow(t, tn.url, sendBody(t, 4, 4, true)); !strings.Contains(a.body, `"result":"0x`) {
		t.Fatalf("later write: %s", a.body)
	}
	if n, err := tn.eth.NonceAt(context.Background(), devAddr(2), nil); err != nil || n != 0 {
		t.Fatalf("the closed connection's write ran: nonce %d %v", n, err)
	}
}

// quietLogs filters logs no test emits: a subscription that sends
// nothing, so the next message on the connection is an answer.
var quietLogs = map[string]any{"address": "0x000000000000000000000000000000000000dead"}

// TestSubsPerAddress: connections from one address share the hub's
// SubsPerAddrMax (1024 by default) beyond their 128 each.
func TestSubsPerAddress(t *testing.T) {
	tn := startNode(t)
	subscribeAll := func(ws *wsRaw, n int) string {
		var b strings.Builder
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"eth_subscribe","params":["logs",{"address":%q}]}`, i+1, quietLogs["address"])
		}
		b.WriteByte(']')
		if err := ws.conn.WriteMessage(websocket.TextMessage, []byte(b.String())); err != nil {
			t.Fatal(err)
		}
		_ = ws.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, msg, err := ws.conn.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		return string(msg)
	}
	const perAddr, perConn = 1024, 128
	var conns []*wsRaw
	for range perAddr / perConn {
		ws := tn.dialRaw(t)
		if got := subscribeAll(ws, perConn); strings.Contains(got, "error") {
			t.Fatalf("within the bound: %.300s", got)
		}
		conns = append(conns, ws)
	}
	extra := tn.dialRaw(t)
	const want = `[{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"limit exceeded: too many subscriptions from this address (max 1024)"}}]`
	if got := subscribeAll(extra, 1); got != want {
		t.Fatalf("subscription 1025: %s", got)
	}
	conns[0].conn.Close() // gives its 128 back
	for deadline := time.Now().Add(10 * time.Second); tn.hub.Stats().Subscriptions > perAddr-perConn; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server did not see the close")
		}
	}
	if got := subscribeAll(extra, 1); strings.Contains(got, "error") {
		t.Fatalf("after a close: %s", got)
	}
}
