package clob

import (
	"fmt"
	"testing"

	"github.com/holiman/uint256"
)

// callLog records the ledger calls of a tick, in order.
type callLog struct {
	*testAccounts
	calls []string
}

func (l *callLog) Unlock(token, owner Address, amount *uint256.Int) {
	l.calls = append(l.calls, fmt.Sprintf("unlock %x %s", owner[:1], amount.Dec()))
	l.testAccounts.Unlock(token, owner, amount)
}

func (l *callLog) SpendLocked(token, owner Address, amount *uint256.Int) {
	l.calls = append(l.calls, fmt.Sprintf("spend %x", owner[:1]))
	l.testAccounts.SpendLocked(token, owner, amount)
}

func (l *callLog) Credit(token, owner Address, amount *uint256.Int) {
	l.calls = append(l.calls, fmt.Sprintf("credit %x", owner[:1]))
	l.testAccounts.Credit(token, owner, amount)
}

// TestSettleHoldsUnlockingDiscards: settle drops a spot order right after
// its last fill, except one whose discard unlocks money, which it drops
// after every fill, as before early discards: the ledger sees the same
// calls in the same order. Such an order is forced here by locking more
// for a resting sell than its remaining size.
func TestSettleHoldsUnlockingDiscards(t *testing.T) {
	h := newHarness(t, Limits{})
	h.fund("s", 10, 0)
	h.fund("t", 10, 0)
	h.fund("b", 0, 1_000_000)
	if r := h.admit("s", []string{"s1"}, h.limit(Sell, 1, 100, 0)); r != OK {
		t.Fatal(r)
	}
	h.tick()
	// t1 queues behind s1 and fills after it
	if r := h.admit("t", []string{"t1"}, h.limit(Sell, 1, 100, 0)); r != OK {
		t.Fatal(r)
	}
	h.tick()
	b := h.e.books[0]
	s := b.index.find(&[]Hash{h.id("s1")}[0], b.ords)
	extra := lotsWei(2)
	b.ords[s].reserved.Add(&b.ords[s].reserved, &extra)
	h.acc.Lock(tBase, owner("s"), &extra)
	if r := h.admit("b", []string{"b1"}, h.limit(Buy, 2, 100, FlagIOC)); r != OK {
		t.Fatal(r)
	}
	log := &callLog{testAccounts: h.acc}
	T := landing(h.nowUs, h.iv)
	h.e.Tick(T, log, &h.out)
	if err := checkEngine(h.e, h.acc); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("unlock 73 %s", extra.Dec()) // "s"
	if n := len(log.calls); n == 0 || log.calls[n-1] != want {
		t.Fatalf("calls %q, want the held order's unlock last", log.calls)
	}
	for i, c := range log.calls[:len(log.calls)-1] {
		if c == want {
			t.Fatalf("call %d of %q: the held order unlocked before the last fill", i, log.calls)
		}
	}
	if b.deref(makeRef(s, b.nodes[s].gen)) != 0 {
		t.Fatal("the filled order is still live")
	}
}
