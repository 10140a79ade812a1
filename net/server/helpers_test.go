package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ledgervenue/node/net/http1"
)

// testHandler answers "<METHOD> <path>[?<query>] <body>" as text/plain.
// Special paths:
//
//	/defer        defers and hands the handle to the defers channel
//	/defer-async  defers and completes from a new goroutine at once
//	/teapot       answers 418
//	/big          answers a 100 KiB body
//	/huge         answers a hugeBytes body, more than the socket buffers hold
const hugeBytes = 32 << 20

type testHandler struct {
	defers chan deferred
}

type deferred struct {
	d    *Deferred
	body string
}

func newTestHandler() *testHandler {
	return &testHandler{defers: make(chan deferred, 16)}
}

func (h *testHandler) Serve(req *http1.Request, w *Response) {
	switch string(req.Path) {
	case "/defer":
		h.defers <- deferred{w.Defer(), string(req.Body)}
		return
	case "/defer-async":
		d, body := w.Defer(), "async:"+string(req.Body)
		go d.Complete(200, []byte(body))
		return
	case "/teapot":
		w.Status = 418
	case "/big":
		w.Body = append(w.Body, strings.Repeat("b", 100<<10)...)
		return
	case "/huge":
		w.Body = append(w.Body, strings.Repeat("h", hugeBytes)...)
		return
	}
	w.ContentType = "text/plain"
	w.Body = append(w.Body, req.Method...)
	w.Body = append(w.Body, ' ')
	w.Body = append(w.Body, req.Path...)
	if req.Query != nil {
		w.Body = append(w.Body, '?')
		w.Body = append(w.Body, req.Query...)
	}
	w.Body = append(w.Body, ' ')
	w.Body = append(w.Body, req.Body...)
}

func startServer(t testing.TB, h Handler, cfg Config) *Server {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	s := New(h, cfg)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return s
}

// client is a raw connection with a response reader.
type client struct {
	t    testing.TB
	conn net.Conn
	br   *bufio.Reader
}

func dial(t testing.TB, s *Server) *client {
	t.Helper()
	return dialFrom(t, s, "")
}

// dialFrom connects from the loopback address ip ("" picks one): tests of
// the per-address limit use 127.0.0.2 as a second client address.
func dialFrom(t testing.TB, s *Server, ip string) *client {
	t.Helper()
	var d net.Dialer
	if ip != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(ip)}
	}
	conn, err := d.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	return &client{t: t, conn: conn, br: bufio.NewReader(conn)}
}

func (c *client) send(raw string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, raw); err != nil {
		c.t.Fatal(err)
	}
}

// read reads one response; method is the request's (HEAD has no body).
func (c *client) read(method string) (*http.Response, string) {
	c.t.Helper()
	resp, err := http.ReadResponse(c.br, &http.Request{Method: method})
	if err != nil {
		c.t.Fatalf("reading response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("reading body: %v", err)
	}
	return resp, string(body)
}

// expect reads one response and checks its status and body.
func (c *client) expect(method string, status int, body string) *http.Response {
	c.t.Helper()
	resp, got := c.read(method)
	if resp.StatusCode != status || got != body {
		c.t.Fatalf("got %d %q, want %d %q", resp.StatusCode, got, status, body)
	}
	return resp
}

// expectEOF checks that the server closed the connection.
func (c *client) expectEOF() {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.br.Read(make([]byte, 1))
	if err == nil {
		c.t.Fatalf("read %d more bytes, want EOF", n)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		c.t.Fatal("connection still open")
	}
}

// expectSilence checks that nothing arrives for d.
func (c *client) expectSilence(d time.Duration) {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(d))
	if _, err := c.br.Peek(1); err == nil {
		c.t.Fatal("unexpected bytes from server")
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		c.t.Fatalf("unexpected error %v", err)
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
}

// waitFor polls cond for up to 5 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func get(path string) string { return "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n" }

func post(path, body string) string {
	return "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}
