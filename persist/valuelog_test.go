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

// TestValueLogCollected: snapshots large enough for the value log,
// deleted as the node deletes old ones, leave their value-log files behind
// until CollectValueLog, which reclaims them (once a compaction has counted
// their garbage) and keeps the live snapshots whole.
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
	body := func(seq uint64) []byte { return bytes.Repeat([]byte{byte(seq)}, 200<<10) }
	for seq := uint64(1); seq <= 40; seq++ {
		g := Group{Inputs: []*core.Input{{Kind: core.InputTick, TimeUs: int64(seq)}}, Snapshot: &Snapshot{Seq: seq, compressed: body(seq)}}
		for i := range 1000 { // rows that fill memtables, as history does
			g.Links = append(g.Links, TickLink{Intent: core.Hash{byte(seq), byte(i), byte(i >> 8)}, TickUs: int64(seq)})
		}
		if err := l.Append(&g); err != nil {
			t.Fatal(err)
		}
		if err := l.DeleteSnapshotsBefore(max(seq, 2) - 1); err != nil {
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
	// compactions drop the keys, which run in the background: collect
	// until half is gone.
	collected, after := 0, before
	for deadline := time.Now().Add(20 * time.Second); after > before/2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		n, err := l.CollectValueLog()
		if err != nil {
			t.Fatal(err)
		}
		collected += n
		after = vlogBytes()
	}
	if after > before/2 {
		t.Fatalf("%d bytes of value log after collecting %d files (%d before), want at most half", after, collected, before)
	}
	// The newest two snapshots whole (Badger's collection may bring a
	// deleted one back, its issues 2286 and 2278: the node reads the newest
	// first and deletes the old ones again).
	var seqs []uint64
	err = l.Snapshots(func(seq uint64, b []byte, err error) bool {
		seqs = append(seqs, seq)
		return len(seqs) < 2
	})
	if err != nil || len(seqs) != 2 || seqs[0] != 40 || seqs[1] != 39 {
		t.Fatalf("newest snapshots after collecting: %v, %v", seqs, err)
	}
	raw := map[uint64][]byte{}
	if err := l.db.View(func(txn *badger.Txn) error {
		for _, seq := range seqs {
			item, err := txn.Get(snapshotKey(seq))
			if err != nil {
				return err
			}
			if raw[seq], err = item.ValueCopy(nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for seq, b := range raw {
		if !bytes.Equal(b, body(seq)) {
			t.Fatalf("snapshot %d damaged by the collection", seq)
		}
	}
}
