package bots_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/bench/bots"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
	"github.com/ledgervenue/node/net/server"
)

// startVenue runs a dev node, its dispatcher and server in this process,
// wired as cmd/ledgerd wires them under --dev, so the bots run under the
// race detector; the bots use botsToken as the admin token. It returns the
// admin HTTP client and the controller.
func startVenue(t *testing.T, botsToken string) (*gethrpc.Client, *bots.Controller) {
	t.Helper()
	n, err := node.Open(node.Config{DataDir: t.TempDir(), ChainID: 0x50d, BaseFee: *uint256.NewInt(1e9), Validators: 4,
		CommitteeSeed: []byte("bots"), Clock: node.WallClock{}, Genesis: node.DevGenesis(),
		Markets: append(node.DevMarkets(), node.DevPerpMarkets()...)})
	if err != nil {
		t.Fatal(err)
	}
	ctl := bots.New(bots.Config{AdminToken: botsToken, Logf: t.Logf})
	hub := rpc.StartHub(n, false, rpc.PrefixSvc)
	svc := rpc.New(rpc.Config{Node: n, AdminToken: adminToken, Hub: hub, Bots: ctl})
	srv := server.New(svc, server.Config{Addr: "127.0.0.1:0", Multicore: true})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	ctl.SetAddr(srv.Addr())
	t.Cleanup(func() {
		ctl.Close()
		hub.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Stop(ctx)
		svc.Close()
		n.Close()
	})
	return dialAdmin(t, "http://"+srv.Addr()), ctl
}

// TestAdminBots starts and stops a session over the wire, checks the spec
// errors and the one-session rule, and reads the counters.
func TestAdminBots(t *testing.T) {
	admin, _ := startVenue(t, adminToken)
	if st := status(t, admin); st.State != "none" || len(st.Bots) != 0 {
		t.Fatalf("before any session: %+v", st)
	}
	refused := func(want string, args ...any) {
		t.Helper()
		err := admin.CallContext(context.Background(), nil, "admin_startBots", args...)
		if err == nil || !strings.Contains(errText(err), want) {
			t.Fatalf("admin_startBots%v: %v, want %q", args, err, want)
		}
	}
	refused("needs a spec string")
	refused("needs a spec string", 5)
	refused("unknown key", "makers=1,colour=red")
	refused("want an integer in [1, 16]", "levels=17")
	refused("no bots", "makers=0,takers=0")

	var st bots.Status
	call(t, admin, &st, "admin_startBots", "makers=1,takers=1,taker-rate=20,quote-every=1,levels=3,transport=http,markets=WETH/USD,BTC-PERP")
	if st.State != "starting" {
		t.Fatalf("admin_startBots answered state %q", st.State)
	}
	refused("already running", "default")
	waitState(t, admin, "running")
	time.Sleep(2 * time.Second)
	checkTwoSided(t, admin, wethUSD)

	var stopped bool
	call(t, admin, &stopped, "admin_stopBots")
	if !stopped {
		t.Fatal("admin_stopBots: no session was running")
	}
	st = waitState(t, admin, "stopped")
	if len(st.Bots) != 4 {
		t.Fatalf("%d bots, want 4", len(st.Bots))
	}
	for _, b := range st.Bots {
		var refusals uint64
		for _, v := range b.Refused {
			refusals += v
		}
		// Under the race detector a maker may lag into a tick: a refusal
		// is then counted, never lost.
		if b.Acked == 0 || b.Errors != 0 || b.Sent != b.Acked+refusals {
			t.Errorf("%s: sent %d, acked %d, refused %v, errors %d (%s)", b.Name, b.Sent, b.Acked, b.Refused, b.Errors, b.LastError)
		}
	}
	call(t, admin, &stopped, "admin_stopBots")
	if stopped {
		t.Fatal("admin_stopBots after the stop: reported a running session")
	}
	// A new session may start once the last one stopped; an unknown market
	// fails it (reported by admin_bots, the start itself answers at once).
	call(t, admin, &st, "admin_startBots", "markets=WETH/USD,NOPE/USD")
	if st = waitState(t, admin, "failed"); !strings.Contains(st.Error, `unknown market "NOPE/USD"`) {
		t.Fatalf("error %q", st.Error)
	}
}

// TestBotsBackOff: bots whose every action fails (their admin_deposit is
// refused: a wrong token) pause 100 ms, 200 ms, 400 ms, … between tries
// instead of hot-looping, keep going, and stop cleanly.
func TestBotsBackOff(t *testing.T) {
	admin, ctl := startVenue(t, "wrong-token")
	var st bots.Status
	call(t, admin, &st, "admin_startBots", "makers=1,takers=1,markets=WETH/USD")
	waitState(t, admin, "running")
	time.Sleep(1600 * time.Millisecond) // tries at about 0, 0.1, 0.3, 0.7 and 1.5 s
	for _, b := range status(t, admin).Bots {
		if b.Errors < 3 || b.Errors > 6 || b.Sent != 0 || !strings.Contains(b.LastError, "admin_deposit") {
			t.Errorf("%s: %d errors in 1.6 s (want 3..6), sent %d, last %q", b.Name, b.Errors, b.Sent, b.LastError)
		}
	}
	start := time.Now()
	ctl.Close()
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v with the bots pausing", d)
	}
}

// TestAdminBotsNeedsController: a node without bots (not --dev) refuses
// the methods, and every one needs the admin token.
func TestAdminBotsNeedsController(t *testing.T) {
	n, err := node.Open(node.Config{DataDir: t.TempDir(), ChainID: 0x50d, BaseFee: *uint256.NewInt(1e9), Validators: 4,
		CommitteeSeed: []byte("bots"), Clock: node.WallClock{}})
	if err != nil {
		t.Fatal(err)
	}
	svc := rpc.New(rpc.Config{Node: n, AdminToken: adminToken})
	srv := server.New(svc, server.Config{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Stop(ctx)
		svc.Close()
		n.Close()
	}()
	admin := dialAdmin(t, "http://"+srv.Addr())
	anon, err := gethrpc.Dial("http://" + srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	for _, m := range []string{"admin_startBots", "admin_stopBots", "admin_bots"} {
		if err := admin.Call(nil, m, "default"); err == nil || !strings.Contains(errText(err), "started with --dev") {
			t.Errorf("%s without bots: %v", m, err)
		}
		if err := anon.Call(nil, m, "default"); err == nil || !strings.Contains(err.Error(), "Invalid Request") {
			t.Errorf("%s without the token: %v", m, err)
		}
	}
}

// errText is an error's message and, for a JSON-RPC error, its data.
func errText(err error) string {
	var d gethrpc.DataError
	if errors.As(err, &d) {
		return fmt.Sprint(err.Error(), ": ", d.ErrorData())
	}
	return err.Error()
}
