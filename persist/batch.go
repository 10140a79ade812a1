package persist

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/attest"
)

const batchPrefix = 'b'

// batchFixedBytes is a stored batch's size before its signatures.
const batchFixedBytes = 8 + 8 + 32 + 8 + 4 + 2

// batchSigBytes is one stored signature: validator address and r ‖ s ‖ v.
const batchSigBytes = 20 + 65

// Batch is an attestation batch as stored: what the committee signed over
// the records at places FirstPlace … FirstPlace+Leaves-1. Records are
// counted in log order, over the inputs that produce one (every input but
// base-fee changes and market creations); the attester signs them in that
// order.
type Batch struct {
	Seq        uint64 // 1, 2, … with no gap
	Epoch      uint64
	TimeUs     int64
	Root       [32]byte
	FirstPlace uint64
	Leaves     uint32
	Sigs       []attest.ValidatorSig
	// LeafHashes are the signed leaves, in order: enough to rebuild the
	// Merkle tree (and every receipt's proof) without the records.
	LeafHashes [][32]byte
	// Records are the attested records, in leaf order: Append stores them
	// as history rows beside the batch. Reads leave it nil.
	Records []*core.TxRecord
}

func batchKey(seq uint64) []byte { return u64Key(batchPrefix, seq) }

// appendBatch appends b's stored value (layout in doc.go).
func appendBatch(dst []byte, b *Batch) []byte {
	if len(b.Sigs) > attest.MaxCommitteeSize {
		panic("BUG: persist: a batch with more signatures than a committee has")
	}
	dst = binary.BigEndian.AppendUint64(dst, b.Epoch)
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.TimeUs))
	dst = append(dst, b.Root[:]...)
	dst = binary.BigEndian.AppendUint64(dst, b.FirstPlace)
	dst = binary.BigEndian.AppendUint32(dst, b.Leaves)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(b.Sigs)))
	for i := range b.Sigs {
		dst = append(dst, b.Sigs[i].Validator[:]...)
		dst = append(dst, b.Sigs[i].Signature[:]...)
	}
	for i := range b.LeafHashes {
		dst = append(dst, b.LeafHashes[i][:]...)
	}
	return dst
}

// errBatchCorrupt is a stored batch that does not decode exactly.
var errBatchCorrupt = errors.New("malformed stored attestation batch")

// Batches calls fn for every stored batch, in sequence order. A gap in the
// sequence or a batch that does not decode is an error.
func (l *Log) Batches(fn func(*Batch) error) error {
	return l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{batchPrefix}})
		defer it.Close()
		want := uint64(1)
		for it.Rewind(); it.Valid(); it.Next() {
			seq := binary.BigEndian.Uint64(it.Item().Key()[1:])
			if seq != want {
				return fmt.Errorf("attestation batches have a gap: found %d, want %d", seq, want)
			}
			b := Batch{Seq: seq}
			if err := it.Item().Value(func(v []byte) error { return decodeBatch(v, &b) }); err != nil {
				return fmt.Errorf("attestation batch %d: %w", seq, err)
			}
			if err := fn(&b); err != nil {
				return err
			}
			want++
		}
		return nil
	})
}

// BatchesFrom calls fn for the stored batches from seq from on, in sequence
// order, until fn returns false. Pruned batches are not there: the first
// one fn gets may come after from.
func (l *Log) BatchesFrom(from uint64, fn func(*Batch) bool) error {
	return l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{batchPrefix}})
		defer it.Close()
		for it.Seek(batchKey(from)); it.Valid(); it.Next() {
			b := Batch{Seq: binary.BigEndian.Uint64(it.Item().Key()[1:])}
			if err := it.Item().Value(func(v []byte) error { return decodeBatch(v, &b) }); err != nil {
				return fmt.Errorf("attestation batch %d: %w", b.Seq, err)
			}
			if !fn(&b) {
				return nil
			}
		}
		return nil
	})
}

func decodeBatch(v []byte, b *Batch) error {
	if len(v) < batchFixedBytes {
		return errBatchCorrupt
	}
	b.Epoch = binary.BigEndian.Uint64(v)
	b.TimeUs = int64(binary.BigEndian.Uint64(v[8:]))
	copy(b.Root[:], v[16:48])
	b.FirstPlace = binary.BigEndian.Uint64(v[48:])
	b.Leaves = binary.BigEndian.Uint32(v[56:])
	n := int(binary.BigEndian.Uint16(v[60:]))
	v = v[batchFixedBytes:]
	if b.Leaves < 1 || b.Leaves > attest.MaxBatchLeaves || n > attest.MaxCommitteeSize || len(v) != n*batchSigBytes+32*int(b.Leaves) {
		return errBatchCorrupt
	}
	b.Sigs = make([]attest.ValidatorSig, n)
	for i := range b.Sigs {
		copy(b.Sigs[i].Validator[:], v[:20])
		copy(b.Sigs[i].Signature[:], v[20:batchSigBytes])
		v = v[batchSigBytes:]
	}
	b.LeafHashes = make([][32]byte, b.Leaves)
	for i := range b.LeafHashes {
		copy(b.LeafHashes[i][:], v[32*i:])
	}
	return nil
}
