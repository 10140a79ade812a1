package ws

import (
	"strings"
	"testing"
)

var (
	sinkN     int
	sinkBytes []byte
)

func BenchmarkReaderNext(b *testing.B) {
	for _, bc := range []struct {
		name    string
		deflate *DeflateParams
		in      []byte
	}{
		{"small-text", nil, frame(OpText, true, false, `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}`)},
		{"64KiB-binary", nil, frame(OpBinary, true, false, strings.Repeat("x", 64<<10))},
		{"64KiB-text", nil, frame(OpText, true, false, strings.Repeat("é", 32<<10))},
		{"2KiB-json-fragmented-4", nil, cat(
			frame(OpText, false, false, benchJSON(2 << 10)[:512]), frame(OpContinuation, false, false, benchJSON(2 << 10)[512:1024]),
			frame(OpContinuation, false, false, benchJSON(2 << 10)[1024:1536]), frame(OpContinuation, true, false, benchJSON(2 << 10)[1536:]))},
		{"2KiB-json-compressed", deflateNoTakeover, frame(OpText, true, true, deflateMsg(benchJSON(2<<10)))},
		{"2KiB-json-compressed-takeover", deflateOn, frame(OpText, true, true, deflateMsg(benchJSON(2<<10)))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := NewReader(Config{}, bc.deflate)
			buf := make([]byte, len(bc.in))
			b.SetBytes(int64(len(bc.in))) // wire bytes
			b.ReportAllocs()
			for b.Loop() {
				// Masking again restores the masked bytes; Next unmasks them in place.
				copy(buf, bc.in)
				m, n, err := r.Next(buf)
				if err != nil || n != len(buf) {
					b.Fatal(n, err)
				}
				sinkN += len(m.Payload)
			}
		})
	}
}

func BenchmarkAppendFrame(b *testing.B) {
	for _, size := range []int{64, 2 << 10, 64 << 10} {
		payload := []byte(strings.Repeat("x", size))
		b.Run(formatSize(size), func(b *testing.B) {
			dst := make([]byte, 0, size+maxHeaderBytes)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				sinkBytes = AppendFrame(dst[:0], OpText, payload)
			}
		})
	}
}

func BenchmarkDeflater(b *testing.B) {
	msg := []byte(benchJSON(2 << 10))
	d := newTestDeflater(b)
	dst := make([]byte, 0, 4<<10)
	b.Run("AppendMessage-2KiB-json", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			sinkBytes = d.AppendMessage(dst[:0], OpText, msg)
		}
		b.ReportMetric(float64(len(sinkBytes))/float64(len(msg)), "ratio")
	})
	// The per-connection work of a shared notification: two small segments
	// and the assembly; the shared segment is compressed once, elsewhere.
	shared := d.CompressSegment(nil, msg)
	b.Run("AppendCompressedParts-2KiB-shared", func(b *testing.B) {
		var pre, suf []byte
		prefix, suffix := []byte(partsPrefix), []byte(partsSuffix)
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			pre = d.CompressSegment(pre[:0], prefix)
			suf = d.CompressSegment(suf[:0], suffix)
			sinkBytes = AppendCompressedParts(dst[:0], OpText, pre, shared, suf)
		}
	})
}

func BenchmarkAcceptKey(b *testing.B) {
	key := []byte("dGhlIHNhbXBsZSBub25jZQ==")
	dst := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		sinkBytes = AppendAcceptKey(dst[:0], key)
	}
}

func formatSize(n int) string {
	if n >= 1<<10 {
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}
