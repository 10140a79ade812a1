package main

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"
)

func soakOptions() options {
	return options{scenario: "soak", duration: 3 * time.Second, sample: 500 * time.Millisecond, warmup: 0.2,
		conns: 4, pipeline: 2, runs: 1, requests: 100_000_000, seed: "smoke", clock: "wall"}
}

// TestSoak builds ./cmd/ledgerd, soaks it for 3 s and checks the report's
// figures are sane. About 15 s with a warm build cache.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs the ledgerd binary")
	}
	o := soakOptions()
	var out bytes.Buffer
	reports, err := runSoak(context.Background(), &o, &out)
	t.Logf("%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 {
		t.Fatalf("%d reports, want 1", len(reports))
	}
	r := reports[0]
	switch {
	case r.acked <= 0:
		t.Fatalf("acked %d", r.acked)
	case len(r.samples) < 3:
		t.Fatalf("%d samples, want at least 3", len(r.samples))
	case r.slopeSamples < 2 || math.IsNaN(r.slope) || math.IsNaN(r.anonSlope):
		t.Fatalf("slope %v over %d samples", r.slope, r.slopeSamples)
	case r.rssStart <= 0 || r.rssMax < r.rssEnd || r.rssMax < r.rssStart:
		t.Fatalf("RSS start %d end %d max %d", r.rssStart, r.rssEnd, r.rssMax)
	case r.meanRate <= 0 || r.medianRate <= 0:
		t.Fatalf("rates %v mean, %v median", r.meanRate, r.medianRate)
	case r.errorCount != 0 || r.unanswered != 0:
		t.Fatalf("errors %s, unanswered %d", r.errors, r.unanswered)
	case r.restartListen <= 0 || r.restartWrite < r.restartListen || r.writeAttempts < 1:
		t.Fatalf("restart: listening after %v, first write after %v (attempts %d)", r.restartListen, r.restartWrite, r.writeAttempts)
	case r.noncesAfter != uint64(r.acked)+1:
		t.Fatalf("nonces after the restart add up to %d, want %d", r.noncesAfter, r.acked+1)
	case r.signed < r.acked:
		t.Fatalf("signed %d < acked %d", r.signed, r.acked)
	}
	for _, want := range []string{"RSS MB", "anon MB", "B/tx anonymous", "slope after warm-up", "first write accepted after", "refusals 0; errors 0"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q", want)
		}
	}
}

func TestSoakOptions(t *testing.T) {
	f := func(mutate func(*options), wantOK bool) {
		t.Helper()
		o := soakOptions()
		mutate(&o)
		if err := o.check(); (err == nil) != wantOK {
			t.Fatalf("options %+v: %v, want ok=%v", o, err, wantOK)
		}
	}
	f(func(o *options) {}, true)
	f(func(o *options) { o.duration = soakDurationMax }, true)
	f(func(o *options) { o.duration = soakDurationMax + 1 }, false)
	f(func(o *options) { o.scenario, o.duration = "transfer", durationMax+1 }, false) // the hour is soak's only
	f(func(o *options) { o.sample = sampleMin }, true)
	f(func(o *options) { o.sample = sampleMin - 1 }, false)
	f(func(o *options) { o.sample = o.duration + 1 }, false)
	f(func(o *options) { o.duration, o.sample = soakDurationMax, sampleMin }, true)
	f(func(o *options) { o.warmup = warmupMax }, true)
	f(func(o *options) { o.warmup = -0.1 }, false)
	f(func(o *options) { o.warmup = math.NaN() }, false)
	f(func(o *options) { o.soakBins = "a,b" }, true)
	f(func(o *options) { o.soakBins = "a,b,c" }, false)
	f(func(o *options) { o.soakBins = "a," }, false)
	f(func(o *options) { o.conns, o.pipeline = 4096, soakAccountsMax/4096 }, true)
	f(func(o *options) { o.conns, o.pipeline = 4096, soakAccountsMax/4096+1 }, false)
	f(func(o *options) { o.pipeline = 0 }, false)
}

func TestLeastSquaresSlope(t *testing.T) {
	f := func(xs, ys []float64, want float64) {
		t.Helper()
		got := leastSquaresSlope(xs, ys)
		if math.IsNaN(want) != math.IsNaN(got) || !math.IsNaN(want) && math.Abs(got-want) > 1e-9 {
			t.Fatalf("slope of %v, %v = %v, want %v", xs, ys, got, want)
		}
	}
	f(nil, nil, math.NaN())
	f([]float64{1}, []float64{5}, math.NaN())
	f([]float64{3, 3}, []float64{1, 2}, math.NaN())
	f([]float64{0, 1, 2}, []float64{10, 12, 14}, 2)
	f([]float64{0, 1, 2, 3}, []float64{5, 5, 5, 5}, 0)
	f([]float64{0, 1, 2, 3}, []float64{0, 2, 1, 3}, 0.8)
}

func TestClassifyAnswer(t *testing.T) {
	f := func(status int, body, wantKind string, wantRefusal bool) {
		t.Helper()
		kind, refusal := classifyAnswer(status, []byte(body))
		if kind != wantKind || refusal != wantRefusal {
			t.Fatalf("classifyAnswer(%d, %s) = %q, %v; want %q, %v", status, body, kind, refusal, wantKind, wantRefusal)
		}
	}
	f(503, "", "HTTP 503", true)
	f(400, "", "HTTP 400", false)
	f(200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error","data":"node overloaded: too many inputs awaiting durability"}}`,
		"-32603 Internal error: node overloaded: too many inputs awaiting durability", true)
	f(200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"transaction validation failed","data":"Past nonce: tx nonce 1, expected 2"}}`,
		"-32000 transaction validation failed: Past nonce: tx nonce 1, expected 2", false)
	f(200, `{"jsonrpc":"2.0","id":3,"result":null}`, "unexpected answer", false)
	f(200, `not json`, "unexpected answer", false)
}

func TestAnswerID(t *testing.T) {
	f := func(body string, want int, wantOK bool) {
		t.Helper()
		if got, ok := answerID([]byte(body)); got != want || ok != wantOK {
			t.Fatalf("answerID(%s) = %d, %v; want %d, %v", body, got, ok, want, wantOK)
		}
	}
	f(`{"jsonrpc":"2.0","id":17,"result":"0x1"}`, 17, true)
	f(`{"jsonrpc":"2.0","id":0,"error":{}}`, 0, true)
	f(`{"jsonrpc":"2.0","id":null,"error":{}}`, 0, false)
	f(`{"jsonrpc":"2.0"}`, 0, false)
}

// TestSoakSenderRefusal: a refused transfer goes out again, unchanged,
// before the account's next one; an error ends the run.
func TestSoakSenderRefusal(t *testing.T) {
	keys, _ := deriveKeys("smoke", 0, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newSoakSender(keys, 2, sinkAddress("smoke"), cancel)
	s.startSigners(ctx, 1)
	next := s.next(ctx)
	first := next(0, 1) // account 1
	refused := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"node overloaded"}}`
	if s.check(200, []byte(refused)) {
		t.Fatal("a refusal counted as acknowledged")
	}
	if again := next(0, 3); !bytes.Equal(again, first) {
		t.Fatalf("after a refusal account 1 sent %s, want %s again", again, first)
	}
	if !s.check(200, []byte(`{"jsonrpc":"2.0","id":1,"result":"0xab"}`)) || s.acked.Load() != 1 {
		t.Fatal("an answer with a hash not counted as acknowledged")
	}
	if second := next(0, 5); bytes.Equal(second, first) {
		t.Fatal("after an acknowledgement account 1 sent the same transfer again")
	}
	s.check(200, []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"transaction validation failed"}}`))
	if ctx.Err() == nil || s.errors.total != 1 || s.refusals.total != 1 {
		t.Fatalf("after an error: ctx %v, %d errors, %d refusals", ctx.Err(), s.errors.total, s.refusals.total)
	}
	if err := s.waitSigners(); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotPauses(t *testing.T) {
	log := "2026/11/25 01:39:19 snapshot at input 100000 stored: 100208 bytes, 4730 compressed; the sequencer paused 457.109µs to take it\n" +
		"other line\n" +
		"2026/11/25 01:39:24 snapshot at input 200000 stored: 100208 bytes, 4852 compressed; the sequencer paused 11.5ms to take it\n" +
		"2026/11/25 01:39:25 snapshot at input 300000 stored: 1 bytes, 1 compressed; the sequencer paused garbage to take it\n"
	n, longest := snapshotPauses(log)
	if n != 2 || longest != 11500*time.Microsecond {
		t.Fatalf("got %d snapshots, longest %v; want 2, 11.5ms", n, longest)
	}
}
