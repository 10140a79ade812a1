package jsonrpc

import (
	"math/bits"
	"sync"

	"github.com/holiman/uint256"
	"github.com/valyala/fastjson"
)

// Decoders of Ethereum parameter values. Each returns a preallocated
// -32602 error whose data names what is wrong; a nil v (an absent
// parameter, see Request.Param) gives "missing value". Hex digits may be of
// either case and the prefix may be 0x or 0X, as geth accepts.

// hexNibbles maps an ASCII hex digit to its value and any other byte to 0xff.
var hexNibbles = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := range 10 {
		t['0'+i] = byte(i)
	}
	for i := range 6 {
		t['a'+i] = byte(10 + i)
		t['A'+i] = byte(10 + i)
	}
	return t
}()

// quantityDecimalDigitsMax is the number of decimal digits of 2^256-1.
const quantityDecimalDigitsMax = 78

// numberScratch lends buffers for the raw text of JSON numbers. fastjson
// gives that text out only through MarshalTo, whose dst escapes, so a stack
// array would be moved to the heap on every call. Buffers that grew past
// numberScratchSizeMax (a junk number) are left to the collector.
var numberScratch = sync.Pool{New: func() any { return new([]byte) }}

const numberScratchSizeMax = 128

// numberText returns the raw text of v in a borrowed buffer.
//
// REQUIRES: the caller gives the buffer back with releaseNumberText.
func numberText(v *fastjson.Value) *[]byte {
	text := numberScratch.Get().(*[]byte)
	*text = v.MarshalTo((*text)[:0])
	return text
}

func releaseNumberText(text *[]byte) {
	if cap(*text) <= numberScratchSizeMax {
		numberScratch.Put(text)
	}
}

// ParseAddress decodes "0x" followed by exactly 40 hex digits.
func ParseAddress(v *fastjson.Value) (a [20]byte, err *Error) {
	s, err := stringParam(v, errAddressType)
	if err != nil {
		return a, err
	}
	if !has0x(s) {
		return a, errAddressPrefix
	}
	if len(s) != len("0x")+2*len(a) {
		return a, errAddressLength
	}
	if !decodeHex(a[:], s[2:]) {
		return [20]byte{}, errAddressDigit
	}
	return a, nil
}

// ParseHash decodes "0x" followed by exactly 64 hex digits.
func ParseHash(v *fastjson.Value) (h [32]byte, err *Error) {
	s, err := stringParam(v, errHashType)
	if err != nil {
		return h, err
	}
	if !has0x(s) {
		return h, errHashPrefix
	}
	if len(s) != len("0x")+2*len(h) {
		return h, errHashLength
	}
	if !decodeHex(h[:], s[2:]) {
		return [32]byte{}, errHashDigit
	}
	return h, nil
}

// ParseData decodes "0x" followed by an even number of hex digits and
// appends the bytes to dst. "0x" alone is empty data. On error it returns
// dst with its original length.
func ParseData(dst []byte, v *fastjson.Value) ([]byte, *Error) {
	s, err := stringParam(v, errDataType)
	if err != nil {
		return dst, err
	}
	if !has0x(s) {
		return dst, errDataPrefix
	}
	digits := s[2:]
	if len(digits)%2 != 0 {
		return dst, errDataOdd
	}
	extended, tail := grow(dst, len(digits)/2)
	if !decodeHex(tail, digits) {
		return dst, errDataDigit
	}
	return extended, nil
}

// ParseQuantity decodes a 64-bit quantity: a string "0x" followed by 1 to
// 16 hex digits without leading zeros ("0x0" is zero), or a non-negative
// JSON integer without fraction or exponent.
func ParseQuantity(v *fastjson.Value) (uint64, *Error) {
	if v == nil {
		return 0, errParamMissing
	}
	switch v.Type() {
	case fastjson.TypeString:
		s, _ := v.StringBytes()
		digits, err := quantityHex(s)
		if err != nil {
			return 0, err
		}
		if len(digits) > 16 {
			return 0, errQuantityRange64
		}
		var x uint64
		for _, c := range digits {
			n := hexNibbles[c]
			if n > 0xf {
				return 0, errQuantityDigit
			}
			x = x<<4 | uint64(n)
		}
		return x, nil
	case fastjson.TypeNumber:
		text := numberText(v)
		x, err := parseDecimal64(*text)
		releaseNumberText(text)
		return x, err
	}
	return 0, errQuantityType
}

// ParseU256 decodes a 256-bit quantity: a string "0x" followed by 1 to 64
// hex digits without leading zeros, or a non-negative JSON integer below 2^256.
func ParseU256(v *fastjson.Value) (uint256.Int, *Error) {
	if v == nil {
		return uint256.Int{}, errParamMissing
	}
	switch v.Type() {
	case fastjson.TypeString:
		s, _ := v.StringBytes()
		digits, err := quantityHex(s)
		if err != nil {
			return uint256.Int{}, err
		}
		return parseHex256(digits)
	case fastjson.TypeNumber:
		text := numberText(v)
		z, err := parseDecimal256(*text)
		releaseNumberText(text)
		return z, err
	}
	return uint256.Int{}, errQuantityType
}

func stringParam(v *fastjson.Value, errType *Error) ([]byte, *Error) {
	if v == nil {
		return nil, errParamMissing
	}
	if v.Type() != fastjson.TypeString {
		return nil, errType
	}
	s, _ := v.StringBytes()
	return s, nil
}

func has0x(s []byte) bool {
	return len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
}

// quantityHex returns the digits of a hex quantity after checking the
// prefix and the no-leading-zeros rule; it does not check the digits.
func quantityHex(s []byte) ([]byte, *Error) {
	if !has0x(s) {
		return nil, errQuantityPrefix
	}
	digits := s[2:]
	if len(digits) == 0 {
		return nil, errQuantityEmpty
	}
	if len(digits) > 1 && digits[0] == '0' {
		return nil, errQuantityZero
	}
	return digits, nil
}

// decodeHex decodes src into dst and reports whether every digit was valid.
//
// REQUIRES: len(src) == 2*len(dst).
func decodeHex(dst, src []byte) bool {
	// OR-ing the nibbles instead of branching per digit: an invalid digit
	// sets the high bits, checked once at the end.
	var bad byte
	for i := range dst {
		hi, lo := hexNibbles[src[2*i]], hexNibbles[src[2*i+1]]
		bad |= hi | lo
		dst[i] = hi<<4 | lo
	}
	return bad&0xf0 == 0
}

func parseHex256(digits []byte) (uint256.Int, *Error) {
	var z uint256.Int
	if len(digits) > 64 {
		return z, errQuantityRange256
	}
	// Nibble k, counted from the least significant, goes to word k/16.
	for k := range len(digits) {
		n := hexNibbles[digits[len(digits)-1-k]]
		if n > 0xf {
			return uint256.Int{}, errQuantityDigit
		}
		z[k/16] |= uint64(n) << (4 * (k % 16))
	}
	return z, nil
}

// decimalDigits returns s without leading zeros after checking that it is
// a plain non-negative integer (no sign, fraction or exponent).
func decimalDigits(s []byte) ([]byte, *Error) {
	if len(s) == 0 {
		return nil, errQuantityInteger
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return nil, errQuantityInteger
		}
	}
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s, nil
}

func parseDecimal64(s []byte) (uint64, *Error) {
	digits, err := decimalDigits(s)
	if err != nil {
		return 0, err
	}
	var x uint64
	for _, c := range digits {
		hi, lo := bits.Mul64(x, 10)
		sum, carry := bits.Add64(lo, uint64(c-'0'), 0)
		if hi != 0 || carry != 0 {
			return 0, errQuantityRange64
		}
		x = sum
	}
	return x, nil
}

// pow10 holds 10^0 .. 10^19, the chunk multipliers of parseDecimal256.
var pow10 = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

func parseDecimal256(s []byte) (uint256.Int, *Error) {
	var z uint256.Int
	digits, err := decimalDigits(s)
	if err != nil {
		return z, err
	}
	if len(digits) > quantityDecimalDigitsMax {
		return z, errQuantityRange256
	}
	// Chunks of up to 19 digits fit a uint64, so there are at most five
	// 256-bit multiply-adds instead of one per digit.
	for len(digits) > 0 {
		chunkSize := min(len(digits), 19)
		var chunk uint64
		for _, c := range digits[:chunkSize] {
			chunk = chunk*10 + uint64(c-'0')
		}
		digits = digits[chunkSize:]
		var scale, addend uint256.Int
		scale.SetUint64(pow10[chunkSize])
		addend.SetUint64(chunk)
		_, overflowMul := z.MulOverflow(&z, &scale)
		_, overflowAdd := z.AddOverflow(&z, &addend)
		if overflowMul || overflowAdd {
			return uint256.Int{}, errQuantityRange256
		}
	}
	return z, nil
}
