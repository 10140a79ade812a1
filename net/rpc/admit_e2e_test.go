package rpc_test

import (
	"context"
	"errors"
	"math/big"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
)

// stallTick arms a node whose next tick holds for stallDuration: stall
// holds it with the sequencer's lock, as a tick finishes
// (node.Config.DuringTick), stallClearing while its books clear, without
// the lock (node.Config.DuringClearing), stallDownstream while its
// downstream stage runs, without the lock (node.Config.DuringDownstream).
// Each starts that tick and returns once it holds, and a channel that
// yields when the tick is done.
type stallTick struct {
	armed, armedClearing, armedDownstream atomic.Bool
	entered                               chan struct{}
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

// TestSendDoesNotBlockTheLoop: while a tick holds the sequencer, a lone
// eth_sendRawTransaction waits for admission in the admission stage, not on
// its event loop: a read sent after it on the same WebSocket connection
// (so served by the same loop) is answered at once, and the send is
// answered, admitted, once the tick is over.
func TestSendDoesNotBlockTheLoop(t *testing.T) {
	var st stallTick
	tn := startNode(t, st.option())
	ctx := context.Background()
	s := tn.sender(t, 0)
	s.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2000), 0, 0, 0)) // a tick is due
	rc, err := gethrpc.DialContext(ctx, tn.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	eth := ethclient.NewClient(rc)
	want, err := eth.BalanceAt(ctx, s.addr(), nil)
	if err != nil {
		t.Fatal(err)
	}

	ticked := st.stall(t, tn)
	tx := dynTx(t, s.key, chainID, s.nonce, devAddr(1), big.NewInt(1), new(big.Int), gwei)
	sent := make(chan error, 1)
	sendStart := time.Now()
	go func() { sent <- eth.SendTransaction(ctx, tx) }()
	time.Sleep(50 * time.Millisecond) // the send reaches the loop first
	start := time.Now()
	got, err := eth.BalanceAt(ctx, s.addr(), nil)
	d := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("eth_getBalance behind a pending send on the same connection: %v", d)
	if d > stallReadMax() {
		t.Errorf("eth_getBalance behind a send on the same connection answered in %v during the stalled tick, want ≤ %v", d, stallReadMax())
	}
	if got.Cmp(want) != 0 {
		t.Errorf("balance %v, want %v", got, want)
	}
	if err := <-sent; err != nil {
		t.Fatalf("the send waiting for admission: %v", err)
	}
	t.Logf("the send was answered after %v (the stall is %v)", time.Since(sendStart), stallDuration)
	s.nonce++
	if err := <-ticked; err != nil {
		t.Fatal(err)
	}
	tn.waitReceipt(tx.Hash())
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
