package persist

import (
	"fmt"
	"testing"

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
