package http1

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// result is what one Parse outcome says, copied out of the borrowed buffer.
type result struct {
	Method, Path, Query, Body string
	HasQuery                  bool
	ProtoMinor                int
	KeepAlive, Expect         bool
	N                         int
	Err                       *Error
}

func (r result) String() string {
	type plain result // drops the String method
	return fmt.Sprintf("%+v", plain(r))
}

func resultOf(r *Request, n int, err *Error) result {
	if err != nil {
		return result{Err: err}
	}
	return result{
		Method: string(r.Method), Path: string(r.Path), Query: string(r.Query),
		Body: string(r.Body), HasQuery: r.Query != nil, ProtoMinor: r.ProtoMinor,
		KeepAlive: r.KeepAlive, Expect: r.ExpectContinue, N: n,
	}
}

// parseStream feeds chunks the way net/server does: bytes accumulate in a
// buffer that is copied (moved) on every read; complete requests are cut off
// the front. It stops at the first error.
func parseStream(chunks [][]byte) []result {
	var (
		p   Parser
		r   Request
		in  []byte
		out []result
	)
	for _, c := range chunks {
		in = append(bytes.Clone(in), c...)
		for len(in) > 0 {
			n, err := p.Parse(in, &r)
			if err != nil {
				return append(out, resultOf(&r, n, err))
			}
			if n == 0 {
				break
			}
			out = append(out, resultOf(&r, n, nil))
			in = in[n:]
		}
	}
	return out
}

func parseOne(t *testing.T, input string) (result, *Request) {
	t.Helper()
	var (
		p Parser
		r Request
	)
	n, err := p.Parse([]byte(input), &r)
	return resultOf(&r, n, err), &r
}

func TestParseValid(t *testing.T) {
	f := func(input string, want result) {
		t.Helper()
		want.N = len(input)
		got, _ := parseOne(t, input)
		if got != want {
			t.Fatalf("Parse(%q)\n got %v\nwant %v", input, got, want)
		}
	}
	f("GET / HTTP/1.1\r\n\r\n",
		result{Method: "GET", Path: "/", ProtoMinor: 1, KeepAlive: true})
	f("GET /a/b?x=1&y HTTP/1.1\r\nHost: h\r\n\r\n",
		result{Method: "GET", Path: "/a/b", Query: "x=1&y", HasQuery: true, ProtoMinor: 1, KeepAlive: true})
	f("GET /? HTTP/1.1\r\n\r\n",
		result{Method: "GET", Path: "/", HasQuery: true, ProtoMinor: 1, KeepAlive: true})
	f("POST /rpc HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
		result{Method: "POST", Path: "/rpc", Body: "hello", ProtoMinor: 1, KeepAlive: true})
	f("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
		result{Method: "POST", Path: "/", ProtoMinor: 1, KeepAlive: true})
	f("POST / HTTP/1.1\r\ncontent-length: 2\r\nCONTENT-LENGTH: 02\r\n\r\nhi",
		result{Method: "POST", Path: "/", Body: "hi", ProtoMinor: 1, KeepAlive: true})
	f("HEAD /x HTTP/1.1\r\nConnection: close\r\n\r\n",
		result{Method: "HEAD", Path: "/x", ProtoMinor: 1})
	f("GET / HTTP/1.1\r\nConnection: Keep-Alive, CLOSE\r\n\r\n",
		result{Method: "GET", Path: "/", ProtoMinor: 1})
	f("GET / HTTP/1.0\r\n\r\n",
		result{Method: "GET", Path: "/"})
	f("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		result{Method: "GET", Path: "/", KeepAlive: true})
	f("GET / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n",
		result{Method: "GET", Path: "/"})
	f("POST / HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\nx",
		result{Method: "POST", Path: "/", Body: "x", ProtoMinor: 1, KeepAlive: true, Expect: true})
	f("OPTIONS * HTTP/1.1\r\n\r\n",
		result{Method: "OPTIONS", Path: "*", ProtoMinor: 1, KeepAlive: true})
	f("GET http://example.com:8545/p?q HTTP/1.1\r\n\r\n",
		result{Method: "GET", Path: "/p", Query: "q", HasQuery: true, ProtoMinor: 1, KeepAlive: true})
	f("\r\n\r\nGET / HTTP/1.1\r\n\r\n",
		result{Method: "GET", Path: "/", ProtoMinor: 1, KeepAlive: true})
	f("GET / HTTP/1.1\r\nX-Empty:\r\nX-Tabs:\t a b \t\r\nX-Utf8: \xc3\xa9\r\n\r\n",
		result{Method: "GET", Path: "/", ProtoMinor: 1, KeepAlive: true})
	f("GET / HTTP/1.1\r\nTransfer-Encodings: x\r\n\r\n",
		result{Method: "GET", Path: "/", ProtoMinor: 1, KeepAlive: true})
	f("GET / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
		result{Method: "GET", Path: "/", Body: "abc", ProtoMinor: 1, KeepAlive: true})
}

func TestParseErrors(t *testing.T) {
	f := func(input string, want *Error) {
		t.Helper()
		got, _ := parseOne(t, input)
		if got.Err != want {
			t.Fatalf("Parse(%q) = %v, want error %q", input, got, want.Reason)
		}
	}
	// Malformed request line.
	f("GET  / HTTP/1.1\r\n\r\n", ErrBadRequestLine)
	f("GET / HTTP/1.1 \r\n\r\n", ErrBadRequestLine)
	f("GET /\r\n\r\n", ErrBadRequestLine)
	f("GET / HTTP/1.1\n\r\n", ErrBadRequestLine)
	f("GET / http/1.1\r\n\r\n", ErrBadRequestLine)
	f("GET / HTTP/1.x\r\n\r\n", ErrBadRequestLine)
	f("GET / HTTP/11\r\n\r\n", ErrBadRequestLine)
	f("GET a HTTP/1.1\r\n\r\n", ErrBadRequestLine)
	f("GET * HTTP/1.1\r\n\r\n", ErrBadRequestLine)
	f("GET /\x01 HTTP/1.1\r\n\r\n", ErrBadRequestLine)
	f("GET /\xc3\xa9 HTTP/1.1\r\n\r\n", ErrBadRequestLine)
	f("GET http://host HTTP/1.1\r\n\r\n", ErrBadRequestLine)
	f("GET http:///p HTTP/1.1\r\n\r\n", ErrBadRequestLine)
	f("GET http://h?q/p HTTP/1.1\r\n\r\n", ErrBadRequestLine)
	f("G(T / HTTP/1.1\r\n\r\n", ErrBadRequestLine)
	f("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", ErrBadRequestLine) // TLS ClientHello
	f("\rGET / HTTP/1.1\r\n\r\n", ErrBadRequestLine)
	f("GET\r", ErrBadRequestLine)
	// Malformed fields.
	f("GET / HTTP/1.1\r\nHost : h\r\n\r\n", ErrBadHeader)
	f("GET / HTTP/1.1\r\n: h\r\n\r\n", ErrBadHeader)
	f("GET / HTTP/1.1\r\nHost h\r\n\r\n", ErrBadHeader)
	f("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", ErrBadHeader)
	f("GET / HTTP/1.1\r\nA: b\nC: d\r\n\r\n", ErrBadHeader)
	f("GET / HTTP/1.1\r\nA: b\rC: d\r\n\r\n", ErrBadHeader)
	f("GET / HTTP/1.1\r\nA: b\x00\r\n\r\n", ErrBadHeader)
	f("GET / HTTP/1.1\r\nA: b\x7f\r\n\r\n", ErrBadHeader)
	f("GET / HTTP/1.1\r\nA\x80: b\r\n\r\n", ErrBadHeader)
	f("GET / HTTP/1.1\r\nA: b\n\r\n", ErrBadHeader)
	f("GET / HTTP/1.1\r\n\n\r\n", ErrBadHeader)
	// Content-Length.
	f("POST / HTTP/1.1\r\nContent-Length: \r\n\r\n", ErrBadContentLength)
	f("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", ErrBadContentLength)
	f("POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n", ErrBadContentLength)
	f("POST / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n", ErrBadContentLength)
	f("POST / HTTP/1.1\r\nContent-Length: 1,1\r\n\r\n", ErrBadContentLength)
	f("POST / HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n", ErrBadContentLength)
	f("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", ErrBadContentLength)
	f("POST / HTTP/1.1\r\nContent-Length: 9223372036854775808\r\n\r\n", ErrBadContentLength)
	f("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", ErrBadContentLength)
	f("POST / HTTP/1.1\r\nContent-Length: 9223372036854775807\r\n\r\n", ErrBodyTooLarge)
	// Framing the node does not accept.
	f("POST / HTTP/1.1\r\n\r\n", ErrLengthRequired)
	f("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", ErrTransferEncoding)
	f("POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\nContent-Length: 1\r\n\r\nx", ErrTransferEncoding)
	f("GET / HTTP/1.1\r\ntransfer-encoding: gzip, chunked\r\n\r\n", ErrTransferEncoding)
	// Methods and versions.
	f("PUT / HTTP/1.1\r\nContent-Length: 1\r\n\r\nx", ErrMethodNotAllowed)
	f("DELETE / HTTP/1.1\r\n\r\n", ErrMethodNotAllowed)
	f("get / HTTP/1.1\r\n\r\n", ErrMethodNotAllowed)
	f("PROPFIND / HTTP/1.1\r\n\r\n", ErrMethodNotAllowed)
	f("AAAAAAAAAAAAAAAA", ErrMethodNotAllowed)
	f("GET / HTTP/2.0\r\n\r\n", ErrVersionNotSupported)
	f("GET / HTTP/2\r\n\r\n", ErrVersionNotSupported)
	f("GET / HTTP/0.9\r\n\r\n", ErrVersionNotSupported)
	f("GET / HTTP/1.2\r\n\r\n", ErrVersionNotSupported)
	f("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", ErrVersionNotSupported)
	f("PUT / HTTP/3.0\r\n\r\n", ErrVersionNotSupported)
}

func TestParseNeedMore(t *testing.T) {
	f := func(input string) {
		t.Helper()
		got, _ := parseOne(t, input)
		if got.N != 0 || got.Err != nil || got.Expect {
			t.Fatalf("Parse(%q) = %v, want need-more", input, got)
		}
	}
	f("")
	f("\r")
	f("\r\n")
	f("\r\n\r")
	f("GET")
	f("OPTIONS")
	f("GET / HTTP/1.1\r")
	f("GET / HTTP/1.1\r\n")
	f("GET / HTTP/1.1\r\nHost: h\r\n")
	f("GET / HTTP/1.1\r\nHost: h\r\n\r")
	f("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nab")
}

func TestParseExpectContinue(t *testing.T) {
	var (
		p Parser
		r Request
	)
	head := "POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n"
	if _, _ = p.Parse([]byte(head[:len(head)-1]), &r); p.InBody() {
		t.Fatal("InBody before the head is complete")
	}
	n, err := p.Parse([]byte(head), &r)
	if n != 0 || err != nil || !r.ExpectContinue || !p.InBody() {
		t.Fatalf("head only: n=%d err=%v expect=%v in body=%v, want 0, nil, true, true", n, err, r.ExpectContinue, p.InBody())
	}
	n, err = p.Parse([]byte(head+"body"), &r)
	if n != len(head)+4 || err != nil || string(r.Body) != "body" || !r.ExpectContinue || p.InBody() {
		t.Fatalf("full: n=%d err=%v body=%q in body=%v", n, err, r.Body, p.InBody())
	}
	// The next request starts without the flag, even before its head is in.
	n, err = p.Parse([]byte("POST / HTTP/1.1\r\n"), &r)
	if n != 0 || err != nil || r.ExpectContinue || p.InBody() {
		t.Fatalf("next request: n=%d err=%v expect=%v, want 0, nil, false", n, err, r.ExpectContinue)
	}
}

func TestHeader(t *testing.T) {
	_, r := parseOne(t, "GET / HTTP/1.1\r\nHost: example\r\nX-A:  one \r\nx-a: two\r\nEmpty:\r\n"+
		"Access-Control-Request-Headers: content-type, x-foo\r\n\r\n")
	f := func(name string, want []byte) {
		t.Helper()
		got := r.Header(name)
		if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("Header(%q) = %q, want %q", name, got, want)
		}
	}
	f("Host", []byte("example"))
	f("HOST", []byte("example"))
	f("x-a", []byte("one"))
	f("Empty", []byte{})
	f("access-control-request-headers", []byte("content-type, x-foo"))
	f("Missing", nil)
	f("Hos", nil)
}

func TestHasToken(t *testing.T) {
	f := func(list, token string, want bool) {
		t.Helper()
		if got := HasToken([]byte(list), token); got != want {
			t.Fatalf("HasToken(%q, %q) = %v, want %v", list, token, got, want)
		}
	}
	f("websocket", "websocket", true)
	f("WebSocket", "websocket", true)
	f("h2c, websocket", "websocket", true)
	f(" keep-alive ,\tUpgrade\t", "upgrade", true)
	f("websockets", "websocket", false)
	f("", "close", false)
	f(",,", "close", false)
}

// TestParseLimits pins every named limit at its boundary.
func TestParseLimits(t *testing.T) {
	f := func(name, input string, wantN int, wantErr *Error) {
		t.Helper()
		got, _ := parseOne(t, input)
		if got.Err != wantErr || got.N != wantN {
			t.Fatalf("%s: n=%d err=%v, want n=%d err=%v", name, got.N, got.Err, wantN, wantErr)
		}
	}
	line := "GET / HTTP/1.1\r\n"
	pad := func(total int) string { // a head of exactly total bytes
		filler := total - len(line) - len("X: \r\n\r\n")
		return line + "X: " + strings.Repeat("a", filler) + "\r\n\r\n"
	}
	f("head at limit", pad(MaxHeaderBytes), MaxHeaderBytes, nil)
	f("head over limit", pad(MaxHeaderBytes+1), 0, ErrHeaderTooLarge)
	f("head over limit, incomplete", pad(MaxHeaderBytes + 1)[:MaxHeaderBytes], 0, ErrHeaderTooLarge)
	f("line over limit", "GET /"+strings.Repeat("a", MaxHeaderBytes), 0, ErrHeaderTooLarge)
	f("empty lines over limit", strings.Repeat("\r\n", MaxHeaderBytes/2)+line+"\r\n", 0, ErrHeaderTooLarge)

	fields := func(count int) string {
		return line + strings.Repeat("A: b\r\n", count) + "\r\n"
	}
	f("fields at limit", fields(MaxHeaderCount), len(fields(MaxHeaderCount)), nil)
	f("fields over limit", fields(MaxHeaderCount+1), 0, ErrTooManyHeaders)

	post := func(length int) string {
		return "POST / HTTP/1.1\r\nContent-Length: " + strconv.Itoa(length) + "\r\n\r\n"
	}
	// At the limit the parser waits for the body; one byte over fails at once.
	f("body at limit", post(MaxBodyBytes), 0, nil)
	f("body over limit", post(MaxBodyBytes+1), 0, ErrBodyTooLarge)
	body := strings.Repeat("b", MaxBodyBytes)
	f("body at limit, complete", post(MaxBodyBytes)+body, len(post(MaxBodyBytes))+MaxBodyBytes, nil)
}

var streamCases = []string{
	"GET / HTTP/1.1\r\n\r\n",
	"POST /rpc HTTP/1.1\r\nHost: localhost:8545\r\nContent-Type: application/json\r\nContent-Length: 48\r\n\r\n" +
		`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}` + "\n",
	// Three pipelined requests, the middle one with a body.
	"GET /a HTTP/1.1\r\n\r\nPOST /b?x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcHEAD /c HTTP/1.0\r\n\r\n",
	"\r\n\r\nGET / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi\r\nGET /z HTTP/1.1\r\n\r\n",
	"GET / HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nBad Header\r\n\r\nGET / HTTP/1.1\r\n\r\n",
	"GET / HTTP/1.1\r\n\r\nXXXXXXXXXX",
	"GET / HTTP/1.1\r\n\r\nPOST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	"OPTIONS * HTTP/1.1\r\nAccess-Control-Request-Headers: content-type\r\n\r\n",
}

// TestParseSplit feeds every case split at every byte offset, and byte by
// byte, and expects the same outcome as when it arrives in one piece.
func TestParseSplit(t *testing.T) {
	for _, c := range streamCases {
		in := []byte(c)
		want := parseStream([][]byte{in})
		if len(want) == 0 {
			t.Fatalf("%q: no result in one piece", c)
		}
		for i := range len(in) + 1 {
			got := parseStream([][]byte{in[:i], in[i:]})
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%q split at %d:\n got %v\nwant %v", c, i, got, want)
			}
		}
		var bytewise [][]byte
		for i := range in {
			bytewise = append(bytewise, in[i:i+1])
		}
		if got := parseStream(bytewise); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q byte by byte:\n got %v\nwant %v", c, got, want)
		}
	}
}

func TestParseBodyIsCapped(t *testing.T) {
	var (
		p Parser
		r Request
	)
	buf := []byte("POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\nxGET / HTTP/1.1\r\n\r\n")
	n, err := p.Parse(buf, &r)
	if err != nil || n == 0 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	_ = append(r.Body, "YYYY"...)
	if string(buf[n:n+3]) != "GET" {
		t.Fatalf("append to Body overwrote the next request: %q", buf[n:])
	}
}

func TestParseAllocs(t *testing.T) {
	var (
		p Parser
		r Request
	)
	buf := []byte(streamCases[1])
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := p.Parse(buf[:60], &r); err != nil {
			t.Fatal(err)
		}
		if n, err := p.Parse(buf, &r); n != len(buf) || err != nil {
			t.Fatal(n, err)
		}
		_ = r.Header("content-type")
	})
	if allocs != 0 {
		t.Fatalf("Parse allocates %.1f times per request, want 0", allocs)
	}
}

func FuzzParse(f *testing.F) {
	for _, c := range streamCases {
		f.Add([]byte(c))
	}
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 00000000000000000000001\r\n\r\nx"))
	f.Add([]byte("GET http://h/p?q HTTP/1.1\r\nConnection: keep-alive,close\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		whole := parseStream([][]byte{data})
		half := parseStream([][]byte{data[:len(data)/2], data[len(data)/2:]})
		if fmt.Sprint(whole) != fmt.Sprint(half) {
			t.Fatalf("%q:\nwhole %v\nhalves %v", data, whole, half)
		}
		consumed := 0
		for _, r := range whole {
			if r.Err != nil {
				if r.Err.Status < 400 || r.Err.Status > 599 {
					t.Fatalf("%q: error status %d", data, r.Err.Status)
				}
				continue
			}
			consumed += r.N
			if r.N <= 0 || consumed > len(data) || len(r.Body) > MaxBodyBytes {
				t.Fatalf("%q: bad result %v", data, r)
			}
			if r.Method != "GET" && r.Method != "HEAD" && r.Method != "POST" && r.Method != "OPTIONS" {
				t.Fatalf("%q: method %q accepted", data, r.Method)
			}
		}
	})
}
