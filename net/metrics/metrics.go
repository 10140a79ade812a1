package metrics

import (
	"net/http"
	"net/http/pprof"
	"strconv"

	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
	"github.com/ledgervenue/node/net/server"
	"github.com/ledgervenue/node/net/subs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Sources are what the metrics read; a nil one is left out.
type Sources struct {
	Node   *node.Node
	RPC    *rpc.Service
	Hub    *subs.Hub
	Server *server.Server
	// Replication is set with --nats (net/replicate).
	Replication rpc.Replication
}

// AdminHandler serves the admin port: /metrics (NewRegistry(src)) and
// net/http/pprof under /debug/pprof/.
func AdminHandler(src Sources) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(NewRegistry(src), promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", pprof.Index) // and the named profiles below it
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// NewRegistry returns a registry of the node's metrics and the Go runtime
// and process collectors.
func NewRegistry(src Sources) *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&collector{src: src})
	if src.Node != nil {
		r.MustRegister(src.Node.Histograms()...)
	}
	return r
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	rpcRequests = desc("ledgerd_rpc_requests_total",
		"JSON-RPC requests answered, per method (unknown ones, invalid requests and unparsable bodies: other) and transport.",
		"method", "transport")
	rpcErrors = desc("ledgerd_rpc_errors_total",
		"JSON-RPC requests answered with an error object, per method and transport.", "method", "transport")
	rpcQueued = desc("ledgerd_rpc_queue_requests",
		"Requests with writes waiting for a worker (bounded by --rpc.queue).")
	rpcQueuedBytes = desc("ledgerd_rpc_queue_bytes",
		"Bytes of the requests with writes queued for or running on the workers (bounded by --rpc.queue-bytes).")
	rateLimited = desc("ledgerd_rate_limited_total",
		"JSON-RPC calls refused by the rate-limit emulation (--rate-limit, lab_setRateLimits), by the budget that refused them (address, account).",
		"limit")
	rateBuckets = desc("ledgerd_rate_limit_buckets",
		"Live rate-limit buckets, by kind (address, account); 0 while the emulation is off.", "limit")
	wsConns = desc("ledgerd_websocket_connections",
		"Open WebSocket connections.")
	txs = desc("ledgerd_transactions_total",
		"Signed transactions the node admitted or refused, by kind (orderbook, other) and outcome (admitted or the refusal's reason).",
		"kind", "outcome")
	admitQueue = desc("ledgerd_node_admit_queue_inputs",
		"Inputs applied by the sequencer and waiting for the writer's group commit.")
	attestQueue = desc("ledgerd_node_attest_queue_records",
		"Durable records waiting for the attester.")
	inflight = desc("ledgerd_node_inflight_inputs",
		"Inputs applied and not yet attested (writes are refused at "+strconv.Itoa(node.MaxInflight)+").")
	conns = desc("ledgerd_connections",
		"Open connections to the JSON-RPC port, HTTP and WebSocket.")
	outbound = desc("ledgerd_outbound_bytes",
		"Bytes queued for client sockets over all connections (bounded by --outbound-total-max).")
	subsOpen = desc("ledgerd_subscriptions",
		"Open subscriptions per channel.", "channel")
	subsEnded = desc("ledgerd_subscriptions_ended_total",
		"Subscriptions ended, by reason: unsubscribed, connection_closed, or the close code's name (lagged -32020, shutdown -32021, slow -32022, serialize -32023).",
		"reason")
	notifications = desc("ledgerd_subscription_notifications_total",
		"Subscription notifications handed to connections.")
	replLeader = desc("ledgerd_replication_leader",
		"1 while this node leads (publishes its log to the stream), 0 while it follows.")
	replStreamSeq = desc("ledgerd_replication_stream_seq",
		"Stream sequence of the newest message published (leader), or applied with all its inputs durable (follower).")
	replLagInputs = desc("ledgerd_replication_lag_inputs",
		"Inputs the stream holds beyond what this follower applied.")
	labRules = desc("ledgerd_lab_latency_rules",
		"Latency rules in force (lab_setLatency).")
	labDelayed = desc("ledgerd_lab_delayed_total",
		"Messages a latency rule gave a delay, by kind (answer, notification).", "kind")
	labDelayedBytes = desc("ledgerd_lab_delayed_bytes",
		"Bytes of answers and notifications held back by latency rules over all connections.")
	labSubFaults = desc("ledgerd_lab_subscription_faults_total",
		"Subscriptions the lab closed -32022 (dropped) or made lag to a -32020 close (lagged).", "fault")
	labClosed = desc("ledgerd_lab_closed_connections_total",
		"WebSocket connections closed by lab_closeConnection.")
	labMarketFaults = desc("ledgerd_lab_market_faults_total",
		"Auction ticks the lab passed over (skipped_auction, lab_skipAuction) or held back (held_tick, lab_holdTick).", "fault")
	replLagSeconds = desc("ledgerd_replication_lag_seconds",
		"Time since the newest message this follower applied was published, while it is behind; 0 when caught up.")
)

// collector reads the sources' counters at scrape time.
type collector struct{ src Sources }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{rpcRequests, rpcErrors, rpcQueued, rpcQueuedBytes, rateLimited, rateBuckets, wsConns, txs,
		admitQueue, attestQueue, inflight, conns, outbound, subsOpen, subsEnded, notifications,
		replLeader, replStreamSeq, replLagInputs, replLagSeconds,
		labRules, labDelayed, labDelayedBytes, labSubFaults, labClosed, labMarketFaults} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	if s := c.src.RPC; s != nil {
		s.EachMethod(func(method, transport string, requests, errors uint64) {
			counter(rpcRequests, requests, method, transport)
			counter(rpcErrors, errors, method, transport)
		})
		jobs, bytes := s.QueueDepth()
		gauge(rpcQueued, jobs)
		gauge(rpcQueuedBytes, bytes)
		gauge(wsConns, s.WSConns())
		s.RateLimited(func(limit string, refused uint64, buckets int) {
			counter(rateLimited, refused, limit)
			gauge(rateBuckets, int64(buckets), limit)
		})
		lab := s.LabDelivery()
		gauge(labRules, int64(lab.Rules))
		counter(labDelayed, lab.DelayedAnswers, "answer")
		counter(labDelayed, lab.DelayedNotifications, "notification")
		counter(labSubFaults, lab.Dropped, "dropped")
		counter(labSubFaults, lab.Lagged, "lagged")
		counter(labClosed, lab.Closed)
	}
	if n := c.src.Node; n != nil {
		skipped, held := n.LabCounts()
		counter(labMarketFaults, skipped, "skipped_auction")
		counter(labMarketFaults, held, "held_tick")
		st := n.Stats()
		for k, byOutcome := range st.Txs {
			for o, v := range byOutcome {
				counter(txs, v, node.TxKindNames[k], node.TxOutcomeNames[o])
			}
		}
		gauge(admitQueue, int64(st.AdmitQueue))
		gauge(attestQueue, int64(st.AttestQueue))
		gauge(inflight, int64(st.Inflight))
	}
	if s := c.src.Server; s != nil {
		gauge(conns, s.OpenConns())
		gauge(outbound, s.OutboundBytes())
		gauge(labDelayedBytes, s.DelayedBytes())
	}
	if r := c.src.Replication; r != nil {
		st := r.Status()
		leads := int64(0)
		if st.Role == "leader" {
			leads = 1
		}
		gauge(replLeader, leads)
		gauge(replStreamSeq, int64(st.StreamSeq))
		gauge(replLagInputs, st.LagInputs)
		ch <- prometheus.MustNewConstMetric(replLagSeconds, prometheus.GaugeValue, float64(st.LagMs)/1000)
	}
	if h := c.src.Hub; h != nil {
		st := h.Stats()
		st.EachChannel(func(channel string, open int) { gauge(subsOpen, int64(open), channel) })
		st.EachEnded(func(reason string, ended uint64) { counter(subsEnded, ended, reason) })
		counter(notifications, st.Notifications)
	}
}
