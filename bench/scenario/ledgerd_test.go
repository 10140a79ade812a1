package scenario_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/ledgervenue/node/bench/proc"
	"github.com/ledgervenue/node/bench/scenario"
)

// repeatFile is a scenario of 15 s of node time with makers and takers on
// a spot and a perp market, an oracle path, two deposits (one between two
// steps) and the market faults (a skipped auction, an oracle jump and a
// gap that the last oracle point ends), and a seeded walk of BTC-PERP's
// oracle every second, played at pace 0.
const repeatFile = `{"name": "repeat", "seed": %d, "duration_s": 15, "pace": 0, "progress_s": 5,
  "bots": "makers=1,takers=2,taker-rate=5,levels=3,markets=WETH/USD,ETH-PERP",
  "oracle": [{"at_s": 0, "market": "ETH-PERP", "price": "2000"}, {"at_s": 0, "market": "BTC-PERP", "price": "60000"},
             {"at_s": 7, "market": "ETH-PERP", "price": "1850.5"}, {"at_s": 12, "market": "ETH-PERP", "price": "1900"}],
  "oracle_walk": [{"market": "BTC-PERP", "bps": 50, "every_s": 1}],
  "events": [
    {"at_s": 2.5, "method": "admin_deposit", "params": [{"token": "0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE", "to": "0x00000000000000000000000000000000000a4b11", "amount": "0x1", "tx_hash": "0x00000000000000000000000000000000000000000000000000000000000000aa"}]},
    {"at_s": 3.1, "method": "admin_deposit", "params": [{"token": "0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE", "to": "0x00000000000000000000000000000000000a4b11", "amount": "0x2", "tx_hash": "0x00000000000000000000000000000000000000000000000000000000000000bb"}]},
    {"at_s": 5, "method": "lab_skipAuction", "params": [{"count": 2}]},
    {"at_s": 8, "method": "lab_moveOracle", "params": [{"market": "ETH-PERP", "bps": -300}]},
    {"at_s": 9, "method": "lab_oracleGap", "params": [{"market": "ETH-PERP", "seconds": 5, "bps": 200}]}
  ]}`

// outcome is what one play of a scenario left: the final state hash, the
// lab_scenario status, and every bot account's fills and strategy report.
type outcome struct {
	hash    string
	btc     string // BTC-PERP's oracle at the end, wei
	st      scenario.Status
	fills   map[string][]byte
	reports map[string]json.RawMessage
}

// playOnce plays repeatFile with seed to its end and reads the outcome:
// the status over HTTP, the fills over WebSocket.
func playOnce(t *testing.T, seed uint64) outcome {
	n := play(t, writeFile(t, fmt.Sprintf(repeatFile, seed)))
	h, ws := dial(t, n.HTTP), dial(t, n.WS)
	o := outcome{st: waitPlayed(t, h), fills: map[string][]byte{}, reports: map[string]json.RawMessage{}}
	var sh struct {
		Hash string `json:"hash"`
	}
	call(t, h, &sh, "admin_stateHash")
	o.hash = sh.Hash
	if o.st.Hash != o.hash {
		t.Fatalf("lab_scenario's hash %s, admin_stateHash %s: the node moved after the end", o.st.Hash, o.hash)
	}
	if !strings.Contains(n.Log(), "state hash "+o.hash) {
		t.Fatalf("the log does not print the final state hash %s", o.hash)
	}
	for _, b := range o.st.Bots {
		for _, row := range allFills(t, ws, common.HexToAddress(b.Address)) {
			o.fills[b.Address] = append(append(o.fills[b.Address], row...), '\n')
		}
		var r json.RawMessage
		call(t, h, &r, "lab_strategyReport", map[string]string{"account": b.Address})
		o.reports[b.Address] = r
	}
	// The deposits are stamped at the steps their at_s falls on: 2.5 s, and
	// 3.1 s at the next step, 3.5 s (the clock stands still within a step).
	for id, atUs := range map[string]int64{"0xaa": 2_500_000, "0xbb": 3_500_000} {
		var r struct {
			Block hexutil.Uint64 `json:"blockNumber"`
		}
		call(t, h, &r, "eth_getTransactionReceipt", common.HexToHash(id))
		if got := int64(r.Block) - o.st.StartUs; got != atUs {
			t.Errorf("deposit %s attested at t=%d µs, want %d", id, got, atUs)
		}
	}
	var oracle []struct {
		Price hexutil.Big `json:"oracle_price"`
	}
	call(t, h, &oracle, "ob_getOraclePrices", ethPerp)
	if want := "1900000000000000000000"; len(oracle) != 1 || oracle[0].Price.ToInt().String() != want {
		t.Errorf("ETH-PERP oracle at the end %+v, want %s wei", oracle, want)
	}
	// 14 walk moves of at most 50 bps from 60000 USD, in whole 1 USD steps.
	call(t, h, &oracle, "ob_getOraclePrices", btcPerp)
	usd := new(big.Int).Div(oracle[0].Price.ToInt(), big.NewInt(1e18))
	if len(oracle) != 1 || usd.Int64() == 60_000 || usd.Int64() < 55_900 || usd.Int64() > 64_300 ||
		new(big.Int).Mul(usd, big.NewInt(1e18)).Cmp(oracle[0].Price.ToInt()) != 0 {
		t.Errorf("BTC-PERP oracle after the walk %s wei: want whole USD, moved, within 14 × 50 bps of 60000", oracle[0].Price.ToInt())
	}
	o.btc = oracle[0].Price.ToInt().String()
	return o
}

// TestScenarioRepeats is the test: a scenario played twice with the
// same seed on fresh nodes (real ledgerd processes, go-ethereum clients
// over HTTP and WebSocket) ends with the same admin_stateHash, the same
// ob_getFills rows and the same lab_strategyReport for every bot account;
// another seed ends elsewhere.
func TestScenarioRepeats(t *testing.T) {
	a, b, c := playOnce(t, 7), playOnce(t, 7), playOnce(t, 8)
	if a.st.State != scenario.StateDone || a.st.Step != a.st.Steps || a.st.Steps != 30 || a.st.TS != 15 || a.st.Events != 8+1+14 {
		t.Fatalf("status at the end %+v: want done after 30 steps of 500 ms, 9 timeline entries and 14 walk moves", a.st)
	}
	if a.btc != b.btc || a.btc == c.btc {
		t.Errorf("BTC-PERP's walk ended at %s and %s with seed 7, %s with seed 8", a.btc, b.btc, c.btc)
	}
	if a.hash != b.hash {
		t.Fatalf("seed 7 played twice: state hash %s, then %s", a.hash, b.hash)
	}
	if len(a.st.Bots) != 6 {
		t.Fatalf("%d bots, want (1 + 2) × 2 markets", len(a.st.Bots))
	}
	traded := 0
	for _, bot := range a.st.Bots {
		if !bytes.Equal(a.fills[bot.Address], b.fills[bot.Address]) {
			t.Errorf("%s (%s): fills differ between two plays of seed 7", bot.Name, bot.Address)
		}
		if !bytes.Equal(a.reports[bot.Address], b.reports[bot.Address]) || !bytes.Contains(a.reports[bot.Address], []byte(`"pnl"`)) {
			t.Errorf("%s (%s): strategy reports differ between two plays of seed 7:\n%s\n%s", bot.Name, bot.Address, a.reports[bot.Address], b.reports[bot.Address])
		}
		if len(a.fills[bot.Address]) > 0 {
			traded++
		}
		if bot.Sent == 0 || bot.Acked != bot.Sent || bot.Errors != 0 {
			t.Errorf("%s: sent %d, acked %d, refused %v, errors %d (%s)", bot.Name, bot.Sent, bot.Acked, bot.Refused, bot.Errors, bot.LastError)
		}
	}
	if traded < 4 {
		t.Errorf("%d of 6 bots have fills: the scenario hardly traded", traded)
	}
	if a.hash == c.hash {
		t.Fatalf("seeds 7 and 8 end with the same state hash %s", a.hash)
	}
}

// TestScenarioExit: "then": "exit" ends ledgerd once the scenario is
// played, with status 0 and the final state hash in its log.
func TestScenarioExit(t *testing.T) {
	file := writeFile(t, `{"name": "short", "seed": 1, "duration_s": 2, "pace": 0, "bots": "makers=1,takers=1,markets=WETH/USD", "then": "exit"}`)
	n, err := proc.Start(ledgerd, "--dev", "--datadir", t.TempDir(), "--scenario", file)
	if err != nil {
		t.Fatal(err)
	}
	st := n.Wait(60 * time.Second)
	if st == nil {
		n.Stop()
		t.Fatalf("still running after the scenario; log:\n%s", n.Log())
	}
	if !st.Success() || !strings.Contains(n.Log(), "scenario short: played to t=2s in 4 steps") ||
		!strings.Contains(n.Log(), "state hash 0x") {
		t.Fatalf("exit %v; log:\n%s", st, n.Log())
	}
}

// TestScenarioFlags: --scenario is refused without --dev, with --bots,
// --clock wall or --load-state, with a bad file (the error names the
// field), and on a data directory that holds inputs.
func TestScenarioFlags(t *testing.T) {
	good := writeFile(t, `{"name": "x", "seed": 1, "duration_s": 1}`)
	f := func(want string, args ...string) {
		t.Helper()
		n, err := proc.Start(ledgerd, args...)
		if err == nil {
			n.Stop()
			t.Fatalf("%v: started", args)
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%v: %v, want %q", args, err, want)
		}
	}
	dir := t.TempDir()
	f("--scenario needs --dev", "--datadir", dir, "--scenario", good)
	f("--scenario conflicts with --bots", "--dev", "--datadir", dir, "--scenario", good, "--bots", "default")
	f("--scenario conflicts with --clock wall", "--dev", "--datadir", dir, "--scenario", good, "--clock", "wall")
	f("conflicts with --load-state", "--dev", "--datadir", dir, "--scenario", good, "--load-state", good)
	f(`events[0].method: "eth_sendRawTransaction" cannot be on a timeline`, "--dev", "--datadir", dir, "--scenario",
		writeFile(t, `{"name": "x", "seed": 1, "duration_s": 1, "events": [{"at_s": 0, "method": "eth_sendRawTransaction"}]}`))
	f("oracle[0].market: WETH/USD is a spot market: it has no oracle", "--dev", "--datadir", dir, "--scenario",
		writeFile(t, `{"name": "x", "seed": 1, "duration_s": 1, "oracle": [{"at_s": 0, "market": "WETH/USD", "price": "2000"}]}`))
	f("oracle[0].price: 2000001000000000000000 wei is not a multiple of ETH-PERP's price step (10000000000000000 wei)", "--dev", "--datadir", dir, "--scenario",
		writeFile(t, `{"name": "x", "seed": 1, "duration_s": 1, "oracle": [{"at_s": 0, "market": "ETH-PERP", "price": "2000.001"}]}`))
	f("oracle_walk[0].market: WBTC/USD is a spot market: it has no oracle", "--dev", "--datadir", dir, "--scenario",
		writeFile(t, `{"name": "x", "seed": 1, "duration_s": 1, "oracle_walk": [{"market": "WBTC/USD", "bps": 5, "every_s": 1}]}`))
	f(`bots: no market "DOGE/USD"`, "--dev", "--datadir", dir, "--scenario",
		writeFile(t, `{"name": "x", "seed": 1, "duration_s": 1, "bots": "markets=DOGE/USD"}`))
	f("no such file", "--dev", "--datadir", dir, "--scenario", dir+"/missing.json")

	n, err := proc.Start(ledgerd, "--dev", "--datadir", dir, "--admin-token", adminToken) // a node that logs inputs
	if err != nil {
		t.Fatal(err)
	}
	var ok bool
	call(t, dial(t, n.HTTP), &ok, "admin_setOraclePrice", map[string]any{"orderbook_id": ethPerp, "price": "0x6c6b935b8bbd400000"})
	n.Stop()
	f("already holds", "--dev", "--datadir", dir, "--scenario", good)
}
