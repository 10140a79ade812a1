package persist

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/dgraph-io/badger/v4"

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

// TestTicksKeepNewest: Append keeps the newest KeepTicks ticks, oldest
// first in time order (big-endian keys, times past 2^32 included),
// however the ticks are spread over groups.
func TestTicksKeepNewest(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.KeepTicks(3); err != nil {
		t.Fatal(err)
	}
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
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.KeepTicks(4); err != nil {
		t.Fatal(err)
	}
	appendTicks(t, l, 10, 20, 30)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	wantTicks(t, l, 10, 20, 30)
	if err := l.KeepTicks(4); err != nil {
		t.Fatal(err)
	}
	appendTicks(t, l, 40)
	appendTicks(t, l, 50)
	wantTicks(t, l, 20, 30, 40, 50)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.KeepTicks(2); err != nil {
		t.Fatal(err)
	}
	wantTicks(t, l, 40, 50)
	appendTicks(t, l, 60)
	wantTicks(t, l, 50, 60)
}

// TestTicksChunked: a body larger than a chunk is stored in several keys
// and read back whole; a tick stored whole by an earlier build is read and
// deleted like the others; deleting a tick leaves none of its chunks.
func TestTicksChunked(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { l.Close() }()
	legacy := []byte("a tick an earlier build stored whole")
	if err := l.db.Update(func(txn *badger.Txn) error { return txn.Set(u64Key(tickPrefix, 5), legacy) }); err != nil {
		t.Fatal(err)
	}
	if err := l.KeepTicks(3); err != nil {
		t.Fatal(err)
	}
	big := func(us int64) []byte { // incompressible: several chunks
		b := make([]byte, 3*tickChunkMax+100)
		rand.New(rand.NewSource(us)).Read(b)
		return b
	}
	for us := int64(10); us <= 11; us++ {
		g := Group{Inputs: []*core.Input{{Kind: core.InputTick, TimeUs: us}}, Ticks: []StoredTick{{TickUs: us, Body: big(us)}}}
		if err := l.Append(&g); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.Ticks()
	if err != nil || len(got) != 3 || got[0].TickUs != 5 || !bytes.Equal(got[0].Body, legacy) ||
		!bytes.Equal(got[1].Body, big(10)) || !bytes.Equal(got[2].Body, big(11)) {
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
	if n := keys(); n != 1+4+4 {
		t.Fatalf("%d tick keys, want the legacy one and 4 chunks each", n)
	}
	appendTicks(t, l, 12, 13) // small: one chunk each; 5 and 10 go
	if n := keys(); n != 4+1+1 {
		t.Fatalf("%d tick keys after two more ticks, want 6", n)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	if err := l.KeepTicks(1); err != nil { // a smaller keep: 11 and 12 go
		t.Fatal(err)
	}
	if n := keys(); n != 1 {
		t.Fatalf("%d tick keys after KeepTicks(1), want 1", n)
	}
	wantTicks(t, l, 13)
}
