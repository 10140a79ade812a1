package rpc_test

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/net/node"
)

// The lab's market faults over the wire (docs/lab.md "Market faults"),
// each control called over HTTP and over WebSocket with go-ethereum.

// labClients are the same node's HTTP and WebSocket clients with the
// admin token: the test nodes are not --dev, so the lab's controls need it
// as anvil's do.
func (tn *testNode) labClients(t *testing.T) map[string]*gethrpc.Client {
	return map[string]*gethrpc.Client{"http": tn.admin,
		"ws": tn.dialWS(t, gethrpc.WithHeader("Authorization", "Bearer "+testAdminToken))}
}

// stateHash is admin_stateHash's hash.
func (tn *testNode) stateHash(t *testing.T) string {
	t.Helper()
	var sh struct {
		Hash string `json:"hash"`
	}
	if err := tn.admin.CallContext(context.Background(), &sh, "admin_stateHash"); err != nil {
		t.Fatal(err)
	}
	return sh.Hash
}

// labMetrics reads svc_metrics' market-fault counters.
func (tn *testNode) labMetrics(t *testing.T) (m struct {
	Skipped uint64 `json:"skipped_auctions"`
	Held    uint64 `json:"held_ticks"`
}) {
	t.Helper()
	var out struct {
		Lab json.RawMessage `json:"lab"`
	}
	if err := tn.rpc.CallContext(context.Background(), &out, "svc_metrics"); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out.Lab, &m); err != nil {
		t.Fatalf("svc_metrics lab %s: %v", out.Lab, err)
	}
	return m
}

// TestLabSkipAuction: lab_skipAuction passes over the next auction tick:
// a crossing pair admitted for it fills one interval later, the slot's
// block is empty, and a restart on the same directory (the log replayed)
// reaches the same state: the skip is in what the log holds.
func TestLabSkipAuction(t *testing.T) {
	dir := t.TempDir()
	sameDir := func(c *node.Config) { c.DataDir = dir }
	tn := startNodeWith(t, nodeSetup{}, sameDir)
	for name, c := range tn.labClients(t) {
		t.Run(name, func(t *testing.T) {
			buyer, seller := tn.sender(t, 0), tn.sender(t, 1)
			for _, s := range []*obSender{buyer, seller} {
				n, err := tn.eth.NonceAt(context.Background(), s.addr(), nil)
				if err != nil {
					t.Fatal(err)
				}
				s.nonce = n
			}
			// Deadlines two ticks ahead: the skipped tick does not expire them.
			deadline := new(big.Int).Add(tn.nextDeadline(), big.NewInt(intervalUs))
			due := tn.nextDeadline().Int64()
			before := len(tn.fills(t, buyer.addr(), map[string]any{}, 100))
			buyer.mustSend(t, pack(t, "submitOrder", wethBook, eth(1), eth(2000), uint8(0), deadline, big.NewInt(0), uint8(0)))
			seller.mustSend(t, pack(t, "submitOrder", wethBook, eth(-1), eth(2000), uint8(0), deadline, big.NewInt(0), uint8(0)))
			var armed hexutil.Uint64
			if err := c.CallContext(context.Background(), &armed, "lab_skipAuction", map[string]any{"count": 1}); err != nil || armed != 1 {
				t.Fatalf("lab_skipAuction: %v %v", armed, err)
			}
			tn.tick(t)
			if got := tn.fills(t, buyer.addr(), map[string]any{}, 100); len(got) != before {
				t.Fatalf("the skipped tick at %d filled: %+v", due, got[before:])
			}
			tn.tick(t)
			got := tn.fills(t, buyer.addr(), map[string]any{}, 100)
			if len(got) != before+1 {
				t.Fatalf("%d fills after the next tick, want %d", len(got), before+1)
			}
			if skipped, _ := tn.node.LabCounts(); skipped == 0 {
				t.Fatal("no skip counted")
			}
		})
	}
	if m := tn.labMetrics(t); m.Skipped != 2 || m.Held != 0 {
		t.Fatalf("svc_metrics lab %+v, want 2 auctions skipped", m)
	}
	want := tn.stateHash(t)
	tn.stop()
	tn = startNodeWith(t, nodeSetup{}, sameDir)
	if got := tn.stateHash(t); got != want {
		t.Fatalf("after a restart the state hash is %s, want %s", got, want)
	}
	// Outside --dev the controls need the token; bounds and shapes.
	err := tn.rpc.CallContext(context.Background(), nil, "lab_skipAuction", map[string]any{"count": 1})
	wantRPCError(t, err, -32600, "Invalid Request", "admin methods require the header Authorization: Bearer <admin token>")
	for _, tc := range []struct {
		params  any
		message string
	}{
		{map[string]any{"count": 0}, "lab_skipAuction needs an object {count} (1 to 120)"},
		{map[string]any{"count": 121}, "lab_skipAuction needs an object {count} (1 to 120)"},
		{[]int{1}, "lab_skipAuction needs an object {count} (1 to 120)"},
	} {
		err := tn.admin.CallContext(context.Background(), nil, "lab_skipAuction", tc.params)
		wantRPCError(t, err, -32602, "Invalid params", tc.message)
	}
	for range 2 {
		if err := tn.admin.CallContext(context.Background(), nil, "lab_skipAuction", map[string]any{"count": 60}); err != nil {
			t.Fatal(err)
		}
	}
	err = tn.admin.CallContext(context.Background(), nil, "lab_skipAuction", map[string]any{"count": 1})
	wantRPCError(t, err, -32602, "Invalid params", "too many auction ticks armed to be skipped (max 120, 120 armed)")
}

// TestLabHoldTick: lab_holdTick holds the next due tick back by its ms of
// wall time (admin_advanceTime, which runs the tick, answers that much
// later), once; a hold beyond the bound is refused.
func TestLabHoldTick(t *testing.T) {
	tn := startNode(t)
	const hold = 300 * time.Millisecond
	// Tolerance: the tick itself and a loaded machine's scheduling.
	const slack = 250 * time.Millisecond
	for name, c := range tn.labClients(t) {
		t.Run(name, func(t *testing.T) {
			s := tn.sender(t, 0)
			n, err := tn.eth.NonceAt(context.Background(), s.addr(), nil)
			if err != nil {
				t.Fatal(err)
			}
			s.nonce = n
			var ok bool
			if err := c.CallContext(context.Background(), &ok, "lab_holdTick", map[string]any{"ms": hold.Milliseconds()}); err != nil || !ok {
				t.Fatalf("lab_holdTick: %v %v", ok, err)
			}
			s.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1500), 0, 0, 0)) // a tick is due
			start := time.Now()
			tn.tick(t)
			if took := time.Since(start); took < hold || took > hold+slack {
				t.Fatalf("the held tick answered after %v, want %v (+%v)", took, hold, slack)
			}
			s.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1500), 0, 0, 0))
			start = time.Now()
			tn.tick(t)
			if took := time.Since(start); took >= hold {
				t.Fatalf("the next tick was held too: %v", took)
			}
		})
	}
	if m := tn.labMetrics(t); m.Held != 2 || m.Skipped != 0 {
		t.Fatalf("svc_metrics lab %+v, want 2 ticks held", m)
	}
	err := tn.admin.CallContext(context.Background(), nil, "lab_holdTick", map[string]any{"ms": 10_001})
	wantRPCError(t, err, -32602, "Invalid params", "lab_holdTick needs an object {ms} (0 to 10000)")
}

// TestLabOracleMoves: lab_moveOracle jumps a perp oracle now; lab_oracleGap
// holds it for its seconds of node time, then moves it at the first tick
// after; both are logged: a gap armed before a restart ends after it.
func TestLabOracleMoves(t *testing.T) {
	dir := t.TempDir()
	sameDir := func(c *node.Config) { c.DataDir = dir }
	tn := startNodeWith(t, nodeSetup{}, sameDir)
	m := perpMarket("LAB-PERP")
	m["oracle_walk_bps"], m["oracle_seed"] = 20, 3
	book := tn.createMarket(t, m)
	oracle := func(tn *testNode) *big.Int {
		var ps []struct {
			Price *hexutil.Big `json:"oracle_price"`
		}
		if err := tn.rpc.CallContext(context.Background(), &ps, "ob_getOraclePrices", book); err != nil || len(ps) != 1 {
			t.Fatalf("ob_getOraclePrices: %v %v", ps, err)
		}
		return ps[0].Price.ToInt()
	}
	// moved is p moved by bps basis points, in steps of 0.01.
	moved := func(p *big.Int, bps int64) *big.Int {
		steps := new(big.Int).Div(p, big.NewInt(1e16))
		d := new(big.Int).Div(new(big.Int).Mul(steps, big.NewInt(bps)), big.NewInt(10_000))
		return new(big.Int).Mul(new(big.Int).Add(steps, d), big.NewInt(1e16))
	}
	clients := tn.labClients(t)
	tn.tick(t)
	p := oracle(tn)
	var ok bool
	if err := clients["ws"].CallContext(context.Background(), &ok, "lab_moveOracle", map[string]any{"market": "LAB-PERP", "bps": -300}); err != nil || !ok {
		t.Fatalf("lab_moveOracle: %v %v (%v)", ok, err, errorData(err))
	}
	if got, want := oracle(tn), moved(p, -300); got.Cmp(want) != 0 {
		t.Fatalf("after a -3%% jump the oracle is %v, want %v", got, want)
	}
	tn.tick(t)
	if oracle(tn).Cmp(moved(p, -300)) == 0 {
		t.Fatal("the walk stopped after a jump")
	}
	// A gap of 2 s, armed on a tick: the ticks before its end hold the
	// price, across a restart; the first tick at or after its end moves it
	// by +2 %.
	gapEnd := tn.node.LastTickUs() + 2_000_000
	if err := clients["http"].CallContext(context.Background(), &ok, "lab_oracleGap",
		map[string]any{"orderbook_id": book, "seconds": 2, "bps": 200}); err != nil || !ok {
		t.Fatalf("lab_oracleGap: %v %v (%v)", ok, err, errorData(err))
	}
	held := oracle(tn)
	tn.tick(t)
	tn.stop()
	tn = startNodeWith(t, nodeSetup{}, sameDir)
	for tn.node.LastTickUs() < gapEnd {
		if got := oracle(tn); got.Cmp(held) != 0 {
			t.Fatalf("at %d, during the gap, the oracle moved: %v, held at %v", tn.node.LastTickUs(), got, held)
		}
		tn.tick(t)
	}
	if got, want := oracle(tn), moved(held, 200); got.Cmp(want) != 0 {
		t.Fatalf("at the gap's end (%d) the oracle is %v, want %v", tn.node.LastTickUs(), got, want)
	}
	// Refusals name the field.
	for _, tc := range []struct {
		method  string
		params  map[string]any
		message string
	}{
		{"lab_moveOracle", map[string]any{"market": "LAB-PERP", "bps": 0}, "bps: want an integer from -5000 to 5000, not 0"},
		{"lab_moveOracle", map[string]any{"market": "LAB-PERP", "bps": 5001}, "bps: want an integer from -5000 to 5000, not 0"},
		{"lab_moveOracle", map[string]any{"market": "NOPE", "bps": 10}, `market: no market named "NOPE" (ob_getMarkets)`},
		{"lab_moveOracle", map[string]any{"bps": 10}, "market: want a market name (ob_getMarkets) or orderbook_id"},
		{"lab_moveOracle", map[string]any{"market": "WETH/USD", "bps": 10}, "CLOB validation failed: unknown orderbook"},
		{"lab_oracleGap", map[string]any{"market": "LAB-PERP", "bps": 10}, "seconds: want an integer from 1 to 3600"},
		{"lab_oracleGap", map[string]any{"market": "LAB-PERP", "bps": 10, "seconds": 3601}, "seconds: want an integer from 1 to 3600"},
	} {
		err := tn.admin.CallContext(context.Background(), nil, tc.method, tc.params)
		wantRPCError(t, err, -32602, "Invalid params", tc.message)
	}
	err := tn.admin.CallContext(context.Background(), nil, "lab_moveOracle", "LAB-PERP")
	wantRPCError(t, err, -32602, "Invalid params", "lab_moveOracle needs an object {market or orderbook_id, bps}")
}
