package core

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// recoverCall is the call data of recover(target.Hash, target.Nonce).
func recoverCall(target TxRef) []byte {
	d := append(recoverSelector[:], target.Hash[:]...)
	d = append(d, make([]byte, 24)...)
	return binary.BigEndian.AppendUint64(d, target.Nonce)
}

// recovery is alice's recover(target) at nonce.
func recovery(nonce uint64, target TxRef) *Tx {
	tx := transfer(nonce, 0)
	tx.To, tx.Data = RecoveryAddress, recoverCall(target)
	tx.Hash = Hash{0xec, byte(nonce)}
	return tx
}

// lockedLedger is a ledger where alice sent one transfer (durable) and was
// then locked; it returns the transfer as the recovery target.
func lockedLedger(t *testing.T) (*Ledger, TxRef) {
	t.Helper()
	l := newTestLedger(t)
	first := transfer(0, 1000)
	rec, rej := l.ApplyTx(first, 0)
	if !rej.OK() {
		t.Fatalf("first transfer: %+v", rej)
	}
	l.Settle(rec)
	if rec, rej := l.Apply(&Input{Kind: InputLockAccount, To: alice}); rec != nil || !rej.OK() {
		t.Fatalf("lock: rec %v rej %+v", rec, rej)
	}
	target := TxRef{Hash: first.Hash, Nonce: 0}
	if got, ok := l.RecoveryTarget(alice); !ok || got != target {
		t.Fatalf("recovery target %+v %v, want %+v", got, ok, target)
	}
	return l, target
}

func TestLockRefusesAllButRecovery(t *testing.T) {
	l, target := lockedLedger(t)
	want := Reject{Code: RejectLocked, Target: target}
	orderbook := transfer(1, 0)
	orderbook.To = OrderbookAddress
	bridge := transfer(1, 0)
	bridge.To = BridgeAddress
	for name, tx := range map[string]*Tx{
		"next nonce": transfer(1, 5), "past nonce": transfer(0, 5), "future nonce": transfer(7, 5),
		"orderbook": orderbook, "bridge": bridge,
	} {
		before := l.StateHash()
		if rec, rej := l.ApplyTx(tx, 0); rec != nil || rej.Code != want.Code || rej.Target != want.Target {
			t.Fatalf("%s: rec %v rej %+v, want %+v", name, rec, rej, want)
		}
		if l.StateHash() != before {
			t.Fatalf("%s: a refused transaction changed the state", name)
		}
	}
	// Deposits still arrive.
	l.Deposit(Hash{0xd}, NativeToken, alice, uint256.NewInt(7))
	if got := l.Balance(NativeToken, alice); got.Cash.IsZero() {
		t.Fatal("no cash")
	}
	// Locking again changes nothing but the input count.
	if rej := l.LockAccount(alice); !rej.OK() {
		t.Fatalf("second lock: %+v", rej)
	}
	if got, _ := l.RecoveryTarget(alice); got != target {
		t.Fatalf("a second lock moved the target to %+v", got)
	}
}

func TestRecoveryRefusals(t *testing.T) {
	l, target := lockedLedger(t)
	f := func(name string, tx *Tx, want Reject) {
		t.Helper()
		before := l.StateHash()
		rec, rej := l.ApplyTx(tx, 0)
		if rec != nil || rej.Code != want.Code || rej.App != want.App || rej.Detail != want.Detail {
			t.Fatalf("%s: rec %v rej %+v, want %+v", name, rec, rej, want)
		}
		if l.StateHash() != before {
			t.Fatalf("%s: a refused recovery changed the state", name)
		}
	}
	app := func(reason string) Reject { return Reject{Code: RejectApp, App: RecoveryAddress, Detail: reason} }
	// Bob is open: his recovery is refused even with a valid shape.
	fund(l, bob)
	open := recovery(0, target)
	open.From = bob
	f("not locked", open, app(RecoveryNotLocked))
	short := recovery(1, target)
	short.Data = short.Data[:recoverCallLen-1]
	f("short call", short, app(RecoveryMalformed))
	long := recovery(1, target)
	long.Data = append(long.Data, 0)
	f("long call", long, app(RecoveryMalformed))
	selector := recovery(1, target)
	selector.Data[0] ^= 1
	f("selector", selector, app(RecoveryMalformed))
	wide := recovery(1, target)
	wide.Data[36] = 1 // the uint64 word above 64 bits
	f("nonce word above 64 bits", wide, app(RecoveryMalformed))
	value := recovery(1, target)
	value.Value.SetUint64(1)
	f("value", value, app(RecoveryValue))
	f("wrong hash", recovery(1, TxRef{Hash: Hash{0xba, 0xd}, Nonce: 0}), app(RecoveryWrongTarget))
	f("wrong nonce", recovery(1, TxRef{Hash: target.Hash, Nonce: 1}), app(RecoveryWrongTarget))
	// Protocol checks come first.
	f("future nonce", recovery(2, target), Reject{Code: RejectFutureNonce})
	underpriced := recovery(1, target)
	underpriced.GasFeeCap.SetUint64(1)
	f("underpriced", underpriced, Reject{Code: RejectUnderpriced})
}

// fund deposits enough for a's gas.
func fund(l *Ledger, a Address) {
	l.Deposit(Hash{0xb0, a[0]}, NativeToken, a, uint256.NewInt(1e18))
}

func TestRecoveryUnlocks(t *testing.T) {
	l, target := lockedLedger(t)
	before := l.Balance(NativeToken, alice)
	rec, rej := l.ApplyTx(recovery(1, target), 0)
	if !rej.OK() || rec.Status != 1 || rec.GasUsed != TxGas {
		t.Fatalf("recovery: rec %+v rej %+v", rec, rej)
	}
	l.Settle(rec)
	if _, locked := l.RecoveryTarget(alice); locked {
		t.Fatal("still locked after a recovery")
	}
	// It paid gas as usual.
	after := l.Balance(NativeToken, alice)
	var fee uint256.Int
	fee.Mul(uint256.NewInt(TxGas), gwei)
	if after.Cash.Cmp(new(uint256.Int).Sub(&before.Cash, &fee)) != 0 {
		t.Fatalf("cash %s after the recovery, want %s − %s", after.Cash.Dec(), before.Cash.Dec(), fee.Dec())
	}
	// The recovery spent nonce 1 and is the newest transaction.
	if n := l.Nonce(alice); n != 2 {
		t.Fatalf("nonce %d after the recovery, want 2", n)
	}
	if got, _ := l.Newest(alice); got != (TxRef{Hash: rec.Tx.Hash, Nonce: 1}) {
		t.Fatalf("newest %+v", got)
	}
	if _, rej := l.ApplyTx(transfer(2, 5), 0); !rej.OK() {
		t.Fatalf("transfer after the recovery: %+v", rej)
	}
	if !l.CheckSupply() {
		t.Fatal("conservation broken")
	}
}

func TestEquivocation(t *testing.T) {
	l := newTestLedger(t)
	first := transfer(0, 1000)
	rec, _ := l.ApplyTx(first, 0)
	target := TxRef{Hash: first.Hash, Nonce: 0}
	other := transfer(0, 2000) // same nonce, another hash
	before := l.StateHash()
	if _, rej := l.ApplyTx(other, 0); rej.Code != RejectEquivocation || rej.Target != target {
		t.Fatalf("conflict while pending: %+v, want an equivocation on %+v", rej, target)
	}
	if l.StateHash() != before {
		t.Fatal("the equivocation report changed the state (the lock is its own input)")
	}
	if _, rej := l.ApplyTx(first, 0); rej.Code != RejectPastNonce {
		t.Fatalf("the same transaction again: %+v, want a past nonce", rej)
	}
	l.Settle(rec)
	if _, rej := l.ApplyTx(other, 0); rej.Code != RejectPastNonce {
		t.Fatalf("conflict once durable: %+v, want a past nonce", rej)
	}
}

func TestLockNeedsATransaction(t *testing.T) {
	l := newTestLedger(t)
	seq := l.Seq()
	for _, a := range []Address{alice, {0x77}} { // funded but silent, unknown
		if _, rej := l.Apply(&Input{Kind: InputLockAccount, To: a}); rej.Code != RejectNoTransaction {
			t.Fatalf("%x: %+v, want RejectNoTransaction", a, rej)
		}
	}
	if l.Seq() != seq {
		t.Fatal("a refused lock counted as an input")
	}
}

// TestLockSurvivesSnapshot: a locked account loads locked with its target,
// and the loaded ledger answers the same to a recovery.
func TestLockSurvivesSnapshot(t *testing.T) {
	l, target := lockedLedger(t)
	snap := l.AppendSnapshot(nil)
	got, err := LoadSnapshot(Config{ChainID: testChainID}, snap)
	if err != nil {
		t.Fatal(err)
	}
	if tg, ok := got.RecoveryTarget(alice); !ok || tg != target {
		t.Fatalf("loaded target %+v %v, want %+v", tg, ok, target)
	}
	if !bytes.Equal(got.AppendSnapshot(nil), snap) {
		t.Fatal("the loaded ledger re-encodes differently")
	}
	for _, x := range []*Ledger{l, got} {
		if _, rej := x.ApplyTx(transfer(1, 5), 0); rej.Code != RejectLocked {
			t.Fatalf("transfer: %+v", rej)
		}
		rec, rej := x.ApplyTx(recovery(1, target), 0)
		if !rej.OK() {
			t.Fatalf("recovery: %+v", rej)
		}
		x.Settle(rec)
	}
	if l.StateHash() != got.StateHash() {
		t.Fatal("the loaded ledger diverged")
	}
	// An open account's snapshot differs from a locked one's.
	if bytes.Equal(l.AppendSnapshot(nil), snap) {
		t.Fatal("the recovery left the snapshot unchanged")
	}
}

// TestWorkloadLocksAndRecovers: the random workload (which the determinism
// and snapshot tests replay) does lock accounts and recover them.
func TestWorkloadLocksAndRecovers(t *testing.T) {
	w, l := newWorkload(3, clob.Limits{})
	locks, recoveries := 0, 0
	for range 3000 {
		w.advance()
		in := w.next(l)
		rec, rej := l.Apply(in)
		switch {
		case in.Kind == InputLockAccount && rej.OK():
			locks++
		case rec != nil && in.Tx.To == RecoveryAddress:
			recoveries++
		}
		if rec != nil {
			l.Settle(rec)
		}
	}
	if locks < 10 || recoveries < 10 {
		t.Fatalf("%d locks and %d recoveries in 3000 inputs", locks, recoveries)
	}
}
