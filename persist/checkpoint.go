package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Badger is written without syncs of its own (Store): what must survive a
// crash before a client hears of it, the inputs and what the committee
// signed (side records, sides.go), is in the segment files, and the rest
// can be derived from them again. After the process alone stopped (a crash,
// SIGKILL) the kernel still writes back every page Badger wrote, so the
// derived mark is exact. After the machine stopped (power loss, kernel
// panic) Badger may have lost any of its recent writes, in any order, and
// its marks may claim rows it lost. For that case:
//
//   - Store takes a checkpoint every checkpointEvery and after each
//     snapshot: it syncs the store's unsynced files (syncStore), then
//     writes the derived mark and the next batch seq it covers to
//     dir/checkpoint (replaced atomically, synced);
//   - Open writes the machine's boot id to dir/running and Close removes
//     it: a store opened while dir/running names another boot was in use
//     when its machine stopped, and until its next Store (the node's
//     rebuild) Derived, Head and Snapshots report the checkpoint's view,
//     so that the node derives again everything after it.
const (
	checkpointFile  = "checkpoint"
	runningFile     = "running"
	checkpointBytes = 8 + 8 + 4 // derived | next batch seq | crc32c
	checkpointEvery = 5 * time.Second
)

// trust is what a Log opened after its machine stopped may rely on:
// derived rows up to derived, batches before nextBatch, snapshots up to
// derived.
type trust struct {
	derived   uint64
	nextBatch uint64
}

// openRunning reads the previous run's marker and writes this run's. It
// sets l.after when the previous run's machine stopped under it.
func (l *Log) openRunning(dir string) error {
	boot := bootID()
	prev, err := os.ReadFile(filepath.Join(dir, runningFile))
	switch {
	case err == nil && boot != "" && string(prev) != boot:
		// The marker stays until the rebuild is stored (Store): if this
		// run stops first, the next one rebuilds too.
		cp, err := readCheckpoint(dir)
		if err != nil {
			return err
		}
		l.after = &cp
		return nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("cannot read %s: %w", runningFile, err)
	}
	// The store as found is trusted: a first checkpoint covers it before
	// this run writes anything unsynced.
	if err := l.checkpoint(true); err != nil {
		return err
	}
	return l.markRunning()
}

// markRunning writes this boot's id to dir/running.
func (l *Log) markRunning() error { return writeFileSynced(l.dir, runningFile, []byte(bootID())) }

// readCheckpoint reads dir/checkpoint; none (a store that never took one)
// trusts nothing.
func readCheckpoint(dir string) (trust, error) {
	b, err := os.ReadFile(filepath.Join(dir, checkpointFile))
	if errors.Is(err, os.ErrNotExist) {
		return trust{nextBatch: 1}, nil
	}
	if err != nil {
		return trust{}, fmt.Errorf("cannot read the store's checkpoint: %w", err)
	}
	if len(b) != checkpointBytes || crc32.Checksum(b[:16], crcTable) != binary.BigEndian.Uint32(b[16:]) {
		return trust{}, fmt.Errorf("%w: the store's checkpoint", ErrCorrupt)
	}
	return trust{derived: binary.BigEndian.Uint64(b), nextBatch: binary.BigEndian.Uint64(b[8:])}, nil
}

// checkpoint makes everything Store wrote durable and records what it
// covers; allTicks: every tick file, not only those written since the last
// checkpoint (at open, the previous run's may be unsynced).
// REQUIRES: the storer (no Store beside it).
func (l *Log) checkpoint(allTicks bool) error {
	var cp trust
	err := l.db.View(func(txn *badger.Txn) error {
		var err error
		if cp.derived, err = derivedIn(txn); err != nil {
			return err
		}
		h, err := headIn(txn, ^uint64(0))
		cp.nextBatch = h.NextSeq
		return err
	})
	if err != nil {
		return err
	}
	if err := syncStore(l.dir); err != nil {
		return fmt.Errorf("cannot sync the store: %w", err)
	}
	if err := l.syncTicks(allTicks); err != nil {
		return fmt.Errorf("cannot sync the stored ticks: %w", err)
	}
	if err := writeFileSynced(l.dir, checkpointFile, appendCheckpoint(nil, cp)); err != nil {
		return err
	}
	l.checkpointAt = time.Now()
	return nil
}

// appendCheckpoint appends dir/checkpoint's bytes for cp.
func appendCheckpoint(dst []byte, cp trust) []byte {
	at := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, cp.derived)
	dst = binary.BigEndian.AppendUint64(dst, cp.nextBatch)
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[at:], crcTable))
}

// syncStore makes durable what Badger wrote without a sync: each memtable
// log (the immutable ones too, which Badger's own Sync leaves alone) and
// value log, then the folder (new files' names); Badger syncs its tables
// and manifest itself. Only the store's files: a sync of the whole file
// system (syncfs) would also wait for whatever else the machine wrote.
func syncStore(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".mem") && !strings.HasSuffix(name, ".vlog") {
			continue
		}
		// A file gone meanwhile is a memtable flushed and its log removed.
		if err := syncFile(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return syncDir(dir)
}

// syncFile makes the file at path durable; a file that no longer exists
// needs nothing.
func syncFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}

// writeFileSynced replaces dir/name with data: a temporary file, synced,
// renamed over it, the folder synced.
func writeFileSynced(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	f, err := os.Create(tmp)
	if err == nil {
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		err = errors.Join(err, f.Close())
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", name, err)
	}
	return nil
}
