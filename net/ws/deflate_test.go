package ws

import (
	"bytes"
	stdflate "compress/flate"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"
)

func newTestDeflater(t testing.TB) *Deflater {
	t.Helper()
	d, err := NewDeflater(flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// serverPayload splits one unmasked server frame into header fields and
// payload.
func serverPayload(t *testing.T, fr []byte) (b0 byte, payload []byte) {
	t.Helper()
	size, n := 2, int(fr[1]&0x7f)
	switch n {
	case len16:
		size, n = 4, int(fr[2])<<8|int(fr[3])
	case len64:
		size, n = 10, int(fr[6])<<24|int(fr[7])<<16|int(fr[8])<<8|int(fr[9])
	}
	if fr[1]&bitMask != 0 || size+n != len(fr) {
		t.Fatalf("bad server frame % x", fr[:size])
	}
	return fr[0], fr[size:]
}

// inflateBoth inflates a permessage-deflate payload with klauspost's and the
// standard library's inflaters and checks they agree.
func inflateBoth(t *testing.T, payload []byte) string {
	t.Helper()
	in := append(bytes.Clone(payload), inflateSuffix...)
	k, err := io.ReadAll(flate.NewReader(bytes.NewReader(in)))
	if err != nil {
		t.Fatalf("klauspost: %v", err)
	}
	s, err := io.ReadAll(stdflate.NewReader(bytes.NewReader(in)))
	if err != nil {
		t.Fatalf("compress/flate: %v", err)
	}
	if !bytes.Equal(k, s) {
		t.Fatalf("inflaters disagree: %q vs %q", k, s)
	}
	return string(k)
}

func TestDeflaterMessage(t *testing.T) {
	d := newTestDeflater(t)
	for _, msg := range []string{"", "a", `{"jsonrpc":"2.0","id":1,"result":"0x1"}`, strings.Repeat("0123456789", 10000)} {
		fr := d.AppendMessage([]byte("prefix"), OpText, []byte(msg))
		if string(fr[:6]) != "prefix" {
			t.Fatal("dst not kept")
		}
		b0, payload := serverPayload(t, fr[6:])
		if b0 != bitFin|bitRSV1|byte(OpText) {
			t.Fatalf("first byte %#x", b0)
		}
		if bytes.HasSuffix(payload, deflateTail) && len(msg) > 0 {
			t.Fatalf("tail not removed: % x", payload)
		}
		if got := inflateBoth(t, payload); got != msg {
			t.Fatalf("got %.40q want %.40q", got, msg)
		}
		// Our Reader reads it back as a client message.
		got := readStream(NewReader(Config{}, deflateNoTakeover), [][]byte{maskFrame(fr[6:])})
		if len(got) != 1 || got[0].Payload != msg {
			t.Fatalf("Reader: %v", got)
		}
	}
}

// TestCompressedParts: independently compressed segments concatenate into
// one deflate stream, whatever the parts, including empty ones.
func TestCompressedParts(t *testing.T) {
	d := newTestDeflater(t)
	f := func(parts ...string) {
		t.Helper()
		var segs [][]byte
		for _, p := range parts {
			seg := d.CompressSegment(nil, []byte(p))
			if !bytes.HasSuffix(seg, deflateTail) {
				t.Fatalf("segment of %q does not end with 00 00 ff ff: % x", p, seg)
			}
			segs = append(segs, seg)
		}
		kept := bytes.Clone(bytes.Join(segs, nil))
		fr := AppendCompressedParts(nil, OpText, segs...)
		if !bytes.Equal(bytes.Join(segs, nil), kept) {
			t.Fatal("segments modified")
		}
		_, payload := serverPayload(t, fr)
		want := strings.Join(parts, "")
		if got := inflateBoth(t, payload); got != want {
			t.Fatalf("got %.60q\nwant %.60q", got, want)
		}
		for _, deflate := range []*DeflateParams{deflateOn, deflateNoTakeover} {
			got := readStream(NewReader(Config{}, deflate), [][]byte{maskFrame(fr)})
			if len(got) != 1 || got[0].Payload != want {
				t.Fatalf("Reader: %v", got)
			}
		}
	}
	shared := `{"number":"0x1b4","hash":"0xdc0818cf78f21a8e70579cb46a43643f78291264dda342ae31049421c82d21ae","transactions":[` +
		strings.Repeat(`"0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",`, 40) + `"0x0"]}`
	f(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x9ce59a13","result":`, shared, `}}`)
	f("only")
	f("", "", "")
	f("a", "", "b")
	f(strings.Repeat("x", 100000), strings.Repeat("x", 100000)) // long runs within each segment
	f(shared, shared, shared)                                   // no reference across segments needed, none made
	mustPanic(t, "no segments", func() { AppendCompressedParts(nil, OpText) })
	mustPanic(t, "not a segment", func() { AppendCompressedParts(nil, OpText, []byte("x")) })
	mustPanic(t, "control opcode", func() { AppendCompressedParts(nil, OpPing, d.CompressSegment(nil, nil)) })
}

func TestDeflaterAllocs(t *testing.T) {
	d := newTestDeflater(t)
	msg := []byte(benchJSON(2 << 10))
	dst := make([]byte, 0, 4<<10)
	d.AppendMessage(dst, OpText, msg)
	if a := testing.AllocsPerRun(100, func() { d.AppendMessage(dst[:0], OpText, msg) }); a != 0 {
		t.Fatalf("AppendMessage: %.1f allocs", a)
	}
	if a := testing.AllocsPerRun(100, func() { d.CompressSegment(dst[:0], msg) }); a != 0 {
		t.Fatalf("CompressSegment: %.1f allocs", a)
	}
	if _, err := NewDeflater(42); err == nil {
		t.Fatal("level 42 accepted")
	}
}

// benchJSON is a JSON-RPC response of about n bytes.
func benchJSON(n int) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":7,"result":[`)
	for i := 0; b.Len() < n-40; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"blockNumber":"0x1b4","logIndex":"0x` + string(rune('a'+i%6)) + `","removed":false}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

// TestStoredSegmentsConcatenate: stored segments mix with compressed ones
// into one valid stream, whatever their sizes (including more than one
// stored block).
func TestStoredSegmentsConcatenate(t *testing.T) {
	d, err := NewDeflater(flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	f := func(head, shared, tail string) {
		t.Helper()
		msg := AppendCompressedParts(nil, OpText, AppendStoredSegment(nil, []byte(head)),
			d.CompressSegment(nil, []byte(shared)), AppendStoredSegment(nil, []byte(tail)))
		r := NewReader(Config{MaxMessageBytes: MaxMessageBytes}, &DeflateParams{})
		got, n, cerr := r.Next(maskFrame(msg))
		if cerr != nil || n == 0 || string(got.Payload) != head+shared+tail {
			t.Fatalf("%d+%d+%d bytes: got %d bytes, %v", len(head), len(shared), len(tail), len(got.Payload), cerr)
		}
	}
	f(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x1","result":`, strings.Repeat(`{"a":1},`, 500), `}}`)
	f("", "x", "")
	f(strings.Repeat("h", 70_000), "", strings.Repeat("t", 3))
}
