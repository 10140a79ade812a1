package node

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/tickrec"
	"github.com/ledgervenue/node/persist"
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

// TestRestartKeepsSignedBatches: the node stops after an attestation batch
// is durable in the log (a side record, with its group's fdatasync) and
// before Badger stores it; the restart stores that batch as signed (same
// time, root and signatures) instead of signing the records again, and
// every batch the log holds is the one the store holds.
func TestRestartKeepsSignedBatches(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	var stopping atomic.Bool
	release := make(chan struct{})
	cfg.BeforeStore = func(int) error {
		if !stopping.Load() {
			return nil
		}
		<-release
		return errors.New("the process died here")
	}
	n := openNode(t, cfg)
	var attested []<-chan struct{}
	for i := range uint64(3) {
		attested = append(attested, submitDurable(t, n, devTransfer(i, 1)))
	}
	for _, a := range attested { // their batches stored: none is pending when the store stops
		<-a
	}
	waitStored(t, n)
	stopping.Store(true)
	head, err := n.log.Head()
	if err != nil {
		t.Fatal(err)
	}
	submitDurable(t, n, devTransfer(3, 1))
	// The attester signs it; the syncer makes the batch durable; the
	// storer holds it.
	var lost *persist.Batch
	for deadline := time.Now().Add(10 * time.Second); lost == nil; {
		sides, err := n.log.Sides(1)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range sides.Batches {
			if b.Seq == head.NextSeq {
				lost = b
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no batch reached the log")
		}
		time.Sleep(time.Millisecond)
	}
	if h, _ := n.log.Head(); h.NextSeq != head.NextSeq {
		t.Fatalf("batch %d stored before the crash: the test stopped nothing", h.NextSeq-1)
	}
	close(release)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	cfg.BeforeStore = nil
	n = openNode(t, cfg)
	defer n.Close()
	sides, err := n.log.Sides(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(sides.Batches) < int(head.NextSeq) {
		t.Fatalf("the log holds %d batches, want at least %d", len(sides.Batches), head.NextSeq)
	}
	for _, want := range sides.Batches {
		got, err := n.log.Batch(want.Seq)
		if err != nil || got == nil {
			t.Fatalf("batch %d: %v %v", want.Seq, got, err)
		}
		if got.TimeUs != want.TimeUs || got.Root != want.Root || !slices.Equal(got.Sigs, want.Sigs) || !slices.Equal(got.LeafHashes, want.LeafHashes) {
			t.Fatalf("batch %d was signed again: stored %+v, the log's %+v", want.Seq, got, want)
		}
	}
	// The receipts of the lost batch's records name it as signed.
	inLost := 0
	for i := range uint64(4) {
		h := devTransfer(i, 1).Hash
		attested := make(chan struct{})
		if !n.OnAttested(h, func() { close(attested) }) {
			t.Fatalf("transfer %d unknown after the restart", i)
		}
		<-attested
		r, _ := n.Lookup(h)
		if r.Batch.Seq == lost.Seq {
			inLost++
			if r.Batch.Timestamp != lost.TimeUs || r.Batch.Root != lost.Root {
				t.Fatalf("transfer %d: batch %d at %d, the log's at %d", i, r.Batch.Seq, r.Batch.Timestamp, lost.TimeUs)
			}
		}
	}
	if inLost == 0 {
		t.Fatalf("no transfer's receipt names batch %d", lost.Seq)
	}
}

// TestRestartAfterMachineStop: a node whose machine stopped under it (its
// store's running marker names another boot) trusts only the store's
// checkpoint, here the one taken when it opened, before any traffic: it
// derives the history again from the log and stores the batches the log's
// side records hold, as they were signed; state and batches equal the
// node's before the stop.
func TestRestartAfterMachineStop(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Markets = DevMarkets()
	clock := cfg.Clock.(*ManualClock)
	n := openNode(t, cfg)
	workload(t, n, clock, 2, -1, map[int]uint64{}, nil)
	waitStored(t, n)
	_, wantHash := n.StateAt()
	head, err := n.log.Head()
	if err != nil || head.NextSeq < 3 {
		t.Fatalf("head %+v %v: too little history", head, err)
	}
	var want []*persist.Batch
	for seq := uint64(1); seq < head.NextSeq; seq++ {
		b, err := n.log.Batch(seq)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, b)
	}
	wantTicks, err := n.log.Ticks()
	if err != nil || len(wantTicks) < 2 {
		t.Fatalf("%d stored ticks, %v", len(wantTicks), err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "running"), []byte("another boot"), 0o644); err != nil {
		t.Fatal(err)
	}
	clock.Advance(1_000_000) // a batch signed again would carry a later time
	n = openNode(t, cfg)
	defer n.Close()
	for n.inflight.Load() > 0 { // what it would attest again, if anything
		time.Sleep(time.Millisecond)
	}
	waitStored(t, n)
	if _, h := n.StateAt(); h != wantHash {
		t.Fatal("the state differs after the rebuild")
	}
	if h, err := n.log.Head(); err != nil || h.NextSeq < head.NextSeq {
		t.Fatalf("head after the rebuild %+v %v, want at least %+v", h, err, head)
	}
	for _, w := range want {
		got, err := n.log.Batch(w.Seq)
		if err != nil || got == nil || got.TimeUs != w.TimeUs || got.Root != w.Root || !slices.Equal(got.Sigs, w.Sigs) {
			t.Fatalf("batch %d after the rebuild: %+v %v, want %+v", w.Seq, got, err, w)
		}
	}
	// The ticks were written again (tick files after the checkpoint are
	// not trusted), byte for byte.
	gotTicks, err := n.log.Ticks()
	if err != nil || len(gotTicks) != len(wantTicks) {
		t.Fatalf("%d stored ticks after the rebuild, want %d (%v)", len(gotTicks), len(wantTicks), err)
	}
	for i := range wantTicks {
		if g, w := gotTicks[i], wantTicks[i]; g.TickUs != w.TickUs || !bytes.Equal(g.Body, w.Body) {
			t.Fatalf("stored tick %d at %d differs after the rebuild", i, w.TickUs)
		}
	}
}
