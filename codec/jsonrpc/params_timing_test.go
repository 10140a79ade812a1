package jsonrpc

import (
	"strings"
	"testing"
)

func BenchmarkParams(b *testing.B) {
	var p Parser
	reqs, _, err := p.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":["0x` + hex40 + `","0x` + hex64 +
		`","0x1a2b3c4d","0x` + strings.Repeat("f", 60) + `",1234567890,"0x` + strings.Repeat("ab", 512) + `"]}`))
	if err != nil {
		b.Fatal(err)
	}
	r := &reqs[0]
	b.Run("address", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a, _ := ParseAddress(r.Param(0))
			sink += int(a[0])
		}
	})
	b.Run("hash", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h, _ := ParseHash(r.Param(1))
			sink += int(h[0])
		}
	})
	b.Run("quantity", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			x, _ := ParseQuantity(r.Param(2))
			sink += int(x)
		}
	})
	b.Run("quantity-decimal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			x, _ := ParseQuantity(r.Param(4))
			sink += int(x)
		}
	})
	b.Run("u256", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			z, _ := ParseU256(r.Param(3))
			sink += int(z[0])
		}
	})
	b.Run("data-1KiB", func(b *testing.B) {
		var data []byte
		b.SetBytes(1024)
		b.ReportAllocs()
		for b.Loop() {
			data, _ = ParseData(data[:0], r.Param(5))
		}
		sink += len(data)
	})
}
