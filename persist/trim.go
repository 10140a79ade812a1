package persist

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Badger reads and writes its tables through shared memory mappings, and
// the kernel leaves every page of them it touched resident in the process
// until memory runs short: a node's RSS then grows with its history on disk
// although none of it is the node's own memory. TrimMapped hands those
// pages back (see trim_linux.go): they stay in the kernel's page cache,
// reclaimable, and the next read of them faults them in again.

// The write-ahead log of Badger's memtable is a mapped file too, written in
// place and msync'ed on every commit. Linux (6.x, ext4) fills a mapping
// that is faulted in sequentially with ever larger folios, and a write to a
// folio dirties all of it: as a memtable fills, each commit's msync wrote
// back up to 2 MB for a few KB of data (measured: 7 KB per commit at the
// start of a log file, 184 KB at 25 MB into it, 70 KB per transfer over a
// whole soak). Random-access advice keeps the log's folios to single pages,
// so a commit writes what it changed; adviseLogs gives it to every log
// file mapping, within adviseLogsEvery of Badger mapping it (trim_linux.go).

// adviseLogsEvery is how often Append looks for new log mappings: a new
// memtable's log is mapped when the previous one fills, and its folios
// only grow after several MB of writes.
const adviseLogsEvery = 500 * time.Millisecond

// mappedFile is one shared mapping of a file of the store.
type mappedFile struct {
	start, end uint64
}

// parseMaps returns the shared mappings of files in dir whose names end in
// suffix, from /proc/<pid>/maps text. Other lines, private mappings and
// unreadable lines are skipped.
func parseMaps(maps []byte, dir, suffix string) []mappedFile {
	dir = filepath.Clean(dir) + string(filepath.Separator)
	var out []mappedFile
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// address perms offset dev inode path
		f := strings.Fields(sc.Text())
		if len(f) < 6 || len(f[1]) != 4 || f[1][3] != 's' {
			continue
		}
		path := strings.Join(f[5:], " ")
		if !strings.HasPrefix(path, dir) || !strings.HasSuffix(path, suffix) {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		out = append(out, mappedFile{start, end})
	}
	return out
}
