package bench

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestArchitectureDocNamesRealCode checks that every `dir/file.go:Func`
// docs/architecture.md names is a file of the tree that declares Func (a
// function or a method), so the page cannot drift from the code unnoticed.
func TestArchitectureDocNamesRealCode(t *testing.T) {
	root := gitOutput(t, "rev-parse", "--show-toplevel")
	if root == "" {
		root = ".."
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile("`?([a-z0-9_/]+\\.go):([A-Za-z_][A-Za-z0-9_]*)`?").FindAllStringSubmatch(string(doc), -1)
	if len(refs) < 10 {
		t.Fatalf("docs/architecture.md names %d file:function pairs; the stage table alone has more", len(refs))
	}
	for _, r := range refs {
		file, fn := r[1], r[2]
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Errorf("docs/architecture.md names %s, which is not in the tree", file)
			continue
		}
		decl := regexp.MustCompile(`(?m)^func (\([^)]*\) )?` + regexp.QuoteMeta(fn) + `[\[(]`)
		if !decl.Match(src) {
			t.Errorf("docs/architecture.md names %s:%s, but %s declares no %s", file, fn, file, fn)
		}
	}
	for _, pkg := range regexp.MustCompile("\\| `([a-z0-9/]+)`(?:, `([a-z0-9/]+)`)? \\|").FindAllStringSubmatch(string(doc), -1) {
		for _, p := range pkg[1:] {
			if p == "" || strings.Contains(p, ".") {
				continue
			}
			if fi, err := os.Stat(filepath.Join(root, p)); err != nil || !fi.IsDir() {
				t.Errorf("docs/architecture.md names the package %s, which is not in the tree", p)
			}
		}
	}
}
