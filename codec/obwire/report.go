package obwire

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/valyala/fastjson"
)

// The strategy report's wire forms (lab_strategyReport, GET
// /v1/lab/report/<account>, ledgerd replay --report): JSON and CSV, the
// same bytes wherever the same report is written. Amounts are exact
// decimal strings in whole units (quote units for PnL and volume, base
// units for inventory and volume_base, quote units per base unit for
// reference prices), trailing zeros trimmed; ratios and basis points are
// JSON numbers with a fixed number of decimals.

var (
	reportMembers  = []string{"account", "from", "to"}
	errReportQuery = jsonrpc.InvalidParams("report query: want an object {account, from?, to?}")
	errReportAcct  = jsonrpc.InvalidParams("account: want a 20-byte 0x address")
	errReportFrom  = jsonrpc.InvalidParams("from: want a time in µs (an integer or 0x quantity)")
	errReportTo    = jsonrpc.InvalidParams("to: want a time in µs (an integer or 0x quantity)")
	// ErrReportRange: to is before from.
	ErrReportRange = jsonrpc.InvalidParams("to: before from")
)

// ParseReportQuery decodes lab_strategyReport's query object {account,
// from?, to?} (from and to in µs of node time, inclusive).
func ParseReportQuery(v *fastjson.Value) (marketdata.ReportQuery, *jsonrpc.Error) {
	var q marketdata.ReportQuery
	ok, err := queryObject(v, errReportQuery, "report query", reportMembers)
	switch {
	case err != nil:
		return q, err
	case !ok:
		return q, errReportQuery
	}
	a := v.Get("account")
	if absent(a) {
		return q, errReportAcct
	}
	addr, aerr := jsonrpc.ParseAddress(a)
	if aerr != nil {
		return q, errReportAcct
	}
	q.Owner = clob.Address(addr)
	if f := v.Get("from"); !absent(f) {
		if q.FromUs, ok = parseTimestamp(f); !ok {
			return q, errReportFrom
		}
		q.HasFrom = true
	}
	if f := v.Get("to"); !absent(f) {
		if q.ToUs, ok = parseTimestamp(f); !ok {
			return q, errReportTo
		}
		q.HasTo = true
	}
	if q.HasFrom && q.HasTo && q.ToUs < q.FromUs {
		return q, ErrReportRange
	}
	return q, nil
}

// Decimal scales: a Value × 5 is in units of 1e-37 quote units (a Value
// counts 1/(2e36) of one), twice a price × 5 in 1e-19 quote units per
// base unit, a wei amount in 1e-18 units.
var (
	five     = big.NewInt(5)
	tenPow37 = new(big.Int).Exp(big.NewInt(10), big.NewInt(37), nil)
	tenPow19 = new(big.Int).Exp(big.NewInt(10), big.NewInt(19), nil)
	tenPow18 = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
)

// appendScaled appends v / 10^digits (exact: digits is v's scale) as a
// decimal, its trailing fractional zeros trimmed.
func appendScaled(dst []byte, v *big.Int, scale *big.Int, digits int) []byte {
	if v.Sign() < 0 {
		dst = append(dst, '-')
	}
	var q, r big.Int
	q.QuoRem(new(big.Int).Abs(v), scale, &r)
	dst = q.Append(dst, 10)
	if r.Sign() == 0 {
		return dst
	}
	frac := r.Text(10)
	for len(frac) < digits {
		frac = "0" + frac
	}
	for frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	return append(append(dst, '.'), frac...)
}

func appendValue(dst []byte, v *big.Int) []byte {
	return appendScaled(dst, new(big.Int).Mul(v, five), tenPow37, 37)
}

func appendPrice2(dst []byte, v *big.Int) []byte {
	return appendScaled(dst, new(big.Int).Mul(v, five), tenPow19, 19)
}

func appendWei(dst []byte, v *big.Int) []byte { return appendScaled(dst, v, tenPow18, 18) }

// appendRatio appends num/den as a number rounded to prec decimals, its
// trailing zeros trimmed, 0 when den is zero (exact rational, then
// rounded: the same bytes on any machine).
func appendRatio(dst []byte, num, den *big.Int, prec int) []byte {
	if den.Sign() == 0 {
		return append(dst, '0')
	}
	f := new(big.Rat).SetFrac(num, den).FloatString(prec)
	f = strings.TrimRight(strings.TrimRight(f, "0"), ".")
	if f == "-0" {
		f = "0" // a negative ratio rounded to zero
	}
	return append(dst, f...)
}

func quoted(dst []byte, f func([]byte) []byte) []byte {
	return append(f(append(dst, '"')), '"')
}

// appendMarkoutBps appends the markout's PnL in basis points of its
// notional (the Value over notional × 2e18, × 1e4), 4 decimals.
func appendMarkoutBps(dst []byte, m *marketdata.Markout) []byte {
	den := new(big.Int).Mul(&m.Notional, big.NewInt(2e18))
	return appendRatio(dst, new(big.Int).Mul(&m.PnL, big.NewInt(10_000)), den, 4)
}

func appendPnL(dst []byte, p *marketdata.PnL) []byte {
	for _, f := range [...]struct {
		k string
		v *big.Int
	}{{`{"total":`, &p.Total}, {`,"spread_capture":`, &p.Spread}, {`,"fees":`, &p.Fees}, {`,"funding":`, &p.Funding}, {`,"inventory":`, &p.Inventory}} {
		dst = append(dst, f.k...)
		dst = quoted(dst, func(b []byte) []byte { return appendValue(b, f.v) })
	}
	return append(dst, '}')
}

func appendMarkouts(dst []byte, ms []marketdata.Markout) []byte {
	dst = append(dst, '[')
	for i := range ms {
		m := &ms[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendIntField(dst, `{"horizon_ms":`, m.HorizonMs)
		dst = appendIntField(dst, `,"fills":`, int64(m.Fills))
		dst = appendIntField(dst, `,"pending":`, int64(m.Pending))
		dst = append(dst, `,"pnl":`...)
		dst = quoted(dst, func(b []byte) []byte { return appendValue(b, &m.PnL) })
		dst = append(dst, `,"avg_bps":`...)
		dst = appendMarkoutBps(dst, m)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendCounts appends the fills, maker_fills, taker_fills, volume and
// fill_ratio members.
func appendCounts(dst []byte, r *marketdata.MarketReport) []byte {
	dst = appendIntField(dst, `"fills":`, int64(r.Fills))
	dst = appendIntField(dst, `,"maker_fills":`, int64(r.Maker))
	dst = appendIntField(dst, `,"taker_fills":`, int64(r.Taker))
	dst = append(dst, `,"volume":`...)
	dst = quoted(dst, func(b []byte) []byte { return appendWei(b, &r.Volume) })
	dst = append(dst, `,"fill_ratio":`...)
	return appendRatio(dst, &r.Filled, &r.Placed, 6)
}

// AppendReport appends the lab_strategyReport object (docs/lab.md, "The
// strategy report").
func AppendReport(dst []byte, r *marketdata.Report) []byte {
	dst = append(dst, `{"account":`...)
	dst = jsonrpc.AppendData(dst, r.Owner[:])
	dst = appendIntField(dst, `,"from":`, r.FromUs)
	dst = appendIntField(dst, `,"to":`, r.ToUs)
	dst = append(dst, `,"quote":"`+marketdata.ReportQuote+`","complete":`...)
	dst = strconv.AppendBool(dst, r.Complete)
	dst = append(dst, `,"pnl":`...)
	dst = appendPnL(dst, &r.Total.PnL)
	dst = append(dst, ',')
	dst = appendCounts(dst, &r.Total)
	dst = append(dst, `,"max_drawdown":`...)
	dst = quoted(dst, func(b []byte) []byte { return appendValue(b, &r.MaxDrawdown) })
	dst = append(dst, `,"markouts":`...)
	dst = appendMarkouts(dst, r.Total.Markouts[:])
	dst = append(dst, `,"markets":[`...)
	span := big.NewInt(r.ToUs - r.FromUs)
	for i := range r.Markets {
		m := &r.Markets[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"market":`...)
		dst = strconv.AppendQuote(dst, m.Config.Name)
		dst = append(dst, `,"orderbook_id":`...)
		dst = jsonrpc.AppendData(dst, m.Config.ID[:])
		dst = append(dst, `,"kind":`...)
		dst = appendKind(dst, m.Config.Kind)
		dst = append(dst, `,"quote":`...)
		dst = strconv.AppendQuote(dst, m.Config.QuoteSymbol)
		dst = append(dst, `,"in_totals":`...)
		dst = strconv.AppendBool(dst, m.InTotals)
		dst = append(dst, `,"pnl":`...)
		dst = appendPnL(dst, &m.PnL)
		dst = append(dst, ',')
		dst = appendCounts(dst, m)
		dst = append(dst, `,"volume_base":`...)
		dst = quoted(dst, func(b []byte) []byte { return appendWei(b, &m.Filled) })
		dst = append(dst, `,"top_of_book":{"bid":`...)
		dst = appendRatio(dst, big.NewInt(m.TopUs[clob.Buy]), span, 6)
		dst = append(dst, `,"ask":`...)
		dst = appendRatio(dst, big.NewInt(m.TopUs[clob.Sell]), span, 6)
		dst = append(dst, `},"markouts":`...)
		dst = appendMarkouts(dst, m.Markouts[:])
		for _, f := range [...]struct {
			k     string
			v     *big.Int
			price bool
		}{{`,"inventory_start":`, &m.InvStart, false}, {`,"inventory_end":`, &m.InvEnd, false}, {`,"reference_start":`, &m.RefStart2, true}, {`,"reference_end":`, &m.RefEnd2, true}} {
			dst = append(dst, f.k...)
			if f.price {
				dst = quoted(dst, func(b []byte) []byte { return appendPrice2(b, f.v) })
			} else {
				dst = quoted(dst, func(b []byte) []byte { return appendWei(b, f.v) })
			}
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `],"series":[`...)
	for i := range r.Series {
		p := &r.Series[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendIntField(dst, `{"t":`, p.TUs)
		dst = append(dst, `,"pnl":`...)
		dst = quoted(dst, func(b []byte) []byte { return appendValue(b, &p.PnL) })
		dst = append(dst, `,"inventory":{`...)
		for j := range p.Inventory {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendQuote(dst, r.Markets[j].Config.Name)
			dst = append(dst, ':')
			dst = quoted(dst, func(b []byte) []byte { return appendWei(b, &p.Inventory[j]) })
		}
		dst = append(dst, "}}"...)
	}
	return append(dst, "]}"...)
}

func appendKind(dst []byte, k clob.MarketKind) []byte {
	if k == clob.Perp {
		return append(dst, `"perp"`...)
	}
	return append(dst, `"spot"`...)
}

// ReportCSVHeader names the columns of AppendReportCSV's rows.
const ReportCSVHeader = "market,orderbook_id,kind,quote,in_totals,pnl_total,spread_capture,fees,funding,inventory," +
	"fills,maker_fills,taker_fills,volume,volume_base,fill_ratio,top_bid,top_ask," +
	"markout_1s_pnl,markout_1s_bps,markout_1s_fills,markout_1s_pending," +
	"markout_10s_pnl,markout_10s_bps,markout_10s_fills,markout_10s_pending," +
	"markout_60s_pnl,markout_60s_bps,markout_60s_fills,markout_60s_pending," +
	"inventory_start,inventory_end,reference_start,reference_end\n"

// AppendReportCSV appends the report's per-market table: ReportCSVHeader,
// one row per market, then a row "TOTAL" (the totals; its market columns
// empty). Values as in the JSON, unquoted (no number holds a comma); a
// name holding one is quoted (appendCSVField).
func AppendReportCSV(dst []byte, r *marketdata.Report) []byte {
	dst = append(dst, ReportCSVHeader...)
	span := big.NewInt(r.ToUs - r.FromUs)
	row := func(dst []byte, m *marketdata.MarketReport) []byte {
		for _, v := range [...]*big.Int{&m.PnL.Total, &m.PnL.Spread, &m.PnL.Fees, &m.PnL.Funding, &m.PnL.Inventory} {
			dst = append(appendValue(dst, v), ',')
		}
		for _, n := range [...]int{m.Fills, m.Maker, m.Taker} {
			dst = append(strconv.AppendInt(dst, int64(n), 10), ',')
		}
		dst = append(appendWei(dst, &m.Volume), ',')
		if m.Config != nil {
			dst = appendWei(dst, &m.Filled)
		}
		dst = append(appendRatio(append(dst, ','), &m.Filled, &m.Placed, 6), ',')
		if m.Config != nil {
			dst = appendRatio(dst, big.NewInt(m.TopUs[clob.Buy]), span, 6)
			dst = appendRatio(append(dst, ','), big.NewInt(m.TopUs[clob.Sell]), span, 6)
		} else {
			dst = append(dst, ',')
		}
		for i := range m.Markouts {
			mk := &m.Markouts[i]
			dst = appendValue(append(dst, ','), &mk.PnL)
			dst = appendMarkoutBps(append(dst, ','), mk)
			dst = strconv.AppendInt(append(dst, ','), int64(mk.Fills), 10)
			dst = strconv.AppendInt(append(dst, ','), int64(mk.Pending), 10)
		}
		if m.Config == nil {
			return append(dst, ",,,,\n"...)
		}
		dst = appendWei(append(dst, ','), &m.InvStart)
		dst = appendWei(append(dst, ','), &m.InvEnd)
		dst = appendPrice2(append(dst, ','), &m.RefStart2)
		dst = appendPrice2(append(dst, ','), &m.RefEnd2)
		return append(dst, '\n')
	}
	for i := range r.Markets {
		m := &r.Markets[i]
		dst = appendCSVField(dst, m.Config.Name)
		dst = append(dst, ',')
		dst = append(dst, jsonrpc.AppendData(nil, m.Config.ID[:])[1:67]...) // 0x and 64 digits, unquoted
		dst = append(dst, ',')
		if m.Config.Kind == clob.Perp {
			dst = append(dst, "perp,"...)
		} else {
			dst = append(dst, "spot,"...)
		}
		dst = appendCSVField(dst, m.Config.QuoteSymbol)
		dst = strconv.AppendBool(append(dst, ','), m.InTotals)
		dst = row(append(dst, ','), m)
	}
	dst = append(dst, "TOTAL,,,"+marketdata.ReportQuote+",true,"...)
	return row(dst, &r.Total)
}

// AppendReportSeriesCSV appends the report's series: a header "t,pnl"
// then one inventory column per market (its name), and one row per point.
func AppendReportSeriesCSV(dst []byte, r *marketdata.Report) []byte {
	dst = append(dst, "t,pnl"...)
	for i := range r.Markets {
		dst = appendCSVField(append(dst, ','), r.Markets[i].Config.Name)
	}
	dst = append(dst, '\n')
	for i := range r.Series {
		p := &r.Series[i]
		dst = strconv.AppendInt(dst, p.TUs, 10)
		dst = appendValue(append(dst, ','), &p.PnL)
		for j := range p.Inventory {
			dst = appendWei(append(dst, ','), &p.Inventory[j])
		}
		dst = append(dst, '\n')
	}
	return dst
}

// appendCSVField appends a name as a CSV field: quoted (its quotes
// doubled) when it holds a comma, a quote or a line break (RFC 4180).
func appendCSVField(dst []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(dst, s...)
	}
	return append(append(dst, '"'), append([]byte(strings.ReplaceAll(s, `"`, `""`)), '"')...)
}

// appendIntField appends key (its punctuation included) and v.
func appendIntField(dst []byte, key string, v int64) []byte {
	return strconv.AppendInt(append(dst, key...), v, 10)
}

// ReportFormat is a wire form of the report.
type ReportFormat uint8

const (
	ReportJSON      ReportFormat = iota // AppendReport
	ReportCSV                           // AppendReportCSV
	ReportSeriesCSV                     // AppendReportSeriesCSV
)

// ReportFormats names the formats, as ?format= and --report-format take
// them.
var ReportFormats = map[string]ReportFormat{"json": ReportJSON, "csv": ReportCSV, "series": ReportSeriesCSV}

// AppendReportAs appends r in format f.
func AppendReportAs(dst []byte, r *marketdata.Report, f ReportFormat) []byte {
	switch f {
	case ReportCSV:
		return AppendReportCSV(dst, r)
	case ReportSeriesCSV:
		return AppendReportSeriesCSV(dst, r)
	}
	return AppendReport(dst, r)
}
