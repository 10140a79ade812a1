package persist

import (
	"os"

	"golang.org/x/sys/unix"
)

// TrimMapped asks the kernel to reclaim the resident pages of the store's
// table files and memtable logs this process maps (madvise MADV_PAGEOUT),
// and returns how many bytes of mappings it advised. Clean pages are
// dropped, dirty ones written back first; the data is in the files either
// way, so no read or write of Badger's is affected but for a fault on the
// next access. A memtable log is only appended to and read back at start-up
// (the memtable itself is in anonymous memory), so its written pages are
// dead weight in RSS: two logs of 128 MB each once full.
//
// PAGEOUT is the one advice that is safe against a race: Badger may unmap a
// file between the read of /proc/self/maps and the madvise, and the range
// may then hold anonymous memory, which PAGEOUT can only swap out, never
// discard (DONTNEED would zero it).
func (l *Log) TrimMapped() (int64, error) {
	var advised int64
	for _, suffix := range [...]string{".sst", ".mem"} {
		n, err := l.adviseMapped(suffix, unix.MADV_PAGEOUT)
		advised += n
		if err != nil {
			return advised, err
		}
	}
	return advised, nil
}

// adviseLogs gives random-access advice to the mappings of Badger's memtable
// logs (trim.go says why). Advice only sets a flag on a mapping, so advising
// one twice, or a range Badger unmapped meanwhile, is harmless; errors are
// ignored for the same reason: the advice saves writes, it changes no data.
func (l *Log) adviseLogs() { l.adviseMapped(".mem", unix.MADV_RANDOM) }

// adviseMapped gives advice to the store's shared mappings of files whose
// names end in suffix, as /proc/self/maps lists them now, and returns how
// many bytes of mappings it advised. A mapping gone since the read is
// skipped.
func (l *Log) adviseMapped(suffix string, advice uintptr) (int64, error) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	var advised int64
	for _, m := range parseMaps(maps, l.db.Opts().Dir, suffix) {
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(m.start), uintptr(m.end-m.start), advice)
		switch errno {
		case 0:
			advised += int64(m.end - m.start)
		case unix.ENOMEM: // unmapped since the read: nothing to do
		default:
			return advised, errno
		}
	}
	return advised, nil
}
