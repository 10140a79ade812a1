// Package http1 is a hand-written HTTP/1.1 request parser and response writer
// for the node's JSON-RPC transport. It does no I/O and allocates nothing in
// steady state: the caller (net/server) owns every byte buffer.
//
// Model. A connection's inbound bytes are a sequence of requests:
//
//	request    = *( CRLF ) request-line *( field-line ) CRLF [ body ]
//	             '-------------- head, <= MaxHeaderBytes ----------'
//	request-line = method SP request-target SP HTTP-version CRLF
//	field-line   = field-name ":" OWS field-value OWS CRLF
//	body         = exactly Content-Length bytes (no chunked coding)
//
//	  0        start     lineEnd                            headLen      headLen+bodyLen
//	  |CRLF... |GET /x?y HTTP/1.1\r\n|Name: value\r\n ... \r\n|body .......|next request...
//	           '-- request line -----'-- fields ------------'--'
//
// Parser.Parse looks at the bytes from the start of one request and either
// returns the length of the complete request (head + body), asks for more
// bytes, or returns one of the preallocated *Error sentinels, whose Status is
// the HTTP status the caller answers with before closing the connection.
// Parse is incremental: it remembers how far it has searched, so a head that
// trickles in one byte at a time costs O(head) in total, not O(head²). Errors
// are reported as early as the bytes allow: a non-token byte where the method
// should be fails on the first packet, an oversized Content-Length fails as
// soon as the head is complete, without waiting for the body.
//
// Borrowed memory. Request.Method, Path, Query, Body and every slice returned
// by Request.Header alias the buffer passed to Parse. They are valid only until
// the caller discards or overwrites that buffer (net/server: until
// Handler.Serve returns). Body is capped (three-index slice) so that an
// append by the handler copies instead of overwriting the next pipelined
// request.
//
// Limits (named constants, each covered by a test; the error's Reason names
// the limit and its value, e.g. "request body too large (max 5242880 bytes)"):
//   - MaxHeaderBytes: request line + fields + blank line, including leading
//     empty lines. Longer heads get 431.
//   - MaxHeaderCount: field lines per request. More get 431.
//   - MaxBodyBytes: Content-Length above it gets 413 as soon as the head is in.
//
// Time is the caller's: the parser has no clock. Parser.InBody tells the
// caller (net/server, which bounds the time to receive a head and a body)
// which of the two a partial request is waiting for.
//
// Deliberate strictness (each answered with 400 unless noted):
//   - Lines end in CRLF; a bare LF or CR anywhere in the head is rejected, as
//     are other control bytes in field values and obsolete line folding. This
//     closes the request-smuggling gaps that lenient line splitting opens.
//   - No whitespace between a field name and its colon.
//   - Content-Length is 1*DIGIT; copies that disagree, or a value that
//     overflows int64, are rejected. Transfer-Encoding of any kind gets 411:
//     the node only accepts bodies of declared length.
//   - Only GET, HEAD, POST and OPTIONS are served (others 405); POST needs a
//     Content-Length (411). Only HTTP/1.0 and HTTP/1.1 (others 505).
//   - The request target is origin-form ("/path?query"), "*" for OPTIONS, or
//     absolute-form with a path ("http://host/path"); Path is not
//     percent-decoded.
//   - A missing Host field is tolerated; net/server checks a present one
//     against its virtual-host policy (DNS rebinding).
//
// Responses. AppendResponse and AppendResponseHead write a complete status line
// and head into dst (append style, no allocation once dst has room). Every
// response carries Content-Type (when given), Content-Length (except for 1xx,
// 204 and 304, where RFC 9110 forbids it), and Connection: close when the
// connection will be closed. CORS headers are the caller's policy (net/server
// grants an allowed Origin, never "*" by default) and go in extraHeaders.
package http1
