package persist

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
)

// sampleRecord is the record at place: a transfer from account place%3 to
// account 100+place%2, with a log on every other place.
func sampleRecord(place uint64) *core.TxRecord {
	rec := &core.TxRecord{Kind: core.RecordTx, Seq: place + 1, Status: 1, GasUsed: 21000,
		Tx: core.Tx{Hash: core.Hash{byte(place), byte(place >> 8), 0xaa}, Nonce: place, From: core.Address{byte(place % 3)},
			To: core.Address{byte(100 + place%2)}, HasTo: true, Value: *uint256.NewInt(place)}}
	rec.EffectiveGasPrice.SetUint64(7)
	if place%2 == 0 {
		rec.Logs = []core.Log{{Address: core.Address{0xee}, Topics: []core.Hash{{byte(place)}, {2}}, Data: []byte{1, 2, 3}}}
	}
	return rec
}

// writeHistory stores batches 1..batches of sampleBatch (batch k holds k
// records) and returns the log.
func writeHistory(t *testing.T, batches uint64) *Log {
	t.Helper()
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for seq := uint64(1); seq <= batches; seq++ {
		if err := l.Append(&Group{Batches: []*Batch{sampleBatch(seq)}}); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func TestHistoryRecords(t *testing.T) {
	l := writeHistory(t, 6) // places 0..20
	head, err := l.Head()
	if err != nil || head != (Head{NextPlace: 21, NextSeq: 7, LastUs: sampleBatch(6).TimeUs}) {
		t.Fatalf("head %+v, %v", head, err)
	}
	for place := uint64(0); place < 21; place++ {
		want := sampleRecord(place)
		s, err := l.RecordByHash(want.Tx.Hash)
		if err != nil || s == nil {
			t.Fatalf("place %d: %v, %v", place, s, err)
		}
		if s.Place != place || !reflect.DeepEqual(&s.Rec, want) {
			t.Fatalf("place %d: got %+v\nwant %+v", place, s, want)
		}
		b, err := l.Batch(s.BatchSeq)
		if err != nil || b.FirstPlace+uint64(s.Leaf) != place {
			t.Fatalf("place %d: batch %d leaf %d does not point back (%v)", place, s.BatchSeq, s.Leaf, err)
		}
	}
	if s, err := l.RecordByHash(core.Hash{0xff}); s != nil || err != nil {
		t.Fatalf("unknown hash: %v, %v", s, err)
	}
	rs, err := l.Records([]uint64{3, 99, 0})
	if err != nil || rs[0].Place != 3 || rs[1] != nil || rs[2].Place != 0 {
		t.Fatalf("Records: %v, %v", rs, err)
	}
}

func TestHistoryPlaceAfter(t *testing.T) {
	l := writeHistory(t, 4) // batch k at time base+k, places k(k-1)/2 ..
	base := sampleBatch(1).TimeUs - 1
	for _, c := range []struct {
		since int64
		incl  bool
		want  uint64
	}{
		{0, true, 0}, {base + 1, true, 0}, {base + 1, false, 1}, {base + 3, true, 3}, {base + 3, false, 6},
		{base + 4, false, 10}, {base + 100, true, 10},
	} {
		got, err := l.PlaceAfter(c.since, c.incl)
		if err != nil || got != c.want {
			t.Errorf("PlaceAfter(base+%d, %v) = %d, %v; want %d", c.since-base, c.incl, got, err, c.want)
		}
	}
}

func TestHistoryAccountPlaces(t *testing.T) {
	l := writeHistory(t, 5) // places 0..14
	collect := func(a core.Address, lo, hi uint64, desc bool, limit int) []uint64 {
		var got []uint64
		if err := l.AccountPlaces(a, lo, hi, desc, func(p uint64) bool { got = append(got, p); return len(got) < limit }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	// Account {1} sent places 1, 4, 7, 10, 13; account {101} received the odd places.
	if got := collect(core.Address{1}, 0, 15, false, 100); !slices.Equal(got, []uint64{1, 4, 7, 10, 13}) {
		t.Fatalf("sender asc: %v", got)
	}
	if got := collect(core.Address{1}, 2, 13, true, 100); !slices.Equal(got, []uint64{10, 7, 4}) {
		t.Fatalf("sender desc in [2,13): %v", got)
	}
	if got := collect(core.Address{101}, 0, 15, false, 3); !slices.Equal(got, []uint64{1, 3, 5}) {
		t.Fatalf("recipient, limit 3: %v", got)
	}
	if got := collect(core.Address{77}, 0, 15, false, 3); len(got) != 0 {
		t.Fatalf("stranger: %v", got)
	}
}

func TestHistoryScanLogsAndLinks(t *testing.T) {
	l := writeHistory(t, 4) // places 0..9, logs on even places
	var got []uint64
	err := l.ScanLogs(3, 9, func(place uint64, index int, lg *core.Log) bool {
		if index != 0 || lg.Address != (core.Address{0xee}) || lg.Topics[0] != (core.Hash{byte(place)}) {
			t.Fatalf("place %d: log %d %+v", place, index, lg)
		}
		got = append(got, place)
		return true
	})
	if err != nil || !slices.Equal(got, []uint64{4, 6, 8}) {
		t.Fatalf("logs in [3,9): %v, %v", got, err)
	}
	link := TickLink{Intent: core.Hash{5}, TickUs: 42, TickHash: core.Hash{6}}
	if err := l.Append(&Group{Links: []TickLink{link}}); err != nil {
		t.Fatal(err)
	}
	if k, ok, err := l.TickLinkOf(core.Hash{5}); !ok || err != nil || k != link {
		t.Fatalf("link: %+v %v %v", k, ok, err)
	}
	if _, ok, err := l.TickLinkOf(core.Hash{7}); ok || err != nil {
		t.Fatalf("no link: %v %v", ok, err)
	}
}

// TestSnapshotsNewestFirst: snapshots come back newest first, a damaged one
// reports its error and the caller can go on to the older one.
func TestSnapshotsNewestFirst(t *testing.T) {
	l := writeHistory(t, 0)
	ins := sampleInputs()
	body := func(seq uint64) []byte { return bytes.Repeat([]byte{byte(seq)}, 1000) }
	for seq := uint64(1); seq <= 3; seq++ {
		if err := l.Append(&Group{Inputs: ins[seq-1 : seq], Snapshot: NewSnapshot(seq, body(seq))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.db.Update(func(txn *badger.Txn) error { return txn.Set(snapshotKey(3), []byte("not zstd")) }); err != nil {
		t.Fatal(err)
	}
	var seen []uint64
	err := l.Snapshots(func(seq uint64, b []byte, err error) bool {
		switch {
		case seq == 3 && err == nil:
			t.Fatal("a damaged snapshot read back")
		case seq != 3 && (err != nil || !bytes.Equal(b, body(seq))):
			t.Fatalf("snapshot %d: %v", seq, err)
		}
		seen = append(seen, seq)
		return true
	})
	if err != nil || !slices.Equal(seen, []uint64{3, 2, 1}) {
		t.Fatalf("seen %v, %v", seen, err)
	}
	if err := l.DeleteSnapshotsBefore(3); err != nil {
		t.Fatal(err)
	}
	seen = seen[:0]
	l.Snapshots(func(seq uint64, _ []byte, _ error) bool { seen = append(seen, seq); return true })
	if !slices.Equal(seen, []uint64{3}) {
		t.Fatalf("after DeleteSnapshotsBefore(3): %v", seen)
	}
}

func FuzzDecodeTxRecord(f *testing.F) {
	for place := range uint64(4) {
		f.Add(appendTxRecord(nil, sampleRecord(place)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var rec core.TxRecord
		if decodeTxRecord(b, &rec) != nil {
			return
		}
		if !bytes.Equal(appendTxRecord(nil, &rec), b) {
			t.Fatal("decode/encode not inverse")
		}
	})
}

// TestStoredRecordBothWays: a record row holds a compressible record
// s2-compressed and an incompressible one as is; both read back equal.
func TestStoredRecordBothWays(t *testing.T) {
	zeros := sampleRecord(0)
	zeros.Tx.Data = make([]byte, 4096) // ABI words: mostly zero bytes
	noise := sampleRecord(1)
	noise.Tx.Data = make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(noise.Tx.Data)
	for _, c := range []struct {
		rec        *core.TxRecord
		compressed bool
	}{{zeros, true}, {noise, false}} {
		plain := appendTxRecord(nil, c.rec)
		row := appendStoredRecord(nil, plain)
		if got := row[0] == storedRecordS2; got != c.compressed || (c.compressed && len(row) >= len(plain)/2) {
			t.Fatalf("stored %d bytes of %d plain, compressed %v, want %v", len(row), len(plain), got, c.compressed)
		}
		var rec core.TxRecord
		if err := decodeStoredRecord(row, &rec); err != nil || !reflect.DeepEqual(&rec, c.rec) {
			t.Fatalf("read back %+v, %v", rec, err)
		}
	}
}

func FuzzDecodeStoredRecord(f *testing.F) {
	for place := range uint64(4) {
		f.Add(appendStoredRecord(nil, appendTxRecord(nil, sampleRecord(place))))
	}
	f.Add([]byte{storedRecordS2, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		var rec core.TxRecord
		if decodeStoredRecord(b, &rec) != nil {
			return
		}
		var again core.TxRecord
		if err := decodeStoredRecord(appendStoredRecord(nil, appendTxRecord(nil, &rec)), &again); err != nil || !reflect.DeepEqual(&again, &rec) {
			t.Fatalf("a decoded record does not survive a round trip: %v", err)
		}
	})
}

// TestLogRowsBothForms: a record's logs are one index row; an earlier
// build's rows, one per log, are read in place order beside them, a scan
// stops inside a record's row when asked, and pruning deletes both forms.
func TestLogRowsBothForms(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	// Places 0..14, one log on even places; place 3 has two (stored below
	// as an earlier build did), place 10 three.
	old := []core.Log{{Address: core.Address{0xd0}, Topics: []core.Hash{{1}, {2}, {3}}}, {Address: core.Address{0xd1}}}
	for seq := uint64(1); seq <= 5; seq++ {
		b := sampleBatch(seq)
		switch seq {
		case 3:
			b.Records[0].Logs = old
		case 5:
			b.Records[0].Logs = []core.Log{{Address: core.Address{0xe1}}, {Address: core.Address{0xe2}, Topics: []core.Hash{{9}}}, {Address: core.Address{0xe3}}}
		}
		if err := l.Append(&Group{Batches: []*Batch{b}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.db.Update(func(txn *badger.Txn) error {
		if err := txn.Delete(u64Key(logPrefixIdx, 3)); err != nil {
			return err
		}
		for i := range old {
			key := binary.BigEndian.AppendUint32(u64Key(logPrefixIdx, 3), uint32(i))
			if err := txn.Set(key, appendLogKeyFields(nil, &old[i])); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		place uint64
		index int
		addr  byte
	}
	scan := func(lo, hi uint64, limit int) []seen {
		var got []seen
		err := l.ScanLogs(lo, hi, func(place uint64, index int, lg *core.Log) bool {
			got = append(got, seen{place, index, lg.Address[0]})
			return len(got) < limit
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := []seen{{0, 0, 0xee}, {2, 0, 0xee}, {3, 0, 0xd0}, {3, 1, 0xd1}, {4, 0, 0xee}, {6, 0, 0xee},
		{8, 0, 0xee}, {10, 0, 0xe1}, {10, 1, 0xe2}, {10, 2, 0xe3}, {12, 0, 0xee}, {14, 0, 0xee}}
	if got := scan(0, 15, 100); !slices.Equal(got, want) {
		t.Fatalf("all logs:\n got %v\nwant %v", got, want)
	}
	if got := scan(3, 11, 6); !slices.Equal(got, want[2:8]) {
		t.Fatalf("stopped inside place 10's row: %v", got)
	}
	if got := scan(10, 11, 2); !slices.Equal(got, want[7:9]) {
		t.Fatalf("two of place 10's three: %v", got)
	}
	var topics []core.Hash
	if err := l.ScanLogs(3, 4, func(_ uint64, _ int, lg *core.Log) bool { topics = lg.Topics; return false }); err != nil ||
		!slices.Equal(topics, old[0].Topics) {
		t.Fatalf("old row's topics %v, %v", topics, err)
	}

	// Batches 1..3 (places 0..5) go, the old rows at place 3 with them.
	pruned, _, err := l.PruneBefore(sampleBatch(4).TimeUs, 100)
	if err != nil || pruned != 6 {
		t.Fatalf("pruned %d, %v", pruned, err)
	}
	if got := scan(0, 15, 100); !slices.Equal(got, want[5:]) {
		t.Fatalf("after pruning places 0..5: %v", got)
	}
	if err := l.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{logPrefixIdx}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if place := binary.BigEndian.Uint64(it.Item().Key()[1:]); place < 6 {
				t.Errorf("a log row of pruned place %d is left (%x)", place, it.Item().Key())
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
