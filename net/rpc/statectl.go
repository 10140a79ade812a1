package rpc

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/net/http1"
	"github.com/ledgervenue/node/net/node"
)

// StateDumpMax bounds the state anvil_dumpState answers: what it answers,
// hex-encoded, must fit a request body of anvil_loadState. A larger state
// is refused with a pointer to --dump-state, which writes a file of any
// size.
const StateDumpMax = (http1.MaxBodyBytes - 4096) / 2

// errStateTooLarge refuses anvil_dumpState of a state over StateDumpMax.
var errStateTooLarge = &jsonrpc.Error{Code: CodeValidationFailed, Message: "state too large for anvil_dumpState (max " +
	strconv.Itoa(StateDumpMax) + " bytes, what anvil_loadState can take back in one request): use ledgerd --dump-state FILE and --load-state FILE"}

// isStateControl reports the controls stateControl runs.
func isStateControl(method []byte) bool {
	switch string(method) {
	case "evm_snapshot", "evm_revert", "anvil_dumpState", "anvil_loadState",
		"anvil_snapshot", "anvil_revert", "hardhat_dumpState", "hardhat_loadState":
		return true
	}
	return false
}

// stateControl runs evm_snapshot, evm_revert, anvil_dumpState and
// anvil_loadState (node/revert.go: the whole venue's state). They run on
// a worker (isWrite): each waits for the pipeline.
func (c *call) stateControl(dst []byte) ([]byte, *jsonrpc.Error) {
	n := c.s.node
	switch string(c.req.Method) {
	case "evm_snapshot", "anvil_snapshot":
		id, err := n.EvmSnapshot()
		if err != nil {
			return dst, stateError(err)
		}
		return jsonrpc.AppendQuantity(dst, id), nil
	case "evm_revert", "anvil_revert":
		id, perr := jsonrpc.ParseQuantity(c.req.Param(0))
		if perr != nil {
			return dst, perr
		}
		ok, err := n.EvmRevert(id)
		if err != nil {
			return dst, stateError(err)
		}
		return strconv.AppendBool(dst, ok), nil
	case "anvil_dumpState", "hardhat_dumpState":
		var buf bytes.Buffer
		if err := n.DumpState(&limitWriter{w: &buf, left: StateDumpMax}); err != nil {
			return dst, stateError(err)
		}
		return jsonrpc.AppendData(dst, buf.Bytes()), nil
	}
	// anvil_loadState, hardhat_loadState
	state, perr := jsonrpc.ParseData(nil, c.req.Param(0))
	if perr != nil {
		return dst, perr
	}
	if err := n.LoadState(bytes.NewReader(state)); err != nil {
		return dst, stateError(err)
	}
	return append(dst, "true"...), nil
}

// stateError maps a state control's error to its answer: a bad state is
// the caller's (-32602), a bound -32000, the rest the node's (-32603).
func stateError(err error) *jsonrpc.Error {
	switch {
	case errors.Is(err, node.ErrNotState):
		return jsonrpc.InvalidParams(err.Error())
	case errors.Is(err, errDumpTooLarge):
		return errStateTooLarge
	case errors.Is(err, node.ErrTooManySnapshots):
		return &jsonrpc.Error{Code: CodeValidationFailed, Message: err.Error()}
	}
	return internalError(err)
}

var errDumpTooLarge = errors.New("state dump too large")

// limitWriter fails a write past left bytes.
type limitWriter struct {
	w    *bytes.Buffer
	left int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if len(p) > l.left {
		return 0, errDumpTooLarge
	}
	l.left -= len(p)
	return l.w.Write(p)
}
