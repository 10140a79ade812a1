package http1

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"testing"
)

func TestAppendResponse(t *testing.T) {
	f := func(status int, contentType, extra, body string, keepAlive bool, want string) {
		t.Helper()
		got := AppendResponse([]byte("prefix|"), status, contentType, []byte(extra), []byte(body), keepAlive)
		if string(got) != "prefix|"+want {
			t.Fatalf("AppendResponse(%d) =\n%q\nwant\n%q", status, got, "prefix|"+want)
		}
	}
	f(200, "application/json", "", `{"a":1}`, true,
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n"+
			"\r\n"+`{"a":1}`)
	f(400, "application/json", "", `{}`, false,
		"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"+
			"Connection: close\r\n\r\n{}")
	f(405, "application/json", "Allow: GET\r\n", "", true,
		"HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json\r\nContent-Length: 0\r\n"+
			"Allow: GET\r\n\r\n")
	f(204, "", "X: y\r\n", "", true,
		"HTTP/1.1 204 No Content\r\nX: y\r\n\r\n")
	f(299, "text/plain", "", "z", true,
		"HTTP/1.1 299 \r\nContent-Type: text/plain\r\nContent-Length: 1\r\n\r\nz")
}

func TestAppendResponseHead(t *testing.T) {
	got := AppendResponseHead(nil, 200, "application/json", nil, 1234, true)
	want := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1234\r\n\r\n"
	if string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestAppendResponseReadable checks the output against the standard library's
// response reader.
func TestAppendResponseReadable(t *testing.T) {
	raw := AppendResponse(nil, 503, "application/json", []byte("Retry-After: 1\r\n"), []byte(`{"e":1}`), false)
	raw = AppendResponse(raw, 200, "text/plain", nil, []byte("ok"), true)
	br := bufio.NewReader(bytes.NewReader(raw))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 503 || string(body) != `{"e":1}` || !resp.Close ||
		resp.Header.Get("Retry-After") != "1" || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("unexpected response %+v body %q", resp, body)
	}
	if _, err := http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	}
}

func TestAppendResponsePanics(t *testing.T) {
	f := func(name string, fn func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Fatalf("%s: no panic", name)
			}
		}()
		fn()
	}
	f("status 99", func() { AppendResponse(nil, 99, "", nil, nil, true) })
	f("status 1000", func() { AppendResponse(nil, 1000, "", nil, nil, true) })
	f("204 with body", func() { AppendResponse(nil, 204, "", nil, []byte("x"), true) })
}

func TestAppendResponseAllocs(t *testing.T) {
	dst := make([]byte, 0, 512)
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":"0x1"}`)
	allocs := testing.AllocsPerRun(100, func() {
		dst = AppendResponse(dst[:0], 200, "application/json", nil, body, true)
	})
	if allocs != 0 {
		t.Fatalf("AppendResponse allocates %.1f times, want 0", allocs)
	}
}
