// Command ledger-bench drives a running JSON-RPC node — ledgerd or any
// Ethereum node such as anvil — with an open-loop load and reports latency
// percentiles and throughput (docs/load.md).
//
// Open loop: request i falls due at start + i/rate whatever the node does;
// its latency runs from that due time, so a node that stalls is charged for
// every request that waited (no coordinated omission). Each connection has
// one request in flight (anvil does not pipeline); a request that finds its
// connection busy waits, and the wait counts.
//
// A probe (--probe) is a second open-loop run of reads beside the scenario,
// on connections of its own, over the same client and histograms; --metrics
// reads the node's auction tick histogram around each run (probe.go,
// metrics.go).
//
// Invariants: every run stops by itself (duration and drain timeout,
// bounded by named constants); only loopback nodes are driven unless
// --allow-remote; an account's transactions go out one after another, on
// one connection, in nonce order.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ledgervenue/node/bench/load"
	"github.com/ledgervenue/node/net/node"
)

// Bounds of what flags may ask.
const (
	// DurationMax bounds --duration (of each run).
	DurationMax = 10 * time.Minute
	// RateMax bounds --rate and every --ramp step, in requests per second.
	RateMax = 200_000
	// ConnsMax bounds --conns.
	ConnsMax = 1024
	// RunsMax bounds --runs.
	RunsMax = 20
	// StepsMax bounds the number of --ramp steps.
	StepsMax = 50
	// AccountsMax bounds --accounts, the fresh senders of transfers.
	AccountsMax = 4096
	// SignedMax bounds the transactions signed ahead for one run
	// (rate x duration): about 250 bytes each.
	SignedMax = 2_000_000
	// SubscribersMax bounds --subs.
	SubscribersMax = 1024
	// kneeAchieved is the fraction of the offered rate below which a ramp
	// step is past the knee.
	kneeAchieved = 0.95
)

// options are the parsed flags.
type options struct {
	urls        []string // the node, and --compare's
	scenario    string
	rates       []float64
	duration    time.Duration
	drain       time.Duration
	conns       int
	accounts    int
	runs        int
	subs        int
	subsChannel string
	p99Max      time.Duration
	seed        string
	funder      int
	waitUp      time.Duration
	allowRemote bool
	jsonOut     string
	svgOut      string
	quiet       bool
	probe       *probeSpec // --probe; nil: none
	metrics     []string   // --metrics: Prometheus endpoints of the nodes, in order
}

func main() {
	o, err := parseFlags(flag.CommandLine, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "ledger-bench:", err)
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	if err := run(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ledger-bench:", err)
		os.Exit(1)
	}
}

func parseFlags(fs *flag.FlagSet, args []string) (*options, error) {
	o := &options{}
	var url, compare, ramp, probe, metrics string
	var rate float64
	fs.StringVar(&url, "url", "http://127.0.0.1:8545", "node to drive: http://, https:// or ws:// URL")
	fs.StringVar(&compare, "compare", "", "second node: run the same scenario against both, alternately, and print the ratios")
	fs.StringVar(&o.scenario, "scenario", "balance", "balance, chainid, transfer, orders, mm, subs, or idle (the probe alone) (see docs/load.md)")
	fs.Float64Var(&rate, "rate", 1000, "offered requests per second")
	fs.StringVar(&ramp, "ramp", "", "FROM:TO:STEP, or a list R1,R2,...: step the rate from FROM to TO, or through the list, and report the knee (instead of --rate)")
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "length of each run (each ramp step, each node)")
	fs.DurationVar(&o.drain, "drain", load.DefaultDrainTimeout, "how long answers still owed at the end of a run are awaited")
	fs.IntVar(&o.conns, "conns", 8, "connections per node, one request in flight each")
	fs.IntVar(&o.accounts, "accounts", 0, "fresh sender accounts of transfer (0: --conns; rounded up to a multiple of --conns)")
	fs.IntVar(&o.runs, "runs", 1, "runs per rate step and node (alternating A, B, A, B with --compare)")
	fs.IntVar(&o.subs, "subs", 0, "WebSocket subscribers kept open during each run (subs scenario: default 16)")
	fs.StringVar(&o.subsChannel, "subs-channel", "newHeads", "what the subscribers subscribe to: newHeads, logs, or ledgerd's svc_orderbook or svc_confirmedReceipts")
	fs.DurationVar(&o.p99Max, "p99-max", 100*time.Millisecond, "a ramp step whose p99 latency exceeds this is past the knee")
	fs.StringVar(&o.seed, "seed", "ledger-bench", "seed of the fresh sender keys")
	fs.IntVar(&o.funder, "funder", 0, "dev account (0..9 of the test mnemonic) that funds the fresh senders")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "allow nodes that are not on loopback")
	fs.StringVar(&o.jsonOut, "json", "", "write the report as JSON to this file (schema in docs/load.md)")
	fs.StringVar(&o.svgOut, "svg", "", "write latency and throughput charts as SVG to this file")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress lines")
	fs.StringVar(&probe, "probe", "", "KIND:RATE[:CONNS]: a read (balance, nonce, chainid, orderbook) at RATE/s open loop on CONNS (default 8) connections of its own, beside the scenario in every run; reported apart")
	fs.StringVar(&metrics, "metrics", "", "URL[,URL2]: the nodes' Prometheus /metrics (in the order of --url, --compare); the auction tick duration histogram is read before and after each run")
	fs.DurationVar(&o.waitUp, "wait-up", 0, "wait this long for the nodes to answer before starting (for scripts that just started them)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.urls = []string{url}
	if compare != "" {
		o.urls = append(o.urls, compare)
	}
	if metrics != "" {
		o.metrics = strings.Split(metrics, ",")
	}
	var err error
	if o.probe, err = parseProbe(probe); err != nil {
		return nil, err
	}
	switch {
	case o.scenario == "idle" && ramp != "":
		return nil, fmt.Errorf("--scenario idle sends no load: it takes no --ramp")
	case o.scenario == "idle":
		o.rates = []float64{0} // no load: a run is the probe alone
	case ramp != "":
		o.rates, err = parseRamp(ramp)
	default:
		o.rates = []float64{rate}
	}
	if err != nil {
		return nil, err
	}
	if o.scenario == "subs" && o.subs == 0 {
		o.subs = 16
	}
	if o.accounts < o.conns {
		o.accounts = o.conns
	}
	o.accounts = (o.accounts + o.conns - 1) / max(o.conns, 1) * max(o.conns, 1)
	return o, o.validate()
}

// parseRamp reads FROM:TO:STEP into the rates FROM, FROM+STEP, ... <= TO,
// or a list R1,R2,... into those rates, ascending.
func parseRamp(s string) ([]float64, error) {
	if strings.Contains(s, ",") {
		return parseRateList(s)
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("--ramp wants FROM:TO:STEP, got %q", s)
	}
	var v [3]float64
	for i, p := range parts {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || !(f > 0) {
			return nil, fmt.Errorf("--ramp %q: %q is not a positive number", s, p)
		}
		v[i] = f
	}
	if v[1] < v[0] {
		return nil, fmt.Errorf("--ramp %q: TO is below FROM", s)
	}
	if n := (v[1]-v[0])/v[2] + 1; n > StepsMax {
		return nil, fmt.Errorf("--ramp %q: %.0f steps, at most %d", s, n, StepsMax)
	}
	var rates []float64
	for r := v[0]; r <= v[1]*(1+1e-9); r += v[2] {
		rates = append(rates, r)
	}
	return rates, nil
}

// parseRateList reads R1,R2,... (ascending, at most StepsMax).
func parseRateList(s string) ([]float64, error) {
	parts := strings.Split(s, ",")
	if len(parts) > StepsMax {
		return nil, fmt.Errorf("--ramp %q: %d steps, at most %d", s, len(parts), StepsMax)
	}
	rates := make([]float64, len(parts))
	for i, p := range parts {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || !(f > 0) {
			return nil, fmt.Errorf("--ramp %q: %q is not a positive number", s, p)
		}
		if i > 0 && f <= rates[i-1] {
			return nil, fmt.Errorf("--ramp %q: the rates must ascend", s)
		}
		rates[i] = f
	}
	return rates, nil
}

func (o *options) validate() error {
	for _, r := range o.rates {
		if o.scenario != "idle" && !(r > 0 && r <= RateMax) {
			return fmt.Errorf("rate %v outside (0, %d]", r, RateMax)
		}
	}
	switch {
	case o.duration <= 0 || o.duration > DurationMax:
		return fmt.Errorf("--duration %v outside (0, %v]", o.duration, DurationMax)
	case o.drain <= 0 || o.drain > DurationMax:
		return fmt.Errorf("--drain %v outside (0, %v]", o.drain, DurationMax)
	case o.waitUp < 0 || o.waitUp > DurationMax:
		return fmt.Errorf("--wait-up %v outside [0, %v]", o.waitUp, DurationMax)
	case o.conns < 1 || o.conns > ConnsMax:
		return fmt.Errorf("--conns %d outside 1..%d", o.conns, ConnsMax)
	case o.accounts > AccountsMax:
		return fmt.Errorf("--accounts %d above %d", o.accounts, AccountsMax)
	case o.runs < 1 || o.runs > RunsMax:
		return fmt.Errorf("--runs %d outside 1..%d", o.runs, RunsMax)
	case o.subs < 0 || o.subs > SubscribersMax:
		return fmt.Errorf("--subs %d outside 0..%d", o.subs, SubscribersMax)
	case subsChannels[o.subsChannel].params == "":
		return fmt.Errorf("--subs-channel %q: newHeads, logs, svc_orderbook or svc_confirmedReceipts", o.subsChannel)
	case o.funder < 0 || o.funder >= len(node.DevKeys):
		return fmt.Errorf("--funder %d outside 0..%d", o.funder, len(node.DevKeys)-1)
	case len(o.metrics) > len(o.urls):
		return fmt.Errorf("--metrics names %d endpoints for %d node(s)", len(o.metrics), len(o.urls))
	}
	for _, m := range o.metrics {
		if _, err := newMetricsSource(m, o.allowRemote); err != nil {
			return err
		}
	}
	if _, err := newScenario(o.scenario, o); err != nil {
		return err
	}
	for _, u := range o.urls {
		if _, err := parseTarget(u, o.allowRemote); err != nil {
			return err
		}
	}
	return nil
}

// run measures every rate step on every node and writes the reports.
func run(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	targets := make([]*target, len(o.urls))
	for i, u := range o.urls {
		t, err := parseTarget(u, o.allowRemote)
		if err != nil {
			return err
		}
		if t.scen, err = newScenario(o.scenario, o); err != nil {
			return err
		}
		t.name = string(rune('A' + i))
		if i < len(o.metrics) {
			if t.metrics, err = newMetricsSource(o.metrics[i], o.allowRemote); err != nil {
				return err
			}
		}
		targets[i] = t
		if o.waitUp > 0 {
			if err := t.waitUp(ctx, o.waitUp); err != nil {
				return err
			}
		}
	}
	rep := &report{Scenario: o.scenario, Conns: o.conns, DurationS: o.duration.Seconds(), Runs: o.runs,
		P99MaxMs: ms(o.p99Max)}
	for _, t := range targets {
		rep.Nodes = append(rep.Nodes, &nodeReport{Name: t.name, URL: t.url})
	}
	var elapsed time.Duration // of the runs so far, for the time axis of the charts
	for _, rate := range o.rates {
		for i := range rep.Nodes {
			rep.Nodes[i].Steps = append(rep.Nodes[i].Steps, &stepReport{Rate: rate})
		}
		for r := range o.runs {
			for i, t := range targets {
				oc, err := measure(ctx, o, t, rate, stderr)
				if err != nil {
					return fmt.Errorf("node %s (%s), rate %.0f/s, run %d: %w", t.name, t.url, rate, r+1, err)
				}
				step := rep.Nodes[i].Steps[len(rep.Nodes[i].Steps)-1]
				step.Runs = append(step.Runs, newRunReport(oc, elapsed))
				elapsed += oc.elapsed()
			}
		}
	}
	rep.finish(kneeAchieved, o.p99Max)
	rep.writeTable(stdout)
	if o.jsonOut != "" {
		if err := rep.writeJSON(o.jsonOut); err != nil {
			return err
		}
	}
	if o.svgOut != "" {
		if err := os.WriteFile(o.svgOut, rep.svg(), 0o644); err != nil {
			return err
		}
	}
	if n := rep.errors(); n > 0 {
		return fmt.Errorf("%d requests failed (see the errors column)", n)
	}
	return ctx.Err()
}

// outcome is what one run measured.
type outcome struct {
	res     *load.OpenResult // the scenario's load (idle: nothing sent)
	refusal string           // the first answer the scenario refused, or ""
	subs    *subsResult      // nil without subscribers
	probe   *probeReport     // nil without --probe
	tick    *tickSummary     // nil without --metrics
}

// elapsed is the run's length on the report's time axis: its load's or its
// probe's, whichever ended last.
func (oc *outcome) elapsed() time.Duration {
	d := oc.res.Elapsed
	if oc.probe != nil {
		d = max(d, time.Duration(oc.probe.ElapsedS*float64(time.Second)))
	}
	return d
}

// measure prepares and times one run of the scenario against t at rate,
// with the probe beside it on connections of its own, and reads the tick
// histogram before and after.
func measure(ctx context.Context, o *options, t *target, rate float64, stderr io.Writer) (*outcome, error) {
	count := int(rate*o.duration.Seconds()) + 1
	if err := t.scen.prepare(ctx, t, count); err != nil {
		return nil, err
	}
	var before, holdBefore *promHistogram
	if t.metrics != nil {
		var err error
		if before, holdBefore, err = t.metrics.tickHistograms(ctx); err != nil {
			return nil, err
		}
	}
	subs, err := startSubscribers(ctx, t, o.subs, o.subsChannel)
	if err != nil {
		return nil, err
	}
	oc := &outcome{}
	var probeErr error
	var probing sync.WaitGroup
	if o.probe != nil {
		probing.Go(func() { oc.probe, probeErr = runProbe(ctx, o, t, stderr) })
	}
	oc.res, oc.refusal, err = drive(ctx, o, t, rate, stderr)
	probing.Wait()
	if err == nil && probeErr == nil && before != nil {
		var after, holdAfter *promHistogram
		if after, holdAfter, err = t.metrics.tickHistograms(ctx); err == nil {
			oc.tick, err = tickDelta(before, after, holdBefore, holdAfter)
		}
	}
	oc.subs = subs.stop()
	if err = errors.Join(err, probeErr); err != nil {
		return nil, err
	}
	return oc, nil
}

// drive runs the scenario's load against t at rate and returns it with the
// first answer the scenario refused ("" if none). idle sends nothing: it
// waits the run's duration.
func drive(ctx context.Context, o *options, t *target, rate float64, stderr io.Writer) (*load.OpenResult, string, error) {
	if _, ok := t.scen.(idle); ok {
		start := time.Now()
		select {
		case <-ctx.Done():
		case <-time.After(o.duration):
		}
		return &load.OpenResult{Elapsed: time.Since(start)}, "", nil
	}
	var refused refusals
	cfg := openConfig(o, t, o.conns, rate, t.name, stderr)
	cfg.Ordered, cfg.Next, cfg.Check = t.scen.ordered(), t.scen.next, refused.wrap(t.scen.check)
	res, err := load.RunOpen(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	if res.FirstError != nil && !errors.Is(ctx.Err(), context.Canceled) {
		fmt.Fprintf(stderr, "[%s] first connection error: %v\n", t.name, res.FirstError)
	}
	if s := refused.String(); s != "" {
		fmt.Fprintf(stderr, "[%s] first refused answer: %s\n", t.name, s)
	}
	return res, refused.String(), nil
}

// ms converts to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / 1e6 }
