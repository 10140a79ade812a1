package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/ledgervenue/node/bench/load"
	"github.com/ledgervenue/node/net/node"
)

// probeConnsDefault is a probe's connections when --probe names none.
const probeConnsDefault = 8

// probeSpec is a parsed --probe KIND:RATE[:CONNS]: a read that runs beside
// the scenario, on its own connections, for the same duration as every run.
type probeSpec struct {
	kind  string
	rate  float64 // requests per second, open loop
	conns int
}

// parseProbe reads --probe KIND:RATE[:CONNS] ("" gives nil: no probe).
func parseProbe(s string) (*probeSpec, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("--probe wants KIND:RATE[:CONNS], got %q", s)
	}
	p := &probeSpec{kind: parts[0], conns: probeConnsDefault}
	if _, err := newReads(p.kind); err != nil {
		return nil, fmt.Errorf("--probe %q: %w", s, err)
	}
	var err error
	if p.rate, err = strconv.ParseFloat(parts[1], 64); err != nil || !(p.rate > 0 && p.rate <= RateMax) {
		return nil, fmt.Errorf("--probe %q: rate %q outside (0, %d]", s, parts[1], RateMax)
	}
	if len(parts) == 3 {
		if p.conns, err = strconv.Atoi(parts[2]); err != nil || p.conns < 1 || p.conns > ConnsMax {
			return nil, fmt.Errorf("--probe %q: conns %q outside 1..%d", s, parts[2], ConnsMax)
		}
	}
	return p, nil
}

// newReads returns the fixed read requests of a probe kind (and of the
// balance and chainid scenarios).
func newReads(kind string) (*reads, error) {
	dev := func(method string) [][]byte {
		bodies := make([][]byte, len(node.DevKeys))
		for i := range bodies {
			bodies[i] = []byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":["` +
				common.Address(node.DevAddress(i)).Hex() + `","latest"]}`)
		}
		return bodies
	}
	switch kind {
	case "balance":
		return &reads{bodies: dev("eth_getBalance")}, nil
	case "nonce":
		return &reads{bodies: dev("eth_getTransactionCount")}, nil
	case "chainid":
		return &reads{bodies: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`)}}, nil
	case "orderbook":
		id := common.Hash(node.DevMarkets()[0].ID).Hex()
		return &reads{bodies: [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"ob_getOrderbook","params":["` + id + `",10]}`)},
			want: []byte(`"result":{`)}, nil
	}
	return nil, fmt.Errorf("unknown probe %q (balance, nonce, chainid, orderbook)", kind)
}

// refusals keeps the first answer a check refused, for the report.
type refusals struct{ first atomic.Pointer[string] }

// wrap returns check, keeping the first answer it refuses.
func (r *refusals) wrap(check func(status int, body []byte) bool) func(int, []byte) bool {
	return func(status int, body []byte) bool {
		ok := check(status, body)
		if !ok && r.first.Load() == nil {
			s := fmt.Sprintf("status %d: %.300s", status, body)
			r.first.CompareAndSwap(nil, &s)
		}
		return ok
	}
}

// String returns the first refused answer, or "".
func (r *refusals) String() string {
	if s := r.first.Load(); s != nil {
		return *s
	}
	return ""
}

// openConfig is a run of cfg's shape against t: its connections, the
// scenario's or the probe's, over t's transport; progress lines go to
// stderr tagged label unless quiet.
func openConfig(o *options, t *target, conns int, rate float64, label string, stderr io.Writer) load.OpenConfig {
	cfg := load.OpenConfig{Addr: t.addr, Path: t.path, Conns: conns, Rate: rate, Duration: o.duration,
		DrainTimeout: o.drain, AllowRemote: o.allowRemote, Dial: t.dial}
	if !o.quiet {
		var prev time.Duration // end of the previous window
		cfg.Progress = func(w *load.Window) {
			span := (w.End - prev).Seconds()
			prev = w.End
			fmt.Fprintf(stderr, "[%s %.0f/s] %5.1fs  offered %6.0f/s  achieved %6.0f/s  p50 %7.2fms  p99 %7.2fms  errors %d\n",
				label, rate, w.End.Seconds(), float64(w.Offered)/span, float64(w.OK)/span, ms(w.P50), ms(w.P99), w.Errors)
		}
	}
	return cfg
}

// runProbe runs o.probe against t for one run's duration.
func runProbe(ctx context.Context, o *options, t *target, stderr io.Writer) (*probeReport, error) {
	p := o.probe
	r, err := newReads(p.kind)
	if err != nil {
		return nil, err
	}
	var refused refusals
	cfg := openConfig(o, t, p.conns, p.rate, t.name+" probe "+p.kind, stderr)
	cfg.Next, cfg.Check = r.next, refused.wrap(r.check)
	res, err := load.RunOpen(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	if res.FirstError != nil && !errors.Is(ctx.Err(), context.Canceled) {
		fmt.Fprintf(stderr, "[%s probe] first connection error: %v\n", t.name, res.FirstError)
	}
	if s := refused.String(); s != "" {
		fmt.Fprintf(stderr, "[%s probe] first refused answer: %s\n", t.name, s)
	}
	return newProbeReport(p, res, refused.String()), nil
}
