package scenario_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	gethrpc "github.com/ethereum/go-ethereum/rpc"

	"github.com/ledgervenue/node/bench/proc"
	"github.com/ledgervenue/node/bench/scenario"
)

// ledgerd is the binary TestMain built (or LEDGERD_BIN).
var ledgerd string

func TestMain(m *testing.M) { os.Exit(proc.Main(m, "../..", &ledgerd)) }

const adminToken = "scenario-test-token"

// Dev market ids (net/node/devnet.go).
var (
	wethUSD = common.HexToHash("0x01")
	ethPerp = common.HexToHash("0x03")
	btcPerp = common.HexToHash("0x04")
)

// writeFile writes a scenario file into the test's temporary directory.
func writeFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scenario.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// play starts `ledgerd --dev --scenario file` on a fresh data directory
// with args added, and stops it when the test ends, logging its output if
// the test failed.
func play(t *testing.T, file string, args ...string) *proc.Ledgerd {
	t.Helper()
	return proc.StartT(t, ledgerd, append([]string{"--dev", "--datadir", t.TempDir(), "--admin-token", adminToken, "--scenario", file}, args...)...)
}

func dial(t *testing.T, url string) *gethrpc.Client {
	t.Helper()
	return proc.Dial(t, url, adminToken)
}

func call(t *testing.T, c *gethrpc.Client, result any, method string, args ...any) {
	t.Helper()
	proc.Call(t, c, result, method, args...)
}

// waitPlayed polls lab_scenario until the scenario is done (60 s at most:
// the tests' scenarios take a few seconds on an idle machine).
func waitPlayed(t *testing.T, c *gethrpc.Client) scenario.Status {
	t.Helper()
	for end := time.Now().Add(60 * time.Second); ; {
		var st scenario.Status
		call(t, c, &st, "lab_scenario")
		switch {
		case st.State == scenario.StateDone:
			return st
		case st.State == scenario.StateFailed:
			t.Fatalf("scenario failed: %s", st.Error)
		case time.Now().After(end):
			t.Fatalf("scenario still %q at step %d of %d", st.State, st.Step, st.Steps)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// allFills lists account's fill rows, every page, newest first.
func allFills(t *testing.T, c *gethrpc.Client, account common.Address) []json.RawMessage {
	t.Helper()
	q := map[string]any{"limit": 500}
	var out []json.RawMessage
	for range 1000 {
		var page struct {
			Fills []json.RawMessage `json:"fills"`
			Next  *string           `json:"next_cursor"`
		}
		call(t, c, &page, "ob_getFills", account, q)
		out = append(out, page.Fills...)
		if page.Next == nil {
			return out
		}
		q["cursor"] = *page.Next
	}
	t.Fatal("a fills listing that never ends")
	return nil
}
