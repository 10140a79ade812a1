package clob

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestExpiryChurn drives the expiry queue through its lazy paths: most
// orders are cancelled before they expire (stale entries, compaction),
// ttls vary so that pushes go to both the run and the heap, and every
// tick's expiries must be exactly the live orders due by then, in
// (expiresUs, id) order.
func TestExpiryChurn(t *testing.T) {
	h := newHarness(t, Limits{OrdersMax: 4096, PendingMax: 4096})
	h.fund("a", 0, 1_000_000_000)
	rng := rand.New(rand.NewPCG(1, 2))
	type live struct {
		id  Hash
		exp int64 // 0 until placed
	}
	var orders []live // live orders, in admission order
	for round := range 60 {
		T := landing(h.nowUs, h.iv)
		for i := range 150 {
			in := h.limit(Buy, 1, int64(1+rng.IntN(50)), 0)
			in.TTL = uint64(1+rng.IntN(4))*uint64(h.iv) - uint64(rng.IntN(3)*100)
			if round%3 == 0 { // runs of one ttl go to the run
				in.TTL = 3 * uint64(h.iv)
			}
			before := h.nonce
			if r := h.admit("a", nil, in); r != OK {
				t.Fatalf("round %d order %d: %v", round, i, r)
			}
			orders = append(orders, live{id: OrderID(owner("a"), before, 0), exp: T + int64(in.TTL)})
		}
		// Cancel about 80 % of the live orders, in one envelope each.
		kept := orders[:0]
		for _, o := range orders {
			if rng.IntN(5) == 0 {
				kept = append(kept, o)
				continue
			}
			c := Intent{Kind: IntentCancel, Book: tBookID, OrderID: o.id, Deadline: h.deadline()}
			if r := h.admit("a", nil, c); r != OK {
				t.Fatalf("cancel: %v", r)
			}
		}
		orders = kept
		var want []live
		kept = orders[:0]
		for _, o := range orders {
			if o.exp <= T {
				want = append(want, o)
			} else {
				kept = append(kept, o)
			}
		}
		orders = kept
		slices.SortFunc(want, func(x, y live) int {
			return cmp.Or(cmp.Compare(x.exp, y.exp), bytes.Compare(x.id[:], y.id[:]))
		})
		h.tick()
		var got []Hash
		for _, ev := range h.out.Events {
			if ev.Kind == EventExpire {
				got = append(got, ev.OrderID)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d expired, want %d", round, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i].id {
				t.Fatalf("round %d: expiry %d is %x, want %x", round, i, got[i][:4], want[i].id[:4])
			}
		}
	}
}
