package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

func ordersOptions(clock string) options {
	return options{scenario: "orders", duration: time.Second, conns: 2, pipeline: 2, runs: 1,
		requests: 1_000_000, seed: "orders-test", clock: clock, fillSample: 2000}
}

// TestOrdersRun runs the orders scenario for about a second with 4 accounts
// against the in-process node on the wall clock: orders must be admitted
// without a refusal, every sampled order must land in a tick that follows
// its sending by less than a few seconds, and the crossing orders must fill.
// earlyInclusionMax bounds how far before its send time an order's tick may
// be: the wall-clock ticker's lag behind a boundary.
const earlyInclusionMax = 100 * time.Millisecond

func TestOrdersRun(t *testing.T) {
	e, err := startEnv("wall")
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	spot, perp := ordersMarket(), perpMarket()
	for _, m := range []*clob.MarketConfig{&spot, &perp} {
		t.Run(m.Name, func(t *testing.T) { ordersRunOn(t, e, m) })
	}
}

func ordersRunOn(t *testing.T, e *env, m *clob.MarketConfig) {
	o := ordersOptions("wall")
	r, err := ordersOnce(context.Background(), e, &o, m, 1, 400, o.duration, o.fillSample)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printRun(&out, "run", r.send)
	printOrdersRun(&out, r)
	t.Logf("\n%s", out.String())
	switch {
	case r.send.Done == 0 || r.errors() != 0:
		t.Fatalf("%d orders answered, %d errors: %v %v", r.send.Done, r.errors(), r.refused, r.problemText)
	case r.sampled == 0 || r.landed != r.sampled:
		t.Fatalf("%d sampled orders, %d landed", r.sampled, r.landed)
	// An order sent just after a boundary can be included early, in the tick
	// of that boundary when the wall-clock ticker has not run it yet: its
	// tick time is then a little before its send time (docs/auction.md).
	case r.tickMin <= -earlyInclusionMax || r.tick.Max() > 3*time.Second || r.tick.Quantile(0.5) <= 0:
		t.Fatalf("submit→tick latency: min %v p50 %v max %v", r.tickMin, r.tick.Quantile(0.5), r.tick.Max())
	case r.filled == 0 || r.fillRate() < 0.5:
		t.Fatalf("%d of %d landed orders filled", r.filled, r.landed)
	}
}

// TestPerpSmoke runs the perp scenario through run: the orders scenario on
// the spot market, then on the perp market, and the ratio of their rates.
func TestPerpSmoke(t *testing.T) {
	o := ordersOptions("wall")
	o.scenario, o.duration, o.runs, o.fillSample = "perp", 300*time.Millisecond, 1, 20
	var out bytes.Buffer
	if err := run(context.Background(), &o, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"on WETH/USD", "on ETH-PERP", "of 20 sampled orders, 20 landed", "perp/spot median orders/s:"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("%s", out.String())
}

// TestOrdersSmoke runs the scenario through run, on the manual clock that
// the scenario moves along the wall clock, and checks the report's lines.
func TestOrdersSmoke(t *testing.T) {
	o := ordersOptions("manual")
	o.duration, o.runs, o.fillSample = 300*time.Millisecond, 2, 50
	var out bytes.Buffer
	if err := run(context.Background(), &o, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"== orders: 4 accounts", "clock manual", "run 2 ours", "submit→tick", "median ours",
		"median submit→tick", "of 50 sampled orders, 50 landed"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("%s", out.String())
}

// TestOrderIntent checks the generated orders decode back to themselves and
// cross: buyers above the mid, sellers below, whole lots and steps, IOC.
func TestOrderIntent(t *testing.T) {
	spot, perp := ordersMarket(), perpMarket()
	if perp.Kind != clob.Perp || midSteps(&perp) != 300_000 {
		t.Fatalf("perp market %s: mid %d steps, want the 3000 oracle at the 0.01 step", perp.Name, midSteps(&perp))
	}
	for _, m := range []*clob.MarketConfig{&spot, &perp} {
		orderIntentsOn(t, m)
	}
}

func orderIntentsOn(t *testing.T, m *clob.MarketConfig) {
	mid := new(uint256.Int).Mul(uint256.NewInt(midSteps(m)), &m.TickPrecision)
	for account := range 4 {
		for nonce := range uint64(8) {
			in := orderIntent(m, account, nonce, 1_000_000_000)
			var env clob.Envelope
			if reason := abi.Decode(abi.AppendSubmitOrder(nil, in), chainID, clob.Address{1}, &env); reason != clob.OK {
				t.Fatalf("account %d order %d: decode: %v", account, nonce, reason)
			}
			got := env.Intents[0]
			if got != *in {
				t.Fatalf("account %d order %d: decoded %+v, want %+v", account, nonce, got, *in)
			}
			var lots, rem uint256.Int
			lots.DivMod(&in.Size, &m.LotSize, &rem)
			crosses := in.Price.Gt(mid)
			if !isBuyer(account) {
				crosses = in.Price.Lt(mid)
			}
			if !rem.IsZero() || lots.IsZero() || lots.Uint64() > orderLotsMax || !crosses ||
				(in.Side == clob.Buy) != isBuyer(account) || in.Flags != clob.FlagIOC || in.Type != clob.Limit {
				t.Fatalf("account %d order %d: %+v", account, nonce, *in)
			}
		}
	}
}

func TestRefusalLog(t *testing.T) {
	l := refusalLog{max: 2}
	ok := []byte(`{"jsonrpc":"2.0","id":1,"result":"0x01"}`)
	bad := []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"execution reverted","data":"0x08c379a0` +
		`0000000000000000000000000000000000000000000000000000000000000020` +
		`0000000000000000000000000000000000000000000000000000000000000004` +
		`6e6f706500000000000000000000000000000000000000000000000000000000"}}`)
	if !l.check(200, ok) || l.check(200, bad) || l.check(500, ok) || l.check(200, bad) {
		t.Fatal("check accepted a refusal or refused a hash")
	}
	if len(l.first) != 2 || l.first[0] != "3 execution reverted: nope" || !strings.HasPrefix(l.first[1], "status 500") {
		t.Fatalf("kept %q", l.first)
	}
}

func TestOrderOptions(t *testing.T) {
	f := func(mutate func(*options), wantOK bool) {
		t.Helper()
		o := ordersOptions("wall")
		mutate(&o)
		if err := o.check(); (err == nil) != wantOK {
			t.Fatalf("options %+v: %v, want ok=%v", o, err, wantOK)
		}
	}
	f(func(o *options) {}, true)
	f(func(o *options) { o.orders = -1 }, false)
	f(func(o *options) { o.orders = txsMax }, true)
	f(func(o *options) { o.orders = txsMax + 1 }, false)
	f(func(o *options) { o.fillSample = 0 }, true)
	f(func(o *options) { o.fillSample = fillSampleMax + 1 }, false)
	o := ordersOptions("wall")
	o.conns, o.pipeline = 1, 1
	if err := run(context.Background(), &o, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "at least 2 accounts") {
		t.Fatalf("one account: %v", err)
	}
}
