package load

import (
	"math"
	"math/bits"
	"time"
)

// Histogram layout. Values are nanoseconds. Below histLinearMax every value
// has its own bucket; above, each power of two [2^k, 2^(k+1)) is split into
// histSubCount equal buckets, so a bucket's width is at most 1/histSubCount
// (1.6 %) of its lower bound. Values above HistogramMax land in the last
// bucket; Max stays exact.
const (
	histSubBits   = 6
	histSubCount  = 1 << histSubBits
	histLinearMax = 2 * histSubCount
	histBitsMax   = 37 // 2^37 ns is about 137 s
	// HistogramMax is the largest latency a Histogram resolves; larger ones
	// count in its last bucket (Max still reports them exactly).
	HistogramMax     = time.Duration(1)<<histBitsMax - 1
	histBucketsCount = (histBitsMax - histSubBits + 1) << histSubBits
)

// Histogram is a fixed-size log-linear latency histogram. The zero value is
// empty and ready to use. It is not safe for concurrent use: the client keeps
// one per connection and merges them at the end.
type Histogram struct {
	counts [histBucketsCount]uint64
	count  uint64
	max    time.Duration
}

// histIndex returns the bucket of v (ns, v >= 0).
func histIndex(v uint64) int {
	if v < histLinearMax {
		return int(v)
	}
	if v > uint64(HistogramMax) {
		v = uint64(HistogramMax)
	}
	shift := bits.Len64(v) - (histSubBits + 1)
	return shift<<histSubBits + int(v>>shift)
}

// histUpper returns the largest value that falls into bucket i.
func histUpper(i int) uint64 {
	if i < histLinearMax {
		return uint64(i)
	}
	shift := i>>histSubBits - 1
	mantissa := uint64(i - shift<<histSubBits)
	return (mantissa+1)<<shift - 1
}

// Record adds one latency; negative values count as zero.
func (h *Histogram) Record(d time.Duration) {
	d = max(d, 0)
	h.counts[histIndex(uint64(d))]++
	h.count++
	h.max = max(h.max, d)
}

// Merge adds every value recorded in o to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.count += o.count
	h.max = max(h.max, o.max)
}

// Count returns how many values were recorded.
func (h *Histogram) Count() uint64 { return h.count }

// Max returns the largest recorded value, exactly.
func (h *Histogram) Max() time.Duration { return h.max }

// Quantile returns the value below or at which a fraction q (0..1] of the
// recorded values lie, rounded up to its bucket's upper bound (never above
// Max). An empty histogram gives 0.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.count == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.count)))
	rank = min(max(rank, 1), h.count)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(histUpper(i)), h.max)
		}
	}
	return h.max
}
