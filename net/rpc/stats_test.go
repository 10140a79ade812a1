package rpc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"
)

// TestMethodNamesMatchDispatch: the metrics' method labels are exactly the
// methods dispatch's switch knows, sorted for methodIndex's search.
func TestMethodNamesMatchDispatch(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "dispatch.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "dispatch" {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if cc, ok := n.(*ast.CaseClause); ok {
				for _, e := range cc.List {
					s, err := strconv.Unquote(e.(*ast.BasicLit).Value)
					if err != nil {
						t.Fatal(err)
					}
					cases = append(cases, s)
				}
			}
			return true
		})
	}
	slices.Sort(cases)
	if !slices.Equal(cases, methodNames[:]) {
		t.Fatalf("methodNames differ from dispatch's cases:\n have %v\n want %v", methodNames, cases)
	}
	for i, m := range methodNames {
		if got := methodIndex([]byte(m)); got != i {
			t.Errorf("methodIndex(%s) = %d, want %d", m, got, i)
		}
	}
	for _, m := range []string{"", "a", "eth_", "eth_chainIdX", "zzz", "admin_advanceTim"} {
		if got := methodIndex([]byte(m)); got != methodOther {
			t.Errorf("methodIndex(%q) = %d, want other", m, got)
		}
	}
}

// TestCountAllocs: counting a request allocates nothing.
func TestCountAllocs(t *testing.T) {
	var st rpcStats
	m := []byte("eth_getBalance")
	if n := testing.AllocsPerRun(1000, func() { st.count(m, true, true) }); n != 0 {
		t.Fatalf("count allocates %v times", n)
	}
	if c := st.counts(m, true); c.requests.Load() != 1001 || c.errors.Load() != 1001 {
		t.Fatalf("counted %d requests, %d errors; want 1001 each", c.requests.Load(), c.errors.Load())
	}
}
