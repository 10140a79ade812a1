package ws

import (
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"
)

func TestAppendFrameHeader(t *testing.T) {
	f := func(op Opcode, fin, rsv1 bool, n int, want string) {
		t.Helper()
		got := hex.EncodeToString(AppendFrameHeader([]byte{0xee}, op, fin, rsv1, n))
		if got != "ee"+want {
			t.Fatalf("AppendFrameHeader(%v, %v, %v, %d) = %s, want ee%s", op, fin, rsv1, n, got, want)
		}
	}
	f(OpText, true, false, 0, "8100")
	f(OpText, true, false, 125, "817d")
	f(OpBinary, true, false, 126, "827e007e")
	f(OpBinary, false, false, 0xffff, "027effff")
	f(OpContinuation, true, false, 0x10000, "807f0000000000010000")
	f(OpText, true, true, 5, "c105")
	f(OpText, false, true, 1<<40, "417f0000010000000000")
	f(OpClose, true, false, 2, "8802")
	f(OpPing, true, false, 125, "897d")
	f(OpPong, true, false, 0, "8a00")
	mustPanic(t, "control too long", func() { AppendFrameHeader(nil, OpPing, true, false, 126) })
	mustPanic(t, "control fragmented", func() { AppendFrameHeader(nil, OpClose, false, false, 0) })
	mustPanic(t, "control compressed", func() { AppendFrameHeader(nil, OpPong, true, true, 0) })
	mustPanic(t, "reserved opcode", func() { AppendFrameHeader(nil, 3, true, false, 0) })
	mustPanic(t, "reserved control opcode", func() { AppendFrameHeader(nil, 0xb, true, false, 0) })
	mustPanic(t, "negative length", func() { AppendFrameHeader(nil, OpText, true, false, -1) })
}

func TestAppendFrames(t *testing.T) {
	f := func(got []byte, want string) {
		t.Helper()
		if hex.EncodeToString(got) != want {
			t.Fatalf("got %x, want %s", got, want)
		}
	}
	f(AppendFrame(nil, OpText, []byte("hi")), "81026869")
	f(AppendClose(nil, 1000, "bye"), "880503e8627965")
	f(AppendClose(nil, 0, ""), "8800")
	f(AppendClose(nil, 4000, strings.Repeat("r", 123))[:4], "887d0fa0")
	f(AppendPing(nil, []byte("p")), "890170")
	f(AppendPong(nil, []byte("p")), "8a0170")
	mustPanic(t, "reason too long", func() { AppendClose(nil, 1000, strings.Repeat("r", 124)) })
	mustPanic(t, "reason without code", func() { AppendClose(nil, 0, "r") })
	mustPanic(t, "code 1005", func() { AppendClose(nil, CloseNoStatus, "") })
	mustPanic(t, "pong too long", func() { AppendPong(nil, make([]byte, 126)) })
	// The server's own frames parse back (masked as a client would send them).
	for _, fr := range [][]byte{AppendClose(nil, 1000, "bye"), AppendFrame(nil, OpBinary, make([]byte, 70000))} {
		got := readStream(NewReader(Config{}, nil), [][]byte{maskFrame(fr)})
		if len(got) != 1 || got[0].Err != nil {
			t.Fatalf("round trip: %v", got)
		}
	}
}

// maskFrame turns one unmasked server frame into the masked client frame
// with the same header bits and payload.
func maskFrame(fr []byte) []byte {
	size := 2
	switch fr[1] & 0x7f {
	case len16:
		size = 4
	case len64:
		size = 10
	}
	out := append([]byte(nil), fr[:size]...)
	out[1] |= bitMask
	out = append(out, testMaskKey[:]...)
	start := len(out)
	out = append(out, fr[size:]...)
	maskBytes(out[start:], binary.LittleEndian.Uint32(testMaskKey[:]))
	return out
}

func TestMaskBytes(t *testing.T) {
	key := [4]byte{1, 2, 3, 4}
	k := binary.LittleEndian.Uint32(key[:])
	for n := range 100 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i * 7)
		}
		maskBytes(b, k)
		for i := range b {
			if b[i] != byte(i*7)^key[i%4] {
				t.Fatalf("length %d: byte %d = %#x", n, i, b[i])
			}
		}
	}
}

func TestOpcodeString(t *testing.T) {
	f := func(op Opcode, want string) {
		t.Helper()
		if op.String() != want {
			t.Fatalf("%d: %q, want %q", op, op.String(), want)
		}
	}
	f(OpContinuation, "continuation")
	f(OpText, "text")
	f(OpBinary, "binary")
	f(OpClose, "close")
	f(OpPing, "ping")
	f(OpPong, "pong")
	f(3, "opcode(3)")
}
