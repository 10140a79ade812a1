package persist

// slab hands out the keys and values of one Store, which Badger holds
// until the commit, from a few chunks reused from one Store to the next
// instead of an allocation (or several, growing) each: under market-maker
// ladders a group writes some 300 small rows per ladder, and growing them
// from nil was ~5 % of the node's CPU (BENCHMARKS.md, issue 25).
//
// What it holds is bounded by the largest Store's rows (a few MB: at most
// storeLagGroups groups of writerGroupMax inputs).
type slab struct {
	chunks [][]byte
	cur    int // the chunk being filled
	off    int // its first free byte
}

// slabChunk is a chunk's size; a larger request gets a chunk of its own.
const slabChunk = 256 << 10

// take returns an empty slice of capacity n: appending up to n bytes to
// it stays in the slab.
func (s *slab) take(n int) []byte {
	if n > slabChunk {
		return make([]byte, 0, n)
	}
	if s.cur == len(s.chunks) || s.off+n > slabChunk {
		if s.cur < len(s.chunks) {
			s.cur++
		}
		if s.cur == len(s.chunks) {
			s.chunks = append(s.chunks, make([]byte, slabChunk))
		}
		s.off = 0
	}
	b := s.chunks[s.cur][s.off : s.off : s.off+n]
	s.off += n
	return b
}

// reset makes every chunk free again.
// REQUIRES: nothing taken is in use any more (the Store committed or
// discarded its transaction).
func (s *slab) reset() { s.cur, s.off = 0, 0 }
