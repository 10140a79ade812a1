package ws

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var deflateOn = &DeflateParams{}                                      // client context takeover
var deflateNoTakeover = &DeflateParams{ClientNoContextTakeover: true} // client resets per message

// readAll parses input in one piece and returns the outcome as a string.
func readAll(cfg Config, deflate *DeflateParams, input []byte) string {
	return eventsString(readStream(NewReader(cfg, deflate), [][]byte{input}))
}

func TestReaderValid(t *testing.T) {
	f := func(deflate *DeflateParams, input []byte, want string) {
		t.Helper()
		if got := readAll(Config{}, deflate, input); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
	f(nil, frame(OpText, true, false, "hello"), `text("hello")`)
	f(nil, frame(OpText, true, false, ""), `text("")`)
	f(nil, frame(OpBinary, true, false, "\xff\x00"), `binary("\xff\x00")`)
	f(nil, cat(frame(OpText, true, false, "a"), frame(OpBinary, true, false, "b")), `text("a") binary("b")`)
	// Fragmented, with control frames between the fragments.
	f(nil, cat(
		frame(OpText, false, false, "hel"),
		frame(OpPing, true, false, "p1"),
		frame(OpContinuation, false, false, "lo "),
		frame(OpPong, true, false, ""),
		frame(OpContinuation, true, false, "world"),
		frame(OpBinary, true, false, "next"),
	), `ping("p1") pong("") text("hello world") binary("next")`)
	f(nil, cat(frame(OpBinary, false, false, ""), frame(OpContinuation, true, false, "")), `binary("")`)
	// UTF-8 is checked on the whole message: a rune split over fragments is fine.
	f(nil, cat(frame(OpText, false, false, "caf\xc3"), frame(OpContinuation, true, false, "\xa9")), `text("café")`)
	f(nil, frame(OpPing, true, false, strings.Repeat("p", MaxControlPayloadBytes)), `ping("pppppppppppppppppppppppppppppppppppppppp...(125 bytes)")`)
	// Close frames.
	f(nil, frame(OpClose, true, false, ""), `close(1005 "")`)
	f(nil, frame(OpClose, true, false, closePayload(1000, "bye")), `close(1000 "bye")`)
	f(nil, cat(frame(OpClose, true, false, closePayload(1001, "")), frame(OpText, true, false, "ignored")), `close(1001 "")`)
	for _, code := range []uint16{1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4000, 4999} {
		want := `close(` + itoa(int(code)) + ` "é")`
		f(nil, frame(OpClose, true, false, closePayload(code, "é")), want)
	}
	// Lengths on the boundaries of the encodings.
	for _, n := range []int{125, 126, 127, 0xffff, 0x10000} {
		got := readStream(NewReader(Config{}, nil), [][]byte{frame(OpBinary, true, false, strings.Repeat("x", n))})
		if len(got) != 1 || got[0].Err != nil || len(got[0].Payload) != n {
			t.Fatalf("length %d: %v", n, got)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestReaderErrors(t *testing.T) {
	f := func(deflate *DeflateParams, input []byte, want *CloseError) {
		t.Helper()
		r := NewReader(Config{}, deflate)
		got := readStream(r, [][]byte{input})
		if len(got) == 0 || got[len(got)-1].Err != want {
			t.Fatalf("got %v, want error %v (%d)", got, want, want.Code)
		}
		// The error is sticky.
		if _, n, err := r.Next(frame(OpText, true, false, "x")); err != want || n != 0 {
			t.Fatalf("after the error: n=%d err=%v", n, err)
		}
	}
	text := frame(OpText, true, false, "x")
	// 1002: masking, reserved bits, opcodes.
	unmasked := bytes.Clone(text)
	unmasked[1] &^= bitMask
	f(nil, unmasked, ErrUnmasked)
	f(nil, rawFrame(bitFin|0x20|byte(OpText), []byte("x")), ErrReservedBits)
	f(nil, rawFrame(bitFin|0x10|byte(OpText), []byte("x")), ErrReservedBits)
	f(nil, frame(OpText, true, true, "x"), ErrReservedBits)      // RSV1 without deflate
	f(deflateOn, frame(OpPing, true, true, ""), ErrReservedBits) // RSV1 on control
	f(deflateOn, cat(frame(OpText, false, true, deflateMsg("a")), frame(OpContinuation, true, true, "")), ErrReservedBits)
	for _, op := range []Opcode{3, 4, 5, 6, 7, 0xb, 0xc, 0xd, 0xe, 0xf} {
		f(nil, frame(op, true, false, ""), ErrUnknownOpcode)
	}
	// 1002: control frames.
	f(nil, frame(OpPing, true, false, strings.Repeat("p", MaxControlPayloadBytes+1)), ErrControlTooLong)
	f(nil, frame(OpClose, true, false, strings.Repeat("p", 200)), ErrControlTooLong)
	f(nil, frame(OpPing, false, false, ""), ErrControlFragmented)
	f(nil, cat(frame(OpText, false, false, "a"), frame(OpPong, false, false, "")), ErrControlFragmented)
	// 1002: fragmentation.
	f(nil, frame(OpContinuation, true, false, "x"), ErrUnexpectedContinuation)
	f(nil, cat(text, frame(OpContinuation, true, false, "x")), ErrUnexpectedContinuation)
	f(nil, cat(frame(OpText, false, false, "a"), frame(OpText, true, false, "b")), ErrExpectedContinuation)
	f(nil, cat(frame(OpBinary, false, false, "a"), frame(OpPing, true, false, ""), frame(OpBinary, true, false, "b")), ErrExpectedContinuation)
	// 1002: length encodings.
	f(nil, []byte{bitFin | byte(OpText), bitMask | len16, 0, 125, 1, 2, 3, 4}, ErrNonMinimalLength)
	f(nil, []byte{bitFin | byte(OpText), bitMask | len64, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4}, ErrNonMinimalLength)
	f(nil, []byte{bitFin | byte(OpText), bitMask | len64, 0x80, 0, 0, 0, 0, 0, 0, 0}, ErrLengthOverflow)
	// 1002: close payloads.
	f(nil, frame(OpClose, true, false, "\x03"), ErrCloseLength)
	for _, code := range []uint16{0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535} {
		f(nil, frame(OpClose, true, false, closePayload(code, "")), ErrCloseCode)
	}
	// 1002: corrupt compressed data.
	f(deflateOn, frame(OpText, true, true, "\xff\xff\xff"), ErrBadCompression)
	// 1007: UTF-8.
	f(nil, frame(OpText, true, false, "caf\xc3"), ErrInvalidUTF8)
	f(nil, frame(OpText, true, false, "\xed\xa0\x80"), ErrInvalidUTF8) // surrogate
	f(nil, cat(frame(OpText, false, false, "ok"), frame(OpContinuation, true, false, "\xc0\xaf")), ErrInvalidUTF8)
	f(deflateOn, frame(OpText, true, true, deflateMsg("bad \xff")), ErrInvalidUTF8)
	f(nil, frame(OpClose, true, false, closePayload(1000, "\xff")), ErrCloseReasonUTF8)
	// 1009: limits are checked on the header alone (no payload follows).
	f(nil, binary.BigEndian.AppendUint64([]byte{bitFin | byte(OpBinary), bitMask | len64}, MaxFrameBytes+1), ErrFrameTooLarge)
	f(nil, binary.BigEndian.AppendUint64([]byte{bitFin | byte(OpBinary), bitMask | len64}, 1<<62), ErrFrameTooLarge)
}

func TestReaderCompressed(t *testing.T) {
	f := func(deflate *DeflateParams, input []byte, want string) {
		t.Helper()
		if got := readAll(Config{}, deflate, input); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
	msg := `{"jsonrpc":"2.0","id":1,"result":"0x1"}`
	f(deflateOn, frame(OpText, true, true, deflateMsg(msg)), `text("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"0x1\"}")`)
	f(deflateNoTakeover, frame(OpBinary, true, true, deflateMsg("")), `binary("")`)
	// Uncompressed messages are allowed alongside.
	f(deflateOn, cat(frame(OpText, true, false, "plain"), frame(OpText, true, true, deflateMsg("packed"))), `text("plain") text("packed")`)
	// Fragmented compressed message with a ping between the fragments.
	c := deflateMsg(strings.Repeat("abc", 100))
	f(deflateOn, cat(
		frame(OpText, false, true, c[:3]),
		frame(OpPing, true, false, "x"),
		frame(OpContinuation, false, false, c[3:5]),
		frame(OpContinuation, true, false, c[5:]),
	), `ping("x") text("abcabcabcabcabcabcabcabcabcabcabcabcabca...(300 bytes)")`)
	// A client whose message ends with a final block (BFINAL) is accepted too.
	f(deflateOn, frame(OpText, true, true, deflateFinal("done")), `text("done")`)
}

// deflateFinal compresses msg as one complete stream (BFINAL set).
func deflateFinal(msg string) string {
	var buf bytes.Buffer
	w := mustStdWriter(&buf)
	w.Write([]byte(msg))
	w.Close()
	return buf.String()
}

func TestReaderContextTakeover(t *testing.T) {
	var d takeoverDeflater
	long := strings.Repeat("0123456789abcdef", 3000) // 48 KiB: slides the window
	msgs := []string{"hello hello hello", "hello again, hello", long, "0123456789abcdef hello", "bye"}
	var input []byte
	var want []string
	for _, m := range msgs {
		input = append(input, frame(OpText, true, true, d.msg(m))...)
		want = append(want, m)
	}
	got := readStream(NewReader(Config{}, deflateOn), [][]byte{input})
	if len(got) != len(msgs) {
		t.Fatalf("got %v", got)
	}
	for i := range got {
		if got[i].Payload != want[i] {
			t.Fatalf("message %d: got %.40q want %.40q", i, got[i].Payload, want[i])
		}
	}
	// Without context takeover the second message refers to bytes the
	// Reader does not have.
	got = readStream(NewReader(Config{}, deflateNoTakeover), [][]byte{input})
	if len(got) != 2 || got[1].Err != ErrBadCompression {
		t.Fatalf("without takeover: %v", got)
	}
}

func TestReaderLimits(t *testing.T) {
	f := func(cfg Config, deflate *DeflateParams, input []byte, want string) {
		t.Helper()
		if got := readAll(cfg, deflate, input); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
	x := func(n int) string { return strings.Repeat("x", n) }
	tooBigFrame := `err(1009 frame too large (max 1048576 bytes))`
	tooBigMsg := `err(1009 message too large (max 1048576 bytes))`
	// Defaults: a header announcing exactly the limit waits for the payload.
	f(Config{}, nil, binary.BigEndian.AppendUint64([]byte{bitFin | byte(OpBinary), bitMask | len64}, MaxFrameBytes), ``)
	f(Config{}, nil, binary.BigEndian.AppendUint64([]byte{bitFin | byte(OpBinary), bitMask | len64}, MaxFrameBytes+1), tooBigFrame)
	big := x(MaxMessageBytes / 2)
	f(Config{}, nil, cat(frame(OpBinary, false, false, big), frame(OpContinuation, true, false, big)), `binary("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...(1048576 bytes)")`)
	f(Config{}, nil, cat(frame(OpBinary, false, false, big), frame(OpContinuation, true, false, big+"x")), tooBigMsg)
	// Lowered limits.
	cfg := Config{MaxFrameBytes: 100, MaxMessageBytes: 150}
	f(cfg, nil, frame(OpBinary, true, false, x(100)), `binary("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...(100 bytes)")`)
	f(cfg, nil, frame(OpBinary, true, false, x(101)), `err(1009 frame too large (max 100 bytes))`)
	f(cfg, nil, cat(frame(OpText, false, false, x(100)), frame(OpContinuation, true, false, x(50))), `text("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...(150 bytes)")`)
	f(cfg, nil, cat(frame(OpText, false, false, x(100)), frame(OpContinuation, true, false, x(51))), `err(1009 message too large (max 150 bytes))`)
	f(Config{MaxMessageBytes: 10}, nil, frame(OpBinary, true, false, x(11)), `err(1009 message too large (max 10 bytes))`)
	// Control frames are bound by MaxControlPayloadBytes only.
	f(Config{MaxFrameBytes: 10}, nil, frame(OpPing, true, false, x(MaxControlPayloadBytes)), `ping("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...(125 bytes)")`)
	// Inflated size.
	f(Config{MaxMessageBytes: 1000}, deflateOn, frame(OpText, true, true, deflateMsg(x(1000))), `text("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...(1000 bytes)")`)
	f(Config{MaxMessageBytes: 1000}, deflateOn, frame(OpText, true, true, deflateMsg(x(1001))), `err(1009 message too large (max 1000 bytes))`)
	f(Config{}, deflateOn, frame(OpBinary, true, true, deflateMsg(x(MaxMessageBytes+1))), tooBigMsg)
	// Config outside the bounds is a programmer error.
	mustPanic(t, "MaxFrameBytes too large", func() { NewReader(Config{MaxFrameBytes: MaxFrameBytes + 1}, nil) })
	mustPanic(t, "negative MaxMessageBytes", func() { NewReader(Config{MaxMessageBytes: -1}, nil) })
}

// TestReaderNeedMore: a partial frame consumes nothing and says so.
func TestReaderNeedMore(t *testing.T) {
	r := NewReader(Config{}, nil)
	in := cat(frame(OpText, false, false, "ab"), frame(OpContinuation, true, false, "cd"))
	for i := range len(in) {
		if i == 8 { // exactly the first fragment
			continue
		}
		rr := NewReader(Config{}, nil)
		m, n, err := rr.Next(bytes.Clone(in[:i]))
		wantN := 0
		if i > 8 {
			wantN = 8
		}
		if m.Op != 0 || n != wantN || err != nil {
			t.Fatalf("prefix %d: op=%v n=%d err=%v", i, m.Op, n, err)
		}
	}
	m, n, err := r.Next(bytes.Clone(in))
	if m.Op != OpText || string(m.Payload) != "abcd" || n != len(in) || err != nil {
		t.Fatalf("whole: %v %q n=%d err=%v", m.Op, m.Payload, n, err)
	}
}

// splitCases are streams for TestReaderSplit, each with the deflate setting
// it is read with.
func splitCases() []struct {
	deflate *DeflateParams
	in      []byte
} {
	var d takeoverDeflater
	c := deflateMsg(strings.Repeat("json ", 60))
	type sc = struct {
		deflate *DeflateParams
		in      []byte
	}
	return []sc{
		{nil, cat(frame(OpText, true, false, "hello"), frame(OpBinary, true, false, strings.Repeat("b", 300)), frame(OpClose, true, false, closePayload(1000, "bye")))},
		{nil, cat(frame(OpText, false, false, "hel"), frame(OpPing, true, false, "p"), frame(OpContinuation, false, false, ""), frame(OpContinuation, true, false, "lo"), frame(OpPong, true, false, "q"))},
		{nil, frame(OpBinary, true, false, strings.Repeat("z", 70000))},
		{deflateOn, cat(frame(OpText, false, true, c[:5]), frame(OpPing, true, false, ""), frame(OpContinuation, true, false, c[5:]), frame(OpText, true, true, d.msg("one one one")), frame(OpText, true, true, d.msg("one two one")))},
		{deflateNoTakeover, cat(frame(OpBinary, true, true, deflateMsg("x")), frame(OpText, true, true, deflateMsg("bad \xff")))},
		{nil, cat(frame(OpText, true, false, "ok"), frame(OpText, false, false, "a"), frame(OpText, true, false, "b"))},
		{nil, cat(frame(OpText, true, false, "ok"), binary.BigEndian.AppendUint64([]byte{bitFin | byte(OpBinary), bitMask | len64}, MaxFrameBytes+1))},
		{nil, cat(frame(OpPing, true, false, "a"), frame(OpClose, true, false, "\x03\xe8\xff"))},
		{nil, cat(frame(OpText, false, false, "ok"), frame(OpContinuation, true, false, "\xc0"))},
	}
}

// TestReaderSplit feeds every case split at every byte offset, and byte by
// byte, and expects the same events as when it arrives in one piece.
func TestReaderSplit(t *testing.T) {
	for ci, c := range splitCases() {
		want := eventsString(readStream(NewReader(Config{}, c.deflate), [][]byte{c.in}))
		if want == "" {
			t.Fatalf("case %d: no events in one piece", ci)
		}
		for i := range len(c.in) + 1 {
			if len(c.in) > 8<<10 && i > 64 && i < len(c.in)-64 && i%997 != 0 {
				continue // large case: every offset near the ends, a sample between
			}
			got := eventsString(readStream(NewReader(Config{}, c.deflate), [][]byte{c.in[:i], c.in[i:]}))
			if got != want {
				t.Fatalf("case %d split at %d:\n got %s\nwant %s", ci, i, got, want)
			}
		}
		if len(c.in) > 8<<10 {
			continue
		}
		var bytewise [][]byte
		for i := range c.in {
			bytewise = append(bytewise, c.in[i:i+1])
		}
		if got := eventsString(readStream(NewReader(Config{}, c.deflate), bytewise)); got != want {
			t.Fatalf("case %d byte by byte:\n got %s\nwant %s", ci, got, want)
		}
	}
}

// TestReaderReset: a reset Reader forgets the message in progress, the
// error and the context takeover window.
func TestReaderReset(t *testing.T) {
	r := NewReader(Config{}, nil)
	if _, _, err := r.Next(frame(OpContinuation, true, false, "")); err == nil {
		t.Fatal("no error")
	}
	r.Reset(Config{}, deflateOn)
	got := readStream(r, [][]byte{frame(OpText, true, true, deflateMsg("again"))})
	if eventsString(got) != `text("again")` {
		t.Fatalf("after Reset: %v", got)
	}
}

func TestReaderAllocs(t *testing.T) {
	f := func(name string, deflate *DeflateParams, in []byte) {
		t.Helper()
		r := NewReader(Config{}, deflate)
		buf := make([]byte, len(in))
		allocs := testing.AllocsPerRun(100, func() {
			copy(buf, in)
			for b := buf; len(b) > 0; {
				m, n, err := r.Next(b)
				if err != nil || m.Op == 0 {
					t.Fatalf("%s: n=%d err=%v", name, n, err)
				}
				b = b[n:]
			}
		})
		if allocs != 0 {
			t.Fatalf("%s: %.1f allocs per Next, want 0", name, allocs)
		}
	}
	f("small text", nil, frame(OpText, true, false, `{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}`))
	f("64 KiB binary", nil, frame(OpBinary, true, false, strings.Repeat("x", 64<<10)))
	f("fragmented", nil, cat(frame(OpText, false, false, "a"), frame(OpPing, true, false, ""), frame(OpContinuation, true, false, "b")))
	f("compressed", deflateOn, frame(OpText, true, true, deflateMsg(strings.Repeat(`{"a":1}`, 100))))
	f("compressed no takeover", deflateNoTakeover, frame(OpText, true, true, deflateMsg(strings.Repeat(`{"a":1}`, 100))))
}

// FuzzReader: no panic, the same events whether the input arrives whole or
// in two halves, and every error a CloseError with a code from the rules.
func FuzzReader(f *testing.F) {
	for _, c := range splitCases() {
		f.Add(c.in)
	}
	f.Add(frame(OpText, true, true, deflateMsg("compressed")))
	f.Add(frame(OpClose, true, false, closePayload(1000, "")))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, deflate := range []*DeflateParams{nil, deflateOn, deflateNoTakeover} {
			cfg := Config{MaxFrameBytes: 4096, MaxMessageBytes: 8192}
			whole := readStream(NewReader(cfg, deflate), [][]byte{data})
			half := readStream(NewReader(cfg, deflate), [][]byte{data[:len(data)/2], data[len(data)/2:]})
			if eventsString(whole) != eventsString(half) {
				t.Fatalf("%q:\nwhole %v\nhalves %v", data, whole, half)
			}
			for _, e := range whole {
				if e.Err != nil {
					switch e.Err.Code {
					case CloseProtocolError, CloseInvalidPayload, CloseMessageTooBig:
					default:
						t.Fatalf("%q: error code %d", data, e.Err.Code)
					}
					if len(e.Err.Reason) > closeReasonBytesMax {
						t.Fatalf("reason too long: %q", e.Err.Reason)
					}
					continue
				}
				if len(e.Payload) > cfg.MaxMessageBytes || (e.Op == OpText && !utf8.ValidString(e.Payload)) {
					t.Fatalf("%q: bad event %v", data, e)
				}
			}
		}
	})
}
