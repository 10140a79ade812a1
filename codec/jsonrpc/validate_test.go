package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

func TestValidJSON(t *testing.T) {
	f := func(text string, want bool) {
		t.Helper()
		if _, err := validJSON([]byte(text)); (err == nil) != want {
			t.Fatalf("validJSON(%q) = %v, want ok %v", text, err, want)
		}
		// The reference: encoding/json plus the UTF-8 rule.
		if ref := json.Valid([]byte(text)) && utf8.ValidString(text); ref != want {
			t.Fatalf("test case %q disagrees with encoding/json", text)
		}
		// Invariant: fastjson parses everything we accept.
		if _, err := fastjson.Parse(text); want && err != nil {
			t.Fatalf("fastjson refuses %q: %v", text, err)
		}
	}
	for _, text := range []string{
		`0`, `-0`, `1`, `-1`, `10`, `1.5`, `-0.0`, `1e5`, `1E+5`, `1e-05`, `0.1e1`, `123456789012345678901234567890`,
		`""`, `"a"`, `"\"\\\/\b\f\n\r\t"`, `"\u0000\uFFFF\ud800"`, `"é😀"`, "\"\x7f\"",
		`true`, `false`, `null`, `[]`, `{}`, `[1,"a",null,[],{}]`, `{"a":1,"b":[{"c":{}}]}`,
		" \t\r\n{ \"a\" : [ 1 , 2 ] } \t\r\n", `{"":""}`, `{"a":1,"a":2}`,
	} {
		f(text, true)
	}
	for _, text := range []string{
		``, ` `, `-`, `+1`, `01`, `-01`, `1.`, `.1`, `1e`, `1e+`, `1.e5`, `0x1`, `1-2`, `NaN`, `Infinity`, `-Inf`,
		`"`, `"a`, `"\"`, `"\x"`, `"\u12"`, `"\u12G4"`, `"\U1234"`, "\"\t\"", "\"\x00\"", "\"\x1f\"",
		"\"\t\\b\"", "\"a\nb\\n\"", // a control character before an escape: fastjson's Validate misses it
		"\"\xff\"", "\"\xc3\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"",
		`tru`, `truee`, `nul`, `nulL`, `f`, `True`, `[`, `]`, `[1,]`, `[,1]`, `[1 2]`, `{`, `{"a"}`, `{"a":}`,
		`{"a":1,}`, `{,"a":1}`, `{a:1}`, `{'a':1}`, `{"a" 1}`, `{1:1}`, `{"a":1 "b":2}`, `1 2`, `[] []`, `{}x`,
		"\ufeff{}", "\v1", "1\f", "[\x00]",
	} {
		f(text, false)
	}
	nested := func(depth int) []byte {
		return []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
	}
	if _, err := validJSON(nested(DepthMax)); err != nil {
		t.Fatalf("depth DepthMax refused: %v", err)
	}
	if _, err := validJSON(nested(DepthMax + 1)); err != ErrTooDeep {
		t.Fatalf("depth DepthMax+1: %v, want ErrTooDeep", err)
	}
	// A syntax error before the depth is passed is a parse error; past it
	// the validator has stopped reading.
	if _, err := validJSON([]byte("[1 2," + strings.Repeat("[", DepthMax))); err != ErrParse {
		t.Fatalf("syntax error first: %v, want ErrParse", err)
	}
	if _, err := validJSON([]byte(strings.Repeat("[", DepthMax) + "1 2")); err != ErrTooDeep {
		t.Fatalf("too deep first: %v, want ErrTooDeep", err)
	}
}

func TestValidJSONValuesCount(t *testing.T) {
	f := func(text string, want int) {
		t.Helper()
		if got, err := validJSON([]byte(text)); err != nil || got != want {
			t.Fatalf("validJSON(%q) counts %d values, want %d", text, got, want)
		}
	}
	f(`1`, 1)
	f(`[]`, 1)
	f(`[1,"a",null]`, 4)
	f(`{"a":{"b":[true,false]}}`, 5)
	f(`{"jsonrpc":"2.0","id":1,"method":"m","params":[]}`, 5)
}
