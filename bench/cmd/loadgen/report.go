package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/ledgervenue/node/bench/load"
)

// summary is the median of each figure over a server's runs.
type summary struct {
	rate                float64
	p50, p90, p99, max  time.Duration
	errors, done, count int64
}

func summarize(rs []*load.Result) summary {
	var s summary
	s.rate = median(rs, func(r *load.Result) float64 { return r.Rate() })
	quantile := func(q float64) time.Duration {
		return time.Duration(median(rs, func(r *load.Result) float64 { return float64(r.Latency.Quantile(q)) }))
	}
	s.p50, s.p90, s.p99 = quantile(0.50), quantile(0.90), quantile(0.99)
	s.max = time.Duration(median(rs, func(r *load.Result) float64 { return float64(r.Latency.Max()) }))
	for _, r := range rs {
		s.errors += r.Errors
		s.done += r.Done
	}
	s.count = int64(len(rs))
	return s
}

// median of f over rs; the mean of the middle two for an even count.
func median(rs []*load.Result, f func(*load.Result) float64) float64 {
	if len(rs) == 0 {
		return 0
	}
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	return medianOf(v)
}

// medianOf returns the median of v (sorting it); the mean of the middle two
// for an even count, 0 for none.
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	mid := len(v) / 2
	if len(v)%2 == 0 {
		return (v[mid-1] + v[mid]) / 2
	}
	return v[mid]
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func printRun(w io.Writer, label string, r *load.Result) {
	note := ""
	if r.Exhausted {
		note = "  (ended on count)"
	}
	if r.FirstError != nil {
		note += "  first error: " + r.FirstError.Error()
	}
	fmt.Fprintf(w, "  %-18s %9.0f req/s  p50 %8v  p90 %8v  p99 %8v  max %8v  n %8d  errors %d%s\n",
		label, r.Rate(), round(r.Latency.Quantile(0.50)), round(r.Latency.Quantile(0.90)),
		round(r.Latency.Quantile(0.99)), round(r.Latency.Max()), r.Done, r.Errors, note)
}

func printSummary(w io.Writer, label string, s *summary) {
	fmt.Fprintf(w, "  %-18s %9.0f req/s  p50 %8v  p90 %8v  p99 %8v  max %8v  n %8d  errors %d (%d runs)\n",
		label, s.rate, round(s.p50), round(s.p90), round(s.p99), round(s.max), s.done, s.errors, s.count)
}

// round keeps three significant digits or so for printing.
func round(d time.Duration) time.Duration {
	switch {
	case d >= 100*time.Millisecond:
		return d.Round(time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d >= 100*time.Microsecond:
		return d.Round(time.Microsecond)
	}
	return d.Round(100 * time.Nanosecond)
}
