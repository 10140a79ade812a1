package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/ledgervenue/node/bench/load"
)

// report is the whole measurement; its JSON form is documented in
// docs/load.md (schema version reportVersion).
type report struct {
	Version   int           `json:"version"`
	Scenario  string        `json:"scenario"`
	Conns     int           `json:"conns"`
	DurationS float64       `json:"duration_s"`
	Runs      int           `json:"runs"`
	P99MaxMs  float64       `json:"p99_max_ms"`
	Nodes     []*nodeReport `json:"nodes"`
	// Ratios are node A's medians over node B's, per rate step (with
	// --compare only).
	Ratios []*ratio `json:"ratios,omitempty"`
}

// reportVersion is the JSON schema's version.
const reportVersion = 1

type nodeReport struct {
	Name  string        `json:"name"`
	URL   string        `json:"url"`
	Steps []*stepReport `json:"steps"`
	// KneeRate is the first offered rate whose median achieved rate fell
	// below 95 % of it or whose median p99 exceeded p99_max_ms; 0: none.
	KneeRate float64 `json:"knee_rate"`
}

type stepReport struct {
	Rate   float64      `json:"rate"` // offered, per second (idle: 0)
	Runs   []*runReport `json:"runs"`
	Median *summary     `json:"median"` // per field, over the runs
	// ProbeMedian and TickMedian are the probe's and the ticks' figures,
	// per field over the runs (with --probe, --metrics only).
	ProbeMedian *probeSummary `json:"probe_median,omitempty"`
	TickMedian  *tickSummary  `json:"tick_median,omitempty"`
}

// summary is one run's figures, or their medians over runs.
type summary struct {
	Achieved float64 `json:"achieved"` // accepted answers per second
	P50Ms    float64 `json:"p50_ms"`
	P90Ms    float64 `json:"p90_ms"`
	P99Ms    float64 `json:"p99_ms"`
	P999Ms   float64 `json:"p999_ms"`
	MaxMs    float64 `json:"max_ms"`
	// Service time: from the request's write to its answer.
	ServiceP50Ms float64 `json:"service_p50_ms"`
	ServiceP99Ms float64 `json:"service_p99_ms"`
}

type runReport struct {
	summary
	Offered  int64   `json:"offered"` // requests that fell due
	Done     int64   `json:"done"`    // answers
	OK       int64   `json:"ok"`      // answers accepted
	Errors   int64   `json:"errors"`  // answers refused plus requests never answered
	ElapsedS float64 `json:"elapsed_s"`
	// StartS is when the run began on the report's time axis (the runs'
	// elapsed times added up, in the order they ran).
	StartS  float64        `json:"start_s"`
	Windows []windowReport `json:"windows"`
	Subs    *subsResult    `json:"subs,omitempty"`
	Probe   *probeReport   `json:"probe,omitempty"`
	Tick    *tickSummary   `json:"tick,omitempty"`
	// FirstRefusal is the first answer the scenario did not accept.
	FirstRefusal string `json:"first_refusal,omitempty"`
}

// windowReport is one second (load.DefaultWindow) of a run.
type windowReport struct {
	EndS    float64 `json:"end_s"` // since the run's start
	Offered int64   `json:"offered"`
	OK      int64   `json:"ok"`
	Errors  int64   `json:"errors"`
	P50Ms   float64 `json:"p50_ms"`
	P99Ms   float64 `json:"p99_ms"`
	P999Ms  float64 `json:"p999_ms"`
	MaxMs   float64 `json:"max_ms"`
}

// probeSummary is the probe's figures in one run, or their medians over
// runs: latency from the intended send time, as the scenario's.
type probeSummary struct {
	Achieved float64 `json:"achieved"` // accepted answers per second
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
	P999Ms   float64 `json:"p999_ms"`
	MaxMs    float64 `json:"max_ms"`
}

// probeReport is what the probe measured during one run.
type probeReport struct {
	Kind  string  `json:"kind"`
	Rate  float64 `json:"rate"` // offered, per second
	Conns int     `json:"conns"`
	probeSummary
	Offered      int64          `json:"offered"`
	OK           int64          `json:"ok"`
	Errors       int64          `json:"errors"`
	ElapsedS     float64        `json:"elapsed_s"`
	Windows      []windowReport `json:"windows"`
	FirstRefusal string         `json:"first_refusal,omitempty"`
}

type ratio struct {
	Rate     float64 `json:"rate"`
	Achieved float64 `json:"achieved"`
	P50      float64 `json:"p50"`
	P99      float64 `json:"p99"`
	ProbeP99 float64 `json:"probe_p99,omitempty"` // with --probe
}

func newRunReport(oc *outcome, start time.Duration) *runReport {
	r := oc.res
	h, s := &r.Latency, &r.Service
	return &runReport{summary: summary{Achieved: r.Achieved(), P50Ms: ms(h.Quantile(0.5)), P90Ms: ms(h.Quantile(0.9)),
		P99Ms: ms(h.Quantile(0.99)), P999Ms: ms(h.Quantile(0.999)), MaxMs: ms(h.Max()),
		ServiceP50Ms: ms(s.Quantile(0.5)), ServiceP99Ms: ms(s.Quantile(0.99))},
		Offered: r.Offered, Done: r.Done, OK: r.OK, Errors: r.Errors, ElapsedS: r.Elapsed.Seconds(),
		StartS: start.Seconds(), Windows: windowReports(r.Windows), Subs: oc.subs, Probe: oc.probe, Tick: oc.tick,
		FirstRefusal: oc.refusal}
}

func newProbeReport(p *probeSpec, r *load.OpenResult, refusal string) *probeReport {
	h := &r.Latency
	return &probeReport{Kind: p.kind, Rate: p.rate, Conns: p.conns,
		probeSummary: probeSummary{Achieved: r.Achieved(), P50Ms: ms(h.Quantile(0.5)), P99Ms: ms(h.Quantile(0.99)),
			P999Ms: ms(h.Quantile(0.999)), MaxMs: ms(h.Max())},
		Offered: r.Offered, OK: r.OK, Errors: r.Errors, ElapsedS: r.Elapsed.Seconds(), Windows: windowReports(r.Windows),
		FirstRefusal: refusal}
}

func windowReports(ws []load.Window) []windowReport {
	out := make([]windowReport, 0, len(ws))
	for _, w := range ws {
		out = append(out, windowReport{EndS: w.End.Seconds(), Offered: w.Offered, OK: w.OK,
			Errors: w.Errors, P50Ms: ms(w.P50), P99Ms: ms(w.P99), P999Ms: ms(w.P999), MaxMs: ms(w.Max)})
	}
	return out
}

// finish computes the medians, the knees and the ratios.
func (r *report) finish(kneeFraction float64, p99Max time.Duration) {
	r.Version = reportVersion
	for _, n := range r.Nodes {
		for _, s := range n.Steps {
			s.median()
			if s.Rate > 0 && n.KneeRate == 0 && (s.Median.Achieved < kneeFraction*s.Rate || s.Median.P99Ms > ms(p99Max)) {
				n.KneeRate = s.Rate
			}
		}
	}
	if len(r.Nodes) < 2 {
		return
	}
	for i, a := range r.Nodes[0].Steps {
		b := r.Nodes[1].Steps[i].Median
		q := &ratio{Rate: a.Rate, Achieved: div(a.Median.Achieved, b.Achieved),
			P50: div(a.Median.P50Ms, b.P50Ms), P99: div(a.Median.P99Ms, b.P99Ms)}
		if pa, pb := a.ProbeMedian, r.Nodes[1].Steps[i].ProbeMedian; pa != nil && pb != nil {
			q.ProbeP99 = div(pa.P99Ms, pb.P99Ms)
		}
		r.Ratios = append(r.Ratios, q)
	}
}

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// median sets the step's medians over its runs: the scenario's, the
// probe's and the ticks' (when every run has them).
func (s *stepReport) median() {
	s.Median = &summary{}
	medianFields(s.Median, s.Runs, func(r *runReport) *summary { return &r.summary },
		func(m *summary) []*float64 {
			return []*float64{&m.Achieved, &m.P50Ms, &m.P90Ms, &m.P99Ms, &m.P999Ms, &m.MaxMs, &m.ServiceP50Ms, &m.ServiceP99Ms}
		})
	probes, ticks := true, true
	for _, r := range s.Runs {
		probes, ticks = probes && r.Probe != nil, ticks && r.Tick != nil
	}
	if probes {
		s.ProbeMedian = &probeSummary{}
		medianFields(s.ProbeMedian, s.Runs, func(r *runReport) *probeSummary { return &r.Probe.probeSummary },
			func(m *probeSummary) []*float64 {
				return []*float64{&m.Achieved, &m.P50Ms, &m.P99Ms, &m.P999Ms, &m.MaxMs}
			})
	}
	if ticks {
		s.TickMedian = &tickSummary{}
		medianFields(s.TickMedian, s.Runs, func(r *runReport) *tickSummary { return r.Tick },
			func(m *tickSummary) []*float64 { return []*float64{&m.Count, &m.P50Ms, &m.P99Ms} })
		held := make([]float64, 0, len(s.Runs))
		for _, r := range s.Runs {
			if r.Tick.HoldP99Ms != nil {
				held = append(held, *r.Tick.HoldP99Ms)
			}
		}
		if len(held) == len(s.Runs) { // the upper median, as medianFields
			slices.Sort(held)
			s.TickMedian.HoldP99Ms = &held[len(held)/2]
		}
	}
}

// medianFields sets each field of dst to its median over the runs (the
// upper one of an even count); of picks a run's figures, fields lists a
// figures' fields in a fixed order.
func medianFields[S any](dst *S, runs []*runReport, of func(*runReport) *S, fields func(*S) []*float64) {
	for f, d := range fields(dst) {
		vs := make([]float64, len(runs))
		for i, r := range runs {
			vs[i] = *fields(of(r))[f]
		}
		slices.Sort(vs)
		*d = vs[len(vs)/2]
	}
}

// errors returns the failed requests over all runs.
func (r *report) errors() int64 {
	var n int64
	for _, nd := range r.Nodes {
		for _, s := range nd.Steps {
			for _, run := range s.Runs {
				n += run.Errors
				if run.Probe != nil {
					n += run.Probe.Errors
				}
			}
		}
	}
	return n
}

// writeTable prints the medians per node and rate step (the probe's and
// the tick p99 in columns of their own), the knees and the ratios.
func (r *report) writeTable(w io.Writer) {
	fmt.Fprintf(w, "scenario %s, %d connections, %v per run, %d run(s) per step; latency from the intended send time (ms)\n",
		r.Scenario, r.Conns, time.Duration(r.DurationS*float64(time.Second)), r.Runs)
	probe, tick := r.extras()
	if probe != nil {
		fmt.Fprintf(w, "probe: %s at %.0f/s on %d connections of its own, beside the scenario in every run\n", probe.Kind, probe.Rate, probe.Conns)
	}
	if tick {
		fmt.Fprintf(w, "tick p99: %s over each run, from the node's /metrics (interpolated in its buckets); in brackets, %s, the part holding the sequencer's lock, when the node has it\n", tickMetric, holdMetric)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "node\toffered/s\tachieved/s\tp50\tp90\tp99\tp99.9\tmax\tsvc p50\tsvc p99\terrors\t"
	if probe != nil {
		head += "probe/s\tprobe p50\tprobe p99\tprobe p99.9\tprobe max\tprobe err\t"
	}
	if tick {
		head += "tick p99\t"
	}
	fmt.Fprintln(tw, head)
	for _, n := range r.Nodes {
		for _, s := range n.Steps {
			fmt.Fprintln(tw, r.row(n.Name, s, probe != nil, tick))
		}
	}
	tw.Flush()
	for _, n := range r.Nodes {
		for _, s := range n.Steps {
			for i, run := range s.Runs {
				if sub := run.Subs; sub != nil {
					fmt.Fprintf(w, "%s %.0f/s run %d: %d %s subscribers saw %d distinct, %d notifications (%.0f/s), fan-out lag p50 %.2f ms p99 %.2f ms max %.2f ms, %d ended early\n",
						n.Name, s.Rate, i+1, sub.Subscribers, sub.Channel, sub.Heads, sub.Notifications, sub.PerSecond, sub.LagP50Ms, sub.LagP99Ms, sub.LagMaxMs, sub.Errors)
				}
			}
		}
		if len(n.Steps) > 1 {
			if n.KneeRate > 0 {
				fmt.Fprintf(w, "%s (%s): knee at %.0f/s offered\n", n.Name, n.URL, n.KneeRate)
			} else {
				fmt.Fprintf(w, "%s (%s): no knee up to %.0f/s\n", n.Name, n.URL, n.Steps[len(n.Steps)-1].Rate)
			}
		}
	}
	for _, q := range r.Ratios {
		probeRatio := ""
		if q.ProbeP99 > 0 {
			probeRatio = fmt.Sprintf(", probe p99 %.2f", q.ProbeP99)
		}
		fmt.Fprintf(w, "A/B at %.0f/s: achieved %.2f, p50 %.2f, p99 %.2f%s  (A %s, B %s)\n", q.Rate, q.Achieved, q.P50, q.P99,
			probeRatio, r.Nodes[0].URL, r.Nodes[1].URL)
	}
}

// extras returns the probe of the first run that has one (nil: no probe)
// and whether any step has tick figures.
func (r *report) extras() (*probeReport, bool) {
	var probe *probeReport
	tick := false
	for _, n := range r.Nodes {
		for _, s := range n.Steps {
			tick = tick || s.TickMedian != nil
			for _, run := range s.Runs {
				if probe == nil {
					probe = run.Probe
				}
			}
		}
	}
	return probe, tick
}

// row is one step's line of the table: the scenario's medians ("-" for
// idle, which sends none), then the probe's and the tick p99 when asked.
func (r *report) row(node string, s *stepReport, probe, tick bool) string {
	var errs, probeErrs int64
	for _, run := range s.Runs {
		errs += run.Errors
		if run.Probe != nil {
			probeErrs += run.Probe.Errors
		}
	}
	m := s.Median
	line := fmt.Sprintf("%s\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t", node, s.Rate, m.Achieved,
		m.P50Ms, m.P90Ms, m.P99Ms, m.P999Ms, m.MaxMs, m.ServiceP50Ms, m.ServiceP99Ms, errs)
	if r.Scenario == "idle" {
		line = node + "\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t"
	}
	if p := s.ProbeMedian; probe && p != nil {
		line += fmt.Sprintf("%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t", p.Achieved, p.P50Ms, p.P99Ms, p.P999Ms, p.MaxMs, probeErrs)
	} else if probe {
		line += "-\t-\t-\t-\t-\t-\t"
	}
	if t := s.TickMedian; tick && t != nil && t.HoldP99Ms != nil {
		line += fmt.Sprintf("%.2f (%.2f)\t", t.P99Ms, *t.HoldP99Ms)
	} else if t != nil && tick {
		line += fmt.Sprintf("%.2f\t", t.P99Ms)
	} else if tick {
		line += "-\t"
	}
	return line
}

func (r *report) writeJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
