package main

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ledgervenue/node/bench/proc"
)

// TestAgainstLedgerdBinary drives the real binary, started as a user
// would (`ledgerd --dev --admin-addr`), over HTTP with transfers, and reads
// the traffic back from its Prometheus metrics: the transactions admitted
// grew by at least the transfers the report says were accepted, and the
// requests counted for eth_sendRawTransaction by at least those sent. A
// balance probe runs beside, and --metrics reads the auction ticks of the
// run (the dev markets tick every 500 ms, load or not).
func TestAgainstLedgerdBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs ./cmd/ledgerd")
	}
	bin, err := proc.Build("../..", "./cmd/ledgerd", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	admin := "127.0.0.1:" + freePort(t)
	l, err := proc.Start(bin, "--dev", "--datadir", t.TempDir(), "--admin-token", "t", "--admin-addr", admin)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	before := scrape(t, admin)
	r, _, err := bench(t, "--url", l.HTTP, "--scenario", "transfer", "--rate", "100", "--duration", "1s",
		"--conns", "2", "--accounts", "4", "--wait-up", "10s", "--probe", "balance:100", "--metrics", "http://"+admin+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, r, 1, 1, 1)
	checkProbe(t, r, "balance", 100)
	step := r.Nodes[0].Steps[0]
	if tick := step.Runs[0].Tick; tick == nil || tick.Count < 1 || tick.P99Ms <= 0 || tick.P50Ms > tick.P99Ms || step.TickMedian == nil {
		t.Fatalf("tick figures %+v, median %+v", tick, step.TickMedian)
	}
	// A tick holds the lock for part of its duration: in every tick, so in
	// the p99 too.
	if tick := step.Runs[0].Tick; tick.HoldP99Ms == nil || *tick.HoldP99Ms <= 0 || *tick.HoldP99Ms > tick.P99Ms+1e-9 ||
		step.TickMedian.HoldP99Ms == nil {
		t.Fatalf("hold p99 %v of tick p99 %v (median %+v)", tick.HoldP99Ms, tick.P99Ms, step.TickMedian)
	}
	sent := r.Nodes[0].Steps[0].Runs[0].OK
	after := scrape(t, admin)
	admitted := `ledgerd_transactions_total{kind="other",outcome="admitted"}`
	requests := `ledgerd_rpc_requests_total{method="eth_sendRawTransaction",transport="http"}`
	if d := after[admitted] - before[admitted]; d < float64(sent) {
		t.Fatalf("%s grew by %v, want at least the %d transfers sent", admitted, d, sent)
	}
	if d := after[requests] - before[requests]; d < float64(sent) {
		t.Fatalf("%s grew by %v, want at least %d", requests, d, sent)
	}
}

// scrape reads the samples /metrics serves on the admin port, keyed by
// name and labels as printed.
func scrape(t *testing.T, admin string) map[string]float64 {
	t.Helper()
	var resp *http.Response
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err = http.Get("http://" + admin + "/metrics"); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	if len(out) == 0 {
		t.Fatal("no samples on /metrics")
	}
	return out
}
