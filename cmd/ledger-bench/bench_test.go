package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
	"github.com/ledgervenue/node/net/server"
)

// startLedgerd starts a node wired as `ledgerd --dev` wires it (wall clock,
// dev genesis and markets) on a loopback port and returns its address.
func startLedgerd(t *testing.T) string {
	t.Helper()
	n, err := node.Open(node.Config{DataDir: t.TempDir(), ChainID: 0x50d, BaseFee: *uint256.NewInt(1e9), Validators: 4,
		CommitteeSeed: []byte("ledger-bench"), Clock: node.WallClock{}, Genesis: node.DevGenesis(),
		Markets: append(node.DevMarkets(), node.DevPerpMarkets()...), Bridge: node.DevBridgeConfig()})
	if err != nil {
		t.Fatal(err)
	}
	hub := rpc.StartHub(n, false, rpc.PrefixSvc)
	srv := server.New(rpc.New(rpc.Config{Node: n, AdminToken: "t", Hub: hub}), server.Config{Addr: "127.0.0.1:0", Multicore: true})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hub.Close()
		srv.Stop(ctx)
		n.Close()
	})
	return srv.Addr()
}

// bench runs ledger-bench with args plus --json and returns the report.
func bench(t *testing.T, args ...string) (*report, string, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.json")
	o, err := parseFlags(flag.NewFlagSet("ledger-bench", flag.ContinueOnError), append(args, "--json", out, "--quiet"))
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = run(ctx, o, &stdout, io.Discard)
	b, rerr := os.ReadFile(out)
	if rerr != nil {
		t.Fatalf("no JSON report (%v); run: %v", rerr, err)
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r, stdout.String(), err
}

// checkReport checks every run of every node: all requests answered and
// accepted, achieved near the offered rate, percentiles ordered.
func checkReport(t *testing.T, r *report, nodes, steps, runs int) {
	t.Helper()
	if r.Version != reportVersion || len(r.Nodes) != nodes {
		t.Fatalf("version %d, %d nodes", r.Version, len(r.Nodes))
	}
	for _, n := range r.Nodes {
		if len(n.Steps) != steps {
			t.Fatalf("node %s: %d steps", n.Name, len(n.Steps))
		}
		for _, s := range n.Steps {
			if len(s.Runs) != runs || s.Median == nil {
				t.Fatalf("node %s rate %v: %d runs", n.Name, s.Rate, len(s.Runs))
			}
			for _, run := range s.Runs {
				want := int64(s.Rate * r.DurationS)
				if run.Offered != want || run.Done != want || run.OK != want || run.Errors != 0 {
					t.Fatalf("node %s rate %v: offered %d done %d ok %d errors %d, want %d (first refusal %q)", n.Name, s.Rate,
						run.Offered, run.Done, run.OK, run.Errors, want, run.FirstRefusal)
				}
				// No floor on the rate: under -race on a shared machine the
				// node may fall behind; the counts above say it answered all.
				if run.Achieved <= 0 || math.Abs(run.Achieved*run.ElapsedS-float64(run.OK)) > 1 || run.ElapsedS < r.DurationS*0.9 {
					t.Fatalf("node %s: achieved %.0f/s over %.2fs for %d answers", n.Name, run.Achieved, run.ElapsedS, run.OK)
				}
				q := []float64{run.P50Ms, run.P90Ms, run.P99Ms, run.P999Ms, run.MaxMs}
				for i := range q {
					if q[i] <= 0 || i > 0 && q[i] < q[i-1] {
						t.Fatalf("node %s: percentiles %v not positive and ordered", n.Name, q)
					}
				}
				if run.ServiceP50Ms > run.P50Ms || len(run.Windows) == 0 {
					t.Fatalf("node %s: service p50 %v above latency p50 %v, %d windows", n.Name, run.ServiceP50Ms, run.P50Ms, len(run.Windows))
				}
			}
		}
	}
}

func TestBalanceAgainstLedgerd(t *testing.T) {
	addr := startLedgerd(t)
	r, out, err := bench(t, "--url", "http://"+addr, "--scenario", "balance", "--rate", "500", "--duration", "1s", "--conns", "4")
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, r, 1, 1, 1)
	if !strings.Contains(out, "achieved/s") {
		t.Fatalf("no table:\n%s", out)
	}
}

// TestTransferAgainstLedgerd funds fresh senders, signs ahead and sends
// over WebSocket, two ramp steps, with subscribers watching the heads.
func TestTransferAgainstLedgerd(t *testing.T) {
	addr := startLedgerd(t)
	svg := filepath.Join(t.TempDir(), "r.svg")
	r, _, err := bench(t, "--url", "ws://"+addr, "--scenario", "transfer", "--ramp", "100:200:100", "--duration", "1s",
		"--conns", "4", "--accounts", "6", "--subs", "2", "--svg", svg)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, r, 1, 2, 1)
	sub := r.Nodes[0].Steps[0].Runs[0].Subs
	if sub == nil || sub.Subscribers != 2 || sub.Heads == 0 || sub.Notifications < int64(sub.Heads) || sub.Errors != 0 {
		t.Fatalf("subscribers: %+v", sub)
	}
	b, err := os.ReadFile(svg)
	if err != nil || !bytes.HasPrefix(b, []byte("<svg")) || bytes.Count(b, []byte("<polyline")) != 8 {
		t.Fatalf("svg (%v): %.200s", err, b)
	}
}

// TestOrdersAgainstLedgerd runs both order scenarios on one node: funding
// in WETH through the orderbook, IOC orders crossing, maker ladders in
// submitBatch; every order must be admitted, and two log subscribers see
// the same logs.
func TestOrdersAgainstLedgerd(t *testing.T) {
	addr := startLedgerd(t)
	for i, scen := range []string{"orders", "mm"} {
		r, _, err := bench(t, "--url", "http://"+addr, "--scenario", scen, "--rate", "100", "--duration", "1s",
			"--conns", "4", "--funder", strconv.Itoa(i), "--subs", "2", "--subs-channel", "logs")
		checkReport(t, r, 1, 1, 1)
		if err != nil {
			t.Fatalf("%s: %v", scen, err)
		}
		// The orderbook logs every order's admission and fills; the
		// subscribers stop half a second after the run, so the last tick's
		// logs may miss one or both.
		if sub := r.Nodes[0].Steps[0].Runs[0].Subs; sub == nil || sub.Channel != "logs" || sub.Heads < 50 ||
			sub.Notifications < int64(sub.Heads) || sub.Notifications > 2*int64(sub.Heads) || sub.Errors != 0 {
			t.Fatalf("%s: log subscribers %+v", scen, sub)
		}
	}
}

// TestSvcSubscribersAgainstLedgerd: ledgerd's own channels as subscribers.
// Every accepted transfer's receipt reaches both svc_confirmedReceipts
// subscribers (each transfer once per subscriber); with orders, the
// svc_orderbook subscribers see the book's updates tick by tick.
func TestSvcSubscribersAgainstLedgerd(t *testing.T) {
	addr := startLedgerd(t)
	r, _, err := bench(t, "--url", "http://"+addr, "--scenario", "transfer", "--rate", "50", "--duration", "1s",
		"--conns", "2", "--accounts", "4", "--subs", "2", "--subs-channel", "svc_confirmedReceipts")
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, r, 1, 1, 1)
	run := r.Nodes[0].Steps[0].Runs[0]
	// The funding transfers before the run may be notified too, and the
	// subscribers stop together but not at one instant: the last receipt
	// may reach one of them only. Every accepted transfer reaches both; no
	// receipt reaches one twice.
	if sub := run.Subs; sub == nil || sub.Heads < int(run.OK) || sub.Notifications < 2*run.OK ||
		sub.Notifications > 2*int64(sub.Heads) || sub.Errors != 0 {
		t.Fatalf("receipt subscribers %+v for %d transfers", sub, run.OK)
	}
	r, _, err = bench(t, "--url", "http://"+addr, "--scenario", "orders", "--rate", "100", "--duration", "1s",
		"--conns", "4", "--funder", "3", "--subs", "2", "--subs-channel", "svc_orderbook")
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, r, 1, 1, 1)
	if sub := r.Nodes[0].Steps[0].Runs[0].Subs; sub == nil || sub.Channel != "svc_orderbook" || sub.Heads < 2 ||
		sub.Notifications < int64(sub.Heads) || sub.Errors != 0 {
		t.Fatalf("book subscribers %+v", sub)
	}
}

// TestCompareWithAnvil drives ledgerd and anvil alternately, each with a
// chain id probe beside.
func TestCompareWithAnvil(t *testing.T) {
	// The platform package's binary, not npm's .bin/anvil: that one is a
	// Node.js wrapper, and killing it leaves its anvil running.
	anvil, err := filepath.Abs("../../bench/bridge/npm/node_modules/@foundry-rs/anvil-" + runtime.GOOS + "-" + runtime.GOARCH + "/bin/anvil")
	if err == nil {
		_, err = os.Stat(anvil)
	}
	if err != nil {
		t.Skipf("anvil not installed (%v): make bridge-tools installs it", err)
	}
	addr := startLedgerd(t)
	port := freePort(t)
	cmd := exec.Command(anvil, "--port", port, "--silent")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	anvilURL := "http://127.0.0.1:" + port
	for _, scen := range []string{"balance", "transfer"} {
		r, out, err := bench(t, "--url", "http://"+addr, "--compare", anvilURL, "--scenario", scen, "--rate", "100",
			"--duration", "1s", "--conns", "2", "--runs", "2", "--wait-up", "20s", "--probe", "chainid:100")
		if err != nil {
			t.Fatalf("%s: %v\n%s", scen, err, out)
		}
		checkReport(t, r, 2, 1, 2)
		checkProbe(t, r, "chainid", 100)
		if len(r.Ratios) != 1 || r.Ratios[0].Achieved <= 0 || r.Ratios[0].ProbeP99 <= 0 || !strings.Contains(out, "A/B at 100/s") {
			t.Fatalf("%s: ratios %+v\n%s", scen, r.Ratios, out)
		}
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := strings.Cut(ln.Addr().String(), ":")
	return port
}

func TestFlagBounds(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		_, err := parseFlags(flag.NewFlagSet("x", flag.ContinueOnError), args)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Fatalf("%v: %v, want %q", args, err, want)
		}
	}
	f("")
	f("", "--ramp", "100:1000:100")
	f("rate", "--rate", "200001")
	f("rate", "--rate", "0")
	f("duration", "--duration", "11m")
	f("conns", "--conns", "1025")
	f("runs", "--runs", "21")
	f("wait-up", "--wait-up", "11m")
	f("funder", "--funder", "10")
	f("subs-channel", "--subs-channel", "pending")
	f("orders must stay valid", "--scenario", "orders", "--duration", "9m")
	f("subs", "--subs", "1025")
	f("accounts", "--accounts", "4097")
	f("steps", "--ramp", "1:100:1")
	f("TO is below", "--ramp", "10:5:1")
	f("FROM:TO:STEP", "--ramp", "10:5")
	f("unknown scenario", "--scenario", "nope")
	f("loopback", "--url", "http://192.0.2.1:8545")
	f("loopback", "--compare", "ws://example.com:8546")
	f("", "--url", "http://192.0.2.1:8545", "--allow-remote")
	f("scheme", "--url", "ftp://127.0.0.1:1")
}

// TestAccountsRoundedToConns checks the arithmetic the
// nonce order rests on: --accounts is rounded up to a multiple of --conns.
func TestAccountsRoundedToConns(t *testing.T) {
	o, err := parseFlags(flag.NewFlagSet("x", flag.ContinueOnError), []string{"--conns", "4", "--accounts", "6"})
	if err != nil || o.accounts != 8 {
		t.Fatalf("accounts %d (%v), want 8", o.accounts, err)
	}
}

// TestSignedMax: a run needing more signed transactions than SignedMax is
// refused before anything is funded or signed.
func TestSignedMax(t *testing.T) {
	s := &senders{accounts: 1}
	if err := s.prepare(context.Background(), nil, SignedMax+1); err == nil || !strings.Contains(err.Error(), "signed ahead") {
		t.Fatalf("prepare(SignedMax+1) = %v", err)
	}
}

// checkProbe checks every run's probe: all its requests answered and
// accepted, percentiles positive and ordered, and the step medians there.
func checkProbe(t *testing.T, r *report, kind string, rate float64) {
	t.Helper()
	for _, n := range r.Nodes {
		for _, s := range n.Steps {
			if s.ProbeMedian == nil || s.ProbeMedian.P99Ms <= 0 {
				t.Fatalf("node %s rate %v: probe median %+v", n.Name, s.Rate, s.ProbeMedian)
			}
			for _, run := range s.Runs {
				p, want := run.Probe, int64(rate*r.DurationS)
				if p == nil || p.Kind != kind || p.Rate != rate || p.Conns != probeConnsDefault {
					t.Fatalf("node %s rate %v: probe %+v", n.Name, s.Rate, p)
				}
				if p.Offered != want || p.OK != want || p.Errors != 0 || p.Achieved <= 0 || len(p.Windows) == 0 {
					t.Fatalf("node %s rate %v: probe offered %d ok %d errors %d achieved %.0f, want %d (first refusal %q)",
						n.Name, s.Rate, p.Offered, p.OK, p.Errors, p.Achieved, want, p.FirstRefusal)
				}
				q := []float64{p.P50Ms, p.P99Ms, p.P999Ms, p.MaxMs}
				for i := range q {
					if q[i] <= 0 || i > 0 && q[i] < q[i-1] {
						t.Fatalf("node %s: probe percentiles %v not positive and ordered", n.Name, q)
					}
				}
			}
		}
	}
}

// TestProbeAgainstLedgerd: the idle probe alone, then a probe beside
// transfers on connections of its own, then the orderbook probe.
func TestProbeAgainstLedgerd(t *testing.T) {
	addr := startLedgerd(t)
	r, out, err := bench(t, "--url", "http://"+addr, "--scenario", "idle", "--probe", "balance:500", "--duration", "1s")
	if err != nil {
		t.Fatal(err)
	}
	checkProbe(t, r, "balance", 500)
	if run := r.Nodes[0].Steps[0].Runs[0]; run.Offered != 0 || run.Errors != 0 || r.Nodes[0].KneeRate != 0 {
		t.Fatalf("idle sent %d requests, %d errors, knee %v", run.Offered, run.Errors, r.Nodes[0].KneeRate)
	}
	if !strings.Contains(out, "probe p99") {
		t.Fatalf("no probe columns:\n%s", out)
	}

	r, _, err = bench(t, "--url", "http://"+addr, "--scenario", "transfer", "--rate", "200", "--probe", "nonce:200",
		"--duration", "1s", "--conns", "4")
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, r, 1, 1, 1)
	checkProbe(t, r, "nonce", 200)

	r, _, err = bench(t, "--url", "ws://"+addr, "--scenario", "chainid", "--rate", "100", "--probe", "orderbook:100",
		"--duration", "1s", "--conns", "2")
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, r, 1, 1, 1)
	checkProbe(t, r, "orderbook", 100)
}
