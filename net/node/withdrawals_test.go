package node

import (
	"bytes"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/claim"
	"github.com/ledgervenue/node/persist"
)

// injector hands withdrawal outcomes to the next live tick
// (Config.InjectWithdrawals), as the ledger's LastWithdrawals will.
type injector struct {
	mu   sync.Mutex
	next []core.WithdrawalOutcome
}

func (in *injector) add(o ...core.WithdrawalOutcome) {
	in.mu.Lock()
	in.next = append(in.next, o...)
	in.mu.Unlock()
}

func (in *injector) take(tickUs int64) []core.WithdrawalOutcome {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := in.next
	in.next = nil
	for i := range out {
		out[i].TickUs = tickUs
	}
	return out
}

func withdrawalConfig(t *testing.T, dir string, in *injector) Config {
	cfg := testConfig(t, dir)
	cfg.Markets = DevPerpMarkets() // a tick every interval
	cfg.Bridge = DevBridgeConfig()
	cfg.InjectWithdrawals = in.take
	return cfg
}

func outcome(b byte, withdrawer core.Address, token core.Address, amount uint64, errStr string) core.WithdrawalOutcome {
	return core.WithdrawalOutcome{TxHash: core.Hash{0xdd, b}, Seq: uint64(b), Withdrawer: withdrawer,
		To: core.Address{0x70, b}, Token: token, Amount: *new(uint256.Int).Mul(uint256.NewInt(amount), uint256.NewInt(1e12)), Error: errStr}
}

// tickNow advances the clock one interval, runs the due tick and waits
// until it is durable; it returns the tick's time.
func tickNow(t *testing.T, n *Node) int64 {
	t.Helper()
	n.cfg.Clock.(*ManualClock).Advance(500_000)
	durable, err := n.RunDueTicks()
	if err != nil || durable == nil {
		t.Fatalf("no tick ran: %v", err)
	}
	if err := <-durable; err != nil {
		t.Fatal(err)
	}
	return n.LastTickUs()
}

// waitStatus polls h's status until it is want (5 s at most).
func waitStatus(t *testing.T, n *Node, h core.Hash, want string) Withdrawal {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		w, found, err := n.Withdrawal(h)
		if err != nil {
			t.Fatal(err)
		}
		if found && w.Status == want {
			return w
		}
		if time.Now().After(deadline) {
			t.Fatalf("withdrawal %x: found %v status %q, want %q", h[:2], found, w.Status, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkProof verifies w's proof as the bridged chain's contract does, over
// a claim hash recomputed here from the row.
func checkProof(t *testing.T, n *Node, w Withdrawal, claimAmount uint64) {
	t.Helper()
	p := w.Proof
	o := &w.Row.Out
	want := claim.Hash(claim.Domain(0x50d, 1), core.BridgeAddress, o.Token, o.To, uint256.NewInt(claimAmount), o.TxHash[:])
	if p.ClaimHash != want || p.Amount.Uint64() != claimAmount || p.To != o.To || p.Token != o.Token || p.Aux != o.TxHash {
		t.Fatalf("proof %+v for row %+v", p, o)
	}
	if err := claim.Verify(want, p.Proof, n.committee.Members, n.committee.F); err != nil {
		t.Fatalf("proof does not verify: %v", err)
	}
}

// TestWithdrawalsClaimable: a batch's rows are stored in order with their
// tick, the executed ones become claimable with a proof the contract's
// checks accept, the refused one stays refused, and the listing pages by
// (tick, position).
func TestWithdrawalsClaimable(t *testing.T) {
	var in injector
	n := openNode(t, withdrawalConfig(t, t.TempDir(), &in))
	defer n.Close()
	a, b := DevAddress(0), DevAddress(1)
	in.add(outcome(1, a, core.NativeToken, 2e6, ""), outcome(2, b, DevWETH, 5, core.WithdrawInsufficientBalance),
		outcome(3, b, DevWETH, 7e6, ""))
	tick := tickNow(t, n)
	// Native: 6 decimals on the bridged chain, so 2e18 wei are 2e6 units.
	checkProof(t, n, waitStatus(t, n, core.Hash{0xdd, 1}, StatusClaimable), 2e6)
	checkProof(t, n, waitStatus(t, n, core.Hash{0xdd, 3}, StatusClaimable), 7e18)
	if w := waitStatus(t, n, core.Hash{0xdd, 2}, StatusRefused); w.Proof != nil || w.Row.Out.Error != core.WithdrawInsufficientBalance {
		t.Fatalf("refused row %+v", w)
	}
	if _, found, err := n.Withdrawal(core.Hash{0xdd, 9}); found || err != nil {
		t.Fatalf("unknown hash: found %v, %v", found, err)
	}
	in.add(outcome(4, a, DevWBTC, 1e8, ""))
	tick2 := tickNow(t, n)
	all, err := n.Withdrawals(nil, nil, persist.WithdrawalCursor{}, 10)
	if err != nil || len(all) != 4 {
		t.Fatalf("listing %+v, %v", all, err)
	}
	for i, w := range all {
		wantTick, wantPos := tick, uint32(i)
		if i == 3 {
			wantTick, wantPos = tick2, 0
		}
		if w.Out.TxHash != (core.Hash{0xdd, byte(i + 1)}) || w.Out.TickUs != wantTick || w.Pos != wantPos {
			t.Fatalf("row %d: %+v", i, w)
		}
	}
	page, err := n.Withdrawals(nil, &b, persist.WithdrawalCursor{TickUs: tick, Pos: 2}, 10)
	if err != nil || len(page) != 1 || page[0].Out.TxHash != (core.Hash{0xdd, 3}) {
		t.Fatalf("b's rows from (tick, 2): %+v, %v", page, err)
	}
}

// TestWithdrawalPendingUntilSigners: with fewer than n − f signers a row
// stays pending (across a restart too), and is signed once enough are back;
// a restart keeps rows, statuses and the proofs byte for byte.
func TestWithdrawalPendingUntilSigners(t *testing.T) {
	dir := t.TempDir()
	var in injector
	var signers atomic.Int32
	signers.Store(2) // of 4; n − f = 3
	cfg := withdrawalConfig(t, dir, &in)
	cfg.ClaimSigners = func() []int { return []int{0, 1, 2, 3}[:signers.Load()] }
	n := openNode(t, cfg)
	in.add(outcome(1, DevAddress(0), core.NativeToken, 1e6, ""))
	tickNow(t, n)
	waitStatus(t, n, core.Hash{0xdd, 1}, StatusPending)
	time.Sleep(3 * ClaimRetryEvery)
	waitStatus(t, n, core.Hash{0xdd, 1}, StatusPending)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	n = openNode(t, cfg)
	waitStatus(t, n, core.Hash{0xdd, 1}, StatusPending)
	in.add(outcome(2, DevAddress(1), core.NativeToken, 3e6, ""))
	tickNow(t, n)
	signers.Store(3)
	w1 := waitStatus(t, n, core.Hash{0xdd, 1}, StatusClaimable)
	checkProof(t, n, w1, 1e6)
	if got := len(w1.Proof.Proof); got != 1+3*claim.SigLen {
		t.Fatalf("proof of %d bytes, want three signatures", got)
	}
	w2 := waitStatus(t, n, core.Hash{0xdd, 2}, StatusClaimable)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	n = openNode(t, cfg)
	defer n.Close()
	for _, want := range []Withdrawal{w1, w2} {
		got := waitStatus(t, n, want.Row.Out.TxHash, StatusClaimable)
		if got.Row != want.Row || !bytes.Equal(got.Proof.Proof, want.Proof.Proof) || got.Proof.ClaimHash != want.Proof.ClaimHash {
			t.Fatalf("after restart %+v, want %+v", got, want)
		}
	}
}

// TestWithdrawalClaimPasses: a batch of more than ClaimSignMax executed rows
// is signed in several passes, every row claimable in the end.
func TestWithdrawalClaimPasses(t *testing.T) {
	var in injector
	n := openNode(t, withdrawalConfig(t, t.TempDir(), &in))
	defer n.Close()
	outs := make([]core.WithdrawalOutcome, ClaimSignMax+1)
	for i := range outs {
		outs[i] = outcome(0, DevAddress(i%10), core.NativeToken, 1e6, "")
		outs[i].TxHash[2], outs[i].TxHash[3] = byte(i>>8), byte(i)
	}
	in.add(outs...)
	tickNow(t, n)
	waitStatus(t, n, outs[0].TxHash, StatusClaimable)
	waitStatus(t, n, outs[ClaimSignMax].TxHash, StatusClaimable)
	if left, err := n.log.PendingClaims(nil, 1); err != nil || len(left) != 0 {
		t.Fatalf("pending after the passes: %d (%v)", len(left), err)
	}
}
