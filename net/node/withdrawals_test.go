package node

import (
	"bytes"
	"testing"
	"time"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/claim"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/persist"
)

func withdrawalConfig(t *testing.T, dir string) Config {
	cfg := testConfig(t, dir)
	cfg.Markets = DevPerpMarkets() // a tick every interval
	cfg.Bridge = DevBridgeConfig()
	return cfg
}

// units is n whole tokens in 18 decimals.
func units(n uint64) *uint256.Int {
	return new(uint256.Int).Mul(uint256.NewInt(n), uint256.NewInt(1e18))
}

// withdraw submits a real withdraw transaction and waits until it is
// durable (the sender's next transaction waits for that).
func withdraw(t *testing.T, n *Node, b byte, from int, nonce uint64, token core.Address, amount *uint256.Int) core.Hash {
	t.Helper()
	h, durable := withdrawAsync(t, n, b, from, nonce, token, amount)
	if err := <-durable; err != nil {
		t.Fatal(err)
	}
	return h
}

// withdrawAsync submits a real withdraw transaction: hash {0xdd, b, nonce},
// from dev account from, to the recipient {0x70, b}, for the next
// withdrawal batch. The ledger admitted it on return; the channel tells
// when it is durable.
func withdrawAsync(t *testing.T, n *Node, b byte, from int, nonce uint64, token core.Address, amount *uint256.Int) (core.Hash, <-chan error) {
	t.Helper()
	now := n.cfg.Clock.(*ManualClock).NowMicros()
	deadline := uint64((now/clob.TransferIntervalUs + 1) * clob.TransferIntervalUs)
	tx := &core.Tx{Hash: core.Hash{0xdd, b, byte(nonce >> 8), byte(nonce)}, Type: core.TxTypeDynamicFee, ChainID: 0x50d,
		Nonce: nonce, From: DevAddress(from), To: core.BridgeAddress, HasTo: true, Gas: core.TxGas, GasFeeCap: *uint256.NewInt(2e9),
		Data: core.AppendWithdrawCall(nil, token, core.Address{0x70, b}, amount, deadline)}
	durable := make(chan error, 1)
	if rej, err := n.SubmitTx(tx, func(_ *Entry, err error) { durable <- err }); err != nil || !rej.OK() {
		t.Fatalf("withdraw %x refused: %v %+v", tx.Hash[:4], err, rej)
	}
	return tx.Hash, durable
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

// TestWithdrawalsClaimable: a batch's rows are stored in admission order
// with their tick, the executed ones become claimable with a proof the
// contract's checks accept, the refused one stays refused, and the listing
// pages by (tick, position).
func TestWithdrawalsClaimable(t *testing.T) {
	n := openNode(t, withdrawalConfig(t, t.TempDir()))
	defer n.Close()
	a, b := DevAddress(0), DevAddress(1)
	h1 := withdraw(t, n, 1, 0, 0, core.NativeToken, units(2))
	h2 := withdraw(t, n, 2, 1, 0, DevWETH, units(200)) // b holds 100 WETH
	h3 := withdraw(t, n, 3, 1, 1, DevWETH, units(7))
	tick := tickNow(t, n)
	// Native: 6 decimals on the bridged chain, so 2e18 wei are 2e6 units.
	checkProof(t, n, waitStatus(t, n, h1, StatusClaimable), 2e6)
	checkProof(t, n, waitStatus(t, n, h3, StatusClaimable), 7e18)
	if w := waitStatus(t, n, h2, StatusRefused); w.Proof != nil || w.Row.Out.Error != core.WithdrawInsufficientBalance {
		t.Fatalf("refused row %+v", w)
	}
	if _, found, err := n.Withdrawal(core.Hash{0xdd, 9}); found || err != nil {
		t.Fatalf("unknown hash: found %v, %v", found, err)
	}
	h4 := withdraw(t, n, 4, 0, 1, DevWBTC, units(1))
	tick2 := tickNow(t, n)
	checkProof(t, n, waitStatus(t, n, h4, StatusClaimable), 1e8)
	all, err := n.Withdrawals(nil, nil, persist.WithdrawalCursor{}, 10)
	if err != nil || len(all) != 4 {
		t.Fatalf("listing %+v, %v", all, err)
	}
	for i, w := range all {
		wantTick, wantPos, wantWho := tick, uint32(i), b
		if i == 0 || i == 3 {
			wantWho = a
		}
		if i == 3 {
			wantTick, wantPos = tick2, 0
		}
		if w.Out.TxHash != []core.Hash{h1, h2, h3, h4}[i] || w.Out.TickUs != wantTick || w.Pos != wantPos || w.Out.Withdrawer != wantWho {
			t.Fatalf("row %d: %+v", i, w)
		}
	}
	page, err := n.Withdrawals(nil, &b, persist.WithdrawalCursor{TickUs: tick, Pos: 2}, 10)
	if err != nil || len(page) != 1 || page[0].Out.TxHash != h3 {
		t.Fatalf("b's rows from (tick, 2): %+v, %v", page, err)
	}
}

// TestWithdrawalPendingUntilSigners: while two of four validators are
// silent (fewer than n − f sign) a row stays pending, also past the
// claimer's retries; a restart (which clears the faults) signs what was
// left pending; with exactly n − f signing a row is claimable with three
// signatures; a restart keeps rows, statuses and the proofs byte for byte.
func TestWithdrawalPendingUntilSigners(t *testing.T) {
	dir := t.TempDir()
	cfg := withdrawalConfig(t, dir)
	n := openNode(t, cfg)
	if err := n.SetValidatorFaults(Faults{Silent: 2}); err != nil {
		t.Fatal(err)
	}
	h1 := withdraw(t, n, 1, 0, 0, core.NativeToken, units(1))
	tickNow(t, n)
	waitStatus(t, n, h1, StatusPending)
	time.Sleep(3 * ClaimRetryEvery)
	waitStatus(t, n, h1, StatusPending)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	n = openNode(t, cfg)
	w1 := waitStatus(t, n, h1, StatusClaimable)
	checkProof(t, n, w1, 1e6)
	if got := len(w1.Proof.Proof); got != 1+4*claim.SigLen {
		t.Fatalf("proof of %d bytes, want four signatures", got)
	}
	if err := n.SetValidatorFaults(Faults{Silent: 1}); err != nil {
		t.Fatal(err)
	}
	h2 := withdraw(t, n, 2, 1, 0, core.NativeToken, units(3))
	tickNow(t, n)
	w2 := waitStatus(t, n, h2, StatusClaimable)
	checkProof(t, n, w2, 3e6)
	if got := len(w2.Proof.Proof); got != 1+3*claim.SigLen {
		t.Fatalf("proof of %d bytes, want three signatures", got)
	}
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
	n := openNode(t, withdrawalConfig(t, t.TempDir()))
	defer n.Close()
	hashes := make([]core.Hash, ClaimSignMax+1)
	for round := 0; round*len(DevKeys) < len(hashes); round++ {
		// One per account at a time: the next waits until its sender's
		// previous one is durable.
		var durables []<-chan error
		for who := range min(len(DevKeys), len(hashes)-round*len(DevKeys)) {
			var d <-chan error
			hashes[round*len(DevKeys)+who], d = withdrawAsync(t, n, byte(who), who, uint64(round), core.NativeToken, units(1))
			durables = append(durables, d)
		}
		for _, d := range durables {
			if err := <-d; err != nil {
				t.Fatal(err)
			}
		}
	}
	tickNow(t, n)
	waitStatus(t, n, hashes[0], StatusClaimable)
	waitStatus(t, n, hashes[ClaimSignMax], StatusClaimable)
	if left, err := n.log.PendingClaims(nil, 1); err != nil || len(left) != 0 {
		t.Fatalf("pending after the passes: %d (%v)", len(left), err)
	}
}
