package jsonrpc

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/holiman/uint256"
)

func TestAppendResult(t *testing.T) {
	f := func(id, result, want string) {
		t.Helper()
		var idBytes []byte
		if id != "-" {
			idBytes = []byte(id)
		}
		dst := []byte("prefix:")
		dst = AppendResultPrefix(dst, idBytes)
		dst = append(dst, result...)
		dst = AppendResultSuffix(dst)
		if got := string(dst); got != "prefix:"+want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
		if !json.Valid(dst[len("prefix:"):]) {
			t.Fatalf("invalid JSON: %s", dst)
		}
	}
	f("1", `"0x1"`, `{"jsonrpc":"2.0","id":1,"result":"0x1"}`)
	f(`"abc"`, `null`, `{"jsonrpc":"2.0","id":"abc","result":null}`)
	f("-", `[]`, `{"jsonrpc":"2.0","id":null,"result":[]}`)
	f("null", `{}`, `{"jsonrpc":"2.0","id":null,"result":{}}`)
	f("1.5e3", `true`, `{"jsonrpc":"2.0","id":1.5e3,"result":true}`)
}

func TestAppendError(t *testing.T) {
	f := func(id string, e *Error, want string) {
		t.Helper()
		var idBytes []byte
		if id != "-" {
			idBytes = []byte(id)
		}
		got := AppendError(nil, idBytes, e)
		if string(got) != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
		if !json.Valid(got) {
			t.Fatalf("invalid JSON: %s", got)
		}
	}
	f("-", ErrParse, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
	f("7", ErrMethodNotFound, `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}`)
	f(`"x"`, ErrBatchTooLarge, `{"jsonrpc":"2.0","id":"x","error":{"code":-32600,"message":"batch too large (max 1000 requests)"}}`)
	f("1", InvalidParams(`bad "addr"`),
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":"bad \"addr\""}}`)
	f("1", &Error{Code: 3, Message: "execution reverted", Data: []byte(`"0x08c379a0"`)},
		`{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"execution reverted","data":"0x08c379a0"}}`)
	f("1", &Error{Code: -32000, Message: "a\nb", Data: []byte(`{"k":[1]}`)},
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"a\nb","data":{"k":[1]}}}`)
}

func TestErrorMethods(t *testing.T) {
	f := func(e *Error, code int, text string) {
		t.Helper()
		if e.ErrorCode() != code {
			t.Fatalf("ErrorCode %d, want %d", e.ErrorCode(), code)
		}
		if e.Error() != text {
			t.Fatalf("Error %q, want %q", e.Error(), text)
		}
	}
	f(ErrParse, CodeParseError, "Parse error")
	f(ErrInvalidRequest, CodeInvalidRequest, "Invalid Request")
	f(ErrEmptyBatch, CodeInvalidRequest, "empty batch")
	f(ErrBatchTooLarge, CodeInvalidRequest, "batch too large (max 1000 requests)")
	f(ErrTooDeep, CodeInvalidRequest, "JSON nested too deep (max 300 levels)")
	f(ErrMethodNotFound, CodeMethodNotFound, "Method not found")
	f(ErrInternal, CodeInternal, "Internal error")
	f(InvalidParams("too many arguments"), CodeInvalidParams, `Invalid params: "too many arguments"`)
	f(&Error{Code: 5}, 5, "json-rpc error 5")
}

func TestAppendQuantity(t *testing.T) {
	f := func(v uint64, want string) {
		t.Helper()
		if got := string(AppendQuantity([]byte("x"), v)); got != "x"+want {
			t.Fatalf("AppendQuantity(%d) = %s, want %s", v, got, want)
		}
	}
	f(0, `"0x0"`)
	f(1, `"0x1"`)
	f(0xf, `"0xf"`)
	f(0x10, `"0x10"`)
	f(0x1a, `"0x1a"`)
	f(0xdeadbeef, `"0xdeadbeef"`)
	f(math.MaxUint64, `"0xffffffffffffffff"`)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		v := rng.Uint64() >> rng.IntN(64)
		f(v, `"0x`+strconv.FormatUint(v, 16)+`"`)
	}
}

func TestAppendQuantityU256(t *testing.T) {
	f := func(v *uint256.Int, want string) {
		t.Helper()
		if got := string(AppendQuantityU256([]byte("x"), v)); got != "x"+want {
			t.Fatalf("AppendQuantityU256(%s) = %s, want %s", v.Hex(), got, want)
		}
	}
	f(uint256.NewInt(0), `"0x0"`)
	f(uint256.NewInt(0x1a), `"0x1a"`)
	f(&uint256.Int{0, 1, 0, 0}, `"0x10000000000000000"`)
	f(&uint256.Int{5, 0, 0, 1}, `"0x1000000000000000000000000000000000000000000000005"`)
	f(&uint256.Int{math.MaxUint64, math.MaxUint64, math.MaxUint64, math.MaxUint64}, `"0x`+strings.Repeat("f", 64)+`"`)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		v := &uint256.Int{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()}
		v.Rsh(v, uint(rng.IntN(256)))
		f(v, `"`+v.Hex()+`"`)
	}
}

func TestAppendData(t *testing.T) {
	f := func(b []byte, want string) {
		t.Helper()
		if got := string(AppendData([]byte("x"), b)); got != "x"+want {
			t.Fatalf("AppendData(%x) = %s, want %s", b, got, want)
		}
	}
	f(nil, `"0x"`)
	f([]byte{}, `"0x"`)
	f([]byte{0}, `"0x00"`)
	f([]byte{0x0a, 0xbc, 0xde, 0xf0}, `"0x0abcdef0"`)
	b := make([]byte, 300)
	for i := range b {
		b[i] = byte(i * 7)
	}
	// Every length around the 4-byte steps, and every byte value.
	for size := range 18 {
		f(b[:size], `"0x`+hex.EncodeToString(b[:size])+`"`)
	}
	f(b, `"0x`+hex.EncodeToString(b)+`"`)
}

func TestAppendString(t *testing.T) {
	f := func(s, want string) {
		t.Helper()
		got := AppendString([]byte("x"), s)
		if string(got) != "x"+want {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if !json.Valid(got[1:]) || !utf8.Valid(got) {
			t.Fatalf("AppendString(%q) = %s: not valid JSON in UTF-8", s, got)
		}
	}
	f("", `""`)
	f("eth_chainId", `"eth_chainId"`)
	f(`a"b\c/d`, `"a\"b\\c/d"`)
	f("\n\r\t\b\f", `"\n\r\t\b\f"`)
	f("\x00\x01\x1f\x7f", `"\u0000\u0001\u001f`+"\x7f"+`"`)
	f("é😀\u2028", "\"é😀\u2028\"")
	f("a\xffb", `"a\ufffdb"`)
	f("\xc3", `"\ufffd"`)
	f("\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`) // an encoded surrogate is not UTF-8
	f("<&>", `"<&>"`)
}

// TestAppendStringRoundTrip checks AppendString against encoding/json,
// which must decode what we write back to the original text.
func TestAppendStringRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []rune{'a', 'Z', '0', '"', '\\', '/', '\n', 0, 0x1f, 0x7f, 'é', 0x2028, 0xfffd, 0x1f600}
	for range 2000 {
		var sb strings.Builder
		for range rng.IntN(20) {
			sb.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		s := sb.String()
		var back string
		if err := json.Unmarshal(AppendString(nil, s), &back); err != nil || back != s {
			t.Fatalf("AppendString(%q) decodes to %q, %v", s, back, err)
		}
	}
}

// FuzzAppendString writes the two halves of the input as two strings of a
// JSON array, which must be valid and decode to the halves (with U+FFFD for
// each byte that is not UTF-8).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c\n\x00\x1f", "é😀\u2028", "\xff\xc3\xed\xa0\x80", strings.Repeat("x", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		halves := []string{s[:len(s)/2], s[len(s)/2:]}
		out := []byte{'['}
		out = AppendString(out, halves[0])
		out = append(out, ',')
		out = AppendString(out, halves[1])
		out = append(out, ']')
		var back []string
		if err := json.Unmarshal(out, &back); err != nil || !utf8.Valid(out) {
			t.Fatalf("%q: invalid output %q: %v", s, out, err)
		}
		for i, half := range halves {
			if want := replaceInvalidUTF8(half); back[i] != want {
				t.Fatalf("%q decodes to %q, want %q", half, back[i], want)
			}
		}
	})
}

// replaceInvalidUTF8 replaces each byte that is not part of valid UTF-8
// with U+FFFD, as AppendString does.
func replaceInvalidUTF8(s string) string {
	var sb strings.Builder
	for _, r := range s {
		sb.WriteRune(r)
	}
	return sb.String()
}

func TestAppendDecimalU256(t *testing.T) {
	f := func(s string) {
		t.Helper()
		v := uint256.MustFromDecimal(s)
		if got := string(AppendDecimalU256(nil, v)); got != s {
			t.Fatalf("AppendDecimalU256(%s) = %s", s, got)
		}
	}
	f("0")
	f("18446744073709551615")
	f("18446744073709551616")
	f("10000000000000000000000000000000000000")
	f("100000000000000000000000000000000000000")
	f("115792089237316195423570985008687907853269984665640564039457584007913129639935")
}
