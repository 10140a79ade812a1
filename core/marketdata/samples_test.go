package marketdata

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// TestSamplesSnapshot: a tick samples each book that ran, keeping a sample
// only when the book changed; the samples round-trip through the snapshot
// (and a tick after Load diverges in nothing), and Load refuses samples
// AppendSnapshot cannot have written.
func TestSamplesSnapshot(t *testing.T) {
	live := &movingBook{}
	x := New(live)
	x.AddMarket(marketA())
	x.AddMarket(marketB())
	x.Tick(mkTick(1000, bookTick{book: bookA}))
	x.Tick(mkTick(2000, bookTick{book: bookA}, bookTick{book: bookB}))
	if x.books[bookA].samples.len() != 2 || x.books[bookB].samples.len() != 1 {
		t.Fatalf("%d and %d samples, want 2 and 1", x.books[bookA].samples.len(), x.books[bookB].samples.len())
	}
	// The same state again keeps nothing.
	live.n-- // movingBook moves on every call: undo the next call's move
	n := x.books[bookB].samples.len()
	x.Tick(mkTick(3000, bookTick{book: bookB}))
	if x.books[bookB].samples.len() != n {
		t.Fatal("an unchanged book kept a sample")
	}
	snap, size := x.AppendSnapshot(nil), x.samplesSize()
	y, err := Load(live, snap)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(y.AppendSnapshot(nil), snap) {
		t.Fatal("samples do not round-trip")
	}
	res := mkTick(4000, bookTick{book: bookA})
	l1, l2 := *live, *live
	x.live, y.live = &l1, &l2
	x.Tick(res)
	y.Tick(res)
	if !bytes.Equal(x.AppendSnapshot(nil), y.AppendSnapshot(nil)) {
		t.Fatal("a tick after Load diverges")
	}

	// The samples are the snapshot's last part: nBooks, then book A's id,
	// its count and its first sample.
	first := len(snap) - size + 4 + 32 + 4 // book A's first sample
	if size != 4+2*(32+4)+3*(sampleFixedSize+2*16*20) {
		t.Fatalf("samples' size %d", size)
	}
	refuse := func(name, want string, edit func(b []byte)) {
		t.Helper()
		b := bytes.Clone(snap)
		edit(b)
		if _, err := Load(live, b); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v, want %q", name, err, want)
		}
	}
	owners := first + 8 + 32 + 1 + 32 // nBid
	refuse("time", "outside [0, now", func(b []byte) { binary.BigEndian.PutUint64(b[first:], 1<<50) })
	refuse("order", "times not ascending", func(b []byte) {
		binary.BigEndian.PutUint64(b[first+sampleFixedSize+2*16*20:], 1000)
	})
	refuse("funding sign", "boolean", func(b []byte) { b[first+8+32] = 2 })
	refuse("negative zero", "negative zero", func(b []byte) {
		b[first+8+32] = 1
		clear(b[first+8+32+1 : first+8+32+1+32])
	})
	refuse("owners", "more than TopOwnersMax", func(b []byte) { b[owners] = TopOwnersMax + 1 })
	refuse("owners order", "owners not ascending", func(b []byte) { b[owners+1+20] = 0 })
	refuse("count", "want 1 to SamplesPerBook", func(b []byte) { binary.BigEndian.PutUint32(b[first-4:], 0) })
	refuse("book", "unknown book", func(b []byte) { b[first-4-1] = 0x77 })
}

// TestSamplesFundingOnSpot: a spot book's sample holds no funding.
func TestSamplesFundingOnSpot(t *testing.T) {
	live := &movingBook{perp: true} // funding on a spot market: AppendSnapshot writes it, Load refuses it
	x := New(live)
	x.AddMarket(marketA())
	x.Tick(mkTick(1000, bookTick{book: bookA}))
	snap := x.AppendSnapshot(nil)
	if _, err := Load(live, snap); err == nil || !strings.Contains(err.Error(), "funding on a spot book") {
		t.Fatalf("Load: %v", err)
	}
}
