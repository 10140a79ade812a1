package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
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
	// fillsTimeout bounds the wait for a maker bot's first fills.
	fillsTimeout = 60 * time.Second
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
	chromium := needBrowser(t)
	warmup := warmupOf(t)
	n := startBots(t)
	address := botAddress(t, n.HTTP, "taker-0 ETH-PERP") // a perp position and fills to show
	time.Sleep(warmup)
	shot := shotFile(t, "LEDGERD_UI_SHOT", "ui.png")
	var counts struct{ Bids, Asks, Candles, Clearings, Positions int }
	runCheck(t, chromium, &counts, "check.mjs", n.HTTP+"/ui/", shot, address)
	if counts.Bids == 0 || counts.Asks == 0 || counts.Candles == 0 || counts.Clearings == 0 || counts.Positions == 0 {
		t.Fatalf("the page shows too little: %+v", counts)
	}
	checkScreenshot(t, shot)
}

// TestReportInBrowser loads the strategy report page (/ui/report.html) of
// a market-making bot in headless chromium once the bot has fills, and
// checks that it shows what lab_strategyReport answers: the PnL split, the
// markouts, the bot's markets and the CSV export's link, which serves CSV.
// LEDGERD_UI_REPORT_SHOT=FILE keeps the screenshot (make ui-screenshot).
func TestReportInBrowser(t *testing.T) {
	chromium := needBrowser(t)
	warmup := warmupOf(t)
	n := startBots(t)
	address := botAddress(t, n.HTTP, "maker-0 WETH/USD")
	var report struct {
		Fills   int `json:"fills"`
		Markets []struct {
			Market string `json:"market"`
		} `json:"markets"`
		Markouts []json.RawMessage `json:"markouts"`
	}
	for deadline := time.Now().Add(fillsTimeout); report.Fills < 2; time.Sleep(250 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("maker-0 WETH/USD has %d fills after %v", report.Fills, fillsTimeout)
		}
		rpcCall(t, n.HTTP, &report, "lab_strategyReport", map[string]string{"account": address})
	}
	time.Sleep(warmup)
	shot := shotFile(t, "LEDGERD_UI_REPORT_SHOT", "report.png")
	var shown struct {
		Cards    [][2]string
		Markouts int
		Markets  []string
		Fills    string
		CSV      string
	}
	runCheck(t, chromium, &shown, "report.mjs", n.HTTP+"/ui/", shot, address)
	var labels []string
	for _, c := range shown.Cards {
		labels = append(labels, c[0])
	}
	if got, want := strings.Join(labels, ","), "total,spread capture,fees,funding,inventory,max drawdown"; got != want {
		t.Errorf("PnL cards %q, want %q", got, want)
	}
	if shown.Markouts != len(report.Markouts) || len(shown.Markets) == 0 || shown.Markets[0] != report.Markets[0].Market {
		t.Errorf("the page shows %d markouts and markets %v; lab_strategyReport has %d and %+v", shown.Markouts, shown.Markets, len(report.Markouts), report.Markets)
	}
	if fills, _, _ := strings.Cut(shown.Fills, " "); fills == "" || fills == "0" {
		t.Errorf("the page shows fills %q", shown.Fills)
	}
	resp, err := http.Get(n.HTTP + shown.CSV)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") || !strings.Contains(string(body), "WETH/USD") {
		t.Errorf("the CSV link %s: %d %s %.200s", shown.CSV, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	checkScreenshot(t, shot)
}

// uiToken is the admin token of the browser tests' nodes.
const uiToken = "ui-test"

// needBrowser returns the chromium to drive, skipping the test when it,
// node or the npm tools are missing (failing instead when CI is set).
func needBrowser(t *testing.T) string {
	t.Helper()
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
	return chromium
}

// warmupOf reads LEDGERD_UI_WARMUP (0 when unset).
func warmupOf(t *testing.T) time.Duration {
	t.Helper()
	w := os.Getenv("LEDGERD_UI_WARMUP")
	if w == "" {
		return 0
	}
	d, err := time.ParseDuration(w)
	if err != nil {
		t.Fatalf("LEDGERD_UI_WARMUP: %v", err)
	}
	return d
}

// startBots starts ledgerd --dev --compat --bots default for the test.
func startBots(t *testing.T) *proc.Ledgerd {
	t.Helper()
	n, err := proc.Start(bin, "--dev", "--compat", "--bots", "default", "--admin-token", uiToken, "--datadir", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Stop()
		if t.Failed() {
			t.Logf("ledgerd log:\n%s", n.Log())
		}
	})
	return n
}

// shotFile is the screenshot's path: env names a file to keep, else one
// in the test's temporary directory.
func shotFile(t *testing.T, env, name string) string {
	t.Helper()
	shot := os.Getenv(env)
	if shot == "" {
		return filepath.Join(t.TempDir(), name)
	}
	shot, err := filepath.Abs(shot)
	if err != nil {
		t.Fatal(err)
	}
	return shot
}

// runCheck runs a script of npm/ with node against chromium and decodes
// the JSON line it prints into out.
func runCheck(t *testing.T, chromium string, out any, script string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir = "npm"
	cmd.Env = append(os.Environ(), "CHROMIUM="+chromium)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", script, err, stdout.String(), stderr.String())
	}
	t.Logf("%s: %s", script, strings.TrimSpace(stdout.String()))
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("%s printed %q: %v", script, stdout.String(), err)
	}
}

// rpcCall calls method with the admin token over HTTP, decoding its result
// into out.
func rpcCall(t *testing.T, url string, out any, method string, params ...any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+uiToken)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct {
		Result json.RawMessage
		Error  *struct {
			Code    int
			Message string
			Data    any
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatal(err)
	}
	if answer.Error != nil {
		t.Fatalf("%s: %d %s %v", method, answer.Error.Code, answer.Error.Message, answer.Error.Data)
	}
	if err := json.Unmarshal(answer.Result, out); err != nil {
		t.Fatalf("%s answered %s: %v", method, answer.Result, err)
	}
}

// botAddress reads the address of the bot named name from admin_bots,
// asking again until the bots have started (within botsStartTimeout).
func botAddress(t *testing.T, url, name string) string {
	t.Helper()
	var seen []string
	for deadline := time.Now().Add(botsStartTimeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var st struct {
			Bots []struct{ Name, Address string }
		}
		rpcCall(t, url, &st, "admin_bots")
		seen = seen[:0]
		for _, b := range st.Bots {
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
