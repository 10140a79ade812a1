package ws

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/klauspost/compress/flate"
)

// partsPrefix and partsSuffix wrap the shared part of a "parts:" message.
const (
	partsCommand = "parts:"
	partsPrefix  = `{"jsonrpc":"2.0","method":"eth_subscription","params":{"result":"`
	partsSuffix  = `"}}`
)

// loopServer is a test-only server for one connection, driven the way
// net/server will drive the package: a read buffer, Reader.Next over it,
// replies appended to an output buffer and written once per read. It echoes
// data messages (compressed when deflate was negotiated), answers a
// "parts:<shared>" message with prefix+shared+suffix built from separately
// compressed segments, answers pings, echoes a close, and on a CloseError
// sends a close frame with its code.
type loopServer struct {
	ln      net.Listener
	deflate *DeflateParams // negotiated, set before the first frame
	first   atomic.Uint32  // first byte of the first frame the client sent
	err     error
	done    chan struct{}
}

func startLoopServer(t *testing.T) *loopServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &loopServer{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		conn, err := ln.Accept()
		if err != nil {
			s.err = err
			return
		}
		defer conn.Close()
		s.err = s.serve(conn)
	}()
	t.Cleanup(func() {
		ln.Close()
		<-s.done
		if s.err != nil {
			t.Errorf("server: %v", s.err)
		}
	})
	return s
}

func (s *loopServer) url() string { return "ws://" + s.ln.Addr().String() + "/" }

func (s *loopServer) serve(conn net.Conn) error {
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil {
		return err
	}
	key := []byte(req.Header.Get("Sec-WebSocket-Key"))
	if herr := CheckUpgrade(&UpgradeRequest{
		Method: []byte(req.Method), Upgrade: []byte(req.Header.Get("Upgrade")),
		Connection: []byte(req.Header.Get("Connection")), Version: []byte(req.Header.Get("Sec-WebSocket-Version")), Key: key,
	}); herr != nil {
		return herr
	}
	var deflate *DeflateParams
	if p, ok := ParseDeflateOffer([]byte(req.Header.Get("Sec-WebSocket-Extensions"))); ok {
		deflate = &p
	}
	s.deflate = deflate
	if _, err := conn.Write(AppendUpgradeResponse(nil, key, deflate)); err != nil {
		return err
	}
	d, err := NewDeflater(flate.BestSpeed)
	if err != nil {
		return err
	}
	r := NewReader(Config{}, deflate)
	var in, out []byte
	buf := make([]byte, 4096)
	for {
		k, err := br.Read(buf) // the bufio.Reader holds any bytes that followed the request
		if err != nil {
			return err
		}
		in = append(in, buf[:k]...)
		s.first.CompareAndSwap(0, uint32(in[0]))
		var closing bool
		in, out, closing = s.serveFrames(r, d, in, out[:0])
		if _, err := conn.Write(out); err != nil || closing {
			return err
		}
	}
}

// serveFrames handles every complete message in "in" and returns the tail.
func (s *loopServer) serveFrames(r *Reader, d *Deflater, in, out []byte) (tail, reply []byte, closing bool) {
	for {
		m, n, cerr := r.Next(in)
		if cerr != nil {
			return nil, AppendClose(out, cerr.Code, cerr.Reason), true
		}
		in = in[n:]
		switch m.Op {
		case 0:
			return append([]byte(nil), in...), out, false
		case OpPing:
			out = AppendPong(out, m.Payload)
		case OpPong:
		case OpClose:
			code := m.CloseCode
			if code == CloseNoStatus {
				code = 0
			}
			return nil, AppendClose(out, code, string(m.CloseReason)), true
		case OpText, OpBinary:
			out = s.reply(d, out, m)
		}
	}
}

func (s *loopServer) reply(d *Deflater, out []byte, m Message) []byte {
	shared, isParts := bytes.CutPrefix(m.Payload, []byte(partsCommand))
	switch {
	case isParts && s.deflate != nil:
		seg := d.CompressSegment(nil, shared) // the part compressed once for all connections
		return AppendCompressedParts(out, m.Op,
			d.CompressSegment(nil, []byte(partsPrefix)), seg, d.CompressSegment(nil, []byte(partsSuffix)))
	case isParts:
		return AppendFrame(out, m.Op, []byte(partsPrefix+string(shared)+partsSuffix))
	case s.deflate != nil:
		return d.AppendMessage(out, m.Op, m.Payload)
	}
	return AppendFrame(out, m.Op, m.Payload)
}

func dialGorilla(t *testing.T, s *loopServer, compress bool) (*websocket.Conn, *pongs) {
	t.Helper()
	dialer := websocket.Dialer{EnableCompression: compress, WriteBufferSize: 256, ReadBufferSize: 1024, HandshakeTimeout: 5 * time.Second}
	c, resp, err := dialer.Dial(s.url(), nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	ext := resp.Header.Get("Sec-WebSocket-Extensions")
	if compress != (ext != "") {
		t.Fatalf("compress %v, extensions %q", compress, ext)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	p := new(pongs)
	c.SetPongHandler(func(data string) error { p.add(data); return nil })
	return c, p
}

type pongs struct {
	mu   sync.Mutex
	seen []string
}

func (p *pongs) add(s string) { p.mu.Lock(); p.seen = append(p.seen, s); p.mu.Unlock() }
func (p *pongs) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.seen, ",")
}

func TestGorillaRoundTrip(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprintf("compress=%v", compress), func(t *testing.T) {
			s := startLoopServer(t)
			c, pongs := dialGorilla(t, s, compress)
			expect := func(wantType int, want string) {
				t.Helper()
				typ, got, err := c.ReadMessage()
				if err != nil || typ != wantType || string(got) != want {
					t.Fatalf("read: type %d err %v, %d bytes %.60q; want type %d %.60q", typ, err, len(got), got, wantType, want)
				}
			}
			send := func(typ int, msg string) {
				t.Helper()
				if err := c.WriteMessage(typ, []byte(msg)); err != nil {
					t.Fatal(err)
				}
			}
			send(websocket.TextMessage, "hello")
			expect(websocket.TextMessage, "hello")
			if wantFirst := bitFin | byte(OpText) | map[bool]byte{true: bitRSV1}[compress]; byte(s.first.Load()) != wantFirst {
				t.Fatalf("client's first frame starts %#x, want %#x", s.first.Load(), wantFirst)
			}
			send(websocket.TextMessage, "")
			expect(websocket.TextMessage, "")
			bin := strings.Repeat("\x00\x01binary\xff", 10000) // 100 KiB, fragmented by gorilla's 256-byte buffer
			send(websocket.BinaryMessage, bin)
			expect(websocket.BinaryMessage, bin)

			// A fragmented text message with pings between its fragments.
			w, err := c.NextWriter(websocket.TextMessage)
			if err != nil {
				t.Fatal(err)
			}
			var want strings.Builder
			for i := range 8 {
				chunk := strings.Repeat(fmt.Sprintf("chunk %d é ", i), 60)
				want.WriteString(chunk)
				if _, err := io.WriteString(w, chunk); err != nil {
					t.Fatal(err)
				}
				if err := c.WriteControl(websocket.PingMessage, []byte{'p', byte('0' + i)}, time.Now().Add(time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			expect(websocket.TextMessage, want.String())
			if got := pongs.String(); got != "p0,p1,p2,p3,p4,p5,p6,p7" {
				t.Fatalf("pongs %q", got)
			}

			// A message built from separately compressed parts.
			shared := strings.Repeat("0xdc0818cf78f21a8e70579cb46a43643f78291264dda342ae31049421c82d21ae,", 50)
			send(websocket.TextMessage, partsCommand+shared)
			expect(websocket.TextMessage, partsPrefix+shared+partsSuffix)
			send(websocket.TextMessage, partsCommand)
			expect(websocket.TextMessage, partsPrefix+partsSuffix)

			// Close handshake.
			if err := c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(1000, "bye")); err != nil {
				t.Fatal(err)
			}
			_, _, err = c.ReadMessage()
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != 1000 || ce.Text != "bye" {
				t.Fatalf("close: %v", err)
			}
			if compress && (s.deflate == nil || !s.deflate.ClientNoContextTakeover) {
				t.Fatalf("negotiated %+v", s.deflate)
			}
		})
	}
}

// TestGorillaProtocolError: the server answers invalid input with a close
// frame carrying the rule's code.
func TestGorillaProtocolError(t *testing.T) {
	for _, compress := range []bool{false, true} {
		s := startLoopServer(t)
		c, _ := dialGorilla(t, s, compress)
		if err := c.WriteMessage(websocket.TextMessage, []byte("not utf-8 \xff")); err != nil {
			t.Fatal(err)
		}
		_, _, err := c.ReadMessage()
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != 1007 {
			t.Fatalf("compress %v: %v", compress, err)
		}
	}
}
