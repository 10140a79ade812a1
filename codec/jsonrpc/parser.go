package jsonrpc

import "github.com/valyala/fastjson"

// BatchLimit is the largest number of requests in one batch. A larger
// batch is refused as a whole with ErrBatchTooLarge (-32600, naming it),
// as soon as the validator counts its element BatchLimit+1.
const BatchLimit = 1000

// DepthMax is the deepest nesting that Parse accepts. Every value counts,
// scalars too: the top-level value is at depth 1 and a scalar inside n
// arrays is at depth n+1. It is fastjson's own limit, and it also bounds the
// recursion of the validator. A deeper body is refused as a whole with
// ErrTooDeep (-32600, naming it).
const DepthMax = fastjson.MaxDepth

// ValuesMax is the most JSON values (every object, array and scalar) one
// body may hold. A body with more is refused as a whole with
// ErrTooManyValues (-32600, naming it) before fastjson parses it: fastjson
// costs about 88 bytes per value, so this bounds a body's parse to about
// 12 MB whatever its size. A full batch of 1000 common calls
// (testdata/large.json) has 7833 values; 1000 eth_getLogs calls with 64
// addresses each would have about 70 000.
const ValuesMax = 1 << 17

// A Parser keeps its buffers for the next body, to parse without
// allocating. fastjson's share of them is a copy of the body and about 88
// bytes per JSON value, so one large or value-dense body (up to ~45 bytes
// kept per body byte) would pin that memory for the life of the event
// loop. After a body above either limit, the next Parse starts afresh.
// testdata/large.json, a full batch of 1000 common calls, is 204 KB and
// 7833 values.
const (
	bodySizeRetainMax    = 1 << 20
	valuesCountRetainMax = 1 << 16
)

// Request is one request object of a body.
//
// Every slice and value in it is valid until the next Parse on the Parser
// that returned it.
type Request struct {
	// ID is the raw JSON text of "id" (a number, a string or null) exactly
	// as sent; nil when absent, which makes the request a notification.
	ID []byte
	// Method is the method name with JSON escapes decoded.
	Method []byte
	// Params is the "params" array or object; nil when absent.
	Params *fastjson.Value
	// Invalid, when non-nil, means the object is not a valid request: answer
	// with this error, even without an ID (written as null). Only ID may be
	// set along with it.
	Invalid *Error
}

// IsNotification reports whether no response must be written: a valid
// request without "id". A request with "id":null is not a notification.
func (r *Request) IsNotification() bool {
	return r.ID == nil && r.Invalid == nil
}

// Param returns the i-th element of array params, or nil when params is
// absent, is an object, or has no element i.
func (r *Request) Param(i int) *fastjson.Value {
	a := r.Params.GetArray()
	if uint(i) >= uint(len(a)) {
		return nil
	}
	return a[i]
}

// ParamsCount returns the number of array params; 0 when params is absent
// or is an object.
func (r *Request) ParamsCount() int {
	return len(r.Params.GetArray())
}

// Parser parses request bodies. Give each event loop its own Parser: it is
// not safe for concurrent use. The zero value is ready to use.
type Parser struct {
	fj fastjson.Parser
	// reqs is returned by Parse and reused by the next one.
	reqs []Request
	// ids holds the raw ids of the current body; Request.ID slices into it.
	ids             []byte
	bodySizeLast    int
	valuesCountLast int
}

// Parse parses a body: one request object, or a batch (an array of them).
//
// err is set when the body as a whole is refused, and must then be answered
// with one error response (id null): ErrParse for text that is not strict
// JSON (RFC 8259, in UTF-8), ErrTooDeep, ErrTooManyValues or
// ErrBatchTooLarge when it passes DepthMax, ValuesMax or BatchLimit before
// any syntax error, ErrEmptyBatch, or ErrInvalidRequest when the top level is neither an
// object nor an array. Otherwise reqs holds one entry per request, in body
// order, and batch reports whether the body was an array (so the responses
// go into an array too, even for a batch of one).
//
// Parse does not retain body: fastjson copies it. reqs and every slice and
// value inside it are valid until the next Parse on p.
func (p *Parser) Parse(body []byte) (reqs []Request, batch bool, err *Error) {
	if p.bodySizeLast > bodySizeRetainMax || p.valuesCountLast > valuesCountRetainMax {
		*p = Parser{}
	}
	clear(p.reqs)
	p.reqs = p.reqs[:0]
	p.ids = p.ids[:0]

	valuesCount, verr := validJSON(body)
	if verr != nil {
		return nil, verr == ErrBatchTooLarge, verr
	}
	p.bodySizeLast, p.valuesCountLast = len(body), valuesCount
	top, parseErr := p.fj.ParseBytes(body)
	if parseErr != nil {
		// Unreachable: fastjson accepts all that validJSON does.
		return nil, false, ErrParse
	}
	switch top.Type() {
	case fastjson.TypeObject:
		p.reqs = append(p.reqs, p.request(top))
		return p.reqs, false, nil
	case fastjson.TypeArray:
		return p.batch(top)
	}
	return nil, false, ErrInvalidRequest
}

func (p *Parser) batch(top *fastjson.Value) ([]Request, bool, *Error) {
	elems := top.GetArray()
	if len(elems) == 0 {
		return nil, true, ErrEmptyBatch
	}
	for _, elem := range elems {
		p.reqs = append(p.reqs, p.request(elem))
	}
	return p.reqs, true, nil
}

// members holds the values of the request members we know; others are
// ignored.
type members struct {
	version, id, method, params *fastjson.Value
}

// request checks one element of the body. When a member is repeated, the
// last one wins, as with encoding/json (and thus geth).
func (p *Parser) request(v *fastjson.Value) Request {
	o := v.GetObject()
	if o == nil {
		return Request{Invalid: ErrInvalidRequest}
	}
	var m members
	// Visit decodes escapes in keys, so "\u0069d" is "id".
	o.Visit(func(key []byte, value *fastjson.Value) {
		switch string(key) {
		case "jsonrpc":
			m.version = value
		case "id":
			m.id = value
		case "method":
			m.method = value
		case "params":
			m.params = value
		}
	})
	var r Request
	if m.id != nil {
		r.ID = p.appendID(m.id)
		if r.ID == nil {
			return Request{Invalid: ErrInvalidRequest}
		}
	}
	if !isVersion2(m.version) || m.method == nil || m.method.Type() != fastjson.TypeString || !isParams(m.params) {
		r.Invalid = ErrInvalidRequest
		return r
	}
	r.Method, _ = m.method.StringBytes()
	if m.params != nil && m.params.Type() != fastjson.TypeNull {
		r.Params = m.params
	}
	return r
}

// appendID copies the raw text of an id into p.ids and returns it, or nil
// when the id is of a type JSON-RPC does not allow.
//
// REQUIRES: v comes from a body that passed validJSON (so "n" is null and
// strings are valid UTF-8 with valid escapes), and neither v.Type
// nor v.StringBytes has been called on it: they decode a string's escapes
// in place, after which MarshalTo would no longer give the raw text.
func (p *Parser) appendID(v *fastjson.Value) []byte {
	start := len(p.ids)
	p.ids = v.MarshalTo(p.ids)
	id := p.ids[start:len(p.ids):len(p.ids)]
	switch c := id[0]; {
	case c == '"', c == 'n', c == '-', c >= '0' && c <= '9':
		// The capacity cap above keeps a caller's append from writing into
		// the next id.
		return id
	}
	// An object, an array or a boolean.
	p.ids = p.ids[:start]
	return nil
}

func isVersion2(v *fastjson.Value) bool {
	if v == nil || v.Type() != fastjson.TypeString {
		return false
	}
	s, _ := v.StringBytes()
	return string(s) == "2.0"
}

// isParams reports whether params is absent, an array or an object. A null
// counts as absent (geth's reading, which some clients rely on, although the
// specification asks for a structured value); request() drops it.
func isParams(v *fastjson.Value) bool {
	if v == nil {
		return true
	}
	t := v.Type()
	return t == fastjson.TypeArray || t == fastjson.TypeObject || t == fastjson.TypeNull
}
