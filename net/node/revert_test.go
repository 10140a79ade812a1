package node

import (
	"errors"
	"testing"
)

// TestEvmSnapshotsBounded: at most EvmSnapshotsMax states are kept; the
// next is refused with ErrTooManySnapshots, and a revert to the first
// frees it and every later one.
func TestEvmSnapshotsBounded(t *testing.T) {
	n, err := Open(testConfig(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for i := range EvmSnapshotsMax {
		if id, err := n.EvmSnapshot(); err != nil || id != uint64(i) {
			t.Fatalf("snapshot %d: id %d, %v", i, id, err)
		}
	}
	if _, err := n.EvmSnapshot(); !errors.Is(err, ErrTooManySnapshots) {
		t.Fatalf("snapshot %d: %v, want ErrTooManySnapshots", EvmSnapshotsMax, err)
	}
	if ok, err := n.EvmRevert(0); !ok || err != nil {
		t.Fatalf("revert to 0: %v %v", ok, err)
	}
	if id, err := n.EvmSnapshot(); err != nil || id != EvmSnapshotsMax {
		t.Fatalf("snapshot after the revert: id %d, %v", id, err)
	}
}

// capWriter fails a write past its room, as the RPC layer's bound does.
type capWriter struct{ room int }

var errFull = errors.New("full")

func (w *capWriter) Write(p []byte) (int, error) {
	if len(p) > w.room {
		return 0, errFull
	}
	w.room -= len(p)
	return len(p), nil
}

// TestDumpStateWriterError: a writer's error reaches DumpState's caller
// unwrapped enough to tell (errors.Is): rpc.StateDumpMax relies on it.
func TestDumpStateWriterError(t *testing.T) {
	n, err := Open(testConfig(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for _, room := range []int{10, 100} { // inside the header, inside the backup
		if err := n.DumpState(&capWriter{room: room}); !errors.Is(err, errFull) {
			t.Fatalf("room %d: %v, want the writer's error", room, err)
		}
	}
	if err := n.DumpState(&capWriter{room: 1 << 20}); err != nil {
		t.Fatal(err)
	}
}
