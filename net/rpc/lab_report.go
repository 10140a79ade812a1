package rpc

import (
	"errors"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/codec/obwire"
	"github.com/ledgervenue/node/core/marketdata"
)

// The strategy report (docs/lab.md, "The strategy report"):
// lab_strategyReport [{account, from?, to?}] and GET
// /v1/lab/report/<account> (rest_lab.go). The report's input is copied
// from the market index under the index's own lock, not the sequencer's
// (node.ReadIndex), and computed after it is released, on a worker
// (isLabWrite): its cost grows with the account's kept fills
// (marketdata.FillsPerAccount) and its books' samples
// (marketdata.SamplesPerBook), both bounded.

// strategyReport computes one report: q as parsed, the index's error
// answered with -32602 naming the field.
func (c *call) strategyReport(q *marketdata.ReportQuery) (*marketdata.Report, *jsonrpc.Error) {
	var in *marketdata.ReportInput
	var err error
	c.s.node.ReadIndex(func(x *marketdata.Index) { in, err = x.ReportInput(q) })
	switch {
	case errors.Is(err, marketdata.ErrReportWindow):
		return nil, obwire.ErrReportRange
	case err != nil: // ErrReportHistory: the window starts too early
		return nil, jsonrpc.InvalidParams("from: " + err.Error() + "; narrow the window (a later from)")
	}
	return in.Report(), nil
}

// labStrategyReport answers lab_strategyReport.
func (c *call) labStrategyReport(dst []byte) ([]byte, *jsonrpc.Error) {
	q, err := obwire.ParseReportQuery(c.req.Param(0))
	if err != nil {
		return dst, err
	}
	rep, err := c.strategyReport(&q)
	if err != nil {
		return dst, err
	}
	return obwire.AppendReport(dst, rep), nil
}
