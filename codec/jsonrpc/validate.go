package jsonrpc

import (
	"encoding/binary"
	"unicode/utf8"
)

// Strict JSON validation, run before fastjson sees a body.
//
// fastjson parses leniently (NaN, Inf, 01, 1-2, unknown escapes, raw
// control characters in strings) and we echo ids byte for byte, so such
// text must not get through. fastjson's own Validate was tried and dropped:
// it misses a raw control character that comes before an escape in the same
// string ("\t\b"), found by FuzzParse, and it builds an error with
// fmt.Errorf for every bad body. This validator allocates nothing, so a
// flood of malformed bodies makes no garbage, and fastjson only ever parses
// text that is known to be good.
//
// It accepts exactly RFC 8259 JSON text in UTF-8 whose values nest at most
// DepthMax deep, where, as in fastjson, every value counts: a scalar inside
// n arrays is at depth n+1. It stops at the first value deeper than that,
// so its recursion (and its time on a body like 100 000 '[') is bounded by
// DepthMax, and says so apart from a syntax error: the client is told the
// limit, not that its JSON is malformed.
//
// Two more bounds are checked here, before fastjson builds anything, since
// fastjson's cost grows with the number of values (about 88 bytes each,
// and its value cache grows by copying: a body of a million numbers took
// 1.8 s and hundreds of MB): at most ValuesMax values in all, and, when the
// body is an array, at most BatchLimit elements in it. The scan stops at
// the first value past either bound.

// stringPlain marks the bytes that may appear in a string as they are,
// without an escape or a UTF-8 check.
var stringPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// validJSON checks that body is one strict JSON value, with optional
// whitespace around it, nesting at most DepthMax deep, with at most
// ValuesMax values and, if it is an array, at most BatchLimit elements: err
// is nil, ErrParse, or the error of the bound passed first (ErrTooDeep,
// ErrTooManyValues, ErrBatchTooLarge) when that comes before any syntax
// error. valuesCount is the number of values in it, which sizes fastjson's
// value cache.
func validJSON(body []byte) (valuesCount int, err *Error) {
	var st validState
	i, ok := validValue(body, skipSpace(body, 0), 1, &st)
	switch {
	case st.bound != nil:
		return st.valuesCount, st.bound
	case !ok || skipSpace(body, i) != len(body):
		return st.valuesCount, ErrParse
	}
	return st.valuesCount, nil
}

// validState is what the validator learns on its way through a body.
type validState struct {
	valuesCount int
	// bound is the error of the bound the body passed; the scan stopped
	// there.
	bound *Error
}

func skipSpace(s []byte, i int) int {
	// s[i] <= ' ' first: in compact JSON the answer is no at once.
	for i < len(s) && s[i] <= ' ' && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
		i++
	}
	return i
}

// validValue checks the value starting at s[i] and returns the index after it.
func validValue(s []byte, i, depth int, st *validState) (int, bool) {
	if i >= len(s) {
		return i, false
	}
	if depth > DepthMax {
		st.bound = ErrTooDeep
		return i, false
	}
	if st.valuesCount++; st.valuesCount > ValuesMax {
		st.bound = ErrTooManyValues
		return i, false
	}
	switch s[i] {
	case '{':
		return validObject(s, i+1, depth, st)
	case '[':
		return validArray(s, i+1, depth, st)
	case '"':
		return validString(s, i+1)
	case 't':
		return validLiteral(s, i, "true")
	case 'f':
		return validLiteral(s, i, "false")
	case 'n':
		return validLiteral(s, i, "null")
	}
	return validNumber(s, i)
}

func validLiteral(s []byte, i int, literal string) (int, bool) {
	end := i + len(literal)
	return end, end <= len(s) && string(s[i:end]) == literal
}

// validObject checks an object whose '{' is at s[i-1].
func validObject(s []byte, i, depth int, st *validState) (int, bool) {
	i = skipSpace(s, i)
	if i < len(s) && s[i] == '}' {
		return i + 1, true
	}
	var ok bool
	for {
		if i >= len(s) || s[i] != '"' {
			return i, false
		}
		i, ok = validString(s, i+1)
		if !ok {
			return i, false
		}
		i = skipSpace(s, i)
		if i >= len(s) || s[i] != ':' {
			return i, false
		}
		i, ok = validValue(s, skipSpace(s, i+1), depth+1, st)
		if !ok {
			return i, false
		}
		i = skipSpace(s, i)
		if i >= len(s) {
			return i, false
		}
		switch s[i] {
		case '}':
			return i + 1, true
		case ',':
			i = skipSpace(s, i+1)
		default:
			return i, false
		}
	}
}

// validArray checks an array whose '[' is at s[i-1].
func validArray(s []byte, i, depth int, st *validState) (int, bool) {
	i = skipSpace(s, i)
	if i < len(s) && s[i] == ']' {
		return i + 1, true
	}
	var ok bool
	for elems := 1; ; elems++ {
		if depth == 1 && elems > BatchLimit {
			st.bound = ErrBatchTooLarge
			return i, false
		}
		i, ok = validValue(s, i, depth+1, st)
		if !ok {
			return i, false
		}
		i = skipSpace(s, i)
		if i >= len(s) {
			return i, false
		}
		switch s[i] {
		case ']':
			return i + 1, true
		case ',':
			i = skipSpace(s, i+1)
		default:
			return i, false
		}
	}
}

// validString checks a string whose opening quote is at s[i-1]: escapes
// from the RFC's list, no raw control characters, valid UTF-8.
func validString(s []byte, i int) (int, bool) {
	for {
		// Ids, methods and hex params are long runs of plain ASCII: skip
		// them 8 bytes at a time, then byte by byte up to the next special one.
		for i+8 <= len(s) && plainWord(binary.LittleEndian.Uint64(s[i:])) {
			i += 8
		}
		for i < len(s) && stringPlain[s[i]] {
			i++
		}
		if i >= len(s) {
			return i, false
		}
		switch c := s[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			end, ok := validEscape(s, i)
			if !ok {
				return i, false
			}
			i = end
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				return i, false
			}
			i += size
		default:
			return i, false
		}
	}
}

const (
	wordOnes  = 0x0101010101010101
	wordHighs = 0x8080808080808080
)

// plainWord reports whether all 8 bytes of x are stringPlain. Per byte b, a
// high bit ends up set in the mask when b < 0x20 (b-0x20 wraps), b is '"'
// or '\\' (b^c-1 wraps), or b >= 0x80. A borrow can only start at a byte
// that is not plain, so the mask is exact when it is zero.
func plainWord(x uint64) bool {
	quote := x ^ (wordOnes * '"')
	backslash := x ^ (wordOnes * '\\')
	return ((x-wordOnes*0x20)|(quote-wordOnes)|(backslash-wordOnes)|x)&wordHighs == 0
}

// validEscape checks the escape sequence at s[i] == '\\' and returns the
// index after it.
func validEscape(s []byte, i int) (int, bool) {
	if i+1 >= len(s) {
		return i, false
	}
	switch s[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2, true
	case 'u':
		return i + 6, i+6 <= len(s) && isHex4(s[i+2:i+6])
	}
	return i, false
}

func isHex4(s []byte) bool {
	return hexNibbles[s[0]]|hexNibbles[s[1]]|hexNibbles[s[2]]|hexNibbles[s[3]] <= 0xf
}

// validNumber checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at s[i].
func validNumber(s []byte, i int) (int, bool) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = skipDigits(s, i+1)
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		end := skipDigits(s, i+1)
		if end == i+1 {
			return end, false
		}
		i = end
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		end := skipDigits(s, i)
		if end == i {
			return end, false
		}
		i = end
	}
	return i, true
}

func skipDigits(s []byte, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
