package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ledgervenue/node/bench/load"
)

func TestProbeFlag(t *testing.T) {
	f := func(arg string, want *probeSpec, wantErr string) {
		t.Helper()
		o, err := parseFlags(flag.NewFlagSet("x", flag.ContinueOnError), []string{"--probe", arg})
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("--probe %q: %v, want %q", arg, err, wantErr)
			}
			return
		}
		if err != nil || *o.probe != *want {
			t.Fatalf("--probe %q: %+v (%v), want %+v", arg, o.probe, err, want)
		}
	}
	f("balance:3000", &probeSpec{kind: "balance", rate: 3000, conns: probeConnsDefault}, "")
	f("nonce:500:2", &probeSpec{kind: "nonce", rate: 500, conns: 2}, "")
	f("chainid:0.5", &probeSpec{kind: "chainid", rate: 0.5, conns: probeConnsDefault}, "")
	f("orderbook:100:1024", &probeSpec{kind: "orderbook", rate: 100, conns: 1024}, "")
	f("balance", nil, "KIND:RATE[:CONNS]")
	f("balance:1:2:3", nil, "KIND:RATE[:CONNS]")
	f("logs:100", nil, "unknown probe")
	f("balance:0", nil, "rate")
	f("balance:200001", nil, "rate")
	f("balance:x", nil, "rate")
	f("balance:100:0", nil, "conns")
	f("balance:100:1025", nil, "conns")
	o, err := parseFlags(flag.NewFlagSet("x", flag.ContinueOnError), nil)
	if err != nil || o.probe != nil {
		t.Fatalf("no --probe: %+v (%v)", o.probe, err)
	}
}

func TestIdleAndMetricsFlags(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		_, err := parseFlags(flag.NewFlagSet("x", flag.ContinueOnError), args)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Fatalf("%v: %v, want %q", args, err, want)
		}
	}
	f("add --probe", "--scenario", "idle")
	f("", "--scenario", "idle", "--probe", "balance:100")
	f("no --ramp", "--scenario", "idle", "--probe", "balance:100", "--ramp", "1:2:1")
	f("", "--metrics", "http://127.0.0.1:6060/metrics")
	f("", "--metrics", "http://localhost:6060/metrics,http://127.0.0.1:6061/metrics", "--compare", "http://127.0.0.1:8546")
	f("2 endpoints for 1 node", "--metrics", "http://127.0.0.1:6060/metrics,http://127.0.0.1:6061/metrics")
	f("loopback", "--metrics", "http://192.0.2.1:6060/metrics")
	f("", "--metrics", "http://192.0.2.1:6060/metrics", "--allow-remote")
	f("http://", "--metrics", "https://127.0.0.1:6060/metrics")
	f("http://", "--metrics", "127.0.0.1:6060")

	o, err := parseFlags(flag.NewFlagSet("x", flag.ContinueOnError), []string{"--scenario", "idle", "--probe", "nonce:10"})
	if err != nil || len(o.rates) != 1 || o.rates[0] != 0 {
		t.Fatalf("idle: rates %v (%v), want one step of no load", o.rates, err)
	}
}

func TestRampList(t *testing.T) {
	f := func(ramp string, want []float64, wantErr string) {
		t.Helper()
		got, err := parseRamp(ramp)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("%q: %v, want %q", ramp, err, wantErr)
			}
			return
		}
		if err != nil || len(got) != len(want) {
			t.Fatalf("%q: %v (%v), want %v", ramp, got, err, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: %v, want %v", ramp, got, want)
			}
		}
	}
	f("500,1000,1500,3000,5000", []float64{500, 1000, 1500, 3000, 5000}, "")
	f("100:300:100", []float64{100, 200, 300}, "")
	f("500,", nil, "positive")
	f("500,400", nil, "ascend")
	f("5,5", nil, "ascend")
	f(strings.Repeat("1,", StepsMax)+"1", nil, "steps")
}

// tickMetrics is /metrics as client_golang prints a histogram, with
// buckets 1 ms, 2 ms, 4 ms and +Inf.
func tickMetrics(c1, c2, c4, inf int) string {
	itoa := strconv.Itoa
	return "# HELP " + tickMetric + " x\n# TYPE " + tickMetric + " histogram\n" +
		tickMetric + `_bucket{le="0.001"} ` + itoa(c1) + "\n" +
		tickMetric + `_bucket{le="0.002"} ` + itoa(c2) + "\n" +
		tickMetric + `_bucket{le="0.004"} ` + itoa(c4) + "\n" +
		tickMetric + `_bucket{le="+Inf"} ` + itoa(inf) + "\n" +
		tickMetric + "_sum 1.5\n" + tickMetric + "_count " + itoa(inf) + "\n" +
		"ledgerd_auction_tick_intents_bucket{le=\"1\"} 7\n"
}

func TestTickDelta(t *testing.T) {
	parse := func(text string) *promHistogram {
		t.Helper()
		h, err := parseHistogram(bufio.NewScanner(strings.NewReader(text)), tickMetric)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	f := func(before, after string, want tickSummary) {
		t.Helper()
		got, err := tickDelta(parse(before), parse(after), nil, nil)
		if err != nil || math.Abs(got.Count-want.Count) > 1e-9 || math.Abs(got.P50Ms-want.P50Ms) > 1e-9 ||
			math.Abs(got.P99Ms-want.P99Ms) > 1e-9 {
			t.Fatalf("tickDelta = %+v (%v), want %+v", got, err, want)
		}
	}
	base := tickMetrics(10, 20, 30, 30)
	// 100 new ticks, all in (1 ms, 2 ms]: p50 halfway, p99 at 99 %.
	f(base, tickMetrics(10, 120, 130, 130), tickSummary{Count: 100, P50Ms: 1.5, P99Ms: 1.99})
	// 100 new ticks in the first bucket: interpolated from 0.
	f(base, tickMetrics(110, 120, 130, 130), tickSummary{Count: 100, P50Ms: 0.5, P99Ms: 0.99})
	// 50 in (2, 4] and 50 past the last bound: p99 is the last finite bound.
	f(base, tickMetrics(10, 20, 80, 130), tickSummary{Count: 100, P50Ms: 4, P99Ms: 4})
	// No tick: zeros.
	f(base, base, tickSummary{})

	if _, err := tickDelta(parse(tickMetrics(10, 20, 30, 30)), parse(tickMetrics(5, 20, 30, 30)), nil, nil); err == nil {
		t.Fatal("a bucket that went down must be refused")
	}
	// The hold histogram, when the node has it, gives the hold p99: 100
	// holds in (0, 1 ms] beside ticks in (1, 2 ms].
	holdText := func(tick string) string { return strings.ReplaceAll(tick, tickMetric, holdMetric) }
	hb, ha := parse(tickMetrics(10, 20, 30, 30)), parse(tickMetrics(10, 120, 130, 130))
	hold := func(text string) *promHistogram {
		h, err := parseHistogram(bufio.NewScanner(strings.NewReader(text)), holdMetric)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	got, err := tickDelta(hb, ha, hold(holdText(tickMetrics(10, 20, 30, 30))), hold(holdText(tickMetrics(110, 120, 130, 130))))
	if err != nil || got.HoldP99Ms == nil || math.Abs(*got.HoldP99Ms-0.99) > 1e-9 || math.Abs(got.P99Ms-1.99) > 1e-9 {
		t.Fatalf("tickDelta with holds = %+v (%v), want p99 1.99 and hold p99 0.99", got, err)
	}
	if _, err := parseHistogram(bufio.NewScanner(strings.NewReader(tickMetrics(1, 2, 3, 3))), holdMetric); !errors.Is(err, errNoHistogram) {
		t.Fatalf("a node without the hold histogram: %v, want errNoHistogram", err)
	}
	if _, err := parseHistogram(bufio.NewScanner(strings.NewReader("other_bucket{le=\"1\"} 1\n")), tickMetric); err == nil {
		t.Fatal("a missing histogram must be refused")
	}
	if _, err := parseHistogram(bufio.NewScanner(strings.NewReader(tickMetric+"_bucket{le=\"1\"} 1\n")), tickMetric); err == nil {
		t.Fatal("a histogram without +Inf must be refused")
	}
	// Two label sets are summed per bound.
	h := parse(tickMetric + `_bucket{shard="0",le="0.001"} 1` + "\n" + tickMetric + `_bucket{shard="1",le="0.001"} 2` + "\n" +
		tickMetric + `_bucket{shard="0",le="+Inf"} 3` + "\n" + tickMetric + `_bucket{shard="1",le="+Inf"} 4` + "\n")
	if len(h.les) != 2 || h.counts[0] != 3 || h.counts[1] != 7 {
		t.Fatalf("summed label sets: %+v", h)
	}
}

// openResult is a run that answered n requests with latencies spread
// evenly over [0, maxLatency), in one window.
func openResult(n int, maxLatency, elapsed time.Duration) *load.OpenResult {
	r := &load.OpenResult{Offered: int64(n), Done: int64(n), OK: int64(n), Elapsed: elapsed}
	for i := range n {
		d := maxLatency * time.Duration(i) / time.Duration(n)
		r.Latency.Record(d)
		r.Service.Record(d / 2)
	}
	r.Windows = []load.Window{{End: elapsed, Offered: int64(n), Done: int64(n), OK: int64(n),
		P50: r.Latency.Quantile(0.5), P99: r.Latency.Quantile(0.99), Max: r.Latency.Max()}}
	return r
}

// TestProbeReport: the probe's figures reach the JSON (per run and as
// medians), the table's probe columns and the SVG's probe series; the tick
// p99 likewise.
func TestProbeReport(t *testing.T) {
	spec := &probeSpec{kind: "balance", rate: 1000, conns: 8}
	rep := &report{Scenario: "mm", Conns: 32, DurationS: 1, Runs: 3, Nodes: []*nodeReport{{Name: "A", URL: "http://127.0.0.1:8545"}}}
	var start time.Duration
	for _, rate := range []float64{500, 1000} {
		step := &stepReport{Rate: rate}
		for run := range 3 {
			oc := &outcome{res: openResult(int(rate), 20*time.Millisecond, time.Second),
				probe: newProbeReport(spec, openResult(1000, time.Duration(run+1)*time.Millisecond*time.Duration(rate/500), time.Second), ""),
				tick:  &tickSummary{Count: 2, P50Ms: 1, P99Ms: float64(run+1) * rate / 100}}
			step.Runs = append(step.Runs, newRunReport(oc, start))
			start += oc.elapsed()
		}
		rep.Nodes[0].Steps = append(rep.Nodes[0].Steps, step)
	}
	rep.finish(kneeAchieved, 100*time.Millisecond)

	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got report // what a reader of the JSON sees
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for i, s := range got.Nodes[0].Steps {
		p := s.Runs[1].Probe
		if p == nil || p.Kind != "balance" || p.Rate != 1000 || p.Conns != 8 || p.OK != 1000 || len(p.Windows) != 1 || s.Runs[1].Tick == nil {
			t.Fatalf("step %d: run's probe %+v, tick %+v", i, p, s.Runs[1].Tick)
		}
		// The runs' probe p99 are about 1, 2, 3 ms (x2 at 1000/s): the
		// median is the second run's.
		if m := s.ProbeMedian; m == nil || m.P99Ms != p.P99Ms || m.P99Ms < 1.9*float64(i+1) || m.P99Ms > 2.1*float64(i+1) {
			t.Fatalf("step %d: probe median %+v, run 2's p99 %v", i, m, p.P99Ms)
		}
		if m := s.TickMedian; m == nil || m.P99Ms != 2*float64(5*(i+1)) || m.Count != 2 {
			t.Fatalf("step %d: tick median %+v", i, m)
		}
	}
	if !bytes.Contains(b, []byte(`"probe":{"kind":"balance","rate":1000,"conns":8,"achieved":`)) ||
		!bytes.Contains(b, []byte(`"probe_median":{"achieved":`)) || !bytes.Contains(b, []byte(`"tick":{"count":2,`)) {
		t.Fatalf("JSON field names: %.600s", b)
	}

	var table bytes.Buffer
	rep.writeTable(&table)
	for _, want := range []string{"probe: balance at 1000/s on 8 connections", "probe p99", "tick p99", "20.00"} {
		if !strings.Contains(table.String(), want) {
			t.Fatalf("table lacks %q:\n%s", want, table.String())
		}
	}
	svg := string(rep.svg())
	if strings.Count(svg, ">A probe p99<") != 2 || strings.Count(svg, ">A tick p99<") != 2 {
		t.Fatalf("svg: want the probe and tick p99 series in the time chart and the ramp chart:\n%.2000s", svg)
	}
}

// TestIdleReport: an idle run is the probe alone; the table shows no
// scenario figures and no knee.
func TestIdleReport(t *testing.T) {
	rep := &report{Scenario: "idle", Conns: 8, DurationS: 1, Runs: 1, Nodes: []*nodeReport{{Name: "A", URL: "http://127.0.0.1:8545"}}}
	oc := &outcome{res: &load.OpenResult{Elapsed: time.Second},
		probe: newProbeReport(&probeSpec{kind: "balance", rate: 100, conns: 8}, openResult(100, time.Millisecond, time.Second), "")}
	rep.Nodes[0].Steps = []*stepReport{{Rate: 0, Runs: []*runReport{newRunReport(oc, 0)}}}
	rep.finish(kneeAchieved, 100*time.Millisecond)
	if rep.Nodes[0].KneeRate != 0 || rep.errors() != 0 || rep.Nodes[0].Steps[0].ProbeMedian.Achieved != 100 {
		t.Fatalf("idle: knee %v, errors %d, probe %+v", rep.Nodes[0].KneeRate, rep.errors(), rep.Nodes[0].Steps[0].ProbeMedian)
	}
	var table bytes.Buffer
	rep.writeTable(&table)
	if !regexp.MustCompile(`A +- +- +-`).MatchString(table.String()) || !strings.Contains(table.String(), "probe p99") {
		t.Fatalf("idle table:\n%s", table.String())
	}
	oc.probe.Errors = 3
	if rep.errors() != 3 {
		t.Fatalf("errors %d, want the probe's 3", rep.errors())
	}
}
