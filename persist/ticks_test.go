package persist

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/s2"

	"github.com/ledgervenue/node/core"
)

// appendTicks appends one group holding a tick input and the stored tick
// for each time in us.
func appendTicks(t *testing.T, l *Log, us ...int64) {
	t.Helper()
	var g Group
	for _, u := range us {
		g.Inputs = append(g.Inputs, &core.Input{Kind: core.InputTick, TimeUs: u})
		g.Ticks = append(g.Ticks, StoredTick{TickUs: u, Body: []byte(fmt.Sprintf("tick %d", u))})
	}
	if err := l.Append(&g); err != nil {
		t.Fatal(err)
	}
}

// wantTicks checks that l stores exactly the ticks at us, oldest first,
// with the bodies appendTicks gave them.
func wantTicks(t *testing.T, l *Log, us ...int64) {
	t.Helper()
	got, err := l.Ticks()
	if err != nil {
		t.Fatal(err)
	}
	var have []int64
	for _, st := range got {
		have = append(have, st.TickUs)
		if want := fmt.Sprintf("tick %d", st.TickUs); string(st.Body) != want {
			t.Fatalf("tick at %d has body %q, want %q", st.TickUs, st.Body, want)
		}
	}
	if fmt.Sprint(have) != fmt.Sprint(us) {
		t.Fatalf("stored ticks %v, want %v", have, us)
	}
}

// openIn opens the log in dir, keeping keep ticks (0: KeepTicks not
// called); the caller closes it.
func openIn(t *testing.T, dir string, keep int) *Log {
	t.Helper()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if keep > 0 {
		if err := l.KeepTicks(keep); err != nil {
			l.Close()
			t.Fatal(err)
		}
	}
	return l
}

// openKeeping opens a log in a new folder, keeping keep ticks; the test
// closes it.
func openKeeping(t *testing.T, keep int) *Log {
	t.Helper()
	l := openIn(t, t.TempDir(), keep)
	t.Cleanup(func() { l.Close() })
	return l
}

// reopenKeeping closes l (which the test does not close), opens the log
// in dir again and keeps keep ticks; the test closes it.
func reopenKeeping(t *testing.T, l *Log, dir string, keep int) *Log {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openIn(t, dir, keep)
	t.Cleanup(func() { l.Close() })
	return l
}

// TestTicksKeepNewest: Append keeps the newest KeepTicks ticks, oldest
// first in time order (big-endian keys, times past 2^32 included),
// however the ticks are spread over groups.
func TestTicksKeepNewest(t *testing.T) {
	l := openKeeping(t, 3)
	wantTicks(t, l)
	appendTicks(t, l, 255)
	appendTicks(t, l, 256, 1<<32)
	wantTicks(t, l, 255, 256, 1<<32)
	appendTicks(t, l, 1<<32+1)
	wantTicks(t, l, 256, 1<<32, 1<<32+1)
	appendTicks(t, l) // a group without ticks deletes none
	wantTicks(t, l, 256, 1<<32, 1<<32+1)
	// A group with more ticks than kept stores only its newest.
	appendTicks(t, l, 1<<40, 1<<40+1, 1<<40+2, 1<<40+3)
	wantTicks(t, l, 1<<40+1, 1<<40+2, 1<<40+3)
	if l.Len() != 8 {
		t.Fatalf("log holds %d inputs, want 8: the ticks' inputs share their groups", l.Len())
	}
}

// TestTicksSurviveReopen: the stored ticks are read back after a reopen,
// pruning continues from them, and a smaller KeepTicks deletes the oldest
// at once.
func TestTicksSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	l := openIn(t, dir, 4)
	appendTicks(t, l, 10, 20, 30)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openIn(t, dir, 0)
	wantTicks(t, l, 10, 20, 30) // read before KeepTicks
	if err := l.KeepTicks(4); err != nil {
		t.Fatal(err)
	}
	appendTicks(t, l, 40)
	appendTicks(t, l, 50)
	wantTicks(t, l, 20, 30, 40, 50)
	l = reopenKeeping(t, l, dir, 2)
	wantTicks(t, l, 40, 50)
	appendTicks(t, l, 60)
	wantTicks(t, l, 50, 60)
}

// TestTicksInFiles: a tick is a file of its own; ticks stored in Badger by
// earlier builds (whole, or in chunks) are read beside them and deleted
// like them; a leftover temporary file is removed; a damaged file is an
// error, not a silently shorter ring.
func TestTicksInFiles(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { l.Close() }()
	big := func(us int64) []byte { // incompressible: several Badger chunks
		b := make([]byte, 3*tickChunkMax+100)
		rand.New(rand.NewSource(us)).Read(b)
		return b
	}
	legacy := []byte("a tick an earlier build stored whole")
	if err := l.db.Update(func(txn *badger.Txn) error {
		if err := txn.Set(u64Key(tickPrefix, 5), legacy); err != nil {
			return err
		}
		enc := s2.Encode(nil, big(7))
		for c := uint16(0); len(enc) > 0; c++ {
			n := min(len(enc), tickChunkMax)
			if err := txn.Set(tickChunkKey(7, c), enc[:n]); err != nil {
				return err
			}
			enc = enc[n:]
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ticksDir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, ticksDir, tickFileName(9)+".tmp")
	if err := os.WriteFile(tmp, []byte("half a tick"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := l.KeepTicks(4); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the leftover temporary file is still there: %v", err)
	}
	for us := int64(10); us <= 11; us++ {
		g := Group{Inputs: []*core.Input{{Kind: core.InputTick, TimeUs: us}}, Ticks: []StoredTick{{TickUs: us, Body: big(us)}}}
		if err := l.Append(&g); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.Ticks()
	if err != nil || len(got) != 4 || got[0].TickUs != 5 || !bytes.Equal(got[0].Body, legacy) ||
		got[1].TickUs != 7 || !bytes.Equal(got[1].Body, big(7)) ||
		!bytes.Equal(got[2].Body, big(10)) || !bytes.Equal(got[3].Body, big(11)) {
		t.Fatalf("stored ticks: %d, %v", len(got), err)
	}
	keys := func() (n int) {
		l.db.View(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{tickPrefix}})
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
				n++
			}
			return nil
		})
		return n
	}
	files := func() []int64 {
		us, err := l.tickFiles(false)
		if err != nil {
			t.Fatal(err)
		}
		return us
	}
	if n, f := keys(), files(); n != 1+4 || fmt.Sprint(f) != "[10 11]" {
		t.Fatalf("%d tick keys and files %v, want the legacy key, 4 chunks and the files of 10 and 11", n, f)
	}
	appendTicks(t, l, 12, 13) // 5 and 7 go
	if n, f := keys(), files(); n != 0 || fmt.Sprint(f) != "[10 11 12 13]" {
		t.Fatalf("%d tick keys and files %v after two more ticks", n, f)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	if err := l.KeepTicks(2); err != nil { // a smaller keep: 10 and 11 go
		t.Fatal(err)
	}
	if f := files(); fmt.Sprint(f) != "[12 13]" {
		t.Fatalf("files %v after KeepTicks(2)", f)
	}
	wantTicks(t, l, 12, 13)
	name := filepath.Join(dir, ticksDir, tickFileName(13))
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 1
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Ticks(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a damaged tick file read as %v", err)
	}
}

// TestTicksBackupRestore: a backup carries the tick files as Badger's
// chunks; restoring it leaves its ticks in Badger and removes the files of
// the state replaced, and the ring goes on from them.
func TestTicksBackupRestore(t *testing.T) {
	l := openKeeping(t, 3)
	appendTicks(t, l, 10, 20)
	var backup bytes.Buffer
	if err := l.Backup(&backup); err != nil {
		t.Fatal(err)
	}
	appendTicks(t, l, 30, 40)
	wantTicks(t, l, 20, 30, 40)
	if err := l.Restore(bytes.NewReader(backup.Bytes())); err != nil {
		t.Fatal(err)
	}
	wantTicks(t, l, 10, 20)
	if f, err := l.tickFiles(false); err != nil || len(f) != 0 {
		t.Fatalf("tick files after Restore: %v, %v", f, err)
	}
	appendTicks(t, l, 50, 60) // 10 and 20 in Badger, 50 a file: 10 goes
	wantTicks(t, l, 20, 50, 60)
	var again bytes.Buffer // Badger's ticks and files in one backup, in order
	if err := l.Backup(&again); err != nil {
		t.Fatal(err)
	}
	appendTicks(t, l, 70)
	if err := l.Restore(bytes.NewReader(again.Bytes())); err != nil {
		t.Fatal(err)
	}
	wantTicks(t, l, 20, 50, 60)
}

// TestTicksLeftByAStoppedStore: a Store writes its tick files before its
// commit; a process stopped in between leaves a file the store's derived
// rows do not cover, and the restart, which builds that tick again, stores
// it over the leftover.
func TestTicksLeftByAStoppedStore(t *testing.T) {
	dir := t.TempDir()
	l := openIn(t, dir, 4)
	appendTicks(t, l, 10)
	if err := l.writeTickFile(&l.store, &StoredTick{TickUs: 20, Body: []byte("not committed")}); err != nil {
		t.Fatal(err)
	}
	l = reopenKeeping(t, l, dir, 4)
	appendTicks(t, l, 20, 30)
	wantTicks(t, l, 10, 20, 30)
}
