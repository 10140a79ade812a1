package ws

import (
	"bytes"
	stdflate "compress/flate"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// testMaskKey is the masking key of test frames, in wire order.
var testMaskKey = [4]byte{0x37, 0xfa, 0x21, 0x3d}

// rawFrame builds a masked client frame with first byte b0 (FIN, RSV, opcode)
// and the shortest length encoding.
func rawFrame(b0 byte, payload []byte) []byte {
	h := AppendFrameHeader(nil, OpBinary, false, false, len(payload))
	h[0] = b0
	h[1] |= bitMask
	h = append(h, testMaskKey[:]...)
	start := len(h)
	h = append(h, payload...)
	maskBytes(h[start:], binary.LittleEndian.Uint32(testMaskKey[:]))
	return h
}

// frame builds a masked client frame.
func frame(op Opcode, fin, rsv1 bool, payload string) []byte {
	b0 := byte(op)
	if fin {
		b0 |= bitFin
	}
	if rsv1 {
		b0 |= bitRSV1
	}
	return rawFrame(b0, []byte(payload))
}

// closePayload is a close frame payload.
func closePayload(code uint16, reason string) string {
	return string(binary.BigEndian.AppendUint16(nil, code)) + reason
}

// deflateMsg compresses msg with the standard library as a client without
// context takeover would: sync flush, trailing 00 00 ff ff removed.
func deflateMsg(msg string) string {
	var buf bytes.Buffer
	w, _ := stdflate.NewWriter(&buf, stdflate.BestCompression)
	w.Write([]byte(msg))
	w.Flush()
	return strings.TrimSuffix(buf.String(), string(deflateTail))
}

// takeoverDeflater compresses messages as a client with context takeover:
// one stream, sync flushed after each message.
type takeoverDeflater struct {
	buf bytes.Buffer
	w   *stdflate.Writer
}

func (d *takeoverDeflater) msg(m string) string {
	if d.w == nil {
		d.w, _ = stdflate.NewWriter(&d.buf, stdflate.BestCompression)
	}
	d.buf.Reset()
	d.w.Write([]byte(m))
	d.w.Flush()
	return strings.TrimSuffix(d.buf.String(), string(deflateTail))
}

// event is one outcome of Reader.Next, copied out of the borrowed buffers.
type event struct {
	Op      Opcode
	Payload string
	Code    uint16
	Reason  string
	Err     *CloseError
}

func (e event) String() string {
	if e.Err != nil {
		return fmt.Sprintf("err(%d %s)", e.Err.Code, e.Err.Reason)
	}
	p := e.Payload
	if len(p) > 40 {
		p = fmt.Sprintf("%s...(%d bytes)", p[:40], len(p))
	}
	if e.Op == OpClose {
		return fmt.Sprintf("close(%d %q)", e.Code, e.Reason)
	}
	return fmt.Sprintf("%s(%q)", e.Op, p)
}

func eventOf(m Message, err *CloseError) event {
	if err != nil {
		return event{Err: err}
	}
	return event{Op: m.Op, Payload: string(m.Payload), Code: m.CloseCode, Reason: string(m.CloseReason)}
}

// readStream feeds chunks the way net/server will: bytes accumulate in a
// buffer that moves on every read; consumed bytes are cut off the front. It
// stops at the first error or close.
func readStream(r *Reader, chunks [][]byte) []event {
	var (
		in  []byte
		out []event
	)
	for _, c := range chunks {
		in = append(bytes.Clone(in), c...)
		for {
			m, n, err := r.Next(in)
			if err != nil {
				return append(out, eventOf(m, err))
			}
			in = in[n:]
			if m.Op == 0 {
				break
			}
			out = append(out, eventOf(m, nil))
			if m.Op == OpClose {
				return out
			}
		}
	}
	return out
}

func eventsString(evs []event) string {
	s := make([]string, len(evs))
	for i, e := range evs {
		s[i] = e.String()
	}
	return strings.Join(s, " ")
}

func cat(frames ...[]byte) []byte { return bytes.Join(frames, nil) }

// mustPanic runs fn and fails unless it panics with a "BUG:" message.
func mustPanic(t *testing.T, name string, fn func()) {
	t.Helper()
	defer func() {
		t.Helper()
		p := recover()
		if s, ok := p.(string); !ok || !strings.HasPrefix(s, "BUG: ") {
			t.Fatalf("%s: recovered %v, want a BUG panic", name, p)
		}
	}()
	fn()
}

func mustStdWriter(w *bytes.Buffer) *stdflate.Writer {
	fw, err := stdflate.NewWriter(w, stdflate.BestCompression)
	if err != nil {
		panic(err)
	}
	return fw
}

// acceptKeyRef computes Sec-WebSocket-Accept the obvious way.
func acceptKeyRef(key string) string {
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(sum[:])
}
