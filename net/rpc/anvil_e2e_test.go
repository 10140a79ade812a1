package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
)

// The anvil-compatible controls (anvil.go, docs/anvil.md) through
// go-ethereum's client, over HTTP and WebSocket.

func devMode(c *rpc.Config) { c.Dev = true }

// startDevNode is a test node serving the controls without a token, as
// ledgerd --dev does.
func startDevNode(t *testing.T, opts ...nodeOption) *testNode {
	return startNodeWith(t, nodeSetup{rpc: devMode}, opts...)
}

type namedClient struct {
	name string
	c    *gethrpc.Client
}

// clients returns the node's HTTP client and a WebSocket one, in that
// order.
func (tn *testNode) clients(t *testing.T) []namedClient {
	ws, err := gethrpc.DialWebsocket(context.Background(), tn.ws, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ws.Close)
	return []namedClient{{"http", tn.rpc}, {"ws", ws}}
}

func call[T any](t *testing.T, c *gethrpc.Client, method string, args ...any) T {
	t.Helper()
	var out T
	if err := c.CallContext(context.Background(), &out, method, args...); err != nil {
		t.Fatalf("%s: %v (%v)", method, err, errorData(err))
	}
	return out
}

func pastPerfectUs(t *testing.T, c *gethrpc.Client) int64 {
	t.Helper()
	v, err := strconv.ParseInt(call[string](t, c, "svc_pastPerfectTime"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAnvilIncreaseTime: evm_increaseTime moves past-perfect time and
// eth_blockNumber by the seconds asked and answers the clock's whole offset;
// evm_setNextBlockTimestamp moves time to a timestamp and refuses one in the
// past with anvil's error; a resting order's ttl expires when time jumps
// past it.
func TestAnvilIncreaseTime(t *testing.T) {
	tn := startDevNode(t)
	var offset int64
	for _, nc := range tn.clients(t) {
		name, c := nc.name, nc.c
		t.Run(name, func(t *testing.T) {
			before := pastPerfectUs(t, c)
			offset += 3600
			if got := call[int64](t, c, "evm_increaseTime", 3600); got != offset {
				t.Fatalf("evm_increaseTime answered %d, want the whole offset %d", got, offset)
			}
			if now := pastPerfectUs(t, c); now < before+3600e6 {
				t.Fatalf("past-perfect time %d, want at least %d", now, before+3600e6)
			}
			if bn := call[hexutil.Uint64](t, c, "eth_blockNumber"); int64(bn) < before+3600e6 {
				t.Fatalf("eth_blockNumber %d, want at least %d", bn, before+3600e6)
			}
			ts := (pastPerfectUs(t, c)/1e6 + 100)
			if err := c.Call(nil, "evm_setNextBlockTimestamp", ts); err != nil {
				t.Fatal(err)
			}
			if now := pastPerfectUs(t, c); now < ts*1e6 {
				t.Fatalf("past-perfect time %d after evm_setNextBlockTimestamp(%d)", now, ts)
			}
			offset = call[int64](t, c, "evm_increaseTime", "0x0")
			err := c.Call(nil, "evm_setNextBlockTimestamp", ts-10)
			wantRPCError(t, err, -32602, "Timestamp error: "+strconv.FormatInt(ts-10, 10)+" is lower than previous block's timestamp", nil)
			// anvil_setTime answers the seconds it moved (at least the 50 asked:
			// past-perfect time lags the clock by less than a second).
			if d := call[int64](t, c, "anvil_setTime", tn.node.Clock().NowMicros()/1e6+50); d < 49 || d > 50 {
				t.Fatalf("anvil_setTime moved %d s, want 50", d)
			}
			offset = call[int64](t, c, "evm_increaseTime", "0x0")
		})
	}

	// A buy resting with a 10 s ttl, then a jump of a minute.
	alice := tn.sender(t, 0)
	alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1000), 0, 10_000_000, 0))
	if err := tn.rpc.Call(nil, "evm_mine"); err != nil {
		t.Fatal(err)
	}
	if n := bookLevels(t, tn); n != 1 {
		t.Fatalf("%d buy levels after the intent landed, want 1", n)
	}
	call[int64](t, tn.rpc, "evm_increaseTime", 60)
	if n := bookLevels(t, tn); n != 0 {
		t.Fatalf("%d buy levels a minute after a 10 s ttl, want 0", n)
	}
	err := tn.rpc.Call(nil, "evm_increaseTime", hexutil.EncodeUint64(node.TimeJumpMaxUs/1_000_000+1))
	wantRPCError(t, err, -32602, node.ErrTimeJump.Error(), nil)
}

func bookLevels(t *testing.T, tn *testNode) int {
	t.Helper()
	var book struct {
		Buys map[string]json.RawMessage `json:"buys"`
	}
	if err := json.Unmarshal(tn.rawCall("ob_getOrderbook", wethBook, 10), &book); err != nil {
		t.Fatal(err)
	}
	return len(book.Buys)
}

// TestAnvilMineRunsTick: under the manual clock, evm_mine runs the next
// auction tick at once: a crossing pair fills, and anvil_mine with an
// interval moves time by count × interval.
func TestAnvilMineRunsTick(t *testing.T) {
	tn := startDevNode(t)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	buy := alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(3000), 0, 0, 0))
	alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1), 0, 0, 0)) // rests: keeps a tick's work for later
	bob.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(2990), 0, 0, 0))
	before := tn.clock.NowMicros()
	if got := call[string](t, tn.rpc, "evm_mine"); got != "0x0" {
		t.Fatalf("evm_mine answered %q, want anvil's \"0x0\"", got)
	}
	r := tn.waitReceipt(buy.TxHash)
	if r.BlockNumber == nil {
		t.Fatal("the buy has not landed after evm_mine")
	}
	if b := callView(t, tn, "balanceOf", weth, bob.addr()); b.Cmp(eth(99)) != 0 {
		t.Fatalf("bob WETH %v after evm_mine, want 99: the pair did not fill", b)
	}
	if tn.clock.NowMicros() != before {
		t.Fatal("evm_mine moved the manual clock's source: it must move only the node's offset")
	}
	p0 := pastPerfectUs(t, tn.rpc)
	if err := tn.rpc.Call(nil, "anvil_mine", "0x3", "0xa"); err != nil {
		t.Fatal(err)
	}
	if p := pastPerfectUs(t, tn.rpc); p < p0+30e6 {
		t.Fatalf("past-perfect time moved %d µs after anvil_mine(3, 10), want at least 30 s", p-p0)
	}
	err := tn.rpc.Call(nil, "anvil_mine", hexutil.EncodeUint64(rpc.MineBlocksMax+1), "0x0")
	wantRPCError(t, err, -32602, "anvil_mine: at most "+strconv.Itoa(rpc.MineBlocksMax)+" blocks", nil)
}

// TestAnvilBalanceNonceKept: anvil_setBalance and anvil_setNonce show in
// eth_getBalance and eth_getTransactionCount, over HTTP and WebSocket; a
// nonce backwards is refused; both, and the clock's offset, survive a
// restart from a snapshot and a replay of the whole log with the same state
// hash.
func TestAnvilBalanceNonceKept(t *testing.T) {
	dir := t.TempDir()
	inDir := func(c *node.Config) { c.DataDir = dir }
	tn := startDevNode(t, inDir)
	fresh := common.Address{0xf1, 19: 0x1}
	ctx := context.Background()
	for _, nc := range tn.clients(t) {
		name, c := nc.name, nc.c
		t.Run(name, func(t *testing.T) {
			want := eth(int64(len(name))) // http 4 ETH, then ws 2 ETH
			if err := c.Call(nil, "anvil_setBalance", fresh, hexutil.EncodeBig(want)); err != nil {
				t.Fatal(err)
			}
			if b, _ := tn.eth.BalanceAt(ctx, fresh, nil); b.Cmp(want) != 0 {
				t.Fatalf("balance %v after anvil_setBalance(%v)", b, want)
			}
			n := uint64(7 * (6 - len(name))) // http 14, then ws 28
			if err := c.Call(nil, "anvil_setNonce", fresh, hexutil.EncodeUint64(n)); err != nil {
				t.Fatal(err)
			}
			if got, _ := tn.eth.NonceAt(ctx, fresh, nil); got != n {
				t.Fatalf("nonce %d after anvil_setNonce(%d)", got, n)
			}
		})
	}
	err := tn.rpc.Call(nil, "anvil_setNonce", fresh, "0x1")
	wantRPCError(t, err, -32602, "nonce 1 is below the account's next nonce 28: a nonce only moves forward here", nil)
	// A dev account that trades: its balance set beside a resting order.
	alice := tn.sender(t, 0)
	alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1000), 0, 0, 0))
	call[string](t, tn.rpc, "evm_mine")
	if err := tn.rpc.Call(nil, "hardhat_setBalance", alice.addr(), "0x1"); err != nil {
		t.Fatal(err)
	}
	if b, _ := tn.eth.BalanceAt(ctx, alice.addr(), nil); b.Int64() != 1 {
		t.Fatalf("alice's balance %v beside a resting order, want 1 wei free", b)
	}
	offset := call[int64](t, tn.rpc, "evm_increaseTime", 86_400)
	var state struct{ Seq, Hash string }
	if err := tn.admin.Call(&state, "admin_stateHash"); err != nil {
		t.Fatal(err)
	}
	if err := tn.admin.Call(nil, "admin_snapshot"); err != nil {
		t.Fatal(err)
	}
	tn.stop()

	for _, ignore := range []bool{false, true} {
		tn = startDevNode(t, inDir, func(c *node.Config) { c.IgnoreSnapshots = ignore })
		var got struct{ Seq, Hash string }
		if err := tn.admin.Call(&got, "admin_stateHash"); err != nil {
			t.Fatal(err)
		}
		if got != state {
			t.Fatalf("IgnoreSnapshots=%v: state %+v after the restart, want %+v", ignore, got, state)
		}
		if b, _ := tn.eth.BalanceAt(ctx, fresh, nil); b.Cmp(eth(2)) != 0 {
			t.Fatalf("IgnoreSnapshots=%v: balance %v after the restart, want 2 ETH", ignore, b)
		}
		if n, _ := tn.eth.NonceAt(ctx, fresh, nil); n != 28 {
			t.Fatalf("IgnoreSnapshots=%v: nonce %d after the restart, want 28", ignore, n)
		}
		if got := call[int64](t, tn.rpc, "evm_increaseTime", 0); got != offset {
			t.Fatalf("IgnoreSnapshots=%v: clock offset %d s after the restart, want %d", ignore, got, offset)
		}
		tn.stop()
	}
}

// TestAnvilAuthAndShapes: outside dev mode the controls need the admin
// token; anvil_nodeInfo has anvil's shape; the methods that need EVM
// bytecode answer -32601 with the reason; automine is on and stays on.
func TestAnvilAuthAndShapes(t *testing.T) {
	tn := startNode(t) // not dev
	a := common.Address{0xa1}
	err := tn.rpc.Call(nil, "anvil_setBalance", a, "0x5")
	wantRPCError(t, err, -32600, "Invalid Request", "admin methods require the header Authorization: Bearer <admin token>")
	err = tn.rpc.Call(nil, "anvil_nodeInfo")
	wantRPCError(t, err, -32600, "Invalid Request", nil)
	if err := tn.admin.Call(nil, "anvil_setBalance", a, "0x5"); err != nil {
		t.Fatal(err)
	}
	if b, _ := tn.eth.BalanceAt(context.Background(), a, nil); b.Int64() != 5 {
		t.Fatalf("balance %v set with the admin token, want 5", b)
	}

	var info struct {
		CurrentBlockNumber    hexutil.Uint64 `json:"currentBlockNumber"`
		CurrentBlockTimestamp int64          `json:"currentBlockTimestamp"`
		CurrentBlockHash      common.Hash    `json:"currentBlockHash"`
		HardFork              string         `json:"hardFork"`
		TransactionOrder      string         `json:"transactionOrder"`
		Environment           struct {
			BaseFee  hexutil.Big    `json:"baseFee"`
			ChainID  uint64         `json:"chainId"`
			GasLimit hexutil.Uint64 `json:"gasLimit"`
			GasPrice hexutil.Big    `json:"gasPrice"`
		} `json:"environment"`
		ForkConfig map[string]any `json:"forkConfig"`
	}
	if err := tn.admin.Call(&info, "anvil_nodeInfo"); err != nil {
		t.Fatal(err)
	}
	now := tn.clock.NowMicros()
	if info.Environment.ChainID != chainID || info.Environment.BaseFee.ToInt().Cmp(gwei) != 0 ||
		info.Environment.GasLimit != 30_000_000 || info.CurrentBlockTimestamp != now/1e6 ||
		uint64(info.CurrentBlockNumber) != uint64(now) || info.TransactionOrder != "fifo" || len(info.ForkConfig) != 3 {
		t.Fatalf("anvil_nodeInfo %+v", info)
	}

	for _, m := range []string{"anvil_setCode", "hardhat_setStorageAt", "anvil_impersonateAccount", "eth_sendUnsignedTransaction"} {
		err := tn.admin.Call(nil, m, a, "0x")
		wantRPCError(t, err, -32601, "Method not found",
			"ledgerd runs no EVM bytecode: there is no code, storage or impersonated sender to set (docs/anvil.md)")
	}
	var auto bool
	if err := tn.admin.Call(&auto, "anvil_getAutomine"); err != nil || !auto {
		t.Fatalf("anvil_getAutomine: %v %v, want true", auto, err)
	}
	if err := tn.admin.Call(nil, "evm_setAutomine", true); err != nil {
		t.Fatal(err)
	}
	if err := tn.admin.Call(nil, "evm_setAutomine", false); err == nil {
		t.Fatal("evm_setAutomine(false) accepted: the node cannot hold transactions back")
	}
	if err := tn.admin.Call(nil, "anvil_setNextBlockBaseFeePerGas", "0x77359400"); err != nil {
		t.Fatal(err)
	}
	if p, _ := tn.eth.SuggestGasPrice(context.Background()); p.Cmp(big.NewInt(2e9)) != 0 {
		t.Fatalf("gas price %v after anvil_setNextBlockBaseFeePerGas(2 gwei)", p)
	}
}

// TestAnvilTableRefusals: every method docs/anvil.md's table says ledgerd
// answers -32601 does, with the reason where the row says so: the table
// stays true as methods are added.
func TestAnvilTableRefusals(t *testing.T) {
	doc, err := os.ReadFile("../../docs/anvil.md")
	if err != nil {
		t.Fatal(err)
	}
	tn := startNode(t)
	methods := regexp.MustCompile("`([a-z0-9]+_[A-Za-z0-9_]+)`")
	rows := 0
	for _, line := range strings.Split(string(doc), "\n") {
		cols := strings.Split(line, " | ")
		if len(cols) != 3 || !strings.HasPrefix(cols[2], "-32601") {
			continue
		}
		rows++
		var data any
		if strings.Contains(cols[2], "*reason*") {
			data = "ledgerd runs no EVM bytecode: there is no code, storage or impersonated sender to set (docs/anvil.md)"
		}
		for _, m := range methods.FindAllStringSubmatch(cols[0], -1) {
			err := tn.admin.Call(nil, m[1])
			var re gethrpc.Error
			if !errors.As(err, &re) || re.ErrorCode() != -32601 {
				t.Errorf("%s: %v, want -32601 as docs/anvil.md says", m[1], err)
				continue
			}
			if data != nil && errorData(err) != data {
				t.Errorf("%s: data %v, want the reason", m[1], errorData(err))
			}
		}
	}
	if rows < 20 {
		t.Fatalf("found %d -32601 rows in docs/anvil.md: the table's layout changed", rows)
	}
}

// TestControlWithoutTokenTakesNoWorker: outside dev mode a control without
// the token is refused at once, on the event loop, like an admin write:
// with the only worker held by a write waiting for durability, it still
// answers -32600 at once.
func TestControlWithoutTokenTakesNoWorker(t *testing.T) {
	hold, entered, release := holdWrites()
	tn := startNodeWith(t, nodeSetup{rpc: func(c *rpc.Config) { c.Workers = 1 }}, hold)
	t.Cleanup(release)
	first := postAsync(tn.url, `{"jsonrpc":"2.0","id":1,"method":"admin_setBaseFee","params":["0x1"]}`, true)
	wait(t, entered, "the admin write at the writer") // the one worker waits
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := tn.rpc.CallContext(ctx, nil, "evm_increaseTime", 60)
	wantRPCError(t, err, -32600, "Invalid Request", "admin methods require the header Authorization: Bearer <admin token>")
	release()
	if a := <-first; a.err != nil {
		t.Fatal(a.err)
	}
}
