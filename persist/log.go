package persist

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
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
// attestation batches are stored beside the log).
const FormatVersion = 3

// Log is the durable, ordered log of ledger inputs. Append and Replay must
// not run concurrently (the node replays before it serves).
type Log struct {
	db      *badger.DB
	nextSeq uint64 // seq of the next appended input
	key     [9]byte
	val     []byte
}

// Open opens (creating if needed) the log in dir.
func Open(dir string) (*Log, error) {
	opts := badger.DefaultOptions(dir).
		WithSyncWrites(true). // an acknowledged input survives a crash
		WithLogger(nil).
		WithMemTableSize(16 << 20).
		WithNumMemtables(2).
		WithValueLogFileSize(64 << 20).
		WithBlockCacheSize(16 << 20)
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
		it.Seek([]byte{logPrefix, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
		if it.Valid() {
			l.nextSeq = binary.BigEndian.Uint64(it.Item().Key()[1:]) + 1
		}
		return nil
	})
}

// Len returns how many inputs the log holds.
func (l *Log) Len() uint64 { return l.nextSeq - 1 }

// Append makes inputs durable, in order, and stores the attestation
// batches, with one synced write (more only if the group exceeds Badger's
// transaction size): the attester's batches share the group commit's fsync.
// When it returns nil all of them are on disk.
//
// REQUIRES: each batch's Seq is one more than the last stored batch's (1
// for the first); Batches checks it on the way back.
func (l *Log) Append(inputs []*core.Input, batches []*Batch) error {
	txn := l.db.NewTransaction(true)
	defer func() { txn.Discard() }()
	set := func(key, val []byte) error {
		err := txn.Set(key, val)
		if errors.Is(err, badger.ErrTxnTooBig) {
			if err = txn.Commit(); err != nil {
				return fmt.Errorf("cannot commit intent log: %w", err)
			}
			txn = l.db.NewTransaction(true)
			err = txn.Set(key, val)
		}
		if err != nil {
			return fmt.Errorf("cannot append to intent log: %w", err)
		}
		return nil
	}
	for _, in := range inputs {
		l.key[0] = logPrefix
		binary.BigEndian.PutUint64(l.key[1:], l.nextSeq)
		l.val = AppendRecord(l.val[:0], in)
		// Badger keeps the slices until commit: give it copies.
		if err := set(append([]byte(nil), l.key[:]...), append([]byte(nil), l.val...)); err != nil {
			return err
		}
		l.nextSeq++
	}
	for _, b := range batches {
		if err := set(batchKey(b.Seq), appendBatch(nil, b)); err != nil {
			return err
		}
	}
	if err := txn.Commit(); err != nil {
		return fmt.Errorf("cannot commit intent log: %w", err)
	}
	return nil
}

// Replay calls fn for every stored input, in order.
func (l *Log) Replay(fn func(seq uint64, in *core.Input) error) error {
	return l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 256, Prefix: []byte{logPrefix}})
		defer it.Close()
		want := uint64(1)
		for it.Rewind(); it.Valid(); it.Next() {
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
