package bench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoBuildOutputsInGit checks that git tracks no executable and that
// .gitignore covers what `go build` of each of the project's commands
// leaves in the tree: its binary at the module root and in its own folder.
func TestNoBuildOutputsInGit(t *testing.T) {
	root := gitOutput(t, "rev-parse", "--show-toplevel")
	if root == "" {
		t.Skip("not a git checkout")
	}
	for _, f := range strings.Split(gitOutput(t, "-C", root, "ls-files"), "\n") {
		if f == "" {
			continue
		}
		head := make([]byte, 4)
		fh, err := os.Open(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the work tree
		}
		n, _ := fh.Read(head)
		fh.Close()
		if bytes.Equal(head[:n], []byte("\x7fELF")) {
			t.Errorf("git tracks the executable %s: git rm --cached it", f)
		}
	}
	list := exec.Command("go", "list", "-f", `{{if eq .Name "main"}}{{.Dir}}{{end}}`, "./...")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	cmds := 0
	for _, dir := range strings.Fields(string(out)) {
		cmds++
		name := filepath.Base(dir)
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{name, filepath.Join(rel, name)} {
			if exec.Command("git", "-C", root, "check-ignore", "-q", "--no-index", p).Run() != nil {
				t.Errorf(".gitignore does not cover %s, which `go build` of ./%s writes", p, rel)
			}
		}
	}
	if cmds == 0 {
		t.Fatal("go list found no command")
	}
}

// gitOutput runs git and returns its trimmed output, or "" when git fails.
func gitOutput(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
