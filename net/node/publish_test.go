package node

import (
	"bytes"
	"sync"
	"testing"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/subs"
)

// tickRecorder is a Publisher that keeps the codec bytes of every tick
// published to it.
type tickRecorder struct {
	mu    sync.Mutex
	ticks [][]byte
}

func (r *tickRecorder) PublishTick(t *subs.Tick) {
	r.mu.Lock()
	r.ticks = append(r.ticks, subs.AppendTick(nil, t))
	r.mu.Unlock()
}

func (r *tickRecorder) Attested([]Receipt)                                 {}
func (r *tickRecorder) IdleSlot(subs.Tick, int64)                          {}
func (r *tickRecorder) WatchedPositions(dst []clob.Address) []clob.Address { return dst }

// storedTicksAfterReopen closes n, opens cfg's data directory again and
// checks that StoredTicks returns exactly the ticks published to want, in
// order, and that a hub takes them.
func storedTicksAfterReopen(t *testing.T, n *Node, cfg Config, want *tickRecorder) (*Node, []*subs.Tick) {
	t.Helper()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n = openNode(t, cfg)
	got, err := n.StoredTicks()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want.ticks) {
		t.Fatalf("%d stored ticks, %d published", len(got), len(want.ticks))
	}
	for i, tk := range got {
		if !bytes.Equal(subs.AppendTick(nil, tk), want.ticks[i]) {
			t.Fatalf("stored tick %d at %d differs from the published one", i, tk.TickUs)
		}
	}
	if err := subs.New(subs.Config{ReplayTicks: ReplayTicks, FloorUs: n.LastTickUs()}).Preload(got); err != nil {
		t.Fatalf("the stored ticks do not preload: %v", err)
	}
	return n, got
}

// TestStoredTicks: the ticks published while a publisher is set are stored
// with their inputs and read back after a restart; a tick applied without
// a publisher is not stored, and StoredTicks returns only the run after it.
func TestStoredTicks(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Markets = DevMarkets()
	clock := cfg.Clock.(*ManualClock)
	nonces := map[int]uint64{}
	n := openNode(t, cfg)
	workload(t, n, clock, 1, -1, nonces, nil) // no publisher yet: not stored
	rec := &tickRecorder{}
	n.SetPublisher(rec)
	workload(t, n, clock, 3, -1, nonces, nil)
	n, got := storedTicksAfterReopen(t, n, cfg, rec)
	if got[0].ParentHash == (clob.Hash{}) {
		t.Fatal("the first stored tick chains on nothing: the unstored tick before it is missing from its header")
	}

	// The restarted node runs a tick before its publisher is set: the chain
	// on disk breaks there, and only the ticks after the break are usable.
	workload(t, n, clock, 1, -1, nonces, nil)
	rec = &tickRecorder{}
	n.SetPublisher(rec)
	workload(t, n, clock, 2, -1, nonces, nil)
	n, _ = storedTicksAfterReopen(t, n, cfg, rec)
	n.Close()
}
