package clob

import "testing"

// TestUpdateTokenInformational: update's token argument does not decide
// what backs the order (the live rule; the SDK passes the quote token for
// any order): a resting sell updated with the quote token, the base token,
// the zero address or an unrelated token is admitted, locks base for its
// new size and nothing of the quote, and the update applies at the tick. A
// buy updated with the base token locks quote, never base.
func TestUpdateTokenInformational(t *testing.T) {
	h := scenario(t)
	h.order("a", "ask", Sell, 2, 10, 0)
	h.order("b", "bid", Buy, 2, 5, 0)
	h.tick()
	sells := []struct {
		token Address
		lots  int64
		want  string
	}{
		{tQuote, 3, "3@10/1"},
		{tBase, 4, "4@10/1"},
		{Address{}, 5, "5@10/1"},
		{Address{0x77}, 1, "1@10/1"},
	}
	a := owner("a")
	for _, c := range sells {
		in := Intent{Kind: IntentUpdate, Book: tBookID, OrderID: h.id("ask"), Size: lotsWei(c.lots),
			Price: stepsWei(10), Token: c.token, Deadline: h.deadline()}
		if r := h.admit("a", nil, in); r != OK {
			t.Fatalf("sell updated with token %x: %v", c.token[:1], r)
		}
		want := lotsWei(c.lots)
		if base, quote := h.acc.get(tBase, a).locked, h.acc.get(tQuote, a).locked; !base.Eq(&want) || !quote.IsZero() {
			t.Fatalf("token %x: locked base %s quote %s, want base %s", c.token[:1], base.Dec(), quote.Dec(), want.Dec())
		}
		h.expectEvents(h.tick(), "update ask")
		if got := h.levels(Sell); got != c.want {
			t.Fatalf("token %x: sells %q, want %q", c.token[:1], got, c.want)
		}
	}
	b := owner("b")
	before := h.acc.get(tQuote, b).locked
	in := Intent{Kind: IntentUpdate, Book: tBookID, OrderID: h.id("bid"), Size: lotsWei(3), Price: stepsWei(5),
		Token: tBase, Deadline: h.deadline()}
	if r := h.admit("b", nil, in); r != OK {
		t.Fatalf("buy updated with the base token: %v", r)
	}
	if base, quote := h.acc.get(tBase, b).locked, h.acc.get(tQuote, b).locked; !base.IsZero() || !before.Lt(&quote) {
		t.Fatalf("buy grown to 3 lots: locked base %s, quote %s (was %s)", base.Dec(), quote.Dec(), before.Dec())
	}
}
