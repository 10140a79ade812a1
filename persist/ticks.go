package persist

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/s2"
)

// Published ticks: the node stores each tick's subscription data with the
// tick's input, so that the subscription hub's replay buffer survives a
// restart. Only the newest few are kept (KeepTicks); the bodies are opaque
// here (the subs tick codec's bytes). Layout in doc.go.
//
// A body is stored s2-compressed (about a third of its size) in chunks
// below Badger's value threshold: a busy tick's record (3 MB at 1 500
// ladders/s) kept whole went to Badger's value log, which keeps deleted
// values until a collection that depends on compactions' counts; chunks
// live in the LSM tree, whose compactions drop deleted keys by themselves.
const tickPrefix = 'p' // tick time, chunk → a compressed tick body's chunk

const (
	// tickChunkMax is the most bytes of a compressed body one key holds:
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

// tickStore is what Append needs to keep the newest ticks without reading
// the store: the stored ticks oldest first (at most keep of them, a few
// KiB). Only Append and KeepTicks use it, which never run concurrently
// with each other.
type tickStore struct {
	keep  int // 0 until KeepTicks: Append takes no ticks
	times []storedTickKeys
}

// storedTickKeys names a stored tick's keys: its chunks, or its legacy key
// when chunks is 0.
type storedTickKeys struct {
	us     int64
	chunks uint16
}

func tickChunkKey(tickUs int64, chunk uint16) []byte {
	return binary.BigEndian.AppendUint16(u64Key(tickPrefix, uint64(tickUs)), chunk)
}

// keys returns t's keys.
func (t storedTickKeys) keys() [][]byte {
	if t.chunks == 0 {
		return [][]byte{u64Key(tickPrefix, uint64(t.us))}
	}
	keys := make([][]byte, t.chunks)
	for c := range t.chunks {
		keys[c] = tickChunkKey(t.us, c)
	}
	return keys
}

// del deletes t's keys in s.
func (t storedTickKeys) del(s *setter) error {
	for _, k := range t.keys() {
		if err := s.del(k); err != nil {
			return err
		}
	}
	return nil
}

// KeepTicks makes Append keep only the newest keep stored ticks, deleting
// the older ones in the same write, and deletes at once those already past
// keep (a smaller keep than the previous run's). Call it once, after Open
// and before the first Append that carries ticks.
func (l *Log) KeepTicks(keep int) error {
	if keep < 1 {
		panic("BUG: persist: KeepTicks needs at least one tick")
	}
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
		return fmt.Errorf("cannot read the stored ticks: %w", err)
	}
	if drop := len(times) - keep; drop > 0 {
		var keys [][]byte
		for _, t := range times[:drop] {
			keys = append(keys, t.keys()...)
		}
		if err := l.deleteKeys(keys); err != nil {
			return fmt.Errorf("stored ticks: %w", err)
		}
		times = times[drop:]
	}
	l.ticks = tickStore{keep: keep, times: times}
	return nil
}

// putTicks adds ts to the write and deletes the stored ticks they push past
// the newest keep. It returns the stored ticks as they are once the write
// commits; Append adopts them then (a failed write changes nothing).
//
// REQUIRES: ts in increasing time, newer than every stored tick (but in a
// rebuild).
func (l *Log) putTicks(s *setter, ts []StoredTick) ([]storedTickKeys, error) {
	if len(ts) == 0 {
		return l.ticks.times, nil
	}
	keep, old := l.ticks.keep, l.ticks.times
	if keep == 0 {
		panic("BUG: persist: Append with ticks before KeepTicks")
	}
	if l.after != nil {
		// A rebuild after the machine stopped (checkpoint.go) writes
		// again ticks the store may still hold: their old chunks go.
		i := sort.Search(len(old), func(i int) bool { return old[i].us >= ts[0].TickUs })
		for _, t := range old[i:] {
			if err := t.del(s); err != nil {
				return nil, err
			}
		}
		old = old[:i]
	}
	ts = ts[max(0, len(ts)-keep):] // older ones would be deleted at once
	drop := max(0, len(old)+len(ts)-keep)
	for _, t := range old[:drop] {
		if err := t.del(s); err != nil {
			return nil, err
		}
	}
	// A copy: old stays intact until the write commits.
	times := make([]storedTickKeys, 0, len(old)-drop+len(ts))
	times = append(times, old[drop:]...)
	for _, t := range ts {
		if n := len(times); n > 0 && t.TickUs <= times[n-1].us {
			panic("BUG: persist: a stored tick not newer than the last one")
		}
		if len(t.Body) > tickBodyMax {
			panic("BUG: persist: a stored tick over tickBodyMax")
		}
		enc := s.sc.packTick(t.Body)
		k := storedTickKeys{us: t.TickUs}
		for len(enc) > 0 || k.chunks == 0 {
			n := min(len(enc), tickChunkMax)
			if err := s.set(tickChunkKey(t.TickUs, k.chunks), enc[:n]); err != nil {
				return nil, err
			}
			enc = enc[n:]
			k.chunks++
		}
		times = append(times, k)
	}
	return times, nil
}

// packTick returns body s2-compressed, in the Store's ticks buffer: the
// ticks of one Store share one allocation (or none, when the last Store's
// buffer is large enough), as they stay Badger's until the commit.
func (sc *storeScratch) packTick(body []byte) []byte {
	at, n := len(sc.ticks), s2.MaxEncodedLen(len(body))
	if cap(sc.ticks)-at < n {
		// The earlier ticks keep the old buffer alive until the commit.
		at, sc.ticks = 0, make([]byte, 0, max(n, 2*cap(sc.ticks)))
	}
	enc := s2.Encode(sc.ticks[at:at+n], body)
	sc.ticks = sc.ticks[:at+len(enc)]
	return enc
}

// Ticks returns the stored ticks, oldest first. It reads one consistent
// view and may run concurrently with Append.
func (l *Log) Ticks() ([]StoredTick, error) {
	var out []StoredTick
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{tickPrefix}})
		defer it.Close()
		var enc []byte // the compressed chunks of the tick at us so far
		var us int64
		var next uint16 // the chunk expected next
		flush := func() error {
			if next == 0 {
				return nil
			}
			n, err := s2.DecodedLen(enc)
			if err != nil || n > tickBodyMax {
				return fmt.Errorf("%w: stored tick at %d", ErrCorrupt, us)
			}
			body, err := s2.Decode(make([]byte, n), enc)
			if err != nil {
				return fmt.Errorf("%w: stored tick at %d: %v", ErrCorrupt, us, err)
			}
			out = append(out, StoredTick{TickUs: us, Body: body})
			enc, next = enc[:0], 0
			return nil
		}
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			if len(k) != legacyTickKeyLen && len(k) != legacyTickKeyLen+2 {
				return fmt.Errorf("%w: stored tick key %x", ErrCorrupt, k)
			}
			kus := int64(binary.BigEndian.Uint64(k[1:]))
			if next > 0 && kus != us {
				if err := flush(); err != nil {
					return err
				}
			}
			if len(k) == legacyTickKeyLen {
				body, err := it.Item().ValueCopy(nil)
				if err != nil {
					return fmt.Errorf("stored tick at %d: %w", kus, err)
				}
				out = append(out, StoredTick{TickUs: kus, Body: body})
				continue
			}
			if chunk := binary.BigEndian.Uint16(k[legacyTickKeyLen:]); chunk != next {
				return fmt.Errorf("%w: stored tick at %d has chunk %d where %d belongs", ErrCorrupt, kus, chunk, next)
			}
			us = kus
			err := it.Item().Value(func(v []byte) error { enc = append(enc, v...); return nil })
			if err != nil {
				return fmt.Errorf("stored tick at %d: %w", us, err)
			}
			next++
		}
		return flush()
	})
	return out, err
}
