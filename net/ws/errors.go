package ws

import "strconv"

// Close status codes (RFC 6455 §7.4.1) used by this package.
const (
	CloseNormal           uint16 = 1000
	CloseGoingAway        uint16 = 1001
	CloseProtocolError    uint16 = 1002
	CloseUnsupportedData  uint16 = 1003
	CloseNoStatus         uint16 = 1005 // never sent; reported for a close frame without payload
	CloseInvalidPayload   uint16 = 1007
	ClosePolicyViolation  uint16 = 1008
	CloseMessageTooBig    uint16 = 1009
	CloseInternalError    uint16 = 1011
	closeReasonBytesMax          = MaxControlPayloadBytes - 2
	closeCodePrivateStart uint16 = 3000 // 3000-4999: registered libraries and private use
	closeCodePrivateEnd   uint16 = 4999
)

// CloseError is a frame the Reader refuses. Code is the status to send in the
// close frame (AppendClose(dst, e.Code, e.Reason)) before closing the
// connection; Reason is a short lowercase ASCII phrase of at most 123 bytes.
// After a CloseError the byte stream has no reliable frame boundary: the
// Reader stays failed and returns the same error on every later call.
type CloseError struct {
	Code   uint16
	Reason string
}

// Error implements the error interface.
func (e *CloseError) Error() string { return e.Reason }

// Preallocated sentinels: the hot path never builds an error.
var (
	ErrUnmasked               = &CloseError{CloseProtocolError, "client frame not masked"}
	ErrReservedBits           = &CloseError{CloseProtocolError, "reserved bits set"}
	ErrUnknownOpcode          = &CloseError{CloseProtocolError, "unknown opcode"}
	ErrControlTooLong         = &CloseError{CloseProtocolError, "control frame payload over 125 bytes"}
	ErrControlFragmented      = &CloseError{CloseProtocolError, "fragmented control frame"}
	ErrUnexpectedContinuation = &CloseError{CloseProtocolError, "continuation frame without a message"}
	ErrExpectedContinuation   = &CloseError{CloseProtocolError, "data frame inside a fragmented message"}
	ErrNonMinimalLength       = &CloseError{CloseProtocolError, "payload length not minimally encoded"}
	ErrLengthOverflow         = &CloseError{CloseProtocolError, "payload length has its top bit set"}
	ErrCloseLength            = &CloseError{CloseProtocolError, "close frame payload of one byte"}
	ErrCloseCode              = &CloseError{CloseProtocolError, "invalid close status code"}
	ErrBadCompression         = &CloseError{CloseProtocolError, "corrupt compressed message"}
	ErrInvalidUTF8            = &CloseError{CloseInvalidPayload, "text message is not valid utf-8"}
	ErrCloseReasonUTF8        = &CloseError{CloseInvalidPayload, "close reason is not valid utf-8"}
	ErrFrameTooLarge          = &CloseError{CloseMessageTooBig, tooLargeReason("frame", MaxFrameBytes)}
	ErrMessageTooLarge        = &CloseError{CloseMessageTooBig, tooLargeReason("message", MaxMessageBytes)}
)

// tooLarge returns the 1009 error for a limit: the sentinel when the limit
// is the default, else one naming the lowered value (built once per
// Reader.Reset, never per frame).
func tooLarge(sentinel *CloseError, what string, limit, def int) *CloseError {
	if limit == def {
		return sentinel
	}
	return &CloseError{CloseMessageTooBig, tooLargeReason(what, limit)}
}

func tooLargeReason(what string, limit int) string {
	return what + " too large (max " + strconv.Itoa(limit) + " bytes)"
}

// HandshakeError is an upgrade request CheckUpgrade refuses. Status is the
// HTTP status to answer with (400 or 426), Reason a short lowercase phrase
// safe to embed in a JSON string, and Header either empty or a complete
// header line (with CRLF) to add to the response, e.g. as http1.AppendResponse
// extraHeaders. The connection stays HTTP; it need not be closed.
type HandshakeError struct {
	Status int
	Reason string
	Header string
}

// Error implements the error interface.
func (e *HandshakeError) Error() string { return e.Reason }

// Handshake sentinels.
var (
	ErrNotGet          = &HandshakeError{400, "websocket upgrade must use GET", ""}
	ErrNoUpgradeToken  = &HandshakeError{400, "upgrade header must contain websocket", ""}
	ErrNoConnectionTok = &HandshakeError{400, "connection header must contain upgrade", ""}
	ErrNoVersion       = &HandshakeError{400, "missing sec-websocket-version", ""}
	ErrBadVersion      = &HandshakeError{426, "unsupported sec-websocket-version, use 13", "Sec-WebSocket-Version: 13\r\n"}
	ErrBadKey          = &HandshakeError{400, "sec-websocket-key must be base64 of 16 bytes", ""}
)

// validCloseCode reports whether a peer may send code in a close frame
// (RFC 6455 §7.4.1-2 and the IANA registry: 1012-1014 are registered).
func validCloseCode(code uint16) bool {
	switch {
	case code >= 1000 && code <= 1003:
		return true
	case code >= 1007 && code <= 1014:
		return true
	case code >= closeCodePrivateStart && code <= closeCodePrivateEnd:
		return true
	}
	return false
}
