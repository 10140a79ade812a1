package load

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestHistogramBuckets(t *testing.T) {
	f := func(v uint64) {
		t.Helper()
		i := histIndex(v)
		if i < 0 || i >= histBucketsCount {
			t.Fatalf("histIndex(%d) = %d out of range", v, i)
		}
		upper := histUpper(i)
		lower := uint64(0)
		if i > 0 {
			lower = histUpper(i-1) + 1
		}
		if v > uint64(HistogramMax) {
			v = uint64(HistogramMax)
		}
		if v < lower || v > upper {
			t.Fatalf("value %d in bucket %d = [%d, %d]", v, i, lower, upper)
		}
		if width := upper - lower + 1; lower >= histLinearMax && width*histSubCount > lower {
			t.Fatalf("bucket %d = [%d, %d] wider than 1/%d of its lower bound", i, lower, upper, histSubCount)
		}
	}
	for v := range uint64(4096) {
		f(v)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		f(rng.Uint64() >> rng.IntN(64))
	}
	f(uint64(HistogramMax))
	f(uint64(HistogramMax) + 1)
	f(1<<64 - 1)
	if got := histIndex(uint64(HistogramMax)); got != histBucketsCount-1 {
		t.Fatalf("HistogramMax lands in bucket %d, want the last (%d)", got, histBucketsCount-1)
	}
	if got := histUpper(histBucketsCount - 1); got != uint64(HistogramMax) {
		t.Fatalf("last bucket ends at %d, want HistogramMax %d", got, HistogramMax)
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 || h.Max() != 0 || h.Count() != 0 {
		t.Fatal("empty histogram is not zero")
	}
	for v := 1; v <= 1000; v++ {
		h.Record(time.Duration(v) * time.Microsecond)
	}
	f := func(q float64, want time.Duration) {
		t.Helper()
		got := h.Quantile(q)
		// The bucket's upper bound: at most 1/64 above the exact value.
		if got < want || got > want+want/histSubCount {
			t.Fatalf("Quantile(%v) = %v, want %v (+1/%d)", q, got, want, histSubCount)
		}
	}
	f(0.5, 500*time.Microsecond)
	f(0.9, 900*time.Microsecond)
	f(0.99, 990*time.Microsecond)
	f(1, time.Millisecond)
	f(0, time.Microsecond)
	if h.Max() != time.Millisecond || h.Count() != 1000 {
		t.Fatalf("max %v count %d", h.Max(), h.Count())
	}
}

func TestHistogramMergeAndClamp(t *testing.T) {
	var a, b Histogram
	a.Record(-time.Second) // counts as zero
	b.Record(time.Hour)    // above HistogramMax: last bucket, exact max
	a.Merge(&b)
	if a.Count() != 2 || a.Max() != time.Hour {
		t.Fatalf("count %d max %v", a.Count(), a.Max())
	}
	if got := a.Quantile(0.5); got != 0 {
		t.Fatalf("p50 = %v, want 0", got)
	}
	if got := a.Quantile(1); got != HistogramMax {
		t.Fatalf("p100 = %v, want HistogramMax", got)
	}
}
