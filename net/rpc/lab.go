package rpc

import (
	"bytes"
	"strconv"

	"github.com/ledgervenue/node/codec/jsonrpc"
)

// The strategy lab's controls (docs/lab.md): delivery faults, rate-limit
// emulation, market faults and the strategy report, all under lab_. They
// follow the anvil controls' rule (controlAllowed): anyone under --dev,
// the admin token otherwise. Those that change the ledger are logged
// inputs and answer once durable (isLabWorker: they run on a worker); those
// that only change delivery are seeded, so a session can be repeated.

// isLab reports whether method is a lab_ control.
func isLab(method []byte) bool { return bytes.HasPrefix(method, []byte("lab_")) }

// isLabWorker reports the lab_ controls that run on a worker: those that
// wait for a logged input, and the report (no input, but a costly read).
func isLabWorker(method []byte) bool {
	switch string(method) {
	case "lab_moveOracle", "lab_oracleGap", // lab_market.go
		"lab_strategyReport": // lab_report.go
		return true
	}
	return false
}

// labCall runs an authorized lab_ control.
func (c *call) labCall(dst []byte) ([]byte, *jsonrpc.Error) {
	switch string(c.req.Method) {
	case "lab_skipAuction": // lab_market.go
		return c.labSkipAuction(dst)
	case "lab_holdTick":
		return c.labHoldTick(dst)
	case "lab_moveOracle", "lab_oracleGap":
		return c.labMoveOracle(dst, string(c.req.Method) == "lab_oracleGap")
	case "lab_setRateLimits": // ratelimit.go
		return c.setRateLimits(dst)
	case "lab_rateLimits":
		return c.rateLimits(dst)
	case "lab_scenario": // scenario.go
		return c.labScenario(dst)
	case "lab_strategyReport": // lab_report.go
		return c.labStrategyReport(dst)
	case "lab_setLatency", "lab_clearLatency", "lab_latency", "lab_connectionId", "lab_connections",
		"lab_dropSubscription", "lab_lagSubscription", "lab_closeConnection": // lab_delivery.go
		return c.labDelivery(dst)
	}
	return dst, jsonrpc.ErrMethodNotFound
}

// appendLabMetrics appends svc_metrics' lab object: the delivery faults'
// counters and the market faults' (docs/metrics.md).
func (s *Service) appendLabMetrics(dst []byte) []byte {
	dst = s.dl.appendMetrics(append(dst, '{'))
	skipped, held := s.node.LabCounts()
	dst = strconv.AppendUint(append(dst, `,"skipped_auctions":`...), skipped, 10)
	return append(strconv.AppendUint(append(dst, `,"held_ticks":`...), held, 10), '}')
}
