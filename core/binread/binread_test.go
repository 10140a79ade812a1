package binread

import (
	"bytes"
	"strings"
	"testing"

	"github.com/holiman/uint256"
)

// TestU256Forms: each form reads back what it wrote, the compact one takes
// the value's byte length plus one, and U256Compact refuses every other
// spelling of a value (so re-encoding what it accepts gives the input).
func TestU256Forms(t *testing.T) {
	for _, hex := range []string{"0x0", "0x1", "0xff", "0x100", "0xde0b6b3a7640000", "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"} {
		v := uint256.MustFromHex(hex)
		fixed := AppendU256([]byte{9}, v)
		if want := v.Bytes32(); !bytes.Equal(fixed[1:], want[:]) {
			t.Fatalf("%s: AppendU256 gave %x", hex, fixed)
		}
		compact := AppendU256Compact(nil, v)
		if len(compact) != 1+(v.BitLen()+7)/8 {
			t.Fatalf("%s: AppendU256Compact gave %x", hex, compact)
		}
		var a, b uint256.Int
		r := Reader{B: fixed[1:]}
		r.U256(&a)
		s := Reader{B: compact}
		s.U256Compact(&b)
		if r.Err != nil || s.Err != nil || r.Left() != 0 || s.Left() != 0 || !a.Eq(v) || !b.Eq(v) {
			t.Fatalf("%s: read back %s (%v), %s (%v)", hex, &a, r.Err, &b, s.Err)
		}
	}
	for name, in := range map[string][]byte{
		"a u256 of 33 bytes": append([]byte{33}, make([]byte, 33)...),
		"leading zero":       {2, 0, 1},
		"truncated":          {3, 1, 2},
		"truncated ":         {},
	} {
		r := Reader{B: in}
		r.U256Compact(new(uint256.Int))
		if r.Err == nil || !strings.Contains(r.Err.Error(), strings.TrimSpace(name)) {
			t.Fatalf("%x: error %v, want %q", in, r.Err, name)
		}
	}
}
