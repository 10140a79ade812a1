package persist

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
)

// Badger reads and writes its tables through shared memory mappings, and
// the kernel leaves every page of them it touched resident in the process
// until memory runs short: a node's RSS then grows with its history on disk
// although none of it is the node's own memory. TrimMapped hands those
// pages back (see trim_linux.go): they stay in the kernel's page cache,
// reclaimable, and the next read of them faults them in again.

// mappedTable is one shared mapping of a table file of the store.
type mappedTable struct {
	start, end uint64
}

// parseMaps returns the shared mappings of files in dir whose names end in
// .sst, from /proc/<pid>/maps text. Other lines, private mappings and
// unreadable lines are skipped.
func parseMaps(maps []byte, dir string) []mappedTable {
	dir = filepath.Clean(dir) + string(filepath.Separator)
	var out []mappedTable
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// address perms offset dev inode path
		f := strings.Fields(sc.Text())
		if len(f) < 6 || len(f[1]) != 4 || f[1][3] != 's' {
			continue
		}
		path := strings.Join(f[5:], " ")
		if !strings.HasPrefix(path, dir) || !strings.HasSuffix(path, ".sst") {
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
		out = append(out, mappedTable{start, end})
	}
	return out
}
