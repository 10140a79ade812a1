// Command loadgen benchmarks the node end to end. In one process it starts
// the full node (temp datadir, dev genesis) and the net/http baseline
// (bench/baseline) on loopback ports, drives them with the same raw-TCP
// client (bench/load) and settings in alternating runs, and prints medians
// and the ratio ours/baseline. The transfer scenario drives only the node:
// the baseline has no write path.
//
// Scenarios:
//
//	chainid   eth_chainId, ours vs baseline
//	balance   eth_getBalance over the ten dev accounts, ours vs baseline
//	transfer  EIP-1559 transfers from conns*pipeline fresh accounts, each
//	          sending its pre-signed transactions one after another; plus
//	          the sender-recovery bound GOMAXPROCS / t_recovery
//	all       the three in turn
//
// Every run stops by itself after -duration (or -requests); the whole
// command needs about runs * (2 * duration) per read scenario and
// runs * duration per transfer scenario, plus set-up.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"
)

// options are the command's flags.
type options struct {
	scenario   string
	duration   time.Duration
	conns      int
	pipeline   int
	runs       int
	requests   int64  // per run
	txs        int    // transfers per account per run; 0 sizes them from a warm-up
	seed       string // derives the transfer accounts
	clock      string
	cpuProfile string
	// recoveryTxs sizes the recovery measurement; not a flag, tests shrink it.
	recoveryTxs int
}

// Flag bounds: keep a run, and the whole command, finite.
const (
	runsMax     = 100
	durationMax = 10 * time.Minute
	txsMax      = 1 << 20
)

func main() {
	o := options{recoveryTxs: recoveryTxs}
	flag.StringVar(&o.scenario, "scenario", "transfer", "chainid, balance, transfer or all")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "length of each timed run")
	flag.IntVar(&o.conns, "conns", 16, "keep-alive connections")
	flag.IntVar(&o.pipeline, "pipeline", 1, "requests in flight per connection")
	flag.IntVar(&o.runs, "runs", 1, "timed runs per server (alternating ours, baseline)")
	flag.Int64Var(&o.requests, "requests", 100_000_000, "requests per run at most")
	flag.IntVar(&o.txs, "txs", 0, "transfers per account per run (0: sized from a warm-up run)")
	flag.StringVar(&o.seed, "seed", "loadgen", "seed of the transfer accounts' keys")
	flag.StringVar(&o.clock, "clock", "wall", "node clock: wall or manual")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole process (client and servers) here")
	flag.Parse()
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := profiled(o.cpuProfile, func() error { return run(ctx, &o, os.Stdout) }); err != nil {
		stop()
		log.Fatalf("loadgen: %v", err)
	}
}

func (o *options) check() error {
	switch {
	case o.scenario != "chainid" && o.scenario != "balance" && o.scenario != "transfer" && o.scenario != "all":
		return fmt.Errorf("-scenario must be chainid, balance, transfer or all, got %q", o.scenario)
	case o.duration <= 0 || o.duration > durationMax:
		return fmt.Errorf("-duration must be in (0, %v], got %v", durationMax, o.duration)
	case o.runs < 1 || o.runs > runsMax:
		return fmt.Errorf("-runs must be in 1..%d, got %d", runsMax, o.runs)
	case o.requests < 1:
		return fmt.Errorf("-requests must be positive, got %d", o.requests)
	case o.txs < 0 || o.txs > txsMax:
		return fmt.Errorf("-txs must be in 0..%d, got %d", txsMax, o.txs)
	case o.clock != "wall" && o.clock != "manual":
		return fmt.Errorf("-clock must be wall or manual, got %q", o.clock)
	}
	return nil // conns and pipeline are checked by load.Run
}

func profiled(path string, f func() error) error {
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot create CPU profile: %w", err)
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		return err
	}
	defer pprof.StopCPUProfile()
	return f()
}

// run starts both servers and runs the chosen scenarios, writing the report
// to w. It fails if a run saw errors or the servers' answers differ.
func run(ctx context.Context, o *options, w io.Writer) error {
	if err := o.check(); err != nil {
		return err
	}
	e, err := startEnv(o.clock)
	if err != nil {
		return err
	}
	defer e.close()
	fmt.Fprintf(w, "loadgen: %s %s/%s GOMAXPROCS=%d NumCPU=%d; conns=%d pipeline=%d duration=%v runs=%d clock=%s\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU(),
		o.conns, o.pipeline, o.duration, o.runs, o.clock)
	fmt.Fprintf(w, "ours %s, baseline %s, datadir %s\n", e.oursAddr, e.baseAddr, e.dir)
	scenarios := []string{o.scenario}
	if o.scenario == "all" {
		scenarios = []string{"chainid", "balance", "transfer"}
	}
	for _, s := range scenarios {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch s {
		case "chainid":
			err = runReads(ctx, w, e, o, "chainid", chainIDBodies())
		case "balance":
			err = runReads(ctx, w, e, o, "balance", balanceBodies())
		case "transfer":
			err = runTransfers(ctx, w, e, o)
		}
		if err != nil {
			return fmt.Errorf("scenario %s: %w", s, err)
		}
	}
	return nil
}

// warmupDuration is the untimed run before a scenario's timed runs.
func warmupDuration(d time.Duration) time.Duration { return min(d/5, time.Second) }
