package clob

import (
	"encoding/binary"
	"unsafe"
)

// idIndex maps the ids of live orders to their slots. It is an open
// addressing table with linear probing, kept at most half full: it starts
// at a power of two ≥ 2 × the book's preallocated slots and doubles as the
// arena grows, up to ≥ 2 × OrdersMax, then never allocates again. It
// deletes by backward shift, so it never holds tombstones. Each entry
// keeps a tag, 4 bytes of the id whose low bits are also its home; the
// full id is compared in the arena on a match. Order ids are keccak
// outputs, so those bytes are uniform: in a probe run, whose entries
// share their home bits, the other ≥ 2 bytes of the tag make a
// comparison in the arena for a wrong id rare.
//
// A Go map[Hash]orderRef was tried first: at 1M live orders its probing was
// a quarter of the tick benchmark, as its 40-byte entries miss the cache
// more often than these 8-byte ones (16-byte ones, with 8 bytes of the
// id, made a table of 100 000 orders twice the size of L2).
type idIndex struct {
	entries []indexEntry
	mask    uint32 // < 2^31: the table holds at most 2 × 2 × OrdersMaxLimit entries
	n       int
}

type indexEntry struct {
	tag  uint32
	slot uint32 // 0 = empty
}

func newIDIndex(orders int) idIndex {
	size := 2
	for size < 2*orders {
		size *= 2
	}
	return idIndex{entries: make([]indexEntry, size), mask: uint32(size - 1)}
}

func idKey(id *Hash) uint64 { return binary.BigEndian.Uint64(id[:8]) }

// idTag is an id's tag in the index.
func idTag(id *Hash) uint32 { return binary.BigEndian.Uint32(id[4:8]) }

// find returns the slot of id, or 0.
func (x *idIndex) find(id *Hash, ords []order) uint32 {
	k := idTag(id)
	for i := k & x.mask; ; i = (i + 1) & x.mask {
		e := &x.entries[i]
		if e.slot == 0 {
			return 0
		}
		if e.tag == k && ords[e.slot].id == *id {
			return e.slot
		}
	}
}

// prefetch prefetches the line where id's probe starts.
func (x *idIndex) prefetch(id *Hash) {
	prefetch(unsafe.Pointer(&x.entries[idTag(id)&x.mask]), unsafe.Sizeof(indexEntry{}))
}

// insert adds id → slot, doubling the table first if it would be more
// than half full. It panics if id is already in the index: admission
// checks that here, in the probe it needs anyway, rather than with a find
// of its own (one random line per new order, not two probes of it).
// REQUIRES: ords[slot].id == *id.
func (x *idIndex) insert(id *Hash, slot uint32, ords []order) {
	if 2*(x.n+1) > len(x.entries) {
		x.grow()
	}
	k := idTag(id)
	i := k & x.mask
	for ; x.entries[i].slot != 0; i = (i + 1) & x.mask {
		if e := &x.entries[i]; e.tag == k && ords[e.slot].id == *id {
			panic("BUG: order id already live: (signer, nonce) admitted twice")
		}
	}
	x.entries[i] = indexEntry{k, slot}
	x.n++
}

// place puts e in the first empty entry of its probe run.
func (x *idIndex) place(e indexEntry) {
	i := e.tag & x.mask
	for x.entries[i].slot != 0 {
		i = (i + 1) & x.mask
	}
	x.entries[i] = e
	x.n++
}

// grow doubles the table and re-inserts every entry.
func (x *idIndex) grow() {
	old := x.entries
	*x = newIDIndex(len(old))
	for _, e := range old {
		if e.slot != 0 {
			x.place(e)
		}
	}
}

// remove deletes id, shifting later entries of its probe run back.
// REQUIRES: id is in the index.
func (x *idIndex) remove(id *Hash, ords []order) {
	k := idTag(id)
	i := k & x.mask
	for x.entries[i].tag != k || ords[x.entries[i].slot].id != *id {
		if x.entries[i].slot == 0 {
			panic("BUG: removing an order id that is not indexed")
		}
		i = (i + 1) & x.mask
	}
	for j := (i + 1) & x.mask; x.entries[j].slot != 0; j = (j + 1) & x.mask {
		home := x.entries[j].tag & x.mask
		// Move entry j into the hole at i unless its home lies cyclically
		// in (i, j]: then it is already as close to home as it can be.
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			x.entries[i] = x.entries[j]
			i = j
		}
	}
	x.entries[i] = indexEntry{}
	x.n--
}
