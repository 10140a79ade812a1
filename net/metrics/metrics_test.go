package metrics_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
	"github.com/ledgervenue/node/net/metrics"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
	"github.com/ledgervenue/node/net/server"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const (
	chainID    = 0x50d
	adminToken = "metrics-test"
	intervalUs = 500_000 // the dev markets' auction interval
)

// venue is a node wired as cmd/ledgerd wires it (node, hub, dispatcher,
// server, admin handler), on loopback ports, with the manual clock.
type venue struct {
	clock        *node.ManualClock
	url, ws      string
	adminURL     string // the admin port: /metrics, /debug/pprof/
	http, wsConn *ethclient.Client
	admin        *gethrpc.Client
}

func startVenue(t *testing.T) *venue {
	t.Helper()
	clock := node.NewManualClock(1_767_225_600_000_000) // 2026-01-01T00:00:00Z
	n, err := node.Open(node.Config{DataDir: t.TempDir(), ChainID: chainID, BaseFee: *uint256.NewInt(1e9), Validators: 4,
		CommitteeSeed: []byte("metrics"), Clock: clock, Genesis: node.DevGenesis(), Markets: node.DevMarkets()})
	if err != nil {
		t.Fatal(err)
	}
	hub := rpc.StartHub(n, false, rpc.PrefixSvc)
	svc := rpc.New(rpc.Config{Node: n, AdminToken: adminToken, Manual: clock, Hub: hub})
	srv := server.New(svc, server.Config{Addr: "127.0.0.1:0", Multicore: true})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	admin := httptest.NewServer(metrics.AdminHandler(metrics.Sources{Node: n, RPC: svc, Hub: hub, Server: srv}))
	v := &venue{clock: clock, url: "http://" + srv.Addr(), ws: "ws://" + srv.Addr(), adminURL: admin.URL}
	ctx := context.Background()
	if v.http, err = ethclient.DialContext(ctx, v.url); err != nil {
		t.Fatal(err)
	}
	if v.wsConn, err = ethclient.DialContext(ctx, v.ws); err != nil {
		t.Fatal(err)
	}
	if v.admin, err = gethrpc.DialOptions(ctx, v.url, gethrpc.WithHeader("Authorization", "Bearer "+adminToken)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		v.http.Close()
		v.wsConn.Close()
		v.admin.Close()
		admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hub.Close()
		srv.Stop(ctx)
		svc.Close()
		n.Close()
	})
	return v
}

// scrape is one parsed /metrics answer.
type scrape map[string]*dto.MetricFamily

func (v *venue) scrape(t *testing.T) scrape {
	t.Helper()
	resp, err := http.Get(v.adminURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("Content-Type %q, want the text exposition format", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// metric returns the sample of family name with exactly these label
// values (name=value pairs), failing when there is none.
func (s scrape) metric(t *testing.T, name string, labels ...string) *dto.Metric {
	t.Helper()
	f := s[name]
	if f == nil {
		t.Fatalf("no metric %s", name)
	}
next:
	for _, m := range f.Metric {
		for i := 0; i < len(labels); i += 2 {
			found := false
			for _, l := range m.Label {
				found = found || (l.GetName() == labels[i] && l.GetValue() == labels[i+1])
			}
			if !found {
				continue next
			}
		}
		return m
	}
	t.Fatalf("no %s%v", name, labels)
	return nil
}

// value is a counter's or gauge's value.
func (s scrape) value(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	m := s.metric(t, name, labels...)
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

// histogram returns a histogram's count and sum.
func (s scrape) histogram(t *testing.T, name string) (uint64, float64) {
	t.Helper()
	h := s.metric(t, name).Histogram
	return h.GetSampleCount(), h.GetSampleSum()
}

// waitFor scrapes until ok holds, for at most 10 s.
func (v *venue) waitFor(t *testing.T, what string, ok func(scrape) bool) scrape {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := v.scrape(t)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// signTx signs an EIP-1559 transaction at 1 gwei.
func signTx(t *testing.T, key *ecdsa.PrivateKey, nonce uint64, to common.Address, value *big.Int, gas uint64, data []byte) *types.Transaction {
	t.Helper()
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(chainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chainID), Nonce: nonce, GasTipCap: new(big.Int), GasFeeCap: big.NewInt(1e9), Gas: gas,
		To: &to, Value: value, Data: data,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// TestScrapeCountsTraffic sends a transfer, a refused transfer, an unknown
// method (over HTTP), a subscription and an order (over WebSocket), runs
// the auction tick, and checks that the scraped metrics moved by exactly
// what was sent.
func TestScrapeCountsTraffic(t *testing.T) {
	v := startVenue(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	before := v.scrape(t)
	ticks, _ := before.histogram(t, "ledgerd_auction_tick_duration_seconds")
	commits, _ := before.histogram(t, "ledgerd_group_commit_duration_seconds")
	attested, _ := before.histogram(t, "ledgerd_attestation_latency_seconds")
	if ticks != 0 || attested != 0 {
		t.Fatalf("a quiet venue observed %d ticks and %d attestations", ticks, attested)
	}

	// Over HTTP: a transfer, one refused for its balance, an unknown method.
	to := common.Address(node.DevAddress(1))
	if err := v.http.SendTransaction(ctx, signTx(t, node.DevKey(0), 0, to, big.NewInt(1), 21000, nil)); err != nil {
		t.Fatal(err)
	}
	tooMuch := new(big.Int).Exp(big.NewInt(10), big.NewInt(40), nil)
	if err := v.http.SendTransaction(ctx, signTx(t, node.DevKey(2), 0, to, tooMuch, 21000, nil)); err == nil {
		t.Fatal("a transfer beyond the balance was admitted")
	}
	if err := v.http.Client().CallContext(ctx, nil, "ledgerd_noSuchMethod"); err == nil {
		t.Fatal("an unknown method answered")
	}

	// Over WebSocket: a subscription, then an order.
	heads := make(chan *types.Header, 16)
	sub, err := v.wsConn.SubscribeNewHead(ctx, heads)
	if err != nil {
		t.Fatal(err)
	}
	mid := v.scrape(t)
	if got := mid.value(t, "ledgerd_subscriptions", "channel", "newHeads"); got != 1 {
		t.Fatalf("newHeads subscriptions %v, want 1", got)
	}
	if got := mid.value(t, "ledgerd_websocket_connections"); got != 1 {
		t.Fatalf("WebSocket connections %v, want 1", got)
	}
	deadline := uint64((v.clock.NowMicros()/intervalUs + 1) * intervalUs)
	in := clob.Intent{Kind: clob.IntentSubmit, Book: node.DevMarkets()[0].ID, Side: clob.Buy, Deadline: deadline}
	in.Size.SetUint64(1e15)
	in.Price.Mul(uint256.NewInt(200_000), uint256.NewInt(1e16))
	order := signTx(t, node.DevKey(3), 0, common.Address(core.OrderbookAddress), new(big.Int), core.TxGas, abi.AppendSubmitOrder(nil, &in))
	if err := v.wsConn.SendTransaction(ctx, order); err != nil {
		t.Fatal(err)
	}
	if err := v.admin.CallContext(ctx, nil, "admin_advanceTime", intervalUs); err != nil {
		t.Fatal(err)
	}
	sub.Unsubscribe()

	after := v.waitFor(t, "the unsubscription and three attestations (transfer, order, tick)", func(s scrape) bool {
		n, _ := s.histogram(t, "ledgerd_attestation_latency_seconds")
		return s.value(t, "ledgerd_subscriptions_ended_total", "reason", "unsubscribed") == 1 && n >= attested+3
	})
	delta := func(name string, labels ...string) float64 {
		return after.value(t, name, labels...) - before.value(t, name, labels...)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"ledgerd_rpc_requests_total", []string{"method", "eth_sendRawTransaction", "transport", "http"}, 2},
		{"ledgerd_rpc_errors_total", []string{"method", "eth_sendRawTransaction", "transport", "http"}, 1},
		{"ledgerd_rpc_requests_total", []string{"method", "other", "transport", "http"}, 1},
		{"ledgerd_rpc_errors_total", []string{"method", "other", "transport", "http"}, 1},
		{"ledgerd_rpc_requests_total", []string{"method", "eth_sendRawTransaction", "transport", "ws"}, 1},
		{"ledgerd_rpc_errors_total", []string{"method", "eth_sendRawTransaction", "transport", "ws"}, 0},
		{"ledgerd_rpc_requests_total", []string{"method", "eth_subscribe", "transport", "ws"}, 1},
		{"ledgerd_rpc_requests_total", []string{"method", "eth_unsubscribe", "transport", "ws"}, 1},
		{"ledgerd_rpc_requests_total", []string{"method", "admin_advanceTime", "transport", "http"}, 1},
		{"ledgerd_transactions_total", []string{"kind", "other", "outcome", "admitted"}, 1},
		{"ledgerd_transactions_total", []string{"kind", "other", "outcome", "insufficient_balance"}, 1},
		{"ledgerd_transactions_total", []string{"kind", "orderbook", "outcome", "admitted"}, 1},
		{"ledgerd_subscriptions_ended_total", []string{"reason", "unsubscribed"}, 1},
		{"ledgerd_subscriptions", []string{"channel", "newHeads"}, 0},
	} {
		if got := delta(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if n, intents := after.histogram(t, "ledgerd_auction_tick_intents"); n != ticks+1 || intents != 1 {
		t.Errorf("ticks observed %d with %v intents, want 1 tick landing the order", n-ticks, intents)
	}
	for _, name := range []string{"ledgerd_auction_tick_hold_seconds", "ledgerd_auction_tick_downstream_seconds"} {
		if n, _ := after.histogram(t, name); n != ticks+1 {
			t.Errorf("%s observed %d ticks, want %d", name, n, ticks+1)
		}
	}
	if n, _ := after.histogram(t, "ledgerd_group_commit_duration_seconds"); n <= commits {
		t.Error("no group commit observed")
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "ledgerd_rpc_queue_requests",
		"ledgerd_node_inflight_inputs", "ledgerd_connections"} {
		after.metric(t, name)
	}
}

// TestAdminServesPprof: the admin port still serves net/http/pprof.
func TestAdminServesPprof(t *testing.T) {
	v := startVenue(t)
	resp, err := http.Get(v.adminURL + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/debug/pprof/goroutine: status %d", resp.StatusCode)
	}
}

// TestAdminConnsBounded: past AdminConnsMax open connections the admin
// port serves no one more until a connection closes.
func TestAdminConnsBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go metrics.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	get := func(c net.Conn, wait time.Duration) error {
		c.SetDeadline(time.Now().Add(wait))
		if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			return err
		}
		_, err := http.ReadResponse(bufio.NewReader(c), nil)
		return err
	}
	for range metrics.AdminConnsMax {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		if err := get(c, 5*time.Second); err != nil {
			t.Fatalf("connection %d not served: %v", len(held), err)
		}
	}
	extra, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	if err := get(extra, 300*time.Millisecond); err == nil {
		t.Fatalf("connection %d served past AdminConnsMax", metrics.AdminConnsMax+1)
	}
	held[0].Close()
	extra2, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer extra2.Close()
	// The waiting connection takes the freed slot; its request was already
	// sent, so a fresh one is served once it closes too.
	extra.Close()
	if err := get(extra2, 5*time.Second); err != nil {
		t.Fatalf("not served after connections closed: %v", err)
	}
}
