// Command ledgerd runs the ledger RPC venue: JSON-RPC over HTTP on one port,
// backed by a durable intent log. Flags and wiring only; see net/node for
// the pipeline and net/rpc for the methods.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/bench/bots"
	"github.com/ledgervenue/node/bench/scenario"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/l1"
	"github.com/ledgervenue/node/net/metrics"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/ratelimit"
	"github.com/ledgervenue/node/net/replicate"
	"github.com/ledgervenue/node/net/rpc"
	"github.com/ledgervenue/node/net/server"
)

// ChainID is the network's chain id (0x50d).
const ChainID = 0x50d

type flags struct {
	genesisFlags
	replFlags
	addr, datadir, adminToken, clock, admin string
	l1                                      string // the bridged chain's JSON-RPC endpoint (net/l1)
	bots                                    string // the built-in bots' spec (bench/bots); "" runs none
	scenario                                string // a scenario file to play (bench/scenario: scenario.go)
	dumpState, loadState                    string // state files (anvil's flags: state.go)
	compat, ignoreSnapshots                 bool
	prefix                                  rpc.Prefix       // the service's own prefix on the wire
	rateLimit                               ratelimit.Config // --rate-limit (net/ratelimit); zero: off
	historyCache, snapshotEvery             int
	snapshotInterval, retain, trimMapped    time.Duration
	// transport bounds and the browser policy (net/server)
	headerTimeout, bodyTimeout time.Duration
	maxConnsPerIP, outboundMax int
	outboundTotalMax           int
	// request bounds of the dispatcher (net/rpc)
	workers, queueMax, queueBytesMax, wsInFlightMax, responseBytesMax int
	corsDomains, vhosts, wsOrigins                                    string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "replay" { // ledgerd replay --datadir DIR (replay.go)
		os.Exit(replayMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "nats" { // ledgerd nats --port 4222 (nats.go)
		os.Exit(natsMain(os.Args[2:]))
	}
	var f flags
	flag.StringVar(&f.addr, "addr", "127.0.0.1:8545", "HTTP listen address (JSON-RPC on every path)")
	flag.StringVar(&f.datadir, "datadir", "./data", "directory of the durable intent log")
	flag.StringVar(&f.adminToken, "admin-token", "", "bearer token for admin_* methods (generated and printed if empty)")
	flag.StringVar(&f.clock, "clock", "wall", "wall, or manual (time moves only through admin_advanceTime)")
	f.genesisFlags.register(flag.CommandLine, "")
	f.replFlags.register(flag.CommandLine)
	flag.BoolVar(&f.compat, "compat", false, "serve the shapes strict client decoders (ethers, go-ethereum) need where the spec deviates from Ethereum, and refusals in go-ethereum's words so ethers and viem classify them (docs/compat.md)")
	flag.Func("prefix", "the service's own names on the wire: svc (SPEC.md, the default) or pod (the live network's, for its SDK); methods and subscription types are accepted with either (docs/live.md)", func(v string) (err error) {
		f.prefix, err = rpc.ParsePrefix(v)
		return err
	})
	flag.Func("rate-limit", `emulate a venue's rate limits, off by default: comma-separated address=N/PERIOD (each client IP: N weight units a burst, refilled N per PERIOD), account=N/PERIOD (each signer of a transaction), cancel=N/PERIOD (the reserve that keeps cancel-only transactions possible when a budget is spent; default 20/10s), KIND.burst=B, weight.METHOD=W; e.g. address=1200/60s,account=300/10s (docs/lab.md, "Rate-limit emulation")`, func(v string) (err error) {
		if f.rateLimit, err = ratelimit.ParseSpec(v); err == nil {
			err = rpc.CheckRateLimits(&f.rateLimit)
		}
		return err
	})
	flag.StringVar(&f.l1, "l1", "", "JSON-RPC URL of the bridged chain: check it against the bridge configuration and credit its Deposit events (docs/bridge.md §6)")
	flag.StringVar(&f.bots, "bots", "", `start built-in market makers and takers (needs --dev and --clock wall): "default" or a spec like makers=2,takers=2,levels=5,seed=1 (docs/bots.md)`)
	flag.StringVar(&f.scenario, "scenario", "", "play this scenario file (needs --dev; sets the manual clock, which the scenario moves): an oracle path, the built-in bots and lab_ controls on a timeline, repeatable with its seed (docs/lab.md, \"Scenarios\")")
	flag.StringVar(&f.dumpState, "dump-state", "", "on shutdown, write the whole state (ledger, books, history) to this file, for --load-state or anvil_loadState (docs/anvil.md)")
	flag.StringVar(&f.loadState, "load-state", "", "start from the state in this file (written by --dump-state or anvil_dumpState); the data directory must be empty")
	flag.StringVar(&f.admin, "admin-addr", "", "serve Prometheus /metrics and net/http/pprof /debug/pprof/ on this address (e.g. 127.0.0.1:6060; docs/metrics.md)")
	flag.StringVar(&f.admin, "pprof", "", "the former name of --admin-addr")
	flag.IntVar(&f.historyCache, "history-cache", node.DefaultCacheEntries, "attested records kept in RAM; older ones are read from disk")
	flag.IntVar(&f.snapshotEvery, "snapshot-every", node.DefaultSnapshotEvery, "take a state snapshot after this many inputs (-1: never)")
	flag.DurationVar(&f.snapshotInterval, "snapshot-interval", node.DefaultSnapshotInterval, "take a state snapshot this long after the previous one, if any input arrived since")
	flag.BoolVar(&f.ignoreSnapshots, "ignore-snapshots", false, "replay the whole intent log at start-up instead of loading the newest snapshot (to check one)")
	flag.DurationVar(&f.retain, "retain", 0, "delete history attested longer ago than this (e.g. 24h; 0: keep everything)")
	flag.DurationVar(&f.trimMapped, "trim-mapped", node.TrimMappedEveryDefault, "hand the store's mapped table and log pages back to the kernel this often, so RSS shows the node's own memory (-1s: never)")
	flag.DurationVar(&f.headerTimeout, "http.header-timeout", server.DefaultHeaderTimeout, "time from a request's first byte to the end of its head; then 408 and close (-1s: none)")
	flag.DurationVar(&f.bodyTimeout, "http.body-timeout", server.DefaultBodyTimeout, "time from a request's first byte to the end of its body; then 408 and close (-1s: none)")
	flag.IntVar(&f.maxConnsPerIP, "max-conns-per-ip", server.DefaultMaxConnsPerIP, "open connections from one remote address; more get 503")
	flag.IntVar(&f.outboundMax, "outbound-max", server.DefaultOutboundMax, "bytes queued for one connection's socket (HTTP and WebSocket); a client that leaves more unread is closed")
	flag.IntVar(&f.outboundTotalMax, "outbound-total-max", server.DefaultOutboundTotalMax, "bytes queued for sockets over all connections; past it, a connection more than 64 KiB behind its client is closed")
	flag.IntVar(&f.workers, "rpc.workers", rpc.DefaultWorkers, "worker goroutines that run requests with writes (batches with a write, admin calls)")
	flag.IntVar(&f.queueMax, "rpc.queue", rpc.DefaultQueueMax, "requests with writes waiting for a worker, node-wide; more get 503 (HTTP) or -32005 (WebSocket)")
	flag.IntVar(&f.queueBytesMax, "rpc.queue-bytes", rpc.DefaultQueueBytesMax, "bytes of requests with writes queued or running, node-wide; more get 503 or -32005")
	flag.IntVar(&f.wsInFlightMax, "ws.inflight", rpc.DefaultWSInFlightMax, "messages of one WebSocket connection whose answer is owed later; more get -32005")
	flag.IntVar(&f.responseBytesMax, "rpc.batch-response-max-size", rpc.DefaultResponseBytesMax, "bytes of the answer to one request or batch; calls past it get -32600")
	flag.StringVar(&f.corsDomains, "http.corsdomain", strings.Join(server.DefaultOrigins, ","), "browser origins served over HTTP, comma-separated (scheme and port optional; * for any; empty for none)")
	flag.StringVar(&f.vhosts, "http.vhosts", strings.Join(server.DefaultVHosts, ","), "Host names served over HTTP besides IP literals, comma-separated (* for any)")
	flag.StringVar(&f.wsOrigins, "ws.origins", strings.Join(server.DefaultOrigins, ","), "browser origins allowed to open a WebSocket, comma-separated (scheme and port optional; * for any; empty for none)")
	flag.Parse()
	if err := run(&f); err != nil {
		log.Fatalf("ledgerd: %v", err)
	}
}

func run(f *flags) error {
	cfg := f.genesisFlags.config()
	cfg.DataDir, cfg.Clock, cfg.Logf = f.datadir, node.WallClock{}, log.Printf
	cfg.CacheEntries, cfg.SnapshotEvery, cfg.SnapshotInterval = f.historyCache, f.snapshotEvery, f.snapshotInterval
	cfg.Retain, cfg.IgnoreSnapshots, cfg.TrimMappedEvery = f.retain, f.ignoreSnapshots, f.trimMapped
	if f.withdrawalsPerBatch < 1 {
		return fmt.Errorf("--withdrawals-per-batch must be ≥ 1")
	}
	if f.historyCache < 1 || f.snapshotEvery == 0 || f.snapshotEvery < -1 || f.snapshotInterval <= 0 || f.retain < 0 || f.trimMapped == 0 {
		return fmt.Errorf("--history-cache must be ≥ 1, --snapshot-every ≥ 1 or -1, --snapshot-interval > 0, --retain ≥ 0, --trim-mapped > 0 or negative")
	}
	if f.headerTimeout == 0 || f.bodyTimeout == 0 || f.maxConnsPerIP < 1 || f.outboundMax < 1 || f.outboundTotalMax < 1 ||
		f.workers < 1 || f.queueMax < 1 || f.queueBytesMax < 1 || f.wsInFlightMax < 1 || f.responseBytesMax < 1 {
		return fmt.Errorf("--http.header-timeout and --http.body-timeout must be > 0 or negative, --max-conns-per-ip, --outbound-max, --outbound-total-max and the --rpc.*/--ws.inflight bounds ≥ 1")
	}
	if err := f.checkRepl(); err != nil {
		return err
	}
	if f.bots != "" {
		if !f.dev || f.clock != "wall" {
			return fmt.Errorf("--bots needs --dev and --clock wall (the bots trade on the dev markets with wall-clock deadlines)")
		}
		if _, err := bots.ParseSpec(f.bots); err != nil {
			return fmt.Errorf("--bots: %w", err)
		}
	}
	sc, err := f.loadScenario()
	if err != nil {
		return err
	}
	var manual *node.ManualClock
	switch f.clock {
	case "wall":
	case "manual":
		start := time.Now().UnixMicro()
		if sc != nil {
			start = scenario.StartUs // the same times in every play
		}
		manual = node.NewManualClock(start)
		cfg.Clock = manual
	default:
		return fmt.Errorf("--clock must be wall or manual, got %q", f.clock)
	}
	if f.adminToken == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		f.adminToken = hex.EncodeToString(b[:])
	}
	var chain *l1.Chain
	if f.l1 != "" { // checked before the node opens: a wrong chain refuses to start
		var err error
		if chain, err = l1.Dial(context.Background(), f.l1, &cfg.Bridge); err != nil {
			return err
		}
		defer chain.Close()
	}
	if err := faultHooks(&cfg); err != nil {
		return err
	}
	natsURL := f.nats
	if f.followers > 0 {
		ns, err := startEmbeddedNATS(f.datadir)
		if err != nil {
			return err
		}
		defer ns.Shutdown()
		natsURL = ns.ClientURL()
	}
	var rep *replicate.Replicator
	if natsURL != "" {
		var err error
		if f.addr, err = fixPort(f.addr); err != nil {
			return err
		}
		if rep, err = newReplicator(f, natsURL, f.publicURL(f.addr)); err != nil {
			return err
		}
		cfg.AfterAppend, cfg.Replicated, cfg.Follow = rep.AfterAppend, true, f.follow
	}
	n, err := node.Open(cfg)
	if err != nil {
		if rep != nil {
			rep.Close()
		}
		return err
	}
	if rep != nil {
		if err := rep.Start(n); err != nil {
			rep.Close()
			n.Close()
			return err
		}
	}
	if f.loadState != "" {
		if err := loadState(n, f); err != nil {
			n.Close()
			return err
		}
	}
	if sc != nil {
		if err := checkFresh(n, f); err != nil {
			n.Close()
			return err
		}
	}
	hub := rpc.StartHub(n, f.compat, f.prefix)
	rcfg := rpc.Config{Node: n, AdminToken: f.adminToken, Manual: manual, Hub: hub, Compat: f.compat, Prefix: f.prefix, Dev: f.dev,
		Workers: f.workers, QueueMax: f.queueMax, QueueBytesMax: f.queueBytesMax, WSInFlightMax: f.wsInFlightMax,
		ResponseBytesMax: f.responseBytesMax, RateLimit: f.rateLimit}
	msrc := metrics.Sources{Node: n, Hub: hub}
	if rep != nil {
		rcfg.Replication, msrc.Replication = rep, rep
	}
	var botCtl *bots.Controller // admin_startBots and --bots: dev mode on the wall clock only
	if f.dev && manual == nil {
		botCtl = bots.New(bots.Config{AdminToken: f.adminToken, Logf: log.Printf, NowMicros: n.Clock().NowMicros})
		rcfg.Bots = botCtl
	}
	var player *scenario.Player
	if sc != nil {
		player = scenario.New(sc, scenario.Config{AdminToken: f.adminToken, Logf: log.Printf, NowMicros: n.Clock().NowMicros})
		rcfg.Scenario = player
	}
	svc := rpc.New(rcfg)
	srv := server.New(svc, server.Config{Addr: f.addr, Multicore: true, HeaderTimeout: f.headerTimeout, BodyTimeout: f.bodyTimeout,
		MaxConnsPerIP: f.maxConnsPerIP, OutboundMax: f.outboundMax, OutboundTotalMax: f.outboundTotalMax,
		CORSDomains: list(f.corsDomains), VHosts: list(f.vhosts), WSOrigins: list(f.wsOrigins)})
	if err := srv.Start(); err != nil {
		svc.Close()
		n.Close()
		return err
	}
	if f.admin != "" {
		msrc.RPC, msrc.Server = svc, srv
		admin := metrics.AdminHandler(msrc)
		go func() { log.Println(metrics.ListenAndServe(f.admin, admin)) }()
	}
	if botCtl != nil {
		// Before the banner: a script that calls admin_startBots once it
		// reads the listening line must find the controller ready.
		botCtl.SetAddr(srv.Addr())
	}
	printBanner(f, srv.Addr(), n)
	var followers followerProcs
	if rep != nil {
		if f.follow {
			fmt.Printf("following through NATS JetStream at %s (stream %s); writes go to the leader\n", natsURL, f.stream)
		} else {
			fmt.Printf("leading through NATS JetStream at %s (stream %s); acknowledgements wait for the %s\n",
				natsURL, f.stream, map[string]string{"local": "local fdatasync", "stream": "stream too"}[f.ack])
		}
	}
	if f.followers > 0 {
		procs, urls, err := startFollowers(f, f.followers, natsURL, srv.Addr())
		if err != nil {
			log.Printf("followers: %v", err)
		}
		followers = procs
		for i, u := range urls {
			fmt.Printf("follower %d: %s (reads, subscriptions; writes go to the leader)\n", i+1, u)
		}
	}
	if botCtl != nil {
		if f.bots != "" {
			if err := botCtl.Start(f.bots); err != nil { // the spec was checked above
				log.Printf("bots: %v", err)
			}
		}
	}
	var play *scenarioRun
	if player != nil {
		play = startScenario(player, sc, srv.Addr())
	}
	stopPoller := func() {}
	if chain != nil {
		fmt.Printf("bridged chain %s (chain id %d): crediting the Deposit events of %s\n",
			f.l1, cfg.Bridge.ClaimChainID, common.Address(cfg.Bridge.SourceContract).Hex())
		ctx, cancel := context.WithCancel(context.Background())
		polled := make(chan struct{})
		go func() { chain.Run(ctx, n, log.Printf); close(polled) }()
		stopPoller = func() { cancel(); <-polled }
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sig:
	case <-play.exited():
	}
	log.Println("shutting down")
	if botCtl != nil {
		botCtl.Close() // the bots' last calls are answered while the server is up
	}
	play.stop() // as the bots
	stopPoller()
	followers.stop()
	if rep != nil && f.follow {
		rep.Close() // nothing more to apply before the node closes
	}
	hub.Close() // subscribers get -32021 while the connections are still up
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	flushCtx, cancelFlush := context.WithTimeout(ctx, time.Second)
	srv.WaitWSFlushed(flushCtx)
	cancelFlush()
	if err := srv.Stop(ctx); err != nil {
		log.Printf("stopping server: %v", err)
	}
	svc.Close() // the writes still queued run before the node closes
	if f.dumpState != "" {
		err = n.CloseDumping(f.dumpState)
	} else {
		err = n.Close()
	}
	if rep != nil {
		rep.Close() // a leader's publisher published what the node made durable
	}
	if err == nil {
		err = play.exitErr()
	}
	return err
}

func printBanner(f *flags, addr string, n *node.Node) {
	fmt.Printf("ledgerd listening on http://%s and ws://%s (JSON-RPC on any path)\n", addr, addr)
	fmt.Printf("chain id %d (0x%x), data in %s, clock %s, committee of %d\n", ChainID, ChainID, f.datadir, f.clock, f.validators)
	if f.dev && !f.follow { // a follower's banner is short: the leader printed the rest

		fmt.Println("dev accounts (10000 native, 100 WETH, 10 WBTC each):")
		for i, k := range node.DevKeys {
			a := node.DevAddress(i)
			fmt.Printf("  (%d) %s  key 0x%s\n", i, common.Address(a).Hex(), k)
		}
		fmt.Printf("dev markets on the orderbook %s, quoted in the native token %s (USD);\n",
			common.Address(core.OrderbookAddress).Hex(), common.Address(core.NativeToken).Hex())
		fmt.Println("prices and sizes are 18-decimal integers (2000 USD = 2000e18), deadlines µs on the auction grid:")
		for _, m := range append(node.DevMarkets(), node.DevPerpMarkets()...) {
			fmt.Printf("  %-9s id 0x%x  base %s %s\n", m.Name, m.ID[:], m.BaseSymbol, common.Address(m.Base).Hex())
			fmt.Printf("            price step %s, lot %s %s, auction every %d ms, maker fee %s %%, taker fee %s %%\n",
				units18(&m.TickPrecision), units18(&m.LotSize), m.BaseSymbol, m.IntervalUs/1000,
				units18(new(uint256.Int).Mul(&m.MakerFee, uint256.NewInt(100))), units18(new(uint256.Int).Mul(&m.TakerFee, uint256.NewInt(100))))
			if m.Kind == clob.Perp {
				fmt.Printf("            perpetual: max leverage %d, oracle from %s walking %d bps per tick (admin_setOraclePrice sets and freezes it)\n",
					m.Perp.MaxLeverage, units18(&m.Perp.OraclePrice), m.Perp.WalkBps)
			}
		}
		b := n.BridgeConfig()
		fmt.Printf("bridge %s: withdraw(token, recipient, amount, deadline) to chain %d, claimed at %s (GET /v1/bridge/config):\n",
			common.Address(core.BridgeAddress).Hex(), b.ClaimChainID, common.Address(b.SourceContract).Hex())
		for _, t := range b.Tokens {
			fmt.Printf("  %s -> %s, %d decimals there\n", common.Address(t.Token).Hex(), common.Address(t.L1Token).Hex(), t.Decimals)
		}
		if f.compat {
			fmt.Println("--compat: receipts and blocks in the shapes ethers and go-ethereum decode, refusals in go-ethereum's words (README, \"Client compatibility\"; docs/compat.md)")
		}
	}
	if f.prefix == rpc.PrefixPod {
		fmt.Printf("--prefix pod: the live network's names; its SDK takes rpcUrl http://%s, wsUrl ws://%s, restUrl http://%s/v1 (docs/live.md)\n", addr, addr, addr)
	}
	fmt.Printf("admin token: %s   (Authorization: Bearer <token>)\n", f.adminToken)
}

// list splits a comma-separated flag; "" is the empty (not the default) list.
func list(value string) []string {
	out := []string{}
	for _, e := range strings.Split(value, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// units18 writes an 18-decimal amount as a decimal number: 1e16 is "0.01".
func units18(v *uint256.Int) string {
	digits := fmt.Sprintf("%019s", v.Dec())
	whole, frac := digits[:len(digits)-18], strings.TrimRight(digits[len(digits)-18:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}
