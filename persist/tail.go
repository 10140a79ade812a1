package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Tailing the log for followers (docs/scaling.md). A leader hands its
// durable frames, as written (header, checksum and payload: inputs and
// side records alike), to a stream; a follower decodes them (EachFrame) and
// applies them. A position in the log is a Pos: the seq of the next input
// and how many side records "at" that seq (sides.go: written after the
// input before it) are already behind. Only what an fdatasync covered is
// read: a frame the leader could still lose in a crash never leaves it.

// Pos is a place between two frames of the log.
type Pos struct {
	// Seq is the seq of the next input frame.
	Seq uint64
	// Sides counts the side records at Seq already behind the place.
	Sides uint32
}

// Before reports whether p comes before q in the log.
func (p Pos) Before(q Pos) bool { return p.Seq < q.Seq || (p.Seq == q.Seq && p.Sides < q.Sides) }

// String is "seq.sides", as ParsePos reads it.
func (p Pos) String() string {
	return strconv.FormatUint(p.Seq, 10) + "." + strconv.FormatUint(uint64(p.Sides), 10)
}

// ParsePos reads a place written by String.
func ParsePos(s string) (Pos, error) {
	a, b, ok := strings.Cut(s, ".")
	seq, err1 := strconv.ParseUint(a, 10, 64)
	sides, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil || seq == 0 {
		return Pos{}, fmt.Errorf("%q is no place in a log (seq.sides)", s)
	}
	return Pos{Seq: seq, Sides: uint32(sides)}, nil
}

// durableMark is where the durable frames end: a segment (its first seq)
// and the offset in it.
type durableMark struct {
	seg uint64
	off int64
}

// markDurable records that the newest segment's frames up to its current
// size are durable. REQUIRES: the appender (sync).
func (s *segments) markDurable() {
	if s.f == nil {
		return
	}
	s.mu.Lock()
	seg := s.segs[len(s.segs)-1]
	s.mu.Unlock()
	s.durable.Store(&durableMark{seg: seg, off: s.size})
	if s.written == nil {
		p, err := s.scanEnd()
		if err != nil {
			return // found at a later sync
		}
		s.written = &p
	}
	p := *s.written
	s.durablePos.Store(&p)
}

// setEnd sets the written and the durable place (at open: all of it is).
func (s *segments) setEnd(p Pos) {
	w, d := p, p
	s.written = &w
	s.durablePos.Store(&d)
}

// scanEnd reads the place after the last durable frame from the files.
func (s *segments) scanEnd() (Pos, error) {
	t, err := s.tail(Pos{Seq: max(s.Next(), 1)})
	if err != nil {
		return Pos{}, err
	}
	defer t.Close()
	return t.toEnd()
}

// advance returns the place after frames, which follow p.
func advance(p Pos, frames []byte) Pos {
	for len(frames) >= frameHeaderLen {
		need := frameNeed(frames)
		if need == 0 || need > len(frames) {
			break
		}
		if isSide(frames[frameHeaderLen:need]) {
			p.Sides++
		} else {
			p = Pos{Seq: p.Seq + 1}
		}
		frames = frames[need:]
	}
	return p
}

// DurablePos returns the place after the newest durable frame.
func (l *Log) DurablePos() (Pos, error) {
	if p := l.segs.durablePos.Load(); p != nil {
		return *p, nil
	}
	return l.segs.scanEnd()
}

// Tail reads the log's durable frames from a place on. It is not safe for
// concurrent use; it may run beside the appender.
type Tail struct {
	s   *segments
	pos Pos
	seg uint64 // the segment f reads
	f   *os.File
	off int64  // where the next frame starts in f
	buf []byte // bytes read ahead from f; buf[at] is at off
	at  int
}

// tailReadBytes is how much a Tail reads from a file at once.
const tailReadBytes = 1 << 20

// ErrBeyondLog means a place after the log's durable end was asked for:
// the asker holds inputs this log lacks.
var ErrBeyondLog = errors.New("the place asked for is after the log's durable end")

// Tail returns a reader of the frames from place from on. Reading starts
// at the segment holding from.Seq-1 (a side record at from.Seq may end it)
// and skips to from: a cost of one segment's scan, once.
func (l *Log) Tail(from Pos) (*Tail, error) { return l.segs.tail(from) }

func (s *segments) tail(from Pos) (*Tail, error) {
	s.mu.Lock()
	segs := slices.Clone(s.segs)
	s.mu.Unlock()
	t := &Tail{s: s, pos: Pos{Seq: 1}}
	if len(segs) == 0 {
		if from != (Pos{Seq: max(s.Next(), 1)}) && from != (Pos{Seq: 1}) {
			return nil, fmt.Errorf("%w: the log is empty, %d inputs asked for", ErrBeyondLog, from.Seq-1)
		}
		t.pos = Pos{Seq: s.Next()}
		return t, nil
	}
	i, found := slices.BinarySearch(segs, max(from.Seq, 2)-1)
	if !found {
		i--
	}
	if i < 0 {
		return nil, fmt.Errorf("the intent log starts at seq %d, after %d (retention pruned it)", segs[0], from.Seq)
	}
	if err := t.open(segs[i]); err != nil {
		return nil, err
	}
	for t.pos != from {
		if from.Before(t.pos) {
			t.Close()
			return nil, fmt.Errorf("%w: no place %d.%d in the log", ErrCorrupt, from.Seq, from.Sides)
		}
		_, ok, err := t.frame()
		if err != nil {
			t.Close()
			return nil, err
		}
		if !ok {
			t.Close()
			return nil, fmt.Errorf("%w: %d.%d asked for, the log ends at %d.%d", ErrBeyondLog, from.Seq, from.Sides, t.pos.Seq, t.pos.Sides)
		}
	}
	return t, nil
}

// open starts reading the segment whose first seq is first.
func (t *Tail) open(first uint64) error {
	if t.f != nil {
		t.f.Close()
	}
	f, err := os.Open(t.s.path(first))
	if err != nil {
		return fmt.Errorf("cannot open the intent log: %w", err)
	}
	var hdr [segHeaderLen]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil || string(hdr[:len(segMagic)]) != segMagic ||
		binary.BigEndian.Uint64(hdr[len(segMagic):]) != first {
		f.Close()
		return fmt.Errorf("%w: segment %d is not the intent log segment its name says", ErrCorrupt, first)
	}
	if t.pos.Seq < first {
		t.pos = Pos{Seq: first}
	}
	t.f, t.seg, t.off, t.buf, t.at = f, first, int64(segHeaderLen), t.buf[:0], 0
	return nil
}

// Close releases the file the tail reads.
func (t *Tail) Close() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}

// Pos returns the place after the last frame read.
func (t *Tail) Pos() Pos { return t.pos }

// Read appends the durable frames after the tail's place to dst, whole, up
// to about max bytes (one frame at least), and returns dst, how many of them
// are inputs and the place after them. Nothing new appends nothing.
func (t *Tail) Read(dst []byte, max int) ([]byte, int, error) {
	inputs := 0
	for start := len(dst); len(dst)-start < max; {
		frame, ok, err := t.frame()
		if err != nil || !ok {
			return dst, inputs, err
		}
		if !isSide(frame[frameHeaderLen:]) {
			inputs++
		}
		dst = append(dst, frame...)
	}
	return dst, inputs, nil
}

// toEnd reads to the durable end and returns the place there.
func (t *Tail) toEnd() (Pos, error) {
	for {
		_, ok, err := t.frame()
		if err != nil {
			return Pos{}, err
		}
		if !ok {
			return t.pos, nil
		}
	}
}

// frame returns the next durable frame (header included, valid until the
// next call) and moves past it; ok is false at the durable end.
func (t *Tail) frame() ([]byte, bool, error) {
	if t.f == nil {
		if !t.next() {
			return nil, false, nil
		}
	}
	for {
		mark := t.s.durable.Load()
		limit := int64(-1) // this segment is complete: read to its last frame
		if mark == nil || mark.seg < t.seg {
			return nil, false, nil
		} else if mark.seg == t.seg {
			limit = mark.off
			if t.off >= limit {
				return nil, false, nil
			}
		}
		f, err := t.take(limit)
		if err != nil {
			return nil, false, err
		}
		if f != nil {
			t.off += int64(len(f))
			if isSide(f[frameHeaderLen:]) {
				t.pos.Sides++
			} else {
				t.pos = Pos{Seq: t.pos.Seq + 1}
			}
			return f, true, nil
		}
		// The end of a complete segment: on to the next one.
		if !t.next() {
			return nil, false, nil
		}
	}
}

// next opens the segment after the one read (or the first); false when
// there is none yet.
func (t *Tail) next() bool {
	t.s.mu.Lock()
	i, _ := slices.BinarySearch(t.s.segs, t.seg+1)
	var first uint64
	if i < len(t.s.segs) {
		first = t.s.segs[i]
	}
	t.s.mu.Unlock()
	if first == 0 || t.open(first) != nil {
		return false
	}
	return true
}

// take returns the frame at t.off (nil at a complete segment's end),
// reading ahead up to limit (-1: the file's end).
func (t *Tail) take(limit int64) ([]byte, error) {
	for {
		b := t.buf[t.at:]
		need := frameNeed(b)
		switch {
		case len(b) >= frameHeaderLen && need == 0:
			return t.end(limit) // zeros (zeroAhead) or a torn tail
		case need > 0 && need <= len(b):
			f := b[:need]
			if crc32.Checksum(f[frameHeaderLen:], crcTable) != binary.BigEndian.Uint32(f[4:]) {
				return t.end(limit)
			}
			t.at += need
			return f, nil
		}
		// Keep the partial frame, read after it.
		rest := copy(t.buf, b)
		t.buf, t.at = t.buf[:rest], 0
		want := max(tailReadBytes, need-rest)
		if limit >= 0 {
			want = int(min(int64(want), limit-t.off-int64(rest)))
			if want <= 0 {
				return t.end(limit)
			}
		}
		t.buf = slices.Grow(t.buf, want)
		n, err := t.f.ReadAt(t.buf[rest:rest+want], t.off+int64(rest))
		t.buf = t.buf[:rest+n]
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("cannot read the intent log: %w", err)
		}
		if n == 0 {
			return t.end(limit)
		}
	}
}

// end is the end of the segment's frames: of a complete segment, or, before
// its durable end (limit ≥ 0), damage.
func (t *Tail) end(limit int64) ([]byte, error) {
	if limit >= 0 {
		return nil, fmt.Errorf("%w: segment %d ends before its durable end", ErrCorrupt, t.seg)
	}
	return nil, nil
}

// frameNeed is the length of the frame b starts with, header included; 0
// when b is shorter than a header or the length is no frame's.
func frameNeed(b []byte) int {
	if len(b) < frameHeaderLen {
		return 0
	}
	size := binary.BigEndian.Uint32(b)
	if size == 0 || size > frameMax {
		return 0
	}
	return frameHeaderLen + int(size)
}

// EachFrame calls fn with the payload of each frame of frames (Tail.Read's
// bytes) in order; side reports a side record (DecodeSide). A frame that does not
// check is ErrCorrupt.
func EachFrame(frames []byte, fn func(payload []byte, side bool) error) error {
	for len(frames) > 0 {
		need := frameNeed(frames)
		if need == 0 || need > len(frames) {
			return fmt.Errorf("%w: a replicated frame is cut", ErrCorrupt)
		}
		p := frames[frameHeaderLen:need]
		if crc32.Checksum(p, crcTable) != binary.BigEndian.Uint32(frames[4:]) {
			return fmt.Errorf("%w: a replicated frame does not check", ErrCorrupt)
		}
		if err := fn(p, isSide(p)); err != nil {
			return err
		}
		frames = frames[need:]
	}
	return nil
}
