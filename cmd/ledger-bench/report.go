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
	Rate   float64      `json:"rate"` // offered, per second
	Runs   []*runReport `json:"runs"`
	Median *summary     `json:"median"` // per field, over the runs
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

type ratio struct {
	Rate     float64 `json:"rate"`
	Achieved float64 `json:"achieved"`
	P50      float64 `json:"p50"`
	P99      float64 `json:"p99"`
}

func newRunReport(r *load.OpenResult, subs *subsResult, refusal string, start time.Duration) *runReport {
	h, s := &r.Latency, &r.Service
	rr := &runReport{summary: summary{Achieved: r.Achieved(), P50Ms: ms(h.Quantile(0.5)), P90Ms: ms(h.Quantile(0.9)),
		P99Ms: ms(h.Quantile(0.99)), P999Ms: ms(h.Quantile(0.999)), MaxMs: ms(h.Max()),
		ServiceP50Ms: ms(s.Quantile(0.5)), ServiceP99Ms: ms(s.Quantile(0.99))},
		Offered: r.Offered, Done: r.Done, OK: r.OK, Errors: r.Errors, ElapsedS: r.Elapsed.Seconds(),
		StartS: start.Seconds(), Subs: subs, FirstRefusal: refusal}
	for _, w := range r.Windows {
		rr.Windows = append(rr.Windows, windowReport{EndS: w.End.Seconds(), Offered: w.Offered, OK: w.OK,
			Errors: w.Errors, P50Ms: ms(w.P50), P99Ms: ms(w.P99), P999Ms: ms(w.P999), MaxMs: ms(w.Max)})
	}
	return rr
}

// finish computes the medians, the knees and the ratios.
func (r *report) finish(kneeFraction float64, p99Max time.Duration) {
	r.Version = reportVersion
	for _, n := range r.Nodes {
		for _, s := range n.Steps {
			s.Median = median(s.Runs)
			if n.KneeRate == 0 && (s.Median.Achieved < kneeFraction*s.Rate || s.Median.P99Ms > ms(p99Max)) {
				n.KneeRate = s.Rate
			}
		}
	}
	if len(r.Nodes) < 2 {
		return
	}
	for i, a := range r.Nodes[0].Steps {
		b := r.Nodes[1].Steps[i].Median
		r.Ratios = append(r.Ratios, &ratio{Rate: a.Rate, Achieved: div(a.Median.Achieved, b.Achieved),
			P50: div(a.Median.P50Ms, b.P50Ms), P99: div(a.Median.P99Ms, b.P99Ms)})
	}
}

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// median takes each field's median over the runs (the upper one of an even
// count).
func median(runs []*runReport) *summary {
	fields := func(s *summary) []*float64 {
		return []*float64{&s.Achieved, &s.P50Ms, &s.P90Ms, &s.P99Ms, &s.P999Ms, &s.MaxMs, &s.ServiceP50Ms, &s.ServiceP99Ms}
	}
	m := &summary{}
	for f, dst := range fields(m) {
		vs := make([]float64, len(runs))
		for i, r := range runs {
			vs[i] = *fields(&r.summary)[f]
		}
		slices.Sort(vs)
		*dst = vs[len(vs)/2]
	}
	return m
}

// errors returns the failed requests over all runs.
func (r *report) errors() int64 {
	var n int64
	for _, nd := range r.Nodes {
		for _, s := range nd.Steps {
			for _, run := range s.Runs {
				n += run.Errors
			}
		}
	}
	return n
}

// writeTable prints the medians per node and rate step, the knees and the
// ratios.
func (r *report) writeTable(w io.Writer) {
	fmt.Fprintf(w, "scenario %s, %d connections, %v per run, %d run(s) per step; latency from the intended send time (ms)\n",
		r.Scenario, r.Conns, time.Duration(r.DurationS*float64(time.Second)), r.Runs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "node\toffered/s\tachieved/s\tp50\tp90\tp99\tp99.9\tmax\tsvc p50\tsvc p99\terrors\t")
	for _, n := range r.Nodes {
		for _, s := range n.Steps {
			m := s.Median
			var errs int64
			for _, run := range s.Runs {
				errs += run.Errors
			}
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t\n", n.Name, s.Rate, m.Achieved,
				m.P50Ms, m.P90Ms, m.P99Ms, m.P999Ms, m.MaxMs, m.ServiceP50Ms, m.ServiceP99Ms, errs)
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
		fmt.Fprintf(w, "A/B at %.0f/s: achieved %.2f, p50 %.2f, p99 %.2f  (A %s, B %s)\n", q.Rate, q.Achieved, q.P50, q.P99,
			r.Nodes[0].URL, r.Nodes[1].URL)
	}
}

func (r *report) writeJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
