package http1

import "strconv"

// Error is a request the parser refuses. Status is the HTTP status to answer
// with; Reason is a short lowercase phrase, safe to embed in a JSON string
// (no quotes, backslashes or control bytes). After an Error the connection's
// byte stream has no reliable request boundary, so the caller closes it.
type Error struct {
	Status int
	Reason string
}

// Error implements the error interface.
func (e *Error) Error() string { return e.Reason }

// Preallocated sentinels: the hot path never builds an error.
var (
	ErrBadRequestLine      = &Error{400, "malformed request line"}
	ErrBadHeader           = &Error{400, "malformed header field"}
	ErrBadContentLength    = &Error{400, "malformed content-length"}
	ErrMethodNotAllowed    = &Error{405, "method not allowed"}
	ErrLengthRequired      = &Error{411, "content-length required"}
	ErrTransferEncoding    = &Error{411, "transfer-encoding is not supported, send content-length"}
	ErrBodyTooLarge        = &Error{413, "request body too large (max " + strconv.Itoa(MaxBodyBytes) + " bytes)"}
	ErrHeaderTooLarge      = &Error{431, "request header too large (max " + strconv.Itoa(MaxHeaderBytes) + " bytes)"}
	ErrTooManyHeaders      = &Error{431, "too many header fields (max " + strconv.Itoa(MaxHeaderCount) + ")"}
	ErrVersionNotSupported = &Error{505, "http version not supported"}
)
