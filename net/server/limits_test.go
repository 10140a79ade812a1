package server

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// trickle sends raw one byte every gap from a goroutine, until it is sent
// or the connection fails; it returns a channel closed when it stops.
func trickle(c *client, raw string, gap time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range len(raw) {
			if _, err := c.conn.Write([]byte{raw[i]}); err != nil {
				return
			}
			time.Sleep(gap)
		}
	}()
	return done
}

// expect408 reads the 408 that ends a slow request and checks it came about
// after timeout, counted from start, and that the connection is closed.
func expect408(t *testing.T, c *client, start time.Time, timeout time.Duration, reason string) {
	t.Helper()
	c.expect("GET", 408, `{"error":"`+reason+`"}`)
	// The deadline is counted on the coarse clock: up to a tick early.
	if took := time.Since(start); took < timeout/2 || took > timeout+time.Second {
		t.Fatalf("408 after %v, want about %v", took, timeout)
	}
	c.expectEOF()
}

// TestSlowRequest: a request's head and body have deadlines counted from its
// first byte, which trickling bytes do not extend; idle keep-alive
// connections keep the idle timeout.
func TestSlowRequest(t *testing.T) {
	const head, body = 300 * time.Millisecond, 600 * time.Millisecond
	h := newWSHandler()
	s := startServer(t, h, Config{HeaderTimeout: head, BodyTimeout: body})
	const gap = 20 * time.Millisecond // well inside the idle timeout and the tick

	// A head that never ends, after a request served on the same connection.
	c := dial(t, s)
	c.send(get("/first"))
	c.expect("GET", 200, "GET /first ")
	start := time.Now()
	stop := trickle(c, "GET /slow HTTP/1.1\r\nX-Pad: "+strings.Repeat("a", 200), gap)
	expect408(t, c, start, head, "request head not received within 300ms")
	<-stop

	// A body that trickles: the body deadline counts from the first byte.
	c = dial(t, s)
	start = time.Now()
	c.send("POST /slow HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n")
	stop = trickle(c, strings.Repeat("b", 1000), gap)
	expect408(t, c, start, body, "request body not received within 600ms")
	<-stop

	// The upgrade request is a request like any other.
	c = dial(t, s)
	start = time.Now()
	stop = trickle(c, "GET /ws HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", gap)
	expect408(t, c, start, head, "request head not received within 300ms")
	<-stop

	// An idle keep-alive connection is not a slow request.
	c = dial(t, s)
	c.send(get("/a"))
	c.expect("GET", 200, "GET /a ")
	c.expectSilence(2 * body)
	c.send(get("/b"))
	c.expect("GET", 200, "GET /b ")

	// A partial request queued behind a deferred response waits without a
	// deadline (it is the server's turn); its own starts after the answer.
	c.send(post("/defer", "d") + "GET /queued HTTP/1.1\r\n")
	d := <-h.defers
	c.expectSilence(2 * body)
	d.d.Complete(200, []byte("done"))
	c.expect("POST", 200, "done")
	c.send("Host: localhost\r\n\r\n")
	c.expect("GET", 200, "GET /queued ")

	// A request that arrives in pieces within the deadline is served: eight
	// pieces (timer sleeps stretch on a loaded machine: 66 one-byte pieces
	// once overran the deadline). One that could not be sent within three
	// quarters of it is sent again on a new connection.
	req := post("/pieces", "12345")
	const pieces = 8
	step := (len(req) + pieces - 1) / pieces
	for try := 1; ; try++ {
		start, sent := time.Now(), true
		for i := 0; i < len(req); i += step {
			if time.Since(start) > head*3/4 {
				sent = false
				break
			}
			c.send(req[i:min(i+step, len(req))])
			time.Sleep(head / (4 * pieces))
		}
		if sent {
			break
		}
		if try == 3 {
			t.Fatalf("could not send a request in %d pieces within %v in %d tries", pieces, head*3/4, try)
		}
		c = dial(t, s)
	}
	c.expect("POST", 200, "POST /pieces 12345")
}

// smallReadBuffer dials with a small receive buffer, set before the SYN, so
// that a client that does not read leaves its answers with the server.
func smallReadBuffer(t *testing.T, s *Server) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10)
		}); err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// heapPeak samples the live heap (as of the last collection) until stop is
// closed and returns the growth of its peak over the live heap at the
// start. Live, not in use: a box short of CPU delays the collector, and
// the garbage of the answers already written (hundreds of MB for these
// attacks) then shows in HeapInuse though nothing holds it.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	live := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := live()
	peak := base
	go func() {
		for {
			select {
			case <-stop:
				runtime.GC() // what the attack left held
				out <- max(peak, live()) - base
				return
			case <-time.After(10 * time.Millisecond):
			}
			peak = max(peak, live())
		}
	}()
	return out
}

// TestOutboundMaxHTTP: a client that pipelines thousands of requests and
// never reads is closed once its unread answers pass OutboundMax; the
// server's memory for it stays bounded and others are served meanwhile.
func TestOutboundMaxHTTP(t *testing.T) {
	const outboundMax = 1 << 20
	s := startServer(t, newTestHandler(), Config{OutboundMax: outboundMax})
	bad := smallReadBuffer(t, s)
	// 2 000 answers of 100 KiB: 200 MB if they were all queued.
	notReading(t, s, func() { _, _ = io.WriteString(bad, strings.Repeat(get("/big"), 2000)) },
		func() bool { return s.open.Load() == 1 })
}

// TestOutboundTotalMax: clients that do not read are closed once the
// node's outbound budget is spent, each well below its own bound, and the
// budget's count falls back to zero once they are gone.
func TestOutboundTotalMax(t *testing.T) {
	s := startServer(t, newTestHandler(), Config{OutboundMax: 64 << 20, OutboundTotalMax: 2 << 20})
	bad := []net.Conn{smallReadBuffer(t, s), smallReadBuffer(t, s), smallReadBuffer(t, s)}
	// Each asks for 200 MB of answers; without the budget each would hold
	// 64 MiB before its own bound closed it.
	notReading(t, s, func() {
		for _, c := range bad {
			go func() { _, _ = io.WriteString(c, strings.Repeat(get("/big"), 2000)) }()
		}
	}, func() bool { return s.open.Load() == 1 })
	deadline := time.Now().Add(2 * time.Second)
	for s.outbound.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still counted as queued with only a reading client left", s.outbound.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOutboundSilentClient: a client whose queue is past the bounds and
// that sends nothing more (so no request of its own is refused) is closed
// by the ticker's recount, not kept until the idle timeout; one within
// the bounds is not.
func TestOutboundSilentClient(t *testing.T) {
	const outboundMax = 1000
	c := newFakeConn(t, newTestHandler(), Config{OutboundMax: outboundMax, OutboundTotalMax: 4 * outboundMax})
	cs := c.ctx.(*connState)
	recount := func(queued int) {
		t.Helper()
		c.outbound = queued
		if err := (*recountTask)(cs).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := cs.counted.Load(); !c.closed && got != int64(queued) {
			t.Fatalf("%d bytes queued, %d counted", queued, got)
		}
	}
	recount(outboundMax)
	if c.closed {
		t.Fatal("closed at the bound")
	}
	recount(outboundMax + 1)
	if !c.closed {
		t.Fatal("a silent client past the bound was not closed")
	}
	// Lagging while the node is over its budget: another connection holds
	// the rest of it.
	c = newFakeConn(t, newTestHandler(), Config{OutboundMax: 1 << 20, OutboundTotalMax: 1 << 20})
	cs = c.ctx.(*connState)
	cs.srv.outbound.Store(1<<20 - laggingBytes)
	recount(laggingBytes)
	if c.closed {
		t.Fatal("closed within the budget")
	}
	recount(laggingBytes + 1)
	if !c.closed {
		t.Fatal("a silent lagging client over the budget was not closed")
	}
}

// TestDeferredAnswerCounted: a deferred answer that the socket did not take
// counts in the node's outbound budget once it is written, like one
// written during a read.
func TestDeferredAnswerCounted(t *testing.T) {
	h := newTestHandler()
	c := newFakeConn(t, h, Config{})
	cs := c.ctx.(*connState)
	c.traffic(get("/defer"))
	d := <-h.defers
	c.outbound = 5000 // what the socket did not take of the answer
	d.d.Complete(200, []byte("late"))
	c.runAsync()
	if got := cs.srv.outbound.Load(); got != 5000 || cs.counted.Load() != 5000 {
		t.Fatalf("%d bytes counted in the budget, %d for the connection; want 5000", got, cs.counted.Load())
	}
}

// notReading runs attack, a client that does not read, next to a
// well-behaved client on s until gone reports the attacker closed; the heap
// must not grow by more than 32 MiB meanwhile.
func notReading(t *testing.T, s *Server, attack func(), gone func() bool) {
	t.Helper()
	good := dial(t, s)
	stop := make(chan struct{})
	peak := heapPeak(stop)
	go attack()
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; !gone() || i < 20; i++ {
		good.send(get("/good"))
		good.expect("GET", 200, "GET /good ")
		if time.Now().After(deadline) {
			t.Fatal("the client that does not read is still connected")
		}
	}
	close(stop)
	if grew := <-peak; grew > 32<<20 {
		t.Fatalf("the heap grew by %d MiB for a client that does not read", grew>>20)
	}
}

// TestOutboundMaxFake pins where the bound applies: a request is served
// while at most OutboundMax waits for the socket, and closes the connection
// at once, unanswered, past it.
func TestOutboundMaxFake(t *testing.T) {
	c := newFakeConn(t, newTestHandler(), Config{OutboundMax: 1000})
	c.outbound = 1000
	c.traffic(get("/at"))
	if c.closed || len(c.responses(t)) != 1 {
		t.Fatalf("at the bound: closed=%v, %q", c.closed, c.out)
	}
	c.out = c.out[:0]
	c.outbound = 1001
	c.traffic(get("/over"))
	if !c.closed || len(c.out) != 0 {
		t.Fatalf("past the bound: closed=%v, wrote %q", c.closed, c.out)
	}
	// The staged output of one read counts too: 20 pipelined 100 KiB
	// answers against a 1 MiB bound.
	c = newFakeConn(t, newTestHandler(), Config{OutboundMax: 1 << 20})
	c.traffic(strings.Repeat(get("/big"), 20))
	if !c.closed {
		t.Fatal("20 pipelined answers of 100 KiB passed a 1 MiB bound")
	}
}

// TestOutboundMaxWS: a WebSocket client that keeps sending and never reads
// is closed once its unread replies pass OutboundMax.
func TestOutboundMaxWS(t *testing.T) {
	const outboundMax = 1 << 20
	h := newWSHandler()
	s := startServer(t, h, Config{OutboundMax: outboundMax})
	conn := smallReadBuffer(t, s)
	upgradeRaw(t, conn, "")
	msg := frame(true, 0x1, bytes.Repeat([]byte("m"), 32<<10))
	notReading(t, s, func() {
		for range 2000 { // 64 MB of echoes
			if _, err := conn.Write(msg); err != nil {
				return
			}
		}
	}, func() bool { return h.closed.Load() == 1 })
}

// upgradeRaw sends an upgrade request with extra header lines on conn and
// checks the 101, leaving the connection in WebSocket mode.
func upgradeRaw(t *testing.T, conn net.Conn, extra string) {
	t.Helper()
	_, _ = io.WriteString(conn, "GET /ws HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"+extra+"\r\n")
	// Read the response head byte by byte: nothing after it is consumed.
	var head []byte
	one := make([]byte, 1)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for !bytes.HasSuffix(head, []byte("\r\n\r\n")) {
		if _, err := conn.Read(one); err != nil {
			t.Fatalf("upgrade: %v after %q", err, head)
		}
		head = append(head, one[0])
	}
	if !bytes.HasPrefix(head, []byte("HTTP/1.1 101 ")) {
		t.Fatalf("upgrade refused: %q", head)
	}
}

// owingHandler answers "owe N SIZE" by first filling the connection's
// backlog with Send until it refuses, then owing N answers of SIZE bytes
// with SendOwed from another goroutine.
type owingHandler struct {
	*wsHandler
	owed chan [2]int // answers queued, and the index of the first refused (-1: none)
}

func (h *owingHandler) ServeWS(c *WSConn, msg []byte) {
	f := strings.Fields(string(msg))
	if len(f) != 3 || f[0] != "owe" {
		h.wsHandler.ServeWS(c, msg)
		return
	}
	n, _ := strconv.Atoi(f[1])
	size, _ := strconv.Atoi(f[2])
	go func() {
		filler := bytes.Repeat([]byte("n"), 16<<10)
		for c.Send(filler) { // fill the backlog up to OutboundMax
		}
		queued, refused := 0, -1
		for i := range n {
			if !c.SendOwed(bytes.Repeat([]byte("o"), size)) {
				refused = i
				break
			}
			queued++
		}
		h.owed <- [2]int{queued, refused}
	}()
}

// TestSendOwed: answers owed to a client go past OutboundMax, by at most as
// much again; beyond that the client is not reading and is closed.
func TestSendOwed(t *testing.T) {
	const outboundMax = 256 << 10
	h := &owingHandler{wsHandler: newWSHandler(), owed: make(chan [2]int, 1)}
	s := startServer(t, h, Config{OutboundMax: outboundMax})
	conn := smallReadBuffer(t, s)
	upgradeRaw(t, conn, "")
	const n, size = 2000, 8 << 10 // 16 MB owed, far past the headroom
	_, _ = conn.Write(frame(true, 0x1, []byte("owe "+strconv.Itoa(n)+" "+strconv.Itoa(size))))
	var got [2]int
	select {
	case got = <-h.owed:
	case <-time.After(20 * time.Second):
		t.Fatal("SendOwed blocked on a client that does not read")
	}
	queued, refused := got[0], got[1]
	// The socket buffers take some; the rest stays within the headroom.
	if queued == 0 || refused < 0 || queued*size > outboundMax+(4<<20) {
		t.Fatalf("%d owed answers queued (%d KiB), first refusal at %d", queued, queued*size>>10, refused)
	}
	waitFor(t, "the connection to close", func() bool { return h.closed.Load() == 1 })
}

// TestMaxConnsPerIP: one address cannot take more than MaxConnsPerIP
// connections; another address is unaffected, and a slot frees on close.
func TestMaxConnsPerIP(t *testing.T) {
	s := startServer(t, newTestHandler(), Config{MaxConnsPerIP: 2})
	a, b := dial(t, s), dial(t, s)
	for _, c := range []*client{a, b} {
		c.send(get("/in"))
		c.expect("GET", 200, "GET /in ")
	}
	over := dialFrom(t, s, "127.0.0.1")
	over.expect("GET", 503, `{"error":"too many connections from this address (2)"}`)
	over.expectEOF()
	other := dialFrom(t, s, "127.0.0.2")
	other.send(get("/other"))
	other.expect("GET", 200, "GET /other ")
	a.conn.Close()
	waitFor(t, "a slot to free", func() bool { return s.open.Load() == 2 })
	c := dialFrom(t, s, "127.0.0.1")
	c.send(get("/again"))
	c.expect("GET", 200, "GET /again ")
}

// TestDeferredOneAtATime: one request per HTTP connection is in flight; the
// ones pipelined behind a deferred response are not served before it is
// written.
func TestDeferredOneAtATime(t *testing.T) {
	h := newTestHandler()
	c := newFakeConn(t, h, Config{})
	c.traffic(post("/defer", "1") + post("/defer", "2") + get("/x") + post("/defer", "3"))
	for i, want := range []string{"1", "2", "3"} {
		d := <-h.defers
		if d.body != want || len(h.defers) != 0 {
			t.Fatalf("step %d: deferred %q with %d more in flight", i, d.body, len(h.defers))
		}
		d.d.Complete(200, []byte("d"+want))
		c.runAsync()
	}
	if got := strings.Join(c.responses(t), "|"); got != "200 OK d1|200 OK d2|200 OK GET /x |200 OK d3" {
		t.Fatalf("got %q", got)
	}
}

// TestOriginPolicy: requests without Origin are served without CORS
// headers; local origins are granted by name; others, and Host names that
// are neither listed nor IP literals, get 403.
func TestOriginPolicy(t *testing.T) {
	type check struct {
		headers string // extra header lines
		status  int
		grant   string // Access-Control-Allow-Origin
	}
	run := func(s *Server, method string, checks []check) {
		t.Helper()
		for _, ch := range checks {
			c := dial(t, s)
			raw := method + " /p HTTP/1.1\r\n" + ch.headers + "\r\n"
			if method == "POST" {
				raw = "POST /p HTTP/1.1\r\nContent-Length: 0\r\n" + ch.headers + "\r\n"
			}
			c.send(raw)
			resp, body := c.read(method)
			grant := resp.Header.Get("Access-Control-Allow-Origin")
			if resp.StatusCode != ch.status || grant != ch.grant || (grant != "") != (resp.Header.Get("Vary") == "Origin") {
				t.Fatalf("%s %q: %d %q grant %q vary %q, want %d grant %q",
					method, ch.headers, resp.StatusCode, body, grant, resp.Header.Get("Vary"), ch.status, ch.grant)
			}
			if ch.status == 403 {
				if !strings.HasPrefix(body, `{"error":"`) || !resp.Close {
					t.Fatalf("%q: refusal %q close=%v", ch.headers, body, resp.Close)
				}
				c.expectEOF()
			}
		}
	}
	s := startServer(t, newWSHandler(), Config{})
	run(s, "POST", []check{
		{"", 200, ""},
		{"Host: localhost:8545\r\n", 200, ""},
		{"Host: LocalHost\r\n", 200, ""},
		{"Host: 127.0.0.1:8545\r\n", 200, ""},
		{"Host: [::1]:8545\r\n", 200, ""},
		{"Host: 10.1.2.3\r\n", 200, ""},
		{"Host: evil.example\r\n", 403, ""},
		{"Host: localhost.evil.example:8545\r\n", 403, ""},
		{"Host: 127.0.0.1.evil.example\r\n", 403, ""},
		{"Origin: http://localhost:3000\r\n", 200, "http://localhost:3000"},
		{"Origin: https://127.0.0.1\r\n", 200, "https://127.0.0.1"},
		{"Origin: http://[::1]:8080\r\n", 200, "http://[::1]:8080"},
		{"Origin: chrome-extension://localhost\r\n", 200, "chrome-extension://localhost"},
		{"Origin: https://evil.example\r\n", 403, ""},
		{"Origin: http://localhost.evil.example\r\n", 403, ""},
		{"Origin: null\r\n", 403, ""},
		{"Origin: http://localhost:3000/path\r\n", 403, ""},
		{"Origin: http://localhost@evil.example\r\n", 403, ""},
		{"Origin:\r\n", 403, ""},
	})
	run(s, "OPTIONS", []check{
		{"Origin: http://localhost:3000\r\n", 204, "http://localhost:3000"},
		{"Origin: https://evil.example\r\n", 403, ""},
		{"Host: evil.example\r\n", 403, ""},
	})
	c := dial(t, s)
	c.send("POST / HTTP/1.1\r\nContent-Length: 0\r\nHost: evil.example\r\n\r\n")
	c.expect("POST", 403, `{"error":"invalid host specified"}`)
	c = dial(t, s)
	c.send("POST / HTTP/1.1\r\nContent-Length: 0\r\nOrigin: https://evil.example\r\n\r\n")
	c.expect("POST", 403, `{"error":"origin not allowed (--http.corsdomain)"}`)
	// A deferred answer carries the grant too.
	c = dial(t, s)
	c.send("POST /defer-async HTTP/1.1\r\nContent-Length: 1\r\nOrigin: http://localhost:3000\r\n\r\nx")
	if resp := c.expect("POST", 200, "async:x"); resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
		t.Fatalf("deferred answer without the grant: %v", resp.Header)
	}

	// Lists replace the defaults; "*" admits anything.
	s = startServer(t, newTestHandler(), Config{CORSDomains: []string{"https://app.example", "wallet.example:8443"},
		VHosts: []string{"node.lan"}})
	run(s, "POST", []check{
		{"Origin: https://app.example\r\n", 200, "https://app.example"},
		{"Origin: https://APP.example:9000\r\n", 200, "https://APP.example:9000"},
		{"Origin: http://app.example\r\n", 403, ""},
		{"Origin: http://wallet.example:8443\r\n", 200, "http://wallet.example:8443"},
		{"Origin: http://wallet.example:8444\r\n", 403, ""},
		{"Origin: http://localhost:3000\r\n", 403, ""},
		{"Host: node.lan:8545\r\n", 200, ""},
		{"Host: localhost\r\n", 403, ""},
		{"Host: 127.0.0.1\r\n", 200, ""},
	})
	s = startServer(t, newTestHandler(), Config{CORSDomains: []string{"*"}, VHosts: []string{"*"}})
	run(s, "POST", []check{
		{"Origin: https://anything.example\r\n", 200, "https://anything.example"},
		{"Host: anything.example\r\n", 200, ""},
	})
	s = startServer(t, newTestHandler(), Config{CORSDomains: []string{}})
	run(s, "POST", []check{
		{"Origin: http://localhost\r\n", 403, ""},
		{"", 200, ""},
	})

	bad := New(newTestHandler(), Config{Addr: "127.0.0.1:0", WSOrigins: []string{"http://"}})
	if err := bad.Start(); err == nil || !strings.Contains(err.Error(), "--ws.origins") {
		t.Fatalf("Start with an invalid origin: %v", err)
	}
}

// TestWebSocketOrigins: an upgrade is checked against --ws.origins (default:
// local pages and clients without Origin), not against the Host names.
func TestWebSocketOrigins(t *testing.T) {
	s := startServer(t, newWSHandler(), Config{})
	for _, ok := range []string{"", "http://localhost:3000", "https://127.0.0.1", "http://[::1]:5173"} {
		if status, body := upgradeWith(t, s, ok, ""); status != 101 {
			t.Fatalf("origin %q: %d %s", ok, status, body)
		}
	}
	for _, refused := range []string{"https://evil.example", "null"} {
		status, body := upgradeWith(t, s, refused, "")
		if status != 403 || body != `{"error":"origin not allowed (--ws.origins)"}` {
			t.Fatalf("origin %q: %d %s", refused, status, body)
		}
	}
	// Host names are HTTP's (go-ethereum checks no vhosts on upgrades).
	if status, body := upgradeWith(t, s, "", "node.lan:8545"); status != 101 {
		t.Fatalf("upgrade with a host name: %d %s", status, body)
	}
	// The HTTP origin list does not admit WebSocket pages, nor the reverse.
	s = startServer(t, newWSHandler(), Config{WSOrigins: []string{"https://app.example"}, CORSDomains: []string{"https://web.example"}})
	if status, body := upgradeWith(t, s, "https://app.example", ""); status != 101 {
		t.Fatalf("listed origin: %d %s", status, body)
	}
	if status, _ := upgradeWith(t, s, "https://web.example", ""); status != 403 {
		t.Fatalf("an HTTP origin upgraded: %d", status)
	}
}

// TestWebSocketSizeLimits: frames and messages over net/ws's limits, also
// once inflated, are closed with 1009 and a reason naming the limit.
func TestWebSocketSizeLimits(t *testing.T) {
	s := startServer(t, newWSHandler(), Config{})
	f := func(name, extra string, stream []byte, reason string) {
		t.Helper()
		conn, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		upgradeRaw(t, conn, extra)
		go func() { _, _ = conn.Write(stream) }()
		w := &rawWS{t: t, conn: conn, br: bufio.NewReader(conn)}
		op, p := w.readFrame()
		if op != 8 || len(p) < 2 || binary.BigEndian.Uint16(p) != 1009 || string(p[2:]) != reason {
			t.Fatalf("%s: frame %x %q, want close 1009 %q", name, op, p, reason)
		}
	}
	half := bytes.Repeat([]byte("h"), 512<<10)
	f("frame", "", frame(true, 0x2, make([]byte, 1<<20+1)), "frame too large (max 1048576 bytes)")
	f("fragments", "", append(append(frame(false, 0x2, half), frame(false, 0x0, half)...), frame(true, 0x0, []byte("x"))...),
		"message too large (max 1048576 bytes)")
	var zipped bytes.Buffer
	fw, _ := flate.NewWriter(&zipped, flate.BestCompression)
	_, _ = fw.Write(make([]byte, 2<<20))
	_ = fw.Flush()
	bomb := bytes.TrimSuffix(zipped.Bytes(), []byte{0, 0, 0xff, 0xff})
	f("inflated", "Sec-WebSocket-Extensions: permessage-deflate\r\n", frame(true, 0x42, bomb), "message too large (max 1048576 bytes)")
}

// TestIPLiteral: the allocation-free check accepts what netip does.
func TestIPLiteral(t *testing.T) {
	for _, in := range ipSeeds {
		if got, want := isIPLiteral([]byte(in)), netipLiteral(in); got != want {
			t.Errorf("isIPLiteral(%q) = %v, want %v", in, got, want)
		}
	}
}

func FuzzIPLiteral(f *testing.F) {
	for _, in := range ipSeeds {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if got, want := isIPLiteral([]byte(in)), netipLiteral(in); got != want {
			t.Fatalf("isIPLiteral(%q) = %v, want %v", in, got, want)
		}
	})
}

var ipSeeds = []string{"127.0.0.1", "0.0.0.0", "255.255.255.255", "256.1.1.1", "01.2.3.4", "1.2.3", "1.2.3.4.",
	"1.2.3.4.5", "1..2.3", "a.b.c.d", "localhost", "", "[", "[]", "[::]", "[::1]", "::1", "[1::]", "[1:2:3:4:5:6:7:8]",
	"[1:2:3:4:5:6:7::]", "[1:2:3:4:5:6:7:8::]", "[::1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7]", "[:1]", "[1:]", "[1:::2]",
	"[::ffff:1.2.3.4]", "[1:2:3:4:5:6:1.2.3.4]", "[1:2:3:4:5:6:7:1.2.3.4]", "[::1.2.3.4]", "[1.2.3.4]", "[fe80::1%eth0]",
	"[12345::]", "[abcd:EF01::]", "[g::]", "[::1]x", "[1::2::3]", "[0:0:0:0:0:0:0:0]"}

// netipLiteral is the reference: a dotted quad, or a bracketed IPv6
// address without zone.
func netipLiteral(in string) bool {
	if n := len(in); n > 2 && in[0] == '[' && in[n-1] == ']' {
		a, err := netip.ParseAddr(in[1 : n-1])
		return err == nil && a.Is6() && a.Zone() == ""
	}
	a, err := netip.ParseAddr(in)
	return err == nil && a.Is4()
}
