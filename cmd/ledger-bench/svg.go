package main

import (
	"bytes"
	"fmt"
	"html"
	"math"
)

// Chart geometry, in SVG user units.
const (
	chartW, chartH = 760, 260
	padL, padR     = 70, 150 // the legend sits right of the plot
	padT, padB     = 30, 40
)

// nodeColors are the colours of nodes A and B; probeColors of their
// probes, tickColors of their tick p99.
var (
	nodeColors  = [...]string{"#1f77b4", "#d62728"}
	probeColors = [...]string{"#2ca02c", "#ff7f0e"}
	tickColors  = [...]string{"#9467bd", "#8c564b"}
)

// series is one polyline of a chart.
type series struct {
	name   string
	color  string
	dashed bool
	pts    [][2]float64
}

// svg draws latency and throughput over time, and, for a ramp, latency and
// achieved rate per offered rate. The probe's p99 (per second, and its
// median per step) and the tick p99 (per run, and its median per step) are
// series of their own in the latency charts, drawn when measured.
func (r *report) svg() []byte {
	var lat, thr, rampLat, rampThr []series
	for ni, n := range r.Nodes {
		color := nodeColors[ni%len(nodeColors)]
		p50 := series{name: n.Name + " p50", color: color, dashed: true}
		p99 := series{name: n.Name + " p99", color: color}
		ok := series{name: n.Name + " achieved", color: color}
		off := series{name: n.Name + " offered", color: color, dashed: true}
		for _, s := range n.Steps {
			for _, run := range s.Runs {
				prev := 0.0
				for _, w := range run.Windows {
					x := run.StartS + w.EndS
					if w.OK > 0 {
						p50.pts = append(p50.pts, [2]float64{x, w.P50Ms})
						p99.pts = append(p99.pts, [2]float64{x, w.P99Ms})
					}
					if span := w.EndS - prev; span > 0 {
						ok.pts = append(ok.pts, [2]float64{x, float64(w.OK) / span})
						off.pts = append(off.pts, [2]float64{x, float64(w.Offered) / span})
					}
					prev = w.EndS
				}
			}
		}
		lat = append(lat, p50, p99)
		lat = append(lat, extraSeries(n, ni)...)
		thr = append(thr, off, ok)
		rp50 := series{name: n.Name + " p50", color: color, dashed: true}
		rp99 := series{name: n.Name + " p99", color: color}
		rok := series{name: n.Name + " achieved", color: color}
		for _, s := range n.Steps {
			rp50.pts = append(rp50.pts, [2]float64{s.Rate, s.Median.P50Ms})
			rp99.pts = append(rp99.pts, [2]float64{s.Rate, s.Median.P99Ms})
			rok.pts = append(rok.pts, [2]float64{s.Rate, s.Median.Achieved})
		}
		rampLat = append(rampLat, rp50, rp99)
		rampLat = append(rampLat, rampExtraSeries(n, ni)...)
		rampThr = append(rampThr, rok)
	}
	charts := [][]byte{
		chart("latency from the intended send time, per second (ms, log)", "time (s, runs one after another)", lat, true),
		chart("throughput per second (requests/s)", "time (s, runs one after another)", thr, false),
	}
	if len(r.Nodes[0].Steps) > 1 {
		ideal := series{name: "offered", color: "#888", dashed: true}
		for _, s := range r.Nodes[0].Steps {
			ideal.pts = append(ideal.pts, [2]float64{s.Rate, s.Rate})
		}
		charts = append(charts,
			chart("median latency per offered rate (ms, log)", "offered rate (requests/s)", rampLat, true),
			chart("median achieved rate per offered rate", "offered rate (requests/s)", append(rampThr, ideal), false))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n",
		chartW, chartH*len(charts)+30)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="8" y="18" font-size="13">ledger-bench: %s, %d connections</text>`+"\n",
		html.EscapeString(r.Scenario), r.Conns)
	for i, c := range charts {
		fmt.Fprintf(&b, `<g transform="translate(0,%d)">`+"\n%s</g>\n", 30+i*chartH, c)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// extraSeries are node n's probe p99 per second and tick p99 per run (a
// level across the run), each when measured.
func extraSeries(n *nodeReport, ni int) []series {
	probe := series{name: n.Name + " probe p99", color: probeColors[ni%len(probeColors)]}
	tick := series{name: n.Name + " tick p99", color: tickColors[ni%len(tickColors)], dashed: true}
	for _, s := range n.Steps {
		for _, run := range s.Runs {
			if p := run.Probe; p != nil {
				for _, w := range p.Windows {
					if w.OK > 0 {
						probe.pts = append(probe.pts, [2]float64{run.StartS + w.EndS, w.P99Ms})
					}
				}
			}
			if t := run.Tick; t != nil && t.Count > 0 {
				end := run.StartS + max(run.ElapsedS, probeElapsed(run))
				tick.pts = append(tick.pts, [2]float64{run.StartS, t.P99Ms}, [2]float64{end, t.P99Ms})
			}
		}
	}
	return nonEmpty(probe, tick)
}

// rampExtraSeries are node n's median probe p99 and tick p99 per offered
// rate, each when measured.
func rampExtraSeries(n *nodeReport, ni int) []series {
	probe := series{name: n.Name + " probe p99", color: probeColors[ni%len(probeColors)]}
	tick := series{name: n.Name + " tick p99", color: tickColors[ni%len(tickColors)], dashed: true}
	for _, s := range n.Steps {
		if p := s.ProbeMedian; p != nil {
			probe.pts = append(probe.pts, [2]float64{s.Rate, p.P99Ms})
		}
		if t := s.TickMedian; t != nil && t.Count > 0 {
			tick.pts = append(tick.pts, [2]float64{s.Rate, t.P99Ms})
		}
	}
	return nonEmpty(probe, tick)
}

func probeElapsed(run *runReport) float64 {
	if run.Probe == nil {
		return 0
	}
	return run.Probe.ElapsedS
}

// nonEmpty drops the series without points.
func nonEmpty(ss ...series) []series {
	out := ss[:0]
	for _, s := range ss {
		if len(s.pts) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// chart draws the series in one plot with axes, grid and legend.
func chart(title, xlabel string, ss []series, logY bool) []byte {
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.pts {
			if logY && p[1] <= 0 {
				continue
			}
			xmin, xmax = math.Min(xmin, p[0]), math.Max(xmax, p[0])
			ymin, ymax = math.Min(ymin, p[1]), math.Max(ymax, p[1])
		}
	}
	if math.IsInf(xmin, 0) { // nothing to draw
		xmin, xmax, ymin, ymax = 0, 1, 1, 10
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	fy := func(v float64) float64 { return v }
	var ticks []float64
	if logY {
		ymin, ymax = math.Pow(10, math.Floor(math.Log10(ymin))), math.Pow(10, math.Ceil(math.Log10(ymax)))
		if ymax == ymin {
			ymax = ymin * 10
		}
		for v := ymin; v <= ymax*1.0001; v *= 10 {
			ticks = append(ticks, v)
		}
		fy = math.Log10
	} else {
		ymin, ymax = 0, niceCeil(ymax)
		for i := range 5 {
			ticks = append(ticks, ymax*float64(i)/4)
		}
	}
	pw, ph := float64(chartW-padL-padR), float64(chartH-padT-padB)
	px := func(x float64) float64 { return padL + (x-xmin)/(xmax-xmin)*pw }
	py := func(y float64) float64 { return padT + ph - (fy(y)-fy(ymin))/(fy(ymax)-fy(ymin))*ph }
	var b bytes.Buffer
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="12">%s</text>`+"\n", padL, html.EscapeString(title))
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#333"/>`+"\n", padL, padT, pw, ph)
	for _, t := range ticks {
		y := py(t)
		fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
			padL, padL+pw, y, y, padL-4, y+4, num(t))
	}
	for i := range 5 {
		x := xmin + (xmax-xmin)*float64(i)/4
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", px(x), padT+ph+14, num(x))
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%d" text-anchor="middle">%s</text>`+"\n", padL+pw/2, chartH-8, html.EscapeString(xlabel))
	for i, s := range ss {
		var pts bytes.Buffer
		for _, p := range s.pts {
			if logY && p[1] <= 0 {
				continue
			}
			fmt.Fprintf(&pts, "%.1f,%.1f ", px(p[0]), py(p[1]))
		}
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="5,3"`
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5"%s points="%s"/>`+"\n", s.color, dash, pts.String())
		ly := padT + 10 + 16*i
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/><text x="%.0f" y="%d">%s</text>`+"\n",
			padL+pw+10, padL+pw+34, ly, ly, s.color, dash, padL+pw+38, ly+4, html.EscapeString(s.name))
	}
	return b.Bytes()
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// num formats an axis value briefly.
func num(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 1000:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.4g", v)
	}
	return fmt.Sprintf("%.2g", v)
}
