// Package server is the node's HTTP/1.1 transport: a gnet v2 event-loop
// server that parses requests with net/http1 and hands each complete request
// to a Handler. Business logic lives in the Handler, not here.
//
// Model. gnet runs one event loop (or one per core with Config.Multicore);
// each connection belongs to one loop for its whole life and its state, a
// connState in the gnet.Conn context, is touched only by that loop. No
// goroutine per connection or request exists.
//
// Byte flow for one read (OnTraffic):
//
//	socket ──read──▶ loop buffer ──Next(-1), no copy──▶ Parse in place ──▶ Handler.Serve
//	                                   │                                    │
//	                  incomplete tail ─┴─▶ cs.in (copied once, reused)      ▼
//	                                                       cs.out ◀── AppendResponse
//	                                                          │
//	                                           one conn.Write per read (gnet buffers
//	                                           what the socket does not take)
//
// The handler's request slices point into the loop's read buffer or cs.in and
// die when Serve returns. In steady state a synchronous request allocates
// nothing: buffers are per connection and reused (TestTrafficAllocs).
//
// Pipelining and ordering. All complete requests of a read are served in
// order and their responses are written in order in one write.
//
// Invariant: while a connection has a deferred response outstanding
// (cs.pending), none of its later requests is parsed or served; their bytes
// queue in cs.in (at most MaxPendingBytes, else the connection is closed).
// Deferred.Complete, on any goroutine, renders the response and hands it to
// gnet's AsyncWrite; the write's callback runs on the loop, clears pending and
// serves what queued up (resume). It must, because no new read would trigger
// OnTraffic when the client has already sent everything.
//
//	loop:   Serve ─Defer─▶ pending=d ······················▶ written(): pending=nil, resume()
//	worker:              d.Complete(status, body) ─AsyncWrite─▲
//
// If the client closes first, the AsyncWrite fails inside gnet and the
// callback returns without touching the connection.
//
// Built-in answers. OPTIONS requests (CORS preflight) get 204 with
// Access-Control-Allow-Origin/-Methods/-Headers/-Max-Age, echoing
// Access-Control-Request-Headers. A request with "Upgrade: websocket" is
// upgraded when the handler implements WSHandler (websocket.go), else it gets
// 501. A request the parser refuses gets its status with the body
// {"error":"<reason>"} and Connection: close, and that connection alone is
// closed; nothing a client sends can stop the loop or reach other
// connections. A connection beyond Config.MaxConns gets 503 and is closed at
// once.
//
// WebSocket. connState.proto says what a connection speaks; OnTraffic
// switches on it. The upgrade branch of dispatch validates the handshake
// (net/ws), writes 101 Switching Protocols, sets proto to protoWebSocket and
// hands bytes already buffered after the handshake to the connection's
// ws.Reader; from then on its reads go there (websocket.go has the byte
// flow, the backlog bound and the keep-alive pings). The idle timer,
// MaxConns accounting and the write path are shared with HTTP.
//
// Closing. A connection that must close after its response (parse error,
// Connection: close, HTTP/1.0) closes at once if gnet has sent everything.
// Otherwise it is marked draining, reads are ignored, and the ticker closes it
// when gnet's outbound buffer is empty: gnet's own close gives up on the first
// EAGAIN and would truncate a response larger than the socket buffers.
//
// Timers. gnet's ticker goroutine runs every IdleTimeout/4, clamped to
// 5..100 ms (100 ms when the timeout is disabled). It advances a coarse clock and sweeps the
// connections: a connection with no read or write for IdleTimeout is closed
// within roughly IdleTimeout + 2 ticks, and a drained one within a tick. The
// close runs on the loop after re-checking (connState.Run), and never while a
// response is deferred. A response the client does not take within
// IdleTimeout of the last activity is cut off with the connection.
//
// Limits: Config.MaxConns (DefaultMaxConns), Config.IdleTimeout
// (DefaultIdleTimeout), MaxPendingBytes, and the parser's
// http1.MaxHeaderBytes, MaxHeaderCount and MaxBodyBytes. Buffers that grew
// beyond 64 KiB are released when they empty.
//
// Not done here: lingering close (after an error response the socket is closed
// while the client may still be sending, which can make the client see a
// reset instead of the response); a Date header; recovering a panicking
// Handler (a handler bug is a programmer error and stops the node).
package server
