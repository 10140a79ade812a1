package persist

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/ledgervenue/node/core/attest"
)

// sampleBatch is batch seq of a history where batch k holds k records.
func sampleBatch(seq uint64) *Batch {
	b := &Batch{Seq: seq, Epoch: 2, TimeUs: 1_700_000_000_000_000 + int64(seq), Root: [32]byte{byte(seq)},
		FirstPlace: seq * (seq - 1) / 2, Leaves: uint32(seq)}
	for i := range 4 {
		var s attest.ValidatorSig
		s.Validator[19] = byte(i)
		s.Signature[0], s.Signature[64] = byte(seq), 27
		b.Sigs = append(b.Sigs, s)
	}
	for i := range b.Leaves {
		place := b.FirstPlace + uint64(i)
		b.LeafHashes = append(b.LeafHashes, [32]byte{byte(place), 1})
		b.Records = append(b.Records, sampleRecord(place))
	}
	return b
}

// TestBatchesRoundTrip: stored batches come back in order, equal, after a
// reopen.
func TestBatchesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []*Batch
	for seq := uint64(1); seq <= 3; seq++ {
		want = append(want, sampleBatch(seq))
		if err := l.Append(&Group{Batches: want[len(want)-1:]}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	if l, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var got []*Batch
	if err := l.Batches(func(b *Batch) error { c := *b; got = append(got, &c); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, b := range want {
		b.Records = nil // stored as history rows, not with the batch
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("batches after reopen:\n%+v\nwant\n%+v", got, want)
	}
}

// TestBatchesRefuseDamage: a gap in the sequence or a value that does not
// decode is an error, never a guess.
func TestBatchesRefuseDamage(t *testing.T) {
	for _, c := range []struct {
		name string
		key  []byte
		val  []byte
		want string
	}{
		{"gap", []byte{batchPrefix, 0, 0, 0, 0, 0, 0, 0, 3}, nil, "gap"},
		{"short", []byte{batchPrefix, 0, 0, 0, 0, 0, 0, 0, 2}, []byte{1, 2, 3}, "malformed"},
	} {
		l, err := Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Append(&Group{Batches: []*Batch{sampleBatch(1)}}); err != nil {
			t.Fatal(err)
		}
		val := c.val
		if val == nil {
			val = make([]byte, batchFixedBytes)
		}
		if err := l.db.Update(func(txn *badger.Txn) error { return txn.Set(c.key, val) }); err != nil {
			t.Fatal(err)
		}
		err = l.Batches(func(*Batch) error { return nil })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
		l.Close()
	}
}
