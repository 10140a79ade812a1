package rpc_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// specErrorCodes are the error codes SPEC.md lists for responses
// (-32020..-32023 close subscriptions and are never responses).
var specErrorCodes = []int{3, -32000, -32003, 999, -32700, -32600, -32601, -32602, -32603}

// FuzzMethodParams posts a request for every method name the dispatcher
// knows, with fuzzed params, to a whole node over loopback (the server hands
// it to Service.Serve), admin token included so that admin methods reach
// their parameter parsers. Whatever the params, the answer is exactly one
// JSON-RPC response: jsonrpc "2.0", the request's id (null only when the
// body did not parse or was not a valid request), exactly one of result and
// error, and an error carries one of the spec's codes and a message.
// Seeds: every method with [], {} and null, and the params of every request
// of the conversation file.
func FuzzMethodParams(f *testing.F) {
	methods := dispatchedMethods(f)
	index := func(name string) int { return slices.Index(methods, name) }
	for i := range methods {
		for _, p := range []string{`[]`, `{}`, `null`, `["0x0","latest"]`} {
			f.Add(uint8(i), []byte(p))
		}
	}
	for _, body := range conversationBodies(f) {
		var req struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal([]byte(body), &req) == nil && index(req.Method) >= 0 && len(req.Params) > 0 {
			f.Add(uint8(index(req.Method)), []byte(req.Params))
		}
	}
	tn := startNodeTB(f)
	f.Fuzz(func(t *testing.T, m uint8, params []byte) {
		method := methods[int(m)%len(methods)]
		body := `{"jsonrpc":"2.0","id":7,"method":` + strconv.Quote(method) + `,"params":` + string(params) + `}`
		checkResponse(t, body, post(t, tn.url, "[admin] "+body))
	})
}

// checkResponse checks that answer is one JSON-RPC response to body as
// FuzzMethodParams describes it.
func checkResponse(t *testing.T, body, answer string) {
	t.Helper()
	var resp map[string]json.RawMessage
	if err := json.Unmarshal([]byte(answer), &resp); err != nil {
		t.Fatalf("answer %q to %q is not one JSON object: %v", answer, body, err)
	}
	_, hasResult := resp["result"]
	rawErr, hasErr := resp["error"]
	if string(resp["jsonrpc"]) != `"2.0"` || hasResult == hasErr || len(resp) != 3 || resp["id"] == nil {
		t.Fatalf("answer %q to %q: want jsonrpc, id and exactly one of result and error", answer, body)
	}
	var e struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
	if hasErr {
		if err := json.Unmarshal(rawErr, &e); err != nil || e.Code == nil || e.Message == nil || *e.Message == "" {
			t.Fatalf("answer %q to %q: malformed error object", answer, body)
		}
		if !slices.Contains(specErrorCodes, *e.Code) {
			t.Fatalf("answer %q to %q: error code %d is not one of the spec's %v", answer, body, *e.Code, specErrorCodes)
		}
	}
	switch id := string(resp["id"]); {
	case id == "7":
	case id == "null" && hasErr && (*e.Code == -32700 || *e.Code == -32600):
	default:
		t.Fatalf("answer %q to %q: id %s, want 7", answer, body, id)
	}
}

// methodName is what a JSON-RPC method name of the venue looks like.
var methodName = regexp.MustCompile(`^(eth|net|web3|svc|ob|admin)_[A-Za-z]+$`)

// dispatchedMethods lists every method name the package's code spells out
// (the dispatcher's switch, whatever shape it takes): read from the
// package's source, so a method added to the dispatcher is fuzzed without
// touching this file.
func dispatchedMethods(tb testing.TB) []string {
	tb.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			tb.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && methodName.MatchString(s) {
					names = append(names, s)
				}
			}
			return true
		})
	}
	slices.Sort(names)
	names = slices.Compact(names)
	for _, must := range []string{"eth_chainId", "eth_sendRawTransaction", "eth_getLogs", "svc_listConfirmedReceipts", "ob_getOrders", "admin_deposit"} {
		if !slices.Contains(names, must) {
			tb.Fatalf("the package's source names no method %s: dispatchedMethods no longer finds the dispatcher's names (%v)", must, names)
		}
	}
	return names
}

// conversationBodies returns the request bodies of testdata/protocol.conv.
func conversationBodies(tb testing.TB) []string {
	tb.Helper()
	raw, err := os.ReadFile("testdata/protocol.conv")
	if err != nil {
		tb.Fatal(err)
	}
	var bodies []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if body, ok := strings.CutPrefix(sc.Text(), "--> "); ok {
			bodies = append(bodies, strings.TrimPrefix(body, "[admin] "))
		}
	}
	return bodies
}
