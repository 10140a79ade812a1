// Command loadgen benchmarks the node end to end. In one process it starts
// the full node (temp datadir, dev genesis) and the net/http baseline
// (bench/baseline) on loopback ports, drives them with the same raw-TCP
// client (bench/load) and settings in alternating runs, and prints medians
// and the ratio ours/baseline. The transfer scenario drives only the node:
// the baseline has no write path. The soak scenario runs the ledgerd binary
// as a child process instead (see Soak below).
//
// Scenarios:
//
//	chainid   eth_chainId, ours vs baseline
//	balance   eth_getBalance over the ten dev accounts, ours vs baseline
//	transfer  EIP-1559 transfers from conns*pipeline fresh accounts, each
//	          sending its pre-signed transactions one after another; plus
//	          the sender-recovery bound GOMAXPROCS / t_recovery
//	orders    limit IOC submitOrder transactions on the WETH/USD dev market
//	          from conns*pipeline fresh accounts (half buyers above a fixed
//	          mid, half sellers below it, so they cross), each sending its
//	          pre-signed orders one after another: orders/s admitted and the
//	          send latency; then, for up to -fill-sample of the admitted
//	          orders, the submit→tick latency (the receipt's blockNumber,
//	          the tick time in µs, minus the wall time the order was sent)
//	          and the fraction that received a fill (OrderFilled logs)
//	subs      S WebSocket subscribers (-subs, default 1, 100 and 1000) of
//	          svc_orderbook (depth 20) or svc_orders_v2 (-channel) on the
//	          WETH/USD dev market, each S with permessage-deflate off and
//	          on (-deflate), while 4 accounts send crossing limit IOC orders
//	          at -subs-rate orders/s so every tick has work: notifications/s
//	          over all subscribers, ticks covered, the tick→notification
//	          latency (receive wall time − the payload's tick time) and the
//	          bytes read from the socket per notification; each run is
//	          followed by one of the same size against bench/baseline's
//	          net/http + gorilla/websocket broadcaster fed the same payload,
//	          and the ratios are printed (about a minute at the defaults)
//	withdraw  bridge withdrawals (one native unit each) from conns*pipeline
//	          fresh accounts, each sending its pre-signed withdraw
//	          transactions one after another, each run followed by a
//	          transfer run of the same size: withdrawals/s, their ratio to
//	          transfers/s, and for up to -fill-sample of them the time from
//	          their batch to claimable (withdraw.go)
//	all       the five in turn (not withdraw)
//	soak      (not part of all) the real ledgerd process under endless
//	          transfers, for its memory: see below
//
// Every run stops by itself after -duration (or -requests); the whole
// command needs about runs * (2 * duration) per read scenario, runs *
// duration per write scenario and, for subs, runs * duration per
// subscriber count and deflate setting, plus set-up (and, for orders, a
// second or so per run to let the last orders' tick run and to read their
// receipts). Orders need the auction clock to move: under -clock manual the
// orders scenario advances the node's clock to the wall time through
// admin_advanceTime every few milliseconds while it runs.
//
// # Soak
//
// The node must keep flat memory under endless load: history goes to disk.
// The soak scenario measures that on the real process, not the in-process
// node the other scenarios use:
//
//	go run ./bench/cmd/loadgen -scenario soak -duration 10m [-sample 5s] [-warmup 0.2]
//	    [-soak-bin OLD[,NEW]] [-keep-data] [-conns 16 -pipeline 1]
//
// For each binary in turn (by default ./cmd/ledgerd, built with
// CGO_ENABLED=0 into a temp dir; -soak-bin takes prebuilt ones) it starts
// `ledgerd --dev --datadir TMP --admin-token T --addr 127.0.0.1:0` on a fresh
// temp datadir, funds conns*pipeline fresh accounts through admin_deposit,
// and sends plain transfers from them for -duration, each account's one
// after another as the node acknowledges them (conns*pipeline senders, as
// in the transfer scenario). The transfers are signed on the fly by one
// signer goroutine per core, each keeping its accounts' bounded queues
// (aheadPerAccountMax, aheadMax in all) full ahead of the senders, so the
// client's memory stays flat too; the signing shares the cores with the
// node, and the report says how much CPU it took. Every -sample it reads
// the node's VmRSS (/proc/PID/status) and the datadir's size and prints
//
//	elapsed s   acked   tx/s (last interval)   RSS MB   disk MB   files MB
//
// where disk is the blocks the datadir's files take and files their
// apparent sizes (Badger preallocates its live files, so files moves in
// steps). At the end, per binary: transfers acknowledged, mean tx/s and
// the median of the per-interval rates; RSS at start, end and max, and the
// RSS slope in bytes per transfer, the least-squares fit of RSS against
// the acknowledged count over the samples after the first -warmup fraction
// of the run (flat memory: near 0); disk bytes per transfer, live and once
// the node stopped; refusals (HTTP 429/503, or an error saying the node is
// overloaded: the transfer goes again with the same nonce) and errors,
// each counted by code and message; the CPU time of the node, of signing
// and of the whole loadgen process. The first error ends the run (the
// account's nonces are out of step from there) and fails the command. Then
// it stops the node with SIGTERM, starts it again on the same datadir and
// reports the time from process start until it listens and until a first
// transfer (at the nonce eth_getTransactionCount gives) is accepted, and
// checks that the accounts' nonces add up to the acknowledged transfers
// plus that one. Last it stops the node and deletes the datadir, unless
// -keep-data.
//
// With two binaries it prints new/old (the second over the first) of the
// throughput, the RSS slope, the disk bytes per transfer and the restart
// time. To compare the working tree with an older commit:
//
//	git worktree add /tmp/old COMMIT
//	(cd /tmp/old && CGO_ENABLED=0 go build -o /tmp/ledgerd-old ./cmd/ledgerd)
//	CGO_ENABLED=0 go build -o /tmp/ledgerd-new ./cmd/ledgerd
//	go run ./bench/cmd/loadgen -scenario soak -duration 10m -soak-bin /tmp/ledgerd-old,/tmp/ledgerd-new
//	git worktree remove /tmp/old
//
// -duration is at most soakDurationMax (1 h) for soak, -requests still caps
// the transfers sent, and Ctrl-C kills the node and removes its datadir.
// Linux only: RSS and CPU come from /proc.
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
	"slices"
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
	seed       string // derives the transfer and order accounts
	orders     int    // orders per account per run; 0 sizes them from a warm-up
	fillSample int    // admitted orders per run whose receipts and fills are read
	clock      string
	cpuProfile string
	// subs scenario; empty or zero means the default.
	subs     string // subscriber counts, comma-separated
	channel  string // orderbook or orders_v2
	deflate  string // off, on or both
	subsRate int    // background orders/s
	// soak scenario
	soakBins string        // comma-separated prebuilt binaries; empty builds ./cmd/ledgerd
	sample   time.Duration // between readings of the node
	warmup   float64       // fraction of the run left out of the RSS slope
	keepData bool
	// recoveryTxs sizes the recovery measurement; not a flag, tests shrink it.
	recoveryTxs int
}

// Flag bounds: keep a run, and the whole command, finite.
const (
	runsMax     = 100
	durationMax = 10 * time.Minute
	txsMax      = 1 << 20
	// fillSampleMax bounds -fill-sample: the receipts read after each run.
	fillSampleMax = 100_000
)

func main() {
	o := options{recoveryTxs: recoveryTxs}
	flag.StringVar(&o.scenario, "scenario", "transfer", "chainid, balance, transfer, orders, subs, all (the five), perp (orders on spot, then on a perp market), withdraw (bridge withdrawals, then transfers) or soak")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "length of each timed run (soak: of each binary's run, up to 1h)")
	flag.IntVar(&o.conns, "conns", 16, "keep-alive connections")
	flag.IntVar(&o.pipeline, "pipeline", 1, "requests in flight per connection")
	flag.IntVar(&o.runs, "runs", 1, "timed runs per server (alternating ours, baseline)")
	flag.Int64Var(&o.requests, "requests", 100_000_000, "requests per run at most")
	flag.IntVar(&o.txs, "txs", 0, "transfers per account per run (0: sized from a warm-up run)")
	flag.IntVar(&o.orders, "orders", 0, "orders per account per run (0: sized from a warm-up run)")
	flag.IntVar(&o.fillSample, "fill-sample", 2000, "admitted orders per run whose submit→tick latency and fill are read")
	flag.StringVar(&o.seed, "seed", "loadgen", "seed of the transfer and order accounts' keys")
	flag.StringVar(&o.clock, "clock", "wall", "node clock: wall or manual")
	flag.StringVar(&o.subs, "subs", subsDefault, "subs: subscriber counts to run, comma-separated")
	flag.StringVar(&o.channel, "channel", "orderbook", "subs: channel, orderbook (svc_orderbook, depth 20) or orders_v2 (svc_orders_v2)")
	flag.StringVar(&o.deflate, "deflate", "both", "subs: permessage-deflate off, on or both (each S both ways)")
	flag.IntVar(&o.subsRate, "subs-rate", subsRateDefault, "subs: orders/s the background driver sends")
	flag.StringVar(&o.soakBins, "soak-bin", "", "soak: ledgerd binaries to measure one after the other, comma-separated, old first (default: build ./cmd/ledgerd)")
	flag.DurationVar(&o.sample, "sample", 5*time.Second, "soak: interval between readings of the node's RSS and datadir size")
	flag.Float64Var(&o.warmup, "warmup", 0.2, "soak: fraction of the run left out of the RSS slope")
	flag.BoolVar(&o.keepData, "keep-data", false, "soak: keep each binary's temp datadir")
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
	case !slices.Contains([]string{"chainid", "balance", "transfer", "orders", "subs", "all", "perp", "withdraw", "soak"}, o.scenario):
		return fmt.Errorf("-scenario must be chainid, balance, transfer, orders, subs, all, perp, withdraw or soak, got %q", o.scenario)
	case o.scenario == "soak":
		if err := o.checkSoak(); err != nil {
			return err
		}
	case o.duration <= 0 || o.duration > durationMax:
		return fmt.Errorf("-duration must be in (0, %v], got %v", durationMax, o.duration)
	}
	switch {
	case o.runs < 1 || o.runs > runsMax:
		return fmt.Errorf("-runs must be in 1..%d, got %d", runsMax, o.runs)
	case o.requests < 1:
		return fmt.Errorf("-requests must be positive, got %d", o.requests)
	case o.txs < 0 || o.txs > txsMax:
		return fmt.Errorf("-txs must be in 0..%d, got %d", txsMax, o.txs)
	case o.orders < 0 || o.orders > txsMax:
		return fmt.Errorf("-orders must be in 0..%d, got %d", txsMax, o.orders)
	case o.fillSample < 0 || o.fillSample > fillSampleMax:
		return fmt.Errorf("-fill-sample must be in 0..%d, got %d", fillSampleMax, o.fillSample)
	case o.clock != "wall" && o.clock != "manual":
		return fmt.Errorf("-clock must be wall or manual, got %q", o.clock)
	}
	if _, err := o.subsSettings(); err != nil {
		return err
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
	if o.scenario == "soak" { // the real binary: no in-process node
		_, err := runSoak(ctx, o, w)
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
		scenarios = []string{"chainid", "balance", "transfer", "orders", "subs"}
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
		case "orders":
			err = runOrders(ctx, w, e, o)
		case "perp":
			err = runPerp(ctx, w, e, o)
		case "withdraw":
			err = runWithdrawals(ctx, w, e, o)
		case "subs":
			err = runSubs(ctx, w, e, o)
		}
		if err != nil {
			return fmt.Errorf("scenario %s: %w", s, err)
		}
	}
	return nil
}

// warmupDuration is the untimed run before a scenario's timed runs.
func warmupDuration(d time.Duration) time.Duration { return min(d/5, time.Second) }
