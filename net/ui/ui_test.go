package ui

import (
	"strings"
	"testing"
)

// TestFilesBounded: the page, its script and its style sheet are embedded,
// each within MaxFileBytes and with a real content type, so every answer
// of the web view is bounded and rendered by the browser as meant.
func TestFilesBounded(t *testing.T) {
	for _, name := range []string{"", "index.html", "app.js", "style.css"} {
		if files[name] == nil {
			t.Fatalf("%q is not served", name)
		}
	}
	for name, f := range files {
		if len(f.body) == 0 || len(f.body) > MaxFileBytes {
			t.Errorf("%s: %d bytes, want 1..%d", name, len(f.body), MaxFileBytes)
		}
		if f.contentType == "application/octet-stream" {
			t.Errorf("%s: no content type for its extension", name)
		}
		if !strings.Contains(f.headers, "ETag: "+string(f.etag)+"\r\n") {
			t.Errorf("%s: headers %q lack its ETag", name, f.headers)
		}
	}
}
