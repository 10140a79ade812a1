package bots_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ledgervenue/node/bench/bots"
	"github.com/ledgervenue/node/bench/proc"
)

// TestLedgerdBots is the test: `ledgerd --dev --bots …` alone makes
// a two-sided, trading book, and every bot transaction is acknowledged.
func TestLedgerdBots(t *testing.T) {
	n := startDev(t, "--bots", "makers=2,takers=2,taker-rate=5,levels=5,seed=1,markets=WETH/USD,ETH-PERP")
	admin := dialAdmin(t, n.HTTP)
	ws := dialAdmin(t, n.WS)
	waitState(t, admin, "running")
	time.Sleep(3 * time.Second)

	checkTwoSided(t, ws, wethUSD) // over WebSocket
	checkTwoSided(t, admin, ethPerp)
	var stopped bool
	call(t, admin, &stopped, "admin_stopBots")
	if !stopped {
		t.Fatal("admin_stopBots: no session was running")
	}
	st := waitState(t, admin, "stopped")
	if len(st.Bots) != 8 {
		t.Fatalf("%d bots, want (2 + 2) × 2 markets", len(st.Bots))
	}
	traded := 0
	for _, b := range st.Bots {
		if b.Sent == 0 || b.Acked != b.Sent || b.Errors != 0 || len(b.Refused) != 0 {
			t.Errorf("%s: sent %d, acked %d, refused %v, errors %d (%s)", b.Name, b.Sent, b.Acked, b.Refused, b.Errors, b.LastError)
		}
		if b.Role == "taker" {
			traded += fills(t, ws, b.Address)
		}
	}
	if traded == 0 {
		t.Error("no taker has a fill")
	}
}

// TestLedgerdBotsFlags: --bots is refused without --dev, with the manual
// clock, and with a bad spec, before the node starts.
func TestLedgerdBotsFlags(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		n, err := proc.Start(ledgerd, append(args, "--datadir", t.TempDir())...)
		if err == nil {
			n.Stop()
			t.Fatalf("%v: started", args)
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%v: %v, want %q", args, err, want)
		}
	}
	f("--bots needs --dev", "--bots", "default")
	f("--bots needs --dev", "--dev", "--clock", "manual", "--bots", "default")
	f(`levels="99": want an integer in [1, 16]`, "--dev", "--bots", "levels=99")
}

// TestLedgerdDevQuiet: --dev alone starts no bots (tests need a quiet
// venue), and admin_startBots can start them later.
func TestLedgerdDevQuiet(t *testing.T) {
	n, err := proc.Start(ledgerd, "--dev", "--datadir", t.TempDir(), "--admin-token", adminToken)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	admin := dialAdmin(t, n.HTTP)
	if st := status(t, admin); st.State != "none" {
		t.Fatalf("--dev alone: bots %q", st.State)
	}
	call(t, admin, nil, "admin_startBots", "makers=1,takers=0,markets=BTC-PERP")
	waitState(t, admin, "running")
}

// TestLedgerdBotsFollowNodeTime: after evm_increaseTime moved the node an
// hour ahead of the wall clock (docs/anvil.md), the bots' deadlines and
// quote times follow the node's time, not the wall clock: every
// transaction is still acknowledged.
func TestLedgerdBotsFollowNodeTime(t *testing.T) {
	n := startDev(t)
	admin := dialAdmin(t, n.HTTP)
	var offset int64
	call(t, admin, &offset, "evm_increaseTime", 3600)
	var st bots.Status
	call(t, admin, &st, "admin_startBots", "makers=1,takers=1,taker-rate=5,levels=2,seed=3,markets=WETH/USD")
	waitState(t, admin, "running")
	time.Sleep(2 * time.Second)
	var stopped bool
	call(t, admin, &stopped, "admin_stopBots")
	for _, b := range waitState(t, admin, "stopped").Bots {
		if b.Sent == 0 || b.Acked != b.Sent || len(b.Refused) != 0 {
			t.Errorf("%s an hour ahead: sent %d, acked %d, refused %v (%s)", b.Name, b.Sent, b.Acked, b.Refused, b.LastError)
		}
	}
}

// TestLedgerdBotsSurviveRevert: an evm_revert takes the bots' nonces back
// under them; they read them again and go on trading. Also under --compat
// (make run), where the -32000 that tells them has go-ethereum's message.
func TestLedgerdBotsSurviveRevert(t *testing.T) {
	t.Run("spec", func(t *testing.T) { botsSurviveRevert(t) })
	t.Run("compat", func(t *testing.T) { botsSurviveRevert(t, "--compat") })
}

func botsSurviveRevert(t *testing.T, args ...string) {
	n := startDev(t, args...)
	admin := dialAdmin(t, n.HTTP)
	var st bots.Status
	call(t, admin, &st, "admin_startBots", "makers=1,takers=1,taker-rate=5,levels=2,seed=4,markets=WETH/USD")
	waitState(t, admin, "running")
	time.Sleep(1500 * time.Millisecond)
	var id string
	call(t, admin, &id, "evm_snapshot")
	time.Sleep(1500 * time.Millisecond)
	var ok bool
	call(t, admin, &ok, "evm_revert", id)
	call(t, admin, &st, "admin_bots")
	acked := map[string]uint64{}
	for _, b := range st.Bots {
		acked[b.Name] = b.Acked
	}
	time.Sleep(2500 * time.Millisecond)
	call(t, admin, &st, "admin_bots")
	for _, b := range st.Bots {
		if b.Acked <= acked[b.Name] {
			t.Errorf("%s after the revert: acked %d, %d at the revert (refused %v, %s)", b.Name, b.Acked, acked[b.Name], b.Refused, b.LastError)
		}
	}
}

// startDev starts `ledgerd --dev` with args added and stops it when the
// test ends, logging its output if the test failed.
func startDev(t *testing.T, args ...string) *proc.Ledgerd {
	t.Helper()
	return startDevIn(t, t.TempDir(), args...)
}

// startDevIn is startDev on the data directory dir.
func startDevIn(t *testing.T, dir string, args ...string) *proc.Ledgerd {
	t.Helper()
	return proc.StartT(t, ledgerd, append([]string{"--dev", "--datadir", dir, "--admin-token", adminToken}, args...)...)
}
