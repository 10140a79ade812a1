package persist

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// The intent log's inputs live in append-only segment files beside the
// Badger store, not in it: a group of inputs costs one write and one
// fdatasync, where a Badger transaction costs a skiplist insert, a WAL
// entry and later a flush and compactions per key (issue 25). Everything
// else (the history, the batches, the ticks, the snapshots) stays in
// Badger, written after the inputs are durable and rebuilt from them after
// a crash (Derived).
//
//	dir/log/<seq of the first record, 16 hex digits>.seg
//	segment: magic "LVSEGv1\n" 8 | first seq 8 | frames | zeros (zeroAhead)
//	frame:   length 4 | crc32c(payload) 4 | payload (AppendRecord's encoding,
//	         or a side record: its first byte has the high bit set, sides.go)
//
// Seqs are implicit: a segment's input records are its first seq, first+1,
// …; side records take no seq (a side record before the input with seq s
// is "at" s). The next segment starts where the previous one ends. A segment rolls once
// it holds segmentBytesMax bytes, and each run of the node starts its own.
// Only the newest segment is appended to, so only it can end in a torn frame (a write the crash cut, never
// acknowledged: an acknowledgement follows the fdatasync that covers every
// earlier byte); opening for writing cuts it there.

const (
	segMagic       = "LVSEGv1\n"
	segHeaderLen   = len(segMagic) + 8
	frameHeaderLen = 8
	segSuffix      = ".seg"
	// segmentBytesMax is where a segment rolls: retention deletes whole
	// segments, so it is also the granularity of PruneLogBefore.
	segmentBytesMax = 64 << 20
	// frameMax bounds one record: a transaction with MaxDataBytes of
	// calldata and its access list fit inside; a longer length is
	// corruption.
	frameMax = 2 * MaxDataBytes
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// segments is the intent log's inputs on disk. Appends come from one
// goroutine (the node's syncer); reads (replay, backup) may run beside
// them on the records already appended. mu guards the segment list.
type segments struct {
	dir      string
	readOnly bool
	mu       sync.Mutex
	segs     []uint64 // first seq of each segment, ascending
	f        *os.File // the segment this run appends to (nil until its first append)
	size     int64    // bytes of frames in f (with its header)
	zeroed   int64    // f's length: zeros past size (zeroAhead)
	rollAt   int64    // segmentBytesMax; tests lower it
	next     atomic.Uint64
	// durable is where the synced frames end (tail.go); nil when the log
	// has no segment.
	durable atomic.Pointer[durableMark]
	// written is the place after the last frame written (the appender's;
	// nil when unknown: after a cut, found again at the next sync), and
	// durablePos the place after the synced frames (tail.go).
	written    *Pos
	durablePos atomic.Pointer[Pos]
}

func segName(first uint64) string { return fmt.Sprintf("%016x%s", first, segSuffix) }

func (s *segments) path(first uint64) string { return filepath.Join(s.dir, segName(first)) }

// openSegments opens the segment log in dir, creating the folder unless
// readOnly. It finds the log's end by reading the newest segment; a torn
// frame at its end is cut off (left alone when readOnly: reads stop there).
func openSegments(dir string, readOnly bool) (*segments, error) {
	s := &segments{dir: dir, readOnly: readOnly, rollAt: segmentBytesMax}
	s.next.Store(1)
	if !readOnly {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create the intent log folder: %w", err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !(readOnly && errors.Is(err, os.ErrNotExist)) {
		return nil, fmt.Errorf("cannot read the intent log folder: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, segSuffix) {
			continue
		}
		first, err := strconv.ParseUint(strings.TrimSuffix(name, segSuffix), 16, 64)
		if err != nil || first == 0 || segName(first) != name {
			return nil, fmt.Errorf("%w: unexpected file %q in the intent log folder", ErrCorrupt, name)
		}
		s.segs = append(s.segs, first)
	}
	slices.Sort(s.segs)
	if n := len(s.segs); n > 0 {
		// A segment whose header a crash cut holds no record: gone.
		if fi, err := os.Stat(s.path(s.segs[n-1])); err == nil && fi.Size() < int64(segHeaderLen) {
			if !readOnly {
				if err := os.Remove(s.path(s.segs[n-1])); err != nil {
					return nil, fmt.Errorf("cannot remove a torn intent log segment: %w", err)
				}
			}
			s.next.Store(s.segs[n-1])
			s.segs = s.segs[:n-1]
		}
	}
	if len(s.segs) == 0 {
		s.setEnd(Pos{Seq: s.next.Load()})
		return s, nil
	}
	last := s.segs[len(s.segs)-1]
	n, sides, end, err := scanSegment(s.path(last), last)
	if err != nil {
		return nil, err
	}
	s.next.Store(last + n)
	s.durable.Store(&durableMark{seg: last, off: end})
	p := Pos{Seq: last + n, Sides: sides}
	if n == 0 {
		// Side records only: more at the same seq may end the segment
		// before it, which the tail reads.
		if p, err = s.scanEnd(); err != nil {
			return nil, err
		}
	}
	s.setEnd(p)
	if readOnly {
		return s, nil
	}
	if fi, err := os.Stat(s.path(last)); err == nil && fi.Size() != end {
		// A torn tail: never acknowledged (see the model above).
		if err := cutFile(s.path(last), end); err != nil {
			return nil, fmt.Errorf("cannot cut the intent log's torn tail: %w", err)
		}
	}
	// The first append starts a segment of its own: a run's inputs never
	// share a file with a crashed one's, and retention can drop what came
	// before a restart.
	return s, nil
}

// cutFile truncates the file at path to size bytes, synced.
func cutFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return err
	}
	return f.Sync()
}

// scanSegment counts the whole input frames of the segment at path and
// the side records after the last of them, and returns where its last
// whole frame ends.
func scanSegment(path string, first uint64) (n uint64, sides uint32, end int64, err error) {
	c, err := openSegmentAt(path, first)
	if err != nil {
		return 0, 0, 0, err
	}
	defer c.f.Close()
	for {
		p, err := c.frame()
		if err != nil {
			if errors.Is(err, errTorn) {
				return n, sides, c.off, nil
			}
			return 0, 0, 0, err
		}
		if isSide(p) {
			sides++
		} else {
			n, sides = n+1, 0
		}
	}
}

// errTorn ends a segment: EOF, a short frame or one whose checksum fails.
var errTorn = errors.New("torn frame")

// segReader reads one segment's frames in order.
type segReader struct {
	f   *os.File
	r   *bufio.Reader
	off int64 // where the next frame starts
	buf []byte
}

func openSegmentAt(path string, first uint64) (*segReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open the intent log: %w", err)
	}
	c := &segReader{f: f, r: bufio.NewReaderSize(f, 1<<20)}
	var hdr [segHeaderLen]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil || string(hdr[:len(segMagic)]) != segMagic ||
		binary.BigEndian.Uint64(hdr[len(segMagic):]) != first {
		f.Close()
		return nil, fmt.Errorf("%w: %s is not the intent log segment its name says", ErrCorrupt, filepath.Base(path))
	}
	c.off = int64(segHeaderLen)
	return c, nil
}

// frame returns the next frame's payload (valid until the next call), or
// errTorn at the segment's end or at a frame that is not whole.
func (c *segReader) frame() ([]byte, error) {
	var hdr [frameHeaderLen]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return nil, errTorn
	}
	size := binary.BigEndian.Uint32(hdr[:4])
	if size == 0 || size > frameMax {
		return nil, errTorn
	}
	if cap(c.buf) < int(size) {
		c.buf = make([]byte, size)
	}
	c.buf = c.buf[:size]
	if _, err := io.ReadFull(c.r, c.buf); err != nil {
		return nil, errTorn
	}
	if crc32.Checksum(c.buf, crcTable) != binary.BigEndian.Uint32(hdr[4:]) {
		return nil, errTorn
	}
	c.off += int64(frameHeaderLen) + int64(size)
	return c.buf, nil
}

// appendFrame appends payload as one frame.
func appendFrame(dst, payload []byte) []byte {
	dst, at := beginFrame(dst)
	return endFrame(append(dst, payload...), at)
}

// beginFrame reserves a frame's header at the end of dst and returns where
// it starts; the payload is appended after it, and endFrame fills it in.
// A payload is thus encoded straight into its frame.
func beginFrame(dst []byte) ([]byte, int) {
	return append(dst, make([]byte, frameHeaderLen)...), len(dst)
}

// endFrame fills in the header of the frame begun at at: the length and
// checksum of everything appended after it.
func endFrame(dst []byte, at int) []byte {
	payload := dst[at+frameHeaderLen:]
	binary.BigEndian.PutUint32(dst[at:], uint32(len(payload)))
	binary.BigEndian.PutUint32(dst[at+4:], crc32.Checksum(payload, crcTable))
	return dst
}

// Next returns the seq the next appended record gets.
func (s *segments) Next() uint64 { return s.next.Load() }

// first returns the seq of the oldest stored record, 0 when none is.
func (s *segments) first() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.segs) == 0 || s.segs[0] == s.next.Load() {
		return 0
	}
	return s.segs[0]
}

// write appends frames (n input records and any side records, encoded by
// appendFrame) to the newest segment, rolling first when it is full. It
// does not sync: sync does.
func (s *segments) write(frames []byte, n int) error {
	if s.readOnly {
		return errReadOnly
	}
	if s.f == nil || (s.size >= s.rollAt && n > 0) {
		if err := s.roll(); err != nil {
			return err
		}
	}
	if end := s.size + int64(len(frames)); end > s.zeroed {
		if err := s.zeroTo(end + zeroAhead); err != nil {
			return err
		}
	}
	if _, err := s.f.WriteAt(frames, s.size); err != nil {
		return fmt.Errorf("cannot write the intent log: %w", err)
	}
	s.size += int64(len(frames))
	s.next.Add(uint64(n))
	if s.written != nil {
		*s.written = advance(*s.written, frames)
	}
	return nil
}

// zeroAhead is how far past the frames a segment's file is written with
// zeros: an fdatasync that must also commit a new file length costs ext4 a
// journal commit, measured on this VM at 130–160 µs of CPU and 0.57 ms per
// 16 KiB append against 81–85 µs and 0.29 ms for the same write inside
// zeros written before. A zero length ends a segment's frames, so readers
// stop where the frames do.
//
// The zeros go in page-sized writes: the kernel sizes a file's page-cache
// folios by the write that creates them, and a commit that dirties part of
// a large folio writes all of it back (trim.go).
const zeroAhead = 256 << 10

var zeros = make([]byte, 4096)

// zeroTo writes zeros from f's length up to end.
func (s *segments) zeroTo(end int64) error {
	for s.zeroed < end {
		n := min(end-s.zeroed, int64(len(zeros)))
		if _, err := s.f.WriteAt(zeros[:n], s.zeroed); err != nil {
			return fmt.Errorf("cannot write the intent log: %w", err)
		}
		s.zeroed += n
	}
	return nil
}

// sync makes everything written durable (fdatasync: the file's size is
// data, its times are not needed).
func (s *segments) sync() error {
	if s.f == nil {
		return nil
	}
	rc, err := s.f.SyscallConn()
	if err == nil {
		cerr := rc.Control(func(fd uintptr) {
			for {
				if err = syscall.Fdatasync(int(fd)); err != syscall.EINTR {
					return
				}
			}
		})
		if err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("cannot sync the intent log: %w", err)
	}
	s.markDurable()
	return nil
}

// roll closes the newest segment (synced) and starts one at the next seq;
// the folder is synced so that the new file's name survives a crash.
func (s *segments) roll() error {
	if s.f != nil {
		if err := s.sync(); err != nil {
			return err
		}
		s.f.Close()
		s.f = nil
	}
	first := s.next.Load()
	s.mu.Lock()
	last := uint64(0)
	if n := len(s.segs); n > 0 {
		last = s.segs[n-1]
	}
	s.mu.Unlock()
	if last == first {
		// The newest segment holds side records only (an earlier run
		// stopped before its next input): appended to, never replaced.
		return s.reopen(first)
	}
	f, err := os.OpenFile(s.path(first), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("cannot start an intent log segment: %w", err)
	}
	hdr := binary.BigEndian.AppendUint64([]byte(segMagic), first)
	if _, err := f.Write(hdr); err != nil {
		f.Close()
		return fmt.Errorf("cannot start an intent log segment: %w", err)
	}
	if err := syncDir(s.dir); err != nil {
		f.Close()
		return err
	}
	s.mu.Lock()
	if n := len(s.segs); n == 0 || s.segs[n-1] != first {
		s.segs = append(s.segs, first)
	}
	s.mu.Unlock()
	s.f, s.size, s.zeroed = f, int64(len(hdr)), int64(len(hdr))
	return nil
}

// reopen makes the segment starting at first, which holds no input, the
// one appended to.
func (s *segments) reopen(first uint64) error {
	_, _, end, err := scanSegment(s.path(first), first)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(s.path(first), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("cannot reopen an intent log segment: %w", err)
	}
	zeroed, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return fmt.Errorf("cannot reopen an intent log segment: %w", err)
	}
	s.f, s.size, s.zeroed = f, end, zeroed
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("cannot sync the intent log folder: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("cannot sync the intent log folder: %w", err)
	}
	return nil
}

// each calls fn for every record from seq from on, to the end known when
// it starts, in order; the payload is valid only during the call.
func (s *segments) each(from uint64, fn func(seq uint64, payload []byte) error) error {
	c := s.cursor(from)
	defer c.close()
	for {
		seq, p, err := c.next()
		if err == io.EOF {
			return nil
		}
		if err == nil {
			err = fn(seq, p)
		}
		if err != nil {
			return err
		}
	}
}

// segCursor reads the records from a seq on, one at a time, up to the end
// the log had when it was made.
type segCursor struct {
	s    *segments
	segs []uint64
	i    int    // index in segs of the segment r reads
	seq  uint64 // the seq the next record has
	from uint64
	end  uint64
	r    *segReader
	err  error
}

func (s *segments) cursor(from uint64) *segCursor {
	c := &segCursor{s: s, from: from, end: s.next.Load()}
	s.mu.Lock()
	c.segs = slices.Clone(s.segs)
	s.mu.Unlock()
	if from >= c.end {
		c.seq = c.end // nothing to read
		return c
	}
	i, found := slices.BinarySearch(c.segs, from)
	if !found {
		i-- // the segment holding from
	}
	if i < 0 {
		first := c.end
		if len(c.segs) > 0 {
			first = c.segs[0]
		}
		c.err = fmt.Errorf("the intent log starts at seq %d, after %d (retention pruned it)", first, from)
		return c
	}
	c.i, c.seq = i-1, c.segs[i] // next opens segs[i]
	return c
}

// next returns the next record's seq and payload (valid until the next
// call), or io.EOF after the last.
func (c *segCursor) next() (uint64, []byte, error) {
	for c.err == nil {
		if c.seq >= c.end {
			return 0, nil, io.EOF
		}
		if c.r == nil {
			if c.i++; c.i == len(c.segs) || c.segs[c.i] != c.seq {
				c.err = fmt.Errorf("%w: the intent log ends at seq %d, want %d", ErrCorrupt, c.seq-1, c.end-1)
				break
			}
			if c.r, c.err = openSegmentAt(c.s.path(c.segs[c.i]), c.seq); c.err != nil {
				break
			}
		}
		p, err := c.r.frame()
		if errors.Is(err, errTorn) {
			c.r.f.Close()
			c.r = nil
			continue // the next segment must start at c.seq
		}
		if isSide(p) {
			continue
		}
		seq := c.seq
		c.seq++
		if seq >= c.from {
			return seq, p, nil
		}
	}
	return 0, nil, c.err
}

func (c *segCursor) close() {
	if c.r != nil {
		c.r.f.Close()
		c.r = nil
	}
}

// pruneBefore deletes the segments whose every record is before seq; the
// newest segment always stays.
func (s *segments) pruneBefore(seq uint64) error {
	if s.readOnly {
		return errReadOnly
	}
	s.mu.Lock()
	var drop []uint64
	for len(s.segs) > 1 && s.segs[1] <= seq {
		drop = append(drop, s.segs[0])
		s.segs = s.segs[1:]
	}
	s.mu.Unlock()
	for _, first := range drop {
		if err := os.Remove(s.path(first)); err != nil {
			return fmt.Errorf("cannot prune the intent log: %w", err)
		}
	}
	return nil
}

// truncate keeps the records before seq and drops the rest (all of them
// when seq is at or before the oldest: the next record is then seq).
func (s *segments) truncate(seq uint64) error {
	if s.readOnly {
		return errReadOnly
	}
	if seq >= s.next.Load() {
		return nil
	}
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	s.mu.Lock()
	i, _ := slices.BinarySearch(s.segs, seq+1)
	// segs[:i] start at or before seq; the last of them holds seq unless
	// seq is before the oldest record.
	drop := slices.Clone(s.segs[max(i-1, 0):])
	keep := s.segs[:max(i-1, 0)]
	var cut uint64 // the segment seq falls in, kept up to seq
	if i > 0 && s.segs[i-1] < seq {
		cut, drop = s.segs[i-1], drop[1:]
		keep = s.segs[:i]
	}
	s.segs = slices.Clone(keep)
	s.mu.Unlock()
	for _, first := range drop {
		if err := os.Remove(s.path(first)); err != nil {
			return fmt.Errorf("cannot cut the intent log: %w", err)
		}
	}
	s.next.Store(seq)
	s.written = nil
	if cut == 0 {
		if err := s.markEnd(); err != nil {
			return err
		}
		return syncDir(s.dir)
	}
	c, err := openSegmentAt(s.path(cut), cut)
	if err != nil {
		return err
	}
	// The cut follows input seq-1 (sides.go: the side records after it
	// may go too).
	for r := cut; r < seq; {
		p, err := c.frame()
		if err != nil {
			c.f.Close()
			return fmt.Errorf("%w: intent log segment %d ends before seq %d", ErrCorrupt, cut, seq)
		}
		if !isSide(p) {
			r++
		}
	}
	end := c.off
	c.f.Close()
	if err := cutFile(s.path(cut), end); err != nil {
		return fmt.Errorf("cannot cut the intent log: %w", err)
	}
	s.durable.Store(&durableMark{seg: cut, off: end})
	return syncDir(s.dir)
}

// markEnd marks the newest segment's frames durable, read from its file.
func (s *segments) markEnd() error {
	s.mu.Lock()
	n := len(s.segs)
	var last uint64
	if n > 0 {
		last = s.segs[n-1]
	}
	s.mu.Unlock()
	if n == 0 {
		s.durable.Store(nil)
		return nil
	}
	_, _, end, err := scanSegment(s.path(last), last)
	if err == nil {
		s.durable.Store(&durableMark{seg: last, off: end})
	}
	return err
}

// reset empties the log; its next record is seq next.
func (s *segments) reset(next uint64) error {
	if s.readOnly {
		return errReadOnly
	}
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	s.mu.Lock()
	drop := s.segs
	s.segs = nil
	s.mu.Unlock()
	for _, first := range drop {
		if err := os.Remove(s.path(first)); err != nil {
			return fmt.Errorf("cannot empty the intent log: %w", err)
		}
	}
	s.next.Store(next)
	s.written = nil
	s.durable.Store(nil)
	return syncDir(s.dir)
}

// close closes the newest segment.
func (s *segments) close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

var errReadOnly = errors.New("the intent log is open read-only")
