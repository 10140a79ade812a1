package rpc

import (
	"errors"
	"strconv"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/codec/obwire"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/net/http1"
	"github.com/ledgervenue/node/net/server"
)

// The strategy report (docs/lab.md, "The strategy report"):
// lab_strategyReport [{account, from?, to?}] and GET
// /v1/lab/report/<account> (rest_lab.go). The report's input is copied
// from the market index under the index's own lock, not the sequencer's
// (node.ReadIndex), and computed after it is released, on a worker
// (isLabWorker): its cost grows with the account's kept fills
// (marketdata.FillsPerAccount) and its books' samples
// (marketdata.SamplesPerBook), both bounded.

// strategyReport computes one report; msg is why the index refused q
// (the -32602 data, or the REST 400's error), naming the field.
func (s *Service) strategyReport(q *marketdata.ReportQuery) (rep *marketdata.Report, msg string) {
	var in *marketdata.ReportInput
	var err error
	s.node.ReadIndex(func(x *marketdata.Index) { in, err = x.ReportInput(q) })
	switch {
	case errors.Is(err, marketdata.ErrReportWindow):
		return nil, "from: after to (to is at most the latest tick)"
	case err != nil: // ErrReportHistory: the window starts too early
		return nil, "from: " + err.Error() + "; narrow the window (a later from)"
	}
	return in.Report(), ""
}

// labStrategyReport answers lab_strategyReport.
func (c *call) labStrategyReport(dst []byte) ([]byte, *jsonrpc.Error) {
	q, err := obwire.ParseReportQuery(c.req.Param(0))
	if err != nil {
		return dst, err
	}
	rep, msg := c.s.strategyReport(&q)
	if msg != "" {
		return dst, jsonrpc.InvalidParams(msg)
	}
	return obwire.AppendReport(dst, rep), nil
}

// labReportREST is a parsed GET /v1/lab/report/{account} query:
// from, to (µs), format json|csv, series=1 (with csv: the series table).
type labReportREST struct {
	q      marketdata.ReportQuery
	format obwire.ReportFormat
}

// parseLabReportREST parses the account and query, or returns the 400's
// message.
func parseLabReportREST(arg string, query []byte) (labReportREST, string) {
	var r labReportREST
	a, ok := parseHexBytes(arg, 20)
	if !ok {
		return r, "bad account: want 0x and 40 hex digits"
	}
	r.q.Owner = clob.Address(a)
	csv, series := false, false
	msg := parseQuery(query, func(name, value string) string {
		switch name {
		case "from", "to":
			v, err := strconv.ParseInt(value, 10, 64)
			if err != nil || v < 0 {
				return "bad " + name + ": want microseconds, a decimal integer >= 0"
			}
			if name == "from" {
				r.q.FromUs, r.q.HasFrom = v, true
			} else {
				r.q.ToUs, r.q.HasTo = v, true
			}
		case "format":
			if value != "json" && value != "csv" {
				return "bad format: want json or csv"
			}
			csv = value == "csv"
		case "series":
			if value != "1" && value != "0" {
				return "bad series: want 1 (the series table, with format=csv) or 0"
			}
			series = value == "1"
		default:
			return unknownParam(name, "from, to, format, series")
		}
		return ""
	})
	switch {
	case msg != "":
		return r, msg
	case r.q.HasFrom && r.q.HasTo && r.q.ToUs < r.q.FromUs:
		return r, "bad to: before from"
	case series && !csv:
		return r, "bad series: the JSON holds the series; series=1 needs format=csv"
	case series:
		r.format = obwire.ReportSeriesCSV
	case csv:
		r.format = obwire.ReportCSV
	}
	return r, ""
}

// serveLabReportOrDefer answers GET /v1/lab/report/{account} as
// lab_strategyReport: under --dev or with the admin token (else 401), a
// bad query is a 400; the report is computed on a worker, always
// (serveClobOrDefer), in the content type of its format.
func (s *Service) serveLabReportOrDefer(req *http1.Request, arg string, w *server.Response) {
	if !s.cfg.Dev && !s.authorized(req.Header("Authorization")) {
		restError(w, 401, "the lab's reads need --dev or the header Authorization: Bearer <admin token>")
		return
	}
	r, msg := parseLabReportREST(arg, req.Query)
	if msg != "" {
		restError(w, 400, msg)
		return
	}
	if r.format != obwire.ReportJSON {
		w.ContentType = "text/csv; charset=utf-8" // before a deferral, which keeps it
	}
	s.serveClobOrDefer(req, routeLabReport, arg, w)
}

// serveLabReport computes and writes the report (serveClob's route).
func (s *Service) serveLabReport(arg string, query []byte, w *server.Response) {
	r, msg := parseLabReportREST(arg, query)
	if msg != "" {
		restError(w, 400, msg)
		return
	}
	rep, msg := s.strategyReport(&r.q)
	if msg != "" {
		w.ContentType = "application/json"
		restError(w, 400, msg)
		return
	}
	w.Body = obwire.AppendReportAs(w.Body, rep, r.format)
}
