package clob

import (
	"fmt"
	"slices"
	"testing"
)

// TestSampleBook: the reference is the mid while both sides rest, else
// twice the last clearing price, zero before any; the owners at each best
// price are distinct, at most max, among the level's first
// SampleOrdersMax orders.
func TestSampleBook(t *testing.T) {
	h := newHarness(t, Limits{})
	var owners [2][]Address
	if s, ok := h.e.SampleBook(tBookID, &owners, 16); !ok || !s.Ref2.IsZero() || len(owners[Buy])+len(owners[Sell]) != 0 {
		t.Fatalf("an empty book: %v %v %v", s.Ref2, ok, owners)
	}
	if _, ok := h.e.SampleBook(Hash{0xee}, &owners, 16); ok {
		t.Fatal("an unknown book sampled")
	}
	// SampleOrdersMax bids of "a" at 100 ahead of one of "z"; bids of 20
	// owners at 99; an ask of "s" at 104.
	h.fund("a", 0, 1e9)
	h.fund("z", 0, 1e9)
	h.fund("s", 1000, 0)
	for range SampleOrdersMax {
		h.order("a", "", Buy, 1, 100, 0)
	}
	h.tick() // a tick's new orders queue in the auction's order: z's comes after
	h.order("z", "", Buy, 1, 100, 0)
	var twenty []string
	for i := range 20 {
		name := fmt.Sprintf("o%02d", i)
		h.fund(name, 0, 1e9)
		h.order(name, "", Buy, 1, 99, 0)
		twenty = append(twenty, name)
	}
	h.order("s", "", Sell, 1, 104, 0)
	h.tick()
	s, _ := h.e.SampleBook(tBookID, &owners, 16)
	if want := stepsWei(204); !s.Ref2.Eq(&want) || !slices.Equal(owners[Buy], []Address{owner("a")}) ||
		!slices.Equal(owners[Sell], []Address{owner("s")}) {
		t.Fatalf("mid of 100 and 104: %v, owners %v", s.Ref2, owners)
	}
	// "s" sells 1 + SampleOrdersMax lots at 100: it clears the bids at 100,
	// leaving the 20 owners at 99 on the bid, "s" at 104 on the ask.
	h.order("s", "", Sell, SampleOrdersMax+1, 100, 0)
	h.tick()
	s, _ = h.e.SampleBook(tBookID, &owners, 16)
	if want := stepsWei(99 + 104); !s.Ref2.Eq(&want) || len(owners[Buy]) != 16 || len(owners[Sell]) != 1 {
		t.Fatalf("after the sweep: %v, owners %v", s.Ref2, owners)
	}
	for i, a := range owners[Buy] {
		if !slices.Contains(twenty, h.owners[a]) || slices.Index(owners[Buy], a) != i {
			t.Fatalf("owner %d: %x, want one of the 20 at 99, once", i, a)
		}
	}
}

// TestSampleBookLastPrice: one side resting, the reference is twice the
// last clearing price.
func TestSampleBookLastPrice(t *testing.T) {
	h := newHarness(t, Limits{})
	h.fund("b", 0, 1e9)
	h.fund("s", 10, 0)
	h.order("b", "", Buy, 2, 100, 0)
	h.order("s", "", Sell, 1, 100, 0)
	h.tick()
	var owners [2][]Address
	s, _ := h.e.SampleBook(tBookID, &owners, 16)
	if want := stepsWei(200); !s.Ref2.Eq(&want) || !slices.Equal(owners[Buy], []Address{owner("b")}) || len(owners[Sell]) != 0 {
		t.Fatalf("a bid left after clearing at 100: %v, owners %v", s.Ref2, owners)
	}
}
