package jsonrpc

import (
	"strings"
	"testing"

	"github.com/holiman/uint256"
)

func BenchmarkAppendResult(b *testing.B) {
	id := []byte(`"req-12345"`)
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		out = AppendResultPrefix(out[:0], id)
		out = append(out, "null"...)
		out = AppendResultSuffix(out)
	}
	b.SetBytes(int64(len(out)))
	sink += len(out)
}

func BenchmarkAppendError(b *testing.B) {
	id := []byte(`42`)
	e := InvalidParams("address: want 0x followed by 40 hex digits")
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		out = AppendError(out[:0], id, e)
	}
	b.SetBytes(int64(len(out)))
	sink += len(out)
}

func BenchmarkAppendQuantity(b *testing.B) {
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		out = AppendQuantity(out[:0], 0x1234_5678_9abc)
	}
	b.SetBytes(int64(len(out)))
	sink += len(out)
}

func BenchmarkAppendQuantityU256(b *testing.B) {
	v := uint256.MustFromHex("0x" + strings.Repeat("f", 60))
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		out = AppendQuantityU256(out[:0], v)
	}
	b.SetBytes(int64(len(out)))
	sink += len(out)
}

func BenchmarkAppendData(b *testing.B) {
	data := make([]byte, 1024)
	for i := range data {
		data[i] = byte(i * 7)
	}
	var out []byte
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		out = AppendData(out[:0], data)
	}
	sink += len(out)
}

func BenchmarkAppendString(b *testing.B) {
	for _, bc := range []struct{ name, s string }{
		{"plain", "execution reverted: insufficient balance for transfer"},
		{"escaped", "line one\nline \"two\"\ttab é \x01"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var out []byte
			b.SetBytes(int64(len(bc.s)))
			b.ReportAllocs()
			for b.Loop() {
				out = AppendString(out[:0], bc.s)
			}
			sink += len(out)
		})
	}
}
