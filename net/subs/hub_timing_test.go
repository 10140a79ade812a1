package subs

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
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
func benchTick() *tickrec.Tick {
	b := bookID(1)
	var created []marketdata.OrderMeta
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
	ticks := make([]tickrec.Tick, 1024)
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
	ticks := make([]tickrec.Tick, 1024)
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

// slowConn takes delay to accept each notification, like a connection
// whose sends are slow on a busy machine.
type slowConn struct {
	fakeConn
	mu    sync.Mutex
	delay time.Duration
}

func (c *slowConn) Send(head, body, tail []byte) bool {
	time.Sleep(c.delay)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fakeConn.Send(head, body, tail)
}

// TestLoopWaitsOneTickAtMost: the event loops' calls into the hub (here
// DropConn) wait for one tick's fan-out at most, not for a fan-out that
// keeps finding new ticks. The publisher here is a little faster than the
// fan-out, so the fan-out never runs out of ticks; when it held the lock
// until it did, a loop closing a connection waited seconds, and every
// connection on that loop went unread meanwhile.
func TestLoopWaitsOneTickAtMost(t *testing.T) {
	const fanOut = 10 * time.Millisecond
	h := New(Config{})
	h.Start()
	defer h.Close()
	slow := &slowConn{delay: fanOut}
	id, err := subscribeErr(h, slow, "svc_orderbook", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	h.Activate(slow, id)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := int64(1); ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(fanOut * 8 / 10):
			}
			h.PublishTick(newTick(i*1000).book(bookID(1), true, nil).t)
		}
	}()
	time.Sleep(20 * fanOut) // the fan-out is busy and behind
	var worst time.Duration
	for range 20 {
		c := &fakeConn{}
		start := time.Now()
		h.DropConn(c)
		worst = max(worst, time.Since(start))
		time.Sleep(fanOut * 5)
	}
	if worst > 20*fanOut {
		t.Fatalf("DropConn waited %v behind the fan-out; one tick's fan-out takes %v", worst, fanOut)
	}
	t.Logf("DropConn waited %v at most; one tick's fan-out takes %v", worst, fanOut)
}
