package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/ledgervenue/node/bench/load"
	"github.com/ledgervenue/node/net/node"
)

func chainIDBodies() [][]byte {
	return [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`)}
}

// balanceBodies asks for each dev account's balance in turn; they all hold
// the same amount, so every answer is the same bytes.
func balanceBodies() [][]byte {
	out := make([][]byte, len(node.DevKeys))
	for i := range out {
		a := node.DevAddress(i)
		out[i] = []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x` +
			hex.EncodeToString(a[:]) + `","latest"]}`)
	}
	return out
}

type target struct{ name, addr string }

// runReads compares ours and the baseline on a read scenario: a warm-up
// each, then alternating timed runs. Every answer must equal the one both
// servers gave to a probe before timing.
func runReads(ctx context.Context, w io.Writer, e *env, o *options, name string, bodies [][]byte) error {
	want, err := agreedAnswer(ctx, e, bodies)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== %s: %d distinct request(s), answer %s\n", name, len(bodies), want)
	targets := [2]target{{"ours", e.oursAddr}, {"baseline", e.baseAddr}}
	config := func(addr string, d time.Duration) load.Config {
		return load.Config{Addr: addr, Conns: o.conns, Pipeline: o.pipeline, Requests: o.requests, Duration: d,
			Next:  func(conn int, seq uint64) []byte { return bodies[(uint64(conn)+seq)%uint64(len(bodies))] },
			Check: func(status int, body []byte) bool { return status == 200 && bytes.Equal(body, want) }}
	}
	for _, t := range targets {
		if _, err := load.Run(ctx, config(t.addr, warmupDuration(o.duration))); err != nil {
			return err
		}
	}
	var results [2][]*load.Result
	for i := range o.runs {
		for j, t := range targets {
			r, err := load.Run(ctx, config(t.addr, o.duration))
			if err != nil {
				return err
			}
			printRun(w, fmt.Sprintf("run %d %s", i+1, t.name), r)
			results[j] = append(results[j], r)
		}
	}
	ours, base := summarize(results[0]), summarize(results[1])
	printSummary(w, "median ours", &ours)
	printSummary(w, "median baseline", &base)
	fmt.Fprintf(w, "  ratio ours/baseline: throughput %.2fx, p50 latency %.2fx, p99 latency %.2fx\n",
		ours.rate/base.rate, ratio(ours.p50, base.p50), ratio(ours.p99, base.p99))
	if ours.errors+base.errors > 0 {
		return fmt.Errorf("%d errors (ours %d, baseline %d)", ours.errors+base.errors, ours.errors, base.errors)
	}
	return nil
}

// agreedAnswer asks both servers every body once and returns the answer
// they all share.
func agreedAnswer(ctx context.Context, e *env, bodies [][]byte) ([]byte, error) {
	var want []byte
	for _, body := range bodies {
		for _, addr := range [...]string{e.oursAddr, e.baseAddr} {
			got, err := probe(ctx, addr, "", body)
			if err != nil {
				return nil, err
			}
			if want == nil {
				want = got
			}
			if !bytes.Equal(got, want) {
				return nil, fmt.Errorf("answers differ: %s answered %s to %s, expected %s", addr, got, body, want)
			}
		}
	}
	return want, nil
}

// probe sends one request with the load client and returns the answer.
func probe(ctx context.Context, addr, header string, body []byte) ([]byte, error) {
	var answer []byte
	status := 0
	r, err := load.Run(ctx, load.Config{Addr: addr, Conns: 1, Pipeline: 1, Requests: 1, Duration: 10 * time.Second,
		Header: header, Body: body, Check: func(s int, b []byte) bool {
			status, answer = s, bytes.Clone(b)
			return true
		}})
	switch {
	case err != nil:
		return nil, err
	case r.Done != 1:
		return nil, fmt.Errorf("no answer from %s to %s: %v", addr, body, r.FirstError)
	case status != 200:
		return nil, fmt.Errorf("%s answered status %d to %s: %s", addr, status, body, answer)
	}
	return answer, nil
}
