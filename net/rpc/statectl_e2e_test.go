package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/net/node"
)

// venueView is what a client sees of the venue: the state hash, balances
// and nonces of two accounts, a book, their orders and the receipts
// history. Two equal views mean the venue is back where it was.
func venueView(t *testing.T, tn *testNode) string {
	t.Helper()
	var b bytes.Buffer
	var state json.RawMessage
	if err := tn.admin.CallContext(context.Background(), &state, "admin_stateHash"); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "state %s\n", state)
	for i := range 2 {
		a := devAddr(i)
		fmt.Fprintf(&b, "%d balance %s nonce %s weth %v\n", i, tn.rawCall("eth_getBalance", a, "latest"),
			tn.rawCall("eth_getTransactionCount", a, "latest"), callView(t, tn, "balanceOf", weth, a))
		fmt.Fprintf(&b, "%d orders %s\n", i, tn.rawCall("ob_getOrders", a, map[string]any{"orderbook_id": wethBook}))
	}
	fmt.Fprintf(&b, "book %s\n", tn.rawCall("ob_getOrderbook", wethBook))
	fmt.Fprintf(&b, "receipts %v\n", confirmed(t, tn))
	return b.String()
}

// confirmed lists the hashes of the attested receipts, oldest first.
func confirmed(t *testing.T, tn *testNode) []string {
	t.Helper()
	var page struct {
		Items []struct {
			Hash string `json:"transactionHash"`
		} `json:"items"`
	}
	if err := json.Unmarshal(tn.rawCall("svc_listConfirmedReceipts", map[string]any{"since": 0}), &page); err != nil {
		t.Fatal(err)
	}
	var hs []string
	for _, it := range page.Items {
		hs = append(hs, it.Hash[:10])
	}
	return hs
}

// settled waits until n receipts are attested: a tick's own record is
// attested after the tick is durable, which is when admin_advanceTime
// answers.
func settled(t *testing.T, tn *testNode, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(confirmed(t, tn)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d receipts attested, want %d", len(confirmed(t, tn)), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEvmSnapshotRevert: snapshot → orders, a fill and a transfer →
// revert brings back balances, nonces, books, orders and history, over
// HTTP and WebSocket; ids follow anvil (from 0x0, a revert removes its
// snapshot and the later ones); the venue goes on from there, and a
// restart on the data directory finds the reverted state.
func TestEvmSnapshotRevert(t *testing.T) {
	dir := t.TempDir()
	inDir := func(c *node.Config) { c.DataDir = dir }
	tn := startDevNode(t, inDir)
	ctx := context.Background()
	ws, err := gethrpc.DialContext(ctx, tn.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	subs := tn.dialSubs(t)
	book := subs.sub(1, "svc_orderbook", map[string]any{})
	headers := make(chan *types.Header, 64)
	headSub, err := ethclient.NewClient(ws).SubscribeNewHead(ctx, headers)
	if err != nil {
		t.Fatal(err)
	}
	defer headSub.Unsubscribe()

	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2000), 0, 0, 0)) // rests before the snapshot
	tn.tick(t)
	settled(t, tn, 2)
	before := venueView(t, tn)
	clockBefore := tn.clock.NowMicros()

	var id0, id1 string
	if err := tn.rpc.CallContext(ctx, &id0, "evm_snapshot"); err != nil || id0 != "0x0" {
		t.Fatalf("first evm_snapshot: %q %v, want 0x0 (anvil's first id)", id0, err)
	}
	buy := alice.mustSend(t, tn.submit(t, wethBook, eth(2), eth(3000), 0, 0, 0))
	bob.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(2990), 0, 0, 0))
	tn.tick(t)
	transfer := dynTx(t, node.DevKey(2), chainID, 0, devAddr(3), eth(5), new(big.Int), gwei)
	if err := tn.eth.SendTransaction(ctx, transfer); err != nil {
		t.Fatal(err)
	}
	tn.waitReceipt(transfer.Hash())
	settled(t, tn, 6)
	if err := ws.CallContext(ctx, &id1, "evm_snapshot"); err != nil || id1 != "0x1" {
		t.Fatalf("second evm_snapshot over WS: %q %v, want 0x1", id1, err)
	}
	after := venueView(t, tn)
	if after == before {
		t.Fatal("the orders, fill and transfer changed nothing the view shows")
	}

	var ok bool
	if err := ws.CallContext(ctx, &ok, "evm_revert", id0); err != nil || !ok {
		t.Fatalf("evm_revert %s over WS: %v %v", id0, ok, err)
	}
	if got := venueView(t, tn); got != before {
		t.Fatalf("after evm_revert:\n%s\nwant the view at the snapshot:\n%s", got, before)
	}
	// The subscriber's book went back under it: its subscription ends,
	// not resumable, and a new one starts from the reverted book.
	for {
		n := subs.note()
		if n.Subscription != book || n.Error == nil {
			continue
		}
		if n.Error.Code != -32024 || string(n.Error.Data["resumable"]) != "false" {
			t.Fatalf("close after the revert: %+v", n.Error)
		}
		break
	}
	subs.sub(2, "svc_orderbook", map[string]any{})
	for len(headers) > 0 {
		<-headers
	}

	if tn.clock.NowMicros() != clockBefore {
		t.Fatalf("manual clock after the revert %d, want %d (time goes back with the state, as in anvil)", tn.clock.NowMicros(), clockBefore)
	}
	for _, h := range []common.Hash{buy.TxHash, transfer.Hash()} {
		if r, err := tn.eth.TransactionReceipt(ctx, h); err == nil || r != nil {
			t.Fatalf("receipt of %s after the revert: %v %v, want none", h, r, err)
		}
	}
	// A revert removes its snapshot and every later one.
	for _, id := range []string{id1, id0, "0x7"} {
		if err := tn.rpc.CallContext(ctx, &ok, "evm_revert", id); err != nil || ok {
			t.Fatalf("evm_revert %s after reverting to 0x0: %v %v, want false", id, ok, err)
		}
	}
	var id2 string
	if err := tn.rpc.CallContext(ctx, &id2, "evm_snapshot"); err != nil || id2 != "0x2" {
		t.Fatalf("evm_snapshot after the revert: %q %v, want 0x2 (ids are not reused)", id2, err)
	}

	// The venue goes on from the snapshot: the same nonces are free again.
	alice.nonce, bob.nonce = 1, 0
	alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2500), 0, 0, 0))
	bob.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(2400), 0, 0, 0))
	tn.tick(t)
	// newHeads went on across the revert, as anvil's does: this tick's head
	// comes on the same go-ethereum subscription.
	select {
	case h := <-headers:
		if h.Time*1_000_000 < uint64(clockBefore) {
			t.Fatalf("head after the revert at %d s, the snapshot's time is %d µs", h.Time, clockBefore)
		}
	case err := <-headSub.Err():
		t.Fatalf("newHeads ended at the revert: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no head after the revert")
	}
	if b := callView(t, tn, "balanceOf", weth, bob.addr()); b.Cmp(eth(99)) != 0 {
		t.Fatalf("bob WETH after trading past the revert: %v, want 99", b)
	}
	again := dynTx(t, node.DevKey(2), chainID, 0, devAddr(3), eth(1), new(big.Int), gwei)
	if err := tn.eth.SendTransaction(ctx, again); err != nil {
		t.Fatalf("nonce 0 of account 2 after the revert: %v", err)
	}
	tn.waitReceipt(again.Hash())
	settled(t, tn, 6)
	live := venueView(t, tn)

	// The store holds the reverted history: a restart (replaying the whole
	// log) finds the same venue.
	tn.stop()
	tn2 := startDevNode(t, inDir, func(c *node.Config) { c.IgnoreSnapshots = true })
	if got := venueView(t, tn2); got != live {
		t.Fatalf("after a restart:\n%s\nwant:\n%s", got, live)
	}
	if _, err := os.Stat(filepath.Join(dir, "evm-snapshots", "2.state")); !os.IsNotExist(err) {
		t.Fatalf("evm_snapshot states survive a restart: %v", err)
	}
}

// TestEvmControlsNeedTokenOutsideDev: without --dev, the controls follow
// the admin rule.
func TestEvmControlsNeedTokenOutsideDev(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	var id string
	err := tn.rpc.CallContext(ctx, &id, "evm_snapshot")
	wantRPCError(t, err, -32600, "Invalid Request", "admin methods require the header Authorization: Bearer <admin token>")
	if err := tn.admin.CallContext(ctx, &id, "evm_snapshot"); err != nil || id != "0x0" {
		t.Fatalf("evm_snapshot with the token: %q %v", id, err)
	}
}

// TestDumpLoadState: anvil_dumpState → anvil_loadState on a fresh node
// gives the same state hash and history; a bad state is refused and
// changes nothing; snapshots and the state of another genesis are refused.
func TestDumpLoadState(t *testing.T) {
	tn := startDevNode(t)
	ctx := context.Background()
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	alice.mustSend(t, tn.submit(t, wethBook, eth(2), eth(3000), 0, 0, 0))
	bob.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(2990), 0, 0, 0))
	tn.tick(t)
	settled(t, tn, 3)
	want := venueView(t, tn)
	var dump string
	if err := tn.rpc.CallContext(ctx, &dump, "anvil_dumpState"); err != nil {
		t.Fatal(err)
	}

	fresh := startDevNode(t)
	pristine := venueView(t, fresh)
	for _, bad := range []string{"0x", "0x00", dump[:len(dump)-10], dump[:100] + "00" + dump[102:]} {
		var ok bool
		err := fresh.rpc.CallContext(ctx, &ok, "anvil_loadState", bad)
		var re gethrpc.Error
		if err == nil || !asRPCError(err, &re) || re.ErrorCode() != -32602 {
			t.Fatalf("anvil_loadState of a damaged state (%d chars): %v, want -32602", len(bad), err)
		}
		if got := venueView(t, fresh); got != pristine {
			t.Fatalf("a refused state changed the venue:\n%s", got)
		}
	}
	var ok bool
	if err := fresh.rpc.CallContext(ctx, &ok, "anvil_loadState", dump); err != nil || !ok {
		t.Fatalf("anvil_loadState: %v %v", ok, err)
	}
	if got := venueView(t, fresh); got != want {
		t.Fatalf("after anvil_loadState:\n%s\nwant:\n%s", got, want)
	}
	// The loaded venue trades on.
	bob = fresh.sender(t, 1)
	bob.nonce = 1
	bob.mustSend(t, fresh.submit(t, wethBook, eth(-1), eth(2990), 0, 0, 0))
	fresh.tick(t)
	if b := callView(t, fresh, "balanceOf", weth, bob.addr()); b.Cmp(eth(98)) != 0 {
		t.Fatalf("bob WETH after a fill on the loaded state: %v, want 98", b)
	}

	// Another genesis: refused, named.
	other := startDevNode(t, func(c *node.Config) { c.Genesis = c.Genesis[:1] })
	err := other.rpc.CallContext(ctx, &ok, "anvil_loadState", dump)
	wantRPCError(t, err, -32602, "Invalid params", "not a state dump of this venue: it was taken under another genesis (other dev accounts, markets or flags)")
}

// TestEvmRevertUnderLoad: reverts while clients read, send transfers and
// scrape the node's stats (run it under -race): nothing fails but the
// writes refused while the state is replaced, and the venue ends at the
// snapshot's state plus what was accepted after the last revert.
func TestEvmRevertUnderLoad(t *testing.T) {
	tn := startDevNode(t)
	ctx := context.Background()
	var id string
	if err := tn.rpc.CallContext(ctx, &id, "evm_snapshot"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var refused, accepted atomic.Int64
	wg.Add(3)
	go func() { // a sender, from its own account
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			nonce, err := tn.eth.NonceAt(ctx, devAddr(4), nil)
			if err != nil {
				t.Error(err)
				return
			}
			tx := dynTx(t, node.DevKey(4), chainID, nonce, devAddr(5), big.NewInt(1), new(big.Int), gwei)
			if err := tn.eth.SendTransaction(ctx, tx); err != nil {
				refused.Add(1) // replaced state, or a nonce gone back under it
				continue
			}
			accepted.Add(1)
		}
	}()
	go func() { // a reader of the state and of the history
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := tn.eth.BalanceAt(ctx, devAddr(5), nil); err != nil {
				t.Error(err)
				return
			}
			var page json.RawMessage
			if err := tn.rpc.CallContext(ctx, &page, "svc_listConfirmedReceipts", map[string]any{"since": 0}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() { // the metrics scraper
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			tn.node.Stats()
			time.Sleep(time.Millisecond)
		}
	}()
	for i := range 5 {
		time.Sleep(50 * time.Millisecond)
		var ok bool
		if err := tn.rpc.CallContext(ctx, &ok, "evm_revert", id); err != nil || !ok {
			t.Fatalf("revert %d: %v %v", i, ok, err)
		}
		if err := tn.rpc.CallContext(ctx, &id, "evm_snapshot"); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if accepted.Load() == 0 {
		t.Fatal("no transfer was accepted around the reverts")
	}
	t.Logf("%d transfers accepted, %d refused around 5 reverts", accepted.Load(), refused.Load())
	// The node still works: a revert to the last snapshot, then a transfer.
	var ok bool
	if err := tn.rpc.CallContext(ctx, &ok, "evm_revert", id); err != nil || !ok {
		t.Fatal(err)
	}
	nonce, _ := tn.eth.NonceAt(ctx, devAddr(4), nil)
	tx := dynTx(t, node.DevKey(4), chainID, nonce, devAddr(5), big.NewInt(1), new(big.Int), gwei)
	if err := tn.eth.SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	tn.waitReceipt(tx.Hash())
}
