package persist

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/zstd"
	"github.com/ledgervenue/node/core"
)

// dumpStore lists every key and value of the store, in key order.
func dumpStore(t *testing.T, l *Log) string {
	t.Helper()
	var b bytes.Buffer
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%x=%x\n", it.Item().Key(), v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func set(t *testing.T, l *Log, kv ...string) {
	t.Helper()
	err := l.db.Update(func(txn *badger.Txn) error {
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				if err := txn.Delete([]byte(kv[i])); err != nil {
					return err
				}
				continue
			}
			if err := txn.Set([]byte(kv[i]), []byte(kv[i+1])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBackupRestore: after any change — keys added, removed, changed,
// log entries appended — Restore makes the store hold exactly what the
// backup held, and the log's own bookkeeping follows (Len).
func TestBackupRestore(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	set(t, l, "a1", "one", "a2", "two", "c3", "three", "e5", "five")
	var backup bytes.Buffer
	if err := l.Backup(&backup); err != nil {
		t.Fatal(err)
	}
	want, wantLen := dumpStore(t, l), l.Len()
	set(t, l, "a0", "new first", "a2", "", "c3", "changed", "d4", "new middle", "z9", "new last")
	if err := l.Append(&Group{Inputs: sampleInputs()}); err != nil {
		t.Fatal(err)
	}
	if dumpStore(t, l) == want || l.Len() == wantLen {
		t.Fatal("the changes changed nothing")
	}
	if err := l.Restore(bytes.NewReader(backup.Bytes())); err != nil {
		t.Fatal(err)
	}
	if got := dumpStore(t, l); got != want || l.Len() != wantLen {
		t.Fatalf("after Restore (len %d, want %d):\n%s\nwant:\n%s", l.Len(), wantLen, got, want)
	}
	// Restoring over an equal store writes nothing and changes nothing.
	if err := l.Restore(bytes.NewReader(backup.Bytes())); err != nil || dumpStore(t, l) != want {
		t.Fatalf("a second Restore: %v", err)
	}
}

// logDump lists the log's inputs, one line each.
func logDump(t *testing.T, l *Log) string {
	t.Helper()
	var b bytes.Buffer
	if err := l.Replay(0, func(seq uint64, in *core.Input) error {
		fmt.Fprintf(&b, "%d %x\n", seq, AppendRecord(nil, in))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestBackupRestoreInputs: the inputs (segment files) travel in a backup
// up to what its derived rows cover: restoring an earlier backup cuts the
// log back (a revert), restoring after another history rewrites it, and a
// fresh directory takes the whole of it.
func TestBackupRestoreInputs(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendN := func(n int, tag int64) {
		for i := range n {
			in := &core.Input{Kind: core.InputTick, TimeUs: tag + int64(i)}
			if err := l.Append(&Group{Inputs: []*core.Input{in}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	backup := func() []byte {
		var b bytes.Buffer
		if err := l.Backup(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	restore := func(b []byte) {
		if err := l.Restore(bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	}
	appendN(100, 1000)
	early, earlyLog := backup(), logDump(t, l)
	appendN(50, 5000)
	late, lateLog := backup(), logDump(t, l)
	// Inputs durable but not yet Stored are not in the backup: its state
	// is the one its derived rows describe.
	var pending Inputs
	pending.Add(&core.Input{Kind: core.InputTick, TimeUs: 9999})
	if _, err := l.AppendInputs(&pending); err != nil {
		t.Fatal(err)
	}
	if got := backup(); !bytes.Equal(got, late) {
		t.Fatal("a backup took an input its derived rows do not cover")
	}
	restore(early)
	if got := logDump(t, l); got != earlyLog || l.Len() != 100 {
		t.Fatalf("after restoring the earlier backup: %d inputs", l.Len())
	}
	appendN(30, 7000) // another history after the revert
	restore(late)
	if got := logDump(t, l); got != lateLog || l.Len() != 150 {
		t.Fatalf("after restoring the later backup over another history: %d inputs", l.Len())
	}

	fresh, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := fresh.Restore(bytes.NewReader(late)); err != nil {
		t.Fatal(err)
	}
	if got := logDump(t, fresh); got != lateLog {
		t.Fatal("a fresh directory restored other inputs")
	}
	if d, err := fresh.Derived(); err != nil || d != 150 {
		t.Fatalf("derived %d, %v", d, err)
	}
}

// TestBackupRefused: a damaged, truncated or disordered backup is refused
// by CheckBackup with ErrBadBackup; a store a Restore left half done is
// refused by Open.
func TestBackupRefused(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	set(t, l, "a", "1", "b", "2")
	var good bytes.Buffer
	if err := l.Backup(&good); err != nil {
		t.Fatal(err)
	}
	if err := CheckBackup(bytes.NewReader(good.Bytes())); err != nil {
		t.Fatalf("a good backup: %v", err)
	}
	raw := func(pairs ...string) []byte { // a backup written by hand
		var b bytes.Buffer
		zw, _ := zstd.NewWriter(&b)
		zw.Write([]byte(backupMagic))
		for _, p := range pairs {
			zw.Write([]byte{0, 0, 0, byte(len(p))})
			zw.Write([]byte(p))
		}
		zw.Write([]byte{0, 0, 0, 0})
		zw.Close()
		return b.Bytes()
	}
	g := good.Bytes()
	for name, bad := range map[string][]byte{
		"truncated":   g[:len(g)-3],
		"flipped":     append(append(bytes.Clone(g[:len(g)/2]), g[len(g)/2]^1), g[len(g)/2+1:]...),
		"not zstd":    []byte("hello"),
		"no header":   raw()[:4],
		"disordered":  raw("b", "2", "a", "1"),
		"repeated":    raw("a", "1", "a", "2"),
		"odd pairs":   raw("a"),
		"handwritten": raw("a", "1", "b", "2"),
	} {
		err := CheckBackup(bytes.NewReader(bad))
		if name == "handwritten" {
			if err != nil {
				t.Fatalf("a well-formed handwritten backup: %v", err)
			}
			continue
		}
		if !errors.Is(err, ErrBadBackup) {
			t.Errorf("%s: %v, want ErrBadBackup", name, err)
		}
	}
	set(t, l, string(restoreMarker), "x")
	l.Close()
	if _, err := Open(dir); err == nil || !bytes.Contains([]byte(err.Error()), []byte("half restored")) {
		t.Fatalf("Open of a half-restored store: %v", err)
	}
}

// FuzzCheckBackup: anvil_loadState hands CheckBackup a client's bytes. It
// never panics, and what it accepts restores into a store whose own
// backup it accepts again.
func FuzzCheckBackup(f *testing.F) {
	dir := f.TempDir()
	l, err := Open(dir)
	if err != nil {
		f.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(&Group{Inputs: sampleInputs()}); err != nil {
		f.Fatal(err)
	}
	var good bytes.Buffer
	if err := l.Backup(&good); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	f.Add([]byte{})
	f.Add([]byte("LDBKUP01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if CheckBackup(bytes.NewReader(b)) != nil {
			return
		}
		if err := l.Restore(bytes.NewReader(b)); err != nil {
			t.Fatalf("Restore of a backup CheckBackup accepted: %v", err)
		}
		var again bytes.Buffer
		if err := l.Backup(&again); err != nil {
			t.Fatal(err)
		}
		if err := CheckBackup(&again); err != nil {
			t.Fatalf("the restored store's backup: %v", err)
		}
	})
}
