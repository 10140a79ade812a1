package main

import (
	"bufio"
	"context"
	"errors"
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
// --metrics reads it before and after each run, and holdMetric, the part of
// each tick that holds the sequencer's lock, when the node has it (older
// nodes held it for the whole tick).
const (
	tickMetric = "ledgerd_auction_tick_duration_seconds"
	holdMetric = "ledgerd_auction_tick_hold_seconds"
)

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

// tickHistograms scrapes tickMetric and, when the node has it, holdMetric
// (nil otherwise).
func (m *metricsSource) tickHistograms(ctx context.Context) (tick, hold *promHistogram, err error) {
	if tick, err = m.histogram(ctx, tickMetric); err != nil {
		return nil, nil, err
	}
	if hold, err = m.histogram(ctx, holdMetric); errors.Is(err, errNoHistogram) {
		return tick, nil, nil
	}
	return tick, hold, err
}

// errNoHistogram: the scrape has no bucket of the histogram asked for.
var errNoHistogram = errors.New("no such histogram")

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
		return nil, fmt.Errorf("%w: %s", errNoHistogram, name)
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
	// HoldP99Ms is the p99 of the part of a tick that holds the
	// sequencer's lock (holdMetric); nil for a node without it.
	HoldP99Ms *float64 `json:"hold_p99_ms,omitempty"`
}

// tickDelta returns the ticks observed between two scrapes of tickMetric,
// and of holdMetric when both scrapes have it (nil: not read).
func tickDelta(before, after, holdBefore, holdAfter *promHistogram) (*tickSummary, error) {
	delta, err := histogramDelta(tickMetric, before, after)
	if err != nil {
		return nil, err
	}
	s := &tickSummary{Count: delta.counts[len(delta.counts)-1],
		P50Ms: 1e3 * delta.quantile(0.5), P99Ms: 1e3 * delta.quantile(0.99)}
	if holdBefore != nil && holdAfter != nil {
		hold, err := histogramDelta(holdMetric, holdBefore, holdAfter)
		if err != nil {
			return nil, err
		}
		p99 := 1e3 * hold.quantile(0.99)
		s.HoldP99Ms = &p99
	}
	return s, nil
}

// histogramDelta returns what histogram name observed between two scrapes.
func histogramDelta(name string, before, after *promHistogram) (*promHistogram, error) {
	if !slices.Equal(before.les, after.les) {
		return nil, fmt.Errorf("%s changed its buckets between two scrapes", name)
	}
	delta := &promHistogram{les: after.les, counts: make([]float64, len(after.counts))}
	for i := range delta.counts {
		delta.counts[i] = after.counts[i] - before.counts[i]
		if delta.counts[i] < 0 {
			return nil, fmt.Errorf("%s went down between two scrapes: was the node restarted?", name)
		}
	}
	return delta, nil
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
