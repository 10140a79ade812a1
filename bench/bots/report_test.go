package bots_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"testing"
	"time"
)

// TestLedgerdStrategyReportReplayAndRestart: a real ledgerd with the
// built-in bots on a spot and a perp market; once they stop, a maker's
// and a taker's lab_strategyReport (HTTP and WebSocket alike) are the
// bytes `ledgerd replay --report` writes from the stopped node's data
// directory (the maker's also in CSV, as GET /v1/lab/report answers it),
// and the node restarted on that directory answers the same for the
// same window.
func TestLedgerdStrategyReportReplayAndRestart(t *testing.T) {
	dir := t.TempDir()
	n := startDevIn(t, dir, "--bots", "makers=2,takers=2,taker-rate=5,levels=3,seed=7,markets=WETH/USD,ETH-PERP")
	admin, ws := dialAdmin(t, n.HTTP), dialAdmin(t, n.WS)
	waitState(t, admin, "running")
	time.Sleep(3 * time.Second)
	call(t, admin, nil, "admin_stopBots")
	st := waitState(t, admin, "stopped")
	time.Sleep(time.Second) // the bots' last orders have landed
	var accounts []string
	for _, role := range []string{"maker", "taker"} {
		for _, b := range st.Bots {
			if b.Role == role {
				accounts = append(accounts, b.Address)
				break
			}
		}
	}
	type window struct {
		From int64 `json:"from"`
		To   int64 `json:"to"`
	}
	live := map[string]json.RawMessage{}
	windows := map[string]window{}
	for _, a := range accounts {
		var raw, wsRaw json.RawMessage
		call(t, admin, &raw, "lab_strategyReport", map[string]any{"account": a})
		var w window
		var fills struct {
			Fills   int `json:"fills"`
			Markets []struct {
				Kind string `json:"kind"`
			} `json:"markets"`
		}
		if err := json.Unmarshal(raw, &w); err != nil || json.Unmarshal(raw, &fills) != nil || fills.Fills == 0 || len(fills.Markets) == 0 {
			t.Fatalf("%s: %s (%v)", a, raw, err)
		}
		call(t, ws, &wsRaw, "lab_strategyReport", map[string]any{"account": a, "from": w.From, "to": w.To})
		if !bytes.Equal(raw, wsRaw) {
			t.Fatalf("%s over WebSocket, same window:\n%s\nover HTTP:\n%s", a, wsRaw, raw)
		}
		live[a], windows[a] = raw, w
	}
	csvPath := n.HTTP + "/v1/lab/report/" + accounts[0] + "?format=csv"
	req, err := http.NewRequest("GET", csvPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	liveCSV, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !bytes.HasPrefix(liveCSV, []byte("market,orderbook_id,")) {
		t.Fatalf("GET %s: %d %s %v", csvPath, resp.StatusCode, liveCSV, err)
	}
	n.Stop()

	out, err := exec.Command(ledgerd, "replay", "--datadir", dir, "--report", accounts[0], "--report-format", "csv").Output()
	if err != nil || !bytes.Equal(out, append(liveCSV, '\n')) {
		t.Fatalf("ledgerd replay --report-format csv (%v):\n%s\nlive:\n%s", err, out, liveCSV)
	}

	for _, a := range accounts {
		out, err := exec.Command(ledgerd, "replay", "--datadir", dir, "--report", a).Output()
		if err != nil {
			t.Fatalf("ledgerd replay --report %s: %v", a, err)
		}
		if want := append(bytes.Clone(live[a]), '\n'); !bytes.Equal(out, want) {
			t.Fatalf("ledgerd replay --report %s:\n%s\nlive:\n%s", a, out, want)
		}
	}

	n = startDevIn(t, dir)
	admin = dialAdmin(t, n.HTTP)
	for _, a := range accounts {
		w := windows[a]
		var raw json.RawMessage
		call(t, admin, &raw, "lab_strategyReport", map[string]any{"account": a, "from": w.From, "to": w.To})
		if !bytes.Equal(raw, live[a]) {
			t.Fatalf("%s after a restart:\n%s\nbefore:\n%s", a, raw, live[a])
		}
	}
}
