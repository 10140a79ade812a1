package clients

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// steps are the flow's steps, in the order every flow program prints them.
var steps = []string{
	"chainId", "balance", "nonce", "transfer", "wait", "getTransaction",
	"receipt", "logs", "newHeads", "svc_orderbook", "order",
}

// library is one client library of the matrix.
type library struct {
	name string // the column title, "ethers 6"
	js   string // the flow script under js/; empty for go-ethereum
}

var libraries = []library{
	{name: "ethers 6", js: "ethers-flow.mjs"},
	{name: "viem 2", js: "viem-flow.mjs"},
	{name: "go-ethereum"}, // ./bench/clients/gethflow
}

// modes are the node's two shapes: the spec's, and --compat.
var modes = []struct {
	name   string // column suffix
	compat bool
}{{"spec", false}, {"--compat", true}}

// outcome is one step of one run: ok and how long it took, or the failure
// message.
type outcome struct {
	ok  bool
	ms  string // milliseconds, as the flow printed them
	msg string
}

// TestClientMatrix runs each library's flow against a spec node and a
// --compat node, checks that every step works under --compat, and compares
// the table of what works where with README.md (UPDATE_README=1 rewrites
// it).
func TestClientMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the client matrix starts nodes and client programs")
	}
	withJS := jsReady(t)
	gethflow := gethflowBinary(t)

	var columns []string
	var results []map[string]outcome // per column
	for _, lib := range libraries {
		if lib.js != "" && !withJS {
			continue
		}
		for _, mode := range modes {
			column := fmt.Sprintf("%s (%s)", lib.name, mode.name)
			argv := []string{gethflow}
			if lib.js != "" {
				argv = []string{"node", filepath.Join("js", lib.js)}
			}
			var res map[string]outcome
			t.Run(column, func(t *testing.T) {
				res = runFlow(t, mode.compat, argv)
				if mode.compat {
					requireAllOK(t, res, steps)
				}
			})
			columns = append(columns, column)
			results = append(results, res)
		}
	}

	table := renderTable(columns, results)
	t.Logf("client matrix:\n%s", table)
	if !withJS {
		t.Log("the README table is not checked without the JavaScript clients")
		return
	}
	checkReadmeTable(t, filepath.Join(repoRoot, "README.md"), table)
}

// gethflowBinary builds the go-ethereum flow program.
func gethflowBinary(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("gethflow/main.go"); err != nil {
		t.Fatalf("the go-ethereum flow bench/clients/gethflow/main.go is missing (%v): the matrix needs all three libraries", err)
	}
	return buildGo(t, "./bench/clients/gethflow")
}

// runFlow starts a fresh node, runs one flow program against it and returns
// the outcome of every step; a step the program did not report failed.
func runFlow(t *testing.T, compat bool, argv []string) map[string]outcome {
	n := startNode(t, compat)
	start := time.Now()
	p := run(90*time.Second, []string{"LEDGERD_HTTP=" + n.HTTP, "LEDGERD_WS=" + n.WS}, argv...)
	t.Logf("%s ran in %v", strings.Join(argv, " "), time.Since(start).Round(time.Millisecond))
	res := parseSteps(p.Stdout, steps)
	t.Logf("milliseconds: %s", timings(res))
	if p.Err != nil || !allOK(res) {
		p.logOutput(t, filepath.Base(argv[len(argv)-1]))
	}
	if p.Err != nil {
		t.Errorf("the flow program crashed: %v", p.Err)
	}
	return res
}

// parseSteps reads the `STEP <name> ok` and `STEP <name> fail <message>`
// lines of a flow's output; every step of names without a line failed.
func parseSteps(stdout string, names []string) map[string]outcome {
	res := make(map[string]outcome, len(names))
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 4)
		if len(f) < 3 || f[0] != "STEP" {
			continue
		}
		if _, seen := res[f[1]]; seen {
			continue // the first report of a step counts
		}
		switch {
		case f[2] == "ok" && len(f) == 4:
			res[f[1]] = outcome{ok: true, ms: f[3]}
		case f[2] == "ok":
			res[f[1]] = outcome{ok: true, ms: "?"}
		case f[2] == "fail" && len(f) == 4:
			res[f[1]] = outcome{msg: f[3]}
		case f[2] == "fail":
			res[f[1]] = outcome{msg: "(no message)"}
		}
	}
	for _, s := range names {
		if _, ok := res[s]; !ok {
			res[s] = outcome{msg: "no STEP line"}
		}
	}
	return res
}

// timings lists how long each step that worked took, in the flow's order.
func timings(res map[string]outcome) string {
	var b strings.Builder
	for _, s := range steps {
		if o := res[s]; o.ok {
			fmt.Fprintf(&b, " %s=%s", s, o.ms)
		}
	}
	return strings.TrimSpace(b.String())
}

func allOK(res map[string]outcome) bool {
	for _, s := range steps {
		if !res[s].ok {
			return false
		}
	}
	return true
}

// requireAllOK is the acceptance criterion of --compat: every one of names
// works.
func requireAllOK(t *testing.T, res map[string]outcome, names []string) {
	t.Helper()
	for _, s := range names {
		if o := res[s]; !o.ok {
			t.Errorf("step %s failed under --compat: %s", s, o.msg)
		}
	}
}

// renderTable renders the matrix as Markdown: a row per step, a column per
// library and mode, cells yes or no.
func renderTable(columns []string, results []map[string]outcome) string {
	var b strings.Builder
	b.WriteString("| step |")
	for _, c := range columns {
		b.WriteString(" " + c + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(columns)) + "\n")
	for _, s := range steps {
		b.WriteString("| `" + s + "` |")
		for _, res := range results {
			cell := "no"
			if res[s].ok {
				cell = "yes"
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

const (
	tableBegin = "<!-- client-matrix:begin -->"
	tableEnd   = "<!-- client-matrix:end -->"
)

// checkReadmeTable compares the table with the README's at path, between
// the client-matrix markers; with UPDATE_README=1 it writes the table there
// instead.
func checkReadmeTable(t *testing.T, path, table string) {
	t.Helper()
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	_, i := findLine(text, tableBegin)
	j, _ := findLine(text, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %s ... %s section: add the two markers on lines of their own, then run with UPDATE_README=1 to fill in:\n%s", path, tableBegin, tableEnd, table)
	}
	inner := text[i:j]
	if strings.TrimSpace(inner) == strings.TrimSpace(table) {
		return
	}
	if os.Getenv("UPDATE_README") == "1" {
		text = text[:i] + table + text[j:]
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("UPDATE_README=1: the client matrix of %s rewritten", path)
		return
	}
	t.Errorf("the client matrix of %s differs from this run's (UPDATE_README=1 rewrites it).\nREADME:\n%s\nthis run:\n%s", path, strings.TrimSpace(inner), table)
}

// findLine returns where the first line that is marker (spaces aside)
// starts and where the next line starts; -1, -1 when there is none.
func findLine(text, marker string) (start, next int) {
	for start < len(text) {
		next = strings.IndexByte(text[start:], '\n') + start + 1
		if next == start {
			next = len(text)
		}
		if strings.TrimSpace(text[start:next]) == marker {
			return start, next
		}
		start = next
	}
	return -1, -1
}
