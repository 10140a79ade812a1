package server

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/flate"
	"github.com/panjf2000/gnet/v2"

	"github.com/ledgervenue/node/net/http1"
	"github.com/ledgervenue/node/net/ws"
)

// WebSocket on the same port. An HTTP request with "Upgrade: websocket" is
// validated (net/ws), answered 101, and from then on the connection's bytes
// go to a ws.Reader on its loop; each complete data message goes to the
// handler's ServeWS. Replies written during ServeWS go out with the read's
// single write; other goroutines (the subscription fan-out, writes waiting
// for durability) use WSConn.Send, which queues on gnet's AsyncWritev.
//
//	read ─▶ ws.Reader.Next ─▶ text/binary ─▶ WSHandler.ServeWS ─▶ WSConn.Reply ─▶ cs.out ─▶ one write
//	                          ping ─▶ pong    close ─▶ echo close, close when flushed
//	any goroutine: WSConn.Send(parts...) ─▶ frame (deflate) ─▶ AsyncWritev ─▶ loop writes
//
// Backpressure: Send refuses (returns false) once the connection's backlog,
// bytes handed to AsyncWritev and not yet written plus gnet's outbound
// buffer as last seen on the loop, would exceed Config.OutboundMax. The
// caller decides what a refusal means (the hub closes the subscription with
// -32022); a refused message is never half-sent. Answers are owed and are
// not refused, but they are bounded too: a message is not served while more
// than OutboundMax waits (its Reply could not be read either), and SendOwed
// may go past OutboundMax by one more OutboundMax (owedMax), room for the
// answers to a client's burst of writes while notifications fill the rest.
// Beyond either the client is not reading: it gets close 1008 "client not
// reading: over N bytes queued", queued behind the rest (it may never see
// it), and the connection is closed at once instead of drained.
//
// Keep-alive: a WebSocket connection with no traffic for half the idle
// timeout gets a ping; one that stays silent for the whole timeout (no pong)
// is closed like an idle HTTP connection.

// owedMax is what SendOwed lets wait for the socket: OutboundMax, plus as
// much again of headroom for owed answers.
func owedMax(outboundMax int) int { return 2 * outboundMax }

// notReadingFrame is the close frame for a client that left more than max
// bytes unread.
func notReadingFrame(max int) []byte {
	return ws.AppendClose(nil, ws.ClosePolicyViolation, "client not reading: over "+strconv.Itoa(max)+" bytes queued")
}

// protoWebSocket: the connection was upgraded.
const protoWebSocket protocol = 1

// WSHandler is implemented by a Handler that serves WebSocket connections;
// a Handler without it answers upgrades with 501.
type WSHandler interface {
	// WSOpen runs on the loop when a connection was upgraded, with the
	// upgrade request (valid only during the call): the place to read its
	// headers, e.g. Authorization, into c.Context.
	WSOpen(c *WSConn, req *http1.Request)
	// ServeWS handles one complete data message on the connection's loop.
	// msg is valid only during the call. It must not block: slow work runs
	// elsewhere and answers with c.Send.
	ServeWS(c *WSConn, msg []byte)
	// WSClosed runs once, on the loop, when the connection is gone.
	WSClosed(c *WSConn)
}

// WSConn is one upgraded connection. Reply is for the loop (during
// ServeWS); Send and Close are safe from any goroutine.
type WSConn struct {
	cs     *connState
	reader ws.Reader
	// Context is the handler's per-connection state.
	Context any

	closed atomic.Bool
	queued atomic.Int64 // bytes handed to AsyncWritev or held (delay.go), not yet written
	// line holds messages back for the lab's latency rules (delay.go);
	// nil until the connection is first asked to.
	line     atomic.Pointer[delayLine]
	outbound atomic.Int64 // gnet's outbound buffer, as last seen on the loop

	mu       sync.Mutex // guards deflater: Send runs on any goroutine
	deflater *ws.Deflater
}

// upgrade answers a WebSocket handshake and switches the connection over.
func (cs *connState) upgrade(req *http1.Request) step {
	h, ok := cs.srv.handler.(WSHandler)
	if !ok {
		cs.extra = cs.meta.appendExtra(cs.extra[:0])
		cs.out = appendJSONError(cs.out, 501, "websocket is not supported", cs.extra, req.KeepAlive)
		return stepNext
	}
	ur := ws.UpgradeRequest{Method: req.Method, Upgrade: req.Header("Upgrade"), Connection: req.Header("Connection"),
		Version: req.Header("Sec-WebSocket-Version"), Key: req.Header("Sec-WebSocket-Key")}
	if herr := ws.CheckUpgrade(&ur); herr != nil {
		cs.out = appendJSONError(cs.out, herr.Status, herr.Reason, []byte(herr.Header), false)
		return stepClose
	}
	params, deflate := ws.ParseDeflateOffer(req.Header("Sec-WebSocket-Extensions"))
	c := &WSConn{cs: cs}
	var dp *ws.DeflateParams
	if deflate {
		d, err := ws.NewDeflater(flate.BestSpeed)
		if err != nil {
			panic("BUG: server: cannot create a deflater: " + err.Error())
		}
		c.deflater, dp = d, &params
	}
	c.reader.Reset(ws.Config{}, dp)
	cs.out = ws.AppendUpgradeResponse(cs.out, ur.Key, dp)
	cs.ws, cs.wsHandler, cs.proto = c, h, protoWebSocket
	cs.upgraded.Store(true)
	cs.hasReq = false
	cs.deadline.Store(0) // request deadlines are HTTP's; frames have the idle timeout
	h.WSOpen(c, req)
	return stepUpgraded
}

// onWS handles bytes read on an upgraded connection. data is borrowed from
// gnet until the call returns.
func (cs *connState) onWS(data []byte) gnet.Action {
	buf, owned := data, false
	if len(cs.in) > 0 {
		cs.in = append(cs.in, data...)
		buf, owned = cs.in, true
	}
	return cs.processWS(buf, owned)
}

// processWS serves the complete messages at the front of buf, keeps the
// rest and writes what they produced.
func (cs *connState) processWS(buf []byte, owned bool) gnet.Action {
	consumed := 0
	for consumed < len(buf) {
		m, n, cerr := cs.ws.reader.Next(buf[consumed:])
		consumed += n
		if cerr != nil {
			cs.out = ws.AppendClose(cs.out, cerr.Code, cerr.Reason)
			cs.flush()
			return cs.closeWhenFlushed()
		}
		if m.Op == 0 {
			break
		}
		switch m.Op {
		case ws.OpText, ws.OpBinary:
			if cs.srv.refuses(cs, int64(cs.backlog())) {
				return cs.abortWS() // its answer would not be read either
			}
			cs.wsHandler.ServeWS(cs.ws, m.Payload)
		case ws.OpPing:
			cs.out = ws.AppendPong(cs.out, m.Payload)
		case ws.OpClose:
			code := m.CloseCode
			if code == ws.CloseNoStatus {
				code = 0 // an empty close is echoed empty
			}
			cs.out = ws.AppendClose(cs.out, code, "")
			cs.flush()
			cs.ws.closed.Store(true)
			return cs.closeWhenFlushed()
		}
	}
	cs.keep(buf[consumed:], owned)
	cs.flush()
	return gnet.None
}

// abortWS closes a connection whose client does not read, at once: the close
// frame goes behind what is queued, best effort (gnet writes what the socket
// takes when it closes).
// REQUIRES: on the connection's loop.
func (cs *connState) abortWS() gnet.Action {
	cs.ws.closed.Store(true)
	cs.out = append(cs.out, cs.srv.wsNotReading...)
	cs.flush()
	return gnet.Close
}

// Reply frames msg as one text message into the read's output.
// REQUIRES: on the connection's loop, during ServeWS.
func (c *WSConn) Reply(msg []byte) {
	if c.line.Load() != nil {
		c.ReplyAfter(0, msg) // behind what the delay line holds (delay.go)
		return
	}
	c.reply(msg)
}

func (c *WSConn) reply(msg []byte) {
	c.mu.Lock()
	c.cs.out = c.appendMessage(c.cs.out, msg)
	c.mu.Unlock()
}

// Send queues parts, concatenated, as one text message. It reports false,
// sending nothing, when the connection is closed or its backlog would pass
// Config.OutboundMax. The parts must not change until they are written: pass
// immutable or freshly built slices.
func (c *WSConn) Send(parts ...[]byte) bool {
	if c.line.Load() != nil {
		return c.SendAfter(0, parts...)
	}
	return c.send(parts)
}

func (c *WSConn) send(parts [][]byte) bool {
	bufs, n, ok := c.admit(parts)
	return ok && c.write(bufs, n)
}

// admit frames parts as one message, unless the connection is closed or
// the message would take its backlog past Config.OutboundMax.
func (c *WSConn) admit(parts [][]byte) ([][]byte, int64, bool) {
	if c.closed.Load() {
		return nil, 0, false
	}
	total := 0
	for _, p := range parts {
		total += len(p)
	}
	if c.cs.srv.refuses(c.cs, c.backlog()+int64(total)) {
		return nil, 0, false
	}
	bufs, n := c.frame(parts, total)
	return bufs, n, true
}

// frame builds the buffers of one text message of parts (total bytes) and
// returns them with their size.
func (c *WSConn) frame(parts [][]byte, total int) ([][]byte, int64) {
	var bufs [][]byte
	c.mu.Lock()
	switch {
	case c.deflater != nil && len(parts) >= 3:
		bufs, total = c.cs.srv.shared.frame(parts)
	case c.deflater != nil:
		frame := c.deflater.AppendMessage(nil, ws.OpText, concat(parts))
		bufs = [][]byte{frame}
		total = len(frame)
	default:
		bufs = make([][]byte, 0, len(parts)+1)
		bufs = append(bufs, ws.AppendFrameHeader(nil, ws.OpText, true, false, total))
		bufs = append(bufs, parts...)
		total += len(bufs[0])
	}
	c.mu.Unlock()
	return bufs, int64(total)
}

// SendOwed queues msg as one text message: for what is owed to the client
// (answers, close notifications), which Send's bound must not swallow. It
// may take the backlog past Config.OutboundMax by up to one more
// OutboundMax; beyond that the client is not reading, and the connection is
// closed with 1008 instead (see Backpressure). msg is copied. It reports
// whether msg was queued.
func (c *WSConn) SendOwed(msg []byte) bool {
	if c.line.Load() != nil {
		return c.SendOwedAfter(0, msg)
	}
	return c.sendOwed(msg)
}

func (c *WSConn) sendOwed(msg []byte) bool {
	frame, ok := c.owedFrame(msg)
	return ok && c.write([][]byte{frame}, int64(len(frame)))
}

// owedFrame frames an owed message, or closes the connection when the
// message would take its backlog past owedMax.
func (c *WSConn) owedFrame(msg []byte) ([]byte, bool) {
	if c.closed.Load() {
		return nil, false
	}
	c.mu.Lock()
	frame := c.appendMessage(nil, msg)
	c.mu.Unlock()
	if c.backlog()+int64(len(frame)) > int64(owedMax(c.cs.srv.cfg.OutboundMax)) {
		c.closeWith(c.cs.srv.wsOwedOver, true)
		return nil, false
	}
	return frame, true
}

// Closed reports whether the connection is closed or closing (a close
// frame sent or received): nothing sent on it will be read any more. Safe
// from any goroutine.
func (c *WSConn) Closed() bool { return c.closed.Load() }

// backlog is the connection's backlog as other goroutines see it: messages
// handed to AsyncWritev (or held by the delay line) and gnet's outbound
// buffer as last seen on the loop.
func (c *WSConn) backlog() int64 { return c.queued.Load() + c.outbound.Load() }

// write hands bufs, n bytes, to the loop.
func (c *WSConn) write(bufs [][]byte, n int64) bool {
	c.queued.Add(n)
	return c.handOver(bufs, n, nil)
}

// handOver hands bufs, n bytes already counted in queued, to the loop;
// done (if set) runs once they are written or dropped.
func (c *WSConn) handOver(bufs [][]byte, n int64, done func()) bool {
	srv := c.cs.srv
	srv.life.RLock()
	defer srv.life.RUnlock()
	if !srv.life.stopped {
		if err := c.cs.conn.AsyncWritev(bufs, func(conn gnet.Conn, err error) error {
			c.queued.Add(-n)
			if done != nil {
				done()
			}
			if err == nil && !c.cs.closed {
				c.cs.touch()
				c.cs.count()
			}
			return nil
		}); err == nil {
			return true
		}
	}
	c.queued.Add(-n)
	if done != nil {
		done()
	}
	return false
}

// Close sends a close frame with code and reason and closes the connection
// once it is written. Safe from any goroutine; later Sends fail.
func (c *WSConn) Close(code uint16, reason string) {
	c.closeWith(ws.AppendClose(nil, code, reason), false)
}

// closeWith queues frame, a close frame, and closes the connection once
// everything is written or, with now, as soon as the frame is queued: a
// client that does not read would never drain.
func (c *WSConn) closeWith(frame []byte, now bool) {
	if c.closed.Swap(true) {
		return
	}
	srv := c.cs.srv
	srv.life.RLock()
	defer srv.life.RUnlock()
	if srv.life.stopped {
		return
	}
	_ = c.cs.conn.AsyncWrite(frame, func(conn gnet.Conn, err error) error {
		if err != nil || c.cs.closed {
			return nil
		}
		if now || c.cs.closeWhenFlushed() == gnet.Close {
			return conn.EventLoop().Close(conn)
		}
		return nil
	})
}

// appendMessage frames msg as one text message, compressed if negotiated.
// REQUIRES: c.mu held.
func (c *WSConn) appendMessage(dst, msg []byte) []byte {
	if c.deflater != nil {
		return c.deflater.AppendMessage(dst, ws.OpText, msg)
	}
	return ws.AppendFrame(dst, ws.OpText, msg)
}

func concat(parts [][]byte) []byte {
	if len(parts) == 1 {
		return parts[0]
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// wsPing pings an upgraded connection that has been quiet for half the idle
// timeout. It does not count as traffic: only the peer's answer does.
// REQUIRES: on the connection's loop.
func (cs *connState) wsPing() {
	cs.pingedAt.Store(cs.srv.now())
	_, _ = cs.conn.Write(ws.AppendPing(nil, nil))
}

// WaitWSFlushed waits, at most until ctx is done, until no WebSocket
// connection has a queued message left: used at shutdown so that close
// notifications reach subscribers before the connections go.
func (s *Server) WaitWSFlushed(ctx context.Context) {
	for {
		busy := false
		s.registry.Lock()
		for cs := range s.registry.conns {
			if c := cs.ws; cs.upgraded.Load() && c != nil && (c.queued.Load() > 0 || c.outbound.Load() > 0) {
				busy = true
				break
			}
		}
		s.registry.Unlock()
		if !busy {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// sharedSegments compresses the shared middle parts of notifications once
// for every connection that negotiated permessage-deflate: the same body
// slice (the hub passes one immutable slice to every subscriber) maps to
// one compressed segment, and only the per-connection head and tail are
// added around it, as stored blocks (ws.AppendStoredSegment). Entries hold
// their body slice, so its memory cannot be reused for another body while
// the entry lives and slice identity is a sound key.
type sharedSegments struct {
	mu       sync.Mutex
	deflater *ws.Deflater
	entries  [sharedSegmentsMax]sharedSegment
	next     int           // round-robin victim
	misses   atomic.Uint64 // compressions done, for tests
}

// sharedSegmentsMax bounds the cache: one tick's distinct payloads.
const sharedSegmentsMax = 64

type sharedSegment struct{ body, seg []byte }

// frame builds one compressed text frame from head, shared middle parts
// and tail, returning the buffers to write and their total size.
func (s *sharedSegments) frame(parts [][]byte) ([][]byte, int) {
	last := len(parts) - 1
	head := ws.AppendStoredSegment(nil, parts[0])
	tail := ws.AppendStoredSegment(nil, parts[last])
	tail = tail[:len(tail)-ws.DeflateTailBytes]
	bufs := make([][]byte, 0, len(parts)+1)
	bufs = append(bufs, nil, head)
	total := len(head) + len(tail)
	for _, p := range parts[1:last] {
		seg := s.segment(p)
		bufs = append(bufs, seg)
		total += len(seg)
	}
	bufs = append(bufs, tail)
	bufs[0] = ws.AppendFrameHeader(nil, ws.OpText, true, true, total)
	return bufs, total + len(bufs[0])
}

// segment returns body compressed as one segment, compressing it only the
// first time it is seen.
func (s *sharedSegments) segment(body []byte) []byte {
	if len(body) == 0 {
		return ws.AppendStoredSegment(nil, nil)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.entries {
		e := &s.entries[i]
		if len(e.body) == len(body) && &e.body[0] == &body[0] {
			return e.seg
		}
	}
	if s.deflater == nil {
		d, err := ws.NewDeflater(flate.BestSpeed)
		if err != nil {
			panic("BUG: server: cannot create a deflater: " + err.Error())
		}
		s.deflater = d
	}
	e := &s.entries[s.next]
	s.next = (s.next + 1) % sharedSegmentsMax
	e.body, e.seg = body, s.deflater.CompressSegment(nil, body)
	s.misses.Add(1)
	return e.seg
}
