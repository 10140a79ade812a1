package rpc_test

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// FuzzServe posts arbitrary bodies (two halves joined into one) to a whole
// node over loopback, admin token included: the node must never fail, and
// whatever it answers must be valid JSON (or nothing, for notifications),
// with HTTP 200. Seeds: every request of the conversation files.
func FuzzServe(f *testing.F) {
	file, err := os.Open("testdata/protocol.conv")
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		if body, ok := strings.CutPrefix(sc.Text(), "--> "); ok {
			body = strings.TrimPrefix(body, "[admin] ")
			f.Add([]byte(body[:len(body)/2]), []byte(body[len(body)/2:]))
		}
	}
	file.Close()
	tn := startNodeTB(f)
	f.Fuzz(func(t *testing.T, a, b []byte) {
		body := append(append([]byte(nil), a...), b...)
		answer := post(t, tn.url, "[admin] "+string(body))
		if len(answer) > 0 && !json.Valid([]byte(answer)) {
			t.Fatalf("invalid JSON answer %q to %q", answer, body)
		}
	})
}
