package clients

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// exampleRE is the marker README.md puts before a fenced copy of a file.
var exampleRE = regexp.MustCompile(`^<!-- example: (\S+) -->$`)

// readmeExample is one `<!-- example: PATH -->` marker and the fenced block
// after it.
type readmeExample struct {
	path  string // relative to the module root
	line  int    // the marker's line in README.md
	block string // the fenced block's content, "" when there is none
	fence bool   // a fenced block follows the marker
}

// TestReadmeExamples checks that every example README.md shows is the file
// it names, byte for byte, and that each one runs to a filled order against
// a fresh --compat node.
func TestReadmeExamples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	examples := parseMarked(string(readme), exampleRE)
	var paths []string
	for _, ex := range examples {
		checkExample(t, ex)
		paths = append(paths, ex.path)
	}
	if len(examples) == 0 {
		t.Fatal("README.md shows no <!-- example: PATH --> block: the getting-started examples are gone")
	}

	if testing.Short() {
		t.Skip("-short: the examples are not run")
	}
	var withJS, jsChecked bool
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			argv, isJS, err := exampleCommand(t, path)
			if err != nil {
				t.Fatal(err)
			}
			if isJS && !jsChecked {
				withJS, jsChecked = jsReady(t), true
			}
			if isJS && !withJS {
				t.Skip("LEDGERD_SKIP_JS=1")
			}
			n := startNode(t, true)
			p := run(60*time.Second, []string{"LEDGERD_RPC=" + n.HTTP}, argv...)
			if p.Err != nil {
				p.logOutput(t, path)
				t.Fatalf("%s did not exit 0: %v", path, p.Err)
			}
			if strings.HasSuffix(path, ".sh") {
				checkAnswers(t, path, p.Stdout)
			}
			t.Logf("%s: %s", path, strings.TrimSpace(p.Stdout))
		})
	}
}

// parseMarked finds every marker of README.md that re matches (its group
// 1 is the path) and the fenced block that follows it (blank lines in
// between are allowed).
func parseMarked(readme string, re *regexp.Regexp) []readmeExample {
	lines := strings.Split(readme, "\n")
	var out []readmeExample
	for i := 0; i < len(lines); i++ {
		m := re.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		ex := readmeExample{path: m[1], line: i + 1}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j < len(lines) && strings.HasPrefix(lines[j], "```") {
			var body []string
			for j++; j < len(lines) && lines[j] != "```"; j++ {
				body = append(body, lines[j])
			}
			ex.fence = j < len(lines)
			ex.block = strings.Join(body, "\n")
		}
		out = append(out, ex)
		i = j
	}
	return out
}

// checkExample compares an example's block with its file.
func checkExample(t *testing.T, ex readmeExample) {
	t.Helper()
	file, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(ex.path)))
	if err != nil {
		t.Errorf("README.md:%d names %s: %v", ex.line, ex.path, err)
		return
	}
	if !ex.fence {
		t.Errorf("README.md:%d: no closed ``` block after the example marker of %s", ex.line, ex.path)
		return
	}
	want := strings.TrimSuffix(string(file), "\n")
	if ex.block != want {
		t.Errorf("README.md:%d: the block differs from %s: %s", ex.line, ex.path, firstDifference(ex.block, want))
	}
}

// firstDifference describes where got and want part, line by line.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if i >= len(g) || i >= len(w) || gl != wl {
			return fmt.Sprintf("line %d of the block is %q, the file has %q (block %d lines, file %d)",
				i+1, gl, wl, len(g), len(w))
		}
	}
	return "equal"
}

// checkAnswers compares a shell example's output with the answers it shows:
// its comment lines "# {…}", in order, one per output line; an answer that
// ends in "…" is shown in part and matches as a prefix.
func checkAnswers(t *testing.T, path, stdout string) {
	t.Helper()
	file, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(file), "\n") {
		if strings.HasPrefix(l, "# {") {
			want = append(want, strings.TrimPrefix(l, "# "))
		}
	}
	got := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(got) != len(want) {
		t.Fatalf("%s printed %d answers, it shows %d:\n%s", path, len(got), len(want), stdout)
	}
	for i, w := range want {
		prefix, partial := strings.CutSuffix(w, "…")
		if got[i] != w && !(partial && strings.HasPrefix(got[i], prefix)) {
			t.Errorf("%s answer %d: got %s, it shows %s", path, i+1, got[i], w)
		}
	}
}

// exampleCommand is how an example runs: a .mjs file with node, a .sh
// script with bash, a main.go as its directory's Go program, built.
func exampleCommand(t *testing.T, path string) (argv []string, isJS bool, err error) {
	rel, err := filepath.Rel("bench/clients", filepath.FromSlash(path))
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, false, fmt.Errorf("example %s is not under bench/clients", path)
	}
	switch {
	case strings.HasSuffix(path, ".mjs"):
		return []string{"node", rel}, true, nil
	case strings.HasSuffix(path, ".sh"):
		return []string{"bash", rel}, false, nil
	case filepath.Base(path) == "main.go":
		return []string{buildGo(t, "./"+filepath.ToSlash(filepath.Dir(path)))}, false, nil
	}
	return nil, false, fmt.Errorf("example %s is not a .mjs file, a .sh script or a main.go", path)
}
