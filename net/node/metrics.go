package node

import (
	"sync"
	"time"

	"github.com/holiman/uint256"
	"github.com/prometheus/client_golang/prometheus"
)

// metricsWindowSeconds is how far back svc_metrics averages.
const metricsWindowSeconds = 10

// metrics keeps per-second buckets over a sliding window: the live records
// attested in each second, and the validator signatures collected and asked
// for by the batches signed in it. Seconds are the wall clock's as of
// start-up, advanced by Go's monotonic clock: they end where the wall
// clock's seconds end, and a later wall-clock step moves nothing into
// another second. mu guards the buckets (the attester writes them,
// svc_metrics reads them), never held across anything else.
type metrics struct {
	start   time.Time
	mu      sync.Mutex
	buckets [metricsWindowSeconds + 1]bucket
	// attestSeconds is the stats' histogram of the same latency (stats.go).
	attestSeconds prometheus.Histogram
}

type bucket struct {
	second    int64
	count     uint64 // live records attested
	latencyNs int64
	gasPrice  uint256.Int // sum of effective gas prices
	// signatures and expected count validator signatures over the batches
	// attested in this second.
	signatures, expected uint64
}

func (m *metrics) second(now time.Time) int64 {
	return (m.start.UnixNano() + int64(now.Sub(m.start))) / int64(time.Second)
}

func (m *metrics) bucket(now time.Time) *bucket {
	s := m.second(now)
	b := &m.buckets[s%int64(len(m.buckets))]
	if b.second != s {
		*b = bucket{second: s}
	}
	return b
}

// observe counts e, just attested at now, unless it was replayed at
// start-up: latency and throughput measure live traffic only.
func (m *metrics) observe(now time.Time, e *Entry) {
	if e.acceptedAt.IsZero() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.bucket(now)
	b.count++
	b.latencyNs += int64(now.Sub(e.acceptedAt))
	m.attestSeconds.Observe(now.Sub(e.acceptedAt).Seconds())
	b.gasPrice.Add(&b.gasPrice, &e.Rec.EffectiveGasPrice)
}

// observeBatch counts the signatures a batch attested at now collected, of
// members asked.
func (m *metrics) observeBatch(now time.Time, signed, members int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.bucket(now)
	b.signatures += uint64(signed)
	b.expected += uint64(members)
}

// Metrics is the svc_metrics result: measured over the last
// metricsWindowSeconds complete seconds.
type Metrics struct {
	GasPrice uint256.Int // mean effective gas price of the live records; the base fee if none
	// ValidatorUptime is the fraction of the signatures asked of the
	// validators that the batches attested in the window collected; 1 when
	// no batch was attested (none asked, none missed: docs/decisions.md).
	ValidatorUptime float64
	LatencyMs       float64 // mean admission→attested time of the live records
	Throughput      float64 // live records attested per second
}

// Metrics measures the last metricsWindowSeconds complete seconds. Records
// replayed at start-up and attested since count in no figure but the
// uptime (their signatures were collected live).
// It takes no lock of the pipeline's: svc_metrics never waits for a tick.
func (n *Node) Metrics() Metrics {
	m := &n.metrics
	now := m.second(time.Now())
	var count, signatures, expected uint64
	var latency int64
	var gas uint256.Int
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.buckets {
		if b.second < now-metricsWindowSeconds || b.second >= now {
			continue // outside the window, or the still-filling current second
		}
		count += b.count
		latency += b.latencyNs
		gas.Add(&gas, &b.gasPrice)
		signatures += b.signatures
		expected += b.expected
	}
	out := Metrics{GasPrice: n.BaseFee(), ValidatorUptime: 1}
	if expected > 0 {
		out.ValidatorUptime = float64(signatures) / float64(expected)
	}
	if count > 0 {
		out.GasPrice.Div(&gas, uint256.NewInt(count))
		out.LatencyMs = float64(latency) / float64(count) / 1e6
		out.Throughput = float64(count) / metricsWindowSeconds
	}
	return out
}
