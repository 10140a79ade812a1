package load

import (
	"bytes"
	"errors"
)

// Response limits. A response beyond either is an error and ends its
// connection: the client is pointed at servers under test, not at the open
// internet, so these only guard against a runaway server.
const (
	// HeaderBytesMax bounds a response's status line and fields, including
	// the blank line that ends them.
	HeaderBytesMax = 16 << 10
	// BodyBytesMax bounds a response's Content-Length.
	BodyBytesMax = 16 << 20
	// inboxReadMin is the least free space offered to one read.
	inboxReadMin = 4 << 10
)

var (
	// ErrMalformedResponse reports bytes that are not an HTTP/1.x response.
	ErrMalformedResponse = errors.New("load: malformed HTTP response")
	// ErrHeaderTooLarge reports a response head longer than HeaderBytesMax.
	ErrHeaderTooLarge = errors.New("load: response head larger than HeaderBytesMax")
	// ErrBodyTooLarge reports a Content-Length above BodyBytesMax.
	ErrBodyTooLarge = errors.New("load: response body larger than BodyBytesMax")
	// ErrNoContentLength reports a response whose length is not declared by
	// Content-Length (chunked or close-delimited bodies are not supported).
	ErrNoContentLength = errors.New("load: response without Content-Length")
)

var headEnd = []byte("\r\n\r\n")

// parseResponse parses the response at the start of buf. It returns the
// response's total length n, its status and body, or n = 0 and a nil error
// when buf holds only a prefix of a response. body aliases buf.
//
//	HTTP/1.1 200 OK\r\n              status line: "HTTP/1." DIGIT SP 3DIGIT [SP reason]
//	Content-Length: 41\r\n           fields; names compared case-insensitively
//	...\r\n
//	\r\n                             end of head (<= HeaderBytesMax bytes so far)
//	{"jsonrpc":"2.0",...}            exactly Content-Length bytes
func parseResponse(buf []byte) (n, status int, body []byte, err error) {
	i := bytes.Index(buf, headEnd)
	switch {
	case i < 0 && len(buf) >= HeaderBytesMax:
		return 0, 0, nil, ErrHeaderTooLarge
	case i < 0:
		return 0, 0, nil, nil
	case i+len(headEnd) > HeaderBytesMax:
		return 0, 0, nil, ErrHeaderTooLarge
	}
	head := buf[:i+2] // every line, each with its CRLF
	lineEnd := bytes.Index(head, crlf)
	status, ok := parseStatusLine(head[:lineEnd])
	if !ok {
		return 0, 0, nil, ErrMalformedResponse
	}
	bodyLen, err := bodyLength(head[lineEnd+2:], status)
	if err != nil {
		return 0, 0, nil, err
	}
	n = i + len(headEnd) + bodyLen
	if len(buf) < n {
		return 0, 0, nil, nil
	}
	return n, status, buf[i+len(headEnd) : n : n], nil
}

var crlf = []byte("\r\n")

// parseStatusLine reads "HTTP/1.x SSS[ reason]". 1xx statuses are refused:
// the client never sends Expect, so an interim response is a protocol error.
func parseStatusLine(line []byte) (status int, ok bool) {
	const prefix = "HTTP/1."
	if len(line) < len(prefix)+5 || string(line[:len(prefix)]) != prefix {
		return 0, false
	}
	rest := line[len(prefix):]
	if !isDigit(rest[0]) || rest[1] != ' ' || len(rest) > 5 && rest[5] != ' ' {
		return 0, false
	}
	for _, c := range rest[2:5] {
		if !isDigit(c) {
			return 0, false
		}
		status = status*10 + int(c-'0')
	}
	return status, status >= 200
}

// bodyLength reads Content-Length from the field lines (each ending in
// CRLF). Without one, only 204 and 304 have a (zero) length.
func bodyLength(fields []byte, status int) (int, error) {
	length := -1
	for len(fields) > 0 {
		end := bytes.Index(fields, crlf)
		line := fields[:end]
		fields = fields[end+2:]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return 0, ErrMalformedResponse
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		switch {
		case equalFoldASCII(name, "transfer-encoding"):
			return 0, ErrNoContentLength
		case !equalFoldASCII(name, "content-length"):
			continue
		}
		v, err := parseLength(value)
		if err != nil {
			return 0, err
		}
		if length >= 0 && v != length {
			return 0, ErrMalformedResponse
		}
		length = v
	}
	switch {
	case length >= 0:
		return length, nil
	case status == 204 || status == 304:
		return 0, nil
	}
	return 0, ErrNoContentLength
}

func parseLength(s []byte) (int, error) {
	if len(s) == 0 {
		return 0, ErrMalformedResponse
	}
	v := 0
	for _, c := range s {
		if !isDigit(c) {
			return 0, ErrMalformedResponse
		}
		v = v*10 + int(c-'0')
		if v > BodyBytesMax {
			return 0, ErrBodyTooLarge
		}
	}
	return v, nil
}

// equalFoldASCII compares b with the lower-case ASCII name, ignoring case;
// bytes.EqualFold's Unicode folding cost a third of a parse.
func equalFoldASCII(b []byte, name string) bool {
	if len(b) != len(name) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// inbox holds a connection's received bytes and yields complete responses.
//
// Invariant: 0 <= start <= end <= len(buf); buf[start:end] are received,
// unparsed bytes.
type inbox struct {
	buf        []byte
	start, end int
}

// space returns free room (at least inboxReadMin bytes) after the unparsed
// bytes, compacting or growing buf; commit(n) then takes n bytes of it.
func (in *inbox) space() []byte {
	if in.start == in.end {
		in.start, in.end = 0, 0
	}
	if len(in.buf)-in.end >= inboxReadMin {
		return in.buf[in.end:]
	}
	if in.start > 0 {
		in.end = copy(in.buf, in.buf[in.start:in.end])
		in.start = 0
	}
	if len(in.buf)-in.end < inboxReadMin {
		// Unparsed bytes never exceed one maximal response (parseResponse
		// fails first), so the growth is bounded by the limits.
		grown := make([]byte, max(2*len(in.buf), in.end+inboxReadMin, 2*inboxReadMin))
		copy(grown, in.buf[:in.end])
		in.buf = grown
	}
	return in.buf[in.end:]
}

func (in *inbox) commit(n int) { in.end += n }

// next returns the next complete response; ok is false when more bytes are
// needed. body is valid until the next call to space.
func (in *inbox) next() (status int, body []byte, ok bool, err error) {
	n, status, body, err := parseResponse(in.buf[in.start:in.end])
	if err != nil || n == 0 {
		return 0, nil, false, err
	}
	in.start += n
	return status, body, true, nil
}
