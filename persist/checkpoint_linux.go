package persist

import (
	"os"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"golang.org/x/sys/unix"
)

// syncStore makes durable every write to the file system holding dir:
// Badger's memtable logs (the immutable ones too, which its own Sync
// leaves alone), value logs and tables.
func syncStore(_ *badger.DB, dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}

// bootID names this boot of the machine.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
