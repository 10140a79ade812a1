package persist

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/zstd"
)

const snapshotPrefix = 's'

// SnapshotBytesMax bounds a snapshot's uncompressed size; a stored one that
// claims more is corrupt.
const SnapshotBytesMax = 4 << 30

// Snapshot is the node's state after the first Seq inputs of the log,
// zstd-compressed (the frame's checksum catches a damaged value).
type Snapshot struct {
	Seq        uint64
	compressed []byte
}

var (
	zenc     *zstd.Encoder
	zdec     *zstd.Decoder
	zsetOnce sync.Once
)

func codecs() (*zstd.Encoder, *zstd.Decoder) {
	zsetOnce.Do(func() {
		// Neither fails with these options; both are safe for concurrent
		// use through EncodeAll/DecodeAll.
		zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		zdec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(SnapshotBytesMax))
	})
	return zenc, zdec
}

// NewSnapshot compresses body, the state after seq inputs. It is the slow
// part of a snapshot: call it off the sequencer.
func NewSnapshot(seq uint64, body []byte) *Snapshot {
	enc, _ := codecs()
	return &Snapshot{Seq: seq, compressed: enc.EncodeAll(body, nil)}
}

// Size is the snapshot's size on disk.
func (s *Snapshot) Size() int { return len(s.compressed) }

func (s *Snapshot) encode() []byte { return s.compressed }

func snapshotKey(seq uint64) []byte { return u64Key(snapshotPrefix, seq) }

// Snapshots calls fn for the stored snapshots, newest first, until it
// returns false: with the state after seq inputs, or the error that kept it
// from being read (a damaged snapshot: the caller tries an older one).
// While a store whose machine stopped is not rebuilt, only the snapshots
// its checkpoint covers count (checkpoint.go).
func (l *Log) Snapshots(fn func(seq uint64, body []byte, err error) bool) error {
	_, dec := codecs()
	newest := ^uint64(0)
	if l.after != nil {
		newest = l.after.derived
	}
	return l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Reverse: true, Prefix: []byte{snapshotPrefix}})
		defer it.Close()
		for it.Seek(snapshotKey(newest)); it.Valid(); it.Next() {
			seq := binary.BigEndian.Uint64(it.Item().Key()[1:])
			var body []byte
			err := it.Item().Value(func(v []byte) error {
				var derr error
				body, derr = dec.DecodeAll(v, nil)
				return derr
			})
			if err != nil {
				err = fmt.Errorf("snapshot at seq %d: %w", seq, err)
			}
			if !fn(seq, body, err) {
				return nil
			}
		}
		return nil
	})
}

// DeleteSnapshotsBefore removes the snapshots older than seq (the node
// keeps its newest few).
func (l *Log) DeleteSnapshotsBefore(seq uint64) error {
	keys, err := l.keysBefore(snapshotPrefix, seq)
	if err != nil {
		return err
	}
	return l.deleteKeys(keys)
}

// DamageSnapshotForTest overwrites the snapshot at seq with bytes that do
// not decompress, as a torn or rotted write would leave it.
func (l *Log) DamageSnapshotForTest(seq uint64) error {
	return l.db.Update(func(txn *badger.Txn) error { return txn.Set(snapshotKey(seq), []byte("damaged")) })
}

// SnapshotSeqs returns the seqs of the stored snapshots, oldest first.
func (l *Log) SnapshotSeqs() ([]uint64, error) {
	var seqs []uint64
	err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{snapshotPrefix}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			seqs = append(seqs, binary.BigEndian.Uint64(it.Item().Key()[1:]))
		}
		return nil
	})
	return seqs, err
}
