package hostile

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ledgervenue/node/bench/proc"
	"github.com/ledgervenue/node/net/node"
)

var ledgerd string // the binary, built once

// TestMain builds ./cmd/ledgerd, or takes the binary LEDGERD_BIN names.
func TestMain(m *testing.M) { os.Exit(proc.Main(m, "../..", &ledgerd)) }

// What every phase must hold to.
const (
	// RSSCeiling bounds the node's resident memory during any attack. An
	// idle dev node holds about 30 MB.
	RSSCeiling = 1 << 30
	// attackMax bounds an attack that pushes until the node closes it.
	attackMax = 60 * time.Second
	// afterMax bounds each call of the check after an attack.
	afterMax = 2 * time.Second
	// headerTimeout is the node's --http.header-timeout in this suite:
	// short, so that the slow-header attack ends inside its phase.
	headerTimeout = 2 * time.Second
	chainID       = 0x50d
)

// scale is how hard the attackers push.
type scale struct {
	phase       time.Duration
	slowConns   int // slow-header connections
	pipeConns   int // pipelining clients that never read
	wsReadless  int // WebSocket clients that subscribe and never read
	percentiles int // eth_feeHistory reward percentiles
	logAddrs    int // eth_getLogs filter addresses
	batchCalls  int // calls in one batch
	depth       int // JSON nesting
	wsWrites    int // WebSocket write calls sent without reading
	// goodP99Max bounds the good client's p99 latency during any attack:
	// a read, or a transfer acknowledged once durable. The attackers share
	// the node's two cores, so the bound grows with them.
	goodP99Max time.Duration
}

var (
	short = scale{phase: 3 * time.Second, slowConns: 300, pipeConns: 50, wsReadless: 20,
		percentiles: 1_000_000, logAddrs: 100_000, batchCalls: 100_000, depth: 100_000, wsWrites: 2_000,
		goodP99Max: 500 * time.Millisecond}
	full = scale{phase: 10 * time.Second, slowConns: 2_000, pipeConns: 500, wsReadless: 200,
		percentiles: 1_000_000, logAddrs: 100_000, batchCalls: 100_000, depth: 100_000, wsWrites: 10_000,
		goodP99Max: time.Second}
)

// TestHostileClients runs each attack against a fresh node (so that one
// attack's memory does not count in the next one's peak), for one phase
// beside the good client; the first phase has no attacker. HOSTILE_ONLY
// runs only the attacks whose name contains it (and the idle phase).
func TestHostileClients(t *testing.T) {
	sc := short
	if os.Getenv("HOSTILE_FULL") != "" {
		sc = full
	}
	attacks := []struct {
		name string
		run  func(ctx context.Context, e *env) (string, error)
	}{
		{"idle", func(ctx context.Context, e *env) (string, error) { <-ctx.Done(); return "no attacker", nil }},
		{"slow headers", slowHeaders},
		{"pipelining, never reading", pipelineNoRead},
		{"WebSocket subscribers, never reading", wsReadless},
		{"eth_feeHistory, a million percentiles", feeHistoryPercentiles},
		{"eth_getLogs, 100 000 addresses", getLogsAddresses},
		{"a 100 000-call batch", hugeBatch},
		{"JSON nested 100 000 deep", deepJSON},
		{"WebSocket write calls, never reading", wsWritesNoRead},
		{"subscription flood from one address", subscriptionFlood},
		{"foreign Origin and Host", foreignOrigin},
	}
	only := os.Getenv("HOSTILE_ONLY")
	for _, a := range attacks {
		if only != "" && a.name != "idle" && !strings.Contains(a.name, only) {
			continue
		}
		e := startNode(t, sc)
		r := e.phase(a.name, a.run)
		t.Logf("%-40s peak RSS %5d MB   good p50 %7.2f ms  p99 %7.2f ms  (%d calls)   %s",
			a.name, r.peakRSS>>20, ms(r.p50), ms(r.p99), r.calls, r.summary)
		if r.p99 > sc.goodP99Max && r.err == nil && r.goodErr == nil {
			// The 2-core machine runs other packages' tests beside this
			// one: a latency bound missed once is measured again on a
			// fresh node, and only the second measurement counts.
			e.node.Stop()
			e = startNode(t, sc)
			r = e.phase(a.name, a.run)
			t.Logf("%-40s again: good p99 %7.2f ms  (%d calls)", a.name, ms(r.p99), r.calls)
		}
		if r.err != nil {
			t.Errorf("%s: %v", a.name, r.err)
		}
		if r.goodErr != nil {
			t.Errorf("%s: the good client failed: %v", a.name, r.goodErr)
		}
		if r.peakRSS > RSSCeiling {
			t.Errorf("%s: the node's RSS peaked at %d MB, over the ceiling of %d MB", a.name, r.peakRSS>>20, RSSCeiling>>20)
		}
		if r.p99 > sc.goodP99Max {
			t.Errorf("%s: the good client's p99 was %v, over %v", a.name, r.p99, sc.goodP99Max)
		}
		if err := e.good.serves(); err != nil {
			t.Errorf("after %s the node does not serve normally: %v\nnode log:\n%s", a.name, err, tail(e.node.Log()))
		}
		e.node.Stop()
	}
}

// startNode starts a dev node for one phase, with the suite's short header
// deadline, and the good client on it.
func startNode(t *testing.T, sc scale) *env {
	n, err := proc.Start(ledgerd, "--dev", "--datadir", t.TempDir(), "--admin-token", "test",
		"--http.header-timeout", headerTimeout.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	return &env{t: t, node: n, sc: sc, rpcURL: n.HTTP, wsURL: n.WS, good: newGood(t, n.HTTP, 0)}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

// env is what an attack gets: the node and the scale.
type env struct {
	t             *testing.T
	node          *proc.Ledgerd
	sc            scale
	rpcURL, wsURL string
	good          *good
}

// result is one phase's measurement.
type result struct {
	summary  string
	err      error // the attack did not get its documented answer
	goodErr  error
	peakRSS  int64
	p50, p99 time.Duration
	calls    int
}

// phase runs attack beside the good client and samples the node's RSS
// meanwhile. The attack's context ends after sc.phase: attacks that push
// until the node stops them may go on past it, up to attackMax, and the
// good client and the sampling run until the attack is over.
func (e *env) phase(name string, attack func(context.Context, *env) (string, error)) result {
	ctx, cancel := context.WithTimeout(context.Background(), e.sc.phase)
	defer cancel()
	over, end := context.WithCancel(context.Background())
	var r result
	var wg sync.WaitGroup
	stopRSS := make(chan struct{})
	wg.Add(2)
	go func() { defer wg.Done(); r.peakRSS = peakRSS(e.node.PID(), stopRSS) }()
	var lat []time.Duration
	go func() { defer wg.Done(); lat, r.goodErr = e.good.run(over) }()
	r.summary, r.err = attack(ctx, e)
	<-ctx.Done()
	end()
	close(stopRSS)
	wg.Wait()
	slices.Sort(lat)
	r.calls = len(lat)
	if len(lat) > 0 {
		r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	return r
}

// peakRSS samples /proc/PID/status every 50 ms until stop and returns the
// largest VmRSS seen.
func peakRSS(pid int, stop <-chan struct{}) int64 {
	var peak int64
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		peak = max(peak, rss(pid))
		select {
		case <-stop:
			return max(peak, rss(pid))
		case <-t.C:
		}
	}
}

func rss(pid int) int64 {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// good is the well-behaved client: go-ethereum's ethclient over HTTP from
// 127.0.0.1, a read every 20 ms and every fourth call a transfer it waits
// to be acknowledged.
type good struct {
	t     *testing.T
	ec    *ethclient.Client
	key   *ecdsa.PrivateKey
	nonce uint64
	fee   *big.Int
}

func newGood(t *testing.T, url string, devKey int) *good {
	ec, err := ethclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	g := &good{t: t, ec: ec, key: node.DevKey(devKey)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if g.nonce, err = ec.NonceAt(ctx, crypto.PubkeyToAddress(g.key.PublicKey), nil); err != nil {
		t.Fatal(err)
	}
	price, err := ec.SuggestGasPrice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g.fee = new(big.Int).Mul(price, big.NewInt(2))
	return g
}

// run calls until ctx ends and returns each call's latency; it stops at
// the first failed call.
func (g *good) run(ctx context.Context) ([]time.Duration, error) {
	var lat []time.Duration
	for i := 0; ctx.Err() == nil; i++ {
		start := time.Now()
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := g.call(cctx, i)
		cancel()
		if err != nil {
			return lat, err
		}
		lat = append(lat, time.Since(start))
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return lat, nil
}

func (g *good) call(ctx context.Context, i int) error {
	switch i % 4 {
	case 0:
		_, err := g.ec.BlockNumber(ctx)
		return err
	case 1, 2:
		_, err := g.ec.BalanceAt(ctx, crypto.PubkeyToAddress(g.key.PublicKey), nil)
		return err
	}
	return g.transfer(ctx)
}

func (g *good) transfer(ctx context.Context) error {
	to := common.Address{0xee}
	tx, err := types.SignNewTx(g.key, types.LatestSignerForChainID(big.NewInt(chainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chainID), Nonce: g.nonce, GasTipCap: new(big.Int), GasFeeCap: g.fee,
		Gas: 21_000, To: &to, Value: big.NewInt(1)})
	if err != nil {
		return err
	}
	if err := g.ec.SendTransaction(ctx, tx); err != nil {
		return fmt.Errorf("transfer nonce %d: %w", g.nonce, err)
	}
	g.nonce++
	return nil
}

// serves checks, after an attack, that a read and a transfer are each
// answered within afterMax.
func (g *good) serves() error {
	for i, what := range []string{"a read", "a transfer"} {
		ctx, cancel := context.WithTimeout(context.Background(), afterMax)
		err := g.call(ctx, 3*i) // 0: a read, 3: a transfer
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}
