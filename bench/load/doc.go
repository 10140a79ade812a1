// Package load is a small HTTP/1.1 load client for benchmarking JSON-RPC
// servers over loopback. It speaks raw TCP (no net/http), so it costs the
// shared CPUs little and drives every server, ours or a net/http baseline,
// with exactly the same bytes.
//
// Model. Run opens Config.Conns keep-alive connections, then starts the
// clock. Each connection has one goroutine that keeps up to Config.Pipeline
// requests in flight: it writes every free slot's request in one write,
// reads, settles the complete responses (in order, as HTTP/1.1 answers
// them), and refills. A request's latency runs from just before its write to
// the read that completed its response.
//
//	conn goroutine:  fill ─write(P requests)─▶ socket ─read─▶ inbox ─parse─▶ record latency, Check
//	                   ▲                                                        │
//	                   └──────────────────── slots freed ───────────────────────┘
//
// Request i of a connection is sent only after response i-Pipeline arrived,
// so a generator (Config.Next) that gives slot i%Pipeline to one account sees
// each account's requests strictly one after another.
//
// Open loop (RunOpen, for cmd/ledger-bench). Request i falls due at
// start + i/Rate whatever the server does; a scheduler goroutine hands it,
// with its due time, to a connection's queue (OpenConfig.Ordered: request i
// to connection i % Conns, so requests of one "slot" keep their order) or to
// a queue all connections share. Each connection has one request in flight
// (RoundTripper: HTTP/1.1 here, WebSocket in the caller). Latency runs from
// the due time, so a request waiting for a busy connection, or in a full
// queue (OpenQueueMax), is charged for the wait; service time runs from its
// write. A sampler closes a Window every OpenConfig.Window with the
// quantiles of that period.
//
//	scheduler ─(due, body)─▶ queue ─▶ conn goroutine ─RoundTrip─▶ answer: latency = now-due, service = now-sent
//
// Response format (what the parser accepts):
//
//	HTTP/1.x SSS[ reason]\r\n         status 200..999 (1xx refused: no Expect is sent)
//	Name: value\r\n ...               Content-Length required (zero allowed for 204/304),
//	\r\n                              Transfer-Encoding refused; head <= HeaderBytesMax
//	body                              exactly Content-Length <= BodyBytesMax bytes
//
// Stopping. A run ends by itself: after Config.Requests requests in all,
// after Config.Duration (no new request is sent then), or once every
// connection's Next returned nil; answers still in flight get
// Config.DrainTimeout more, after which they count as errors.
//
// Safety. Only loopback addresses are dialled: "localhost" or a loopback IP
// literal, checked before dialling and again on the resolved address
// (OpenConfig.AllowRemote lifts this for a caller that asked explicitly).
//
// Limits: ConnsMax, PipelineMax, OpenRateMax, OpenDurationMax, OpenQueueMax,
// HeaderBytesMax, BodyBytesMax, and latencies
// up to HistogramMax (about 137 s) resolved to within 1/64 (1.6 %) by the
// log-linear Histogram.
package load
