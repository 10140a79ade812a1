package rpc_test

import (
	"bufio"
	"bytes"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the <-- lines of testdata/*.conv with the node's answers")

// TestConversations replays testdata/*.conv: each "--> body" line is POSTed
// (lines starting "--> [admin]" carry the admin token) and the answer must
// equal the following "<-- body" line byte for byte ("<--" alone: an empty
// answer). Run with -rewrite to regenerate, then review the diff.
func TestConversations(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.conv")
	if len(files) == 0 {
		t.Fatal("no conversation files")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { runConversation(t, file) })
	}
}

func runConversation(t *testing.T, file string) {
	tn := startNode(t)
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var answer string
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "-->"):
			answer = post(t, tn.url, strings.TrimSpace(strings.TrimPrefix(text, "-->")))
			out.WriteString(text + "\n")
		case strings.HasPrefix(text, "<--"):
			want := strings.TrimSpace(strings.TrimPrefix(text, "<--"))
			if !*rewrite && answer != want {
				t.Errorf("%s:%d:\n got  %s\n want %s", file, line, answer, want)
			}
			out.WriteString(strings.TrimSpace("<-- "+answer) + "\n")
		default:
			out.WriteString(text + "\n")
		}
	}
	if *rewrite {
		if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// answerClient bounds every answer: a request the node never answers fails.
var answerClient = &http.Client{Timeout: 10 * time.Second}

func post(t testing.TB, url, body string) string {
	t.Helper()
	body, admin := strings.CutPrefix(body, "[admin] ")
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if admin {
		req.Header.Set("Authorization", "Bearer "+testAdminToken)
	}
	resp, err := answerClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d for %s", resp.StatusCode, body)
	}
	return string(b)
}
