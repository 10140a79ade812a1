package server

import (
	"context"
	"net/netip"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"

	"github.com/ledgervenue/node/net/http1"
)

// protocol is what a connection speaks. Every connection starts as protoHTTP;
// see "WebSocket seam" in doc.go for how a second protocol slots in.
type protocol uint8

const protoHTTP protocol = iota

// connState is one connection's state, stored in gnet's Conn context. It is
// owned by the connection's event loop; only lastSeen and draining are read
// elsewhere (by the ticker).
type connState struct {
	srv   *Server
	conn  gnet.Conn
	proto protocol
	ip    netip.Addr // the peer's address, counted in Server.perIP
	id    uint64     // ConnID: unique per server, from 1

	parser http1.Parser
	req    http1.Request
	resp   Response
	meta   respMeta // of the request being answered, with the origin granted

	// in holds bytes not yet served that outlived a read: a partial request,
	// or requests queued behind a deferred response. Requests that arrive
	// whole are parsed straight from gnet's read buffer and never copied.
	in    []byte
	out   []byte // responses staged for one write per read
	extra []byte // scratch for a response's extra header lines

	// pending is the deferred response being waited for. Invariant: while it
	// is set, no further request of this connection is parsed or served.
	pending      *Deferred
	continueSent bool // "100 Continue" already sent for the request in progress
	closed       bool

	// reqStart is Server.now at the first byte of the partial request in
	// cs.in, valid while hasReq. deadline is when that request's head (or,
	// once the head is in, its body) must be complete: reqStart plus
	// HeaderTimeout or BodyTimeout. It is 0 when there is no partial
	// request, while a response is deferred (the server's turn, not the
	// client's) and when the timeout is disabled. The ticker reads it.
	reqStart int64
	hasReq   bool
	deadline atomic.Int64

	// ws and wsHandler serve the connection once it is upgraded; upgraded
	// says so to the ticker.
	ws        *WSConn
	wsHandler WSHandler
	upgraded  atomic.Bool
	pingedAt  atomic.Int64 // Server.now of the last keep-alive ping

	lastSeen atomic.Int64 // Server.now at the last read or write
	// counted is this connection's share of Server.outbound (count); the
	// ticker reads it to recount queues that drain without traffic.
	counted atomic.Int64
	// draining: the last response is written and the connection closes as
	// soon as gnet's outbound buffer is empty; input is ignored meanwhile.
	draining atomic.Bool
}

func (cs *connState) touch() { cs.lastSeen.Store(cs.srv.now()) }

// step says what happens after one request was answered.
type step uint8

const (
	stepNext     step = iota // parse the next request
	stepWait                 // a deferred response is outstanding
	stepClose                // close once the output is flushed
	stepUpgraded             // the connection now speaks WebSocket
	stepAbort                // close at once: the client does not read its answers
)

// onHTTP handles bytes read on an HTTP connection. data is borrowed from gnet
// until the call returns.
func (cs *connState) onHTTP(data []byte) gnet.Action {
	if cs.pending != nil {
		if len(cs.in)+len(data) > MaxPendingBytes {
			return gnet.Close
		}
		cs.in = append(cs.in, data...)
		return gnet.None
	}
	if len(cs.in) == 0 {
		return cs.process(data, false)
	}
	cs.in = append(cs.in, data...)
	return cs.process(cs.in, true)
}

// process serves the complete requests at the front of buf, keeps the rest in
// cs.in and writes the staged responses. owned says whether buf is cs.in.
func (cs *connState) process(buf []byte, owned bool) gnet.Action {
	n, st := cs.serve(buf)
	switch st {
	case stepUpgraded:
		// Frames that came with the handshake are the Reader's already.
		cs.flush()
		return cs.processWS(buf[n:], owned)
	case stepAbort:
		return gnet.Close // nothing queued is worth keeping for a client that does not read
	case stepClose:
		cs.flush()
		return cs.closeWhenFlushed()
	}
	cs.keep(buf[n:], owned)
	cs.arm(n > 0)
	cs.flush()
	return gnet.None
}

// arm sets the deadline of the partial request left in cs.in, counted from
// its first byte: a request completed by this read (served) means the rest
// started now; otherwise the partial request keeps its start, so trickling
// bytes does not extend the deadline.
func (cs *connState) arm(served bool) {
	if cs.pending != nil || len(cs.in) == 0 {
		cs.hasReq = false
		cs.deadline.Store(0)
		return
	}
	if served || !cs.hasReq {
		cs.reqStart, cs.hasReq = cs.srv.now(), true
	}
	timeout := cs.srv.cfg.HeaderTimeout
	if cs.parser.InBody() {
		timeout = cs.srv.cfg.BodyTimeout
	}
	var d int64
	if timeout > 0 {
		d = cs.reqStart + int64(timeout)
	}
	cs.deadline.Store(d)
}

// timeOut answers a partial request that missed its deadline with 408 and
// closes the connection.
// REQUIRES: on the connection's loop.
func (cs *connState) timeOut() error {
	reason := cs.srv.headTimeout
	if cs.parser.InBody() {
		reason = cs.srv.bodyTimeout
	}
	cs.parser.Reset()
	cs.hasReq = false
	cs.deadline.Store(0)
	cs.out = appendJSONError(cs.out, 408, reason, nil, false)
	cs.flush()
	if cs.closeWhenFlushed() == gnet.Close {
		return cs.conn.EventLoop().Close(cs.conn)
	}
	return nil
}

// backlog is what waits for the socket: gnet's outbound buffer, the output
// staged in this read and WebSocket messages handed to AsyncWritev.
// count records, after a write of the loop's, what the connection has
// queued: its share of Server.outbound, and for WebSocket the loop's view
// that Send checks from other goroutines (WSConn.outbound).
// REQUIRES: on the connection's loop.
func (cs *connState) count() {
	var n int64 // OnClose took the share back from a closed connection
	if !cs.closed {
		n = int64(cs.backlog())
		if cs.ws != nil {
			cs.ws.outbound.Store(int64(cs.conn.OutboundBuffered()))
		}
	}
	cs.srv.outbound.Add(n - cs.counted.Swap(n))
}

// recountTask counts a connection whose queue may have drained while it
// had no traffic, and closes it if what it still has queued is past the
// bounds (Server.refuses): a client that neither reads nor sends would
// otherwise keep its queue until the idle timeout. The ticker schedules it
// on the loop (gnet.Runnable).
type recountTask connState

func (t *recountTask) Run(context.Context) error {
	cs := (*connState)(t)
	if cs.closed {
		return nil
	}
	cs.count()
	if !cs.srv.refuses(cs, int64(cs.backlog())) {
		return nil
	}
	if cs.proto == protoWebSocket {
		cs.abortWS()
	}
	return cs.conn.EventLoop().Close(cs.conn)
}

func (cs *connState) backlog() int {
	n := cs.conn.OutboundBuffered() + len(cs.out)
	if cs.ws != nil {
		n += int(cs.ws.queued.Load())
	}
	return n
}

// closeWhenFlushed returns Close if gnet has sent everything; otherwise it
// marks the connection draining and the ticker closes it once the outbound
// buffer is empty (connState.Run). Closing at once would truncate a response
// larger than the socket buffers: gnet's close gives up on the first EAGAIN.
func (cs *connState) closeWhenFlushed() gnet.Action {
	if cs.conn.OutboundBuffered() == 0 {
		return gnet.Close
	}
	cs.draining.Store(true)
	cs.in = nil
	return gnet.None
}

// serve answers requests from the front of buf until it runs out of complete
// requests, meets a deferred response, or must close. It returns how many
// bytes it consumed and stepNext, stepWait, stepUpgraded, stepClose or
// stepAbort.
func (cs *connState) serve(buf []byte) (int, step) {
	consumed := 0
	for consumed < len(buf) {
		n, err := cs.parser.Parse(buf[consumed:], &cs.req)
		if err != nil {
			cs.appendParseError(err)
			return consumed, stepClose
		}
		if n == 0 {
			if cs.req.ExpectContinue && !cs.continueSent {
				cs.out = append(cs.out, http1.Continue...)
				cs.continueSent = true
			}
			break
		}
		consumed += n
		cs.continueSent = false
		if cs.srv.refuses(cs, int64(cs.backlog())) {
			return consumed, stepAbort // the answers already queued are not being read
		}
		if st := cs.dispatch(&cs.req); st != stepNext {
			return consumed, st
		}
	}
	return consumed, stepNext
}

// dispatch answers one complete request.
func (cs *connState) dispatch(req *http1.Request) step {
	options := string(req.Method) == "OPTIONS"
	upgrade := !options && http1.HasToken(req.Header("Upgrade"), "websocket")
	reason, origin := cs.srv.policy.check(req, upgrade)
	cs.meta = metaOf(req)
	cs.meta.origin = origin
	switch {
	case reason != "":
		// A refused page has no further business here: no keep-alive.
		cs.out = appendJSONError(cs.out, 403, reason, nil, false)
		return stepClose
	case options:
		cs.appendPreflight(req)
	case upgrade:
		return cs.upgrade(req)
	default:
		w := &cs.resp
		w.reset()
		cs.srv.handler.Serve(req, w)
		if w.delay > 0 && w.deferred == nil {
			w.Defer().Complete(w.Status, w.Body) // written once the delay is over (delay.go)
		}
		if w.deferred != nil {
			cs.pending, w.deferred = w.deferred, nil
			w.Body = w.Body[:0]
			return stepWait
		}
		m := cs.meta
		m.allow, m.headers = w.Allow, w.Headers
		cs.out = appendResponse(cs.out, w.Status, w.ContentType, w.Body, m)
		if cap(w.Body) > bufRetainMax {
			w.Body = nil
		}
	}
	if !req.KeepAlive {
		return stepClose
	}
	return stepNext
}

// appendPreflight answers a CORS preflight (any OPTIONS request whose
// Origin, if any, the policy admits).
func (cs *connState) appendPreflight(req *http1.Request) {
	allow := req.Header("Access-Control-Request-Headers")
	if len(allow) == 0 {
		allow = defaultAllowHeaders
	}
	extra := cs.meta.appendExtra(cs.extra[:0])
	extra = append(extra, "Access-Control-Allow-Methods: GET, POST, OPTIONS\r\n"...)
	extra = append(extra, "Access-Control-Allow-Headers: "...)
	extra = append(extra, allow...) // the parser admits no CR, LF or other controls
	extra = append(extra, "\r\nAccess-Control-Max-Age: 86400\r\n"...)
	cs.extra = extra
	cs.out = http1.AppendResponse(cs.out, 204, "", extra, nil, req.KeepAlive)
}

var defaultAllowHeaders = []byte("Content-Type, Authorization")

func (cs *connState) appendParseError(err *http1.Error) {
	var extra []byte
	if err == http1.ErrMethodNotAllowed {
		extra = allowHeader
	}
	cs.out = appendJSONError(cs.out, err.Status, err.Reason, extra, false)
}

var allowHeader = []byte("Allow: GET, HEAD, POST, OPTIONS\r\n")

// appendJSONError appends a response with body {"error":"<reason>"}.
// REQUIRES: reason needs no JSON escaping.
func appendJSONError(dst []byte, status int, reason string, extra []byte, keepAlive bool) []byte {
	const prefix, suffix = `{"error":"`, `"}`
	dst = http1.AppendResponseHead(dst, status, "application/json", extra, len(prefix)+len(reason)+len(suffix), keepAlive)
	dst = append(dst, prefix...)
	dst = append(dst, reason...)
	return append(dst, suffix...)
}

// keep stores the unconsumed tail of buf in cs.in for the next read.
func (cs *connState) keep(rest []byte, owned bool) {
	if owned {
		cs.in = cs.in[:copy(cs.in, rest)]
	} else {
		cs.in = append(cs.in[:0], rest...)
	}
	if len(cs.in) == 0 && cap(cs.in) > bufRetainMax {
		cs.in = nil
	}
}

// flush writes the staged responses. gnet copies what the socket does not
// take at once, so cs.out is free again on return.
func (cs *connState) flush() {
	if len(cs.out) > 0 {
		_, _ = cs.conn.Write(cs.out) // on error gnet closes the connection itself
		cs.out = cs.out[:0]
		if cap(cs.out) > bufRetainMax {
			cs.out = nil
		}
		cs.touch()
	}
	cs.count() // a read without output also sees what drained meanwhile
}

// resume continues after a deferred response was written: the requests that
// queued up behind it are served, since no new read may come to do it.
func (cs *connState) resume() {
	if len(cs.in) == 0 {
		return
	}
	if cs.process(cs.in, true) == gnet.Close {
		_ = cs.conn.EventLoop().Close(cs.conn)
	}
}

// Run closes the connection if it finished draining or is still idle, times
// out a late request, or pings a quiet WebSocket; the ticker schedules it on
// the connection's loop (gnet.Runnable).
func (cs *connState) Run(context.Context) error {
	if cs.closed {
		return nil
	}
	draining := cs.draining.Load()
	drained := draining && cs.conn.OutboundBuffered() == 0
	if !draining && cs.srv.late(cs) {
		return cs.timeOut()
	}
	if !drained && cs.proto == protoWebSocket && !cs.srv.idle(cs) {
		cs.wsPing()
		return nil
	}
	if !drained && (cs.pending != nil || !cs.srv.idle(cs)) {
		return nil
	}
	return cs.conn.EventLoop().Close(cs.conn)
}
