package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgervenue/node/bench/proc"
)

// liveGuide is one of the live network's TypeScript guides
// (doc/api-reference/guides/<name>.md of podnetwork/pod-sdk) as a client
// program, js/guide-<name>.mjs, and the node mode it needs.
type liveGuide struct {
	name   string
	compat bool
	why    string // why this mode
}

var liveGuides = []liveGuide{
	{"submit-a-batch-order", false, "sends with ethers' Contract and never waits for a receipt: the spec's shapes serve it"},
	{"delegate-a-trading-key", false, "signs typed data and sends with ethers' Contract, no receipt wait: the spec's shapes serve it"},
	{"place-a-spot-order", true, "waits for the deposit with ethers' tx.wait(), which cannot decode a receipt in the spec's shapes"},
	{"place-a-perpetual-order", true, "waits for the deposit with ethers' tx.wait(), as the spot guide"},
	{"read-market-data", false, "ob_ reads through provider.send only: the spec's shapes are the live ones"},
}

// guideStepRE is a program's step line: its name, ok or fail, and the
// milliseconds or the reason.
var guideStepRE = regexp.MustCompile(`^STEP (.+?) (ok|fail) (.*)$`)

// guideTimeout bounds one guide program: the deposit guides may wait up to
// the deposit's 60 s deadline, then 20 s for the order to land.
const guideTimeout = 150 * time.Second

// TestLiveGuides runs the live network's own TypeScript guides, written as
// they stand with ethers 6 (js/guide-*.mjs; only the URL, the keys and, where
// the guide leaves it to the reader, a market id or a time range differ),
// each against a fresh `ledgerd --dev` node in the mode it needs, prepared
// as the guides assume the live testnet (prepareGuideNode). Every step a
// program reports failed is a test error naming the guide and the step.
func TestLiveGuides(t *testing.T) {
	skipUnlessJS(t)
	for _, g := range liveGuides {
		t.Run(g.name, func(t *testing.T) {
			mode := "spec"
			if g.compat {
				mode = "--compat"
			}
			t.Logf("%s: %s mode, it %s", g.name, mode, g.why)
			n := startNode(t, g.compat)
			prepareGuideNode(t, n.HTTP)
			runSteps(t, fmt.Sprintf("guide %s (%s)", g.name, mode), filepath.Join("js", "guide-"+g.name+".mjs"), n, guideTimeout)
		})
	}
}

// skipUnlessJS skips a test of client programs under -short (they start
// nodes) and when jsReady says the JavaScript clients are skipped.
func skipUnlessJS(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts nodes and client programs")
	}
	if !jsReady(t) {
		t.Skip("LEDGERD_SKIP_JS=1")
	}
}

// runSteps runs a step program (the step protocol of js/flow.mjs) against
// n, bounded by timeout: every step it reports failed is a test error
// naming it, as is a program that reports no step or whose exit disagrees
// with its steps. Its output goes to the test log when the test failed.
func runSteps(t *testing.T, name, script string, n *proc.Ledgerd, timeout time.Duration) {
	t.Helper()
	runStepsEnv(t, name, script, []string{"LEDGERD_HTTP=" + n.HTTP, "LEDGERD_WS=" + n.WS}, timeout)
}

// runStepsEnv is runSteps with the program's environment given.
func runStepsEnv(t *testing.T, name, script string, env []string, timeout time.Duration) {
	t.Helper()
	p := run(timeout, env, "node", script)
	steps, failed := 0, 0
	for _, line := range strings.Split(p.Stdout, "\n") {
		m := guideStepRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		steps++
		if m[2] == "fail" {
			failed++
			t.Errorf("%s, step %q failed: %s", name, m[1], m[3])
		}
	}
	switch {
	case steps == 0:
		t.Errorf("%s reported no step: %v", name, p.Err)
	case p.Err != nil && failed == 0:
		t.Errorf("%s ended with %v although no step failed", name, p.Err)
	case p.Err == nil && failed > 0:
		t.Errorf("%s exited 0 with %d failed steps", name, failed)
	}
	if t.Failed() {
		p.logOutput(t, script)
	}
}

// prepareGuideNode makes the node look as the guides assume the live testnet
// does: the NVDA-USD perpetual market at the guides' id 0x…07, 20x, quoted
// in the native token, with the dev markets' steps (price 0.01, lot 0.001)
// and its oracle at 150 USD, where the batch guide's stop-loss (120) and
// take-profit (160) are both away from the mark. (A dev perp's oracle cannot
// be moved there: the mark follows a set oracle at 1 % a tick.) The guides'
// spot market, 0x…01, is the dev node's WETH/USD.
func prepareGuideNode(t *testing.T, url string) {
	t.Helper()
	var created struct {
		ID string `json:"id"`
	}
	guideAdminCall(t, url, "admin_createMarket", map[string]any{
		"name":           "NVDA-USD",
		"id":             "0x0000000000000000000000000000000000000000000000000000000000000007",
		"base":           "0x50fe000000000000000000000000000000000007",
		"base_symbol":    "NVDA",
		"quote_symbol":   "USD",
		"tick_precision": "0x2386f26fc10000", // 0.01
		"lot_size":       "0x38d7ea4c68000",  // 0.001
		"market_type":    "perpetual",
		"max_leverage":   20,
		"oracle_price":   "0x821ab0d4414980000", // 150
	}, &created)
	if !strings.HasSuffix(created.ID, "07") {
		t.Fatalf("admin_createMarket NVDA-USD answered id %q, want 0x…07", created.ID)
	}
}

// guideAdminCall makes one JSON-RPC call with the test nodes' admin token.
func guideAdminCall(t *testing.T, url, method string, param any, result any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": []any{param}})
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer test")
	client := http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	var answer struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    any    `json:"data"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if answer.Error != nil {
		t.Fatalf("%s: error %d %s %v", method, answer.Error.Code, answer.Error.Message, answer.Error.Data)
	}
	if err := json.Unmarshal(answer.Result, result); err != nil {
		t.Fatalf("%s: result %s: %v", method, answer.Result, err)
	}
}

// liveDayTimeout bounds js/live-day.mjs: seven steps, each waiting for a
// few receipts and ticks.
const liveDayTimeout = 150 * time.Second

// TestLiveSDKDay runs a trader's day the way the live network's own SDK
// makes it (js/live-day.mjs: its REST reads under /v1, its pod_ channels,
// its writes with their defaults, ten-year deadlines included, signed by
// viem) against `ledgerd --dev --compat --prefix pod`: faucet, markets,
// order, update, cancel, batch, orders and balances, withdrawal by its
// withdrawal_id. Every step the program reports failed is a test error.
func TestLiveSDKDay(t *testing.T) {
	skipUnlessJS(t)
	n := startNode(t, true, "--prefix", "pod")
	runSteps(t, "live SDK day", filepath.Join("js", "live-day.mjs"), n, liveDayTimeout)
}
