package scenario_test

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/bench/scenario"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
	"github.com/ledgervenue/node/net/node"
)

// liveFile runs 8 s of node time at pace 0.5 (250 ms of wall time a step,
// about 4 s in all) with an oracle path on ETH-PERP: 2000, 1800 from 4 s,
// 2100 from 5.2 s (applied at the step of 5.5 s), and two market faults:
// the auction after 3 s skipped, the oracle down 10 % at 6.5 s.
const liveFile = `{"name": "live", "seed": 3, "duration_s": 8, "pace": 0.5,
  "bots": "makers=1,takers=1,levels=3,quote-every=1,markets=WETH/USD,ETH-PERP",
  "oracle": [{"at_s": 0, "market": "ETH-PERP", "price": "2000"}, {"at_s": 4, "market": "ETH-PERP", "price": "1800"},
             {"at_s": 5.2, "market": "ETH-PERP", "price": "2100"}],
  "events": [{"at_s": 3, "method": "lab_skipAuction", "params": [{"count": 1}]},
             {"at_s": 6.5, "method": "lab_moveOracle", "params": [{"market": "ETH-PERP", "bps": -1000}]}]}`

// TestScenarioUserClient: while a scenario plays at pace > 0, the user's
// own clients work between the steps: a go-ethereum WebSocket subscription
// sees the oracle path and the faults tick by tick (each price from the
// tick after the step that set it, no tick where the auction was skipped),
// and an ethclient over HTTP reads the node's time,
// sends a signed IOC order against the bots' ask and gets it filled at a
// tick of the scenario.
func TestScenarioUserClient(t *testing.T) {
	n := play(t, writeFile(t, liveFile))
	h, ws := dial(t, n.HTTP), dial(t, n.WS)
	frames := make(chan json.RawMessage, 256)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sub, err := ws.EthSubscribe(ctx, frames, "svc_markets", map[string]any{"orderbook_ids": []common.Hash{ethPerp}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()

	var st scenario.Status
	for call(t, h, &st, "lab_scenario"); st.State != scenario.StateRunning || st.Step < 2; call(t, h, &st, "lab_scenario") {
		if st.State == scenario.StateDone || st.State == scenario.StateFailed {
			t.Fatalf("scenario %s before the user acted (%s): the machine is too slow for pace 0.5", st.State, st.Error)
		}
		time.Sleep(20 * time.Millisecond)
	}
	user := ethclient.NewClient(h)
	before := pastPerfect(t, h)
	sendIOCBuy(t, h, user)
	waitPlayed(t, h)
	if after := pastPerfect(t, h); after <= before {
		t.Fatalf("the node's time stayed at %d while the scenario played", before)
	}

	fills := allFills(t, ws, common.Address(node.DevAddress(0)))
	if len(fills) != 1 {
		t.Fatalf("the user's IOC buy has %d fills, want 1", len(fills))
	}
	var f struct {
		Ts   int64  `json:"timestamp"`
		Side string `json:"side"`
	}
	if err := json.Unmarshal(fills[0], &f); err != nil || (f.Ts-st.StartUs)%500_000 != 0 || f.Ts <= before {
		t.Fatalf("the user's fill %s (%v): want one at a tick after %d", fills[0], err, before)
	}
	checkOraclePath(t, frames, st.StartUs)
}

// checkOraclePath reads the svc_markets frames sent so far (the first is
// the snapshot at subscription) and checks each tick's oracle against the
// path; the ticks around each change must be among them, the skipped one
// (3.5 s) not.
func checkOraclePath(t *testing.T, frames chan json.RawMessage, startUs int64) {
	t.Helper()
	want := func(rel int64) string {
		switch {
		case rel <= 4_000_000:
			return "2000000000000000000000"
		case rel <= 5_500_000:
			return "1800000000000000000000"
		case rel <= 6_500_000:
			return "2100000000000000000000"
		}
		return "1890000000000000000000"
	}
	seen := map[int64]bool{}
	for i := 0; len(frames) > 0; i++ {
		var e struct {
			Oracle string `json:"oracle_price"`
			TickUs int64  `json:"funding_last_updated"`
		}
		raw := <-frames
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatalf("frame %s: %v", raw, err)
		}
		rel := e.TickUs - startUs
		if i == 0 || rel <= 0 { // the snapshot (its oracle may hold a price set after its tick), the tick before step 0
			continue
		}
		if p, ok := new(big.Int).SetString(e.Oracle, 0); !ok || p.String() != want(rel) {
			t.Errorf("tick at t=%d µs: oracle %s, want %s wei", rel, e.Oracle, want(rel))
		}
		seen[rel] = true
	}
	for _, rel := range []int64{3_000_000, 4_000_000, 4_500_000, 5_500_000, 6_000_000, 6_500_000, 7_000_000} {
		if !seen[rel] {
			t.Errorf("no svc_markets frame for the tick at t=%d µs (frames for %v)", rel, seen)
		}
	}
	if seen[3_500_000] {
		t.Error("a svc_markets frame for the tick at t=3.5 s, which lab_skipAuction skipped")
	}
}

func pastPerfect(t *testing.T, c interface {
	CallContext(context.Context, any, string, ...any) error
}) int64 {
	t.Helper()
	var s string
	if err := c.CallContext(context.Background(), &s, "svc_pastPerfectTime"); err != nil {
		t.Fatal(err)
	}
	us, ok := new(big.Int).SetString(s, 0)
	if !ok {
		t.Fatalf("svc_pastPerfectTime %q", s)
	}
	return us.Int64()
}

// sendIOCBuy sends dev account 0's IOC buy of one lot of WETH at the best
// ask, with a deadline from the node's time, signed and sent through
// go-ethereum's ethclient.
func sendIOCBuy(t *testing.T, h interface {
	CallContext(context.Context, any, string, ...any) error
}, user *ethclient.Client) {
	t.Helper()
	var book struct {
		Sells map[string]json.RawMessage `json:"sells"`
	}
	if err := h.CallContext(context.Background(), &book, "ob_getOrderbook", wethUSD, 1); err != nil || len(book.Sells) != 1 {
		t.Fatalf("ob_getOrderbook: %v, %d ask levels: the bots' maker quotes the book", err, len(book.Sells))
	}
	var ask uint256.Int
	for p := range book.Sells {
		if err := ask.SetFromDecimal(p); err != nil {
			t.Fatal(err)
		}
	}
	in := &clob.Intent{Kind: clob.IntentSubmit, Book: clob.Hash(wethUSD), Side: clob.Buy, Type: clob.Limit, Flags: clob.FlagIOC,
		Deadline: uint64((pastPerfect(t, h)/500_000 + 2) * 500_000), Price: ask}
	in.Size.SetUint64(1e15) // one lot of the dev WETH/USD market (0.001 WETH)
	ctx := context.Background()
	nonce, err := user.PendingNonceAt(ctx, common.Address(node.DevAddress(0)))
	if err != nil {
		t.Fatal(err)
	}
	chainID, err := user.ChainID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fee, err := user.SuggestGasPrice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	to := common.Address(core.OrderbookAddress)
	tx, err := types.SignNewTx(node.DevKey(0), types.LatestSignerForChainID(chainID), &types.DynamicFeeTx{ChainID: chainID,
		Nonce: nonce, GasTipCap: new(big.Int), GasFeeCap: new(big.Int).Lsh(fee, 1), Gas: core.TxGas, To: &to,
		Data: abi.AppendIntent(nil, in)})
	if err != nil {
		t.Fatal(err)
	}
	if err := user.SendTransaction(ctx, tx); err != nil {
		t.Fatalf("the user's order: %v", err)
	}
}
