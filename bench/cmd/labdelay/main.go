// Command labdelay measures how closely the latency a client sees follows
// what lab_setLatency injected (docs/lab.md, "Delivery faults"): against a
// running `ledgerd --dev`, per transport (HTTP keep-alive, WebSocket) it
// times N undelayed eth_chainId calls, then N under a fixed rule of MS ms
// for every answer, and prints the undelayed latency's p50 and p99 and the
// error (latency - MS) p50 and p99, in µs, one line per transport; and,
// as a yardstick taken in the same run, how late a Go timer of MS ms fires
// in this process (p50, p99):
//
//	http base_p50_us=61 base_p99_us=140 err_p50_us=180 err_p99_us=650
//	timer late_p50_us=90 late_p99_us=400
//
// go run ./bench/cmd/labdelay -url http://127.0.0.1:8545 -n 200 -ms 50
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8545", "the node's JSON-RPC URL (WebSocket: the same host and port)")
	n := flag.Int("n", 200, "calls per series (at most 100000)")
	ms := flag.Int("ms", 50, "the fixed delay injected, ms")
	flag.Parse()
	if *n < 1 || *n > 100_000 {
		fail(fmt.Errorf("-n must be 1..100000"))
	}
	ctx := context.Background()
	for _, tr := range []string{"http", "ws"} {
		target := *url
		if tr == "ws" {
			target = "ws" + strings.TrimPrefix(target, "http")
		}
		c, err := gethrpc.DialContext(ctx, target)
		if err != nil {
			fail(err)
		}
		base := series(ctx, c, *n)
		var id string
		if err := c.CallContext(ctx, &id, "lab_setLatency", map[string]any{"scope": "all", "answers": map[string]any{"ms": *ms}}); err != nil {
			fail(err)
		}
		delayed := series(ctx, c, *n)
		if err := c.CallContext(ctx, nil, "lab_clearLatency", id); err != nil {
			fail(err)
		}
		c.Close()
		for i := range delayed {
			delayed[i] -= time.Duration(*ms) * time.Millisecond
		}
		fmt.Printf("%s base_p50_us=%d base_p99_us=%d err_p50_us=%d err_p99_us=%d\n", tr,
			q(base, 0.50), q(base, 0.99), q(delayed, 0.50), q(delayed, 0.99))
	}
	late := make([]time.Duration, *n)
	d := time.Duration(*ms) * time.Millisecond
	for i := range late {
		fired := make(chan time.Duration, 1)
		start := time.Now()
		time.AfterFunc(d, func() { fired <- time.Since(start) - d })
		late[i] = <-fired
	}
	fmt.Printf("timer late_p50_us=%d late_p99_us=%d\n", q(late, 0.50), q(late, 0.99))
}

// series times n sequential eth_chainId calls.
func series(ctx context.Context, c *gethrpc.Client, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		start := time.Now()
		var id hexutil.Uint64
		if err := c.CallContext(ctx, &id, "eth_chainId"); err != nil {
			fail(err)
		}
		out[i] = time.Since(start)
	}
	return out
}

// q is the p quantile in µs (nearest rank).
func q(ds []time.Duration, p float64) int64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "labdelay:", err)
	os.Exit(1)
}
