package node

import (
	"time"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
)

// metricsWindowSeconds is how far back svc_metrics averages.
const metricsWindowSeconds = 10

// metrics keeps per-second buckets of attested transactions over a sliding
// window. Guarded by Node.mu.
type metrics struct {
	buckets [metricsWindowSeconds + 1]bucket
	// signatures and expected count validator signatures over all batches.
	signatures, expected uint64
}

type bucket struct {
	second    int64
	count     uint64
	latencyNs int64
	gasPrice  uint256.Int // sum of effective gas prices
}

func (m *metrics) bucket(now time.Time) *bucket {
	s := now.Unix()
	b := &m.buckets[s%int64(len(m.buckets))]
	if b.second != s {
		*b = bucket{second: s}
	}
	return b
}

func (m *metrics) observe(now time.Time, latency time.Duration, rec *core.TxRecord) {
	b := m.bucket(now)
	b.count++
	b.latencyNs += int64(latency)
	b.gasPrice.Add(&b.gasPrice, &rec.EffectiveGasPrice)
}

func (m *metrics) observeBatch(signed, members int) {
	m.signatures += uint64(signed)
	m.expected += uint64(members)
}

// Metrics is the svc_metrics result.
type Metrics struct {
	GasPrice        uint256.Int // mean effective gas price over the window; the base fee if idle
	ValidatorUptime float64     // fraction of expected validator signatures produced
	LatencyMs       float64     // mean accept→attested time over the window
	Throughput      float64     // attested records per second over the window
}

// Metrics measures the last metricsWindowSeconds complete seconds.
func (n *Node) Metrics() Metrics {
	now := time.Now().Unix()
	n.mu.RLock()
	defer n.mu.RUnlock()
	var count uint64
	var latency int64
	var gas uint256.Int
	for _, b := range n.metrics.buckets {
		if b.second < now-metricsWindowSeconds || b.second >= now {
			continue // outside the window, or the still-filling current second
		}
		count += b.count
		latency += b.latencyNs
		gas.Add(&gas, &b.gasPrice)
	}
	out := Metrics{GasPrice: n.ledger.BaseFee(), ValidatorUptime: 1}
	if n.metrics.expected > 0 {
		out.ValidatorUptime = float64(n.metrics.signatures) / float64(n.metrics.expected)
	}
	if count > 0 {
		out.GasPrice.Div(&gas, uint256.NewInt(count))
		out.LatencyMs = float64(latency) / float64(count) / 1e6
		out.Throughput = float64(count) / metricsWindowSeconds
	}
	return out
}
