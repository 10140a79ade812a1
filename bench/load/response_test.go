package load

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseResponse(t *testing.T) {
	f := func(in string, wantN, wantStatus int, wantBody string, wantErr error) {
		t.Helper()
		n, status, body, err := parseResponse([]byte(in))
		if !errors.Is(err, wantErr) || n != wantN || status != wantStatus || string(body) != wantBody {
			t.Fatalf("parseResponse(%q) = %d, %d, %q, %v; want %d, %d, %q, %v",
				in, n, status, body, err, wantN, wantStatus, wantBody, wantErr)
		}
	}
	ok := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
	f(ok, len(ok), 200, "{}", nil)
	f(ok+"HTTP/1.1", len(ok), 200, "{}", nil)
	f(ok[:len(ok)-1], 0, 0, "", nil)
	f("HTTP/1.1 200 OK\r\n", 0, 0, "", nil)
	f("", 0, 0, "", nil)
	// complete: the whole input is one response.
	complete := func(in string, status int, body string) { t.Helper(); f(in, len(in), status, body, nil) }
	complete("HTTP/1.0 404\r\ncontent-LENGTH:\t0 \r\n\r\n", 404, "")
	complete("HTTP/1.1 204 No Content\r\nA: b\r\n\r\n", 204, "")
	complete("HTTP/1.1 304 Not Modified\r\n\r\n", 304, "")
	complete("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", 200, "x")
	complete("HTTP/1.1 999\r\nContent-Length: 0\r\n\r\n", 999, "")
	f("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx", 0, 0, "", ErrMalformedResponse)
	f("HTTP/1.1 200 OK\r\n\r\n", 0, 0, "", ErrNoContentLength)
	f("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 0, 0, "", ErrNoContentLength)
	f("HTTP/1.1 100 Continue\r\n\r\n", 0, 0, "", ErrMalformedResponse)
	f("HTTP/2 200\r\nContent-Length: 0\r\n\r\n", 0, 0, "", ErrMalformedResponse)
	f("HTTP/1.1 20x\r\nContent-Length: 0\r\n\r\n", 0, 0, "", ErrMalformedResponse)
	f("HTTP/1.1 2000\r\nContent-Length: 0\r\n\r\n", 0, 0, "", ErrMalformedResponse)
	f("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 0, 0, "", ErrMalformedResponse)
	f("HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", 0, 0, "", ErrMalformedResponse)
	f("HTTP/1.1 200 OK\r\nno colon\r\n\r\n", 0, 0, "", ErrMalformedResponse)
	f("HTTP/1.1 200 OK\r\n: empty name\r\n\r\n", 0, 0, "", ErrMalformedResponse)
}

func TestParseResponseLimits(t *testing.T) {
	f := func(in []byte, wantN int, wantErr error) {
		t.Helper()
		n, _, _, err := parseResponse(in)
		if n != wantN || !errors.Is(err, wantErr) {
			t.Fatalf("parseResponse(%d bytes) = %d, %v; want %d, %v", len(in), n, err, wantN, wantErr)
		}
	}
	// headOf returns a response head of exactly size bytes, padded by one field.
	headOf := func(size int) []byte {
		const start, end = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: ", "\r\n\r\n"
		return []byte(start + strings.Repeat("p", size-len(start)-len(end)) + end)
	}
	f(headOf(HeaderBytesMax), HeaderBytesMax, nil)
	f(headOf(HeaderBytesMax+1), 0, ErrHeaderTooLarge)
	f(headOf(HeaderBytesMax + 1)[:HeaderBytesMax-1], 0, nil)
	f(headOf(HeaderBytesMax + 1)[:HeaderBytesMax], 0, ErrHeaderTooLarge)

	bodyHead := func(n int) []byte {
		return []byte("HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(n) + "\r\n\r\n")
	}
	atMax := append(bodyHead(BodyBytesMax), make([]byte, BodyBytesMax)...)
	f(atMax, len(atMax), nil)
	f(bodyHead(BodyBytesMax+1), 0, ErrBodyTooLarge)
	f(bodyHead(1<<62), 0, ErrBodyTooLarge)
}

// stream is a connection's worth of responses of every shape.
var stream = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n" +
	`{"jsonrpc":"2.0","id":1,"result":"0x50d"}`[:40] +
	"HTTP/1.1 204 No Content\r\n\r\n" +
	"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 3\r\n\r\nbad" +
	"HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"

type parsed struct {
	status int
	body   string
}

// parseChunks feeds chunks to an inbox the way a connection's reads would
// and returns every response and the first error.
func parseChunks(chunks ...[]byte) ([]parsed, error) {
	var in inbox
	var out []parsed
	for _, chunk := range chunks {
		for len(chunk) > 0 {
			n := copy(in.space(), chunk)
			in.commit(n)
			chunk = chunk[n:]
			for {
				status, body, ok, err := in.next()
				if err != nil {
					return out, err
				}
				if !ok {
					break
				}
				out = append(out, parsed{status, string(body)})
			}
		}
	}
	return out, nil
}

func TestParseSplitAtEveryOffset(t *testing.T) {
	want, err := parseChunks([]byte(stream))
	if err != nil || len(want) != 4 {
		t.Fatalf("whole stream: %v, %d responses", err, len(want))
	}
	for i := range len(stream) + 1 {
		got, err := parseChunks([]byte(stream[:i]), []byte(stream[i:]))
		if err != nil || !equalParsed(got, want) {
			t.Fatalf("split at %d: %v, %v; want %v", i, got, err, want)
		}
	}
}

func TestInboxLargeResponses(t *testing.T) {
	big := bytes.Repeat([]byte("b"), 3*inboxReadMin+5)
	resp := append([]byte("HTTP/1.1 200 OK\r\nContent-Length: "+strconv.Itoa(len(big))+"\r\n\r\n"), big...)
	all := bytes.Repeat(resp, 3)
	got, err := parseChunks(all[:7], all[7:len(all)/2], all[len(all)/2:])
	if err != nil || len(got) != 3 || got[2].body != string(big) {
		t.Fatalf("got %d responses, %v", len(got), err)
	}
}

func equalParsed(a, b []parsed) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func FuzzParseResponse(f *testing.F) {
	f.Add([]byte(stream))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, wholeErr := parseChunks(data)
		half := len(data) / 2
		split, splitErr := parseChunks(data[:half], data[half:])
		if !errors.Is(splitErr, wholeErr) || !equalParsed(whole, split) {
			t.Fatalf("whole: %v, %v; in two halves: %v, %v", whole, wholeErr, split, splitErr)
		}
		for _, p := range whole {
			if p.status < 200 || p.status > 999 || len(p.body) > BodyBytesMax {
				t.Fatalf("accepted status %d with %d body bytes", p.status, len(p.body))
			}
		}
	})
}
