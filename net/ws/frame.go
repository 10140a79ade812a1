package ws

import (
	"encoding/binary"
	"strconv"
)

// Opcode is a frame's opcode (RFC 6455 §5.2).
type Opcode uint8

// Opcodes. OpContinuation never appears in a Message: Message.Op == 0 means
// "no message".
const (
	OpContinuation Opcode = 0x0
	OpText         Opcode = 0x1
	OpBinary       Opcode = 0x2
	OpClose        Opcode = 0x8
	OpPing         Opcode = 0x9
	OpPong         Opcode = 0xA
)

// IsControl reports whether op is a control opcode (close, ping, pong or a
// reserved control opcode).
func (op Opcode) IsControl() bool { return op&0x8 != 0 }

// String returns the opcode's name.
func (op Opcode) String() string {
	switch op {
	case OpContinuation:
		return "continuation"
	case OpText:
		return "text"
	case OpBinary:
		return "binary"
	case OpClose:
		return "close"
	case OpPing:
		return "ping"
	case OpPong:
		return "pong"
	}
	return "opcode(" + strconv.Itoa(int(op)) + ")"
}

// Frame header bits.
const (
	bitFin      = 0x80
	bitRSV1     = 0x40
	bitsRSV23   = 0x30
	bitMask     = 0x80
	len16       = 126 // 7-bit length value announcing a 16-bit length
	len64       = 127 // 7-bit length value announcing a 64-bit length
	maskKeySize = 4
	// maxHeaderBytes is the longest frame header: 2 + 8 length + 4 mask key.
	maxHeaderBytes = 2 + 8 + maskKeySize
)

// AppendFrameHeader appends an unmasked (server) frame header announcing
// payloadLen payload bytes, using the shortest length encoding.
//
// REQUIRES: op is a defined opcode; payloadLen >= 0; a control opcode has
// fin set, rsv1 clear and payloadLen <= MaxControlPayloadBytes.
func AppendFrameHeader(dst []byte, op Opcode, fin, rsv1 bool, payloadLen int) []byte {
	if op.IsControl() && (!fin || rsv1 || payloadLen > MaxControlPayloadBytes) {
		panic("BUG: ws: invalid control frame header")
	}
	if payloadLen < 0 || op > OpPong || (op > OpBinary && op < OpClose) {
		panic("BUG: ws: invalid frame header: op " + op.String() + " length " + strconv.Itoa(payloadLen))
	}
	b0 := byte(op)
	if fin {
		b0 |= bitFin
	}
	if rsv1 {
		b0 |= bitRSV1
	}
	switch {
	case payloadLen < len16:
		return append(dst, b0, byte(payloadLen))
	case payloadLen <= 0xffff:
		return append(dst, b0, len16, byte(payloadLen>>8), byte(payloadLen))
	}
	dst = append(dst, b0, len64)
	return binary.BigEndian.AppendUint64(dst, uint64(payloadLen))
}

// AppendFrame appends one unfragmented, uncompressed, unmasked frame.
//
// REQUIRES: as AppendFrameHeader with fin set and rsv1 clear.
func AppendFrame(dst []byte, op Opcode, payload []byte) []byte {
	dst = AppendFrameHeader(dst, op, true, false, len(payload))
	return append(dst, payload...)
}

// AppendClose appends a close frame carrying code and reason. Code 0 sends a
// close frame without payload (the peer sees 1005, no status).
//
// REQUIRES: code is 0 or a code a peer may receive (RFC 6455 §7.4; not 1005,
// 1006 or 1015); len(reason) <= 123; reason is valid UTF-8; reason is empty
// when code is 0.
func AppendClose(dst []byte, code uint16, reason string) []byte {
	if code == 0 {
		if reason != "" {
			panic("BUG: ws: close reason without a code")
		}
		return AppendFrameHeader(dst, OpClose, true, false, 0)
	}
	if !validCloseCode(code) || len(reason) > closeReasonBytesMax {
		panic("BUG: ws: invalid close frame: code " + strconv.Itoa(int(code)) + " reason length " + strconv.Itoa(len(reason)))
	}
	dst = AppendFrameHeader(dst, OpClose, true, false, 2+len(reason))
	dst = binary.BigEndian.AppendUint16(dst, code)
	return append(dst, reason...)
}

// AppendPing appends a ping frame.
//
// REQUIRES: len(payload) <= MaxControlPayloadBytes.
func AppendPing(dst, payload []byte) []byte { return AppendFrame(dst, OpPing, payload) }

// AppendPong appends a pong frame; answer a ping with its payload.
//
// REQUIRES: len(payload) <= MaxControlPayloadBytes.
func AppendPong(dst, payload []byte) []byte { return AppendFrame(dst, OpPong, payload) }

// maskBytes XORs b with the 4-byte masking key, which starts at b[0]
// (RFC 6455 §5.3). key holds the key bytes in wire order read as a little
// endian uint32. Masking and unmasking are the same operation.
func maskBytes(b []byte, key uint32) {
	k := uint64(key) | uint64(key)<<32
	for len(b) >= 32 {
		binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^k)
		binary.LittleEndian.PutUint64(b[8:], binary.LittleEndian.Uint64(b[8:])^k)
		binary.LittleEndian.PutUint64(b[16:], binary.LittleEndian.Uint64(b[16:])^k)
		binary.LittleEndian.PutUint64(b[24:], binary.LittleEndian.Uint64(b[24:])^k)
		b = b[32:]
	}
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^k)
		b = b[8:]
	}
	for i := range b {
		b[i] ^= byte(key >> (8 * (i & 3)))
	}
}
