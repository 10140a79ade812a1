package node

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/ledgervenue/node/core"
	"github.com/prometheus/client_golang/prometheus"
)

// Stats for the Prometheus metrics (net/metrics, docs/metrics.md). The
// counters are atomics and the histograms prometheus.Histogram (lock-free),
// all written by the node's own goroutines around core calls: the core
// stays metric-free and nothing here allocates per input. net/metrics reads
// them at scrape time.

// Kinds of transaction the admission counters tell apart.
const (
	TxKindOrderbook = iota // sent to the orderbook: orders, cancels, batches
	TxKindOther            // transfers, token calls, withdrawals, recovery
	txKinds
)

// TxKindNames are the kind label values, by TxKind*.
var TxKindNames = [txKinds]string{TxKindOrderbook: "orderbook", TxKindOther: "other"}

// The admission outcomes past the ledger's reject codes (which come first,
// core.RejectNone being "admitted"): refusals before the ledger sees the
// transaction.
const (
	// core.RejectWaitTick, after RejectControl, never leaves the node
	// (submitLocked admits the transaction once the tick has ended).
	txOverloaded         = int(core.RejectControl) + 1 + iota // ErrOverloaded
	txStopped                                                 // ErrStopped, ErrLogFailed
	txBlacklisted                                             // ErrBlacklisted
	txValidatorsRejected                                      // *RejectedError
	txOutcomes
)

// TxOutcomeNames are the outcome label values: "admitted", the ledger's
// reject codes, then the node's own refusals.
var TxOutcomeNames = [txOutcomes]string{
	core.RejectNone:                "admitted",
	core.RejectChainID:             "chain_id",
	core.RejectPastNonce:           "past_nonce",
	core.RejectFutureNonce:         "future_nonce",
	core.RejectPending:             "pending",
	core.RejectInsufficientBalance: "insufficient_balance",
	core.RejectUnderpriced:         "underpriced",
	core.RejectTipAboveFeeCap:      "tip_above_fee_cap",
	core.RejectGasLimit:            "gas_limit",
	core.RejectContractCreation:    "contract_creation",
	core.RejectApp:                 "reverted",
	core.RejectMarket:              "market",
	core.RejectLocked:              "locked",
	core.RejectEquivocation:        "equivocation",
	core.RejectNoTransaction:       "no_transaction",
	core.RejectControl:             "control",
	txOverloaded:                   "overloaded",
	txStopped:                      "stopped",
	txBlacklisted:                  "blacklisted",
	txValidatorsRejected:           "validators_rejected",
}

// stats are the node's metric sources besides svc_metrics' window.
type stats struct {
	txs [txKinds][txOutcomes]atomic.Uint64
	// Observed by the sequencer (ticks), the writer (commits) and the
	// attester (attestation latency, through metrics.observe).
	tickSeconds, tickHoldSeconds, tickDownstreamSeconds, tickIntents, commitSeconds, commitItems, storeSeconds, attestSeconds prometheus.Histogram
}

// init makes the histograms; m observes the attestation latency into one.
func (s *stats) init(m *metrics) {
	h := func(name, help string, buckets []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	}
	// Durations from 10 µs to ~5 s; counts from 1 to 4096 (writerGroupMax).
	seconds := prometheus.ExponentialBuckets(10e-6, 2, 20)
	counts := prometheus.ExponentialBuckets(1, 2, 13)
	s.tickSeconds = h("ledgerd_auction_tick_duration_seconds",
		"Time one auction tick takes, from its beginning to its end (clearing every due book, indexing, building its subscription data).", seconds)
	s.tickHoldSeconds = h("ledgerd_auction_tick_hold_seconds",
		"Time one auction tick holds the sequencer's lock: the parts of it during which only transactions are admitted, staged, are left out.", seconds)
	s.tickDownstreamSeconds = h("ledgerd_auction_tick_downstream_seconds",
		"Time one live auction tick's downstream stage (market index, republished books, subscription data) runs after the tick, without the sequencer's lock.", seconds)
	s.tickIntents = h("ledgerd_auction_tick_intents",
		"Orderbook intents (orders, cancels, updates, withdrawals) one auction tick applied.", append([]float64{0}, counts...))
	s.commitSeconds = h("ledgerd_group_commit_duration_seconds",
		"Time one group commit of the intent log takes (its inputs' write and fdatasync: what an acknowledgement waits for).", seconds)
	s.commitItems = h("ledgerd_group_commit_items",
		"Items one group commit carries: inputs, attestation batches, withdrawal claims, snapshots.", counts)
	s.storeSeconds = h("ledgerd_store_commit_duration_seconds",
		"Time one group's store write takes (Badger: batches and history, ticks, claims, snapshots; after its inputs are durable).", seconds)
	s.attestSeconds = h("ledgerd_attestation_latency_seconds",
		"Time from a live transaction's admission to its receipt's attestation.", seconds)
	m.attestSeconds = s.attestSeconds
}

// countTx counts the admission outcome of tx: rej when err is nil.
func (s *stats) countTx(tx *core.Tx, rej *core.Reject, err error) {
	kind := TxKindOther
	if tx.HasTo && tx.To == core.OrderbookAddress {
		kind = TxKindOrderbook
	}
	outcome := int(rej.Code)
	if err != nil {
		outcome = refusalOutcome(err)
	}
	s.txs[kind][outcome].Add(1)
}

// refusalOutcome is the outcome of a refusal before the ledger. Apart from
// countTx: errors.As moves its target to the heap, which an admitted
// transaction must not pay for.
func refusalOutcome(err error) int {
	var rejected *RejectedError
	switch {
	case errors.Is(err, ErrOverloaded):
		return txOverloaded
	case errors.Is(err, ErrBlacklisted):
		return txBlacklisted
	case errors.As(err, &rejected):
		return txValidatorsRejected
	}
	return txStopped // ErrStopped, ErrLogFailed
}

// observeTick records one tick applied since start, that landed intents.
func (s *stats) observeTick(start time.Time, intents int) {
	s.tickSeconds.Observe(time.Since(start).Seconds())
	s.tickIntents.Observe(float64(intents))
}

// observeCommit records one group commit of items that took since start.
func (s *stats) observeCommit(start time.Time, items int) {
	s.commitSeconds.Observe(time.Since(start).Seconds())
	s.commitItems.Observe(float64(items))
}

// observeStore records one group's store write that took since start.
func (s *stats) observeStore(start time.Time) { s.storeSeconds.Observe(time.Since(start).Seconds()) }

// Stats is a reading of the node's counters and queue depths.
type Stats struct {
	// Txs counts transactions by TxKind* and outcome (TxOutcomeNames).
	Txs [txKinds][txOutcomes]uint64
	// AdmitQueue is the inputs applied and waiting for the writer;
	// AttestQueue the durable records waiting for the attester; Inflight
	// the inputs applied and not yet attested (bounded by MaxInflight).
	AdmitQueue, AttestQueue, Inflight int
}

// Stats reads the counters and queue depths (briefly taking the queues'
// locks and the read lock).
func (n *Node) Stats() Stats {
	var st Stats
	for k := range n.stats.txs {
		for o := range n.stats.txs[k] {
			st.Txs[k][o] = n.stats.txs[k][o].Load()
		}
	}
	n.mu.RLock()
	st.AdmitQueue, st.AttestQueue = n.admitQ.len(), n.attestQ.len()
	st.Inflight = int(n.inflight.Load())
	n.mu.RUnlock()
	return st
}

// Histograms returns the node's histograms, to register with a Prometheus
// registry.
func (n *Node) Histograms() []prometheus.Collector {
	s := &n.stats
	return []prometheus.Collector{s.tickSeconds, s.tickHoldSeconds, s.tickDownstreamSeconds, s.tickIntents, s.commitSeconds, s.commitItems, s.storeSeconds, s.attestSeconds}
}

// len is the number of items queued.
func (q *queue[T]) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}
