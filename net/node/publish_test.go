package node

import (
	"bytes"
	"sync"
	"testing"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/tickrec"
	"github.com/ledgervenue/node/net/subs"
)

// tickRecorder is a Publisher that keeps the codec bytes of every tick
// published to it.
type tickRecorder struct {
	mu    sync.Mutex
	ticks [][]byte
}

func (r *tickRecorder) PublishTick(t *tickrec.Tick) {
	r.mu.Lock()
	r.ticks = append(r.ticks, tickrec.AppendTick(nil, t))
	r.mu.Unlock()
}

func (r *tickRecorder) Attested([]Receipt)                                 {}
func (r *tickRecorder) IdleSlot(tickrec.Tick, int64)                       {}
func (r *tickRecorder) WatchedPositions(dst []clob.Address) []clob.Address { return dst }
func (r *tickRecorder) Reverted([]*tickrec.Tick, int64, error)             {}

// storedTicksAfterReopen closes n, opens cfg's data directory again and
// checks that StoredTicks returns `before` ticks, then exactly the ticks
// published to want, in order, and that a hub takes them.
func storedTicksAfterReopen(t *testing.T, n *Node, cfg Config, before int, want *tickRecorder) (*Node, []*tickrec.Tick) {
	t.Helper()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n = openNode(t, cfg)
	got, err := n.StoredTicks()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != before+len(want.ticks) {
		t.Fatalf("%d stored ticks, want %d then the %d published", len(got), before, len(want.ticks))
	}
	for i, tk := range got[before:] {
		if !bytes.Equal(tickrec.AppendTick(nil, tk), want.ticks[i]) {
			t.Fatalf("stored tick %d at %d differs from the published one", i, tk.TickUs)
		}
	}
	if err := subs.New(subs.Config{ReplayTicks: ReplayTicks, FloorUs: n.LastTickUs()}).Preload(got); err != nil {
		t.Fatalf("the stored ticks do not preload: %v", err)
	}
	return n, got
}

// waitStored returns once everything n applied is stored, not only
// durable: a tick stored before a publisher is set is given to it, not
// published (a tick stored after is published to it).
func waitStored(t *testing.T, n *Node) {
	t.Helper()
	n.evm.mu.Lock()
	defer n.evm.mu.Unlock()
	if err := n.barrier(); err != nil {
		t.Fatal(err)
	}
}

// TestStoredTicks: every tick is stored with its input, whether or not a
// publisher is set (perp markets tick from start-up on, before the hub is
// attached), and read back after a restart as one unbroken chain.
func TestStoredTicks(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Markets = append(DevMarkets(), DevPerpMarkets()...) // perp ticks build their marks with no publisher
	clock := cfg.Clock.(*ManualClock)
	nonces := map[int]uint64{}
	n := openNode(t, cfg)
	workload(t, n, clock, 1, -1, nonces, nil) // no publisher yet: stored all the same
	waitStored(t, n)
	rec := &tickRecorder{}
	n.SetPublisherWith(func([]*tickrec.Tick, int64, error) Publisher { return rec })
	workload(t, n, clock, 3, -1, nonces, nil)
	n, got := storedTicksAfterReopen(t, n, cfg, 1, rec)
	if got[0].ParentHash != (clob.Hash{}) || got[1].ParentHash != got[0].Hash {
		t.Fatal("the stored ticks do not chain from the first")
	}

	// The restarted node runs a tick before its publisher is set: the chain
	// on disk goes on through it.
	workload(t, n, clock, 1, -1, nonces, nil)
	waitStored(t, n)
	rec2 := &tickRecorder{}
	n.SetPublisherWith(func([]*tickrec.Tick, int64, error) Publisher { return rec2 })
	workload(t, n, clock, 2, -1, nonces, nil)
	n, _ = storedTicksAfterReopen(t, n, cfg, len(got)+1, rec2)
	n.Close()
}
