package marketdata

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/ledgervenue/node/core/clob"
)

func TestStats24hRolling(t *testing.T) {
	x := newTestIndex()
	f := func(nowUs int64, volume, high, low string, changeBps int64) {
		t.Helper()
		if nowUs > x.NowUs() {
			x.Tick(mkTick(nowUs, bookTick{book: bookB})) // another book's quiet tick moves time
		}
		m := x.Markets(nil)[0]
		if m.Config.ID != bookA {
			t.Fatalf("first market %x", m.Config.ID)
		}
		if m.Volume24h != dec(volume) || m.High24h != dec(high) || m.Low24h != dec(low) || m.Change24hBps != changeBps {
			t.Fatalf("now %d: got volume %s high %s low %s change %d; want %s %s %s %d", nowUs,
				m.Volume24h.Dec(), m.High24h.Dec(), m.Low24h.Dec(), m.Change24hBps, volume, high, low, changeBps)
		}
	}
	five, six, four := "5"+e18[1:], "6"+e18[1:], "4"+e18[1:]
	x.Tick(mkTick(1_000_000, bookTick{book: bookA, price: five, volume: "2" + e18[1:]}))
	f(1_000_000, "2"+e18[1:], five, five, 0)
	x.Tick(mkTick(61_000_000, bookTick{book: bookA, price: six, volume: e18}))
	f(61_000_000, "3"+e18[1:], six, five, 2000) // (6 − 5) / 5
	x.Tick(mkTick(62_000_000, bookTick{book: bookA, price: four, volume: e18}))
	f(62_000_000, "4"+e18[1:], six, four, -2000) // (4 − 5) / 5
	// A tick that clears nothing keeps the price and adds nothing.
	x.Tick(mkTick(63_000_000, bookTick{book: bookA, price: four}))
	f(63_000_000, "4"+e18[1:], six, four, -2000)
	// The first minute's bucket [0, 60 s) leaves the window once now − 24h ≥ 60 s.
	f(dayUs+59_000_000, "4"+e18[1:], six, four, -2000)
	f(dayUs+60_000_000, "2"+e18[1:], six, four, -3333) // (4 − 6) / 6, truncated
	f(dayUs+120_000_000, "0", "0", "0", 0)
	if m := x.Markets(nil)[0]; m.LastPrice != dec(four) || !m.HasPrice {
		t.Fatalf("last price %s", m.LastPrice.Dec())
	}
	checkRoundTrip(t, x)
}

func TestChangeBps(t *testing.T) {
	f := func(from, to string, want int64) {
		t.Helper()
		a, b := dec(from), dec(to)
		if got := changeBps(&a, &b); got != want {
			t.Fatalf("changeBps(%s, %s) = %d, want %d", from, to, got, want)
		}
	}
	f("0", "5", 0)
	f("100", "101", 100)
	f("100", "99", -100)
	f("3", "1", -6666)
	f("1", "115792089237316195423570985008687907853269984665640564039457584007913129639935", 9223372036854775807)
}

func TestOrderLifecycle(t *testing.T) {
	x := newTestIndex()
	status := func(id byte) Status {
		t.Helper()
		o, ok := x.orders[hashOf(id)]
		if !ok {
			t.Fatalf("order %d unknown", id)
		}
		return o.Status
	}
	f := func(id byte, want Status) {
		t.Helper()
		if got := status(id); got != want {
			t.Fatalf("order %d: status %s, want %s", id, got, want)
		}
	}
	for id := byte(1); id <= 7; id++ {
		x.Admitted(meta(id, bookA, alice, uint64(id), int64(id)*10, clob.Buy))
	}
	f(1, StatusPending)
	x.Tick(mkTick(500_000, bookTick{book: bookA, price: "5" + e18[1:], volume: e17, events: []clob.Event{
		ev(clob.EventPlaced, 1), ev(clob.EventPlaced, 2), ev(clob.EventPlaced, 3),
		ev(clob.EventPostOnlyRefused, 4), ev(clob.EventExpire, 5), ev(clob.EventPlaced, 7),
		fillEv(1, e17, "5"+e17[1:], e17, "5"+e17[1:], false),
	}}))
	f(1, StatusActive)
	f(2, StatusActive)
	f(4, StatusPostOnlyRefused)
	f(5, StatusExpired)
	f(6, StatusPending)
	x.Tick(mkTick(1_000_000, bookTick{book: bookA, price: "5" + e18[1:], volume: "9" + e17[1:], events: []clob.Event{
		ev(clob.EventCancel, 2), ev(clob.EventPlaced, 6),
		fillEv(1, "4"+e17[1:], "2"+e18[1:], "5"+e17[1:], "25"+e17[1:], false),
		fillEv(1, "5"+e17[1:], "25"+e17[1:], e18, "5"+e18[1:], true),
		ev(clob.EventExpire, 3), ev(clob.EventMarginCancel, 7), // 7's owner was liquidated
	}}))
	f(1, StatusFilled)
	f(2, StatusCanceled)
	f(3, StatusExpired)
	f(6, StatusActive)
	f(7, StatusMarginCanceled)
	for st, want := range map[Status]byte{StatusMarginCanceled: 7, StatusCanceled: 2, StatusPostOnlyRefused: 4} {
		page := x.Orders(nil, alice, &OrdersQuery{Limit: 50, Status: st})
		if len(page.Orders) != 1 || page.Orders[0].Meta.ID != hashOf(want) {
			t.Fatalf("status filter %s: %d orders, want only order %d", st, len(page.Orders), want)
		}
	}
	// Terminal orders stay terminal whatever comes later.
	x.Tick(mkTick(1_500_000, bookTick{book: bookA, price: "5" + e18[1:], events: []clob.Event{ev(clob.EventCancel, 1)}}))
	f(1, StatusFilled)

	o := x.orders[hashOf(1)]
	if len(o.Fills) != 2 || o.Fills[1].Base != dec("9"+e17[1:]) || o.Fills[1].Quote != dec("45"+e17[1:]) || o.Fills[1].TickUs != 1_000_000 {
		t.Fatalf("fills merged per tick: %+v", o.Fills)
	}
	s, _ := x.Orderbook(bookA, nil, nil, 0)
	if s.BuysCount != 1 {
		t.Fatalf("buys_count %d, want 1 (order 6)", s.BuysCount)
	}
	checkRoundTrip(t, x)
}

func TestOrdersPagination(t *testing.T) {
	x := newTestIndex()
	// 23 orders; several share an admission time, and a batch shares a nonce.
	for i := range 23 {
		book := bookA
		if i%3 == 0 {
			book = bookB
		}
		x.Admitted(meta(byte(100-i), book, alice, uint64(i/2), int64(i/4)*1000, clob.Side(i%2)))
	}
	x.Admitted(meta(200, bookA, bob, 0, 0, clob.Buy)) // another account: never listed
	var eventsA, eventsB []clob.Event
	for i := range 23 {
		switch {
		case i%5 != 0:
		case i%3 == 0:
			eventsB = append(eventsB, ev(clob.EventPlaced, byte(100-i)))
		default:
			eventsA = append(eventsA, ev(clob.EventPlaced, byte(100-i)))
		}
	}
	x.Tick(mkTick(500_000, bookTick{book: bookA, events: eventsA}, bookTick{book: bookB, events: eventsB}))

	f := func(q OrdersQuery, wantCount int) {
		t.Helper()
		var all []*Order
		seen := map[clob.Hash]bool{}
		pages := 0
		for {
			page := x.Orders(nil, alice, &q)
			if q.WithTotal && page.Total != wantCount {
				t.Fatalf("total %d, want %d", page.Total, wantCount)
			}
			if len(page.Orders) > q.Limit {
				t.Fatalf("page of %d orders, limit %d", len(page.Orders), q.Limit)
			}
			for _, o := range page.Orders {
				if seen[o.Meta.ID] {
					t.Fatalf("order %x returned twice", o.Meta.ID)
				}
				seen[o.Meta.ID] = true
				all = append(all, o)
			}
			pages++
			if !page.HasNext {
				break
			}
			q.Cursor, q.HasCursor = page.Next, true
		}
		if len(all) != wantCount {
			t.Fatalf("%d orders over %d pages, want %d", len(all), pages, wantCount)
		}
		for i := 1; i < len(all); i++ {
			if compareOrders(all[i-1], all[i]) <= 0 {
				t.Fatalf("not newest first at %d", i)
			}
		}
		for _, o := range all {
			if o.Meta.Owner != alice || !q.matches(o) {
				t.Fatalf("order %x does not match the query", o.Meta.ID)
			}
		}
	}
	for _, limit := range []int{1, 2, 3, 7, 23, 50} {
		f(OrdersQuery{Limit: limit, WithTotal: true}, 23)
		f(OrdersQuery{Limit: limit, Book: bookB, HasBook: true}, 8)
		f(OrdersQuery{Limit: limit, Status: StatusActive, WithTotal: true}, 5)
		f(OrdersQuery{Limit: limit, Status: StatusPending}, 18)
		f(OrdersQuery{Limit: limit, Status: StatusFilled, WithTotal: true}, 0)
		f(OrdersQuery{Limit: limit, Book: bookA, HasBook: true, Status: StatusActive}, 3)
	}
	// A full last page has no next cursor.
	page := x.Orders(nil, alice, &OrdersQuery{Limit: 23})
	if len(page.Orders) != 23 || page.HasNext {
		t.Fatalf("full page: %d orders, next %v", len(page.Orders), page.HasNext)
	}
	// The limit is clamped.
	if got := len(x.Orders(nil, alice, &OrdersQuery{Limit: 0}).Orders); got != 23 {
		t.Fatalf("default limit gave %d", got)
	}
	checkRoundTrip(t, x)
}

func TestTerminalOrdersPerAccount(t *testing.T) {
	x := newTestIndex()
	// One live order first: it must survive every drop.
	x.Admitted(&OrderMeta{ID: hashOf(0), Book: bookA, Owner: alice})
	x.Tick(mkTick(500_000, bookTick{book: bookA, events: []clob.Event{ev(clob.EventPlaced, 0)}}))
	total := TerminalOrdersPerAccount + 10
	for i := 1; i <= total; i++ {
		var id clob.Hash
		id[0], id[1] = byte(i>>8), byte(i)
		x.Admitted(&OrderMeta{ID: id, Book: bookA, Owner: alice, AdmittedUs: int64(i)})
		res := mkTick(500_000+int64(i)*500_000, bookTick{book: bookA})
		res.Events = []clob.Event{{Kind: clob.EventCancel, OrderID: id}}
		res.Books[0].EndEvent = 1
		x.Tick(res)
	}
	page := x.Orders(nil, alice, &OrdersQuery{Limit: OrdersLimitMax, WithTotal: true})
	if page.Total != TerminalOrdersPerAccount+1 {
		t.Fatalf("kept %d orders, want %d", page.Total, TerminalOrdersPerAccount+1)
	}
	if len(x.orders) != TerminalOrdersPerAccount+1 {
		t.Fatalf("id map holds %d", len(x.orders))
	}
	a := x.accounts[alice]
	if a.orders[0].Meta.ID != hashOf(0) || a.orders[0].Status != StatusActive {
		t.Fatalf("live order dropped")
	}
	if a.orders[1].Meta.AdmittedUs != 11 {
		t.Fatalf("oldest kept terminal order admitted at %d, want 11", a.orders[1].Meta.AdmittedUs)
	}
	checkRoundTrip(t, x)
}

func TestUpdateUsesLiveOrders(t *testing.T) {
	live := fakeLive{hashOf(1): {Price: dec("6" + e18[1:]), ExpiresUs: 9_000_000}}
	x := New(live)
	x.AddMarket(marketA())
	x.Admitted(meta(1, bookA, alice, 1, 10, clob.Buy))
	x.Tick(mkTick(500_000, bookTick{book: bookA, events: []clob.Event{ev(clob.EventPlaced, 1), ev(clob.EventUpdate, 1)}}))
	o := x.orders[hashOf(1)]
	if o.Price != dec("6"+e18[1:]) || o.Meta.Price != dec("5"+e18[1:]) || o.EndUs != 9_000_000 || o.Status != StatusActive {
		t.Fatalf("after update: price %s end %d status %s", o.Price.Dec(), o.EndUs, o.Status)
	}
	checkRoundTrip(t, x)
}

type fakeLive map[clob.Hash]clob.OrderInfo

func (f fakeLive) Order(id clob.Hash) (clob.OrderInfo, bool) {
	o, ok := f[id]
	return o, ok
}

// fakeLive has no markets of its own: perp reads find nothing.
func (fakeLive) Market(clob.Hash) (*clob.MarketConfig, bool) { return nil, false }

func (fakeLive) PerpMarket(clob.Hash) (clob.PerpInfo, bool) { return clob.PerpInfo{}, false }

func (fakeLive) appendDump(dst []clob.PositionInfo, _ clob.Address) []clob.PositionInfo {
	return dst
}

func TestCandles(t *testing.T) {
	x := newTestIndex()
	p := func(n int) string { return fmt.Sprint(n) + e18[1:] }
	// Ticks (seconds → price, volume): no trade at 30 s, nothing between 2 and 59 minutes.
	x.Tick(mkTick(10_000_000, bookTick{book: bookA, price: p(5), volume: e18}))
	x.Tick(mkTick(30_000_000, bookTick{book: bookA, price: p(5)}))
	x.Tick(mkTick(50_000_000, bookTick{book: bookA, price: p(7), volume: e18}))
	x.Tick(mkTick(70_000_000, bookTick{book: bookA, price: p(3), volume: "2" + e18[1:]}))
	x.Tick(mkTick(3_600_000_000, bookTick{book: bookA, price: p(4), volume: e18}))
	f := func(q CandlesQuery, want string) {
		t.Helper()
		cs, ok := x.Candles(nil, bookA, &q)
		if !ok {
			t.Fatalf("unknown book")
		}
		var got string
		for _, c := range cs {
			got += fmt.Sprintf("%d:%s/%s/%s/%s/%s ", c.StartUs/1_000_000, c.Open.Dec()[:1], c.High.Dec()[:1],
				c.Low.Dec()[:1], c.Close.Dec()[:1], c.Volume.Dec()[:1])
		}
		if got != want {
			t.Fatalf("%s from %d to %d limit %d:\ngot  %s\nwant %s", q.Resolution, q.FromUs, q.ToUs, q.Limit, got, want)
		}
	}
	all := CandlesQuery{ToUs: 1 << 62, Limit: CandlesLimitMax}
	q := all
	f(q, "3600:4/4/4/4/1 60:3/3/3/3/2 0:5/7/5/7/2 ")
	q.Resolution = Res5m
	f(q, "3600:4/4/4/4/1 0:5/7/3/3/4 ")
	q.Resolution = Res1h
	f(q, "3600:4/4/4/4/1 0:5/7/3/3/4 ")
	q.Resolution = Res4h
	f(q, "0:5/7/3/4/5 ")
	q.Resolution = Res1d
	f(q, "0:5/7/3/4/5 ")
	q = all
	q.Limit = 2
	f(q, "3600:4/4/4/4/1 60:3/3/3/3/2 ")
	q = all
	q.FromUs, q.ToUs = 60_000_000, 60_000_000 // both ends inclusive
	f(q, "60:3/3/3/3/2 ")
	q.FromUs, q.ToUs = 61_000_000, 3_599_000_000
	f(q, "")

	if _, ok := x.Candles(nil, hashOf(9), &all); ok {
		t.Fatalf("unknown book answered")
	}
	checkRoundTrip(t, x)
}

func TestCandleBucketsMax(t *testing.T) {
	var ring candleRing
	price, volume := dec("1"), dec("1")
	total := CandleBucketsMax + 7
	for i := range total {
		ring.add(minuteUs, int64(i)*minuteUs, &price, &volume)
	}
	if ring.len() != CandleBucketsMax {
		t.Fatalf("ring holds %d", ring.len())
	}
	for i := range ring.len() {
		if want := int64(i+7) * minuteUs; ring.at(i).StartUs != want {
			t.Fatalf("bucket %d starts at %d, want %d", i, ring.at(i).StartUs, want)
		}
	}
}

func TestDeterminism(t *testing.T) {
	run := func() string {
		x := newTestIndex()
		for i := range 40 {
			x.Admitted(meta(byte(i), []clob.Hash{bookA, bookB}[i%2], []clob.Address{alice, bob}[i%3%2], uint64(i), int64(i)*7, clob.Side(i%2)))
		}
		var out []byte
		for tick := int64(1); tick <= 10; tick++ {
			var evs []clob.Event
			for i := range 40 {
				if i%10 == int(tick%10) {
					evs = append(evs, ev(clob.EventPlaced, byte(i)))
				}
			}
			x.Tick(mkTick(tick*500_000, bookTick{book: bookA, price: fmt.Sprint(tick) + e17[1:], volume: e17, events: evs}))
		}
		out = appendDump(out, x.Markets(nil))
		page := x.Orders(nil, alice, &OrdersQuery{Limit: 100, WithTotal: true, WithFills: true})
		out = appendDump(out, &page)
		return string(checkRoundTrip(t, x)) + string(out)
	}
	if a, b := run(), run(); a != b {
		t.Fatalf("two runs differ")
	}
}

// The list filter holds on every page: cursor pagination over one book of
// three (or two of three) lists exactly that book's orders, newest first,
// none twice, as one unpaged query would.
func TestOrdersBooksFilterPaged(t *testing.T) {
	x := newTestIndex()
	bookC := hashOf(4)
	c := marketA()
	c.ID, c.Name = bookC, "WXYZ/USD"
	x.AddMarket(c)
	books := []clob.Hash{bookA, bookB, bookC}
	for i := range 40 {
		x.Admitted(meta(byte(10+i), books[i%3], alice, uint64(i/2), int64(i/3)*1000, clob.Side(i%2)))
	}
	for _, filter := range [][]clob.Hash{{bookA}, {bookB, bookC}, nil} {
		want := x.Orders(nil, alice, &OrdersQuery{Books: filter, Limit: OrdersLimitMax}).Orders
		q := OrdersQuery{Books: filter, Limit: 3, WithTotal: true}
		var got []*Order
		for {
			page := x.Orders(nil, alice, &q)
			if page.Total != len(want) {
				t.Fatalf("filter %x: total %d, want %d", filter, page.Total, len(want))
			}
			got = append(got, page.Orders...)
			if !page.HasNext {
				break
			}
			q.Cursor, q.HasCursor = page.Next, true
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("filter %x: paged %d orders, unpaged %d", filter, len(got), len(want))
		}
		for _, o := range got {
			if len(filter) > 0 && o.Meta.Book != filter[0] && (len(filter) < 2 || o.Meta.Book != filter[1]) {
				t.Fatalf("filter %x lists an order of %x", filter, o.Meta.Book)
			}
		}
		if n := map[int]int{1: 14, 2: 26, 0: 40}[len(filter)]; len(got) != n {
			t.Fatalf("filter %x: %d orders, want %d", filter, len(got), n)
		}
	}
}
