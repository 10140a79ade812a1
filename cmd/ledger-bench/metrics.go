package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ledgervenue/node/bench/load"
)

// tickMetric is ledgerd's auction tick duration histogram (docs/metrics.md):
// --metrics reads it before and after each run.
const tickMetric = "ledgerd_auction_tick_duration_seconds"

// metricsBucketsMax bounds the buckets read from one histogram.
const metricsBucketsMax = 256

// promHistogram is one scrape of a Prometheus histogram: its bucket upper
// bounds (seconds, ascending, the last +Inf) and cumulative counts, summed
// over label sets.
type promHistogram struct {
	les    []float64
	counts []float64
}

// metricsSource scrapes one node's Prometheus endpoint.
type metricsSource struct {
	url    string
	client *http.Client
}

// newMetricsSource checks a --metrics URL: http, and loopback unless
// allowRemote, like the nodes.
func newMetricsSource(raw string, allowRemote bool) (*metricsSource, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("--metrics %q: want an http:// URL such as http://127.0.0.1:6060/metrics", raw)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	if !allowRemote {
		if err := load.CheckLoopback(addr); err != nil {
			return nil, fmt.Errorf("--metrics: %w (pass --allow-remote to read it)", err)
		}
	}
	return &metricsSource{url: raw, client: &http.Client{Timeout: setupTimeout,
		Transport: &http.Transport{DialContext: load.Dialer(allowRemote).DialContext}}}, nil
}

// histogram scrapes the histogram name.
func (m *metricsSource) histogram(ctx context.Context, name string) (*promHistogram, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot read metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("cannot read metrics: %s answered %s", m.url, resp.Status)
	}
	h, err := parseHistogram(bufio.NewScanner(resp.Body), name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.url, err)
	}
	return h, nil
}

// parseHistogram reads the buckets of histogram name from the Prometheus
// text format: lines `name_bucket{...le="0.001"...} 42`.
func parseHistogram(sc *bufio.Scanner, name string) (*promHistogram, error) {
	prefix := name + "_bucket{"
	byLe := map[float64]float64{}
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		_, le, found := strings.Cut(line[:max(end, 0)], `le="`)
		le, _, closed := strings.Cut(le, `"`)
		fields := strings.Fields(line[end+1:])
		if end < 0 || !found || !closed || len(fields) == 0 {
			return nil, fmt.Errorf("bad bucket line %q", line)
		}
		bound, err := strconv.ParseFloat(le, 64)
		if err != nil {
			return nil, fmt.Errorf("bad bucket bound in %q", line)
		}
		count, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("bad bucket count in %q", line)
		}
		if _, seen := byLe[bound]; !seen && len(byLe) == metricsBucketsMax {
			return nil, fmt.Errorf("%s has more than %d buckets", name, metricsBucketsMax)
		}
		byLe[bound] += count
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read metrics: %w", err)
	}
	if len(byLe) == 0 {
		return nil, fmt.Errorf("no %s histogram", name)
	}
	h := &promHistogram{}
	for le := range byLe {
		h.les = append(h.les, le)
	}
	slices.Sort(h.les)
	if !math.IsInf(h.les[len(h.les)-1], 1) {
		return nil, fmt.Errorf("%s has no +Inf bucket", name)
	}
	for _, le := range h.les {
		h.counts = append(h.counts, byLe[le])
	}
	return h, nil
}

// tickSummary is the auction ticks of one run, from the bucket deltas of
// tickMetric, or their medians over runs.
type tickSummary struct {
	Count float64 `json:"count"` // ticks during the run
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
}

// tickDelta returns the ticks observed between two scrapes of the same
// histogram.
func tickDelta(before, after *promHistogram) (*tickSummary, error) {
	if !slices.Equal(before.les, after.les) {
		return nil, fmt.Errorf("%s changed its buckets between two scrapes", tickMetric)
	}
	delta := &promHistogram{les: after.les, counts: make([]float64, len(after.counts))}
	for i := range delta.counts {
		delta.counts[i] = after.counts[i] - before.counts[i]
		if delta.counts[i] < 0 {
			return nil, fmt.Errorf("%s went down between two scrapes: was the node restarted?", tickMetric)
		}
	}
	return &tickSummary{Count: delta.counts[len(delta.counts)-1],
		P50Ms: 1e3 * delta.quantile(0.5), P99Ms: 1e3 * delta.quantile(0.99)}, nil
}

// quantile interpolates quantile q linearly within its bucket, as
// Prometheus's histogram_quantile does: from the bucket's lower bound (0
// for the first) to its upper one; a rank in the +Inf bucket gives the
// largest finite bound. An empty histogram gives 0.
func (h *promHistogram) quantile(q float64) float64 {
	n := len(h.counts)
	total := h.counts[n-1]
	if total == 0 {
		return 0
	}
	rank := q * total
	i, _ := slices.BinarySearch(h.counts, rank) // the first cumulative count >= rank
	i = min(i, n-1)
	if i == n-1 {
		if n == 1 {
			return 0
		}
		return h.les[n-2]
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = h.les[i-1], h.counts[i-1]
	}
	if h.counts[i] == below {
		return h.les[i]
	}
	return lower + (h.les[i]-lower)*(rank-below)/(h.counts[i]-below)
}
