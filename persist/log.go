package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/ledgervenue/node/core"
)

// logPrefix is the inputs' key in a backup (Backup, Restore): the log
// itself is in segment files (segments.go), not in Badger.
const logPrefix = 'i'

// derivedKey holds how many inputs the Badger side has caught up with
// (Store): every row derived from inputs up to that seq is stored.
var derivedKey = []byte("derived")

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
// acknowledged; 7: the inputs are in segment files, no longer in Badger;
// 8: format 7's records, but a transaction to the Mint application's
// address is a gas-free mint (docs/faucet.md), no longer a plain transfer
// paying gas, so an older log could replay to other balances).
const FormatVersion = 8

// Log is the durable, ordered log of ledger inputs (segment files) and the
// Badger store beside it. AppendInputs and Replay must not run
// concurrently (the node replays before it serves).
type Log struct {
	db    *badger.DB
	dir   string
	segs  *segments
	ticks tickStore
	// advisedAt is when Append last advised the memtable logs (trim.go).
	advisedAt time.Time
	// after is set while a store whose machine stopped under it is not
	// rebuilt yet: what it may rely on (checkpoint.go).
	after        *trust
	checkpointAt time.Time
	readOnly     bool
	// store is Store's scratch (Stores never overlap).
	store storeScratch
	// ticksMu is held by a Store, which writes tick files before its
	// commit, and by viewTicks.
	ticksMu sync.Mutex
}

// Open opens (creating if needed) the log in dir.
func Open(dir string) (*Log, error) { return open(dir, nil) }

// open is Open with the store's options changed by tune, if set (tests
// measure the alternatives).
func open(dir string, tune func(badger.Options) badger.Options) (*Log, error) {
	opts := badger.DefaultOptions(dir).
		// No sync per write: what must survive a crash is in the segment
		// files (inputs and side records); a checkpoint syncs the rest
		// now and then (checkpoint.go). Measured under market-maker
		// ladders beside a read probe (BENCHMARKS.md, issue 25): a synced
		// memtable log per group cost ~10 % of the node's CPU in msync
		// and writes back pages a flush would have dropped.
		WithSyncWrites(false).
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
		// Tables compressed with zstd at its fastest level: the history at
		// rest took 681 bytes per transfer uncompressed (segment files
		// included), 504 with this, for the same CPU (BenchmarkAppendTransfers,
		// whose made-up hashes and signatures are the incompressible worst
		// case); snappy gave 542. The memtable's log is not compressed.
		WithCompression(options.ZSTD).
		WithZSTDCompressionLevel(1).
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
	segs, err := openSegments(filepath.Join(dir, "log"), opts.ReadOnly)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot open intent log in %q: %w", dir, err)
	}
	l := &Log{db: db, dir: dir, segs: segs, readOnly: opts.ReadOnly}
	checks := []func(string) error{l.checkFormat, l.checkRestored}
	if !opts.ReadOnly {
		checks = append(checks, l.openRunning)
	}
	for _, check := range checks {
		if err := check(dir); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// checkFormat stamps a new log with FormatVersion and refuses a log written
// in another format (one without a stamp predates format 2).
func (l *Log) checkFormat(dir string) error {
	return l.db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get(formatKey)
		switch {
		case errors.Is(err, badger.ErrKeyNotFound) && l.segs.Next() == 1 && !holdsPrefix(txn, logPrefix):
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

// holdsPrefix reports whether the store holds a key starting with prefix.
func holdsPrefix(txn *badger.Txn, prefix byte) bool {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{prefix}})
	defer it.Close()
	it.Rewind()
	return it.Valid()
}

// Len returns the seq of the last stored input (how many inputs the log
// holds, counting those retention pruned).
func (l *Log) Len() uint64 { return l.segs.Next() - 1 }

// Inputs is a group of inputs encoded for AppendInputs: encoding is done
// while the previous group syncs.
type Inputs struct {
	frames []byte
	n      int
}

// Add encodes in after the others.
func (b *Inputs) Add(in *core.Input) {
	frames, at := beginFrame(b.frames)
	b.frames = endFrame(AppendRecord(frames, in), at)
	b.n++
}

// addEncoded adds an input already encoded (AppendRecord's bytes).
func (b *Inputs) addEncoded(record []byte) {
	b.frames = appendFrame(b.frames, record)
	b.n++
}

// Len returns how many inputs b holds.
func (b *Inputs) Len() int { return b.n }

// Reset empties b for reuse.
func (b *Inputs) Reset() { b.frames, b.n = b.frames[:0], 0 }

// AppendInputs makes b's inputs durable after the stored ones: one write
// and one fdatasync. It returns the seq of the last input stored, which
// the Group that carries their derived rows takes as Through.
func (l *Log) AppendInputs(b *Inputs) (uint64, error) {
	if len(b.frames) > 0 {
		if err := l.segs.write(b.frames, b.n); err != nil {
			return 0, err
		}
		if err := l.segs.sync(); err != nil {
			return 0, err
		}
	}
	return l.Len(), nil
}

// Group is what one group commit stores in Badger once its inputs are
// durable (AppendInputs): the attestation batches with their records, the
// tick links and published ticks of the ticks among the inputs, the
// withdrawal rows and claims, and possibly a snapshot. All of it but the
// batches and claims can be derived again from the inputs (the node does
// at start-up after Derived).
type Group struct {
	// Inputs are for Append only: the node appends them itself.
	Inputs []*core.Input
	// Through is the seq of the group's last input (AppendInputs' result):
	// Derived reads it back.
	Through uint64
	Batches []*Batch
	Links   []TickLink
	// Ticks are stored in the inputs' transaction, keeping the newest
	// KeepTicks (ticks.go). Store keeps no reference to their bodies.
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
	g.Withdrawals, g.Claims, g.Through = g.Withdrawals[:0], g.Claims[:0], 0
}

// Append stores g whole: its Inputs (AppendInputs), then the rest (Store).
func (l *Log) Append(g *Group) error {
	var b Inputs
	for _, in := range g.Inputs {
		b.Add(in)
	}
	through, err := l.AppendInputs(&b)
	if err != nil {
		return err
	}
	g.Through = through
	return l.Store(g)
}

// Derived returns the Through of the newest stored group: the rows derived
// from the inputs after it (tick links, published ticks, withdrawal rows)
// are missing after a crash between AppendInputs and Store, and the node
// writes them again from its replay.
func (l *Log) Derived() (through uint64, err error) {
	if l.after != nil {
		return l.after.derived, nil
	}
	err = l.db.View(func(txn *badger.Txn) error {
		through, err = derivedIn(txn)
		return err
	})
	return through, err
}

func derivedIn(txn *badger.Txn) (uint64, error) {
	item, err := txn.Get(derivedKey)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var through uint64
	err = item.Value(func(v []byte) error {
		if len(v) != 8 {
			return fmt.Errorf("%w: derived mark of %d bytes", ErrCorrupt, len(v))
		}
		through = binary.BigEndian.Uint64(v)
		return nil
	})
	return through, err
}

// Store writes g (but its Inputs) to Badger in one transaction (more only
// if the group exceeds Badger's transaction size), without a sync: the
// attester's batches and their history share it. When it returns nil, all
// of it is readable and survives the process; a checkpoint makes it
// durable (checkpoint.go).
//
// REQUIRES: Stores do not overlap; g's inputs and side records are durable
// (AppendInputs returned g.Through); each batch's Seq is one more than the
// last stored batch's (1 for the first), and its FirstPlace the previous
// batch's end; Batches checks the sequence on the way back. A snapshot's
// Seq is at most g.Through.
func (l *Log) Store(g *Group) error {
	l.ticksMu.Lock()
	defer l.ticksMu.Unlock()
	s := setter{db: l.db, txn: l.db.NewTransaction(true), sc: &l.store}
	defer func() {
		s.txn.Discard()
		l.store.done()
	}()
	if g.Through > 0 {
		if err := s.set(derivedKey, binary.BigEndian.AppendUint64(nil, g.Through)); err != nil {
			return err
		}
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
		if g.Snapshot.Seq > l.Len() {
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
	if l.after != nil || g.Snapshot != nil || time.Since(l.checkpointAt) >= checkpointEvery {
		if err := l.checkpoint(false); err != nil {
			return err
		}
	}
	if l.after != nil { // rebuilt: from now on the store's marks hold
		l.after = nil
		if err := l.markRunning(); err != nil {
			return err
		}
	}
	if now := time.Now(); now.Sub(l.advisedAt) >= adviseLogsEvery {
		l.advisedAt = now
		l.adviseLogs()
	}
	return nil
}

// Replay calls fn for every stored input after the first from, in order
// (from 0 replays the whole log; from a snapshot's Seq what follows it).
func (l *Log) Replay(from uint64, fn func(seq uint64, in *core.Input) error) error {
	return l.segs.each(from+1, func(seq uint64, p []byte) error {
		in, err := DecodeRecord(p)
		if err != nil {
			return fmt.Errorf("intent log seq %d: %w", seq, err)
		}
		return fn(seq, &in)
	})
}

// Close flushes and closes the log.
func (l *Log) Close() error {
	err := errors.Join(l.segs.close(), l.db.Close())
	if err == nil && !l.readOnly && l.after == nil {
		// Closed whole: the next open trusts the store's marks.
		if rerr := os.Remove(filepath.Join(l.dir, runningFile)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = rerr
		}
	}
	return err
}
