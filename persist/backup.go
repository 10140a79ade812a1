package persist

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/zstd"
)

// Whole-store copies, for the node's evm_snapshot / evm_revert and state
// dumps. Backup streams every key and value of one consistent view (a
// Badger read transaction); Restore makes the store hold exactly what a
// backup holds.
//
// Layout: a zstd stream (its checksum catches damage) of
//
//	| backupMagic 8 | (keyLen 4 | key | valueLen 4 | value)* | 0 4 |
//
// Restore does not use Badger's own DropAll and Load: DropAll may panic a
// concurrent reader (the node reads its history without its lock), and
// Load writes at the backup's versions, under the store's newer ones. It
// writes the difference as new versions; readers meanwhile see one state
// or the other, or a mix, never a fault. The pairs are in strictly
// increasing key order (a backup that is not is refused). A restoreMarker key is set first and removed last: Open refuses
// a store a crash left half restored.

const backupMagic = "LDBKUP01"

// BackupValueMax bounds one key or value Restore accepts: a snapshot is the
// largest value the store holds, and 1 GiB compressed is far beyond any.
const BackupValueMax = 1 << 30

var restoreMarker = []byte("restoring")

// ErrBadBackup wraps what makes Restore refuse its input before it changed
// anything.
var ErrBadBackup = errors.New("not a state backup of this ledgerd")

// Backup writes the whole store, as of one moment, to w.
func (l *Log) Backup(w io.Writer) error {
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(zw, 1<<16)
	bw.WriteString(backupMagic)
	var n [4]byte
	put := func(b []byte) {
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		bw.Write(n[:])
		bw.Write(b)
	}
	v, err := l.viewTicks()
	if err != nil {
		zw.Close()
		return fmt.Errorf("cannot back up the store: %w", err)
	}
	defer v.close()
	err = func() error {
		txn := v.txn
		// The inputs (segment files) go where their keys sort, up to the
		// last the view's derived rows cover: the state is the view's.
		through, err := derivedIn(txn)
		if err != nil {
			return err
		}
		inputsDone := false
		inputs := func() error {
			inputsDone = true
			first := l.segs.first()
			if first == 0 || through < first {
				return nil
			}
			return l.segs.each(first, func(seq uint64, p []byte) error {
				if seq <= through {
					put(u64Key(logPrefix, seq))
					put(p)
				}
				return nil
			})
		}
		// The tick files go after Badger's ticks (older), as Badger's
		// chunks: Restore stores them so.
		ticksDone := false
		ticks := func() error {
			ticksDone = true
			for _, us := range v.files {
				enc, ok, err := l.readTickFile(us)
				if !ok {
					if err != nil {
						return err
					}
					continue
				}
				for c := uint16(0); len(enc) > 0 || c == 0; c++ {
					n := min(len(enc), tickChunkMax)
					put(tickChunkKey(us, c))
					put(enc[:n])
					enc = enc[n:]
				}
			}
			return nil
		}
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		var val []byte
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			if !inputsDone && item.Key()[0] > logPrefix {
				if err := inputs(); err != nil {
					return err
				}
			}
			if !ticksDone && item.Key()[0] > tickPrefix {
				if err := ticks(); err != nil {
					return err
				}
			}
			var err error
			if val, err = item.ValueCopy(val[:0]); err != nil {
				return err
			}
			put(item.Key())
			put(val)
		}
		if !inputsDone {
			if err := inputs(); err != nil {
				return err
			}
		}
		if !ticksDone {
			return ticks()
		}
		return nil
	}()
	if err != nil {
		zw.Close()
		return fmt.Errorf("cannot back up the store: %w", err)
	}
	put(nil) // a zero-length key ends the pairs: no key is empty
	if err := bw.Flush(); err != nil {
		zw.Close()
		return fmt.Errorf("cannot write the backup: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("cannot write the backup: %w", err)
	}
	return nil
}

// CheckBackup reads a backup to its end and verifies its framing and
// checksum, changing nothing: Restore's input should pass it first, since
// a Restore that fails midway leaves the store half restored.
func CheckBackup(r io.Reader) error {
	return readBackup(r, func(k, v []byte) error { return nil })
}

// Restore makes the store hold exactly the backup r and reloads the log's
// own bookkeeping. It walks the store and the backup together (both in key
// order) and writes only the difference: a key the backup lacks is
// deleted, a key it holds with another value (or that the store lacks) is
// set, an equal one is left alone; so a revert costs a read of the store
// plus its changes. An error before the first write (ErrBadBackup) changed
// nothing; a later one leaves a store Open refuses.
// REQUIRES: no Append, snapshot or prune runs meanwhile.
func (l *Log) Restore(r io.Reader) error {
	// The marker is durable before the first change and removed only once
	// every change is (Badger's writes are not synced: checkpoint.go).
	if err := l.db.Update(func(txn *badger.Txn) error { return txn.Set(restoreMarker, nil) }); err != nil {
		return fmt.Errorf("cannot restore the store: %w", err)
	}
	if err := syncStore(l.dir); err != nil {
		return fmt.Errorf("cannot restore the store: %w", err)
	}
	wb := l.db.NewWriteBatch()
	defer wb.Cancel()
	in := inputRestore{segs: l.segs}
	defer in.close()
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		it.Rewind()
		// drop deletes the store's keys before k (all when k is nil).
		drop := func(k []byte) error {
			for ; it.Valid() && (k == nil || bytes.Compare(it.Item().Key(), k) < 0); it.Next() {
				if key := it.Item().Key(); !bytes.Equal(key, restoreMarker) {
					if err := wb.Delete(it.Item().KeyCopy(nil)); err != nil {
						return err
					}
				}
			}
			return nil
		}
		err := readBackup(r, func(k, v []byte) error {
			if len(k) == 9 && k[0] == logPrefix {
				return in.put(binary.BigEndian.Uint64(k[1:]), v)
			}
			if err := drop(k); err != nil {
				return err
			}
			if it.Valid() && bytes.Equal(it.Item().Key(), k) {
				same := false
				if err := it.Item().Value(func(cur []byte) error { same = bytes.Equal(cur, v); return nil }); err != nil {
					return err
				}
				it.Next()
				if same {
					return nil
				}
			}
			return wb.Set(bytes.Clone(k), bytes.Clone(v))
		})
		if err != nil {
			return err
		}
		return drop(nil)
	})
	if err == nil {
		err = in.finish()
	}
	if err == nil {
		err = wb.Flush()
	}
	if err == nil {
		err = syncStore(l.dir)
	}
	if err == nil {
		// The tick files are of the state replaced: the backup's ticks
		// are Badger's now.
		err = l.removeTickFiles()
	}
	if err == nil {
		err = l.syncTicks(true)
	}
	if err == nil {
		err = l.db.Update(func(txn *badger.Txn) error { return txn.Delete(restoreMarker) })
	}
	if err == nil {
		err = l.checkpoint(true)
	}
	if err != nil {
		return fmt.Errorf("cannot restore the store (it is now damaged: restore it again or start afresh): %w", err)
	}
	if l.ticks.keep > 0 {
		return l.KeepTicks(l.ticks.keep)
	}
	return nil
}

// inputRestore makes the segment log hold a backup's inputs, given in seq
// order: it keeps the longest prefix the log shares with them and writes
// the rest (a revert to an earlier state only cuts the log).
type inputRestore struct {
	segs    *segments
	started bool
	next    uint64     // the seq the next input must have
	own     *segCursor // the log's own records from next on, while they are the backup's
	pending Inputs
}

func (r *inputRestore) put(seq uint64, v []byte) error {
	if !r.started {
		r.started, r.next = true, seq
		if seq == r.segs.first() {
			r.own = r.segs.cursor(seq)
		} else if err := r.segs.reset(seq); err != nil {
			return err
		}
	}
	if seq != r.next {
		return fmt.Errorf("%w: its inputs skip from seq %d to %d", ErrBadBackup, r.next-1, seq)
	}
	r.next++
	if r.own != nil {
		_, p, err := r.own.next()
		if err == nil && bytes.Equal(p, v) {
			return nil
		}
		r.close()
		if err := r.segs.truncate(seq); err != nil {
			return err
		}
	}
	r.pending.addEncoded(v)
	if len(r.pending.frames) >= 1<<20 {
		return r.flush()
	}
	return nil
}

func (r *inputRestore) close() {
	if r.own != nil {
		r.own.close()
		r.own = nil
	}
}

func (r *inputRestore) flush() error {
	if r.pending.n == 0 {
		return nil
	}
	err := r.segs.write(r.pending.frames, r.pending.n)
	r.pending.Reset()
	return err
}

// finish cuts what the log holds beyond the backup's inputs and syncs.
func (r *inputRestore) finish() error {
	if !r.started {
		return r.segs.reset(1)
	}
	if r.own != nil {
		r.close()
		if err := r.segs.truncate(r.next); err != nil {
			return err
		}
	}
	if err := r.flush(); err != nil {
		return err
	}
	return r.segs.sync()
}

// readBackup calls fn for each pair of the backup r, in order; fn's slices
// are valid only during the call.
func readBackup(r io.Reader, fn func(k, v []byte) error) error {
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(BackupValueMax))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadBackup, err)
	}
	defer zr.Close()
	br := bufio.NewReaderSize(zr, 1<<16)
	magic := make([]byte, len(backupMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != backupMagic {
		return fmt.Errorf("%w: no backup header", ErrBadBackup)
	}
	var k, v, prev []byte
	read := func(dst []byte) ([]byte, error) {
		var n [4]byte
		if _, err := io.ReadFull(br, n[:]); err != nil {
			return nil, err
		}
		size := binary.BigEndian.Uint32(n[:])
		if int(size) > BackupValueMax {
			return nil, fmt.Errorf("an entry of %d bytes (max %d)", size, BackupValueMax)
		}
		if cap(dst) < int(size) {
			dst = make([]byte, size)
		}
		dst = dst[:size]
		_, err := io.ReadFull(br, dst)
		return dst, err
	}
	for {
		if k, err = read(k); err != nil {
			return fmt.Errorf("%w: %v", ErrBadBackup, err)
		}
		if len(k) == 0 {
			break
		}
		if bytes.Compare(k, prev) <= 0 {
			return fmt.Errorf("%w: its keys are not in increasing order", ErrBadBackup)
		}
		prev = append(prev[:0], k...)
		if v, err = read(v); err != nil {
			return fmt.Errorf("%w: %v", ErrBadBackup, err)
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return fmt.Errorf("%w: data after its end", ErrBadBackup)
	}
	return nil
}

// checkRestored refuses a store whose Restore did not finish.
func (l *Log) checkRestored(dir string) error {
	return l.db.View(func(txn *badger.Txn) error {
		if _, err := txn.Get(restoreMarker); !errors.Is(err, badger.ErrKeyNotFound) {
			if err == nil {
				err = fmt.Errorf("the data directory %q was left half restored by an interrupted evm_revert or anvil_loadState: load a state into an empty one, or remove it to start afresh", dir)
			}
			return err
		}
		return nil
	})
}
