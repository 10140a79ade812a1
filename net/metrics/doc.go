// Package metrics serves the node's Prometheus metrics, in the standard
// exposition format, on the admin port next to net/http/pprof
// (AdminHandler; ledgerd --admin-addr). docs/metrics.md lists every metric.
//
// Model. The packages on the request path keep plain atomic counters and
// gauges of their own (net/rpc: requests and errors per method and
// transport, the worker queue, WebSocket connections; net/node: admissions
// by outcome, queue depths; net/subs: subscriptions per channel and how
// they ended; net/server: connections and outbound bytes). One Collector
// here reads them at scrape time and turns them into constant metrics, so
// counting costs the request path an atomic add and no label lookup, map
// or allocation. The node's histograms (tick duration and intents, group
// commit duration and items, attestation latency) are prometheus
// Histograms observed by the node's own goroutines (sequencer, writer,
// attester), off the request path; they are registered as they are.
//
// Invariant: the core stays metric-free and deterministic; the node
// measures around core calls.
//
// The label sets are bounded: method is one of the dispatcher's known
// methods or "other", transport "http" or "ws", kind and outcome come
// from fixed tables, channel from the subscription channels and reason
// from the fixed end reasons. A scrape emits the same series every time
// (zeros included), so rate() works from the first sample.
package metrics
