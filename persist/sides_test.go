package persist

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ledgervenue/node/core"
)

// TestSideRecords: side records take no seq (replay and Len see only the
// inputs), Sides returns those at or after a seq in order, a run that
// wrote only side records leaves a segment the next run appends to, and a
// cut before an input drops the side records after it.
func TestSideRecords(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ins := sampleInputs()
	claims := []Claim{{TxHash: core.Hash{1}, TickUs: 7, Pos: 2, ClaimHash: core.Hash{9}, Proof: []byte("proof")}, {TxHash: core.Hash{2}}}
	b1, b2, b3 := sampleBatch(1), sampleBatch(2), sampleBatch(3)
	for _, b := range []*Batch{b1, b2, b3} {
		b.Records = nil
	}
	appendGroup := func(l *Log, add func(*Inputs)) {
		t.Helper()
		var in Inputs
		add(&in)
		if _, err := l.AppendInputs(&in); err != nil {
			t.Fatal(err)
		}
	}
	// at seq 1: b1; inputs 1, 2; at 3: the claims.
	appendGroup(l, func(in *Inputs) { in.AddBatch(b1); in.Add(ins[0]); in.Add(ins[1]) })
	appendGroup(l, func(in *Inputs) { in.AddClaims(claims) })
	reopen := func() *Log {
		t.Helper()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		return openIn(t, dir, 0)
	}
	l = reopen()
	appendGroup(l, func(in *Inputs) { in.AddBatch(b2) }) // a segment of side records only
	l = reopen()
	appendGroup(l, func(in *Inputs) { in.Add(ins[2]); in.AddBatch(b3) }) // input 3; b3 at 4
	l = reopen()
	defer func() { l.Close() }()
	if segs, _ := filepath.Glob(filepath.Join(dir, "log", "*.seg")); len(segs) != 2 {
		t.Fatalf("segments %v, want two (the side-only one appended to)", segs)
	}

	if l.Len() != 3 {
		t.Fatalf("len %d, want the 3 inputs", l.Len())
	}
	var got [][]byte
	if err := l.Replay(0, func(seq uint64, in *core.Input) error {
		if seq != uint64(len(got)+1) {
			t.Fatalf("seq %d", seq)
		}
		got = append(got, AppendRecord(nil, in))
		return nil
	}); err != nil || len(got) != 3 {
		t.Fatalf("replay: %v, %d inputs", err, len(got))
	}
	for i := range got {
		if !bytes.Equal(got[i], AppendRecord(nil, ins[i])) {
			t.Fatalf("input %d differs", i+1)
		}
	}
	for _, c := range []struct {
		from    uint64
		batches []*Batch
		claims  []Claim
	}{
		{1, []*Batch{b1, b2, b3}, claims},
		{2, []*Batch{b2, b3}, claims},
		{3, []*Batch{b2, b3}, claims},
		{4, []*Batch{b3}, nil},
		{5, nil, nil},
	} {
		s, err := l.Sides(c.from)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s.Batches, c.batches) || !reflect.DeepEqual(s.Claims, c.claims) {
			t.Fatalf("sides from %d: %+v, want %d batches and %d claims", c.from, s, len(c.batches), len(c.claims))
		}
	}

	// Cut before input 3: b3 (at 4) goes, b2 and the claims (at 3) may stay.
	if err := l.segs.truncate(3); err != nil {
		t.Fatal(err)
	}
	s, err := l.Sides(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range s.Batches {
		if b.Seq == 3 {
			t.Fatal("the cut kept a side record after it")
		}
	}
	if l.Len() != 2 || s.Batches[0].Seq != 1 {
		t.Fatalf("after the cut: len %d, sides %+v", l.Len(), s)
	}
}

// TestCheckpointAfterMachineStop: a store opened after its machine stopped
// under it (dir/running names another boot) reports the checkpoint's view
// (derived mark, head, snapshots) until its next Store, then its own again;
// a store closed whole, or whose process alone stopped, is trusted.
func TestCheckpointAfterMachineStop(t *testing.T) {
	if bootID() == "" {
		t.Skip("no boot id here")
	}
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ins := sampleInputs()
	b1, b2 := sampleBatch(1), sampleBatch(2)
	store := func(in *core.Input, b *Batch, snap bool) {
		t.Helper()
		g := &Group{Inputs: []*core.Input{in}}
		if b != nil {
			g.Batches = []*Batch{b}
		}
		if snap {
			g.Snapshot = &Snapshot{Seq: l.Len() + 1}
			g.Snapshot.compressed = []byte("state")
		}
		if err := l.Append(g); err != nil {
			t.Fatal(err)
		}
	}
	// Snapshots at 1 and 4, batches 1 and 2.
	store(ins[0], b1, true)
	store(ins[1], b2, false)
	store(ins[2], nil, false)
	store(ins[3], nil, true)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, runningFile)); !os.IsNotExist(err) {
		t.Fatalf("a store closed whole keeps its running marker: %v", err)
	}
	check := func(l *Log, derived, nextBatch uint64, newestSnap uint64) {
		t.Helper()
		d, err := l.Derived()
		h, herr := l.Head()
		var snap uint64
		serr := l.Snapshots(func(seq uint64, _ []byte, _ error) bool { snap = seq; return false })
		if err != nil || herr != nil || serr != nil || d != derived || h.NextSeq != nextBatch || snap != newestSnap {
			t.Fatalf("derived %d, head %d, snapshot %d (%v %v %v); want %d, %d, %d", d, h.NextSeq, snap, err, herr, serr, derived, nextBatch, newestSnap)
		}
	}
	// Closed whole: trusted.
	if l, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	check(l, 4, 3, 4)
	// The machine stops: the marker names another boot, and the
	// checkpoint is the one taken after input 2 (batch 2 not covered).
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, runningFile), []byte("another boot"))
	writeTestFile(t, filepath.Join(dir, checkpointFile), checkpointBytesFor(2, 2))
	if l, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	check(l, 2, 2, 1)
	// Stopped again before its rebuild: still the checkpoint's view.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	check(l, 2, 2, 1)
	// The rebuild's Store: the store's own marks again, and a checkpoint.
	if err := l.Store(&Group{Through: 4, Batches: []*Batch{b2}}); err != nil {
		t.Fatal(err)
	}
	check(l, 4, 3, 4)
	if cp, err := readCheckpoint(dir); err != nil || cp.derived != 4 || cp.nextBatch != 3 {
		t.Fatalf("checkpoint after the rebuild: %+v %v", cp, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	check(l, 4, 3, 4)
}

func checkpointBytesFor(derived, nextBatch uint64) []byte {
	return appendCheckpoint(nil, trust{derived: derived, nextBatch: nextBatch})
}

func writeTestFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
