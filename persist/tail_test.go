package persist

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ledgervenue/node/core"
)

// tailFrame is one frame of a test log: its bytes and the place before it.
type tailFrame struct {
	at    Pos
	bytes []byte
}

// TestTail: from every place of a log written across restarts, rolled
// segments and side-only segments, a Tail reads exactly the frames after
// it, in order and whole, and stops at the durable end; a place past the
// end is ErrBeyondLog; a tail made before later appends reads them too.
func TestTail(t *testing.T) {
	dir := t.TempDir()
	l := openIn(t, dir, 0)
	l.segs.rollAt = 600 // several segments
	ins := sampleInputs()
	var frames []tailFrame
	pos := Pos{Seq: 1}
	group := func(add func(*Inputs)) {
		t.Helper()
		var in Inputs
		add(&in)
		if err := EachFrame(in.frames, func(p []byte, side bool) error {
			f := appendFrame(nil, p)
			frames = append(frames, tailFrame{pos, f})
			if side {
				pos.Sides++
			} else {
				pos = Pos{Seq: pos.Seq + 1}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.AppendInputs(&in); err != nil {
			t.Fatal(err)
		}
	}
	var early *Tail // made after the last restart, before the appends that follow
	var earlyAt int
	b1, b2 := sampleBatch(1), sampleBatch(2)
	for i := range 12 {
		group(func(in *Inputs) {
			if i%3 == 0 {
				in.AddBatch(b1)
			}
			in.Add(ins[i%len(ins)])
			in.Add(ins[(i+1)%len(ins)])
			if i%4 == 1 {
				in.AddClaims([]Claim{{TxHash: core.Hash{byte(i)}, Proof: []byte("p")}})
			}
		})
		if i == 5 || i == 8 {
			l.Close()
			l = openIn(t, dir, 0)
			l.segs.rollAt = 600
			group(func(in *Inputs) { in.AddBatch(b2) }) // side records first in a run
		}
		if got, err := l.DurablePos(); err != nil || got != pos {
			t.Fatalf("after group %d: durable place %+v, %v; want %+v", i, got, err, pos)
		}
		if i == 8 {
			var err error
			if early, err = l.Tail(pos); err != nil {
				t.Fatal(err)
			}
			defer early.Close()
			earlyAt = len(frames)
		}
	}
	defer l.Close()
	end := pos
	if got, err := l.DurablePos(); err != nil || got != end {
		t.Fatalf("durable place %+v, %v; want %+v", got, err, end)
	}
	if got, err := l.segs.scanEnd(); err != nil || got != end {
		t.Fatalf("durable place read from the files %+v, %v; want %+v", got, err, end)
	}
	var all []byte
	for _, f := range frames {
		all = append(all, f.bytes...)
	}
	for i, f := range frames {
		tl, err := l.Tail(f.at)
		if err != nil {
			t.Fatalf("tail at %+v: %v", f.at, err)
		}
		var got []byte
		for {
			n := len(got)
			got, _, err = tl.Read(got, 300)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == n {
				break
			}
		}
		tl.Close()
		want := all[len(all)-len(bytesFrom(frames[i:])):]
		if !bytes.Equal(got, want) {
			t.Fatalf("from %+v: %d bytes read, want %d", f.at, len(got), len(want))
		}
		if tl.Pos() != end {
			t.Fatalf("from %+v: ends at %+v, want %+v", f.at, tl.Pos(), end)
		}
	}
	if _, err := l.Tail(Pos{Seq: end.Seq, Sides: end.Sides + 1}); !errors.Is(err, ErrBeyondLog) {
		t.Fatalf("a place past the end: %v", err)
	}
	got, _, err := early.Read(nil, 1<<30)
	if want := bytesFrom(frames[earlyAt:]); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the tail made before the last appends read %d of %d bytes: %v", len(got), len(want), err)
	}
}

func bytesFrom(fs []tailFrame) []byte {
	var b []byte
	for _, f := range fs {
		b = append(b, f.bytes...)
	}
	return b
}
