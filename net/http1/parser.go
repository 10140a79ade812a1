package http1

import (
	"bytes"
	"math"
)

type parseState uint8

const (
	stateLine   parseState = iota // waiting for the request line's LF
	stateFields                   // request line parsed, waiting for the blank line
	stateBody                     // head parsed, waiting for Content-Length bytes
)

// maxMethodBytes is the longest method served ("OPTIONS"). A longer token is
// refused with 405 before the request line is complete, so a garbage stream
// without spaces fails on its first packet rather than after 16 KiB.
const maxMethodBytes = len("OPTIONS")

// headEnd ends the head: the LF of the last line, then the blank line.
var headEnd = []byte("\n\r\n")

// Parser parses requests incrementally. The zero value is ready to use; a
// Parser holds no buffers and never allocates.
//
// Invariant: all offsets are relative to the start of the request being
// parsed, so the caller may move the bytes between calls.
type Parser struct {
	state   parseState
	start   int // bytes of leading empty lines skipped so far
	scanned int // buf[:scanned] has been searched for the current terminator
	lineEnd int // offset just past the request line's LF
	headLen int
	bodyLen int
}

// Reset abandons a partly parsed request.
func (p *Parser) Reset() { *p = Parser{} }

// InBody reports whether the head of the request being parsed is complete
// and Parse waits for its body: the caller's deadline for the head is met.
func (p *Parser) InBody() bool { return p.state == stateBody }

// Parse parses one request at the start of buf.
//
//   - n > 0, err == nil: buf[:n] is a complete request, described by r.
//   - n == 0, err == nil: need more bytes. If the head is already complete,
//     r.ExpectContinue is valid (see Request).
//   - err != nil: answer err.Status and close the connection. The parser is
//     reset.
//
// REQUIRES: after a (0, nil) return, the next call passes the same bytes,
// possibly extended at the end (the slice itself may move), and the same r;
// or the caller calls Reset first.
func (p *Parser) Parse(buf []byte, r *Request) (n int, err *Error) {
	if p.state == stateLine {
		if err = p.parseLine(buf, r); err != nil || p.state == stateLine {
			return p.fail(err)
		}
	}
	if p.state == stateFields {
		if err = p.parseHead(buf, r); err != nil || p.state == stateFields {
			return p.fail(err)
		}
	}
	total := p.headLen + p.bodyLen
	if len(buf) < total {
		return 0, nil
	}
	r.bind(buf, p.headLen, total)
	p.Reset()
	return total, nil
}

func (p *Parser) fail(err *Error) (int, *Error) {
	if err != nil {
		p.Reset()
	}
	return 0, err
}

// parseLine waits for the request line and validates it.
func (p *Parser) parseLine(buf []byte, r *Request) *Error {
	r.reset()
	// RFC 9112 §2.2: ignore empty lines before the request line (some clients
	// send a CRLF after a POST body).
	for p.start+1 < len(buf) && buf[p.start] == '\r' && buf[p.start+1] == '\n' {
		p.start += 2
	}
	from := max(p.scanned, p.start)
	i := bytes.IndexByte(buf[from:], '\n')
	if i < 0 {
		p.scanned = len(buf)
		if err := checkMethod(buf[p.start:]); err != nil {
			return err
		}
		if len(buf) >= MaxHeaderBytes {
			return ErrHeaderTooLarge
		}
		return nil
	}
	lf := from + i
	// The same checks in the same order as above, so that the verdict does
	// not depend on how the bytes were split into reads.
	if err := checkMethod(buf[p.start:lf]); err != nil {
		return err
	}
	if lf+1 > MaxHeaderBytes {
		return ErrHeaderTooLarge
	}
	if lf == p.start || buf[lf-1] != '\r' {
		return ErrBadRequestLine
	}
	if err := r.setLine(buf, p.start, lf-1); err != nil {
		return err
	}
	p.state = stateFields
	p.lineEnd = lf + 1
	p.scanned = lf // the head ends at the first "\n\r\n" from here
	return nil
}

// checkMethod rejects a line whose method is already wrong, before the rest
// of the line arrives: rest holds the bytes from the method on.
func checkMethod(rest []byte) *Error {
	for i, c := range rest {
		if c == ' ' {
			return nil
		}
		if !tokenChar[c] {
			if c == '\r' && len(rest) == 1 {
				return nil // maybe an empty line: wait for its LF
			}
			return ErrBadRequestLine
		}
		if i >= maxMethodBytes {
			return ErrMethodNotAllowed
		}
	}
	return nil
}

// setLine parses the request line buf[start:end] (CRLF excluded). The
// verdicts come in this order: line shape (400), version (505), target (400),
// method (405); so an HTTP/2 preface "PRI * HTTP/2.0" gets 505.
func (r *Request) setLine(buf []byte, start, end int) *Error {
	line := buf[start:end]
	sp1 := bytes.IndexByte(line, ' ')
	if sp1 <= 0 {
		return ErrBadRequestLine
	}
	sp2 := bytes.IndexByte(line[sp1+1:], ' ')
	if sp2 <= 0 {
		return ErrBadRequestLine
	}
	method := line[:sp1]
	targetStart := start + sp1 + 1
	targetEnd := targetStart + sp2
	version := buf[targetEnd+1 : end]
	if !isToken(method) || !isVersion(version) {
		return ErrBadRequestLine
	}
	switch string(version) {
	case "HTTP/1.1":
		r.ProtoMinor = 1
	case "HTTP/1.0":
		r.ProtoMinor = 0
	default:
		return ErrVersionNotSupported
	}
	if err := r.setTarget(buf, targetStart, targetEnd, method); err != nil {
		return err
	}
	switch string(method) {
	case "GET", "HEAD", "POST", "OPTIONS":
	default:
		return ErrMethodNotAllowed
	}
	r.start, r.methodEnd = start, start+sp1
	return nil
}

// setTarget validates the request target buf[start:end] and records where
// the path and query lie.
func (r *Request) setTarget(buf []byte, start, end int, method []byte) *Error {
	t := buf[start:end]
	for _, c := range t {
		if !targetChar[c] {
			return ErrBadRequestLine
		}
	}
	switch {
	case t[0] == '/':
	case len(t) == 1 && t[0] == '*' && string(method) == "OPTIONS":
		r.pathStart, r.pathEnd, r.queryStart = start, end, 0
		return nil
	default:
		skip := absolutePathStart(t)
		if skip < 0 {
			return ErrBadRequestLine
		}
		start += skip
		t = t[skip:]
	}
	r.pathStart, r.pathEnd, r.queryStart = start, end, 0
	if q := bytes.IndexByte(t, '?'); q >= 0 {
		r.pathEnd = start + q
		r.queryStart, r.queryEnd = start+q+1, end
	}
	return nil
}

// absolutePathStart returns the index of the path in an absolute-form target
// ("http://host/path"), or -1 if t is not one or has no path.
func absolutePathStart(t []byte) int {
	n := 0
	switch {
	case len(t) > 7 && EqualFold(t[:7], "http://"):
		n = 7
	case len(t) > 8 && EqualFold(t[:8], "https://"):
		n = 8
	default:
		return -1
	}
	i := bytes.IndexAny(t[n:], "/?#")
	if i <= 0 || t[n+i] != '/' {
		return -1 // no authority, or no path
	}
	return n + i
}

func isToken(b []byte) bool {
	for _, c := range b {
		if !tokenChar[c] {
			return false
		}
	}
	return len(b) > 0
}

// isVersion reports whether b is shaped like an HTTP version:
// "HTTP/" DIGIT [ "." DIGIT ].
func isVersion(b []byte) bool {
	if len(b) != 6 && len(b) != 8 || string(b[:5]) != "HTTP/" || !isDigit(b[5]) {
		return false
	}
	return len(b) == 6 || b[6] == '.' && isDigit(b[7])
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// parseHead waits for the blank line that ends the head, then parses the
// field lines.
func (p *Parser) parseHead(buf []byte, r *Request) *Error {
	i := bytes.Index(buf[p.scanned:], headEnd)
	if i < 0 {
		if len(buf) >= MaxHeaderBytes {
			return ErrHeaderTooLarge
		}
		p.scanned = max(p.scanned, len(buf)-(len(headEnd)-1))
		return nil
	}
	headLen := p.scanned + i + len(headEnd)
	if headLen > MaxHeaderBytes {
		return ErrHeaderTooLarge
	}
	bodyLen, err := r.setFields(buf[:headLen], p.lineEnd)
	if err != nil {
		return err
	}
	p.headLen, p.bodyLen, p.state = headLen, bodyLen, stateBody
	return nil
}

// setFields parses the field lines of head, which start at from, and returns
// the body length.
func (r *Request) setFields(head []byte, from int) (int, *Error) {
	h := headInfo{contentLength: -1}
	last := len(head) - 2 // the blank line's CRLF
	for pos := from; pos < last; {
		lf := pos + bytes.IndexByte(head[pos:last], '\n')
		if head[lf-1] != '\r' {
			return 0, ErrBadHeader
		}
		if r.fieldCount == MaxHeaderCount {
			return 0, ErrTooManyHeaders
		}
		f, err := parseField(head, pos, lf-1)
		if err != nil {
			return 0, err
		}
		r.fields[r.fieldCount] = f
		r.fieldCount++
		name, value := head[f.nameStart:f.nameEnd], head[f.valueStart:f.valueEnd]
		if err := h.apply(name, value); err != nil {
			return 0, err
		}
		pos = lf + 1
	}
	return h.finish(r, string(head[r.start:r.methodEnd]) == "POST")
}

// parseField parses the field line head[start:end] (CRLF excluded).
func parseField(head []byte, start, end int) (field, *Error) {
	line := head[start:end]
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 || !isToken(line[:colon]) {
		return field{}, ErrBadHeader // also obsolete line folding: SP is no tchar
	}
	vs, ve := colon+1, len(line)
	for vs < ve && IsOWS(line[vs]) {
		vs++
	}
	for ve > vs && IsOWS(line[ve-1]) {
		ve--
	}
	for _, c := range line[vs:ve] {
		if !valueChar[c] {
			return field{}, ErrBadHeader
		}
	}
	return field{
		nameStart:  uint16(start),
		nameEnd:    uint16(start + colon),
		valueStart: uint16(start + vs),
		valueEnd:   uint16(start + ve),
	}, nil
}

// IsOWS reports whether c is optional white space (RFC 9110: SP or HTAB).
func IsOWS(c byte) bool { return c == ' ' || c == '\t' }

// TrimOWS trims optional white space from both ends of b.
func TrimOWS(b []byte) []byte {
	for len(b) > 0 && IsOWS(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && IsOWS(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// headInfo collects what the fields say about framing and the connection.
type headInfo struct {
	contentLength    int // -1 when absent
	transferEncoding bool
	close            bool
	keepAlive        bool
	expectContinue   bool
}

func (h *headInfo) apply(name, value []byte) *Error {
	switch len(name) {
	case len("content-length"):
		if EqualFold(name, "content-length") {
			return h.setContentLength(value)
		}
	case len("transfer-encoding"):
		h.transferEncoding = h.transferEncoding || EqualFold(name, "transfer-encoding")
	case len("connection"):
		if EqualFold(name, "connection") {
			h.setConnection(value)
		}
	case len("expect"):
		if EqualFold(name, "expect") && EqualFold(value, "100-continue") {
			h.expectContinue = true
		}
	}
	return nil
}

func (h *headInfo) setContentLength(value []byte) *Error {
	if len(value) == 0 {
		return ErrBadContentLength
	}
	n := 0
	for _, c := range value {
		if !isDigit(c) {
			return ErrBadContentLength
		}
		d := int(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return ErrBadContentLength
		}
		n = n*10 + d
	}
	if h.contentLength >= 0 && h.contentLength != n {
		return ErrBadContentLength
	}
	h.contentLength = n
	return nil
}

// setConnection reads the comma-separated connection options.
func (h *headInfo) setConnection(value []byte) {
	h.close = h.close || HasToken(value, "close")
	h.keepAlive = h.keepAlive || HasToken(value, "keep-alive")
}

// HasToken reports whether the comma-separated list (a field value such as
// Connection or Upgrade) contains token, ignoring ASCII case and whitespace
// around list members.
func HasToken(list []byte, token string) bool {
	for len(list) > 0 {
		member := list
		if i := bytes.IndexByte(list, ','); i >= 0 {
			member, list = list[:i], list[i+1:]
		} else {
			list = nil
		}
		if EqualFold(TrimOWS(member), token) {
			return true
		}
	}
	return false
}

// finish applies the framing rules once every field is known.
func (h *headInfo) finish(r *Request, post bool) (int, *Error) {
	switch {
	case h.transferEncoding:
		return 0, ErrTransferEncoding
	case h.contentLength > MaxBodyBytes:
		return 0, ErrBodyTooLarge
	case h.contentLength < 0 && post:
		return 0, ErrLengthRequired
	}
	r.KeepAlive = !h.close && (r.ProtoMinor == 1 || h.keepAlive)
	r.ExpectContinue = h.expectContinue && r.ProtoMinor == 1
	return max(h.contentLength, 0), nil
}
