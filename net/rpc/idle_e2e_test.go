package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ledgervenue/node/net/node"
)

// wallClock runs the node on the wall clock, so its ticker runs.
func wallClock(c *node.Config) { c.Clock = node.WallClock{} }

// TestIdleNodeHeads: with nothing to do, newHeads still gets a header every
// auction interval, numbered by the slot's time (µs; 500 ms slots with
// --compat), each with a hash of its own and the newest tick as parent.
func TestIdleNodeHeads(t *testing.T) {
	for _, compat := range []bool{false, true} {
		tn := startNodeWith(t, nodeSetup{compat: compat}, wallClock)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		eth, err := ethclient.DialContext(ctx, tn.ws)
		if err != nil {
			t.Fatal(err)
		}
		heads := make(chan *types.Header, 8)
		sub, err := eth.SubscribeNewHead(ctx, heads)
		if err != nil {
			t.Fatal(err)
		}
		var got []*types.Header
		for len(got) < 3 {
			select {
			case h := <-heads:
				got = append(got, h)
			case err := <-sub.Err():
				t.Fatal(err)
			case <-ctx.Done():
				t.Fatalf("compat=%v: %d headers from an idle node in 5 s, want 3", compat, len(got))
			}
		}
		step := uint64(500_000)
		if compat {
			step = 1
		}
		for i := 1; i < len(got); i++ {
			if got[i].Number.Uint64() != got[i-1].Number.Uint64()+step || got[i].Hash() == got[i-1].Hash() {
				t.Fatalf("compat=%v: headers %v then %v, want one slot apart with distinct hashes", compat, got[i-1].Number, got[i].Number)
			}
			if got[i].ParentHash != (common.Hash{}) { // no tick ran yet: the genesis parent
				t.Fatalf("compat=%v: an idle slot's parent %s, want the newest tick (none)", compat, got[i].ParentHash)
			}
		}
		sub.Unsubscribe()
		eth.Close()
		cancel()
	}
}

// TestIdleNodePastPerfectTime: svc_pastPerfectTime notifies once the
// requested time has passed, on a node with no traffic; the method answers
// the time as a decimal string, with or without the SDK's address.
func TestIdleNodePastPerfectTime(t *testing.T) {
	tn := startNodeWith(t, nodeSetup{}, wallClock)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	want := time.Now().UnixMicro() + 700_000
	ch := make(chan hexutil.Uint64, 4)
	ws := tn.dialWS(t)
	sub, err := ws.EthSubscribe(ctx, ch, "svc_pastPerfectTime", want)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	select {
	case got := <-ch:
		if int64(got) < want {
			t.Fatalf("notified at past-perfect time %d, before the requested %d", got, want)
		}
	case err := <-sub.Err():
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatal("no svc_pastPerfectTime notification from an idle node in 5 s")
	}

	for _, args := range [][]any{nil, {devAddr(0)}} {
		var s string
		if err := tn.rpc.CallContext(ctx, &s, "svc_pastPerfectTime", args...); err != nil {
			t.Fatal(err)
		}
		if us, err := strconv.ParseInt(s, 10, 64); err != nil || us < want {
			t.Fatalf("svc_pastPerfectTime %v answered %q (%v), want a decimal time at or after %d", args, s, err, want)
		}
	}
	err = tn.rpc.CallContext(ctx, new(json.RawMessage), "svc_pastPerfectTime", "0x12")
	var re interface{ ErrorCode() int }
	if !errors.As(err, &re) || re.ErrorCode() != -32602 {
		t.Fatalf("svc_pastPerfectTime with a malformed address: %v, want -32602", err)
	}
}
