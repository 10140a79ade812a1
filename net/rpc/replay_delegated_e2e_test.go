//go:build unix

package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ledgervenue/node/net/node"
)

// ledgerd replay of a session with delegated orders: live, the event loops
// decode each delegated() call, recover its certificate and hash its order
// ids before the sequencer (core.PrepareTx); the replay reads the bare
// transactions from the log and does all of it inside the ledger. Both must
// reach the same state: the replay ends at the hash admin_stateHash
// answered. The delegate's orders rest, trade against bob, are updated and
// cancelled, and a delegated batch places two more, one of which trades.
func TestReplayDelegatedOrders(t *testing.T) {
	var dir string
	tn := startNode(t, func(c *node.Config) { dir = c.DataDir })
	s := newDelegateSession(t, tn, tn.eth, node.DevKey(6))
	bob := tn.sender(t, 1)

	s.send(t, tn.submit(t, wethBook, eth(2), eth(3000), 0, 0, 0)) // rests, then half fills
	bob.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(3000), 0, 0, 0))
	tn.tick(t)
	id := orderID(s.addr(), 0, 0)
	s.send(t, pack(t, "update", wethBook, id, eth(2), eth(2990), native, tn.nextDeadline()))
	tn.tick(t)
	s.send(t, pack(t, "cancel", wethBook, id, tn.nextDeadline()))
	tn.tick(t)
	s.send(t, pack(t, "submitBatch", [][]byte{
		tn.submit(t, wethBook, eth(1), eth(2900), 0, 0, 0),
		tn.submit(t, wethBook, eth(1), eth(2901), 0, 0, 0),
	}))
	bob.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(2901), 0, 0, 0)) // takes the batch's better buy
	tn.tick(t)

	var orders struct {
		Orders []json.RawMessage `json:"orders"`
	}
	if err := json.Unmarshal(tn.rawCall("ob_getOrders", s.master, map[string]any{"orderbook_id": wethBook}), &orders); err != nil ||
		len(orders.Orders) != 3 {
		t.Fatalf("master's orders %d (%v), want the delegate's 3", len(orders.Orders), err)
	}
	var liveState json.RawMessage
	if err := tn.admin.CallContext(context.Background(), &liveState, "admin_stateHash"); err != nil {
		t.Fatal(err)
	}
	tn.stop()

	var out bytes.Buffer
	if _, err := node.Replay(node.ReplayConfig{DataDir: dir, Out: &out}); err != nil {
		t.Fatalf("replay: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; last != string(liveState) {
		t.Fatalf("replay ends at %s, the live node's admin_stateHash was %s\n%s", last, liveState, out.String())
	}
}
