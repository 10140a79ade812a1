package marketdata

import (
	"testing"

	"github.com/ledgervenue/node/core/clob"
)

// benchIndex builds an index of two markets with full 1m rings and
// accounts × perAccount orders: every other one active, the rest filled,
// each with two fill rows.
func benchIndex(accounts, perAccount int) *Index {
	x := newTestIndex()
	tickUs := int64(0)
	var res clob.TickResult
	tick := func(events []clob.Event) {
		tickUs += minuteUs
		res = clob.TickResult{TickUs: tickUs, Events: events}
		for _, id := range x.bookIDs {
			res.Books = append(res.Books, clob.BookTick{Book: id, Price: dec("5" + e18[1:]), HasPrice: true,
				Traded: true, VolumeBase: dec(e18), EndEvent: len(events)})
		}
		x.Tick(&res)
	}
	for range CandleBucketsMax {
		tick(nil)
	}
	var placed, filled []clob.Event
	for a := range accounts {
		owner := addrOf(byte(a))
		owner[0] = byte(a >> 8)
		for i := range perAccount {
			m := meta(0, []clob.Hash{bookA, bookB}[i%2], owner, uint64(i), tickUs+int64(i), clob.Side(i%2))
			m.ID[0], m.ID[1], m.ID[2], m.ID[3] = byte(a>>8), byte(a), byte(i>>8), byte(i)
			x.Admitted(m)
			placed = append(placed, clob.Event{Kind: clob.EventPlaced, OrderID: m.ID})
			fill := clob.Event{Kind: clob.EventFill, OrderID: m.ID, Base: dec(e17), Quote: dec("5" + e17[1:]),
				TotalBase: dec(e17), TotalQuote: dec("5" + e17[1:]), Terminal: i%2 == 0}
			filled = append(filled, fill)
		}
	}
	tick(placed)
	tick(filled)
	for i := range filled {
		filled[i].Terminal = false
	}
	tick(filled)
	return x
}

var snapshotSink []byte

func BenchmarkAppendSnapshot(b *testing.B) {
	x := benchIndex(10, 1000)
	if len(x.orders) != 10_000 {
		b.Fatalf("%d orders", len(x.orders))
	}
	buf := x.AppendSnapshot(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = x.AppendSnapshot(buf[:0])
	}
	snapshotSink = buf
	b.ReportMetric(float64(len(buf)), "snapshot_bytes")
}

func BenchmarkLoad(b *testing.B) {
	x := benchIndex(10, 1000)
	snap := x.AppendSnapshot(nil)
	b.SetBytes(int64(len(snap)))
	b.ReportAllocs()
	var y *Index
	for b.Loop() {
		var err error
		if y, err = Load(nil, snap); err != nil {
			b.Fatal(err)
		}
	}
	if len(y.orders) != len(x.orders) {
		b.Fatalf("loaded %d orders", len(y.orders))
	}
}
