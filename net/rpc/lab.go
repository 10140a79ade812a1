package rpc

import (
	"bytes"

	"github.com/ledgervenue/node/codec/jsonrpc"
)

// The strategy lab's controls (docs/lab.md): delivery faults, rate-limit
// emulation, market faults and the strategy report, all under lab_. They
// follow the anvil controls' rule (controlAllowed): anyone under --dev,
// the admin token otherwise. Those that change the ledger are logged
// inputs and answer once durable (isLabWrite: they run on a worker); those
// that only change delivery are seeded, so a session can be repeated.

// isLab reports whether method is a lab_ control.
func isLab(method []byte) bool { return bytes.HasPrefix(method, []byte("lab_")) }

// isLabWrite reports the lab_ controls that wait for a logged input.
func isLabWrite(method []byte) bool {
	switch string(method) {
	}
	return false
}

// labCall runs an authorized lab_ control.
func (c *call) labCall(dst []byte) ([]byte, *jsonrpc.Error) {
	switch string(c.req.Method) {
	case "lab_setLatency", "lab_clearLatency", "lab_latency", "lab_connectionId", "lab_connections",
		"lab_dropSubscription", "lab_lagSubscription", "lab_closeConnection": // lab_delivery.go
		return c.labDelivery(dst)
	}
	return dst, jsonrpc.ErrMethodNotFound
}
