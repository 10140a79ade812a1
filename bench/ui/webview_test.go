package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ledgervenue/node/bench/proc"
)

var bin string

func TestMain(m *testing.M) { os.Exit(proc.Main(m, "../..", &bin)) }

// Bounds of the browser check.
const (
	// checkTimeout bounds one run of npm/check.mjs: chromium's start, the
	// page's first data, a tick of the book and the screenshot.
	checkTimeout = 2 * time.Minute
	// botsStartTimeout bounds the wait for --bots to list its bots.
	botsStartTimeout = 20 * time.Second
	// minShotBytes and minShotColors tell a rendered page from a blank or
	// an error page: the view has panels, text in several colours, red
	// and green book rows and candles.
	minShotBytes  = 20 << 10
	minShotColors = 64
)

// TestWebViewInBrowser loads /ui/ in headless chromium against a node whose
// bots quote and trade, with a bot's address typed in, and checks the
// screenshot. LEDGERD_UI_SHOT=FILE keeps the screenshot there (make
// ui-screenshot); LEDGERD_UI_WARMUP=D lets the bots trade for D first, so
// the chart has more than one candle.
func TestWebViewInBrowser(t *testing.T) {
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	missing := ""
	if _, err := os.Stat(chromium); err != nil {
		missing = "chromium (" + chromium + "; apt-get install chromium)"
	} else if _, err := exec.LookPath("node"); err != nil {
		missing = "node (apt-get install nodejs npm)"
	} else if _, err := os.Stat("npm/node_modules/playwright-core"); err != nil {
		missing = "bench/ui/npm/node_modules (make ui-tools)"
	}
	if missing != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and %s is missing", missing)
		}
		t.Skipf("%s is missing (with CI set this fails)", missing)
	}
	var warmup time.Duration
	if w := os.Getenv("LEDGERD_UI_WARMUP"); w != "" {
		var err error
		if warmup, err = time.ParseDuration(w); err != nil {
			t.Fatalf("LEDGERD_UI_WARMUP: %v", err)
		}
	}

	const token = "ui-test"
	n, err := proc.Start(bin, "--dev", "--compat", "--bots", "default", "--admin-token", token, "--datadir", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Stop()
		if t.Failed() {
			t.Logf("ledgerd log:\n%s", n.Log())
		}
	})
	address := botAddress(t, n.HTTP, token, "taker-0 ETH-PERP") // a perp position and fills to show
	time.Sleep(warmup)

	shot := os.Getenv("LEDGERD_UI_SHOT")
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "ui.png")
	} else if shot, err = filepath.Abs(shot); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "check.mjs", n.HTTP+"/ui/", shot, address)
	cmd.Dir = "npm"
	cmd.Env = append(os.Environ(), "CHROMIUM="+chromium)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("check.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	t.Logf("check.mjs: %s", strings.TrimSpace(stdout.String()))
	var counts struct{ Bids, Asks, Candles, Clearings, Positions int }
	if err := json.Unmarshal(stdout.Bytes(), &counts); err != nil {
		t.Fatalf("check.mjs printed %q: %v", stdout.String(), err)
	}
	if counts.Bids == 0 || counts.Asks == 0 || counts.Candles == 0 || counts.Clearings == 0 || counts.Positions == 0 {
		t.Fatalf("the page shows too little: %+v", counts)
	}
	checkScreenshot(t, shot)
}

// botAddress reads the address of the bot named name from admin_bots,
// asking again until the bots have started (within botsStartTimeout).
func botAddress(t *testing.T, url, token, name string) string {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	var seen []string
	for deadline := time.Now().Add(botsStartTimeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"admin_bots"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var answer struct {
			Result struct {
				Bots []struct{ Name, Address string }
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&answer)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		seen = seen[:0]
		for _, b := range answer.Result.Bots {
			if b.Name == name {
				return b.Address
			}
			seen = append(seen, b.Name)
		}
	}
	t.Fatalf("admin_bots has no %q within %v: %v", name, botsStartTimeout, seen)
	return ""
}

// checkScreenshot checks that file is a PNG of a rendered page: large
// enough, and in many colours (a blank or one-colour error page has few).
func checkScreenshot(t *testing.T, file string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	b := img.Bounds()
	if colors := countColors(img, minShotColors); len(raw) < minShotBytes || b.Dx() < 1000 || b.Dy() < 600 || colors < minShotColors {
		t.Fatalf("%s: %d bytes, %dx%d, %d colours; want ≥ %d bytes, ≥ 1000x600, ≥ %d colours",
			file, len(raw), b.Dx(), b.Dy(), colors, minShotBytes, minShotColors)
	}
	t.Logf("screenshot %s: %d bytes, %dx%d", file, len(raw), b.Dx(), b.Dy())
}

// countColors counts img's distinct colours, stopping at enough.
func countColors(img image.Image, enough int) int {
	seen := make(map[string]bool)
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[fmt.Sprint(r>>8, g>>8, bl>>8)] = true
			if len(seen) >= enough {
				return len(seen)
			}
		}
	}
	return len(seen)
}
