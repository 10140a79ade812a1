package server

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ledgervenue/node/net/http1"
)

// wsHandler echoes text messages; "push N SIZE" makes a goroutine Send N
// messages of SIZE bytes and records how many the backlog refused.
type wsHandler struct {
	*testHandler
	opened, closed atomic.Int32
	refused        atomic.Int32
	pushed         chan int // sends that went through, once a push ends
}

func newWSHandler() *wsHandler {
	return &wsHandler{testHandler: newTestHandler(), pushed: make(chan int, 1)}
}

func (h *wsHandler) WSOpen(c *WSConn, req *http1.Request) {
	h.opened.Add(1)
	c.Context = string(req.Header("Authorization"))
}

func (h *wsHandler) WSClosed(*WSConn) { h.closed.Add(1) }

func (h *wsHandler) ServeWS(c *WSConn, msg []byte) {
	var n, size int
	if f := strings.Fields(string(msg)); len(f) == 3 && f[0] == "push" {
		n, _ = strconv.Atoi(f[1])
		size, _ = strconv.Atoi(f[2])
		go func() {
			payload := []byte(strings.Repeat("p", size))
			sent := 0
			for range n {
				if c.Send(payload) {
					sent++
				} else {
					h.refused.Add(1)
				}
			}
			h.pushed <- sent
		}()
		return
	}
	if string(msg) == "shared" { // head, the one shared body, tail
		c.Send([]byte(`{"head":"`+c.Context.(string)+`","body":`), sharedBody, []byte("}"))
		return
	}
	c.Reply(append([]byte("echo:"+c.Context.(string)+":"), msg...))
}

var sharedBody = []byte(`[` + strings.Repeat(`{"price":"0x1234","volume":"0x5678"},`, 200) + `{}]`)

// TestWebSocketSharedCompression: connections with permessage-deflate get a
// notification body compressed once for all of them, framed around each
// one's own head and tail, and every client inflates it correctly.
func TestWebSocketSharedCompression(t *testing.T) {
	s := startServer(t, newWSHandler(), Config{})
	before := s.shared.misses.Load()
	for i := range 3 {
		d := websocket.Dialer{EnableCompression: true}
		auth := "conn" + strconv.Itoa(i)
		conn, _, err := d.Dial(wsURL(s), http.Header{"Authorization": {auth}})
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.WriteMessage(websocket.TextMessage, []byte("shared")); err != nil {
			t.Fatal(err)
		}
		_, got, err := conn.ReadMessage()
		want := `{"head":"` + auth + `","body":` + string(sharedBody) + "}"
		if err != nil || string(got) != want {
			t.Fatalf("connection %d: %v, got %.60q", i, err, got)
		}
		conn.Close()
	}
	if n := s.shared.misses.Load() - before; n != 1 {
		t.Fatalf("the shared body was compressed %d times for 3 connections", n)
	}
}

func wsURL(s *Server) string { return "ws://" + s.Addr() + "/ws" }

// TestWebSocketEchoGorilla: a real client (gorilla), with and without
// permessage-deflate, talks to the server on the same port as HTTP.
func TestWebSocketEchoGorilla(t *testing.T) {
	h := newWSHandler()
	s := startServer(t, h, Config{})
	for _, compress := range []bool{false, true} {
		d := websocket.Dialer{EnableCompression: compress}
		conn, resp, err := d.Dial(wsURL(s), http.Header{"Authorization": {"Bearer x"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Header.Get("Sec-WebSocket-Extensions"); (got != "") != compress {
			t.Fatalf("compression %v: extensions %q", compress, got)
		}
		for _, msg := range []string{"hello", strings.Repeat("json ", 4000), ""} {
			if err := conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
				t.Fatal(err)
			}
			_, got, err := conn.ReadMessage()
			if err != nil || string(got) != "echo:Bearer x:"+msg {
				t.Fatalf("compression %v: echo %.40q %v", compress, got, err)
			}
		}
		if err := conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(1000, "bye"), time.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := conn.ReadMessage(); !websocket.IsCloseError(err, 1000) {
			t.Fatalf("close handshake: %v", err)
		}
		conn.Close()
	}
	waitFor(t, "both connections closed", func() bool { return h.closed.Load() == 2 })
	// HTTP still works on the same port.
	c := dial(t, s)
	c.send(get("/plain"))
	c.expect("GET", 200, "GET /plain ")
}

// rawWS is a hand-driven WebSocket client for protocol tests.
type rawWS struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

func dialWS(t *testing.T, s *Server) *rawWS {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_, _ = conn.Write([]byte("GET /ws HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 || resp.Header.Get("Sec-WebSocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("handshake: %v %+v", err, resp)
	}
	return &rawWS{t: t, conn: conn, br: br}
}

// frame builds a masked client frame.
func frame(fin bool, op byte, payload []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	out := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		out = append(out, 0x80|byte(n))
	case n < 1<<16:
		out = append(out, 0x80|126)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
	default:
		out = append(out, 0x80|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	key := [4]byte{1, 2, 3, 4}
	out = append(out, key[:]...)
	for i, b := range payload {
		out = append(out, b^key[i%4])
	}
	return out
}

// readFrame reads one server frame: opcode and payload.
func (w *rawWS) readFrame() (byte, []byte) {
	w.t.Helper()
	_ = w.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var h [2]byte
	if _, err := io.ReadFull(w.br, h[:]); err != nil {
		w.t.Fatalf("reading a frame: %v", err)
	}
	if h[1]&0x80 != 0 {
		w.t.Fatal("server frame is masked")
	}
	n := int(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		_, _ = io.ReadFull(w.br, l[:])
		n = int(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		_, _ = io.ReadFull(w.br, l[:])
		n = int(binary.BigEndian.Uint64(l[:]))
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(w.br, p); err != nil {
		w.t.Fatalf("reading a payload: %v", err)
	}
	return h[0] & 0x0f, p
}

// expectClose reads until a close frame and checks its code, then EOF.
func (w *rawWS) expectClose(code uint16) {
	w.t.Helper()
	for {
		op, p := w.readFrame()
		if op != 8 {
			continue
		}
		if len(p) < 2 || binary.BigEndian.Uint16(p) != code {
			w.t.Fatalf("close payload %v, want code %d", p, code)
		}
		break
	}
	// EOF, or a reset when the server closed with unread input queued.
	if _, err := w.br.ReadByte(); err == nil {
		w.t.Fatal("connection still open after the close frame")
	}
}

// TestWebSocketProtocolErrors: each violation is answered with the RFC 6455
// close code, the connection alone is closed, and the server keeps serving.
func TestWebSocketProtocolErrors(t *testing.T) {
	h := newWSHandler()
	s := startServer(t, h, Config{})
	unmasked := []byte{0x81, 0x02, 'h', 'i'}
	f := func(name string, stream []byte, code uint16) {
		t.Helper()
		w := dialWS(t, s)
		_, _ = w.conn.Write(stream)
		w.expectClose(code)
	}
	f("unmasked client frame", unmasked, 1002)
	f("126-byte ping", frame(true, 0x9, make([]byte, 126)), 1002)
	f("fragmented ping", frame(false, 0x9, []byte("x")), 1002)
	f("invalid UTF-8", frame(true, 0x1, []byte{0xff, 0xfe}), 1007)
	f("oversized message", frame(true, 0x2, make([]byte, 1<<20+1)), 1009)
	f("interleaved fragments", append(frame(false, 0x1, []byte("a")), frame(false, 0x1, []byte("b"))...), 1002)
	f("continuation without a message", frame(true, 0x0, []byte("a")), 1002)
	f("reserved opcode", frame(true, 0x3, nil), 1002)

	// Fragments with a ping between them are fine; the ping is answered.
	w := dialWS(t, s)
	stream := append(frame(false, 0x1, []byte("frag")), frame(true, 0x9, []byte("p"))...)
	stream = append(stream, frame(true, 0x0, []byte("mented"))...)
	_, _ = w.conn.Write(stream)
	if op, p := w.readFrame(); op != 0xA || string(p) != "p" {
		t.Fatalf("pong %x %q", op, p)
	}
	if op, p := w.readFrame(); op != 0x1 || string(p) != "echo::fragmented" {
		t.Fatalf("echo %x %q", op, p)
	}
	// A clean close is echoed.
	_, _ = w.conn.Write(frame(true, 0x8, []byte{0x03, 0xe8}))
	w.expectClose(1000)
}

// TestWebSocketHandshakeErrors: a bad upgrade gets an HTTP error, not 101.
func TestWebSocketHandshakeErrors(t *testing.T) {
	s := startServer(t, newWSHandler(), Config{})
	c := dial(t, s)
	c.send("GET /ws HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n")
	resp := c.expect("GET", 426, `{"error":"unsupported sec-websocket-version, use 13"}`)
	if resp.Header.Get("Sec-WebSocket-Version") != "13" {
		t.Fatalf("426 without the supported version: %v", resp.Header)
	}
}

// TestWebSocketBacklogRefuses: a client that does not read makes Send
// refuse once the backlog passes the bound; nothing blocks.
func TestWebSocketBacklogRefuses(t *testing.T) {
	h := newWSHandler()
	s := startServer(t, h, Config{})
	w := dialWS(t, s)
	const n, size = 1000, 64 << 10 // 64 MiB offered, far past the bound
	_, _ = w.conn.Write(frame(true, 0x1, []byte("push "+strconv.Itoa(n)+" "+strconv.Itoa(size))))
	select {
	case sent := <-h.pushed:
		if h.refused.Load() == 0 || sent*size > 2*DefaultOutboundMax+(16<<20) {
			t.Fatalf("sent %d, refused %d: the backlog bound did not hold", sent, h.refused.Load())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Send blocked on a client that does not read")
	}
}
