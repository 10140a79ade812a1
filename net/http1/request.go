package http1

import "math"

// Limits. Each is enforced by Parse and pinned by a test.
const (
	// MaxHeaderBytes bounds the head: leading empty lines, request line,
	// field lines and the blank line. Larger heads get 431.
	MaxHeaderBytes = 16 << 10
	// MaxHeaderCount bounds the number of field lines. More get 431.
	MaxHeaderCount = 64
	// MaxBodyBytes bounds Content-Length. Larger bodies get 413 before any
	// body byte is read.
	MaxBodyBytes = 5 << 20
)

// Field offsets are stored as uint16; this fails to compile if the head could
// outgrow them.
var _ [math.MaxUint16 - MaxHeaderBytes]struct{}

// Request is one parsed request.
//
// Every slice aliases the buffer given to Parser.Parse and is valid only until
// that buffer is discarded or overwritten. Fields are set when Parse returns
// n > 0, except ExpectContinue, which is set as soon as the head is complete.
type Request struct {
	Method []byte // "GET", "HEAD", "POST" or "OPTIONS"
	Path   []byte // request path without the query, not percent-decoded; "*" for OPTIONS *
	Query  []byte // query without the '?'; nil when the target has no '?'
	Body   []byte // exactly Content-Length bytes; empty when there is none

	// ProtoMinor is 0 for HTTP/1.0 and 1 for HTTP/1.1.
	ProtoMinor int
	// KeepAlive: HTTP/1.1 unless "Connection: close"; HTTP/1.0 only with
	// "Connection: keep-alive".
	KeepAlive bool
	// ExpectContinue is set for an HTTP/1.1 request carrying
	// "Expect: 100-continue". It is valid once the head is complete, even while
	// Parse still returns (0, nil) waiting for the body: that is when the
	// server sends "100 Continue".
	ExpectContinue bool

	head       []byte // the head, for Header lookups
	start      int    // offset of the method, after leading empty lines
	methodEnd  int
	pathStart  int
	pathEnd    int
	queryStart int // 0 when there is no query
	queryEnd   int
	fields     [MaxHeaderCount]field
	fieldCount int
}

// field locates one field line inside Request.head.
type field struct {
	nameStart, nameEnd, valueStart, valueEnd uint16
}

// Header returns the value of the first field named name (ASCII
// case-insensitive), without surrounding whitespace, or nil if there is none.
// The slice aliases the parsed buffer (see Request).
func (r *Request) Header(name string) []byte {
	for i := range r.fieldCount {
		f := &r.fields[i]
		if EqualFold(r.head[f.nameStart:f.nameEnd], name) {
			return r.head[f.valueStart:f.valueEnd:f.valueEnd]
		}
	}
	return nil
}

// reset clears what a new request must not inherit from the previous one.
func (r *Request) reset() {
	r.Method, r.Path, r.Query, r.Body, r.head = nil, nil, nil, nil, nil
	r.ProtoMinor = 0
	r.KeepAlive = false
	r.ExpectContinue = false
	r.fieldCount = 0
}

// bind points the exported slices at buf once the request is complete; buf
// may differ from the buffer of earlier Parse calls but holds the same bytes.
func (r *Request) bind(buf []byte, headLen, total int) {
	r.head = buf[:headLen:headLen]
	r.Method = buf[r.start:r.methodEnd:r.methodEnd]
	r.Path = buf[r.pathStart:r.pathEnd:r.pathEnd]
	if r.queryStart > 0 {
		r.Query = buf[r.queryStart:r.queryEnd:r.queryEnd]
	}
	r.Body = buf[headLen:total:total]
}

// EqualFold reports whether b equals the ASCII string s, ignoring case.
func EqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// Byte classes from RFC 9110 §5.6.2 (tchar) and §5.5 (field-vchar).
var (
	tokenChar = byteClass("!#$%&'*+-.^_`|~0123456789" +
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
	valueChar  = valueClass()
	targetChar = targetClass()
)

func byteClass(chars string) (t [256]bool) {
	for i := range len(chars) {
		t[chars[i]] = true
	}
	return t
}

// valueClass allows HTAB, SP, visible ASCII and obs-text; it rejects CR, LF
// and every other control byte.
func valueClass() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '\t' || (c >= 0x20 && c != 0x7f)
	}
	return t
}

// targetClass allows visible ASCII only: no spaces, controls or raw UTF-8.
func targetClass() (t [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = true
	}
	return t
}
