package persist

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/ledgervenue/node/core"
)

// TestValueLogCollected: published ticks large enough for the value log,
// deleted past KeepTicks as the node deletes them, leave their value-log
// files behind until CollectValueLog, which reclaims them (once a
// compaction has counted their garbage) and keeps the live ticks whole.
func TestValueLogCollected(t *testing.T) {
	dir := t.TempDir()
	// Small memtables and few level-0 tables: compactions come soon.
	tune := func(o badger.Options) badger.Options {
		return o.WithValueThreshold(1 << 10).WithValueLogFileSize(1 << 20).
			WithMemTableSize(256 << 10).WithNumLevelZeroTables(1)
	}
	l, err := open(dir, tune)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { l.Close() }()
	if err := l.KeepTicks(2); err != nil {
		t.Fatal(err)
	}
	body := func(us int64) []byte { return bytes.Repeat([]byte{byte(us)}, 200<<10) }
	for us := int64(1); us <= 40; us++ {
		g := Group{Inputs: []*core.Input{{Kind: core.InputTick, TimeUs: us}}, Ticks: []StoredTick{{TickUs: us, Body: body(us)}}}
		for i := range 1000 { // rows that fill memtables, as history does
			g.Links = append(g.Links, TickLink{Intent: core.Hash{byte(us), byte(i), byte(i >> 8)}, TickUs: us})
		}
		if err := l.Append(&g); err != nil {
			t.Fatal(err)
		}
	}
	vlogBytes := func() int64 {
		var total int64
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".vlog") {
				fi, err := os.Stat(filepath.Join(dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				total += fi.Size()
			}
		}
		return total
	}
	before := vlogBytes()
	if before < 6<<20 {
		t.Fatalf("%d bytes of value log before collecting: the test wrote too little there", before)
	}
	// Badger learns what a value-log file holds of garbage when its
	// compactions drop the keys, which run in the background.
	n := 0
	for deadline := time.Now().Add(10 * time.Second); n == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n, err = l.CollectValueLog(); err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 {
		t.Fatal("no value-log file collected")
	}
	if after := vlogBytes(); after > before/2 {
		t.Fatalf("%d bytes of value log after collecting %d files (%d before), want at most half", after, n, before)
	}
	// Badger's collection may bring a deleted value back (its issues 2286
	// and 2278): a reopen's KeepTicks trims the ticks again, as the node's
	// does.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err = open(dir, tune); err != nil {
		t.Fatal(err)
	}
	if err := l.KeepTicks(2); err != nil {
		t.Fatal(err)
	}
	got, err := l.Ticks()
	if err != nil || len(got) != 2 || got[0].TickUs != 39 || got[1].TickUs != 40 {
		t.Fatalf("ticks after collecting and reopening: %d, %v", len(got), err)
	}
	for _, st := range got {
		if !bytes.Equal(st.Body, body(st.TickUs)) {
			t.Fatalf("tick %d damaged by the collection", st.TickUs)
		}
	}
}
