package marketdata

import (
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// The strategy report (lab_strategyReport, docs/lab.md "The strategy
// report"): what one account earned over a window and why, computed from
// its fills history (history.go) and the book samples (samples.go), both
// pure functions of the inputs, so a replay computes the same report.
//
// Amounts are exact: a Value counts quote wei × 2e18, in which a fill's
// base q (wei) at twice a reference price Ref2 (wei) is q × Ref2, a quote
// amount Q (wei) is Q × 2e18, and a funding move of S lots is S × ΔF ×
// 2e18. Nothing is rounded until the answer is written.

const (
	// ReportSeriesMax bounds the points of a report's series: a longer
	// series is thinned evenly, its first and last points kept.
	ReportSeriesMax = 1000
	// ReportQuote is the quote symbol whose markets the totals add up;
	// a market quoted in another symbol is reported on its own, outside
	// the totals.
	ReportQuote = "USD"
)

// ReportHorizonsMs are the markout horizons, in milliseconds.
var ReportHorizonsMs = [...]int64{1_000, 10_000, 60_000}

// Errors of Report; the RPC layer answers them with -32602 naming the
// field.
var (
	// ErrReportWindow: from is after to (to read as the latest tick at
	// most).
	ErrReportWindow = errors.New("from is after to")
	// ErrReportHistory: the window reaches before the kept history.
	ErrReportHistory = errors.New("the window reaches before the kept history")
)

// ReportQuery is the decoded lab_strategyReport query.
type ReportQuery struct {
	Owner          clob.Address
	FromUs, ToUs   int64
	HasFrom, HasTo bool
}

// Value is an exact amount in quote wei × 2e18 (see above).
type Value = big.Int

// PnL splits a market's (or the totals') result: Total = Spread + Fees +
// Funding + Inventory.
type PnL struct {
	Total, Spread, Fees, Funding, Inventory Value
}

func (p *PnL) add(q *PnL) {
	p.Total.Add(&p.Total, &q.Total)
	p.Spread.Add(&p.Spread, &q.Spread)
	p.Fees.Add(&p.Fees, &q.Fees)
	p.Funding.Add(&p.Funding, &q.Funding)
	p.Inventory.Add(&p.Inventory, &q.Inventory)
}

// Markout is the fills' result h after each fill, against its price.
type Markout struct {
	HorizonMs int64
	Fills     int   // fills with t + h ≤ to
	Pending   int   // fills with t + h > to, left out
	PnL       Value // Σ s·q·(r(t+h) − p)
	Notional  big.Int
}

func (m *Markout) add(o *Markout) {
	m.Fills += o.Fills
	m.Pending += o.Pending
	m.PnL.Add(&m.PnL, &o.PnL)
	m.Notional.Add(&m.Notional, &o.Notional)
}

// MarketReport is one market's part of a report, or the totals
// (Report.Total, whose market fields are zero).
type MarketReport struct {
	Config   *clob.MarketConfig // nil on the totals; the report's own copy
	InTotals bool               // quoted in ReportQuote
	PnL      PnL
	Fills    int
	Maker    int
	Taker    int
	Volume   big.Int // quote wei traded
	// Filled is the base the window's fills traded; Placed the size of
	// the orders the account placed in the window (the totals: their
	// notional at the limit price, and Filled the quote traded).
	Filled, Placed big.Int
	// TopUs is the time the account had an order at the best bid
	// (TopUs[clob.Buy]) and at the best ask, within the window.
	TopUs    [2]int64
	Markouts [len(ReportHorizonsMs)]Markout
	// Inventory at the window's start (before its first tick) and end,
	// base wei; the reference prices then, twice the price in wei.
	InvStart, InvEnd   big.Int
	RefStart2, RefEnd2 big.Int
}

// SeriesPoint is the report's state after the ticks at T: the total PnL
// since the window's start and each market's inventory (base wei, in
// Report.Markets' order).
type SeriesPoint struct {
	TUs       int64
	PnL       Value
	Inventory []big.Int
}

// Report is one lab_strategyReport answer.
type Report struct {
	Owner        clob.Address
	FromUs, ToUs int64
	// Complete is false when the account's kept fills history is full
	// (FillsPerAccount): older fills may be forgotten, and a spot
	// market's starting inventory counts only the kept ones.
	Complete    bool
	Total       MarketReport
	Markets     []MarketReport
	Series      []SeriesPoint
	MaxDrawdown Value
}

var wad2 = new(big.Int).SetUint64(2e18) // a quote wei in Value units

// reportSample is a book sample as one account's report reads it.
type reportSample struct {
	TickUs  int64
	Ref2    uint256.Int
	Funding clob.Signed
	top     [2]bool // the account is among the owners at the best bid, ask
}

// reportMarket is one market's copy of what the report reads, and its
// working state while Report walks.
type reportMarket struct {
	cfg     clob.MarketConfig
	rows    []FillRow // the account's kept fills of this book up to to, ascending
	samples []reportSample
	placed  big.Int // size of the account's orders admitted in the window
	// notional: placed at the limit price, quote wei
	notional big.Int
	rep      *MarketReport
	// walk state (series)
	cash  Value
	inv   big.Int
	ref   big.Int // Ref2 in effect
	nr    int     // rows applied
	ns    int     // samples applied
	fprev *clob.Signed
}

// ReportInput is what one report reads of the index, copied under its
// lock (ReportInput); Report computes from it without the lock.
type ReportInput struct {
	rep *Report
	ms  []*reportMarket
}

// Report computes the strategy report of q.Owner over [from, to]: the
// ReportInput's Report.
func (x *Index) Report(q *ReportQuery) (*Report, error) {
	in, err := x.ReportInput(q)
	if err != nil {
		return nil, err
	}
	return in.Report(), nil
}

// ReportInput copies what the report of q.Owner over [from, to] reads (µs
// of node time, both inclusive; from defaults to the account's oldest
// kept fill, to to the index's now): the account's kept fills up to to
// and the samples of their books from the last before from to the last
// at or before to, each reduced to its reference, funding and whether the
// account was at the top. It costs O(fills + those samples), under the
// index's lock; Report does the rest without it. Errors: ErrReportWindow, ErrReportHistory (wrapped with
// what was forgotten).
func (x *Index) ReportInput(q *ReportQuery) (*ReportInput, error) {
	r := x.fills[q.Owner]
	complete := r == nil || r.len() < FillsPerAccount
	rep := &Report{Owner: q.Owner, FromUs: q.FromUs, ToUs: q.ToUs, Complete: complete}
	if !q.HasTo || rep.ToUs > x.nowUs {
		rep.ToUs = x.nowUs // nothing is known after the latest tick
	}
	if !q.HasFrom {
		rep.FromUs = 0
		if r != nil {
			rep.FromUs = r.at(0).TickUs
			if !complete {
				rep.FromUs++ // rows of the oldest kept tick may be gone
			}
		}
	}
	if rep.ToUs < rep.FromUs {
		return nil, ErrReportWindow
	}
	if !complete && rep.FromUs <= r.at(0).TickUs {
		return nil, fmt.Errorf("%w: the account's fills up to %d are no longer all kept (FillsPerAccount %d)", ErrReportHistory, r.at(0).TickUs, FillsPerAccount)
	}
	in := &ReportInput{rep: rep}
	byBook := make(map[clob.Hash]*reportMarket)
	for i := 0; r != nil && i < r.len(); i++ {
		f := r.at(i)
		if f.TickUs > rep.ToUs {
			break
		}
		m := byBook[f.Book]
		if m == nil {
			m = &reportMarket{cfg: x.books[f.Book].cfg}
			byBook[f.Book] = m
		}
		m.rows = append(m.rows, *f)
	}
	for _, id := range x.bookIDs {
		m := byBook[id]
		if m == nil {
			continue
		}
		ss := &x.books[id].samples
		if ss.len() == SamplesPerBook && rep.FromUs <= ss.at(0).TickUs {
			return nil, fmt.Errorf("%w: the samples of %s up to %d are no longer kept (SamplesPerBook %d)", ErrReportHistory, m.cfg.Name, ss.at(0).TickUs, SamplesPerBook)
		}
		// The samples the window reads: the last one before from (the
		// reference and funding index it starts from) to the last at or
		// before to.
		tickOf := func(s *Sample) uint64 { return uint64(s.TickUs) }
		lo := max(ss.search(uint64(rep.FromUs), tickOf)-1, 0)
		hi := ss.search(uint64(rep.ToUs)+1, tickOf)
		m.samples = make([]reportSample, max(hi-lo, 0))
		for i := range m.samples {
			s := ss.at(lo + i)
			rs := &m.samples[i]
			rs.TickUs, rs.Ref2, rs.Funding = s.TickUs, s.Ref2, s.Funding
			for side := range rs.top {
				// At most TopOwnersMax: a scan of equal arrays beats a
				// binary search of byte comparisons.
				rs.top[side] = slices.Contains(s.Top[side], q.Owner)
			}
		}
		in.ms = append(in.ms, m)
	}
	if a := x.accounts[q.Owner]; a != nil {
		var t big.Int
		for _, o := range a.orders {
			m := byBook[o.Meta.Book]
			if m == nil {
				continue
			}
			// An order counts in the window its tick is in: the first of
			// its book's grid after its admission (a fired trigger's
			// order: the tick that fired it).
			land := o.Meta.AdmittedUs
			if o.Meta.Kind == KindUserSigned {
				land = (land/m.cfg.IntervalUs + 1) * m.cfg.IntervalUs
			}
			if land < rep.FromUs || land > rep.ToUs {
				continue
			}
			m.placed.Add(&m.placed, o.Meta.Size.ToBig())
			t.Mul(o.Meta.Size.ToBig(), o.Meta.Price.ToBig())
			m.notional.Add(&m.notional, t.Quo(&t, big.NewInt(1e18)))
		}
	}
	return in, nil
}

// Report computes the report from its input. An account without fills
// gets an empty report. A fill at tick t is compared with the reference
// just before t (the previous tick's state); the window starts from the
// state before its first tick.
func (in *ReportInput) Report() *Report {
	rep := in.rep
	rep.Markets = make([]MarketReport, len(in.ms))
	rep.Total.InTotals = true
	for i := range rep.Total.Markouts {
		rep.Total.Markouts[i].HorizonMs = ReportHorizonsMs[i]
	}
	for i, m := range in.ms {
		m.rep = &rep.Markets[i]
		m.rep.Config = &m.cfg
		m.rep.InTotals = m.cfg.QuoteSymbol == ReportQuote
		m.rep.Placed.Set(&m.placed)
		reportMarketFigures(m, rep)
	}
	reportSeries(rep, in.ms)
	for _, m := range in.ms {
		p := &m.rep.PnL
		p.Total.Add(&p.Spread, &p.Fees)
		p.Total.Add(&p.Total, &p.Funding)
		p.Total.Add(&p.Total, &p.Inventory)
		if m.rep.InTotals {
			addTotals(&rep.Total, m.rep)
			rep.Total.Placed.Add(&rep.Total.Placed, &m.notional)
		}
	}
	return rep
}

// addTotals adds a market's figures to the totals: the fill ratio's
// parts become notionals (quote traded, placed size at its limit price).
func addTotals(t, m *MarketReport) {
	t.PnL.add(&m.PnL)
	t.Fills += m.Fills
	t.Maker += m.Maker
	t.Taker += m.Taker
	t.Volume.Add(&t.Volume, &m.Volume)
	t.Filled.Add(&t.Filled, &m.Volume)
	for i := range t.Markouts {
		t.Markouts[i].add(&m.Markouts[i])
	}
}

// refAt returns the sample in effect at t: the last one at or before t
// (strict: before t), nil when none.
func refAt(ss []reportSample, t int64, strict bool) *reportSample {
	i, _ := slices.BinarySearchFunc(ss, t, func(s reportSample, t int64) int {
		switch {
		case s.TickUs < t, !strict && s.TickUs == t:
			return -1
		}
		return 1
	})
	if i == 0 {
		return nil
	}
	return &ss[i-1]
}

func ref2Of(s *reportSample) *big.Int {
	if s == nil {
		return new(big.Int)
	}
	return s.Ref2.ToBig()
}

// setU256 sets dst to u without allocating once dst holds 256 bits.
func setU256(dst *big.Int, u *uint256.Int) *big.Int {
	b := u.Bytes32()
	return dst.SetBytes(b[:])
}

// negIf negates v when neg (a sell's sign) and returns it.
func negIf(v *big.Int, neg bool) *big.Int {
	if neg {
		v.Neg(v)
	}
	return v
}

func signedBig(s *clob.Signed) *big.Int {
	v := s.Abs.ToBig()
	if s.Neg {
		v.Neg(v)
	}
	return v
}

// fillCash sets dst to what a fill moved the account's cash by, in
// Value: −s·Q − fee.
// scratch is a scratch value of the caller's.
func fillCash(dst, scratch *big.Int, f *FillRow) *big.Int {
	negIf(setU256(dst, &f.Quote), f.Side == clob.Buy)
	dst.Sub(dst, setU256(scratch, &f.Fee))
	return dst.Mul(dst, wad2)
}

// reportMarketFigures fills m.rep: the PnL split but funding and the
// total (reportSeries adds them), counts, markouts and time at the top.
func reportMarketFigures(m *reportMarket, rep *Report) {
	r := m.rep
	from, to := rep.FromUs, rep.ToUs
	perp := m.cfg.Kind == clob.Perp
	// Inventory at the start: a perp's position before its first fill in
	// the window (after its last before it), a spot's net fills before it.
	var q0 big.Int
	first := len(m.rows)
	for i, f := range m.rows {
		if f.TickUs >= from {
			first = i
			break
		}
	}
	switch {
	case perp && first < len(m.rows):
		pb := PositionBefore(m.rows[first].Side, &m.rows[first].Base, m.rows[first].Position)
		q0.Set(signedBig(&pb))
	case perp:
		q0.Set(signedBig(&m.rows[first-1].Position))
	default:
		for i := range m.rows[:first] {
			f := &m.rows[i]
			d := f.Base.ToBig()
			if f.Side == clob.Sell {
				d.Neg(d)
			}
			q0.Add(&q0, d)
		}
	}
	r.InvStart.Set(&q0)
	r.RefStart2.Set(ref2Of(refAt(m.samples, from, true)))
	r.RefEnd2.Set(ref2Of(refAt(m.samples, to, false)))
	for i := range r.Markouts {
		r.Markouts[i].HorizonMs = ReportHorizonsMs[i]
	}
	// Scratch values, reused for every fill: the loop allocates only
	// when a product outgrows them.
	var t, rb, rh, q, quote, qw, fee big.Int
	inv := new(big.Int).Set(&q0)
	for i := range m.rows[first:] {
		f := &m.rows[first+i]
		sell := f.Side == clob.Sell
		setU256(&q, &f.Base)
		setU256(&quote, &f.Quote)
		r.Fills++
		if f.Maker {
			r.Maker++
		} else {
			r.Taker++
		}
		r.Volume.Add(&r.Volume, &quote)
		r.Filled.Add(&r.Filled, &q)
		// r before the fill's tick; the fill's own price when the book
		// had none yet.
		if sb := refAt(m.samples, f.TickUs, true); sb != nil && !sb.Ref2.IsZero() {
			setU256(&rb, &sb.Ref2)
		} else {
			rb.Lsh(setU256(&rb, &f.Price), 1)
		}
		qw.Mul(&quote, wad2)
		// spread: s·(q·rb − Q)
		t.Mul(&q, &rb)
		r.PnL.Spread.Add(&r.PnL.Spread, negIf(t.Sub(&t, &qw), sell))
		r.PnL.Fees.Sub(&r.PnL.Fees, t.Mul(setU256(&fee, &f.Fee), wad2))
		// inventory: s·q·(r(to) − rb)
		t.Sub(&r.RefEnd2, &rb)
		t.Mul(&t, &q)
		r.PnL.Inventory.Add(&r.PnL.Inventory, negIf(&t, sell))
		inv.Add(inv, negIf(t.Set(&q), sell))
		for i := range r.Markouts {
			mk := &r.Markouts[i]
			th := f.TickUs + ReportHorizonsMs[i]*1000
			if th > to {
				mk.Pending++
				continue
			}
			rh.Set(&rb)
			if sh := refAt(m.samples, th, false); sh != nil && !sh.Ref2.IsZero() {
				setU256(&rh, &sh.Ref2)
			}
			mk.Fills++
			mk.Notional.Add(&mk.Notional, &quote)
			t.Mul(&q, &rh)
			mk.PnL.Add(&mk.PnL, negIf(t.Sub(&t, &qw), sell))
		}
	}
	r.InvEnd.Set(inv)
	t.Sub(&r.RefEnd2, &r.RefStart2)
	t.Mul(&t, &q0)
	r.PnL.Inventory.Add(&r.PnL.Inventory, &t)
	r.TopUs = topTime(m.samples, from, to)
}

// topTime returns the time within [from, to] the owner had an order at
// the best bid and at the best ask: a sample's state holds from its tick
// until the book's next sample.
func topTime(ss []reportSample, from, to int64) (us [2]int64) {
	cur := refAt(ss, from, false)
	start := from
	i, _ := slices.BinarySearchFunc(ss, from, func(s reportSample, t int64) int {
		if s.TickUs <= t {
			return -1
		}
		return 1
	})
	for {
		end := to
		if i < len(ss) && ss[i].TickUs < to {
			end = ss[i].TickUs
		}
		if cur != nil {
			for side := range us {
				if cur.top[side] {
					us[side] += end - start
				}
			}
		}
		if end == to {
			return us
		}
		cur, start = &ss[i], end
		i++
	}
}

// reportSeries walks the window's ticks where a fill, a reference or a
// funding move of a reported market happened, in time order (at one
// tick: its fills, then its reference and funding, paid on the position
// after the fills), adding each market's funding (−S × ΔF, S in lots) to
// its PnL. It builds the series (total PnL since the start: cash moved +
// inventory at the reference − the starting inventory at its reference)
// and the maximum drawdown over all of its points (the start counts as
// 0), then thins the series to ReportSeriesMax points.
func reportSeries(rep *Report, ms []*reportMarket) {
	var base, t, u big.Int // base: Σ q0·r_start, the value the PnL is counted from
	for _, m := range ms {
		m.inv.Set(&m.rep.InvStart)
		m.ref.Set(&m.rep.RefStart2)
		for m.nr < len(m.rows) && m.rows[m.nr].TickUs < rep.FromUs {
			m.nr++
		}
		for m.ns < len(m.samples) && m.samples[m.ns].TickUs < rep.FromUs {
			m.fprev = &m.samples[m.ns].Funding
			m.ns++
		}
		if m.rep.InTotals {
			base.Add(&base, t.Mul(&m.inv, &m.ref))
		}
	}
	var all []SeriesPoint
	var peak, pnl Value
	for {
		next := int64(-1)
		for _, m := range ms {
			if m.nr < len(m.rows) && (next < 0 || m.rows[m.nr].TickUs < next) {
				next = m.rows[m.nr].TickUs
			}
			if m.ns < len(m.samples) && m.samples[m.ns].TickUs <= rep.ToUs && (next < 0 || m.samples[m.ns].TickUs < next) {
				next = m.samples[m.ns].TickUs
			}
		}
		if next < 0 {
			break
		}
		moved := false
		for _, m := range ms {
			for m.nr < len(m.rows) && m.rows[m.nr].TickUs == next {
				f := &m.rows[m.nr]
				m.cash.Add(&m.cash, fillCash(&t, &u, f))
				m.inv.Add(&m.inv, negIf(setU256(&t, &f.Base), f.Side == clob.Sell))
				m.nr++
				moved = true
			}
			if m.ns < len(m.samples) && m.samples[m.ns].TickUs == next {
				s := &m.samples[m.ns]
				if !s.Ref2.IsZero() && setU256(&t, &s.Ref2).Cmp(&m.ref) != 0 {
					m.ref.Set(&t)
					moved = true
				}
				if m.fprev != nil && m.cfg.Kind == clob.Perp {
					t.Sub(signedBig(&s.Funding), signedBig(m.fprev))
					t.Mul(&t, new(big.Int).Quo(&m.inv, m.cfg.LotSize.ToBig()))
					if t.Sign() != 0 {
						t.Mul(&t, wad2)
						m.cash.Sub(&m.cash, &t)
						m.rep.PnL.Funding.Sub(&m.rep.PnL.Funding, &t)
						moved = true
					}
				}
				m.fprev = &s.Funding
				m.ns++
			}
		}
		if !moved {
			continue
		}
		p := SeriesPoint{TUs: next, Inventory: make([]big.Int, len(ms))}
		pnl.Neg(&base)
		for i, m := range ms {
			p.Inventory[i].Set(&m.inv)
			if m.rep.InTotals {
				pnl.Add(&pnl, &m.cash)
				pnl.Add(&pnl, t.Mul(&m.inv, &m.ref))
			}
		}
		p.PnL.Set(&pnl)
		if pnl.Cmp(&peak) > 0 {
			peak.Set(&pnl)
		}
		if t.Sub(&peak, &pnl); t.Cmp(&rep.MaxDrawdown) > 0 {
			rep.MaxDrawdown.Set(&t)
		}
		all = append(all, p)
	}
	rep.Series = thin(all, ReportSeriesMax)
}

// thin keeps max points of s, evenly spread, the first and last included.
func thin(s []SeriesPoint, max int) []SeriesPoint {
	if len(s) <= max {
		return s
	}
	out := make([]SeriesPoint, max)
	for i := range out {
		out[i] = s[i*(len(s)-1)/(max-1)]
	}
	return out
}
