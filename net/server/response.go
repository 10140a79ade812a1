package server

import (
	"bytes"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/ledgervenue/node/net/http1"
)

// Handler serves the GET, HEAD and POST requests. OPTIONS (CORS preflight)
// and WebSocket upgrades are answered by the server itself.
type Handler interface {
	// Serve handles one complete request on the connection's event loop. It
	// appends the response body to w.Body and may set w.Status (default 200)
	// and w.ContentType (default "application/json"). The request's slices are
	// valid only during the call: copy what outlives it. Serve must not block;
	// slow work goes through w.Defer.
	Serve(req *http1.Request, w *Response)
}

// Response is the response being built for one request. The server reuses
// one Response per connection and resets it before each Serve.
type Response struct {
	Status      int    // 200..999; 204 and 304 need an empty Body
	ContentType string // must not contain CR or LF
	Body        []byte // reset to [:0] before each Serve; for HEAD only its length is sent
	// Allow, when set, is sent as an Allow header (a 405's methods); it
	// must not contain CR or LF. Not kept by Defer.
	Allow string
	// Headers, when set, are further header lines, each "Name: value\r\n"
	// (a static page's caching and content policy); the handler must put
	// no client bytes in them. Not kept by Defer.
	Headers string

	cs       *connState
	deferred *Deferred
	delay    time.Duration // Delay's
}

func (w *Response) reset() {
	w.Status = 200
	w.ContentType = "application/json"
	w.Body = w.Body[:0]
	w.Allow = ""
	w.Headers = ""
	w.deferred = nil
	w.delay = 0
}

// Defer turns the current response into a deferred one and returns the
// handle to complete it with. Whatever was appended to w.Body is discarded;
// the Content-Type is fixed now, so set w.ContentType before calling Defer.
// Later requests of the same connection stay queued until Complete, so
// responses never reorder. Calling Defer again in the same Serve returns the
// same handle.
//
// REQUIRES: called during Serve, on the event loop.
func (w *Response) Defer() *Deferred {
	if w.deferred == nil {
		cs := w.cs
		w.deferred = &Deferred{
			srv:         cs.srv,
			conn:        cs.conn,
			cs:          cs,
			contentType: w.ContentType,
			meta:        cs.meta,
			delay:       w.delay,
		}
		// The granted origin aliases the request, which dies with Serve.
		w.deferred.meta.origin = bytes.Clone(cs.meta.origin)
	}
	return w.deferred
}

// Deferred is a response that a goroutine other than the event loop
// completes.
type Deferred struct {
	srv         *Server
	conn        gnet.Conn
	cs          *connState // touched only on the event loop
	contentType string
	meta        respMeta
	delay       time.Duration // Response.Delay's, fixed when deferred
	done        atomic.Bool
}

// Complete finishes a deferred response. It may be called from any goroutine,
// exactly once. body is copied before Complete returns. If the connection is
// already closed, or the server stopped, the response is dropped.
//
// The response is rendered here, off the loop; the loop then writes it (gnet
// AsyncWrite) and, in the write's callback, serves the requests that queued
// up behind it: no new read would trigger that.
func (d *Deferred) Complete(status int, body []byte) {
	if d.done.Swap(true) {
		panic("BUG: server: Deferred.Complete called twice")
	}
	const headRoom = 256 // status line and fixed headers
	buf := appendResponse(make([]byte, 0, len(body)+headRoom), status, d.contentType, body, d.meta)
	if d.delay > 0 && d.srv.hold(len(buf)) {
		time.AfterFunc(d.delay, func() {
			d.srv.release(len(buf))
			d.write(buf)
		})
		return
	}
	d.write(buf)
}

// write hands the rendered response to the loop.
func (d *Deferred) write(buf []byte) {
	d.srv.life.RLock()
	defer d.srv.life.RUnlock()
	if !d.srv.life.stopped {
		_ = d.conn.AsyncWrite(buf, d.written)
	}
}

// written runs on the event loop once the response went to the socket (or
// gnet's outbound buffer).
func (d *Deferred) written(c gnet.Conn, err error) error {
	cs := d.cs
	if err != nil || cs.closed {
		return nil // the client went away first
	}
	if cs.pending != d {
		panic("BUG: server: a deferred response completed out of turn")
	}
	cs.pending = nil
	cs.touch()
	cs.count()
	if !d.meta.keepAlive {
		if cs.closeWhenFlushed() == gnet.Close {
			return c.EventLoop().Close(c)
		}
		return nil
	}
	cs.resume()
	return nil
}

// respMeta is what rendering a response needs to know about its request.
type respMeta struct {
	head      bool // HEAD: announce the body's length, send no body
	keepAlive bool
	http10    bool // an HTTP/1.0 keep-alive needs an explicit header
	// origin is the request's Origin the policy admits, granted with
	// Access-Control-Allow-Origin; nil when the request has none.
	origin []byte
	// allow is the handler's Allow header value (Response.Allow).
	allow string
	// headers are the handler's further header lines (Response.Headers).
	headers string
}

func metaOf(req *http1.Request) respMeta {
	return respMeta{
		head:      string(req.Method) == "HEAD",
		keepAlive: req.KeepAlive,
		http10:    req.ProtoMinor == 0,
	}
}

// appendExtra appends the header lines m adds to a response: an HTTP/1.0
// keep-alive, and the CORS grant of an admitted origin. Vary tells caches
// that the grant depends on the Origin.
func (m respMeta) appendExtra(dst []byte) []byte {
	if m.http10 && m.keepAlive {
		dst = append(dst, "Connection: keep-alive\r\n"...)
	}
	if m.origin != nil {
		dst = append(dst, "Access-Control-Allow-Origin: "...)
		dst = append(dst, m.origin...) // the parser admits no CR, LF or other controls
		dst = append(dst, "\r\nVary: Origin\r\n"...)
	}
	if m.allow != "" {
		dst = append(append(append(dst, "Allow: "...), m.allow...), "\r\n"...)
	}
	return append(dst, m.headers...)
}

// appendResponse renders a handler's response.
func appendResponse(dst []byte, status int, contentType string, body []byte, m respMeta) []byte {
	if status < 200 || status > 999 {
		panic("BUG: server: response status outside 200..999")
	}
	var scratch [256]byte // the extra lines, on the stack unless an origin is huge
	extra := m.appendExtra(scratch[:0])
	if m.head {
		return http1.AppendResponseHead(dst, status, contentType, extra, len(body), m.keepAlive)
	}
	return http1.AppendResponse(dst, status, contentType, extra, body, m.keepAlive)
}
