package persist

import (
	"bytes"
	"testing"
)

func TestSlabTakesWithoutOverlap(t *testing.T) {
	var s slab
	for round := range 3 {
		var got [][]byte
		for i := range 3000 {
			n := i%97 + 1
			if i == 1500 {
				n = slabChunk + 1 // a chunk of its own
			}
			b := s.take(n)
			if len(b) != 0 || cap(b) != n {
				t.Fatalf("round %d: take(%d) gave len %d cap %d", round, n, len(b), cap(b))
			}
			got = append(got, append(b, bytes.Repeat([]byte{byte(i)}, n)...))
		}
		for i, b := range got { // nothing taken later wrote over it
			if !bytes.Equal(b, bytes.Repeat([]byte{byte(i)}, len(b))) {
				t.Fatalf("round %d: slice %d overwritten", round, i)
			}
		}
		chunks := len(s.chunks)
		s.reset()
		if round > 0 && chunks != len(s.chunks) {
			t.Fatalf("round %d: %d chunks, not reused (%d)", round, len(s.chunks), chunks)
		}
	}
	if len(s.chunks) > 2 {
		t.Fatalf("%d chunks for ~150 KB a round", len(s.chunks))
	}
}
