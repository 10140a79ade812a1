package persist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// segRecord is record seq's payload in these tests: its seq, padded to a
// length that varies with it.
func segRecord(seq uint64) []byte {
	p := binary.BigEndian.AppendUint64(nil, seq)
	return append(p, bytes.Repeat([]byte{byte(seq)}, int(seq%97))...)
}

// writeSegRecords appends records next … next+n-1, per to a write.
func writeSegRecords(t *testing.T, s *segments, n, per int) {
	t.Helper()
	var frames []byte
	k := 0
	for range n {
		frames = appendFrame(frames, segRecord(s.Next()+uint64(k)))
		if k++; k == per {
			if err := s.write(frames, k); err != nil {
				t.Fatal(err)
			}
			frames, k = frames[:0], 0
		}
	}
	if k > 0 {
		if err := s.write(frames, k); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.sync(); err != nil {
		t.Fatal(err)
	}
}

// checkSegRecords checks that s holds exactly the records from first to
// s.Next()-1, each segRecord's, and that reading from the middle works.
func checkSegRecords(t *testing.T, s *segments, first uint64) {
	t.Helper()
	want := first
	err := s.each(first, func(seq uint64, p []byte) error {
		if seq != want || !bytes.Equal(p, segRecord(seq)) {
			return fmt.Errorf("record %d (want %d): %x", seq, want, p)
		}
		want++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want != s.Next() {
		t.Fatalf("read up to %d, the log ends at %d", want-1, s.Next()-1)
	}
	if mid := first + (s.Next()-first)/2; mid < s.Next() {
		n := 0
		if err := s.each(mid, func(seq uint64, p []byte) error {
			if n == 0 && seq != mid {
				return fmt.Errorf("from %d: first record %d", mid, seq)
			}
			n++
			return nil
		}); err != nil || uint64(n) != s.Next()-mid {
			t.Fatalf("from %d: %d records, %v", mid, n, err)
		}
	}
}

func openTestSegments(t *testing.T, dir string, rollAt int64) *segments {
	t.Helper()
	s, err := openSegments(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	s.rollAt = rollAt
	t.Cleanup(func() { s.close() })
	return s
}

// TestSegmentsRollReopenPrune: records written in groups across many small
// segments read back after a reopen, from any seq; pruning drops whole
// segments before a seq and keeps the rest readable.
func TestSegmentsRollReopenPrune(t *testing.T) {
	dir := t.TempDir()
	s := openTestSegments(t, dir, 4<<10)
	writeSegRecords(t, s, 1000, 7)
	checkSegRecords(t, s, 1)
	s.close()
	s = openTestSegments(t, dir, 4<<10)
	if s.Next() != 1001 || s.first() != 1 {
		t.Fatalf("reopened: next %d, first %d", s.Next(), s.first())
	}
	if len(s.segs) < 10 {
		t.Fatalf("%d segments: the test wants many", len(s.segs))
	}
	writeSegRecords(t, s, 500, 13)
	checkSegRecords(t, s, 1)
	if err := s.pruneBefore(700); err != nil {
		t.Fatal(err)
	}
	first := s.first()
	if first > 700 || first < 600 {
		t.Fatalf("after pruning before 700 the log starts at %d", first)
	}
	checkSegRecords(t, s, first)
	if err := s.each(first-1, func(uint64, []byte) error { return nil }); err == nil {
		t.Fatal("reading before the pruned start succeeded")
	}
}

// TestSegmentsTornTail: whatever a crash leaves after the last whole frame
// (a partial frame, a bad checksum, zeros) is cut off at open, and appends
// go on from there.
func TestSegmentsTornTail(t *testing.T) {
	for name, damage := range map[string]func(f []byte) []byte{
		"partial frame": func(f []byte) []byte { return append(f, appendFrame(nil, segRecord(101))[:9]...) },
		"bad checksum":  func(f []byte) []byte { f[len(f)-1] ^= 1; return f },
		"zeros":         func(f []byte) []byte { return append(f, make([]byte, 4096)...) },
		"huge length":   func(f []byte) []byte { return append(f, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTestSegments(t, dir, segmentBytesMax)
			writeSegRecords(t, s, 100, 10)
			s.close()
			path := filepath.Join(dir, segName(1))
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// The damage lands right after the frames (the file goes on with
			// zeros written ahead of them: zeroAhead).
			_, _, end, err := scanSegment(path, 1)
			if err != nil || int64(len(b)) < end {
				t.Fatalf("frames end at %d of %d: %v", end, len(b), err)
			}
			if err := os.WriteFile(path, damage(b[:end]), 0o644); err != nil {
				t.Fatal(err)
			}
			want := uint64(101)
			if name == "bad checksum" {
				want = 100 // the last record itself is torn
			}
			s = openTestSegments(t, dir, segmentBytesMax)
			if s.Next() != want {
				t.Fatalf("next %d after the damage, want %d", s.Next(), want)
			}
			writeSegRecords(t, s, 50, 10)
			checkSegRecords(t, s, 1)
		})
	}
}

// TestSegmentsTornRoll: a crash while a new segment's header was written
// leaves a short file, which holds no record: the log ends before it.
func TestSegmentsTornRoll(t *testing.T) {
	dir := t.TempDir()
	s := openTestSegments(t, dir, segmentBytesMax)
	writeSegRecords(t, s, 40, 8)
	s.close()
	if err := os.WriteFile(filepath.Join(dir, segName(41)), []byte(segMagic[:5]), 0o644); err != nil {
		t.Fatal(err)
	}
	s = openTestSegments(t, dir, segmentBytesMax)
	if s.Next() != 41 || len(s.segs) != 1 {
		t.Fatalf("next %d, %d segments", s.Next(), len(s.segs))
	}
	writeSegRecords(t, s, 10, 3)
	checkSegRecords(t, s, 1)
}

// TestSegmentsCorruptMiddle: a damaged frame in a segment that is not the
// newest is corruption, never a silent end of the log.
func TestSegmentsCorruptMiddle(t *testing.T) {
	dir := t.TempDir()
	s := openTestSegments(t, dir, 2<<10)
	writeSegRecords(t, s, 300, 5)
	if len(s.segs) < 3 {
		t.Fatalf("%d segments", len(s.segs))
	}
	path := s.path(s.segs[1])
	s.close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[segHeaderLen+frameHeaderLen+2] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s = openTestSegments(t, dir, 2<<10)
	err = s.each(1, func(uint64, []byte) error { return nil })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("reading over a damaged middle segment: %v, want ErrCorrupt", err)
	}
}

// TestSegmentsTruncateReset: cutting the log at a seq inside a segment, at
// a segment's start and before its start, then writing on.
func TestSegmentsTruncateReset(t *testing.T) {
	dir := t.TempDir()
	s := openTestSegments(t, dir, 3<<10)
	writeSegRecords(t, s, 400, 9)
	mid := s.segs[2] + 3
	for _, cut := range []uint64{mid, s.segs[1], 1} {
		if err := s.truncate(cut); err != nil {
			t.Fatal(err)
		}
		if s.Next() != cut {
			t.Fatalf("cut at %d: next %d", cut, s.Next())
		}
		writeSegRecords(t, s, 120, 9)
		checkSegRecords(t, s, 1)
		s.close()
		s = openTestSegments(t, dir, 3<<10)
		checkSegRecords(t, s, 1)
	}
	if err := s.reset(77); err != nil {
		t.Fatal(err)
	}
	if s.first() != 0 || s.Next() != 77 {
		t.Fatalf("after reset: first %d, next %d", s.first(), s.Next())
	}
	writeSegRecords(t, s, 30, 4)
	s.close()
	s = openTestSegments(t, dir, 3<<10)
	if s.first() != 77 || s.Next() != 107 {
		t.Fatalf("reopened after reset: first %d, next %d", s.first(), s.Next())
	}
	checkSegRecords(t, s, 77)
}

// FuzzSegmentOpen: a newest segment with any bytes after its header opens
// (cut at the first frame that is not whole) or fails with an error, and
// what it keeps reads back; nothing panics.
func FuzzSegmentOpen(f *testing.F) {
	f.Add(appendFrame(nil, []byte("one")))
	f.Add(append(appendFrame(nil, []byte("one")), 0, 0, 0, 9, 1, 2))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		dir := t.TempDir()
		hdr := binary.BigEndian.AppendUint64([]byte(segMagic), 5)
		if err := os.WriteFile(filepath.Join(dir, segName(5)), append(hdr, body...), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := openSegments(dir, false)
		if err != nil {
			return
		}
		defer s.close()
		n := uint64(0)
		if err := s.each(5, func(uint64, []byte) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if 5+n != s.Next() {
			t.Fatalf("read %d records, the log ends at %d", n, s.Next()-1)
		}
	})
}
