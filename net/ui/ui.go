// Package ui is the node's live web view: one HTML page, one script and one
// style sheet, embedded in the binary with go:embed and served on the
// node's own port at GET /ui/ (docs/ui.md). The page is a client of the
// node like any other: it reads with JSON-RPC over HTTP and follows the
// venue with eth_subscribe over WebSocket on the same origin, so its script
// doubles as an example of the subscriptions.
//
// Invariants: the files are fixed at build time, each at most MaxFileBytes,
// so every answer is bounded; each carries a strong ETag (a hash of its
// bytes) and Cache-Control: no-cache, so a browser revalidates and gets 304
// until the binary changes. Headers are built once at start; serving
// copies a file into the connection's reused buffer.
package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"

	"github.com/ledgervenue/node/net/http1"
	"github.com/ledgervenue/node/net/server"
)

// Prefix is the path the web view is served under; Root, without the
// slash, redirects to it.
const (
	Prefix = "/ui/"
	Root   = "/ui"
)

// MaxFileBytes bounds each embedded file, so an answer of the web view is
// never larger (TestFilesBounded): the page stays small and readable.
const MaxFileBytes = 64 << 10

//go:embed static
var static embed.FS

// policy is the content policy of every file: scripts, styles and
// connections from the node itself only ('self' covers the same origin's
// ws:), nothing embedded elsewhere, no framing.
const policy = "Content-Security-Policy: default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'\r\n" +
	"X-Content-Type-Options: nosniff\r\n"

// file is one embedded file, ready to answer.
type file struct {
	body        []byte
	contentType string
	etag        []byte // quoted
	headers     string // ETag, Cache-Control and the policy
}

// files maps the path under Prefix to its file; "" is index.html.
var files = load()

func load() map[string]*file {
	m := make(map[string]*file)
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		name := strings.TrimPrefix(p, "static/")
		f := &file{body: body, contentType: contentType(name), etag: []byte(etag),
			headers: "ETag: " + etag + "\r\nCache-Control: no-cache\r\n" + policy}
		m[name] = f
		if name == "index.html" {
			m[""] = f
		}
		return nil
	})
	if err != nil {
		panic("BUG: ui: embedded files unreadable: " + err.Error())
	}
	return m
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	}
	return "application/octet-stream"
}

// Serve answers a GET or HEAD request for Root or a path under Prefix and
// reports true; any other path it leaves alone (false). Only GET and HEAD
// get here: the parser refuses methods other than GET, HEAD, POST and
// OPTIONS, a POST outside /v1/ is JSON-RPC, and OPTIONS is the server's
// preflight. HEAD announces the length and sends no body (net/server).
func Serve(req *http1.Request, w *server.Response) bool {
	p := req.Path
	if string(p) == Root {
		w.Status, w.ContentType = 301, ""
		w.Headers = "Location: " + Prefix + "\r\n"
		return true
	}
	if !bytes.HasPrefix(p, []byte(Prefix)) {
		return false
	}
	f := files[string(p[len(Prefix):])]
	if f == nil {
		w.Status, w.ContentType = 404, "text/plain; charset=utf-8"
		w.Body = append(w.Body, "not found\n"...)
		return true
	}
	w.Headers = f.headers
	if inm := req.Header("If-None-Match"); inm != nil && bytes.Contains(inm, f.etag) {
		w.Status, w.ContentType = 304, ""
		return true
	}
	w.ContentType = f.contentType
	w.Body = append(w.Body, f.body...)
	return true
}
