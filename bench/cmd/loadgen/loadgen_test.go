package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ledgervenue/node/bench/load"
)

func smokeOptions(scenario string) options {
	return options{scenario: scenario, duration: 250 * time.Millisecond, conns: 2, pipeline: 2, runs: 2,
		requests: 1_000_000, seed: "smoke", clock: "manual", recoveryTxs: 20}
}

// TestSmoke runs every scenario briefly against a real node and baseline;
// run fails on any error answer, on answers that differ between the
// servers, and on ledger nonces that disagree with the client's count.
func TestSmoke(t *testing.T) {
	f := func(o options, want ...string) {
		t.Helper()
		var out bytes.Buffer
		if err := run(context.Background(), &o, &out); err != nil {
			t.Fatalf("scenario %s: %v\n%s", o.scenario, err, out.String())
		}
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				t.Fatalf("scenario %s: output lacks %q:\n%s", o.scenario, w, out.String())
			}
		}
		t.Logf("%s", out.String())
	}
	f(smokeOptions("chainid"), `answer {"jsonrpc":"2.0","id":1,"result":"0x50d"}`, "run 2 baseline", "ratio ours/baseline")
	f(smokeOptions("balance"), `answer {"jsonrpc":"2.0","id":1,"result":"0x21e19e0c9bab2400000"}`, "median baseline")
	f(smokeOptions("transfer"), "recovery bound", "run 2 ours", "group commits", "of it")
	fixed := smokeOptions("transfer")
	fixed.txs, fixed.clock, fixed.runs = 3, "wall", 1
	f(fixed, "3 transfers per account;")
}

func TestOptionsLimits(t *testing.T) {
	f := func(mutate func(*options), wantOK bool) {
		t.Helper()
		o := smokeOptions("all")
		mutate(&o)
		if err := o.check(); (err == nil) != wantOK {
			t.Fatalf("options %+v: %v, want ok=%v", o, err, wantOK)
		}
	}
	f(func(o *options) {}, true)
	f(func(o *options) { o.scenario = "nope" }, false)
	f(func(o *options) { o.duration = 0 }, false)
	f(func(o *options) { o.duration = durationMax }, true)
	f(func(o *options) { o.duration = durationMax + 1 }, false)
	f(func(o *options) { o.runs = 0 }, false)
	f(func(o *options) { o.runs = runsMax }, true)
	f(func(o *options) { o.runs = runsMax + 1 }, false)
	f(func(o *options) { o.requests = 0 }, false)
	f(func(o *options) { o.txs = -1 }, false)
	f(func(o *options) { o.txs = txsMax }, true)
	f(func(o *options) { o.txs = txsMax + 1 }, false)
	f(func(o *options) { o.clock = "sundial" }, false)

	bad := smokeOptions("chainid")
	bad.conns = load.ConnsMax + 1
	if err := run(context.Background(), &bad, &bytes.Buffer{}); err == nil {
		t.Fatal("run accepted too many connections")
	}
}

func TestSizeTxs(t *testing.T) {
	f := func(rate float64, d time.Duration, accounts, want int) {
		t.Helper()
		if got := sizeTxs(rate, d, accounts); got != want {
			t.Fatalf("sizeTxs(%v, %v, %d) = %d, want %d", rate, d, accounts, got, want)
		}
	}
	f(1000, time.Second, 10, 201)
	f(0, time.Second, 10, 1)
	f(1e12, time.Minute, 1, txsMax)
}

func TestMedian(t *testing.T) {
	f := func(rates []int64, want float64) {
		t.Helper()
		rs := make([]*load.Result, len(rates))
		for i, n := range rates {
			rs[i] = &load.Result{Done: n, Elapsed: time.Second}
		}
		if got := median(rs, func(r *load.Result) float64 { return r.Rate() }); got != want {
			t.Fatalf("median of %v = %v, want %v", rates, got, want)
		}
	}
	f(nil, 0)
	f([]int64{5}, 5)
	f([]int64{9, 1, 5}, 5)
	f([]int64{9, 1, 5, 7}, 6)
}

func TestDeriveKeys(t *testing.T) {
	_, a := deriveKeys("s", 1, 3)
	_, b := deriveKeys("s", 1, 3)
	_, c := deriveKeys("s", 2, 3)
	if a[0] != b[0] || a[2] != b[2] || a[0] == a[1] || a[0] == c[0] {
		t.Fatalf("keys not deterministic per (seed, run, index): %v %v %v", a, b, c)
	}
}

// TestSmokeWithdraw runs the withdraw scenario briefly: withdrawals,
// transfers and sampled claims.
func TestSmokeWithdraw(t *testing.T) {
	o := smokeOptions("withdraw")
	o.runs, o.fillSample = 1, 50
	var out bytes.Buffer
	if err := run(context.Background(), &o, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"run 1 withdraw", "run 1 transfer", "withdraw/transfer median rate", "batch→claimable over all runs"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "(n 0)") {
		t.Fatalf("no sampled withdrawal became claimable:\n%s", out.String())
	}
}
