package subs

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/obindex"
)

// countConn accepts everything and keeps nothing, so the benchmark measures
// the hub, not a transport.
type countConn struct{ bytes int }

func (c *countConn) Send(head, body, tail []byte) bool {
	c.bytes += len(head) + len(body) + len(tail)
	return true
}

func (c *countConn) SendClose([]byte) {}

func (c *countConn) RemoteIP() netip.Addr { return netip.Addr{} }

// benchTick is a realistic book tick: 20 levels a side, 8 orders created
// by 8 accounts, a fill of each and 4 cancels.
func benchTick() *Tick {
	b := bookID(1)
	var created []obindex.OrderMeta
	var events []clob.Event
	for i := byte(0); i < 8; i++ {
		m := meta(i, b, addr(i), clob.Side(i%2))
		created = append(created, m)
		events = append(events, clob.Event{Kind: clob.EventPlaced, OrderID: m.ID, Owner: m.Owner})
	}
	for i := byte(0); i < 8; i++ {
		events = append(events, clob.Event{Kind: clob.EventFill, OrderID: orderID(i), Owner: addr(i), Base: w(1), Quote: w(2000),
			TotalBase: w(1), TotalQuote: w(2000), TotalFee: u(2000), Terminal: i < 4})
	}
	for i := byte(4); i < 8; i++ {
		events = append(events, clob.Event{Kind: clob.EventCancel, OrderID: orderID(i), Owner: addr(i), TotalBase: w(1), Terminal: true})
	}
	t := newTick(1000).book(b, true, created, events...).t
	var buys, sells []clob.Level
	for i := uint64(0); i < 20; i++ {
		buys = append(buys, clob.Level{Price: w(1999 - i), Volume: w(i + 1), Orders: 1})
		sells = append(sells, clob.Level{Price: w(2001 + i), Volume: w(i + 1), Orders: 1})
	}
	t.Books[0].Snapshot.Buys, t.Books[0].Snapshot.Sells = buys, sells
	return t
}

func BenchmarkFanOut(b *testing.B) {
	for _, ch := range []string{"svc_orderbook", "svc_orders_v2", "svc_orders_v2/bidder"} {
		for _, n := range []int{1, 100, 1000} {
			b.Run(fmt.Sprintf("%s/%d", ch, n), func(b *testing.B) {
				benchFanOut(b, ch, n)
			})
		}
	}
}

func benchFanOut(b *testing.B, ch string, subsCount int) {
	h := New(Config{})
	typ, params := ch, ``
	if ch == "svc_orders_v2/bidder" {
		typ = "svc_orders_v2"
	}
	conns := make([]*countConn, (subsCount+SubsPerConnMax-1)/SubsPerConnMax)
	for i := range conns {
		conns[i] = &countConn{}
	}
	for i := range subsCount {
		c := conns[i/SubsPerConnMax]
		if ch == "svc_orders_v2/bidder" { // 8 distinct filters, each shared
			params = `{"bidder":"` + hexAddr(addr(byte(i%8))) + `"}`
		}
		id, err := subscribeErr(h, c, typ, params)
		if err != nil {
			b.Fatal(err)
		}
		h.Activate(c, id)
	}
	tmpl := benchTick()
	ticks := make([]Tick, 1024)
	b.ReportAllocs()
	before := h.Stats().Notifications
	us := int64(1000)
	i := 0
	for b.Loop() {
		t := &ticks[i%len(ticks)]
		*t = *tmpl
		us += 500_000
		t.TickUs = us
		h.PublishTick(t)
		h.Pump()
		i++
	}
	sent := h.Stats().Notifications - before
	if sent == 0 {
		b.Fatal("nothing delivered")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(sent), "ns/notification")
	b.ReportMetric(float64(sent)/float64(b.N), "notifications/op")
}

// BenchmarkPublishTick measures the node's side: what PublishTick costs
// under the node's lock, whatever the number of subscribers.
func BenchmarkPublishTick(b *testing.B) {
	h := New(Config{})
	tmpl := benchTick()
	ticks := make([]Tick, 1024)
	b.ReportAllocs()
	us := int64(1000)
	i := 0
	for b.Loop() {
		t := &ticks[i%len(ticks)]
		*t = *tmpl
		us += 500_000
		t.TickUs = us
		h.PublishTick(t)
		i++
		if i%LagTicksMax == 0 {
			h.Pump()
		}
	}
}
