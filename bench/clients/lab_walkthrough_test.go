package clients

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgervenue/node/bench/proc"
)

// walkthroughRE marks README.md's copy of the strategy walkthrough: not an
// <!-- example: --> (those run against a node the test starts), since the
// walkthrough starts its own node with a scenario.
var walkthroughRE = regexp.MustCompile(`^<!-- walkthrough: (\S+) -->$`)

// walkthroughTimeout bounds the walkthrough: a 60 s scenario at pace 1 on
// a loaded 2-core machine (steps then take up to 0.8 s: docs/lab.md), the
// strategy, the replay.
const walkthroughTimeout = 5 * time.Minute

// TestStrategyWalkthrough runs README.md's "Testing a strategy" as a user
// would: the block is bench/clients/lab-walkthrough.sh byte for byte, and
// the script (a scenario, the ethers strategy through an injected 150 ms
// latency, the report live and from ledgerd replay) prints the answers it
// shows. Then what the answers say: the strategy saw the latency it was
// given, quoted, and the report of its account has its fills and a PnL
// that adds up.
func TestStrategyWalkthrough(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	marked := parseMarked(string(readme), walkthroughRE)
	if len(marked) != 1 {
		t.Fatalf("README.md has %d <!-- walkthrough: PATH --> blocks, want 1", len(marked))
	}
	ex := marked[0]
	checkExample(t, ex)
	if testing.Short() {
		t.Skip("-short: the walkthrough is not run")
	}
	if !jsReady(t) {
		t.Skip("LEDGERD_SKIP_JS=1")
	}
	rel, err := filepath.Rel("bench/clients", filepath.FromSlash(ex.path))
	if err != nil {
		t.Fatal(err)
	}
	p := run(walkthroughTimeout, []string{"LEDGERD=" + buildGo(t, "./cmd/ledgerd"), "LEDGERD_ADDR=" + proc.FreeAddr(t)}, "bash", rel)
	if p.Err != nil {
		p.logOutput(t, ex.path)
		t.Fatalf("%s did not exit 0: %v", ex.path, p.Err)
	}
	checkAnswers(t, ex.path, p.Stdout)
	lines := strings.Split(strings.TrimSpace(p.Stdout), "\n")
	var mm struct {
		Quoted int     `json:"quoted"`
		RTT    float64 `json:"rtt_ms_p50"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &mm); err != nil {
		t.Fatalf("the strategy printed %s: %v", lines[1], err)
	}
	// The injected 150 ms, and not much more: tolerance for a loaded machine.
	if mm.RTT < 150 || mm.RTT > 400 {
		t.Errorf("the strategy's median answer took %v ms, the fault injected 150", mm.RTT)
	}
	if mm.Quoted < 10 {
		t.Errorf("the strategy quoted %d rounds of 20", mm.Quoted)
	}
	var report struct {
		Result struct {
			Fills int `json:"fills"`
			PnL   struct {
				Total, Spread, Fees, Funding, Inventory string
			} `json:"pnl"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(lines[3]), &report); err != nil {
		t.Fatalf("lab_strategyReport answered %s: %v", lines[3], err)
	}
	if report.Result.Fills == 0 || report.Result.PnL.Total == "" {
		t.Errorf("the strategy's report: %s", lines[3])
	}
	t.Logf("%s:\n%s", ex.path, p.Stdout)
}
