package node

import (
	"bytes"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/tickrec"
)

// lostRound runs a round of four crossing orders and their tick on n,
// waiting only until each input is durable, not stored or attested, and
// returns the orders' hashes.
func lostRound(t *testing.T, n *Node, clock *ManualClock, nonces map[int]uint64) []core.Hash {
	t.Helper()
	orders := crossingOrders(nil, clock, 0, nonces, func(tx *core.Tx) { submitDurable(t, n, tx) })
	clock.Advance(500_000)
	before := n.log.Len()
	if ran, err := n.RunDueTicks(); err != nil || ran == nil {
		t.Fatalf("tick %v %v", ran, err)
	}
	// A tick is answered once stored, which the test may be holding: wait
	// for its input to be durable instead.
	for n.log.Len() == before {
		time.Sleep(time.Millisecond)
	}
	return orders
}

// TestRestartStoresWhatACrashLost: the node stops between its inputs'
// fdatasync and their group's store write (the inputs are acknowledged,
// their tick links and published ticks are not in Badger); a restart
// writes those rows again from its replay, and the node then holds what a
// node that never stopped holds: the same state, the same stored ticks
// byte for byte, every order's tick link.
func TestRestartStoresWhatACrashLost(t *testing.T) {
	run := func(crash bool) (*Node, []core.Hash) {
		cfg := testConfig(t, t.TempDir())
		cfg.Markets = DevMarkets()
		clock := cfg.Clock.(*ManualClock)
		// Once stopping, the storer holds the next group until released,
		// then fails it: the syncer goes on making inputs durable meanwhile
		// (up to storeLagGroups groups).
		var stopping atomic.Bool
		release := make(chan struct{})
		if crash {
			cfg.BeforeStore = func(int) error {
				if !stopping.Load() {
					return nil
				}
				<-release
				return errors.New("the process died here")
			}
		}
		nonces := map[int]uint64{}
		n := openNode(t, cfg)
		workload(t, n, clock, 2, -1, nonces, nil)
		waitStored(t, n)
		stopping.Store(true)
		orders := lostRound(t, n, clock, nonces) // five groups: within storeLagGroups
		if !crash {
			waitStored(t, n)
			return n, orders
		}
		if d, _ := n.log.Derived(); d+5 > n.log.Len() {
			t.Fatalf("derived %d of %d inputs: the test stopped nothing", d, n.log.Len())
		}
		close(release)
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
		cfg.BeforeStore = nil
		n = openNode(t, cfg)
		if d, err := n.log.Derived(); err != nil || d != n.log.Len() {
			t.Fatalf("after the restart: derived %d of %d inputs, %v", d, n.log.Len(), err)
		}
		return n, orders
	}
	ref, refOrders := run(false)
	defer ref.Close()
	got, orders := run(true)
	defer got.Close()

	if _, h := got.StateAt(); h != func() core.Hash { _, h := ref.StateAt(); return h }() {
		t.Fatal("the restarted node's state differs from the one that never stopped")
	}
	sameStoredTicks(t, got, ref, 3)
	for i, h := range orders {
		k, ok, err := got.log.TickLinkOf(h)
		wk, wok, _ := ref.log.TickLinkOf(refOrders[i])
		if err != nil || !ok || !wok || k.TickUs != wk.TickUs || k.TickHash != wk.TickHash {
			t.Fatalf("order %d: tick link %+v %v %v, want %+v", i, k, ok, err, wk)
		}
	}
}

// sameStoredTicks fails t unless got stores the ticks want stores (at
// least min of them), byte for byte.
func sameStoredTicks(t *testing.T, got, want *Node, min int) {
	t.Helper()
	stored := func(n *Node) []*tickrec.Tick {
		ticks, err := n.StoredTicks()
		if err != nil {
			t.Fatal(err)
		}
		return ticks
	}
	have, ref := stored(got), stored(want)
	if len(ref) < min || len(have) != len(ref) {
		t.Fatalf("%d stored ticks, want %d (at least %d)", len(have), len(ref), min)
	}
	for i := range ref {
		if a, b := tickrec.AppendTick(nil, have[i]), tickrec.AppendTick(nil, ref[i]); !bytes.Equal(a, b) {
			t.Fatalf("stored tick %d, at %d, differs: %d bytes, want %d", i, ref[i].TickUs, len(a), len(b))
		}
	}
}
