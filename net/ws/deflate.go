package ws

import (
	"bytes"
	"io"

	"github.com/klauspost/compress/flate"
)

// deflateTail is the empty stored block that ends a sync flush. A sender
// removes it from the end of every compressed message; the receiver puts it
// back before inflating (RFC 7692 §7.2.1-2).
var deflateTail = []byte{0x00, 0x00, 0xff, 0xff}

// inflateSuffix is appended to a compressed message before inflating it:
// deflateTail, then a final (BFINAL) empty stored block, so that the
// inflater stops with io.EOF at the message's end instead of waiting for
// another block. A message that already ended with a final block is not
// affected: the inflater stops there.
var inflateSuffix = []byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

// windowBytes is the LZ77 window of deflate (2^15, server_max_window_bits and
// client_max_window_bits at most 15): the dictionary kept for context
// takeover.
const windowBytes = 1 << 15

// inflater inflates compressed client messages. The flate decompressor is
// created on the first compressed message and reset per message; with client
// context takeover the last windowBytes of inflated output are kept and
// handed to the next message as its dictionary, which is what continuing the
// client's stream means.
//
// Dropped alternative: one decompressor reading a stream that is fed message
// after message. klauspost's (and the standard library's) decompressor makes
// a short read sticky (io.ErrUnexpectedEOF), so the stream cannot be paused
// at a message boundary; resetting with the window as dictionary costs one
// copy of at most 32 KiB per message.
type inflater struct {
	dec    io.ReadCloser // flate decompressor, also a flate.Resetter; nil until needed
	src    bytes.Reader  // *bytes.Reader takes klauspost's fast path, no bufio
	out    []byte        // inflated message, reused
	window []byte        // context takeover dictionary, cap windowBytes
}

func (f *inflater) reset() {
	f.out, f.window = f.out[:0], f.window[:0]
}

func (f *inflater) release() {
	if cap(f.out) > retainBytes {
		f.out = nil
	}
}

// inflate inflates compressed (which ends with inflateSuffix) into f.out and
// returns it; the result is valid until the next call. More than
// maxMessageBytes of output gets tooLarge, corrupt input ErrBadCompression.
func (f *inflater) inflate(compressed []byte, maxMessageBytes int, tooLarge *CloseError, takeover bool) ([]byte, *CloseError) {
	f.src.Reset(compressed)
	if f.dec == nil {
		f.dec = flate.NewReader(&f.src)
	}
	var dict []byte
	if takeover {
		dict = f.window
	}
	if err := f.dec.(flate.Resetter).Reset(&f.src, dict); err != nil {
		return nil, ErrBadCompression
	}
	out := f.out[:0]
	for {
		if len(out) == cap(out) {
			if len(out) > maxMessageBytes {
				return nil, tooLarge
			}
			out = growCapped(out, maxMessageBytes+1)
		}
		k, err := f.dec.Read(out[len(out):cap(out)])
		out = out[:len(out)+k]
		if len(out) > maxMessageBytes {
			return nil, tooLarge
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, ErrBadCompression
		}
	}
	f.out = out
	if takeover {
		f.slide(out)
	}
	return out, nil
}

// growCapped returns b with more capacity: double, at least 4 KiB, at most
// capMax.
func growCapped(b []byte, capMax int) []byte {
	c := min(max(2*cap(b), 4<<10), capMax)
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb
}

// slide appends out to the context takeover window, keeping its last
// windowBytes.
func (f *inflater) slide(out []byte) {
	if f.window == nil {
		f.window = make([]byte, 0, windowBytes)
	}
	if len(out) >= windowBytes {
		f.window = append(f.window[:0], out[len(out)-windowBytes:]...)
		return
	}
	if keep := windowBytes - len(out); len(f.window) > keep {
		n := copy(f.window, f.window[len(f.window)-keep:])
		f.window = f.window[:n]
	}
	f.window = append(f.window, out...)
}

// Deflater compresses server messages for permessage-deflate, always without
// context takeover (the server answers server_no_context_takeover), so every
// compressed message or segment stands alone and can be sent on any
// connection that negotiated deflate. One flate compressor is created by
// NewDeflater and reset per message or segment. A Deflater is used by one
// goroutine at a time; give each event loop its own.
type Deflater struct {
	fw      *flate.Writer
	out     appendWriter
	scratch []byte
}

// appendWriter is an io.Writer appending to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// NewDeflater returns a Deflater compressing at level (flate.BestSpeed to
// flate.BestCompression, or flate.HuffmanOnly). It allocates the compressor
// (several hundred KiB at the higher levels): call it at start-up.
func NewDeflater(level int) (*Deflater, error) {
	d := new(Deflater)
	fw, err := flate.NewWriter(&d.out, level)
	if err != nil {
		return nil, err
	}
	d.fw = fw
	return d, nil
}

// CompressSegment appends part compressed as one independent deflate
// segment: a fresh compressor (no reference to anything before part),
// sync-flushed, so the segment ends byte aligned with the empty stored block
// 00 00 ff ff, and no block has BFINAL set. Such segments concatenate into one
// valid deflate stream; see AppendCompressedParts.
func (d *Deflater) CompressSegment(dst, part []byte) []byte {
	d.out.b = dst
	d.fw.Reset(&d.out)
	// appendWriter never fails, so neither do Write and Flush.
	_, _ = d.fw.Write(part)
	_ = d.fw.Flush()
	dst = d.out.b
	d.out.b = nil
	return dst
}

// AppendMessage appends payload as one compressed, unfragmented frame of
// type op (RSV1 set, trailing 00 00 ff ff removed).
//
// REQUIRES: op is OpText or OpBinary; for OpText payload is valid UTF-8.
func (d *Deflater) AppendMessage(dst []byte, op Opcode, payload []byte) []byte {
	d.scratch = d.CompressSegment(d.scratch[:0], payload)
	dst = AppendCompressedParts(dst, op, d.scratch)
	if cap(d.scratch) > retainBytes {
		d.scratch = nil
	}
	return dst
}

// AppendCompressedParts appends one compressed, unfragmented frame of type op
// whose payload is the concatenation of segments, each made by
// CompressSegment, minus the final segment's trailing 00 00 ff ff:
//
//	frame = header(FIN, RSV1, op, len) | seg(prefix) | seg(shared) | seg(suffix) minus 00 00 ff ff
//
// This works because each segment is a run of complete deflate blocks with
// BFINAL clear, ends byte aligned after a sync flush, and refers back only
// into its own output: the concatenation is one valid deflate stream
// inflating to prefix|shared|suffix, and removing the last 4 bytes is what
// RFC 7692 asks of every message. So a part sent to many connections (a
// subscription notification's result) is compressed once with
// CompressSegment and only the small per-connection parts are compressed per
// connection. The segments are not modified and may be shared.
//
// REQUIRES: op is OpText or OpBinary; at least one segment; every segment
// comes from CompressSegment (the last must end with 00 00 ff ff).
func AppendCompressedParts(dst []byte, op Opcode, segments ...[]byte) []byte {
	if len(segments) == 0 || !bytes.HasSuffix(segments[len(segments)-1], deflateTail) || op.IsControl() || op == OpContinuation {
		panic("BUG: ws: AppendCompressedParts needs a data opcode and segments from CompressSegment")
	}
	total := -len(deflateTail)
	for _, s := range segments {
		total += len(s)
	}
	dst = AppendFrameHeader(dst, op, true, true, total)
	last := len(segments) - 1
	for _, s := range segments[:last] {
		dst = append(dst, s...)
	}
	return append(dst, segments[last][:len(segments[last])-len(deflateTail)]...)
}

// storedBlockBytesMax is the most one stored deflate block holds.
const storedBlockBytesMax = 0xffff

// AppendStoredSegment appends part as a segment of stored (uncompressed)
// deflate blocks ending with an empty stored block (00, then 00 00 ff ff): it
// concatenates with CompressSegment's segments exactly like they do, at a
// fraction of their cost. Meant for the small per-connection parts of a
// message (a notification's envelope), where compressing saves nothing:
//
//	stored block = 00 | len (2 B, little endian) | ^len (2 B) | len bytes of part
//
// The first byte is BFINAL 0, BTYPE 00 and five bits of padding: valid only
// where the stream is byte aligned, which every segment boundary is.
func AppendStoredSegment(dst, part []byte) []byte {
	for len(part) > 0 {
		n := min(len(part), storedBlockBytesMax)
		dst = append(dst, 0, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
		dst = append(dst, part[:n]...)
		part = part[n:]
	}
	// An empty stored block closes the segment like a sync flush: its
	// header byte here, its LEN/NLEN the 00 00 ff ff that a message drops
	// from its last segment and the receiver puts back.
	return append(append(dst, 0), deflateTail...)
}

// DeflateTailBytes is the length of the 00 00 ff ff that ends every segment
// and that a message drops from its last one.
const DeflateTailBytes = 4
