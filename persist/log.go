package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/ledgervenue/node/core"
)

const logPrefix = 'i'

// formatKey holds the log's record format version (one byte). A data
// directory from another version is refused with a clear message instead
// of failing record by record.
var formatKey = []byte("format")

// FormatVersion is the record format this build writes (2: transactions
// carry their admission time; ticks and markets are records; 3: the records
// are format 2's, but every transaction now uses 21000 gas, so replaying an
// older log would charge other fees than it acknowledged, and the
// attestation batches are stored beside the log; 4: batches carry their
// leaves and first place, and the history rows and snapshots are stored;
// 5: u256 fields take their minimal bytes, about a quarter off each
// transaction's input and record; 6: format 5's records, but delegated()
// calls pay no gas, so an older log would replay to other balances than it
// acknowledged).
const FormatVersion = 6

// Log is the durable, ordered log of ledger inputs. Append and Replay must
// not run concurrently (the node replays before it serves).
type Log struct {
	db      *badger.DB
	nextSeq uint64 // seq of the next appended input
	ticks   tickStore
	// advisedAt is when Append last advised the memtable logs (trim.go).
	advisedAt time.Time
}

// Open opens (creating if needed) the log in dir.
func Open(dir string) (*Log, error) { return open(dir, nil) }

// open is Open with the store's options changed by tune, if set (tests
// measure the alternatives).
func open(dir string, tune func(badger.Options) badger.Options) (*Log, error) {
	opts := badger.DefaultOptions(dir).
		WithSyncWrites(true). // an acknowledged input survives a crash
		WithLogger(nil).
		// Every memtable flush is an L0 table, and every L0 table spans all
		// the key prefixes, so each one is merged into the whole of the
		// next level: compaction work per byte falls with the memtable's
		// size. Measured writing transfer histories (persist's
		// BenchmarkAppendTransfers, one run): 16 MB memtables, 2 MB tables
		// and no log advice (trim.go) cost 146 µs of CPU per transfer,
		// this store 81 µs. The price is RAM: up to two memtables' arenas
		// (about 75 MB each).
		WithMemTableSize(64 << 20).
		WithNumMemtables(2).
		WithBaseTableSize(8 << 20).
		WithValueLogFileSize(64 << 20).
		WithBlockCacheSize(16 << 20).
		WithIndexCacheSize(16 << 20).
		// Compaction's table builders take about twice a table's size each,
		// and Badger doubles the table size per level: with the defaults a
		// growing history made compaction hold hundreds of MB. Every level
		// keeps the base size, and two compactors run.
		WithNumCompactors(2).
		WithCompression(options.None).
		// One writer appends, and the pruner only deletes keys the writer
		// no longer touches: nothing for Badger's conflict check to catch.
		WithDetectConflicts(false)
	opts.TableSizeMultiplier = 1
	if tune != nil {
		opts = tune(opts)
	}
	db, err := badger.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("cannot open intent log in %q: %w", dir, err)
	}
	l := &Log{db: db, nextSeq: 1}
	if err := l.findEnd(); err != nil {
		db.Close()
		return nil, err
	}
	if err := l.checkFormat(dir); err != nil {
		db.Close()
		return nil, err
	}
	if err := l.checkRestored(dir); err != nil {
		db.Close()
		return nil, err
	}
	return l, nil
}

// checkFormat stamps a new log with FormatVersion and refuses a log written
// in another format (one without a stamp predates format 2).
func (l *Log) checkFormat(dir string) error {
	return l.db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get(formatKey)
		switch {
		case errors.Is(err, badger.ErrKeyNotFound) && l.nextSeq == 1:
			return txn.Set(formatKey, []byte{FormatVersion})
		case errors.Is(err, badger.ErrKeyNotFound):
			return fmt.Errorf("the intent log in %q was written by an older ledgerd (format 1, this build reads %d): remove the directory (make clean) to start afresh", dir, FormatVersion)
		case err != nil:
			return fmt.Errorf("cannot read the intent log format in %q: %w", dir, err)
		}
		v, err := item.ValueCopy(nil)
		if err != nil || len(v) != 1 || v[0] != FormatVersion {
			return fmt.Errorf("the intent log in %q has format %v, this build reads %d: remove the directory (make clean) to start afresh", dir, v, FormatVersion)
		}
		return nil
	})
}

// findEnd positions nextSeq after the last stored input.
func (l *Log) findEnd() error {
	return l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: []byte{logPrefix}})
		defer it.Close()
		it.Seek(u64Key(logPrefix, ^uint64(0)))
		if it.Valid() {
			l.nextSeq = binary.BigEndian.Uint64(it.Item().Key()[1:]) + 1
		}
		return nil
	})
}

// Len returns how many inputs the log holds.
func (l *Log) Len() uint64 { return l.nextSeq - 1 }

// Group is one group commit: the inputs the sequencer applied, in order,
// the attestation batches with their records, the tick links and published
// ticks of the ticks among the inputs, and possibly a snapshot.
type Group struct {
	Inputs  []*core.Input
	Batches []*Batch
	Links   []TickLink
	// Ticks are stored in the inputs' transaction, keeping the newest
	// KeepTicks (ticks.go).
	Ticks []StoredTick
	// Withdrawals are the outcome rows of the ticks among the inputs
	// (withdrawals.go), Claims the claim proofs signed since the last group.
	Withdrawals []WithdrawalRow
	Claims      []Claim
	// Snapshot, when set, is stored once every input up to its Seq is.
	Snapshot *Snapshot
}

// Reset empties g for reuse.
func (g *Group) Reset() {
	g.Inputs, g.Batches, g.Links, g.Ticks, g.Snapshot = g.Inputs[:0], g.Batches[:0], g.Links[:0], g.Ticks[:0], nil
	g.Withdrawals, g.Claims = g.Withdrawals[:0], g.Claims[:0]
}

// Append makes a group durable with one synced write (more only if the group
// exceeds Badger's transaction size): the attester's batches and their
// history share the group commit's fsync. When it returns nil all of it is
// on disk.
//
// REQUIRES: each batch's Seq is one more than the last stored batch's (1
// for the first), and its FirstPlace the previous batch's end; Batches
// checks the sequence on the way back. A snapshot's Seq is at most the
// log's length after the group.
func (l *Log) Append(g *Group) error {
	s := setter{db: l.db, txn: l.db.NewTransaction(true)}
	defer func() { s.txn.Discard() }()
	for _, in := range g.Inputs {
		// Badger keeps the slices until commit: each gets its own.
		if err := s.set(u64Key(logPrefix, l.nextSeq), AppendRecord(nil, in)); err != nil {
			return err
		}
		l.nextSeq++
	}
	ticks, err := l.putTicks(&s, g.Ticks)
	if err != nil {
		return err
	}
	for _, b := range g.Batches {
		if err := s.putBatch(b); err != nil {
			return err
		}
	}
	for i := range g.Links {
		if err := s.putLink(&g.Links[i]); err != nil {
			return err
		}
	}
	for i := range g.Withdrawals {
		if err := s.putWithdrawal(&g.Withdrawals[i]); err != nil {
			return err
		}
	}
	for i := range g.Claims {
		if err := s.putClaim(&g.Claims[i]); err != nil {
			return err
		}
	}
	if g.Snapshot != nil {
		if g.Snapshot.Seq > l.nextSeq-1 {
			panic("BUG: persist: a snapshot past the end of the log")
		}
		if err := s.set(snapshotKey(g.Snapshot.Seq), g.Snapshot.encode()); err != nil {
			return err
		}
	}
	if err := s.txn.Commit(); err != nil {
		return fmt.Errorf("cannot commit intent log: %w", err)
	}
	l.ticks.times = ticks
	if now := time.Now(); now.Sub(l.advisedAt) >= adviseLogsEvery {
		l.advisedAt = now
		l.adviseLogs()
	}
	return nil
}

// Replay calls fn for every stored input after the first from, in order
// (from 0 replays the whole log; from a snapshot's Seq what follows it).
func (l *Log) Replay(from uint64, fn func(seq uint64, in *core.Input) error) error {
	return l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{logPrefix}})
		defer it.Close()
		want := from + 1
		for it.Seek(u64Key(logPrefix, want)); it.Valid(); it.Next() {
			seq := binary.BigEndian.Uint64(it.Item().Key()[1:])
			if seq != want {
				return fmt.Errorf("intent log has a gap: found seq %d, want %d", seq, want)
			}
			var in core.Input
			err := it.Item().Value(func(v []byte) error {
				var derr error
				in, derr = DecodeRecord(v)
				return derr
			})
			if err != nil {
				return fmt.Errorf("intent log seq %d: %w", seq, err)
			}
			if err := fn(seq, &in); err != nil {
				return err
			}
			want++
		}
		return nil
	})
}

// Close flushes and closes the log.
func (l *Log) Close() error { return l.db.Close() }
