package rpc_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestWebViewServed: the web view is served over the node's own port at
// /ui/ (GET and HEAD), /ui redirects there, a revalidation with the ETag is
// 304, and an unknown file is 404; other GETs still reach the REST surface.
func TestWebViewServed(t *testing.T) {
	tn := startNode(t)
	do := func(method, path string, header ...string) (*http.Response, string) {
		t.Helper()
		resp, body := httpDo(t, tn, method, path, header...)
		return resp, string(body)
	}

	resp, page := do("GET", "/ui/")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(page, `<script src="app.js"`) {
		t.Fatalf("GET /ui/: %d %q %.200q", resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	etag := resp.Header.Get("ETag")
	if etag == "" || resp.Header.Get("Cache-Control") != "no-cache" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "connect-src 'self'") {
		t.Fatalf("GET /ui/ headers: %v", resp.Header)
	}
	for path, ct := range map[string]string{"/ui/index.html": "text/html; charset=utf-8", "/ui/app.js": "text/javascript; charset=utf-8", "/ui/style.css": "text/css; charset=utf-8"} {
		if resp, body := do("GET", path); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ct || body == "" {
			t.Fatalf("GET %s: %d %q, %d bytes", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
	}
	if resp, body := do("HEAD", "/ui/"); resp.StatusCode != 200 || resp.ContentLength != int64(len(page)) || body != "" {
		t.Fatalf("HEAD /ui/: %d length %d (want %d), body %q", resp.StatusCode, resp.ContentLength, len(page), body)
	}
	if resp, body := do("GET", "/ui/", "If-None-Match", etag); resp.StatusCode != 304 || body != "" || resp.Header.Get("ETag") != etag {
		t.Fatalf("revalidation: %d %q ETag %q", resp.StatusCode, body, resp.Header.Get("ETag"))
	}
	if resp, _ := do("GET", "/ui/", "If-None-Match", `"0000"`); resp.StatusCode != 200 {
		t.Fatalf("a stale ETag: %d", resp.StatusCode)
	}
	if resp, _ := do("GET", "/ui"); resp.StatusCode != 301 || resp.Header.Get("Location") != "/ui/" {
		t.Fatalf("GET /ui: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, body := do("GET", "/ui/../v1/bridge/config"); resp.StatusCode != 404 || body != "not found\n" {
		t.Fatalf("a path outside the files: %d %q", resp.StatusCode, body)
	}
	if resp, body := do("GET", "/uix"); resp.StatusCode != 404 || body != `{"error":"not found"}` {
		t.Fatalf("GET /uix (REST): %d %q", resp.StatusCode, body)
	}
	// The page's own JSON-RPC, from its origin, is granted.
	req, _ := http.NewRequest("POST", tn.url+"/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ob_getMarkets"}`))
	req.Header.Set("Origin", tn.url)
	rresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rresp.Body.Close()
	if rresp.StatusCode != 200 || rresp.Header.Get("Access-Control-Allow-Origin") != tn.url {
		t.Fatalf("the page's JSON-RPC: %d grant %q", rresp.StatusCode, rresp.Header.Get("Access-Control-Allow-Origin"))
	}
}
