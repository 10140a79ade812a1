package jsonrpc

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/holiman/uint256"
	"github.com/valyala/fastjson"
)

// param parses text as the only parameter of a request and returns it; a
// text of "-" gives an absent parameter.
func param(t *testing.T, p *Parser, text string) *fastjson.Value {
	t.Helper()
	params := "[" + text + "]"
	if text == "-" {
		params = "[]"
	}
	reqs, _, err := p.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":` + params + `}`))
	if err != nil || reqs[0].Invalid != nil {
		t.Fatalf("param %s: %v %v", text, err, reqs[0].Invalid)
	}
	return reqs[0].Param(0)
}

var (
	hex40 = "00112233445566778899aabbccddeeffAABBCCDD"
	hex64 = "00112233445566778899aabbccddeeffAABBCCDDEEFF00112233445566778899"
)

func TestParseAddress(t *testing.T) {
	var p Parser
	f := func(text string, want []byte, wantErr *Error) {
		t.Helper()
		a, err := ParseAddress(param(t, &p, text))
		if err != wantErr {
			t.Fatalf("ParseAddress(%s) err %v, want %v", text, err, wantErr)
		}
		if !bytes.Equal(a[:], want) {
			t.Fatalf("ParseAddress(%s) = %x, want %x", text, a, want)
		}
	}
	zero := make([]byte, 20)
	want := []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0xaa, 0xbb, 0xcc, 0xdd}
	f(`"0x`+hex40+`"`, want, nil)
	f(`"0X`+hex40+`"`, want, nil)
	f(`"\u0030x`+hex40+`"`, want, nil)
	f("-", zero, errParamMissing)
	f(`null`, zero, errAddressType)
	f(`1`, zero, errAddressType)
	f(`["0x`+hex40+`"]`, zero, errAddressType)
	f(`"`+hex40+`"`, zero, errAddressPrefix)
	f(`"x`+hex40+`"`, zero, errAddressPrefix)
	f(`""`, zero, errAddressPrefix)
	f(`"0x"`, zero, errAddressLength)
	f(`"0x`+hex40[:39]+`"`, zero, errAddressLength)
	f(`"0x`+hex40+`0"`, zero, errAddressLength)
	f(`"0x`+hex40[:39]+`g"`, zero, errAddressDigit)
	f(`"0x `+hex40[1:]+`"`, zero, errAddressDigit)
}

func TestParseHash(t *testing.T) {
	var p Parser
	f := func(text string, wantHex string, wantErr *Error) {
		t.Helper()
		h, err := ParseHash(param(t, &p, text))
		if err != wantErr {
			t.Fatalf("ParseHash(%s) err %v, want %v", text, err, wantErr)
		}
		if got := hex.EncodeToString(h[:]); got != wantHex {
			t.Fatalf("ParseHash(%s) = %s, want %s", text, got, wantHex)
		}
	}
	zero := strings.Repeat("0", 64)
	f(`"0x`+hex64+`"`, strings.ToLower(hex64), nil)
	f("-", zero, errParamMissing)
	f(`{}`, zero, errHashType)
	f(`"`+hex64+`"`, zero, errHashPrefix)
	f(`"0x`+hex40+`"`, zero, errHashLength)
	f(`"0x`+hex64[:63]+`Z"`, zero, errHashDigit)
}

func TestParseData(t *testing.T) {
	var p Parser
	f := func(text string, want string, wantErr *Error) {
		t.Helper()
		dst := []byte("pre")
		got, err := ParseData(dst, param(t, &p, text))
		if err != wantErr {
			t.Fatalf("ParseData(%s) err %v, want %v", text, err, wantErr)
		}
		if string(got) != "pre"+want {
			t.Fatalf("ParseData(%s) = %q, want %q", text, got, want)
		}
	}
	f(`"0x"`, "", nil)
	f(`"0x00"`, "\x00", nil)
	f(`"0x0aBc"`, "\x0a\xbc", nil)
	f(`"0X616263"`, "abc", nil)
	f("-", "", errParamMissing)
	f(`true`, "", errDataType)
	f(`"616263"`, "", errDataPrefix)
	f(`"0x6"`, "", errDataOdd)
	f(`"0x616"`, "", errDataOdd)
	f(`"0x61g3"`, "", errDataDigit)
	f(`"0x6\u0031"`, "a", nil)
}

func TestParseQuantity(t *testing.T) {
	var p Parser
	f := func(text string, want uint64, wantErr *Error) {
		t.Helper()
		got, err := ParseQuantity(param(t, &p, text))
		if err != wantErr {
			t.Fatalf("ParseQuantity(%s) err %v, want %v", text, err, wantErr)
		}
		if got != want {
			t.Fatalf("ParseQuantity(%s) = %d, want %d", text, got, want)
		}
	}
	f(`"0x0"`, 0, nil)
	f(`"0x1a"`, 0x1a, nil)
	f(`"0X1A"`, 0x1a, nil)
	f(`"0xffffffffffffffff"`, 1<<64-1, nil)
	f(`0`, 0, nil)
	f(`26`, 26, nil)
	f(`18446744073709551615`, 1<<64-1, nil)
	f("-", 0, errParamMissing)
	f(`null`, 0, errQuantityType)
	f(`true`, 0, errQuantityType)
	f(`["0x1"]`, 0, errQuantityType)
	f(`"1a"`, 0, errQuantityPrefix)
	f(`"latest"`, 0, errQuantityPrefix)
	f(`"0x"`, 0, errQuantityEmpty)
	f(`"0x00"`, 0, errQuantityZero)
	f(`"0x01"`, 0, errQuantityZero)
	f(`"0x1g"`, 0, errQuantityDigit)
	f(`"0x10000000000000000"`, 0, errQuantityRange64)
	f(`18446744073709551616`, 0, errQuantityRange64)
	f(`99999999999999999999999`, 0, errQuantityRange64)
	f(`-1`, 0, errQuantityInteger)
	f(`-0`, 0, errQuantityInteger)
	f(`1.0`, 0, errQuantityInteger)
	f(`1e3`, 0, errQuantityInteger)
	f(`1`+strings.Repeat("0", 200), 0, errQuantityRange64)
	rng := rand.New(rand.NewPCG(7, 8))
	for range 1000 {
		v := rng.Uint64() >> rng.IntN(64)
		f(`"0x`+strconv.FormatUint(v, 16)+`"`, v, nil)
		f(strconv.FormatUint(v, 10), v, nil)
	}
}

func TestParseU256(t *testing.T) {
	var p Parser
	f := func(text string, want *uint256.Int, wantErr *Error) {
		t.Helper()
		got, err := ParseU256(param(t, &p, text))
		if err != wantErr {
			t.Fatalf("ParseU256(%s) err %v, want %v", text, err, wantErr)
		}
		if !got.Eq(want) {
			t.Fatalf("ParseU256(%s) = %s, want %s", text, got.Hex(), want.Hex())
		}
	}
	zero := new(uint256.Int)
	maxU256 := new(uint256.Int).SetAllOne()
	f(`"0x0"`, zero, nil)
	f(`"0x1a"`, uint256.NewInt(0x1a), nil)
	f(`"0x`+strings.Repeat("f", 64)+`"`, maxU256, nil)
	f(`"0x1`+strings.Repeat("0", 16)+`"`, &uint256.Int{0, 1, 0, 0}, nil)
	f(`0`, zero, nil)
	f(`1234`, uint256.NewInt(1234), nil)
	f(maxU256.Dec(), maxU256, nil)
	f(`10000000000000000000`, uint256.MustFromDecimal("10000000000000000000"), nil)
	f("-", zero, errParamMissing)
	f(`false`, zero, errQuantityType)
	f(`{}`, zero, errQuantityType)
	f(`"0x"`, zero, errQuantityEmpty)
	f(`"0x0f"`, zero, errQuantityZero)
	f(`"ff"`, zero, errQuantityPrefix)
	f(`"0x1`+strings.Repeat("0", 64)+`"`, zero, errQuantityRange256)
	f(`"0x`+strings.Repeat("f", 63)+`x"`, zero, errQuantityDigit)
	f(`115792089237316195423570985008687907853269984665640564039457584007913129639936`, zero, errQuantityRange256)
	f(`999999999999999999999999999999999999999999999999999999999999999999999999999999`, zero, errQuantityRange256)
	f(`1`+strings.Repeat("0", 300), zero, errQuantityRange256)
	f(`-5`, zero, errQuantityInteger)
	f(`5.5`, zero, errQuantityInteger)
	f(`5E1`, zero, errQuantityInteger)
	rng := rand.New(rand.NewPCG(9, 10))
	for range 1000 {
		v := &uint256.Int{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()}
		v.Rsh(v, uint(rng.IntN(256)))
		f(`"`+v.Hex()+`"`, v, nil)
		f(v.Dec(), v, nil)
	}
}

// TestParseDecimalLeadingZeros covers values that do not come from a
// validated body: the decoders take any *fastjson.Value.
func TestParseDecimalLeadingZeros(t *testing.T) {
	v := fastjson.MustParse(`007`)
	if x, err := ParseQuantity(v); x != 7 || err != nil {
		t.Fatalf("ParseQuantity(007) = %d, %v", x, err)
	}
	z, err := ParseU256(fastjson.MustParse(`000` + strings.Repeat("9", 77)))
	if err != nil || z.Dec() != strings.Repeat("9", 77) {
		t.Fatalf("ParseU256 = %s, %v", z.Dec(), err)
	}
	if _, err := ParseQuantity(fastjson.MustParse(`NaN`)); err != errQuantityInteger {
		t.Fatalf("ParseQuantity(NaN) err %v", err)
	}
}
