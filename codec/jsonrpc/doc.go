// Package jsonrpc parses JSON-RPC 2.0 request bodies and writes responses
// by appending to a caller's buffer, for an Ethereum-compatible node.
//
// # Model
//
// One Parser per event loop. Parser.Parse turns a body into []Request
// without reflection and, in steady state, without allocating: fastjson
// parses into value caches the Parser keeps, and the Request slice and the
// raw ids are reused from the previous body. Everything Parse returns is
// borrowed and dies at the next Parse on the same Parser; the body itself
// is not retained (fastjson copies it), so a transport may reuse its read
// buffer as soon as Parse returns.
//
// Responses are never built as values: the dispatcher appends them to its
// output buffer with AppendResultPrefix, the result writers (AppendQuantity,
// AppendData, AppendString, ...) and AppendResultSuffix, or with
// AppendError. Parameters are decoded on demand from Request.Param(i) with
// ParseAddress, ParseHash, ParseData, ParseQuantity and ParseU256.
//
// # Wire format
//
// A body is one request object or a batch: a JSON array of 1..BatchLimit
// of them. A request object:
//
//	{"jsonrpc":"2.0","id":<id>,"method":"eth_getBalance","params":[<p0>,<p1>]}
//	 |               |         |                        |
//	 |               |         |                        +- absent, array or object (not null)
//	 |               |         +- string; escapes are decoded
//	 |               +- absent (notification), null, number or string;
//	 |                  echoed byte for byte in the response
//	 +- must be the string "2.0"
//
// Members may come in any order; unknown members are ignored; when a
// member is repeated the last one wins, as in encoding/json and geth.
// Responses, as written by this package (no whitespace):
//
//	{"jsonrpc":"2.0","id":<id>,"result":<result>}
//	{"jsonrpc":"2.0","id":<id>,"error":{"code":<int>,"message":<string>[,"data":<raw JSON>]}}
//
// where <id> is the request's id text, or null when the id is unknown.
// The batch array and the commas between its responses are the caller's.
//
// # Outcomes of Parse
//
//	body                                   err                 reqs
//	not strict JSON in UTF-8               ErrParse            nil
//	deeper than DepthMax (before any       ErrTooDeep          nil
//	  syntax error)
//	more than ValuesMax values (before     ErrTooManyValues    nil
//	  any syntax error)
//	[]                                     ErrEmptyBatch       nil
//	array of more than BatchLimit          ErrBatchTooLarge    nil
//	  (before any syntax error)
//	neither object nor array               ErrInvalidRequest   nil
//	object                                 nil                 1 Request
//	array                                  nil                 1 Request per element
//
// A Request with Invalid set (wrong "jsonrpc", missing or non-string
// "method", params not an array, object or null (null counts as absent, as
// in geth), id of another type, or an array
// element that is not an object) is answered with that error, using its ID
// when one could be read and null otherwise. A valid request without "id"
// is a notification: it is executed but gets no response.
//
// # Limits
//
// Each refusal is one -32600 error for the whole body (id null) whose
// message names the limit and its value:
//
//   - BatchLimit (1000) requests per batch: ErrBatchTooLarge, "batch too
//     large (max 1000 requests)".
//   - ValuesMax (131 072) JSON values in a body: ErrTooManyValues, "JSON
//     has too many values (max 131072)". Checked by the validator before
//     fastjson builds its values, as is BatchLimit, so a body of a million
//     numbers costs one scan of its first 131 072, not a million values.
//   - DepthMax (300, fastjson's MaxDepth) levels of nesting: ErrTooDeep,
//     "JSON nested too deep (max 300 levels)". The validator stops at the
//     first value past it, so a body of 100 000 '[' costs 300 steps and
//     300 stack frames, not a stack overflow.
//   - The body size is the transport's limit. fastjson's memory cost is a
//     copy of the body plus about 88 bytes per JSON value, so with
//     ValuesMax one parse holds at most the body and about 12 MB. A Parser keeps its buffers between bodies but releases them after a
//     body above 1 MiB or 65536 values, so at most ~7 MB stay pinned.
//
// # Strictness
//
// Parse accepts exactly RFC 8259 JSON text in UTF-8. fastjson alone is
// lenient (NaN, Inf, 01, 1-2, unknown escapes, raw control characters in
// strings), and ids are echoed verbatim, so a validator of our own
// (validate.go) runs first; fastjson then only sees good text. The
// validator allocates nothing, so malformed bodies make no garbage. It
// costs about three quarters of fastjson's own parse (BenchmarkValidJSON
// against BenchmarkFastjsonParse): the price of never echoing bad text.
//
// Quantities follow geth: hex without leading zeros ("0x0", "0x1a"), at
// most 64 or 256 bits; a plain JSON integer is accepted too.
package jsonrpc
