// Command rlflood measures what the rate-limit emulation (--rate-limit,
// docs/lab.md) costs a read flood: eth_chainId over keep-alive HTTP
// connections against three ledgerd processes started from the same
// binary, in one run, their timed runs alternating (each run starting
// with the next mode):
//
//   - off: no --rate-limit (the default);
//   - pass: --rate-limit with a budget the flood never spends, so every
//     call takes the check's pass path;
//   - refuse: --rate-limit address=1/60s, so every call after the first
//     is refused -32005 (what a refusal costs the node).
//
// It prints each run's rate and the medians, with pass/off and
// refuse/off. Every answer is checked: a result in off and pass, the
// refusal in refuse.
//
//	go build -o bin/ledgerd ./cmd/ledgerd && go run ./bench/cmd/rlflood -bin bin/ledgerd
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ledgervenue/node/bench/load"
	"github.com/ledgervenue/node/bench/proc"
)

var body = []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`)

// mode is one ledgerd process and what its answers must hold.
type mode struct {
	name string
	args []string
	want []byte
	node *proc.Ledgerd
	runs []float64
}

func main() {
	bin := flag.String("bin", "bin/ledgerd", "the ledgerd binary")
	runs := flag.Int("runs", 5, "timed runs per mode (alternating)")
	duration := flag.Duration("duration", 3*time.Second, "length of each timed run")
	conns := flag.Int("conns", 16, "keep-alive connections")
	pipeline := flag.Int("pipeline", 4, "requests in flight per connection")
	flag.Parse()
	if *runs < 1 || *runs > 50 || *duration <= 0 || *duration > time.Minute {
		log.Fatal("rlflood: -runs must be in 1..50 and -duration in (0, 1m]")
	}
	modes := []*mode{
		{name: "off", want: []byte(`"result":"0x50d"`)},
		{name: "pass", args: []string{"--rate-limit", "address=1000000000/1ms"}, want: []byte(`"result":"0x50d"`)},
		{name: "refuse", args: []string{"--rate-limit", "address=1/60s"}, want: []byte(`"rate limit exceeded: address"`)},
	}
	for _, m := range modes {
		dir, err := os.MkdirTemp("", "rlflood-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		if m.node, err = proc.Start(*bin, append([]string{"--dev", "--datadir", dir}, m.args...)...); err != nil {
			log.Fatal(err)
		}
		defer m.node.Stop()
	}
	fmt.Printf("rlflood: %s/%s NumCPU=%d; conns=%d pipeline=%d duration=%v runs=%d\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), *conns, *pipeline, *duration, *runs)
	ctx := context.Background()
	run := func(m *mode, d time.Duration) *load.Result {
		r, err := load.Run(ctx, load.Config{Addr: strings.TrimPrefix(m.node.HTTP, "http://"), Conns: *conns, Pipeline: *pipeline,
			Duration: d, Requests: 1 << 40, Body: body, Check: func(status int, b []byte) bool { return status == 200 && bytes.Contains(b, m.want) }})
		if err != nil {
			log.Fatalf("rlflood %s: %v", m.name, err)
		}
		// The refuse mode's very first call passes; every other answer
		// must be the mode's.
		if r.Errors > 1 || r.FirstError != nil {
			log.Fatalf("rlflood %s: %d answers not as expected (first connection error %v)", m.name, r.Errors, r.FirstError)
		}
		return r
	}
	for _, m := range modes { // warm-up
		run(m, *duration/3)
	}
	for i := range *runs {
		for j := range modes { // each run starts with the next mode: no mode always runs first
			m := modes[(i+j)%len(modes)]
			r := run(m, *duration)
			m.runs = append(m.runs, r.Rate())
			fmt.Printf("run %d %-6s %9.0f req/s  p50 %v p99 %v\n", i+1, m.name, r.Rate(), r.Latency.Quantile(0.5), r.Latency.Quantile(0.99))
		}
	}
	med := map[string]float64{}
	for _, m := range modes {
		slices.Sort(m.runs)
		med[m.name] = m.runs[len(m.runs)/2]
		fmt.Printf("median %-6s %9.0f req/s\n", m.name, med[m.name])
	}
	fmt.Printf("ratio pass/off %.3f  refuse/off %.3f\n", med["pass"]/med["off"], med["refuse"]/med["off"])
}
