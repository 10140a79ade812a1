package http1

import "strconv"

// Continue is the interim response sent when a request carries
// "Expect: 100-continue" and its body has not arrived yet.
const Continue = "HTTP/1.1 100 Continue\r\n\r\n"

// AppendResponse appends a complete response (status line, head, body) to dst.
//
// The head carries Content-Type when contentType is not empty, Content-Length
// (omitted for 1xx, 204 and 304, RFC 9110 §8.6) and, when !keepAlive,
// Connection: close; then extraHeaders verbatim. CORS headers are the
// caller's policy: it passes them in extraHeaders.
//
// REQUIRES: 100 <= status <= 999; body is empty for 1xx, 204 and 304;
// contentType and extraHeaders contain no CR or LF other than the CRLF that
// ends each line of extraHeaders.
func AppendResponse(dst []byte, status int, contentType string, extraHeaders, body []byte, keepAlive bool) []byte {
	if len(body) > 0 && !bodyAllowed(status) {
		panic("BUG: http1: response body with status " + strconv.Itoa(status))
	}
	dst = AppendResponseHead(dst, status, contentType, extraHeaders, len(body), keepAlive)
	return append(dst, body...)
}

// AppendResponseHead is AppendResponse without the body: it announces
// contentLength bytes but writes none. It answers HEAD requests and lets a
// caller write a large body from elsewhere.
func AppendResponseHead(dst []byte, status int, contentType string, extraHeaders []byte, contentLength int, keepAlive bool) []byte {
	if status < 100 || status > 999 {
		panic("BUG: http1: status " + strconv.Itoa(status) + " out of range")
	}
	dst = append(dst, "HTTP/1.1 "...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	dst = append(dst, ' ')
	dst = append(dst, StatusText(status)...)
	dst = append(dst, "\r\n"...)
	if contentType != "" {
		dst = append(dst, "Content-Type: "...)
		dst = append(dst, contentType...)
		dst = append(dst, "\r\n"...)
	}
	if bodyAllowed(status) {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(contentLength), 10)
		dst = append(dst, "\r\n"...)
	}
	if !keepAlive {
		dst = append(dst, "Connection: close\r\n"...)
	}
	dst = append(dst, extraHeaders...)
	return append(dst, "\r\n"...)
}

// bodyAllowed reports whether a response with this status has a body and a
// Content-Length.
func bodyAllowed(status int) bool {
	return status >= 200 && status != 204 && status != 304
}

// StatusText returns the reason phrase for status, or "" when it has none
// here (the reason phrase is optional, RFC 9112 §4).
func StatusText(status int) string {
	switch status {
	case 100:
		return "Continue"
	case 101:
		return "Switching Protocols"
	case 200:
		return "OK"
	case 201:
		return "Created"
	case 202:
		return "Accepted"
	case 204:
		return "No Content"
	case 301:
		return "Moved Permanently"
	case 302:
		return "Found"
	case 304:
		return "Not Modified"
	case 400:
		return "Bad Request"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	case 408:
		return "Request Timeout"
	case 411:
		return "Length Required"
	case 413:
		return "Content Too Large"
	case 415:
		return "Unsupported Media Type"
	case 429:
		return "Too Many Requests"
	case 431:
		return "Request Header Fields Too Large"
	case 500:
		return "Internal Server Error"
	case 501:
		return "Not Implemented"
	case 503:
		return "Service Unavailable"
	case 505:
		return "HTTP Version Not Supported"
	}
	return ""
}
