package persist

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/ledgervenue/node/core"
)

func TestParseMaps(t *testing.T) {
	maps := []byte(`7f97ed631000-7f97ed81b000 rw-s 00000000 fe:00 9978310                    /data/node/023046.sst
7f97ed81b000-7f97eda05000 r--p 00000000 fe:00 9979961                    /data/node/023045.sst
7f97eda05000-7f97edbef000 rw-s 00000000 fe:00 9978856                    /data/node/000001.mem
7f97edbef000-7f97edc00000 rw-s 00000000 fe:00 9978857                    /data/nodeother/000002.sst
7f97edc00000-7f97edd00000 rw-s 00000000 fe:00 9978858                    /data/node/with space.sst
garbage line
zz-7f97edd00000 rw-s 00000000 fe:00 9978858                    /data/node/bad.sst
7f97edd00000-7f97ede00000 rw-p 00000000 00:00 0
`)
	got := parseMaps(maps, "/data/node/", ".sst")
	want := []mappedFile{{0x7f97ed631000, 0x7f97ed81b000}, {0x7f97edc00000, 0x7f97edd00000}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	if got, want := parseMaps(maps, "/data/node", ".mem"), []mappedFile{{0x7f97eda05000, 0x7f97edbef000}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("logs: got %x, want %x", got, want)
	}
}

// TestTrimMapped: trimming a store with tables drops its mapped pages and
// leaves every input readable.
func TestTrimMapped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("TrimMapped is a no-op here")
	}
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20_000
	appendEach(t, l, n, 1000, func(i int) *core.Input { return &core.Input{Kind: core.InputTick, TimeUs: int64(i + 1)} })
	storeRows(t, l, n, 200) // the inputs are in segment files: Badger's tables hold these
	// Closing flushes the memtable into a table file, which the reopened
	// store maps.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	var tables int64
	for _, m := range parseMaps(maps, dir, ".sst") {
		tables += int64(m.end - m.start)
	}
	if tables == 0 {
		t.Fatal("no table file of the store is mapped")
	}
	checkRows(t, l, n, 200) // now the tables' pages are resident
	before := rssFile(t)
	advised, err := l.TrimMapped()
	if err != nil || advised < tables {
		t.Fatalf("TrimMapped: %d bytes, %v", advised, err)
	}
	if after := rssFile(t); after > before-tables/2 {
		t.Fatalf("RssFile %d kB before the trim, %d kB after: %d kB of tables mapped", before>>10, after>>10, tables>>10)
	}
	checkReplay(t, l, n, func(seq uint64, got *core.Input) error {
		if got.TimeUs != int64(seq) {
			return fmt.Errorf("input %d has time %d", seq, got.TimeUs)
		}
		return nil
	})
}

// TestTrimMappedLogs: the written pages of the memtable's log, which no
// table holds yet, are handed back too, and the log still reads back.
func TestTrimMappedLogs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("TrimMapped is a no-op here")
	}
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// About 24 MB of rows: well inside one 64 MB memtable, so no table
	// file exists and every byte written sits in the log's mapping.
	const n, size = 12_000, 2000
	storeRows(t, l, n, size)
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	if len(parseMaps(maps, dir, ".sst")) != 0 || len(parseMaps(maps, dir, ".mem")) == 0 {
		t.Fatal("want the memtable's log mapped and no table file yet")
	}
	before := rssFile(t)
	if _, err := l.TrimMapped(); err != nil {
		t.Fatal(err)
	}
	const written = n * size
	if after := rssFile(t); after > before-written/2 {
		t.Fatalf("RssFile %d kB before the trim, %d kB after: %d kB were written to the log", before>>10, after>>10, written>>10)
	}
	checkRows(t, l, n, size)
}

// rowsPrefix is the test rows' key prefix: no kind of the store's.
const rowsPrefix = 'z'

// storeRows writes n Badger rows of size bytes each (keys 1 to n, the
// first two bytes of each value its index), 500 to a commit.
func storeRows(t *testing.T, l *Log, n, size int) {
	t.Helper()
	rng := rand.New(rand.NewSource(1))
	for from := 0; from < n; from += 500 {
		err := l.db.Update(func(txn *badger.Txn) error {
			for i := from; i < min(n, from+500); i++ {
				v := make([]byte, size)
				rng.Read(v)
				v[0], v[1] = byte(i), byte(i>>8)
				if err := txn.Set(u64Key(rowsPrefix, uint64(i+1)), v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkRows reads storeRows' rows back.
func checkRows(t *testing.T, l *Log, n, size int) {
	t.Helper()
	i := 0
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{rowsPrefix}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			if len(v) != size || v[0] != byte(i) || v[1] != byte(i>>8) {
				t.Fatalf("row %d read back with %d bytes", i, len(v))
			}
			i++
		}
		return nil
	})
	if err != nil || i != n {
		t.Fatalf("%d rows read back, want %d (%v)", i, n, err)
	}
}

// appendEach appends the inputs mk makes for 0..n-1, per of them to a
// group commit.
func appendEach(t *testing.T, l *Log, n, per int, mk func(i int) *core.Input) {
	t.Helper()
	var g Group
	for i := range n {
		g.Inputs = append(g.Inputs, mk(i))
		if len(g.Inputs) == per || i == n-1 {
			if err := l.Append(&g); err != nil {
				t.Fatal(err)
			}
			g.Reset()
		}
	}
}

// checkReplay replays the whole of l and checks that it holds n inputs,
// each as check says.
func checkReplay(t *testing.T, l *Log, n int, check func(seq uint64, in *core.Input) error) {
	t.Helper()
	count := 0
	if err := l.Replay(0, func(seq uint64, in *core.Input) error {
		count++
		return check(seq, in)
	}); err != nil || count != n {
		t.Fatalf("replay after the trim: %d inputs, %v", count, err)
	}
}

// rssFile returns the process's resident file-backed bytes.
func rssFile(t *testing.T) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(status, []byte("\n")) {
		if f := bytes.Fields(line); len(f) == 3 && string(f[0]) == "RssFile:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
