package jsonrpc

import "strconv"

// Error codes defined by the JSON-RPC 2.0 specification, section 5.1.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
)

// CodeLimitExceeded is EIP-1474's "limit exceeded": a request refused by
// one of the node's bounds on resources (not on its parameters, which are
// CodeInvalidParams, nor on its shape, CodeInvalidRequest).
const CodeLimitExceeded = -32005

// LimitExceeded returns the -32005 error of a bound: "limit exceeded: <what>
// (max <limit>)". It allocates: build each once, when the bound is known.
func LimitExceeded(what string, limit int) *Error {
	return &Error{Code: CodeLimitExceeded, Message: "limit exceeded: " + what + " (max " + strconv.Itoa(limit) + ")"}
}

// Error is a JSON-RPC error object.
//
// Data is raw JSON that is written verbatim (a quoted string, an object or
// an array); nil means no "data" member.
//
// Invariant: the sentinels of this package are shared by every goroutine;
// never modify an *Error returned by this package.
type Error struct {
	Code    int
	Message string
	Data    []byte
}

var (
	_ error                        = (*Error)(nil)
	_ interface{ ErrorCode() int } = (*Error)(nil)
)

// Error returns the message, followed by the raw data when there is any.
// It allocates; use it for logs, not on the request path.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "json-rpc error " + strconv.Itoa(e.Code)
	}
	if e.Data == nil {
		return msg
	}
	return msg + ": " + string(e.Data)
}

// ErrorCode returns the JSON-RPC error code.
func (e *Error) ErrorCode() int { return e.Code }

// Preallocated errors of the request path. They never allocate when
// returned, so a flood of bad requests costs no garbage here.
var (
	ErrParse          = &Error{Code: CodeParseError, Message: "Parse error"}
	ErrInvalidRequest = &Error{Code: CodeInvalidRequest, Message: "Invalid Request"}
	ErrEmptyBatch     = &Error{Code: CodeInvalidRequest, Message: "empty batch"}
	ErrBatchTooLarge  = &Error{Code: CodeInvalidRequest, Message: "batch too large (max " + strconv.Itoa(BatchLimit) + " requests)"}
	ErrTooDeep        = &Error{Code: CodeInvalidRequest, Message: "JSON nested too deep (max " + strconv.Itoa(DepthMax) + " levels)"}
	ErrTooManyValues  = &Error{Code: CodeInvalidRequest, Message: "JSON has too many values (max " + strconv.Itoa(ValuesMax) + ")"}
	ErrMethodNotFound = &Error{Code: CodeMethodNotFound, Message: "Method not found"}
	ErrInternal       = &Error{Code: CodeInternal, Message: "Internal error"}
)

const invalidParamsMessage = "Invalid params"

// InvalidParams returns a -32602 error whose data is msg as a JSON string.
// It allocates; the decoders of this package use preallocated errors instead.
func InvalidParams(msg string) *Error {
	return &Error{Code: CodeInvalidParams, Message: invalidParamsMessage, Data: AppendString(nil, msg)}
}

// Errors of the parameter decoders. Data names the expected form, so a
// client can fix its request without reading our source.
var (
	errParamMissing = InvalidParams("missing value")

	errAddressType   = InvalidParams("address: want a JSON string")
	errAddressPrefix = InvalidParams("address: missing 0x prefix")
	errAddressLength = InvalidParams("address: want 0x followed by 40 hex digits")
	errAddressDigit  = InvalidParams("address: invalid hex digit")

	errHashType   = InvalidParams("hash: want a JSON string")
	errHashPrefix = InvalidParams("hash: missing 0x prefix")
	errHashLength = InvalidParams("hash: want 0x followed by 64 hex digits")
	errHashDigit  = InvalidParams("hash: invalid hex digit")

	errDataType   = InvalidParams("data: want a JSON string")
	errDataPrefix = InvalidParams("data: missing 0x prefix")
	errDataOdd    = InvalidParams("data: odd number of hex digits")
	errDataDigit  = InvalidParams("data: invalid hex digit")

	errQuantityType     = InvalidParams("quantity: want a 0x-prefixed hex string or a JSON integer")
	errQuantityPrefix   = InvalidParams("quantity: missing 0x prefix")
	errQuantityEmpty    = InvalidParams("quantity: no hex digits after 0x")
	errQuantityZero     = InvalidParams("quantity: leading zero digits")
	errQuantityDigit    = InvalidParams("quantity: invalid hex digit")
	errQuantityInteger  = InvalidParams("quantity: want a non-negative integer")
	errQuantityRange64  = InvalidParams("quantity: exceeds 64 bits")
	errQuantityRange256 = InvalidParams("quantity: exceeds 256 bits")
)
