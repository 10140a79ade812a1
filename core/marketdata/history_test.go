package marketdata

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ledgervenue/node/core/clob"
)

var bookP = hashOf(3)

func marketPH() *clob.MarketConfig {
	c := marketA()
	c.ID, c.Name, c.Kind, c.BaseSymbol, c.Base = bookP, "ETH-PERP", clob.Perp, "ETH", addrOf(0x44)
	c.Perp.MaxLeverage = 10
	return c
}

// historyIndex has alice's fills: order 1 (limit buy of 1 on book A) in
// ticks 1000 and 2000, order 2 (unknown to the index) on book B in tick
// 2000, and a perp fill of order 3 (sell 1, from long 3 to long 2) in tick
// 3000; bob's fill of order 4 in tick 3000; and two liquidations in tick
// 3000 (alice on the perp book, bob on book A).
func historyIndex() *Index {
	x := newTestIndex()
	x.AddMarket(marketPH())
	x.SetEquity(func(a clob.Address) clob.Signed {
		if a == alice {
			return clob.Signed{Abs: dec("42")}
		}
		return clob.Signed{Neg: true, Abs: dec("7")}
	})
	x.Admitted(meta(1, bookA, alice, 1, 100, clob.Buy))
	m := meta(3, bookP, alice, 3, 200, clob.Sell)
	m.Type = clob.Market
	x.Admitted(m)
	x.Admitted(meta(4, bookP, bob, 1, 200, clob.Buy))
	fill := func(id byte, owner clob.Address, side clob.Side, base string) clob.Event {
		e := fillEv(id, base, "5"+base[1:], base, base, false)
		e.Owner, e.Side = owner, side
		return e
	}
	x.Tick(mkTick(1000, bookTick{book: bookA, price: "5" + e18[1:], volume: e17, events: []clob.Event{fill(1, alice, clob.Buy, e17)}}))
	x.Tick(mkTick(2000,
		bookTick{book: bookA, price: "5" + e18[1:], volume: e17, events: []clob.Event{fill(1, alice, clob.Buy, e17)}},
		bookTick{book: bookB, price: "6" + e18[1:], volume: e17, events: []clob.Event{fill(2, alice, clob.Sell, e17)}}))
	perp := fill(3, alice, clob.Sell, e18)
	perp.Position, perp.Realized, perp.Maker = clob.Signed{Abs: dec("2" + e18[1:])}, clob.Signed{Neg: true, Abs: dec("12")}, true
	res := mkTick(3000, bookTick{book: bookP, price: "5" + e18[1:], volume: e18, events: []clob.Event{perp, fill(4, bob, clob.Buy, e18)}})
	res.Events = append(res.Events,
		clob.Event{Kind: clob.EventLiquidation, Book: bookP, Owner: alice, Position: clob.Signed{Abs: dec("2" + e18[1:])},
			Realized: clob.Signed{Neg: true, Abs: dec("3")}, Price: dec("4" + e18[1:])},
		clob.Event{Kind: clob.EventLiquidation, Book: bookA, Owner: bob, Position: clob.Signed{Neg: true, Abs: dec(e17)}, Price: dec("9")},
		clob.Event{Kind: clob.EventLiquidation, Book: hashOf(0x99), Owner: bob}) // not a market of the index
	x.Tick(res)
	return x
}

func fillTimes(p FillsPage) string {
	var s []string
	for _, f := range p.Fills {
		s = append(s, fmt.Sprintf("%d/%x", f.TickUs, f.OrderID[31]))
	}
	return strings.Join(s, " ")
}

func TestFillsPages(t *testing.T) {
	x := historyIndex()
	all := FillsQuery{ToUs: math.MaxInt64, Limit: FillsLimitMax}
	every := x.Fills(alice, &all)
	if got := fillTimes(every); got != "3000/3 2000/2 2000/1 1000/1" || every.HasNext {
		t.Fatalf("all fills %s (next %v)", got, every.HasNext)
	}
	// Pages of one, through the cursors: neither skip nor repeat.
	var walked []string
	q := FillsQuery{ToUs: math.MaxInt64, Limit: 1}
	for range 10 {
		p := x.Fills(alice, &q)
		walked = append(walked, fillTimes(p))
		if !p.HasNext {
			break
		}
		q.Cursor, q.HasCursor = p.Next, true
	}
	if got := strings.Join(walked, " "); got != fillTimes(every) {
		t.Fatalf("pages %q, want %q", got, fillTimes(every))
	}
	for _, c := range []struct {
		name string
		edit func(q *FillsQuery)
		want string
	}{
		{"book A", func(q *FillsQuery) { q.Book, q.HasBook = bookA, true }, "2000/1 1000/1"},
		{"[2000, 3000)", func(q *FillsQuery) { q.FromUs, q.ToUs = 2000, 3000 }, "2000/2 2000/1"},
		{"from 2001", func(q *FillsQuery) { q.FromUs = 2001 }, "3000/3"},
		{"to 1000", func(q *FillsQuery) { q.ToUs = 1000 }, ""},
		// seq 1 is the only older row; ts is not checked
		{"cursor 0:2", func(q *FillsQuery) { q.Cursor, q.HasCursor = SeqCursor{Seq: 2}, true }, "1000/1"},
	} {
		q := all
		c.edit(&q)
		if got := fillTimes(x.Fills(alice, &q)); got != c.want {
			t.Fatalf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	p := x.Fills(alice, &FillsQuery{ToUs: math.MaxInt64, Limit: 2})
	if len(p.Fills) != 2 || !p.HasNext || p.Next != (SeqCursor{TsUs: 2000, Seq: 3}) || !p.Fills[0].Perp || p.Fills[1].HasOrder {
		t.Fatalf("first page of two %+v", p)
	}
}

func TestPositionBefore(t *testing.T) {
	for _, c := range []struct {
		side        clob.Side
		base, after string
		afterNeg    bool
		before      string
		beforeNeg   bool
		name        string
	}{
		{clob.Buy, "5", "3", false, "2", true, "buy flips a short"},
		{clob.Sell, "5", "3", false, "8", false, "sell shrinks a long"},
		{clob.Buy, "5", "5", false, "0", false, "buy opens"},
		{clob.Sell, "5", "5", true, "0", false, "sell opens a short"},
		{clob.Sell, "2", "5", true, "3", true, "sell grows a short"},
	} {
		base := dec(c.base)
		if got := PositionBefore(c.side, &base, clob.Signed{Neg: c.afterNeg, Abs: dec(c.after)}); got.Neg != c.beforeNeg || got.Abs.Dec() != c.before {
			t.Fatalf("%s: %v, want neg %v %s", c.name, got, c.beforeNeg, c.before)
		}
	}
}

// FillsPerAccount: past it the oldest rows go; a cursor older than every
// kept row gives an empty last page.
func TestFillsBound(t *testing.T) {
	x := newTestIndex()
	e := fillEv(1, e17, e17, e17, e17, false)
	e.Owner = alice
	for i := range FillsPerAccount + 3 {
		x.Tick(mkTick(int64(1000*(i+1)), bookTick{book: bookA, price: e18, volume: e17, events: []clob.Event{e}}))
	}
	p := x.Fills(alice, &FillsQuery{ToUs: math.MaxInt64, Limit: FillsLimitMax, HasCursor: true, Cursor: SeqCursor{Seq: 5}})
	if len(p.Fills) != 1 || p.Fills[0].Seq != 4 || p.HasNext {
		t.Fatalf("oldest kept %+v", p)
	}
	p = x.Fills(alice, &FillsQuery{ToUs: math.MaxInt64, Limit: FillsLimitMax, HasCursor: true, Cursor: SeqCursor{Seq: 3}})
	if len(p.Fills) != 0 || p.HasNext {
		t.Fatalf("past the oldest kept %+v", p)
	}
	n := 0
	q := FillsQuery{ToUs: math.MaxInt64, Limit: FillsLimitMax}
	for {
		p := x.Fills(alice, &q)
		n += len(p.Fills)
		if !p.HasNext {
			break
		}
		q.Cursor, q.HasCursor = p.Next, true
	}
	if n != FillsPerAccount {
		t.Fatalf("%d rows kept, want %d", n, FillsPerAccount)
	}
}

func TestBackstopTransfers(t *testing.T) {
	x := historyIndex()
	all := x.BackstopTransfers(&BackstopQuery{Limit: BackstopLimitMax})
	if len(all.Transfers) != 2 || all.Total != 2 || all.Transfers[0].User != bob || all.Transfers[1].User != alice {
		t.Fatalf("all %+v", all)
	}
	first := x.BackstopTransfers(&BackstopQuery{Limit: 1})
	if len(first.Transfers) != 1 || first.Total != 2 || !first.HasNext || first.Transfers[0].Equity != (clob.Signed{Neg: true, Abs: dec("7")}) {
		t.Fatalf("first page %+v", first)
	}
	q := BackstopQuery{Limit: 1, Cursor: first.Next, HasCursor: true}
	second := x.BackstopTransfers(&q)
	if len(second.Transfers) != 1 || second.Transfers[0].User != alice || second.HasNext || second.Total != 2 {
		t.Fatalf("second page %+v", second)
	}
	byBook := x.BackstopTransfers(&BackstopQuery{Book: bookA, HasBook: true, Limit: 5})
	if len(byBook.Transfers) != 1 || byBook.Transfers[0].User != bob || byBook.Total != 1 {
		t.Fatalf("book A %+v", byBook)
	}
	// BackstopTransfersMax: past it the oldest go.
	liq := clob.Event{Kind: clob.EventLiquidation, Book: bookA, Owner: alice}
	for range BackstopTransfersMax {
		x.Tick(&clob.TickResult{TickUs: 4000, Events: []clob.Event{liq}})
	}
	if all := x.BackstopTransfers(&BackstopQuery{Limit: 1}); all.Total != BackstopTransfersMax ||
		x.backstop.at(0).TickUs != 4000 {
		t.Fatalf("bound: total %d, oldest at %d", all.Total, x.backstop.at(0).TickUs)
	}
}

// The histories survive a snapshot exactly; Load refuses what
// AppendSnapshot cannot have written.
func TestHistorySnapshot(t *testing.T) {
	x := historyIndex()
	snap := x.AppendSnapshot(nil)
	y, err := Load(nil, snap)
	if err != nil {
		t.Fatal(err)
	}
	if again := y.AppendSnapshot(nil); !bytes.Equal(again, snap) {
		t.Fatal("re-encoding differs")
	}
	for _, a := range []clob.Address{alice, bob} {
		q := FillsQuery{ToUs: math.MaxInt64, Limit: FillsLimitMax}
		px, py := x.Fills(a, &q), y.Fills(a, &q)
		if string(appendDump(nil, &px)) != string(appendDump(nil, &py)) || len(px.Fills) == 0 {
			t.Fatalf("fills of %x differ after Load", a)
		}
	}
	bx, by := x.BackstopTransfers(&BackstopQuery{Limit: 9}), y.BackstopTransfers(&BackstopQuery{Limit: 9})
	if string(appendDump(nil, &bx)) != string(appendDump(nil, &by)) {
		t.Fatal("backstop transfers differ after Load")
	}
	// The next row continues the sequence.
	e := fillEv(1, e17, e17, e17, e17, false)
	e.Owner = alice
	res := mkTick(5000, bookTick{book: bookA, price: e18, volume: e17, events: []clob.Event{e}})
	x.Tick(res)
	y.Tick(res)
	if !bytes.Equal(x.AppendSnapshot(nil), y.AppendSnapshot(nil)) {
		t.Fatal("a tick after Load diverges")
	}

	// The history section: seq, then alice's and bob's fills, then the
	// backstop rows, then the samples' count (0: no Live to sample).
	bsStart := len(snap) - 4 - 2*backstopRowSize
	fillsEnd := bsStart - 4
	lastFill := fillsEnd - fillRowSize // bob's only fill
	refuse := func(name, want string, edit func(b []byte)) {
		t.Helper()
		b := bytes.Clone(snap)
		edit(b)
		if _, err := Load(nil, b); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v, want %q", name, err, want)
		}
	}
	if n := binary.BigEndian.Uint32(snap[fillsEnd:]); n != 2 {
		t.Fatalf("layout moved: %d backstop rows", n)
	}
	refuse("backstop flags", "unknown flags", func(b []byte) { b[bsStart+8+8+20+32] = 0x80 })
	refuse("backstop negative zero", "negative zero", func(b []byte) {
		b[bsStart+8+8+20+32] |= bsEquityNeg | bsCashNeg
		clear(b[bsStart+8+8+20+32+1+32 : bsStart+8+8+20+32+1+64])
	})
	refuse("backstop order", "not ascending", func(b []byte) { binary.BigEndian.PutUint64(b[bsStart+backstopRowSize:], 1) })
	refuse("backstop seq", "sequence beyond", func(b []byte) { binary.BigEndian.PutUint64(b[bsStart+backstopRowSize:], 1<<40) })
	refuse("fill book", "unknown book", func(b []byte) { b[lastFill+8+8+31] = 0x77 })
	refuse("fill time", "outside [0, now", func(b []byte) { binary.BigEndian.PutUint64(b[lastFill+8:], 1<<50) })
	refuse("fill side", "unknown side", func(b []byte) { b[lastFill+8+8+32+32] = 2 })
	refuse("perp flag", "perp flag does not match the market", func(b []byte) {
		b[lastFill+8+8+32+32+1] &^= fillPerp // bob's fill is on the perp book: claim it is not
	})
	refuse("fill without order", "order fields without an order", func(b []byte) { b[lastFill+8+8+32+32+1] &^= fillHasOrder })
	if _, err := Load(nil, append(bytes.Clone(snap), 0)); err == nil {
		t.Fatal("a trailing byte loaded")
	}
}
