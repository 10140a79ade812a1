package rpc

import (
	"encoding/binary"
	"strconv"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
)

// Spec error codes beyond JSON-RPC's own.
const (
	CodeExecutionReverted = 3
	CodeValidationFailed  = -32000
)

// revertSelector is the selector of Error(string).
var revertSelector = [4]byte{0x08, 0xc3, 0x79, 0xa0}

// validationError is the spec's -32000 with a plain-string reason in data.
func validationError(reason string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeValidationFailed, Message: "transaction validation failed", Data: strconv.AppendQuote(nil, reason)}
}

// revertError is the spec's code 3: data is Error(reason) ABI-encoded, hex.
func revertError(reason string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeExecutionReverted, Message: "execution reverted", Data: jsonrpc.AppendData(nil, appendRevert(nil, reason))}
}

// appendRevert appends the ABI encoding of Error(reason):
//
//	selector 08c379a0 | offset (32 B, = 0x20) | length (32 B) | reason, zero-padded to 32 B
func appendRevert(dst []byte, reason string) []byte {
	dst = append(dst, revertSelector[:]...)
	dst = appendWord(dst, 0x20)
	dst = appendWord(dst, uint64(len(reason)))
	dst = append(dst, reason...)
	if pad := len(reason) % 32; pad != 0 {
		dst = append(dst, make([]byte, 32-pad)...)
	}
	return dst
}

func appendWord(dst []byte, v uint64) []byte {
	dst = append(dst, make([]byte, 24)...)
	return binary.BigEndian.AppendUint64(dst, v)
}

// appNames gives each enshrined address the prefix of its revert reasons.
func appReason(app core.Address) string {
	switch app {
	case core.OrderbookAddress:
		return "CLOB validation failed: "
	case core.BridgeAddress:
		return "Bridge validation failed: "
	}
	return "Recovery validation failed: "
}

// rejectError maps a ledger rejection to the spec's error.
func rejectError(rej *core.Reject) *jsonrpc.Error {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	switch rej.Code {
	case core.RejectChainID:
		return validationError("Invalid chain ID: " + u(rej.Have))
	case core.RejectPastNonce:
		return validationError("Past nonce: tx nonce " + u(rej.Have) + ", expected " + u(rej.Want))
	case core.RejectFutureNonce:
		return validationError("Future nonce: tx nonce " + u(rej.Have) + ", expected " + u(rej.Want))
	case core.RejectPending:
		return validationError("Account has pending transaction")
	case core.RejectInsufficientBalance:
		return validationError("Insufficient balance")
	case core.RejectUnderpriced:
		return validationError("Underpriced tx: max_fee_per_gas " + rej.Fee.Dec() + " < base fee " + rej.BaseFee.Dec())
	case core.RejectTipAboveFeeCap:
		return validationError("Invalid fees: max_priority_fee_per_gas exceeds max_fee_per_gas")
	case core.RejectGasLimit:
		return validationError("Gas limit too high: gas " + u(rej.Have) + " > " + u(rej.Want))
	case core.RejectContractCreation:
		return validationError("Contract creation is not supported")
	case core.RejectApp:
		switch rej.App {
		case core.OrderbookAddress:
			return revertError(appReason(rej.App) + rej.Reason.String())
		case core.RecoveryAddress: // recovery failures are protocol-level in the spec
			return validationError(appReason(rej.App) + rej.Detail)
		}
		return revertError(appReason(rej.App) + rej.Detail) // the Bridge
	case core.RejectLocked, core.RejectEquivocation:
		return lockedError(rej.Target)
	}
	panic("BUG: unmapped reject code " + strconv.Itoa(int(rej.Code)))
}

// internalError reports a node fault (overload, stopped log) as -32603.
func internalError(err error) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternal, Message: "Internal error", Data: strconv.AppendQuote(nil, err.Error())}
}

var errDurabilityTimeout = errorString("the intent log did not confirm the write in time")

type errorString string

func (e errorString) Error() string { return string(e) }
