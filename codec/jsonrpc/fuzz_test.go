package jsonrpc

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/holiman/uint256"
	"github.com/valyala/fastjson"
)

// FuzzParse feeds the input in two halves: the first half alone (a body
// cut short by the network), then both halves joined in a fresh buffer on
// the same Parser. The result must match a fresh Parser, the invariants of
// Request, and a reference model built on encoding/json.
func FuzzParse(f *testing.F) {
	for _, body := range splitBodies {
		f.Add([]byte(body))
	}
	for _, body := range []string{
		``, `[]`, `1`, `null`, `{}`, `[1,"x",{}]`, `{"jsonrpc":"2.0","id":NaN,"method":"m"}`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"\ud83d\ude00"}`, "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"m\"}",
		`{"jsonrpc":"2.0","\u0069d":1,"id":2,"method":"m","params":null}`, `[[[[[[[[[[]]]]]]]]]]`,
		"{\"\":\"\t\\b0000\"}",
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		half := len(data) / 2
		var p Parser
		p.Parse(data[:half])
		joined := append(append(make([]byte, 0, len(data)), data[:half]...), data[half:]...)
		reqs, batch, err := p.Parse(joined)
		got := render(reqs, batch, err)
		var fresh Parser
		if want := render(fresh.Parse(data)); got != want {
			t.Fatalf("after the first half\n got: %s\nwant: %s", got, want)
		}
		checkRequests(t, reqs, err)
		if want, ok := referenceParse(data); ok && got != want {
			t.Fatalf("reference model\n got: %s\nwant: %s", got, want)
		}
	})
}

// checkRequests checks what must hold of any result, and that every
// response we would write is valid JSON.
func checkRequests(t *testing.T, reqs []Request, err *Error) {
	t.Helper()
	if (err == nil) == (len(reqs) == 0) || len(reqs) > BatchLimit {
		t.Fatalf("err %v with %d requests", err, len(reqs))
	}
	for i := range reqs {
		r := &reqs[i]
		if r.ID != nil && (!json.Valid(r.ID) || !utf8.Valid(r.ID) || bytes.ContainsAny(r.ID[:1], "{[tf")) {
			t.Fatalf("bad id %q", r.ID)
		}
		if r.Invalid != nil && (r.Method != nil || r.Params != nil) {
			t.Fatalf("invalid request with method or params")
		}
		out := AppendResultPrefix(nil, r.ID)
		out = AppendString(out, string(r.Method))
		out = AppendResultSuffix(out)
		out = append(out, ',')
		out = AppendError(out, r.ID, ErrInternal)
		if !json.Valid(append(append([]byte{'['}, out...), ']')) {
			t.Fatalf("invalid response %q", out)
		}
	}
}

// referenceParse renders what Parse must return, found with encoding/json.
// ok is false when a method name holds \u escapes or invalid UTF-8, which
// the two libraries decode differently (lone surrogates, bad bytes).
func referenceParse(data []byte) (rendered string, ok bool) {
	valid, deep := json.Valid(data) && utf8.Valid(data), depthMax(data) > DepthMax
	switch {
	case valid && deep:
		return render(nil, false, ErrTooDeep), true
	case deep:
		// Which one Parse reports depends on whether the syntax error
		// comes before the depth is passed.
		return "", false
	case !valid:
		return render(nil, false, ErrParse), true
	}
	data = bytes.TrimLeft(data, " \t\r\n")
	switch data[0] {
	case '{':
		r, ok := referenceRequest(data)
		return render([]Request{r}, false, nil), ok
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(data, &elems); err != nil {
			panic(err)
		}
		if len(elems) == 0 {
			return render(nil, true, ErrEmptyBatch), true
		}
		if len(elems) > BatchLimit {
			return render(nil, true, ErrBatchTooLarge), true
		}
		reqs := make([]Request, len(elems))
		allOK := true
		for i, elem := range elems {
			reqs[i], ok = referenceRequest(elem)
			allOK = allOK && ok
		}
		return render(reqs, true, nil), allOK
	}
	return render(nil, false, ErrInvalidRequest), true
}

func referenceRequest(data []byte) (Request, bool) {
	if data[0] != '{' {
		return Request{Invalid: ErrInvalidRequest}, true
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		panic(err)
	}
	var r Request
	if id, ok := members["id"]; ok {
		switch c := id[0]; {
		case c == '"' && utf8.Valid(id), c == 'n', c == '-', c >= '0' && c <= '9':
			r.ID = id
		default:
			return Request{Invalid: ErrInvalidRequest}, true
		}
	}
	var version, method string
	rawMethod := members["method"]
	versionOK := json.Unmarshal(members["jsonrpc"], &version) == nil && version == "2.0"
	methodOK := len(rawMethod) > 0 && rawMethod[0] == '"' && json.Unmarshal(rawMethod, &method) == nil
	params, hasParams := members["params"]
	if hasParams && params[0] == 'n' { // null params count as absent
		hasParams = false
	}
	paramsOK := !hasParams || params[0] == '[' || params[0] == '{'
	if !versionOK || !methodOK || !paramsOK {
		r.Invalid = ErrInvalidRequest
		return r, true
	}
	r.Method = []byte(method)
	if hasParams {
		var compact bytes.Buffer
		if err := json.Compact(&compact, params); err != nil {
			panic(err)
		}
		r.Params = fastjson.MustParseBytes(compact.Bytes())
	}
	return r, !bytes.Contains(rawMethod, []byte(`\u`)) && utf8.Valid(rawMethod)
}

// depthMax returns the depth of the deepest value in valid JSON, counted
// as fastjson does: a scalar inside n containers is at depth n+1.
func depthMax(data []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString && c == '\\':
			i++
		case inString && c == '"':
			inString = false
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		case c == '"':
			inString = true
			deepest = max(deepest, depth+1)
		case bytes.IndexByte([]byte("tfn-0123456789"), c) >= 0:
			deepest = max(deepest, depth+1)
		}
	}
	return deepest
}

// FuzzParams decodes each half of the input, as a JSON string and as raw
// JSON, with every decoder, and compares with reference decoders.
func FuzzParams(f *testing.F) {
	for _, s := range []string{
		"0x00112233445566778899aabbccddeeffaabbccdd", "0x0", "0x1a", "0X1A", "0x01", "0x", "",
		"0xffffffffffffffff", "0x10000000000000000", "18446744073709551616", "1e3", "-1",
		"0x" + hex64, "115792089237316195423570985008687907853269984665640564039457584007913129639935",
	} {
		f.Add([]byte(s + s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		half := len(data) / 2
		var p Parser
		for _, part := range [][]byte{data[:half], data[half:]} {
			checkStringParam(t, &p, string(part))
			checkNumberParam(t, &p, string(part))
		}
	})
}

func checkStringParam(t *testing.T, p *Parser, s string) {
	s = string(bytes.ToValidUTF8([]byte(s), []byte("\uFFFD")))
	v := param(t, p, string(AppendString(nil, s)))
	hexOK := len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
	decoded, decodeErr := hex.DecodeString(s[min(2, len(s)):])
	hexOK = hexOK && decodeErr == nil

	a, err := ParseAddress(v)
	if (err == nil) != (hexOK && len(decoded) == 20) || err == nil && !bytes.Equal(a[:], decoded) {
		t.Fatalf("ParseAddress(%q) = %x, %v", s, a, err)
	}
	h, err := ParseHash(v)
	if (err == nil) != (hexOK && len(decoded) == 32) || err == nil && !bytes.Equal(h[:], decoded) {
		t.Fatalf("ParseHash(%q) = %x, %v", s, h, err)
	}
	d, err := ParseData(nil, v)
	if (err == nil) != hexOK || err == nil && !bytes.Equal(d, decoded) {
		t.Fatalf("ParseData(%q) = %x, %v", s, d, err)
	}
	want, wantErr := uint256.FromHex(s)
	z, err := ParseU256(v)
	if (err == nil) != (wantErr == nil) || err == nil && !z.Eq(want) {
		t.Fatalf("ParseU256(%q) = %s, %v; want %v, %v", s, z.Hex(), err, want, wantErr)
	}
	x, err := ParseQuantity(v)
	if (err == nil) != (wantErr == nil && want.IsUint64()) || err == nil && x != want.Uint64() {
		t.Fatalf("ParseQuantity(%q) = %d, %v; want %v, %v", s, x, err, want, wantErr)
	}
}

// checkNumberParam decodes s as raw JSON when it is a JSON number.
func checkNumberParam(t *testing.T, p *Parser, s string) {
	s = strings.Trim(s, " \t\r\n")
	if len(s) == 0 || !json.Valid([]byte(s)) || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
		return
	}
	v := param(t, p, s)
	want, wantErr := uint256.FromDecimal(s)
	z, err := ParseU256(v)
	if (err == nil) != (wantErr == nil) || err == nil && !z.Eq(want) {
		t.Fatalf("ParseU256(%s) = %s, %v; want %v, %v", s, z.Dec(), err, want, wantErr)
	}
	want64, wantErr64 := strconv.ParseUint(s, 10, 64)
	x, err := ParseQuantity(v)
	if (err == nil) != (wantErr64 == nil) || err == nil && x != want64 {
		t.Fatalf("ParseQuantity(%s) = %d, %v; want %d, %v", s, x, err, want64, wantErr64)
	}
}
