package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func subsOptions() options {
	return options{scenario: "subs", duration: 1500 * time.Millisecond, conns: 2, pipeline: 1, runs: 1,
		requests: 1_000_000, seed: "subs-test", clock: "wall", subs: "2"}
}

// TestSubsRun runs the subs scenario with 2 subscribers for 1.5 s each
// way (deflate off, then on) against the in-process node on the wall clock:
// every subscriber must get the window's ticks with a latency after the
// tick and below 2 s, without errors, and deflate must shrink the bytes on
// the wire. The baseline, run after each, must do the same with about the
// same JSON bytes per notification.
func TestSubsRun(t *testing.T) {
	e, err := startEnv("wall")
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	o := subsOptions()
	var out bytes.Buffer
	combos, err := subsScenario(context.Background(), &out, e, &o)
	t.Logf("\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(combos) != 2 || combos[0].deflate || !combos[1].deflate {
		t.Fatalf("want S=2 with deflate off then on, got %d combos", len(combos))
	}
	var wire [2]float64
	for i, cb := range combos {
		if cb.subs != 2 || len(cb.runs) != 1 || len(cb.base) != 1 {
			t.Fatalf("combo %d: S=%d with %d runs and %d of the baseline", i, cb.subs, len(cb.runs), len(cb.base))
		}
		for _, r := range []*subsRun{cb.runs[0], cb.base[0]} {
			switch {
			case r.allErrors() != 0:
				t.Fatalf("deflate %v base %v: %d errors: %v %v", r.deflate, r.base, r.allErrors(), r.errorText, r.driverRefused)
			case r.boundaries != 3 || r.ticks < 2 || r.frames < int64(2*r.ticks):
				t.Fatalf("deflate %v base %v: %d notifications over %d ticks of %d in the window", r.deflate, r.base, r.frames, r.ticks, r.boundaries)
			case r.lat.Count() != uint64(r.frames) || r.latMin <= 0 || r.lat.Max() >= 2*time.Second:
				t.Fatalf("deflate %v base %v: tick→notification latency min %v max %v over %d", r.deflate, r.base, r.latMin, r.lat.Max(), r.lat.Count())
			case r.all < r.frames || r.wirePer() <= 0 || r.payloadPer() < 2*subsDepth*40: // 20 resting levels a side
				t.Fatalf("deflate %v base %v: %d notifications, %.0f wire B and %.0f json B each", r.deflate, r.base, r.all, r.wirePer(), r.payloadPer())
			}
		}
		if q, ok := cb.ratios(); !ok || q.payload < 0.9 || q.payload > 1.1 || q.p50 <= 0 || q.p99 <= 0 {
			t.Fatalf("deflate %v: ratios %+v", cb.deflate, q)
		}
		wire[i] = cb.runs[0].wirePer()
	}
	if wire[1] >= wire[0] || combos[0].runs[0].wirePer() < combos[0].runs[0].payloadPer() {
		t.Fatalf("wire bytes per notification: %.0f without deflate, %.0f with it", wire[0], wire[1])
	}
	for _, want := range []string{"== subs: svc_orderbook (depth 20) on WETH/USD", "resting book: 20 bids", "S=2     deflate off run 1  ours",
		"S=2     deflate off run 1  base", "S=2     deflate on  median ours", "S=2     deflate on  median base",
		"S=2     deflate on  ratio baseline/ours", "subs medians", "p50 b/o", "permessage-deflate carries"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q", want)
		}
	}
}

func TestSubsOptions(t *testing.T) {
	f := func(mutate func(*options), wantOK bool) {
		t.Helper()
		o := subsOptions()
		mutate(&o)
		if err := o.check(); (err == nil) != wantOK {
			t.Fatalf("options %+v: %v, want ok=%v", o, err, wantOK)
		}
	}
	f(func(o *options) {}, true)
	f(func(o *options) { o.subs, o.channel, o.deflate, o.subsRate = "", "", "", 0 }, true) // the defaults
	f(func(o *options) { o.subs = "1, 100,1000" }, true)
	f(func(o *options) { o.subs = "0" }, false)
	f(func(o *options) { o.subs = "1,x" }, false)
	f(func(o *options) { o.subs = "10001" }, false)
	f(func(o *options) { o.subs = strings.Repeat("1,", subsCountsMax) + "1" }, false)
	f(func(o *options) { o.channel = "orders_v2" }, true)
	f(func(o *options) { o.channel = "candles" }, false)
	f(func(o *options) { o.deflate = "off" }, true)
	f(func(o *options) { o.deflate = "maybe" }, false)
	f(func(o *options) { o.subsRate = subsRateMin - 1 }, false)
	f(func(o *options) { o.subsRate = subsRateMax + 1 }, false)
	c, err := (&options{subs: "1,100,1000"}).subsSettings()
	if err != nil || len(c.counts) != 3 || c.counts[2] != 1000 || c.channel != "orderbook" || len(c.deflates) != 2 || c.rate != subsRateDefault {
		t.Fatalf("defaults: %+v %v", c, err)
	}
}

func TestSubscribeRequest(t *testing.T) {
	m := ordersMarket()
	got := string(subscribeRequest("orderbook", m.ID))
	want := `{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["svc_orderbook",{"orderbook_ids":["0x0000000000000000000000000000000000000000000000000000000000000001"],"depth":20}]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := string(subscribeRequest("orders_v2", m.ID)); !strings.Contains(got, `["svc_orders_v2",{"orderbook_ids":["0x`) || strings.Contains(got, "depth") {
		t.Fatalf("orders_v2: %s", got)
	}
}
