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
// Access-Control-Allow-Methods/-Headers/-Max-Age, echoing
// Access-Control-Request-Headers, and the origin's grant (below). A request
// with "Upgrade: websocket" is upgraded when the handler implements
// WSHandler (websocket.go), else it gets 501. A request the parser refuses
// gets its status with the body {"error":"<reason>"} and Connection: close,
// and that connection alone is closed; nothing a client sends can stop the
// loop or reach other connections. A connection beyond Config.MaxConns, or
// beyond Config.MaxConnsPerIP from one remote address, gets 503 and is
// closed at once.
//
// Origin and Host (origin.go), the policy of go-ethereum's --http.corsdomain,
// --ws.origins and --http.vhosts, with the same flag names in ledgerd. A
// node on a developer's laptop must not be drivable by whatever web page the
// developer opens, yet every non-browser client (go-ethereum, ethers and
// viem under Node, curl, bots) must work without configuration:
//   - No Origin header (no browser): served, with no CORS header.
//   - Origin admitted by the list (Config.CORSDomains for HTTP requests and
//     preflights, Config.WSOrigins for upgrades; default DefaultOrigins:
//     localhost, 127.0.0.1 and [::1] with any scheme and port): served, and
//     an HTTP answer carries Access-Control-Allow-Origin: <that origin> and
//     Vary: Origin. Never "*": a grant names the page it is for.
//   - Origin exactly "http://" + Host, with a Host the vhosts rule below
//     serves: the node's own page (its web view, /ui/), admitted over HTTP
//     and on upgrades whatever the lists say (policy.sameOrigin).
//   - Any other Origin: 403 {"error":"origin not allowed (--http.corsdomain)"}
//     (or "(--ws.origins)" on an upgrade), and the connection is closed.
//   - Host (HTTP requests, not upgrades, as in go-ethereum): missing, an IP
//     literal with or without port, or a name in Config.VHosts (default
//     "localhost") is served; any other name gets 403 {"error":"invalid host
//     specified"}. A DNS-rebinding page reaches 127.0.0.1 under its own name,
//     so it fails here even when its browser sends no Origin (a same-origin
//     GET); on an upgrade a browser always sends its page's Origin.
//
// List entries are "*" (anything), or an origin whose scheme and port may be
// omitted ("localhost", "https://app.example:8443"), compared ignoring
// case. The checks read the parsed headers and allocate nothing.
//
// WebSocket. connState.proto says what a connection speaks; OnTraffic
// switches on it. The upgrade branch of dispatch validates the handshake
// (net/ws), writes 101 Switching Protocols, sets proto to protoWebSocket and
// hands bytes already buffered after the handshake to the connection's
// ws.Reader; from then on its reads go there (websocket.go has the byte
// flow, the backlog bound and the keep-alive pings). The idle timer,
// connection accounting, the outbound bound and the write path are shared
// with HTTP.
//
// Closing. A connection that must close after its response (parse error,
// Connection: close, HTTP/1.0) closes at once if gnet has sent everything.
// Otherwise it is marked draining, reads are ignored, and the ticker closes it
// when gnet's outbound buffer is empty: gnet's own close gives up on the first
// EAGAIN and would truncate a response larger than the socket buffers.
//
// Timers. gnet's ticker goroutine runs every quarter of the shortest of
// IdleTimeout, HeaderTimeout and BodyTimeout, clamped to 5..100 ms. It
// advances a coarse clock and sweeps the connections; no connection has a
// timer of its own. A connection with no read or write for IdleTimeout is
// closed within roughly IdleTimeout + 2 ticks, and a drained one within a
// tick. The close runs on the loop after re-checking (connState.Run), and
// never while a response is deferred. A response the client does not take
// within IdleTimeout of the last activity is cut off with the connection.
//
// Slow senders. Any byte read counts as activity for the idle timeout, so a
// request has deadlines of its own, counted from its first byte (empty lines
// before it included) and not extended by later bytes: its head must be in
// within HeaderTimeout and its body within BodyTimeout. Past either the
// ticker's sweep answers 408 {"error":"request head not received within
// 10s"} (or "request body ... within 30s") and closes the connection. A
// keep-alive connection with no partial request has only the idle timeout;
// the upgrade request is an HTTP request like any other; while a response
// is deferred the deadline waits (it is the server's turn).
//
// Outbound bound. Config.OutboundMax bounds what waits for one connection's
// socket: gnet's outbound buffer, the read's staged output, and WebSocket
// messages in AsyncWritev. A complete request (or WebSocket data message)
// is not served while more than that waits: its client is not reading, and
// the connection is closed at once (WebSocket: close 1008 first, best
// effort; websocket.go). One answer may pass the bound (a single large
// response is written whole), so a connection holds at most OutboundMax
// plus one answer, plus what one read can hold (gnet's read buffer).
//
// Outbound budget. Config.OutboundTotalMax bounds the same bytes over all
// connections, so that N clients that do not read cost about the budget,
// not N × OutboundMax. Each connection counts its queue into
// Server.outbound on its loop (connState.count: after each write, in each
// AsyncWrite callback, and from the ticker for queues that drain without
// traffic). While the total, with the connection's own uncounted bytes, is
// over the budget, a connection with more than laggingBytes (64 KiB)
// queued is treated as over its own bound: closed at its next request or
// message, and WSConn.Send refuses for it. A connection that keeps up is
// served as usual. A client that stops sending as well as reading is closed
// by the ticker's recount (recountTask) once its queue is past either
// bound, within a tick, rather than kept until the idle timeout.
//
// Held-back delivery (delay.go, the strategy lab's latency rules): a
// handler's Response.Delay makes the answer a deferred one written a
// timer's delay after it is complete, so the invariant above keeps
// pipelined answers in order; WSConn.ReplyAfter, SendAfter and
// SendOwedAfter put a WebSocket connection's messages through a FIFO delay
// line while it holds anything, so nothing overtakes. Held bytes count in
// the connection's backlog (the outbound bound) and, over all connections,
// against DelayedTotalMax. Off, each send costs one atomic load.
//
// Requests in flight per HTTP connection: one. Requests are served in order
// on the loop; a deferred response holds back every later request of its
// connection (the invariant above), which queue as bytes, at most
// MaxPendingBytes (TestDeferredOneAtATime, TestMaxPendingBytes).
//
// Limits (each a Config field with a default or a constant, each with a
// test; every refusal names the limit):
//   - Config.MaxConns (DefaultMaxConns): 503 "too many connections (10000)".
//   - Config.MaxConnsPerIP (DefaultMaxConnsPerIP): 503 "too many connections
//     from this address (1024)".
//   - Config.IdleTimeout (DefaultIdleTimeout): closed.
//   - Config.HeaderTimeout, BodyTimeout (DefaultHeaderTimeout,
//     DefaultBodyTimeout): 408, closed.
//   - Config.OutboundMax (DefaultOutboundMax): closed (WebSocket: 1008);
//     WSConn.Send refuses beyond it, WSConn.SendOwed closes beyond twice it.
//   - Config.OutboundTotalMax (DefaultOutboundTotalMax): as OutboundMax,
//     for connections more than laggingBytes behind (TestOutboundTotalMax).
//   - MaxPendingBytes: closed.
//   - The parser's http1.MaxHeaderBytes (431), MaxHeaderCount (431) and
//     MaxBodyBytes (413); net/ws's MaxFrameBytes and MaxMessageBytes (1009).
//
// Buffers that grew beyond 64 KiB are released when they empty.
//
// Not done here: lingering close (after an error response the socket is closed
// while the client may still be sending, which can make the client see a
// reset instead of the response); a Date header; recovering a panicking
// Handler (a handler bug is a programmer error and stops the node).
package server
