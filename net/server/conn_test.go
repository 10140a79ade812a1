package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/ledgervenue/node/net/http1"
)

// fakeConn drives the event handler without sockets or loops. Methods the
// server does not use panic through the nil embedded interface.
type fakeConn struct {
	gnet.Conn
	ev     *events
	ctx    any
	in     []byte
	out    []byte
	async  []func()
	closed bool
	// outbound plays gnet's outbound buffer: bytes the socket did not take.
	outbound int
}

func newFakeConn(t testing.TB, h Handler, cfg Config) *fakeConn {
	t.Helper()
	c := &fakeConn{ev: &events{New(h, cfg)}}
	if _, action := c.ev.OnOpen(c); action != gnet.None {
		t.Fatalf("OnOpen action %v", action)
	}
	return c
}

func (c *fakeConn) Next(int) ([]byte, error) {
	b := c.in
	c.in = c.in[:0]
	return b, nil
}

func (c *fakeConn) Write(p []byte) (int, error) {
	c.out = append(c.out, p...)
	return len(p), nil
}

func (c *fakeConn) OutboundBuffered() int     { return c.outbound }
func (c *fakeConn) RemoteAddr() net.Addr      { return fakeRemote }
func (c *fakeConn) Context() any              { return c.ctx }
func (c *fakeConn) SetContext(ctx any)        { c.ctx = ctx }
func (c *fakeConn) EventLoop() gnet.EventLoop { return fakeLoop{c: c} }

// AsyncWrite queues the write; runAsync plays the event loop.
func (c *fakeConn) AsyncWrite(p []byte, cb gnet.AsyncCallback) error {
	c.async = append(c.async, func() {
		var err error
		if c.closed {
			err = io.ErrClosedPipe
		} else {
			c.out = append(c.out, p...)
		}
		_ = cb(c, err)
	})
	return nil
}

func (c *fakeConn) runAsync() {
	for len(c.async) > 0 {
		f := c.async[0]
		c.async = c.async[1:]
		f()
	}
}

// traffic delivers data in one read, closing the connection if asked to.
func (c *fakeConn) traffic(data string) {
	c.in = append(c.in[:0], data...)
	if c.ev.OnTraffic(c) == gnet.Close {
		c.close()
	}
}

func (c *fakeConn) close() {
	if !c.closed {
		c.closed = true
		c.ev.OnClose(c, nil)
	}
}

var fakeRemote = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}

type fakeLoop struct {
	gnet.EventLoop
	c *fakeConn
}

func (l fakeLoop) Close(gnet.Conn) error { l.c.close(); return nil }

// responses parses everything the server wrote.
func (c *fakeConn) responses(t testing.TB) []string {
	t.Helper()
	var out []string
	br := bufio.NewReader(bytes.NewReader(c.out))
	for {
		if _, err := br.Peek(1); err == io.EOF {
			return out
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("bad output %q: %v", c.out, err)
		}
		body, _ := io.ReadAll(resp.Body)
		out = append(out, resp.Status+" "+string(body))
	}
}

// TestTrafficSplit feeds pipelined streams through OnTraffic split at every
// byte offset and expects the same responses as in one read.
func TestTrafficSplit(t *testing.T) {
	streams := []string{
		get("/a") + post("/b", "body") + "GET /c HTTP/1.0\r\n\r\n",
		"POST /e HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc" + get("/f"),
		get("/g") + "OPTIONS / HTTP/1.1\r\n\r\n" + "GET / HTTP/1.1\r\nBad\r\n\r\n" + get("/never"),
	}
	for _, stream := range streams {
		whole := newFakeConn(t, newTestHandler(), Config{})
		whole.traffic(stream)
		want := whole.responses(t)
		for i := range len(stream) + 1 {
			c := newFakeConn(t, newTestHandler(), Config{})
			c.traffic(stream[:i])
			if !c.closed {
				c.traffic(stream[i:])
			}
			// An interim "100 Continue" depends on the split; TestExpectContinue
			// covers it.
			got := slices.DeleteFunc(c.responses(t), func(r string) bool { return strings.HasPrefix(r, "100 ") })
			if strings.Join(got, "|") != strings.Join(want, "|") || c.closed != whole.closed {
				t.Fatalf("%q split at %d:\n got %q closed=%v\nwant %q closed=%v", stream, i, got, c.closed, want, whole.closed)
			}
		}
	}
}

func TestDeferredQueue(t *testing.T) {
	h := newTestHandler()
	c := newFakeConn(t, h, Config{})
	c.traffic(post("/defer", "1") + get("/a"))
	d := <-h.defers
	c.traffic(get("/b") + "GET /c")
	if len(c.out) != 0 {
		t.Fatalf("wrote %q before the deferred response", c.out)
	}
	d.d.Complete(200, []byte("deferred"))
	c.runAsync()
	c.traffic(" HTTP/1.1\r\n\r\n")
	got := strings.Join(c.responses(t), "|")
	if got != "200 OK deferred|200 OK GET /a |200 OK GET /b |200 OK GET /c " {
		t.Fatalf("got %q", got)
	}
}

// TestMaxPendingBytes: a client that keeps sending while a response is
// deferred is cut off at MaxPendingBytes.
func TestMaxPendingBytes(t *testing.T) {
	h := newTestHandler()
	c := newFakeConn(t, h, Config{})
	c.traffic(post("/defer", ""))
	<-h.defers
	chunk := strings.Repeat("x", 64<<10)
	sent := 0
	for !c.closed && sent <= MaxPendingBytes+len(chunk) {
		c.traffic(chunk)
		sent += len(chunk)
	}
	if !c.closed || sent <= MaxPendingBytes {
		t.Fatalf("closed=%v after %d bytes, limit %d", c.closed, sent, MaxPendingBytes)
	}
}

// TestTrafficAllocs locks the synchronous request path to zero allocations:
// parse, handler, response rendering and write.
func TestTrafficAllocs(t *testing.T) {
	c := newFakeConn(t, allocFreeHandler{}, Config{})
	f := func(name, stream string) {
		t.Helper()
		allocs := testing.AllocsPerRun(200, func() {
			c.out = c.out[:0]
			c.traffic(stream)
		})
		if allocs != 0 || c.closed {
			t.Fatalf("%s: %.1f allocations per read, closed=%v", name, allocs, c.closed)
		}
	}
	f("single", post("/rpc", `{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`))
	f("pipelined", strings.Repeat(post("/rpc", `{"id":1}`), 8)+get("/x"))
	f("preflight", "OPTIONS / HTTP/1.1\r\nAccess-Control-Request-Headers: content-type\r\n\r\n")
	// The browser policy: an admitted Origin granted, Host names and IP
	// literals checked, all without allocating.
	f("origin", "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:8545\r\nOrigin: http://localhost:3000\r\nContent-Length: 8\r\n\r\n{\"id\":1}")
	f("ipv6 host", "POST /rpc HTTP/1.1\r\nHost: [::1]:8545\r\nOrigin: https://[::1]\r\nContent-Length: 8\r\n\r\n{\"id\":1}")
	f("origin preflight", "OPTIONS / HTTP/1.1\r\nHost: localhost:8545\r\nOrigin: http://127.0.0.1:5173\r\n\r\n")
	// Each read completes the request left partial by the previous one and
	// leaves another partial one: the copy-and-compact path.
	req := post("/rpc", `{"id":2}`)
	c.traffic(req[:20])
	f("partial", req[20:]+req+req[:20])
}

type allocFreeHandler struct{}

func (allocFreeHandler) Serve(_ *http1.Request, w *Response) {
	w.Body = append(w.Body, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`...)
}

// TestDrainBeforeClose: a response that must be followed by a close, and that
// the socket has not fully taken, closes the connection only once drained.
func TestDrainBeforeClose(t *testing.T) {
	c := newFakeConn(t, newTestHandler(), Config{})
	cs := c.ctx.(*connState)
	c.outbound = 1
	c.traffic("GET /last HTTP/1.0\r\n\r\n" + get("/ignored"))
	if c.closed || !cs.draining.Load() {
		t.Fatalf("closed=%v draining=%v, want draining", c.closed, cs.draining.Load())
	}
	c.traffic(get("/ignored"))
	if got := c.responses(t); len(got) != 1 {
		t.Fatalf("responses %q", got)
	}
	_ = cs.Run(context.Background())
	if c.closed {
		t.Fatal("closed before the outbound buffer drained")
	}
	c.outbound = 0
	_ = cs.Run(context.Background())
	if !c.closed {
		t.Fatal("not closed after draining")
	}
}

// TestBuffersReleased: buffers that grew past bufRetainMax for one large
// request are dropped once empty.
func TestBuffersReleased(t *testing.T) {
	c := newFakeConn(t, newTestHandler(), Config{})
	body := strings.Repeat("x", 2*bufRetainMax)
	req := post("/echo", body)
	c.traffic(req[:100])
	c.traffic(req[100:])
	if got := c.responses(t); len(got) != 1 || got[0] != "200 OK POST /echo "+body {
		t.Fatalf("got %d responses", len(got))
	}
	cs := c.ctx.(*connState)
	if cs.in != nil || cs.out != nil || cs.resp.Body != nil {
		t.Fatalf("retained in=%d out=%d body=%d bytes", cap(cs.in), cap(cs.out), cap(cs.resp.Body))
	}
	// Small buffers stay for reuse.
	c.traffic(get("/small")[:10])
	c.traffic(get("/small")[10:])
	if cs.out == nil || cs.resp.Body == nil {
		t.Fatal("small buffers were released")
	}
}

func TestConfigDefaults(t *testing.T) {
	s := New(newTestHandler(), Config{})
	if s.cfg.MaxConns != DefaultMaxConns || s.cfg.IdleTimeout != DefaultIdleTimeout || s.tick != tickMax ||
		s.cfg.MaxConnsPerIP != DefaultMaxConnsPerIP || s.cfg.HeaderTimeout != DefaultHeaderTimeout ||
		s.cfg.BodyTimeout != DefaultBodyTimeout || s.cfg.OutboundMax != DefaultOutboundMax {
		t.Fatalf("defaults: %+v tick %v", s.cfg, s.tick)
	}
	s = New(newTestHandler(), Config{HeaderTimeout: 40 * time.Millisecond, BodyTimeout: -1})
	if s.tick != 10*time.Millisecond || s.cfg.BodyTimeout != -1 {
		t.Fatalf("tick %v for a 40 ms header timeout, want 10ms; body timeout %v", s.tick, s.cfg.BodyTimeout)
	}
	s = New(newTestHandler(), Config{IdleTimeout: time.Millisecond})
	if s.tick != tickMin {
		t.Fatalf("tick %v for a 1 ms idle timeout, want %v", s.tick, tickMin)
	}
}
