package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCoreStaysPure enforces the package doc's promise on every non-test
// file under core/, the read model (core/marketdata) and the tick record
// (core/tickrec) included: no clock, no I/O, no unseeded randomness, no
// reflection-based encoding, no goroutines, and no imports from the rest
// of this repository (imports point into core, never out of it; the JSON
// of the ob_ methods is codec/obwire's, which imports core).
func TestCoreStaysPure(t *testing.T) {
	banned := map[string]string{
		"time": "the clock is an input", "os": "no I/O", "net": "no I/O", "net/http": "no I/O",
		"io/ioutil": "no I/O", "math/rand": "no unseeded randomness", "math/rand/v2": "no unseeded randomness",
		"crypto/rand": "no randomness", "encoding/json": "no reflection on hot paths", "reflect": "no reflection",
	}
	const module = "github.com/ledgervenue/node/"
	fset := token.NewFileSet()
	// check walks the non-test files under root; allowed says which of the
	// repository's packages they may import.
	check := func(root string, allowed func(pkg string) bool) {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if why, ok := banned[p]; ok {
					t.Errorf("%s imports %q: %s", path, p, why)
				}
				if pkg, ok := strings.CutPrefix(p, module); ok && !allowed(pkg) {
					t.Errorf("%s imports %q: core imports nothing from the rest of the repository", path, p)
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if g, ok := n.(*ast.GoStmt); ok {
					t.Errorf("%s: goroutine started at %s: core is single-threaded", path, fset.Position(g.Pos()))
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check(".", func(pkg string) bool {
		return pkg == "core" || strings.HasPrefix(pkg, "core/")
	})
}
