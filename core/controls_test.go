package core

import (
	"math"
	"strings"
	"testing"

	"github.com/holiman/uint256"
)

// TestSetBalanceConserves: a balance set up or down, on a fresh account and
// on one with a transfer pending, keeps conservation (CheckSupply) and shows
// as the free cash; a balance past the u256 supply is refused unchanged.
func TestSetBalanceConserves(t *testing.T) {
	l := newTestLedger(t)
	l.ApplyTx(transfer(0, 1000), 0) // alice's transfer: pending, not settled
	for _, c := range []struct {
		who Address
		wei uint64
	}{{bob, 5e18}, {alice, 7}, {alice, 0}, {Address{0xcc}, 3}, {bob, 1}} {
		if _, rej := l.Apply(&Input{Kind: InputSetBalance, To: c.who, Amount: *uint256.NewInt(c.wei)}); !rej.OK() {
			t.Fatalf("set %x to %d: %+v", c.who, c.wei, rej)
		}
		b := l.Balance(NativeToken, c.who)
		if avail := b.Available(); avail.Uint64() != c.wei || !b.Debt.IsZero() {
			t.Fatalf("%x: free cash %v debt %v after setting %d", c.who, &avail, &b.Debt, c.wei)
		}
		if !l.CheckSupply() {
			t.Fatalf("conservation broken after setting %x to %d", c.who, c.wei)
		}
	}
	before := l.StateHash()
	var huge uint256.Int
	huge.SetAllOne()
	_, rej := l.Apply(&Input{Kind: InputSetBalance, To: alice, Amount: huge})
	if rej.Code != RejectControl || !strings.Contains(rej.Detail, "overflow") || l.StateHash() != before {
		t.Fatalf("a balance past 2^256 of supply: %+v, state changed %v", rej, l.StateHash() != before)
	}
}

// TestSetNonceForwardOnly: a nonce moves forward (the account then has no
// newest transaction to lock or recover on), never backwards, and not while
// a transaction is pending or the account is locked.
func TestSetNonceForwardOnly(t *testing.T) {
	l := newTestLedger(t)
	rec, _ := l.ApplyTx(transfer(0, 1000), 0)
	set := func(n uint64) Reject {
		_, rej := l.Apply(&Input{Kind: InputSetNonce, To: alice, Nonce: n})
		return rej
	}
	if rej := set(5); !strings.Contains(rej.Detail, "not durable") {
		t.Fatalf("nonce set under a pending transaction: %+v", rej)
	}
	l.Settle(rec)
	if _, rej := l.Apply(&Input{Kind: InputLockAccount, To: alice}); !rej.OK() {
		t.Fatal(rej)
	}
	if rej := set(5); !strings.Contains(rej.Detail, "locked") {
		t.Fatalf("nonce set on a locked account: %+v", rej)
	}
	l = newTestLedger(t)
	rec, _ = l.ApplyTx(transfer(0, 1000), 0)
	l.Settle(rec)
	if rej := set(5); !rej.OK() || l.Nonce(alice) != 5 {
		t.Fatalf("nonce 5: %+v, nonce %d", rej, l.Nonce(alice))
	}
	if _, ok := l.Newest(alice); ok {
		t.Fatal("a newest transaction after the nonce moved: its nonce would be wrong")
	}
	if _, rej := l.Apply(&Input{Kind: InputLockAccount, To: alice}); rej.Code != RejectNoTransaction {
		t.Fatalf("locking without a newest transaction: %+v", rej)
	}
	if rej := set(math.MaxUint64); rej.Code != RejectControl || !strings.Contains(rej.Detail, "EIP-2681") || l.Nonce(alice) != 5 {
		t.Fatalf("the largest nonce: %+v, nonce %d", rej, l.Nonce(alice))
	}
	if rej := set(4); rej.Code != RejectControl || l.Nonce(alice) != 5 {
		t.Fatalf("nonce backwards: %+v, nonce %d", rej, l.Nonce(alice))
	}
	rec, rej := l.ApplyTx(transfer(5, 1), 0)
	if !rej.OK() || rec == nil {
		t.Fatalf("a transaction at the set nonce: %+v", rej)
	}
	if ref, ok := l.Newest(alice); !ok || ref.Nonce != 5 {
		t.Fatalf("newest after sending at nonce 5: %+v %v", ref, ok)
	}
	l.Settle(rec)
	if rej := set(math.MaxUint64 - 1); !rej.OK() || l.Nonce(alice) != math.MaxUint64-1 {
		t.Fatalf("the largest usable nonce: %+v, nonce %d", rej, l.Nonce(alice))
	}
}

// TestClockOffsetInSnapshot: the clock offset is state: it changes the
// state hash and a loaded snapshot keeps it.
func TestClockOffsetInSnapshot(t *testing.T) {
	l := newTestLedger(t)
	before := l.StateHash()
	l.Apply(&Input{Kind: InputClockOffset, TimeUs: 86_400_000_000})
	if l.StateHash() == before {
		t.Fatal("the clock offset is not in the state hash")
	}
	got, err := LoadSnapshot(Config{ChainID: testChainID, BaseFee: *gwei}, l.AppendSnapshot(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got.ClockOffset() != 86_400_000_000 {
		t.Fatalf("offset %d after a snapshot load", got.ClockOffset())
	}
}
