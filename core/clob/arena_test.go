package clob

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/holiman/uint256"
)

// TestArenaGrowsInPreloadedOrder: a book's arena starts small and grows as
// orders arrive, and hands out the same slots, in the same order, as a free
// list preloaded with every slot (lowest on top) would; the id index finds
// every live order across its growth. Snapshots and replays depend on the
// slot order.
func TestArenaGrowsInPreloadedOrder(t *testing.T) {
	const max = 3*arenaCapMin + 5
	b := newBook(&MarketConfig{}, &units{}, &Limits{OrdersMax: max, PendingMax: 16})
	if cap(b.nodes) > arenaCapMin+1 || len(b.index.entries) > 2*2*arenaCapMin {
		t.Fatalf("preallocated %d slots and %d index entries for OrdersMax %d", cap(b.nodes), len(b.index.entries), max)
	}
	model := make([]uint32, max) // the free list as it used to be preloaded
	for i := range model {
		model[i] = uint32(max - i)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	live := map[Hash]uint32{}
	var liveSlots []uint32
	var next uint64
	for step := 0; step < 40_000; step++ {
		if !b.full() && (len(liveSlots) == 0 || rng.IntN(4) > 0) {
			want := model[len(model)-1]
			model = model[:len(model)-1]
			var id Hash
			next++
			for i := range 8 {
				id[i] = byte(rng.Uint32())
			}
			id[31] = byte(next)
			id[30] = byte(next >> 8)
			id[29] = byte(next >> 16)
			s := b.newOrder(&id, Address{}, Buy, Limit, 0, 1, 1, 0, 0, new(uint256.Int)).slot()
			if s != want {
				t.Fatalf("step %d: slot %d, a preloaded free list gives %d", step, s, want)
			}
			live[id] = s
			liveSlots = append(liveSlots, s)
			continue
		}
		i := rng.IntN(len(liveSlots))
		s := liveSlots[i]
		liveSlots[i] = liveSlots[len(liveSlots)-1]
		liveSlots = liveSlots[:len(liveSlots)-1]
		delete(live, b.ords[s].id)
		b.release(s)
		model = append(model, s)
	}
	if len(b.nodes) != max+1 {
		t.Fatalf("the arena grew to %d slots, want every one of %d used", len(b.nodes)-1, max)
	}
	for id, s := range live {
		if got := b.index.find(&id, b.ords); got != s {
			t.Fatalf("index finds %d for an order in slot %d", got, s)
		}
	}
	if b.index.n != len(live) || b.live() != len(live) {
		t.Fatalf("index holds %d, book counts %d live, want %d", b.index.n, b.live(), len(live))
	}
}

// TestSlotLayout: a node is one cache line, an order whole lines with its
// hot fields first, so that no slot straddles a line it does not use.
func TestSlotLayout(t *testing.T) {
	if n := unsafe.Sizeof(node{}); n != 64 {
		t.Errorf("node is %d bytes, want 64", n)
	}
	if n := unsafe.Sizeof(order{}); n%64 != 0 {
		t.Errorf("order is %d bytes, not whole cache lines", n)
	}
	if n := unsafe.Sizeof(orderHot{}); n%64 != 0 {
		t.Errorf("orderHot is %d bytes, not whole cache lines", n)
	}
}
