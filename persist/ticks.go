package persist

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/s2"
)

// Published ticks: the node stores each tick's subscription data with the
// tick's input, so that the subscription hub's replay buffer survives a
// restart. Only the newest few are kept (KeepTicks); the bodies are opaque
// here (the subs tick codec's bytes). Layout in doc.go.
//
// A tick is a file of its own in dir/ticks, its body s2-compressed (about
// a third of its size), written before the Store's commit and deleted
// when it leaves the ring, without a sync: a checkpoint syncs them with
// Badger's logs (checkpoint.go), and a store rebuilt after the machine
// stopped writes again those after it. A busy tick's record is megabytes
// (3 MB at 1 500 ladders/s), and the ring is a few seconds of ticks: in
// Badger, whole, they filled its value log, which keeps deleted values
// until a collection that depends on compactions' counts; in chunks in the
// LSM tree they went through its memtable log and arena and its
// compactions, ~5 % of the node's CPU and a doubled ack p99 under
// market-maker ladders (BENCHMARKS.md, issue 25). Ticks stored in Badger
// (by earlier builds, or restored from a backup) are still read and
// deleted.
const tickPrefix = 'p' // tick time, chunk → a compressed tick body's chunk

const (
	// ticksDir is the folder of the tick files, in the log's.
	ticksDir = "ticks"
	// tickFileExt ends a tick file's name, after its time (tickFileName).
	tickFileExt = ".tick"
	// tickChunkMax is the most bytes of a compressed body one Badger key
	// holds (Backup writes the files' ticks so, Restore stores them so):
	// under Badger's value threshold (1 MB), so in the LSM tree.
	tickChunkMax = 512 << 10
	// tickBodyMax bounds a stored body's decoded length: a longer one is
	// corruption.
	tickBodyMax = 256 << 20
	// legacyTickKeyLen is the key of a body stored whole and uncompressed
	// by earlier builds ('p' | tick time 8), still read and deleted.
	legacyTickKeyLen = 9
)

// StoredTick is one published tick as stored: its time and its body.
type StoredTick struct {
	TickUs int64
	Body   []byte
}

// tickStore is what Store needs to keep the newest ticks without reading
// the store: the stored ticks oldest first (at most keep of them, a few
// KiB). Only Store, KeepTicks and Restore use it, which never run
// concurrently with each other.
type tickStore struct {
	keep  int // 0 until KeepTicks: Store takes no ticks
	times []storedTickKeys
	// unsynced are the times of the files written since the last
	// checkpoint (at most a checkpoint interval's ticks).
	unsynced []int64
}

// storedTickKeys names a stored tick: its file, or its Badger keys (its
// chunks, or its legacy key when chunks is 0).
type storedTickKeys struct {
	us     int64
	file   bool
	chunks uint16
}

func tickChunkKey(tickUs int64, chunk uint16) []byte {
	return binary.BigEndian.AppendUint16(u64Key(tickPrefix, uint64(tickUs)), chunk)
}

// tickFileName is the name of the file of the tick at us: its time in
// 16 hexadecimal digits (times are positive), so that names sort by time.
func tickFileName(us int64) string { return fmt.Sprintf("%016x%s", us, tickFileExt) }

// keys returns t's Badger keys (none for a file).
func (t storedTickKeys) keys() [][]byte {
	switch {
	case t.file:
		return nil
	case t.chunks == 0:
		return [][]byte{u64Key(tickPrefix, uint64(t.us))}
	}
	keys := make([][]byte, t.chunks)
	for c := range t.chunks {
		keys[c] = tickChunkKey(t.us, c)
	}
	return keys
}

// delTick deletes t: its keys in s, or its file (at once: a deleted tick
// is one the ring no longer needs, whether s commits or not).
func (l *Log) delTick(s *setter, t storedTickKeys) error {
	if t.file {
		return removeTickFile(l.dir, t.us)
	}
	for _, k := range t.keys() {
		if err := s.del(k); err != nil {
			return err
		}
	}
	return nil
}

func removeTickFile(dir string, us int64) error {
	err := os.Remove(filepath.Join(dir, ticksDir, tickFileName(us)))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot delete a stored tick: %w", err)
	}
	return nil
}

// KeepTicks makes Store keep only the newest keep stored ticks, deleting
// the older ones, and deletes at once those already past keep (a smaller
// keep than the previous run's). Call it once, after Open and before the
// first Store that carries ticks.
func (l *Log) KeepTicks(keep int) error {
	if keep < 1 {
		panic("BUG: persist: KeepTicks needs at least one tick")
	}
	if err := os.MkdirAll(filepath.Join(l.dir, ticksDir), 0o755); err != nil {
		return fmt.Errorf("cannot create the ticks' folder: %w", err)
	}
	times, err := l.storedTicks()
	if err != nil {
		return err
	}
	if drop := len(times) - keep; drop > 0 {
		var keys [][]byte
		for _, t := range times[:drop] {
			keys = append(keys, t.keys()...)
			if t.file {
				if err := removeTickFile(l.dir, t.us); err != nil {
					return err
				}
			}
		}
		if err := l.deleteKeys(keys); err != nil {
			return fmt.Errorf("stored ticks: %w", err)
		}
		times = times[drop:]
	}
	l.ticks.keep, l.ticks.times = keep, times
	return nil
}

// storedTicks lists the stored ticks, oldest first: Badger's keys, then
// the files (a temporary file a stopped Store left is removed).
func (l *Log) storedTicks() ([]storedTickKeys, error) {
	var times []storedTickKeys
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{tickPrefix}}) // keys only
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			if len(k) < legacyTickKeyLen {
				return fmt.Errorf("%w: stored tick key %x", ErrCorrupt, k)
			}
			us := int64(binary.BigEndian.Uint64(k[1:]))
			if n := len(times); n > 0 && times[n-1].us == us && len(k) > legacyTickKeyLen {
				times[n-1].chunks++
				continue
			}
			t := storedTickKeys{us: us}
			if len(k) > legacyTickKeyLen {
				t.chunks = 1
			}
			times = append(times, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read the stored ticks: %w", err)
	}
	files, err := l.tickFiles(true)
	if err != nil {
		return nil, err
	}
	for _, us := range files {
		times = append(times, storedTickKeys{us: us, file: true})
	}
	slices.SortStableFunc(times, func(a, b storedTickKeys) int { return cmp.Compare(a.us, b.us) })
	return times, nil
}

// tickFiles returns the times of the tick files, ascending; clean removes
// a temporary file a stopped Store left (a reader leaves it alone).
func (l *Log) tickFiles(clean bool) ([]int64, error) {
	dir := filepath.Join(l.dir, ticksDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the stored ticks: %w", err)
	}
	var times []int64
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), tickFileExt)
		if !ok {
			if clean && strings.HasSuffix(e.Name(), tickFileExt+".tmp") {
				os.Remove(filepath.Join(dir, e.Name()))
			}
			continue
		}
		us, err := strconv.ParseInt(name, 16, 64)
		if err != nil || len(name) != 16 || us < 0 {
			return nil, fmt.Errorf("%w: stored tick file %q", ErrCorrupt, e.Name())
		}
		times = append(times, us)
	}
	return times, nil // ReadDir sorts by name, so by time
}

// putTicks writes ts's files and deletes the stored ticks they push past
// the newest keep (Badger's in s). It returns the stored ticks as they are
// once the write commits; Store adopts them then. A failed write leaves
// ts's files: the next run's KeepTicks counts them, and a rebuild writes
// them again.
//
// REQUIRES: ts in increasing time, newer than every stored tick (but in a
// rebuild).
func (l *Log) putTicks(s *setter, ts []StoredTick) ([]storedTickKeys, error) {
	if len(ts) == 0 {
		return l.ticks.times, nil
	}
	keep, old := l.ticks.keep, l.ticks.times
	if keep == 0 {
		panic("BUG: persist: Store with ticks before KeepTicks")
	}
	// Ticks stored at or after the first of ts are ones the store's
	// derived rows do not cover, written again now: after the machine
	// stopped (checkpoint.go), any; otherwise only files, which a Store
	// writes before its commit, left by a process stopped in between.
	// The old ones go.
	i := sort.Search(len(old), func(i int) bool { return old[i].us >= ts[0].TickUs })
	for _, t := range old[i:] {
		if !t.file && l.after == nil {
			panic("BUG: persist: a stored tick not newer than the last one")
		}
		if err := l.delTick(s, t); err != nil {
			return nil, err
		}
	}
	old = old[:i]
	ts = ts[max(0, len(ts)-keep):] // older ones would be deleted at once
	// A copy: old stays intact until the write commits.
	times := make([]storedTickKeys, 0, len(old)+len(ts))
	times = append(times, old...)
	for _, t := range ts {
		if n := len(times); n > 0 && t.TickUs <= times[n-1].us {
			panic("BUG: persist: a stored tick not newer than the last one")
		}
		if len(t.Body) > tickBodyMax || t.TickUs < 0 {
			panic("BUG: persist: a stored tick over tickBodyMax or before 1970")
		}
		if err := l.writeTickFile(s.sc, &t); err != nil {
			return nil, err
		}
		l.ticks.unsynced = append(l.ticks.unsynced, t.TickUs)
		times = append(times, storedTickKeys{us: t.TickUs, file: true})
	}
	drop := max(0, len(times)-keep)
	for _, t := range times[:drop] {
		if err := l.delTick(s, t); err != nil {
			return nil, err
		}
	}
	return times[drop:], nil
}

// writeTickFile writes t's file: a CRC-32C of the rest, then the body
// s2-compressed (block format), through a temporary name, so that a
// reader never sees half of one.
func (l *Log) writeTickFile(sc *storeScratch, t *StoredTick) error {
	n := 4 + s2.MaxEncodedLen(len(t.Body))
	if cap(sc.ticks) < n {
		sc.ticks = make([]byte, n)
	}
	buf := sc.ticks[:n]
	enc := s2.Encode(buf[4:], t.Body)
	binary.BigEndian.PutUint32(buf, crc32.Checksum(enc, crcTable))
	name := filepath.Join(l.dir, ticksDir, tickFileName(t.TickUs))
	err := os.WriteFile(name+".tmp", buf[:4+len(enc)], 0o644)
	if err == nil {
		err = os.Rename(name+".tmp", name)
	}
	if err != nil {
		return fmt.Errorf("cannot store a tick: %w", err)
	}
	return nil
}

// decodeTickBody decodes a stored tick's compressed body.
func decodeTickBody(enc []byte, us int64) ([]byte, error) {
	n, err := s2.DecodedLen(enc)
	if err != nil || n > tickBodyMax {
		return nil, fmt.Errorf("%w: stored tick at %d", ErrCorrupt, us)
	}
	body, err := s2.Decode(make([]byte, n), enc)
	if err != nil {
		return nil, fmt.Errorf("%w: stored tick at %d: %v", ErrCorrupt, us, err)
	}
	return body, nil
}

// tickView is the store as of one moment, its tick files included: a
// Badger read transaction and the times of the tick files, taken while no
// Store runs (Log.ticksMu), so that the files are those of the
// transaction's commits. A file the ring deletes before it is read (the
// oldest go first) is left out: what is read stays a run of the newest.
type tickView struct {
	txn   *badger.Txn
	files []int64
}

// viewTicks returns a tickView; close it.
func (l *Log) viewTicks() (*tickView, error) {
	l.ticksMu.Lock()
	defer l.ticksMu.Unlock()
	files, err := l.tickFiles(false)
	if err != nil {
		return nil, err
	}
	return &tickView{txn: l.db.NewTransaction(false), files: files}, nil
}

func (v *tickView) close() { v.txn.Discard() }

// readTickFile returns the compressed body of the tick file at us,
// checked; ok is false when the file is gone.
func (l *Log) readTickFile(us int64) (enc []byte, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(l.dir, ticksDir, tickFileName(us)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("stored tick at %d: %w", us, err)
	}
	if len(b) < 4 || crc32.Checksum(b[4:], crcTable) != binary.BigEndian.Uint32(b) {
		return nil, false, fmt.Errorf("%w: stored tick at %d fails its checksum", ErrCorrupt, us)
	}
	return b[4:], true, nil
}

// Ticks returns the stored ticks, oldest first. It may run concurrently
// with Store.
func (l *Log) Ticks() ([]StoredTick, error) {
	v, err := l.viewTicks()
	if err != nil {
		return nil, err
	}
	defer v.close()
	out, err := badgerTicks(v.txn)
	if err != nil {
		return nil, err
	}
	for _, us := range v.files {
		enc, ok, err := l.readTickFile(us)
		if !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		body, err := decodeTickBody(enc, us)
		if err != nil {
			return nil, err
		}
		out = append(out, StoredTick{TickUs: us, Body: body})
	}
	slices.SortStableFunc(out, func(a, b StoredTick) int { return cmp.Compare(a.TickUs, b.TickUs) })
	return out, nil
}

// badgerTicks returns the ticks stored in Badger, oldest first.
func badgerTicks(txn *badger.Txn) ([]StoredTick, error) {
	var out []StoredTick
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{tickPrefix}})
	defer it.Close()
	var enc []byte // the compressed chunks of the tick at us so far
	var us int64
	var next uint16 // the chunk expected next
	flush := func() error {
		if next == 0 {
			return nil
		}
		body, err := decodeTickBody(enc, us)
		if err != nil {
			return err
		}
		out = append(out, StoredTick{TickUs: us, Body: body})
		enc, next = enc[:0], 0
		return nil
	}
	for it.Rewind(); it.Valid(); it.Next() {
		k := it.Item().Key()
		if len(k) != legacyTickKeyLen && len(k) != legacyTickKeyLen+2 {
			return nil, fmt.Errorf("%w: stored tick key %x", ErrCorrupt, k)
		}
		kus := int64(binary.BigEndian.Uint64(k[1:]))
		if next > 0 && kus != us {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		if len(k) == legacyTickKeyLen {
			body, err := it.Item().ValueCopy(nil)
			if err != nil {
				return nil, fmt.Errorf("stored tick at %d: %w", kus, err)
			}
			out = append(out, StoredTick{TickUs: kus, Body: body})
			continue
		}
		if chunk := binary.BigEndian.Uint16(k[legacyTickKeyLen:]); chunk != next {
			return nil, fmt.Errorf("%w: stored tick at %d has chunk %d where %d belongs", ErrCorrupt, kus, chunk, next)
		}
		us = kus
		if err := it.Item().Value(func(v []byte) error { enc = append(enc, v...); return nil }); err != nil {
			return nil, fmt.Errorf("stored tick at %d: %w", us, err)
		}
		next++
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// removeTickFiles removes every tick file.
func (l *Log) removeTickFiles() error {
	files, err := l.tickFiles(true)
	for _, us := range files {
		if err == nil {
			err = removeTickFile(l.dir, us)
		}
	}
	return err
}

// syncTicks makes the tick files and their names durable (a checkpoint):
// all of them, or (all false) those written since the last call.
func (l *Log) syncTicks(all bool) error {
	files := l.ticks.unsynced
	if all {
		var err error
		if files, err = l.tickFiles(false); err != nil {
			return err
		}
	}
	dir := filepath.Join(l.dir, ticksDir)
	for _, us := range files { // a file gone meanwhile left the ring
		if err := syncFile(filepath.Join(dir, tickFileName(us))); err != nil {
			return err
		}
	}
	l.ticks.unsynced = l.ticks.unsynced[:0]
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil // no ticks stored yet
	}
	return syncDir(dir)
}
