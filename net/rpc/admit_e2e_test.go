package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
)

// stallTick arms a node whose next tick holds for stallDuration: stall
// holds it with the sequencer's lock, as a tick finishes
// (node.Config.DuringTick), stallClearing while its books clear, without
// the lock (node.Config.DuringClearing), stallDownstream while its
// downstream stage runs, without the lock (node.Config.DuringDownstream),
// stallIndex while its downstream stage holds the market index for its step
// (node.Config.DuringIndexStep). Each starts that tick and returns once it
// holds, and a channel that yields when the tick is done.
type stallTick struct {
	armed, armedClearing, armedDownstream, armedIndex atomic.Bool
	entered                                           chan struct{}
}

func (st *stallTick) option() nodeOption {
	st.entered = make(chan struct{}, 1)
	hold := func(armed *atomic.Bool) func() {
		return func() {
			if armed.CompareAndSwap(true, false) {
				st.entered <- struct{}{}
				time.Sleep(stallDuration)
			}
		}
	}
	return func(c *node.Config) {
		c.DuringTick = hold(&st.armed)
		c.DuringClearing = hold(&st.armedClearing)
		c.DuringDownstream = hold(&st.armedDownstream)
		c.DuringIndexStep = hold(&st.armedIndex)
	}
}

func (st *stallTick) stall(t *testing.T, tn *testNode) <-chan error {
	t.Helper()
	return st.hold(t, tn, &st.armed)
}

func (st *stallTick) stallClearing(t *testing.T, tn *testNode) <-chan error {
	t.Helper()
	return st.hold(t, tn, &st.armedClearing)
}

func (st *stallTick) stallDownstream(t *testing.T, tn *testNode) <-chan error {
	t.Helper()
	return st.hold(t, tn, &st.armedDownstream)
}

func (st *stallTick) stallIndex(t *testing.T, tn *testNode) <-chan error {
	t.Helper()
	return st.hold(t, tn, &st.armedIndex)
}

func (st *stallTick) hold(t *testing.T, tn *testNode, armed *atomic.Bool) <-chan error {
	t.Helper()
	armed.Store(true)
	ticked := make(chan error, 1)
	go func() { ticked <- tn.admin.CallContext(context.Background(), nil, "admin_advanceTime", intervalUs) }()
	select {
	case <-st.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the tick never reached its hook")
	}
	return ticked
}

// loopTest is a node whose next tick is due (an order of s) and a
// WebSocket client, for the tests that hold a tick and send a read behind
// a waiting request on the same connection, so served by the same loop.
type loopTest struct {
	st    stallTick
	tn    *testNode
	s     *obSender
	order common.Hash // the order's transaction
	rc    *gethrpc.Client
	eth   *ethclient.Client
	want  *big.Int // s's balance
}

func newLoopTest(t *testing.T) *loopTest {
	t.Helper()
	lt := &loopTest{}
	lt.tn = startNode(t, lt.st.option())
	lt.s = lt.tn.sender(t, 0)
	lt.order = lt.s.mustSend(t, lt.tn.submit(t, wethBook, eth(1), eth(2000), 0, 0, 0)).TxHash
	var err error
	if lt.rc, err = gethrpc.DialContext(context.Background(), lt.tn.ws); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lt.rc.Close)
	lt.eth = ethclient.NewClient(lt.rc)
	if lt.want, err = lt.eth.BalanceAt(context.Background(), lt.s.addr(), nil); err != nil {
		t.Fatal(err)
	}
	return lt
}

// balanceAtOnce reads s's balance on the connection, behind what waits on
// it, and checks the answer came at once (stallReadMax).
func (lt *loopTest) balanceAtOnce(t *testing.T, behind string) {
	t.Helper()
	time.Sleep(50 * time.Millisecond) // what waits reaches the loop first
	start := time.Now()
	got, err := lt.eth.BalanceAt(context.Background(), lt.s.addr(), nil)
	d := time.Since(start)
	if err != nil || got.Cmp(lt.want) != 0 {
		t.Fatalf("eth_getBalance: %v %v, want %v", got, err, lt.want)
	}
	t.Logf("eth_getBalance behind %s on the same connection: %v", behind, d)
	if d > stallReadMax() {
		t.Errorf("eth_getBalance behind %s on the same connection answered in %v during the stall, want ≤ %v", behind, d, stallReadMax())
	}
}

// TestSendDoesNotBlockTheLoop: while a tick holds the sequencer, a lone
// eth_sendRawTransaction waits for admission in the admission stage, not on
// its event loop: a read sent after it on the same WebSocket connection
// (so served by the same loop) is answered at once, and the send is
// answered, admitted, once the tick is over.
func TestSendDoesNotBlockTheLoop(t *testing.T) {
	lt := newLoopTest(t)
	s := lt.s
	ticked := lt.st.stall(t, lt.tn)
	tx := dynTx(t, s.key, chainID, s.nonce, devAddr(1), big.NewInt(1), new(big.Int), gwei)
	sent := make(chan error, 1)
	sendStart := time.Now()
	go func() { sent <- lt.eth.SendTransaction(context.Background(), tx) }()
	lt.balanceAtOnce(t, "a pending send")
	if err := <-sent; err != nil {
		t.Fatalf("the send waiting for admission: %v", err)
	}
	t.Logf("the send was answered after %v (the stall is %v)", time.Since(sendStart), stallDuration)
	s.nonce++
	if err := <-ticked; err != nil {
		t.Fatal(err)
	}
	lt.tn.waitReceipt(tx.Hash())
}

// TestIndexReadsLeaveTheLoop: while a tick's downstream stage holds the
// market index for its step, an ob_ read that takes the index's lock
// (ob_getOrders, ob_getPositions) waits for it on a worker, not on its event
// loop: a read sent after them on the same WebSocket connection (so served
// by the same loop) is answered at once; the ob_ reads, over WebSocket and
// HTTP, are answered once the step is done, ob_getOrders with the tick's
// outcome.
func TestIndexReadsLeaveTheLoop(t *testing.T) {
	lt := newLoopTest(t)
	ticked := lt.st.stallIndex(t, lt.tn)
	held := time.Now()
	type answer struct {
		orders json.RawMessage
		err    error
		at     time.Duration
	}
	read := func(c *gethrpc.Client, method string, args ...any) <-chan answer {
		done := make(chan answer, 1)
		go func() {
			var a answer
			a.err = c.CallContext(context.Background(), &a.orders, method, args...)
			a.at = time.Since(held)
			done <- a
		}()
		return done
	}
	orders := []any{lt.s.addr(), map[string]any{"orderbook_id": wethBook}}
	wsRead, httpRead := read(lt.rc, "ob_getOrders", orders...), read(lt.tn.rpc, "ob_getOrders", orders...)
	positions := read(lt.rc, "ob_getPositions", lt.s.addr())
	diagnostics := read(lt.rc, "svc_getAccountDiagnostics", lt.s.addr())
	lt.balanceAtOnce(t, "an ob_getOrders, an ob_getPositions and an svc_getAccountDiagnostics waiting for the index")
	if a := <-positions; a.err != nil || a.at < stallDuration/2 || !strings.Contains(string(a.orders), `"positions"`) {
		t.Errorf("ws ob_getPositions: %s %v after %v of the hold (it lasts %v): want it answered after the index's step", a.orders, a.err, a.at, stallDuration)
	}
	if a := <-diagnostics; a.err != nil || a.at < stallDuration/2 || !strings.Contains(string(a.orders), `"has_clob_order_pending_solution":false`) {
		t.Errorf("ws svc_getAccountDiagnostics: %s %v after %v of the hold (it lasts %v): want it answered after the index's step, the order drained", a.orders, a.err, a.at, stallDuration)
	}
	for name, ch := range map[string]<-chan answer{"ws": wsRead, "http": httpRead} {
		a := <-ch
		t.Logf("%s ob_getOrders answered %v after the hold began (it lasts %v)", name, a.at, stallDuration)
		if a.err != nil {
			t.Fatalf("%s ob_getOrders: %v", name, a.err)
		}
		if a.at < stallDuration/2 {
			t.Errorf("%s ob_getOrders answered %v into the hold: it did not wait for the index's step", name, a.at)
		}
		if !strings.Contains(string(a.orders), `"tx_hash":"`+lt.order.Hex()) || !strings.Contains(string(a.orders), `"status":"active"`) {
			t.Errorf("%s ob_getOrders: %s, want the order %s active, as the tick left it", name, a.orders, lt.order)
		}
	}
	if err := <-ticked; err != nil {
		t.Fatal(err)
	}
}

// TestAdmissionQueueBound: the admission stage holds at most
// rpc.Config.QueueMax transactions; past that a send is refused at once
// with -32005, and nothing of it was applied.
func TestAdmissionQueueBound(t *testing.T) {
	const queueMax = 2
	var st stallTick
	tn := startNodeWith(t, nodeSetup{rpc: func(c *rpc.Config) { c.QueueMax = queueMax }}, st.option())
	ctx := context.Background()
	s0 := tn.sender(t, 0)
	s0.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2000), 0, 0, 0)) // a tick is due
	ticked := st.stall(t, tn)

	// One send is taken by the admitter (waiting on the sequencer), two
	// fill the queue; from then on every send is refused at once.
	type outcome struct {
		err error
		d   time.Duration
	}
	const senders = queueMax + 3
	results := make(chan outcome, senders)
	for i := 1; i <= senders; i++ {
		s := tn.sender(t, i)
		tx := dynTx(t, s.key, chainID, s.nonce, devAddr(0), big.NewInt(1), new(big.Int), gwei)
		go func() {
			start := time.Now()
			err := tn.eth.SendTransaction(ctx, tx)
			results <- outcome{err, time.Since(start)}
		}()
		time.Sleep(20 * time.Millisecond) // in order: the first ones are queued
	}
	refused := 0
	for range senders {
		r := <-results
		var rerr gethrpc.Error
		switch {
		case r.err == nil:
		case errors.As(r.err, &rerr) && rerr.ErrorCode() == -32005:
			refused++
			if r.d > time.Second {
				t.Errorf("a refusal of a full admission queue took %v", r.d)
			}
		default:
			t.Errorf("send: %v", r.err)
		}
	}
	if want := senders - 1 - queueMax; refused != want {
		t.Errorf("%d sends refused -32005, want %d (one admitting, %d queued)", refused, want, queueMax)
	}
	if err := <-ticked; err != nil {
		t.Fatal(err)
	}
}
