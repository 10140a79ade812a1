package rpc

import (
	"encoding/binary"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
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
	case core.MintAddress:
		return "Mint validation failed: "
	}
	return "Recovery validation failed: "
}

// rejectError maps the ledger's rejection of tx to the spec's error. With
// compat (Config.Compat) a -32000 refusal that go-ethereum also makes
// carries go-ethereum's message instead of the spec's (gethMessage); its
// data keeps the spec's reason, so both modes carry the same reason string.
func rejectError(rej *core.Reject, tx *core.Tx, compat bool) *jsonrpc.Error {
	e := specRejectError(rej)
	if compat && e.Code == CodeValidationFailed {
		if msg := gethMessage(rej, tx); msg != "" {
			e.Message = msg
		}
	}
	return e
}

// specRejectError maps a ledger rejection to the spec's error.
func specRejectError(rej *core.Reject) *jsonrpc.Error {
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
		if rej.App == core.RecoveryAddress { // recovery failures are protocol-level in the spec
			return validationError(appReason(rej.App) + rej.Detail)
		}
		return revertError(appReason(rej.App) + rej.AppReason()) // the orderbook, the Bridge, the Mint
	case core.RejectLocked, core.RejectEquivocation:
		return lockedError(rej.Target)
	}
	panic("BUG: unmapped reject code " + strconv.Itoa(int(rej.Code)))
}

// gethMessage is the message go-ethereum gives for the refusal rej of tx,
// in go-ethereum's own words and shapes (core/error.go, core/txpool/errors.go,
// core/state_transition.go preCheck, internal/ethapi SubmitTransaction), or
// "" when go-ethereum has no such refusal (a contract creation, a recovery):
// those keep the spec's message. ethers 6 (JsonRpcProvider.getRpcError) and
// viem 2 (getNodeError) classify a refusal by its message alone, matching
// these texts; docs/compat.md has the table and what each library makes of
// each line.
//
// A refused gas limit says "gas limit reached" (core.ErrGasLimitReached),
// not the txpool's "exceeds block gas limit": viem knows only the former
// (IntrinsicGasTooHighError, what anvil's answer gets), ethers neither.
// A past nonce is always "nonce too low", also for a resent transaction
// (go-ethereum's "already known" while it is in its pool): ethers knows
// only "nonce too low" (NONCE_EXPIRED), viem both (NonceTooLowError), and
// anvil answers a resent transaction so too.
func gethMessage(rej *core.Reject, tx *core.Tx) string {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	switch rej.Code {
	case core.RejectChainID:
		if tx.Type == 0 && tx.ChainID == 0 {
			return "only replay-protected (EIP-155) transactions allowed over RPC"
		}
		return "invalid sender: invalid chain id for signer"
	case core.RejectPastNonce:
		return "nonce too low: address " + gethHex(tx.From) + ", tx: " + u(rej.Have) + " state: " + u(rej.Want)
	case core.RejectFutureNonce:
		return "nonce too high: address " + gethHex(tx.From) + ", tx: " + u(rej.Have) + " state: " + u(rej.Want)
	case core.RejectPending:
		// The one transaction an account may have in flight is go-ethereum's
		// per-account pool limit at one.
		return "account limit exceeded: pooled 1 txs"
	case core.RejectInsufficientBalance:
		if tx.Gas < core.TxGas && !core.GasExempt(tx) {
			// The ledger refuses a gas limit below the gas every
			// transaction that pays gas uses as a cost it cannot pay
			// (core.Ledger.covers).
			return "intrinsic gas too low: gas " + u(tx.Gas) + ", minimum needed " + u(core.TxGas)
		}
		return "insufficient funds for gas * price + value"
	case core.RejectUnderpriced:
		return "max fee per gas less than block base fee: address " + gethHex(tx.From) +
			", maxFeePerGas: " + rej.Fee.Dec() + ", baseFee: " + rej.BaseFee.Dec()
	case core.RejectTipAboveFeeCap:
		return "max priority fee per gas higher than max fee per gas: address " + gethHex(tx.From) +
			", maxPriorityFeePerGas: " + tx.GasTipCap.Dec() + ", maxFeePerGas: " + tx.GasFeeCap.Dec()
	case core.RejectGasLimit:
		return "gas limit reached (cap: " + u(rej.Want) + ", tx: " + u(rej.Have) + ")"
	}
	return ""
}

// gethHex is a's EIP-55 form, as go-ethereum prints addresses in its
// messages.
func gethHex(a core.Address) string { return common.Address(a).Hex() }

// internalError reports a node fault (overload, stopped log) as -32603.
func internalError(err error) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternal, Message: "Internal error", Data: strconv.AppendQuote(nil, err.Error())}
}

var errDurabilityTimeout = errorString("the intent log did not confirm the write in time")

type errorString string

func (e errorString) Error() string { return string(e) }
