package rpc_test

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
)

// svc_waitPastPerfectTime (the live network's pod_waitPastPerfectTime) over
// HTTP and WebSocket with go-ethereum's rpc client, on the test node's
// manual clock: the past-perfect time moves when the clock does.

// pptWaitResult is what one wait answered, and when.
type pptWaitResult struct {
	result json.RawMessage
	err    error
	at     time.Time
}

// startWait calls method [target] on c in the background.
func startWait(c *gethrpc.Client, method string, target int64) <-chan pptWaitResult {
	done := make(chan pptWaitResult, 1)
	go func() {
		var r pptWaitResult
		r.err = c.CallContext(context.Background(), &r.result, method, target)
		r.at = time.Now()
		done <- r
	}()
	return done
}

// TestWaitPastPerfectTime: a past target answers null at once; a near one
// waits until the clock passes it (and not before), by either name; a far
// one, a malformed one and a wait in a batch are refused; past
// Config.PPTWaitersMax waits the next is -32005; a wait the time does not
// reach is answered -32000 after Config.PPTWaitMax.
func TestWaitPastPerfectTime(t *testing.T) {
	tn, transports := startLiveNode(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := tr.client
			now := tn.clock.NowMicros()
			var res json.RawMessage
			if err := c.CallContext(context.Background(), &res, "svc_waitPastPerfectTime", now-1); err != nil || string(res) != "null" {
				t.Fatalf("a past target: %s %v, want null", res, err)
			}
			for _, method := range []string{"svc_waitPastPerfectTime", "pod_waitPastPerfectTime"} {
				now = tn.clock.NowMicros()
				done := startWait(c, method, now+200_000)
				select {
				case r := <-done:
					t.Fatalf("%s answered %s %v before the clock reached the target", method, r.result, r.err)
				case <-time.After(50 * time.Millisecond):
				}
				tn.clock.Advance(199_999)
				select {
				case r := <-done:
					t.Fatalf("%s answered %s %v 1 µs before the target", method, r.result, r.err)
				case <-time.After(30 * time.Millisecond):
				}
				advanced := time.Now()
				tn.clock.Advance(1)
				r := <-done
				if r.err != nil || string(r.result) != "null" {
					t.Fatalf("%s: %s %v, want null", method, r.result, r.err)
				}
				if lag := r.at.Sub(advanced); lag > 100*time.Millisecond {
					t.Fatalf("%s answered %v after the clock reached the target", method, lag)
				}
			}
			now = tn.clock.NowMicros()
			err := c.CallContext(context.Background(), nil, "svc_waitPastPerfectTime", now+rpc.PPTAheadMaxUs+1)
			wantRPCError(t, err, -32602, "Requested PPT is too far in the future", nil)
			err = c.CallContext(context.Background(), nil, "svc_waitPastPerfectTime", "soon")
			wantRPCError(t, err, -32602, "Invalid params", "timestamp: want an integer of microseconds since the Unix epoch, below 2^63")
			err = c.CallContext(context.Background(), nil, "svc_waitPastPerfectTime", "0x8000000000000000")
			wantRPCError(t, err, -32602, "Invalid params", "timestamp: want an integer of microseconds since the Unix epoch, below 2^63")
			err = c.CallContext(context.Background(), nil, "svc_waitPastPerfectTime")
			wantRPCError(t, err, -32602, "Invalid params", "missing value for required argument 0")
			// In a batch: a past target is answered, a future one refused.
			var past, future json.RawMessage
			batch := []gethrpc.BatchElem{
				{Method: "svc_waitPastPerfectTime", Args: []any{now}, Result: &past},
				{Method: "svc_waitPastPerfectTime", Args: []any{now + 1000}, Result: &future},
			}
			if err := c.BatchCallContext(context.Background(), batch); err != nil || batch[0].Error != nil || string(past) != "null" {
				t.Fatalf("a past target in a batch: %s %v %v", past, err, batch[0].Error)
			}
			wantRPCError(t, batch[1].Error, -32600, "Invalid Request", "svc_waitPastPerfectTime waits, so it must be sent alone, not in a batch")
		})
	}
}

// TestWaitPastPerfectTimeBounds: Config.PPTWaitersMax waits are held for
// the whole node and the next is refused -32005; a wait the past-perfect
// time does not reach (two of four validators silent: a transfer waits for
// a quorum, and the time stays at the last attestation) is answered -32000
// after Config.PPTWaitMax. The held waits take no worker: with one worker,
// a batch with a write is answered while they wait.
func TestWaitPastPerfectTimeBounds(t *testing.T) {
	const waitMax = time.Second
	tn := startNodeWith(t, nodeSetup{rpc: func(c *rpc.Config) { c.PPTWaitersMax, c.PPTWaitMax, c.Workers = 3, waitMax, 1 }})
	target := tn.clock.NowMicros() + 1000
	// Four waits at once: three are held, whichever came last is refused.
	results := make(chan pptWaitResult, 4)
	for range 4 {
		c, err := gethrpc.DialContext(context.Background(), tn.ws)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		go func() { results <- <-startWait(c, "svc_waitPastPerfectTime", target) }()
	}
	refused := <-results
	wantRPCError(t, refused.err, -32005, "limit exceeded: too many svc_waitPastPerfectTime waits held on this node (max 3)", nil)
	// A batch with a write runs on the one worker meanwhile.
	tx := dynTx(t, node.DevKey(1), chainID, 0, devAddr(2), big.NewInt(1), gwei, big.NewInt(2e9))
	var h json.RawMessage
	batch := []gethrpc.BatchElem{{Method: "eth_sendRawTransaction", Args: []any{hexBytes(t, tx)}, Result: &h}}
	if err := tn.rpc.BatchCallContext(context.Background(), batch); err != nil || batch[0].Error != nil {
		t.Fatalf("a write while the waits are held: %v %v", err, batch[0].Error)
	}
	tn.clock.Advance(1000)
	for range 3 {
		if r := <-results; r.err != nil || string(r.result) != "null" {
			t.Fatalf("a held wait: %s %v", r.result, r.err)
		}
	}
	// The places are free again; a wait the time cannot reach times out.
	tn.waitReceipt(tx.Hash())
	tn.adminFaults("admin_setValidatorFaults", map[string]any{"silent": 2})
	stuck := dynTx(t, node.DevKey(1), chainID, 1, devAddr(2), big.NewInt(1), gwei, big.NewInt(2e9))
	if err := tn.eth.SendTransaction(context.Background(), stuck); err != nil {
		t.Fatal(err)
	}
	ppt := tn.node.PastPerfectTime()
	tn.clock.Advance(100_000)
	if got := tn.node.PastPerfectTime(); got != ppt {
		t.Fatalf("past-perfect time moved from %d to %d while a transfer waits for a quorum", ppt, got)
	}
	start := time.Now()
	err := tn.rpc.CallContext(context.Background(), nil, "svc_waitPastPerfectTime", ppt+1)
	wantRPCError(t, err, -32000, "past-perfect time did not reach the timestamp within 1s", nil)
	if took := time.Since(start); took < waitMax || took > waitMax+time.Second {
		t.Fatalf("the wait was answered after %v, want about %v", took, waitMax)
	}
	done := startWait(tn.rpc, "svc_waitPastPerfectTime", ppt+1)
	tn.adminFaults("admin_setValidatorFaults", map[string]any{})
	if r := <-done; r.err != nil || string(r.result) != "null" {
		t.Fatalf("once the validators are back: %s %v", r.result, r.err)
	}
	tn.waitReceipt(stuck.Hash())
}
