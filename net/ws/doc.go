// Package ws is the node's WebSocket codec, server side: the opening
// handshake (RFC 6455 §4), client frame parsing and server frame writing
// (§5), and permessage-deflate (RFC 7692). It does no I/O and owns no
// connection: net/server calls it from the event loop, handing it the bytes
// of each read, and writes what it appends. There is no goroutine per
// connection; in steady state parsing and writing allocate nothing.
//
// Handshake. On a request with "Upgrade: websocket" the server fills an
// UpgradeRequest from the parsed http1.Request and calls CheckUpgrade; a
// *HandshakeError says which status to answer (400, or 426 with
// "Sec-WebSocket-Version: 13" in HandshakeError.Header). Otherwise
// ParseDeflateOffer picks a permessage-deflate offer from
// Sec-WebSocket-Extensions, AppendUpgradeResponse writes the 101 response,
// and a Reader configured with the same DeflateParams takes over the
// connection's bytes, starting with any already buffered after the request.
//
// Frame layout (RFC 6455 §5.2), network byte order:
//
//	 0               1               2               3
//	 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//	+-+-+-+-+-------+-+-------------+-------------------------------+
//	|F|R|R|R| opcode|M| length7     | extended length: 16 bits if   |
//	|I|S|S|S|  (4)  |A|   (7)       | length7 == 126, 64 bits if    |
//	|N|V|V|V|       |S|             | length7 == 127 (top bit 0)    |
//	| |1|2|3|       |K|             |                               |
//	+-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
//	:          ... rest of a 64-bit extended length ...             :
//	+ - - - - - - - - - - - - - - - +-------------------------------+
//	|                               | masking key (4 bytes), present |
//	+-------------------------------+ iff MASK; client frames only   |
//	|                               | payload, XORed with the key    :
//	+-------------------------------+-------------------------------+
//
//	header = 2 + (0 | 2 | 8) + (0 | 4) bytes; length is minimally encoded
//	opcode: 0 continuation, 1 text, 2 binary, 8 close, 9 ping, 10 pong
//	close payload = [ status (2 bytes, big endian) [ reason, UTF-8, <= 123 bytes ] ]
//
// A message is one frame with FIN set, or a first frame (text or binary, FIN
// clear) followed by continuation frames, the last with FIN set. Control
// frames (close, ping, pong) have FIN set, at most 125 bytes of payload, and
// may arrive between the frames of a fragmented message.
//
// Reader. Reader.Next takes the connection's buffered bytes and consumes
// whole frames only: a partial frame is left to the caller, which keeps the
// tail and calls again when more bytes arrive, so the outcome does not depend
// on how the stream was split into reads (TestReaderSplit). Payloads are
// unmasked in place in the caller's buffer; an unfragmented uncompressed
// message is returned as a slice of that buffer without a copy. Fragments are
// copied into a reassembly buffer; compressed messages are inflated into an
// output buffer. Both are reused, and released between messages when they
// grew beyond 64 KiB. Message.Payload is valid until the next call to Next.
//
// Validation (the close code to answer is CloseError.Code):
//   - 1002: unmasked client frame; RSV2/RSV3 set; RSV1 set without deflate,
//     on a control or continuation frame; unknown opcode; control frame
//     fragmented or over 125 bytes; continuation without a message; a new data
//     frame inside a fragmented message; non-minimal length encoding; 64-bit
//     length with the top bit set; close payload of 1 byte or with a status
//     code a peer may not send (§7.4: 1000-1003, 1007-1014, 3000-4999 are
//     accepted); corrupt compressed data.
//   - 1007: text message (whole, after reassembly and inflation) or close
//     reason not valid UTF-8.
//   - 1009: frame or message over the limits, including the inflated size.
//
// Header checks run as soon as the header bytes are in, before the payload
// arrives, so an announced 2^62-byte frame fails at once. After an error the
// Reader returns the same error on every call.
//
// Limits (named constants, each covered by a test; Config may lower the
// first two):
//   - MaxFrameBytes (1 MiB): one data frame's payload as sent. Close 1009
//     "frame too large (max 1048576 bytes)".
//   - MaxMessageBytes (1 MiB): a message's payload as sent, summed over its
//     fragments, and its inflated size. Close 1009 "message too large (max
//     1048576 bytes)".
//   - MaxControlPayloadBytes (125): a control frame's payload. Close 1002.
//
// The 1009 reasons name the Reader's own limit, also a lowered one.
//
// Memory per connection: the Reader struct; the reassembly and inflate
// buffers while they are used (up to MaxMessageBytes each); with deflate, a
// flate decompressor (about 40 KiB plus a 32 KiB window) created on the first
// compressed message, and with client context takeover a 32 KiB dictionary.
//
// permessage-deflate. The server always answers server_no_context_takeover:
// every server message is compressed on its own, so one compressed message
// can be written to many connections. The client's context takeover is
// accepted unless it asked for client_no_context_takeover: the Reader then
// inflates each message with the previous 32 KiB of inflated output as the
// dictionary. server_max_window_bits below 15 is declined (the compressor's
// window is fixed); client_max_window_bits is accepted with any value.
//
// Writing. Server frames are never masked. AppendFrame, AppendClose,
// AppendPing and AppendPong append complete frames; AppendFrameHeader writes
// a header for a payload the caller appends itself. Deflater.AppendMessage
// compresses one message; Deflater.CompressSegment and AppendCompressedParts
// build a compressed message from separately compressed parts, so the part
// shared by many connections is compressed once:
//
//	seg(x) = deflate blocks of x, BFINAL 0 ... | 00 00 ff ff   (sync flush, byte aligned)
//	frame  = header(FIN|RSV1, op, len) | seg(prefix) | seg(shared) | seg(suffix) without its 00 00 ff ff
//
// Writers never fragment: a message is one frame. Writers panic ("BUG: ...")
// on arguments that break their REQUIRES, never on network input.
//
// Not done here: subprotocol negotiation (Sec-WebSocket-Protocol), Origin
// checks (the caller's policy: net/server, --ws.origins), fragmenting server messages, incremental
// UTF-8 validation of fragments (a text message is checked once it is
// complete, so an invalid first fragment fails only at the last one), and
// honouring server_max_window_bits below 15.
package ws
