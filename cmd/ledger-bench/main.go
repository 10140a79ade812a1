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
	"sync/atomic"
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
	var url, compare, ramp string
	var rate float64
	fs.StringVar(&url, "url", "http://127.0.0.1:8545", "node to drive: http://, https:// or ws:// URL")
	fs.StringVar(&compare, "compare", "", "second node: run the same scenario against both, alternately, and print the ratios")
	fs.StringVar(&o.scenario, "scenario", "balance", "balance, chainid, transfer, orders, mm or subs (see docs/load.md)")
	fs.Float64Var(&rate, "rate", 1000, "offered requests per second")
	fs.StringVar(&ramp, "ramp", "", "FROM:TO:STEP: step the rate from FROM to TO and report the knee (instead of --rate)")
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
	var err error
	if ramp != "" {
		o.rates, err = parseRamp(ramp)
	} else {
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

// parseRamp reads FROM:TO:STEP into the rates FROM, FROM+STEP, ... <= TO.
func parseRamp(s string) ([]float64, error) {
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

func (o *options) validate() error {
	for _, r := range o.rates {
		if !(r > 0 && r <= RateMax) {
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
				res, subs, refusal, err := measure(ctx, o, t, rate, stderr)
				if err != nil {
					return fmt.Errorf("node %s (%s), rate %.0f/s, run %d: %w", t.name, t.url, rate, r+1, err)
				}
				step := rep.Nodes[i].Steps[len(rep.Nodes[i].Steps)-1]
				step.Runs = append(step.Runs, newRunReport(res, subs, refusal, elapsed))
				elapsed += res.Elapsed
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

// measure prepares and times one run of the scenario against t at rate. It
// returns what the subscribers saw and the first answer the scenario
// refused ("" if none).
func measure(ctx context.Context, o *options, t *target, rate float64, stderr io.Writer) (*load.OpenResult, *subsResult, string, error) {
	count := int(rate*o.duration.Seconds()) + 1
	if err := t.scen.prepare(ctx, t, count); err != nil {
		return nil, nil, "", err
	}
	subs, err := startSubscribers(ctx, t, o.subs, o.subsChannel)
	if err != nil {
		return nil, nil, "", err
	}
	var refusal atomic.Pointer[string] // the first refused answer
	check := func(status int, body []byte) bool {
		ok := t.scen.check(status, body)
		if !ok && refusal.Load() == nil {
			s := fmt.Sprintf("status %d: %.300s", status, body)
			refusal.CompareAndSwap(nil, &s)
		}
		return ok
	}
	cfg := load.OpenConfig{Addr: t.addr, Path: t.path, Conns: o.conns, Rate: rate, Duration: o.duration,
		DrainTimeout: o.drain, Ordered: t.scen.ordered(), Next: t.scen.next, Check: check,
		AllowRemote: o.allowRemote, Dial: t.dial}
	if !o.quiet {
		var prev time.Duration // end of the previous window
		cfg.Progress = func(w *load.Window) {
			span := (w.End - prev).Seconds()
			prev = w.End
			fmt.Fprintf(stderr, "[%s %.0f/s] %5.1fs  offered %6.0f/s  achieved %6.0f/s  p50 %7.2fms  p99 %7.2fms  errors %d\n",
				t.name, rate, w.End.Seconds(), float64(w.Offered)/span, float64(w.OK)/span, ms(w.P50), ms(w.P99), w.Errors)
		}
	}
	res, err := load.RunOpen(ctx, cfg)
	sres := subs.stop()
	if err != nil {
		return nil, nil, "", err
	}
	if res.FirstError != nil && !errors.Is(ctx.Err(), context.Canceled) {
		fmt.Fprintf(stderr, "[%s] first connection error: %v\n", t.name, res.FirstError)
	}
	first := ""
	if r := refusal.Load(); r != nil {
		first = *r
		fmt.Fprintf(stderr, "[%s] first refused answer: %s\n", t.name, first)
	}
	return res, sres, first, nil
}

// ms converts to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / 1e6 }
