package ws

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"
)

// Limits. Each is enforced by Reader.Next and pinned by a test.
const (
	// MaxFrameBytes bounds one data frame's payload as sent (compressed or
	// not). Config.MaxFrameBytes may lower it. Larger frames get 1009 as soon
	// as their header is in.
	MaxFrameBytes = 1 << 20
	// MaxMessageBytes bounds a data message: the sum of its frames' payloads
	// as sent, and, for a compressed message, its inflated size.
	// Config.MaxMessageBytes may lower it. Larger messages get 1009.
	MaxMessageBytes = 1 << 20
	// MaxControlPayloadBytes bounds a control frame's payload (RFC 6455
	// §5.5). Longer control frames get 1002.
	MaxControlPayloadBytes = 125
	// retainBytes: reassembly and inflate buffers that grew beyond it are
	// released at the start of the next message.
	retainBytes = 64 << 10
)

// Config lowers the Reader's limits. The zero value means the defaults.
type Config struct {
	// MaxFrameBytes: 0 means MaxFrameBytes. REQUIRES: 0 <= value <= MaxFrameBytes.
	MaxFrameBytes int
	// MaxMessageBytes: 0 means MaxMessageBytes. REQUIRES: 0 <= value <= MaxMessageBytes.
	MaxMessageBytes int
}

// Message is one complete message or control frame.
//
// Payload and CloseReason alias either the buffer passed to Reader.Next
// (unmasked in place) or the Reader's own buffers. They are valid until the
// next call to Next, and only while the caller has not overwritten buf[:n].
// For a text message Payload is valid UTF-8.
type Message struct {
	// Op is OpText, OpBinary, OpClose, OpPing or OpPong; 0 when Next found
	// no complete message.
	Op      Opcode
	Payload []byte // the (reassembled, inflated) payload; the raw payload for a close frame
	// CloseCode (OpClose only) is the peer's status code, CloseNoStatus when
	// the close frame was empty.
	CloseCode   uint16
	CloseReason []byte // OpClose only; valid UTF-8
}

// frameHeader is one parsed, validated frame header.
type frameHeader struct {
	op         Opcode
	fin, rsv1  bool
	payloadLen int
	key        uint32 // masking key, wire order read little endian
	size       int    // header bytes including the masking key; 0 while incomplete
}

// Reader parses the frames a client sends on one connection. It holds the
// state of a fragmented message and, with permessage-deflate, the inflater.
// It is used by one goroutine (the connection's event loop).
//
// Invariant: op != 0 exactly while a fragmented data message is in progress;
// msg then holds its payload so far, unmasked (still compressed when
// compressed is set).
type Reader struct {
	maxFrameBytes   int
	maxMessageBytes int
	frameErr        *CloseError // 1009 naming maxFrameBytes
	messageErr      *CloseError // 1009 naming maxMessageBytes
	deflate         bool        // permessage-deflate negotiated: RSV1 allowed on a message's first frame
	takeover        bool        // client context takeover: inflate with the previous messages as dictionary

	op         Opcode
	compressed bool
	msg        []byte
	inf        inflater
	err        *CloseError
}

// NewReader returns a Reader for a connection that negotiated deflate
// (nil: no permessage-deflate).
func NewReader(cfg Config, deflate *DeflateParams) *Reader {
	r := new(Reader)
	r.Reset(cfg, deflate)
	return r
}

// Reset prepares r for a new connection, keeping its buffers and inflater.
func (r *Reader) Reset(cfg Config, deflate *DeflateParams) {
	r.maxFrameBytes = limit(cfg.MaxFrameBytes, MaxFrameBytes)
	r.maxMessageBytes = limit(cfg.MaxMessageBytes, MaxMessageBytes)
	r.frameErr = tooLarge(ErrFrameTooLarge, "frame", r.maxFrameBytes, MaxFrameBytes)
	r.messageErr = tooLarge(ErrMessageTooLarge, "message", r.maxMessageBytes, MaxMessageBytes)
	r.deflate = deflate != nil
	r.takeover = deflate != nil && !deflate.ClientNoContextTakeover
	r.op, r.compressed, r.msg, r.err = 0, false, r.msg[:0], nil
	r.inf.reset()
}

func limit(v, max int) int {
	if v < 0 || v > max {
		panic("BUG: ws: limit " + strconv.Itoa(v) + " outside 0.." + strconv.Itoa(max))
	}
	if v == 0 {
		return max
	}
	return v
}

// Next consumes whole frames from the front of buf until it has a complete
// message or control frame, or buf holds no further complete frame.
//
//   - m.Op != 0: m is the message; buf[:n] is consumed.
//   - m.Op == 0, err == nil: no complete message yet. buf[:n] is consumed
//     (n > 0 when fragments of a message were taken into the Reader); keep
//     buf[n:] and call again with more bytes appended.
//   - err != nil: send a close frame with err.Code and close the
//     connection. Errors are reported as soon as the offending header bytes
//     are in, without waiting for the payload.
//
// Next unmasks consumed payloads in place, so buf[:n] is modified. After a
// close message the caller stops calling Next.
func (r *Reader) Next(buf []byte) (m Message, n int, err *CloseError) {
	if r.err != nil {
		return Message{}, 0, r.err
	}
	if r.op == 0 {
		r.release()
	}
	for {
		h, err := r.parseHeader(buf[n:])
		if err != nil {
			r.err = err
			return Message{}, 0, err
		}
		if h.size == 0 || len(buf)-n-h.size < h.payloadLen {
			return Message{}, n, nil
		}
		payload := buf[n+h.size : n+h.size+h.payloadLen : n+h.size+h.payloadLen]
		n += h.size + h.payloadLen
		maskBytes(payload, h.key)
		if h.op.IsControl() {
			m, err = control(h.op, payload)
		} else {
			m, err = r.data(&h, payload)
		}
		if err != nil {
			r.err = err
			return Message{}, 0, err
		}
		if m.Op != 0 {
			return m, n, nil
		}
	}
}

// release drops buffers that grew beyond retainBytes, between messages.
func (r *Reader) release() {
	if cap(r.msg) > retainBytes {
		r.msg = nil
	}
	r.inf.release()
}

// parseHeader validates the frame header at the start of b as far as b goes,
// so that a bad header fails on its first bytes. h.size is 0 while the header
// is incomplete. Checks run in wire order, so the first failing check does not
// depend on how the bytes were split.
func (r *Reader) parseHeader(b []byte) (h frameHeader, err *CloseError) {
	if len(b) < 1 {
		return h, nil
	}
	if err = r.checkFirstByte(b[0]); err != nil {
		return h, err
	}
	h.op, h.fin, h.rsv1 = Opcode(b[0]&0x0f), b[0]&bitFin != 0, b[0]&bitRSV1 != 0
	if len(b) < 2 {
		return h, nil
	}
	if b[1]&bitMask == 0 {
		return h, ErrUnmasked
	}
	length7 := int(b[1] & 0x7f)
	if h.op.IsControl() && length7 > MaxControlPayloadBytes {
		return h, ErrControlTooLong
	}
	size := 2
	switch length7 {
	case len16:
		size += 2
	case len64:
		size += 8
	}
	if len(b) < size {
		return h, nil
	}
	if h.payloadLen, err = r.checkLength(h.op, length7, b[2:size]); err != nil {
		return h, err
	}
	if len(b) < size+maskKeySize {
		return h, nil
	}
	h.key = binary.LittleEndian.Uint32(b[size:])
	h.size = size + maskKeySize
	return h, nil
}

// checkFirstByte validates FIN, RSV and the opcode against the message in
// progress.
func (r *Reader) checkFirstByte(b0 byte) *CloseError {
	op, fin, rsv1 := Opcode(b0&0x0f), b0&bitFin != 0, b0&bitRSV1 != 0
	if b0&bitsRSV23 != 0 {
		return ErrReservedBits
	}
	switch op {
	case OpContinuation:
		if r.op == 0 {
			return ErrUnexpectedContinuation
		}
		if rsv1 {
			return ErrReservedBits
		}
	case OpText, OpBinary:
		if r.op != 0 {
			return ErrExpectedContinuation
		}
		if rsv1 && !r.deflate {
			return ErrReservedBits
		}
	case OpClose, OpPing, OpPong:
		if !fin {
			return ErrControlFragmented
		}
		if rsv1 {
			return ErrReservedBits
		}
	default:
		return ErrUnknownOpcode
	}
	return nil
}

// checkLength decodes the payload length (ext holds the extended length
// bytes) and checks it against the limits.
func (r *Reader) checkLength(op Opcode, length7 int, ext []byte) (int, *CloseError) {
	payloadLen := length7
	switch length7 {
	case len16:
		payloadLen = int(binary.BigEndian.Uint16(ext))
		if payloadLen < len16 {
			return 0, ErrNonMinimalLength
		}
	case len64:
		v := binary.BigEndian.Uint64(ext)
		if v>>63 != 0 {
			return 0, ErrLengthOverflow
		}
		if v <= 0xffff {
			return 0, ErrNonMinimalLength
		}
		if v > uint64(r.maxFrameBytes) {
			return 0, r.frameErr
		}
		payloadLen = int(v)
	}
	if op.IsControl() {
		return payloadLen, nil
	}
	if payloadLen > r.maxFrameBytes {
		return 0, r.frameErr
	}
	if payloadLen > r.maxMessageBytes-len(r.msg) {
		return 0, r.messageErr
	}
	return payloadLen, nil
}

// control turns a control frame into a Message.
func control(op Opcode, payload []byte) (Message, *CloseError) {
	m := Message{Op: op, Payload: payload}
	if op != OpClose {
		return m, nil
	}
	switch len(payload) {
	case 0:
		m.CloseCode = CloseNoStatus
		return m, nil
	case 1:
		return Message{}, ErrCloseLength
	}
	m.CloseCode = binary.BigEndian.Uint16(payload)
	if !validCloseCode(m.CloseCode) {
		return Message{}, ErrCloseCode
	}
	m.CloseReason = payload[2:]
	if !utf8.Valid(m.CloseReason) {
		return Message{}, ErrCloseReasonUTF8
	}
	return m, nil
}

// data takes one data frame: a whole message, or a fragment that is
// reassembled in r.msg. It returns a Message with Op 0 for a non-final
// fragment.
func (r *Reader) data(h *frameHeader, payload []byte) (Message, *CloseError) {
	op, compressed := h.op, h.rsv1
	if op == OpContinuation {
		op, compressed = r.op, r.compressed
		r.msg = append(r.msg, payload...)
		payload = r.msg
	} else if !h.fin || compressed {
		// A first fragment, or a whole compressed message: the inflater
		// reads from r.msg, where the deflate tail is appended.
		r.msg = append(r.msg[:0], payload...)
		payload = r.msg
	}
	if !h.fin {
		r.op, r.compressed = op, compressed
		return Message{}, nil
	}
	r.op, r.compressed = 0, false
	if compressed {
		var err *CloseError
		r.msg = append(r.msg, inflateSuffix...)
		if payload, err = r.inf.inflate(r.msg, r.maxMessageBytes, r.messageErr, r.takeover); err != nil {
			return Message{}, err
		}
	}
	r.msg = r.msg[:0]
	if op == OpText && !utf8.Valid(payload) {
		return Message{}, ErrInvalidUTF8
	}
	return Message{Op: op, Payload: payload}, nil
}
