package persist

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/dgraph-io/badger/v4"
)

// Published ticks: the node stores each tick's subscription data with the
// tick's input, so that the subscription hub's replay buffer survives a
// restart. Only the newest few are kept (KeepTicks); the bodies are opaque
// here (the subs tick codec's bytes). Layout in doc.go.
const tickPrefix = 'p' // tick time → tick body

// StoredTick is one published tick as stored: its time and its body.
type StoredTick struct {
	TickUs int64
	Body   []byte
}

// tickStore is what Append needs to keep the newest ticks without reading
// the store: the times of the stored ticks, oldest first (at most keep of
// them, a few KiB). Only Append and KeepTicks use it, which never run
// concurrently with each other.
type tickStore struct {
	keep  int // 0 until KeepTicks: Append takes no ticks
	times []int64
}

func tickKey(tickUs int64) []byte { return u64Key(tickPrefix, uint64(tickUs)) }

// KeepTicks makes Append keep only the newest keep stored ticks, deleting
// the older ones in the same write, and deletes at once those already past
// keep (a smaller keep than the previous run's). Call it once, after Open
// and before the first Append that carries ticks.
func (l *Log) KeepTicks(keep int) error {
	if keep < 1 {
		panic("BUG: persist: KeepTicks needs at least one tick")
	}
	var times []int64
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{tickPrefix}}) // keys only
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			times = append(times, int64(binary.BigEndian.Uint64(it.Item().Key()[1:])))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot read the stored ticks: %w", err)
	}
	if drop := len(times) - keep; drop > 0 {
		keys := make([][]byte, drop)
		for i, us := range times[:drop] {
			keys[i] = tickKey(us)
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
// the newest keep. It returns the stored ticks' times as they are once the
// write commits; Append adopts them then (a failed write changes nothing).
//
// REQUIRES: ts in increasing time, newer than every stored tick (but in a
// rebuild).
func (l *Log) putTicks(s *setter, ts []StoredTick) ([]int64, error) {
	if len(ts) == 0 {
		return l.ticks.times, nil
	}
	keep, old := l.ticks.keep, l.ticks.times
	if keep == 0 {
		panic("BUG: persist: Append with ticks before KeepTicks")
	}
	if l.after != nil {
		// A rebuild after the machine stopped (checkpoint.go) writes
		// again ticks the store may still hold.
		old = old[:sort.Search(len(old), func(i int) bool { return old[i] >= ts[0].TickUs })]
	}
	ts = ts[max(0, len(ts)-keep):] // older ones would be deleted at once
	drop := max(0, len(old)+len(ts)-keep)
	for _, us := range old[:drop] {
		if err := s.del(tickKey(us)); err != nil {
			return nil, err
		}
	}
	// A copy: old stays intact until the write commits.
	times := make([]int64, 0, len(old)-drop+len(ts))
	times = append(times, old[drop:]...)
	for _, t := range ts {
		if n := len(times); n > 0 && t.TickUs <= times[n-1] {
			panic("BUG: persist: a stored tick not newer than the last one")
		}
		if err := s.set(tickKey(t.TickUs), t.Body); err != nil {
			return nil, err
		}
		times = append(times, t.TickUs)
	}
	return times, nil
}

// Ticks returns the stored ticks, oldest first. It reads one consistent
// view and may run concurrently with Append.
func (l *Log) Ticks() ([]StoredTick, error) {
	var out []StoredTick
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{tickPrefix}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			us := int64(binary.BigEndian.Uint64(it.Item().Key()[1:]))
			body, err := it.Item().ValueCopy(nil)
			if err != nil {
				return fmt.Errorf("stored tick at %d: %w", us, err)
			}
			out = append(out, StoredTick{TickUs: us, Body: body})
		}
		return nil
	})
	return out, err
}
