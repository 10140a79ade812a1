package clob

import (
	"bytes"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
)

func scenario(t *testing.T) *harness {
	h := newHarness(t, Limits{OrdersMax: 64, PendingMax: 64})
	for _, who := range []string{"a", "b", "c", "d"} {
		h.fund(who, 1000, 1_000_000)
	}
	return h
}

func (h *harness) mustAdmit(who string, names []string, in ...Intent) {
	h.t.Helper()
	if r := h.admit(who, names, in...); r != OK {
		h.t.Fatalf("admit %v: %v", names, r)
	}
}

func (h *harness) order(who, name string, side Side, lots, steps int64, flags uint8) {
	h.t.Helper()
	h.mustAdmit(who, []string{name}, h.limit(side, lots, steps, flags))
}

func (h *harness) market(who, name string, side Side, lots, capSteps int64) {
	h.t.Helper()
	in := h.limit(side, lots, capSteps, FlagIOC)
	in.Type = Market
	h.mustAdmit(who, []string{name}, in)
}

// byID returns the two names ordered by ascending order id.
func (h *harness) byID(x, y string) (string, string) {
	ix, iy := h.id(x), h.id(y)
	if bytes.Compare(ix[:], iy[:]) < 0 {
		return x, y
	}
	return y, x
}

func TestCrossingBook(t *testing.T) {
	h := scenario(t)
	h.order("a", "s1", Sell, 5, 10, 0)
	h.order("b", "b1", Buy, 5, 12, 0)
	h.expectEvents(h.tick(), "placed s1", "placed b1", "fill b1 5@11 T", "fill s1 5@11 T")
	if p, ok := h.e.LastPrice(tBookID); !ok || !p.Eq(uint256.NewInt(11*2e15)) {
		t.Fatalf("last price %v %v", p.Dec(), ok)
	}
	if h.levels(Buy) != "" || h.levels(Sell) != "" {
		t.Fatalf("book not empty: %q %q", h.levels(Buy), h.levels(Sell))
	}
	// Taker fees (0.2 %) on 5 × 22 × 1e12 = 110e12: 0.22e12 from each side.
	if f := h.acc.fee(tQuote); !f.Eq(uint256.NewInt(440_000_000_000)) {
		t.Fatalf("fees %s", f.Dec())
	}
}

func TestNonCrossingBook(t *testing.T) {
	h := scenario(t)
	h.order("a", "s1", Sell, 5, 12, 0)
	h.order("b", "b1", Buy, 5, 10, 0)
	h.order("b", "b2", Buy, 2, 10, 0)
	h.expectEvents(h.tick(), "placed s1", "placed b1", "placed b2")
	if got := h.levels(Buy); got != "7@10/2" {
		t.Fatalf("bids %q", got)
	}
	if got := h.levels(Sell); got != "5@12/1" {
		t.Fatalf("asks %q", got)
	}
	if _, ok := h.e.LastPrice(tBookID); ok {
		t.Fatal("price without a trade")
	}
	if h.out.Books[0].Traded || h.out.Books[0].HasPrice || h.out.Books[0].NewOrders != 3 {
		t.Fatalf("book tick %+v", h.out.Books[0])
	}
}

func TestMarginalPriceTie(t *testing.T) {
	h := scenario(t)
	h.order("a", "b12", Buy, 3, 12, 0)
	h.order("a", "b11", Buy, 2, 11, 0)
	h.order("b", "s10", Sell, 4, 10, 0)
	// b11 is the marginal buy, partly matched: lo = max(ps 10, b' 11) = 11,
	// hi = pb 11, so p = 11.
	h.expectEvents(h.tick(), "placed b12", "placed b11", "placed s10",
		"fill b12 3@11 T", "fill s10 3@11", "fill b11 1@11", "fill s10 1@11 T")
	if got := h.levels(Buy); got != "1@11/1" {
		t.Fatalf("bids %q", got)
	}
}

func TestMidpointHalfStep(t *testing.T) {
	h := scenario(t)
	h.order("a", "b", Buy, 1, 11, 0)
	h.order("b", "s", Sell, 1, 10, 0)
	h.expectEvents(h.tick(), "placed b", "placed s", "fill b 1@10.5 T", "fill s 1@10.5 T")
}

func TestMarketOrderOneSide(t *testing.T) {
	h := scenario(t)
	h.order("a", "s", Sell, 5, 10, 0)
	h.market("b", "m", Buy, 3, 15)
	// Only limit orders price: ps = s' = 10, so p = 10 (within [10, cap 15]).
	h.expectEvents(h.tick(), "placed s", "placed m", "fill m 3@10 T", "fill s 3@10")
	if got := h.levels(Sell); got != "2@10/1" {
		t.Fatalf("asks %q", got)
	}
	// A market sell with a floor above every bid does not trade and is cancelled.
	h.order("c", "b", Buy, 1, 9, 0)
	h.market("d", "m2", Sell, 1, 10)
	h.expectEvents(h.tick(), "placed b", "placed m2", "cancel m2")
}

func TestNoPreviousPrice(t *testing.T) {
	h := scenario(t)
	h.market("a", "mb", Buy, 2, 15)
	h.market("b", "ms", Sell, 2, 5)
	h.expectEvents(h.tick(), "placed mb", "placed ms", "cancel mb", "cancel ms")
	if _, ok := h.e.LastPrice(tBookID); ok {
		t.Fatal("price without a trade")
	}
	// Once the book has cleared, two market orders trade at the previous
	// price, clamped into [floor, cap].
	h.order("a", "s", Sell, 1, 8, 0)
	h.order("b", "b", Buy, 1, 8, 0)
	h.expectEvents(h.tick(), "placed s", "placed b", "fill b 1@8 T", "fill s 1@8 T")
	h.market("a", "mb2", Buy, 2, 15)
	h.market("b", "ms2", Sell, 2, 9)
	h.expectEvents(h.tick(), "placed mb2", "placed ms2", "fill mb2 2@9 T", "fill ms2 2@9 T")
}

func TestQueuePriority(t *testing.T) {
	h := scenario(t)
	h.order("a", "old", Sell, 2, 10, 0)
	h.tick()
	h.order("b", "n1", Sell, 2, 10, 0)
	h.order("c", "n2", Sell, 2, 10, 0)
	h.order("d", "buy", Buy, 5, 10, 0)
	first, second := h.byID("n1", "n2")
	h.expectEvents(h.tick(), "placed n1", "placed n2", "placed buy",
		"fill buy 2@10", "fill old 2@10 maker T",
		"fill buy 2@10", "fill "+first+" 2@10 T",
		"fill buy 1@10 T", "fill "+second+" 1@10")
	// Partial fills keep their place: second is now first in the queue.
	h.order("d", "buy2", Buy, 1, 10, 0)
	h.expectEvents(h.tick(), "placed buy2", "fill buy2 1@10 T", "fill "+second+" 1@10 maker T")
}

func TestIOC(t *testing.T) {
	h := scenario(t)
	h.order("a", "s", Sell, 3, 10, 0)
	h.order("b", "ioc", Buy, 5, 10, FlagIOC)
	h.expectEvents(h.tick(), "placed s", "placed ioc", "fill ioc 3@10", "fill s 3@10 T", "cancel ioc")
	if _, ok := h.e.Order(h.id("ioc")); ok {
		t.Fatal("IOC remainder rests")
	}
}

// TestPostOnlyRefused: against another account's resting order or the
// same account's (the post-only rule, not a self-trade rule: there is none,
// docs/auction.md, "Self-matching").
func TestPostOnlyRefused(t *testing.T) {
	for _, resting := range []string{"a", "b"} {
		h := scenario(t)
		h.order(resting, "bid", Buy, 2, 11, 0)
		h.tick()
		h.order("b", "po", Sell, 2, 10, FlagPostOnly)
		h.expectEvents(h.tick(), "placed po", "refused po")
		if got := h.levels(Buy); got != "2@11/1" {
			t.Fatalf("bid of %s: bids %q", resting, got)
		}
	}
}

func TestPostOnlyCrossingEachOther(t *testing.T) {
	h := scenario(t)
	h.order("a", "pb", Buy, 2, 11, FlagPostOnly)
	h.order("b", "ps", Sell, 2, 10, FlagPostOnly)
	h.expectEvents(h.tick(), "placed pb", "placed ps", "refused pb", "refused ps")
}

func TestPostOnlyShielded(t *testing.T) {
	h := scenario(t)
	h.order("a", "ask", Sell, 2, 10, 0)
	h.tick()
	h.order("b", "po", Sell, 2, 10, FlagPostOnly)
	h.order("c", "buy", Buy, 2, 10, 0)
	h.expectEvents(h.tick(), "placed po", "placed buy", "fill buy 2@10 T", "fill ask 2@10 maker T")
	if got := h.levels(Sell); got != "2@10/1" {
		t.Fatalf("asks %q", got)
	}
}

func TestPostOnlyRestartRepricesRest(t *testing.T) {
	h := scenario(t)
	h.order("a", "ask", Sell, 1, 12, 0)
	h.tick()
	// po crosses buy first; once refused, buy trades with the resting ask.
	h.order("b", "po", Sell, 1, 9, FlagPostOnly)
	h.order("c", "buy", Buy, 1, 12, 0)
	h.expectEvents(h.tick(), "placed po", "placed buy", "refused po", "fill buy 1@12 T", "fill ask 1@12 maker T")
}

func TestTTLExpiry(t *testing.T) {
	h := scenario(t)
	in := h.limit(Sell, 1, 10, 0)
	in.TTL = 1_500_000
	h.mustAdmit("a", []string{"s"}, in)
	h.expectEvents(h.tick(1_000_000), "placed s")
	if info, _ := h.e.Order(h.id("s")); info.ExpiresUs != 2_500_000 || info.AdmitTickUs != 1_000_000 {
		t.Fatalf("order info %+v", info)
	}
	if T, ok := h.e.NextTickDue(2_000_000); ok {
		t.Fatalf("due %d before the expiry", T)
	}
	T, ok := h.e.NextTickDue(10_000_000)
	if !ok || T != 3_000_000 {
		t.Fatalf("next due %d %v, want 3000000", T, ok)
	}
	h.expectEvents(h.tick(T), "expire s")
	if _, ok := h.e.NextTickDue(1 << 40); ok {
		t.Fatal("work left")
	}
}

func TestCancelBeforeMatch(t *testing.T) {
	h := scenario(t)
	h.order("a", "ask", Sell, 2, 10, 0)
	h.tick()
	h.order("b", "buy", Buy, 2, 12, 0)
	h.mustAdmit("a", nil, Intent{Kind: IntentCancel, Book: tBookID, OrderID: h.id("ask"), Deadline: h.deadline()})
	h.expectEvents(h.tick(), "placed buy", "cancel ask")
	if got := h.levels(Buy); got != "2@12/1" {
		t.Fatalf("bids %q", got)
	}
}

func (h *harness) update(who, name string, lots, steps int64) Reason {
	h.t.Helper()
	return h.admit(who, nil, Intent{Kind: IntentUpdate, Book: tBookID, OrderID: h.id(name),
		Size: lotsWei(lots), Price: stepsWei(steps), Deadline: h.deadline()})
}

func TestUpdateShrinkKeepsPlace(t *testing.T) {
	h := scenario(t)
	h.order("a", "first", Sell, 2, 10, 0)
	h.tick()
	h.order("b", "second", Sell, 2, 10, 0)
	h.tick()
	if r := h.update("a", "first", 1, 10); r != OK {
		t.Fatal(r)
	}
	h.order("c", "buy", Buy, 1, 10, 0)
	h.expectEvents(h.tick(), "update first", "placed buy", "fill buy 1@10 T", "fill first 1@10 maker T")
}

func TestUpdateGrowRequeues(t *testing.T) {
	h := scenario(t)
	h.order("a", "first", Sell, 2, 10, 0)
	h.tick()
	h.order("b", "second", Sell, 2, 10, 0)
	h.tick()
	if r := h.update("a", "first", 3, 10); r != OK {
		t.Fatal(r)
	}
	h.order("c", "buy", Buy, 1, 10, 0)
	h.expectEvents(h.tick(), "update first", "placed buy", "fill buy 1@10 T", "fill second 1@10 maker")
	// Repricing re-queues too, and the re-queued order is a taker.
	if r := h.update("b", "second", 1, 9); r != OK {
		t.Fatal(r)
	}
	h.order("c", "buy2", Buy, 1, 9, 0)
	ev := h.tick()
	if ev[3] != "fill second 1@9 T" {
		t.Fatalf("re-priced order filled as %q", ev[3])
	}
}

func TestUpdateReservation(t *testing.T) {
	h := scenario(t)
	h.fund("e", 0, 100) // 100e12 quote: a buy of 2 at 20 steps reserves 80e12 + 0.2 % = 80.16e12
	h.order("e", "buy", Buy, 2, 20, 0)
	if r := h.update("e", "buy", 2, 25); r != ReasonInsufficientBalance {
		t.Fatalf("growing past the balance: %v", r)
	}
	if r := h.update("e", "buy", 1, 20); r != OK {
		t.Fatal(r)
	}
	// The shrink released 40.08e12: now 2 more lots at 20 fit again.
	if r := h.update("e", "buy", 2, 20); r != OK {
		t.Fatal(r)
	}
	h.expectEvents(h.tick(), "placed buy", "update buy", "update buy")
}

func TestBatchAtomic(t *testing.T) {
	h := scenario(t)
	h.fund("e", 10, 0)
	before := h.e.AppendSnapshot(nil)
	r := h.admit("e", []string{"x", "y", "z"}, h.limit(Sell, 4, 10, 0), h.limit(Sell, 4, 11, 0), h.limit(Sell, 4, 12, 0))
	if r != ReasonInsufficientBalance {
		t.Fatalf("third intent over the balance: %v", r)
	}
	if after := h.e.AppendSnapshot(nil); !bytes.Equal(before[8:], after[8:]) {
		t.Fatal("a refused batch changed the state")
	}
	if _, ok := h.e.Order(OrderID(owner("e"), h.nonce-1, 0)); ok {
		t.Fatal("first order of a refused batch is live")
	}
	if avail := h.acc.Available(tBase, owner("e")); !avail.Eq(ptr(lotsWei(10))) {
		t.Fatalf("available %s", avail.Dec())
	}
}

func ptr(v uint256.Int) *uint256.Int { return &v }

func TestBatchCancelsOwnOrder(t *testing.T) {
	h := scenario(t)
	id := OrderID(owner("a"), h.nonce, 0)
	in := []Intent{h.limit(Buy, 1, 10, 0), {Kind: IntentCancel, Book: tBookID, OrderID: id, Deadline: h.deadline()}}
	h.mustAdmit("a", []string{"x"}, in...)
	if info, ok := h.e.Order(id); !ok || !info.Pending {
		t.Fatalf("order live from admission: %+v %v", info, ok)
	}
	h.expectEvents(h.tick(), "placed x", "cancel x")
	if len(h.out.Landed) != 1 || h.out.Landed[0] != h.nonce-1 {
		t.Fatalf("landed %v", h.out.Landed)
	}
}

func TestBatchUpdatesOwnOrder(t *testing.T) {
	h := scenario(t)
	h.fund("e", 0, 50)
	id := OrderID(owner("e"), h.nonce, 0)
	// 1 lot at 20 reserves 40.08e12; the update to 1 at 10 frees 20.04e12,
	// which the third intent then needs.
	in := []Intent{h.limit(Buy, 1, 20, 0),
		{Kind: IntentUpdate, Book: tBookID, OrderID: id, Size: lotsWei(1), Price: stepsWei(10), Deadline: h.deadline()},
		h.limit(Buy, 1, 10, 0)}
	h.mustAdmit("e", []string{"x", "", "y"}, in...)
	h.expectEvents(h.tick(), "placed x", "update x", "placed y")
}

func TestTransfer(t *testing.T) {
	h := scenario(t)
	amt := uint256.NewInt(1e12)
	tr := Intent{Kind: IntentTransfer, Token: tQuote, To: owner("b"), Amount: *amt, Deadline: 500_000}
	h.mustAdmit("a", nil, tr)
	if avail := h.acc.Available(tQuote, owner("a")); !avail.Eq(uint256.NewInt(999_999e12)) {
		t.Fatalf("transfer not locked: %s", avail.Dec())
	}
	T, ok := h.e.NextTickDue(500_000)
	if !ok || T != 500_000 {
		t.Fatalf("next due %d %v", T, ok)
	}
	h.expectEvents(h.tick(T), "transfer a->b 1000000000000")
	if b := h.acc.get(tQuote, owner("b")); !b.cash.Eq(uint256.NewInt(1_000_001e12)) {
		t.Fatalf("recipient %s", b.cash.Dec())
	}
	tr.Amount = uint256.Int{}
	tr.Deadline = 1_000_000
	if r := h.admit("a", nil, tr); r != ReasonTransferZero {
		t.Fatal(r)
	}
}

func TestDeadlines(t *testing.T) {
	h := scenario(t)
	f := func(deadline uint64, want Reason) {
		t.Helper()
		in := h.limit(Buy, 1, 10, 0)
		in.Deadline = deadline
		if r := h.admit("a", nil, in); r != want {
			t.Fatalf("deadline %d at %d: %v, want %v", deadline, h.nowUs, r, want)
		}
	}
	h.nowUs = 1_500_000
	f(2_500_000, ReasonDeadlineAlign)
	f(1_000_000, ReasonDeadlinePast) // before landing(now) = 2_000_000
	f(2_000_000, OK)
	f(DeadlineAheadMaxUs+1_000_000, OK)
	f(DeadlineAheadMaxUs+2_000_000, ReasonDeadlineFar)
	f((1_500_000+10*365*86_400_000_000)/1_000_000*1_000_000, OK) // the live SDK's default, ten years ahead, on the grid
	h.tick(2_000_000)
	h.nowUs = 1_900_000 // a sequencer stamp behind the executed tick
	f(2_000_000, ReasonDeadlinePast)
}

func TestDeadlineMissedAtTick(t *testing.T) {
	h := scenario(t)
	h.order("a", "rest", Sell, 2, 10, 0)
	h.tick()
	h.order("b", "late", Buy, 1, 10, 0)
	h.mustAdmit("a", nil, Intent{Kind: IntentCancel, Book: tBookID, OrderID: h.id("rest"), Deadline: h.deadline()})
	if r := h.update("a", "rest", 1, 10); r != OK { // releases 1 lot at admission
		t.Fatal(r)
	}
	h.mustAdmit("c", nil, Intent{Kind: IntentTransfer, Token: tBase, To: owner("d"), Amount: lotsWei(1), Deadline: h.deadline()})
	// The tick at the deadline is skipped: every intent is late.
	skipped := h.deadline() + uint64(h.iv)
	h.expectEvents(h.tick(int64(skipped)), "expire late")
	if got := h.levels(Sell); got != "2@10/1" {
		t.Fatalf("late update applied: %q", got)
	}
}

func TestReasons(t *testing.T) {
	h := scenario(t)
	h.order("a", "mine", Buy, 1, 10, 0)
	f := func(want Reason, mut func(in *Intent)) {
		t.Helper()
		in := h.limit(Buy, 1, 10, 0)
		mut(&in)
		if r := h.admit("a", nil, in); r != want {
			t.Fatalf("got %v, want %v", r, want)
		}
	}
	big := new(uint256.Int).Lsh(e15, 60)
	f(ReasonUnknownBook, func(in *Intent) { in.Book = Hash{9} })
	f(ReasonDeadlineAlign, func(in *Intent) { in.Deadline++ })
	f(ReasonFlagsUnknown, func(in *Intent) { in.Flags = 0x08 })
	f(ReasonIOCPostOnly, func(in *Intent) { in.Flags = FlagIOC | FlagPostOnly })
	f(ReasonMarketNotIOC, func(in *Intent) { in.Type = Market })
	f(ReasonMarketPostOnly, func(in *Intent) { in.Type, in.Flags = Market, FlagPostOnly })
	f(ReasonReduceOnlySpot, func(in *Intent) { in.Flags = FlagReduceOnly })
	f(ReasonOrderType, func(in *Intent) { in.Type = 7 })
	f(ReasonSizeZero, func(in *Intent) { in.Size = uint256.Int{} })
	f(ReasonSizeLot, func(in *Intent) { in.Size.AddUint64(&in.Size, 1) })
	f(ReasonValueRange, func(in *Intent) { in.Size = *big })
	f(ReasonPriceZero, func(in *Intent) { in.Price = uint256.Int{} })
	f(ReasonPriceStep, func(in *Intent) { in.Price.AddUint64(&in.Price, 1) })
	f(ReasonValueRange, func(in *Intent) { in.Price = *big })
	f(ReasonInsufficientBalance, func(in *Intent) { in.Size = lotsWei(1 << 40) })
	f(ReasonMalformed, func(in *Intent) { in.Kind = 9 })
	upd := func(in *Intent) {
		in.Kind, in.OrderID, in.Size, in.Price = IntentUpdate, h.id("mine"), lotsWei(1), stepsWei(10)
	}
	f(ReasonUnknownOrder, func(in *Intent) { upd(in); in.OrderID = Hash{7} })
	f(ReasonSizeZero, func(in *Intent) { upd(in); in.Size = uint256.Int{} })
	f(ReasonPriceStep, func(in *Intent) { upd(in); in.Price.AddUint64(&in.Price, 1) })
	f(OK, func(in *Intent) { upd(in); in.Token = tBase }) // informational (TestUpdateTokenInformational)
	f(OK, func(in *Intent) { upd(in); in.Token = tQuote })
	f(ReasonInsufficientBalance, func(in *Intent) { upd(in); in.Size = lotsWei(1 << 40) })
	f(ReasonTransferZero, func(in *Intent) { *in = Intent{Kind: IntentTransfer, Token: tQuote, Deadline: 500_000} })
	if r := h.admit("b", nil, Intent{Kind: IntentCancel, Book: tBookID, OrderID: h.id("mine"), Deadline: h.deadline()}); r != ReasonNotOwner {
		t.Fatalf("cancel by another owner: %v", r)
	}
	if r := h.admit("a", nil); r != ReasonBatchSize {
		t.Fatalf("empty envelope: %v", r)
	}
	h.mustAdmit("a", nil, Intent{Kind: IntentCancel, Book: tBookID, OrderID: h.id("mine"), Deadline: h.deadline()})
	h.tick()
	if r := h.admit("a", nil, Intent{Kind: IntentCancel, Book: tBookID, OrderID: h.id("mine"), Deadline: h.deadline()}); r != ReasonUnknownOrder {
		t.Fatalf("cancel of a cancelled order: %v", r)
	}
}

func TestBookFull(t *testing.T) {
	h := newHarness(t, Limits{OrdersMax: 2, PendingMax: 4})
	h.fund("a", 100, 100_000)
	h.order("a", "x", Buy, 1, 10, 0)
	h.order("a", "y", Buy, 1, 10, 0)
	if r := h.admit("a", nil, h.limit(Buy, 1, 10, 0)); r != ReasonBookFull {
		t.Fatalf("OrdersMax: %v", r)
	}
	cancel := Intent{Kind: IntentCancel, Book: tBookID, OrderID: h.id("x"), Deadline: h.deadline()}
	h.mustAdmit("a", nil, cancel, cancel)
	if r := h.admit("a", nil, cancel); r != ReasonBookFull {
		t.Fatalf("PendingMax: %v", r)
	}
	h.tick()
	h.order("a", "z", Buy, 1, 10, 0)
	tr := Intent{Kind: IntentTransfer, Token: tQuote, To: owner("b"), Amount: *uint256.NewInt(1), Deadline: uint64(landing(h.nowUs, TransferIntervalUs))}
	h.mustAdmit("a", nil, tr, tr, tr, tr)
	if r := h.admit("a", nil, tr); r != ReasonBookFull {
		t.Fatalf("transfer ring: %v", r)
	}
}

func TestCreateMarket(t *testing.T) {
	e := NewEngine(Limits{OrdersMax: 4, PendingMax: 4})
	f := func(mut func(m *MarketConfig), ok bool) {
		t.Helper()
		m := testMarket(Hash{2}, 1_000_000)
		mut(&m)
		if err := e.CreateMarket(&m); (err == nil) != ok {
			t.Fatalf("CreateMarket: %v, want ok=%v", err, ok)
		}
	}
	f(func(m *MarketConfig) { m.Kind = 7 }, false)
	f(func(m *MarketConfig) { m.IntervalUs = 0 }, false)
	f(func(m *MarketConfig) { m.LotSize = uint256.Int{} }, false)
	f(func(m *MarketConfig) { m.TickPrecision = *uint256.NewInt(1) }, false) // unitQuote 1e15/2e18 < 1
	f(func(m *MarketConfig) { m.TakerFee = *wad }, false)
	f(func(m *MarketConfig) { m.LotSize.Lsh(&m.LotSize, 200) }, false)
	f(func(m *MarketConfig) {}, true)
	f(func(m *MarketConfig) {}, false) // duplicate id
	m := testMarket(Hash{1}, 500_000)
	if err := e.CreateMarket(&m); err != nil {
		t.Fatal(err)
	}
	if ids := e.AppendMarkets(nil); len(ids) != 2 || ids[0] != (Hash{1}) || ids[1] != (Hash{2}) {
		t.Fatalf("markets %x", ids)
	}
	if cfg, ok := e.Market(Hash{2}); !ok || cfg.IntervalUs != 1_000_000 {
		t.Fatal("Market lookup")
	}
}

func TestOrderID(t *testing.T) {
	// keccak256(abi.encode(address(0x01..), uint64 7, uint32 3)) computed
	// independently with the same padding: 12 zero bytes + address, 24 + nonce, 28 + seq.
	var in [96]byte
	signer := Address{1, 2, 3}
	copy(in[12:], signer[:])
	in[63], in[95] = 7, 3
	h := OrderID(signer, 7, 3)
	want := Hash(crypto.Keccak256Hash(in[:]))
	if h != want {
		t.Fatalf("OrderID %x, want %x", h, want)
	}
}

func TestDroppedShrinkCannotRelock(t *testing.T) {
	h := scenario(t)
	h.fund("e", 2, 0)
	h.order("e", "rest", Sell, 2, 10, 0)
	h.tick()
	if r := h.update("e", "rest", 1, 10); r != OK { // releases 1 lot at admission
		t.Fatal(r)
	}
	skipped := int64(h.deadline()) + h.iv
	// The released lot leaves with a transfer that settles at the skipped tick.
	h.mustAdmit("e", nil, Intent{Kind: IntentTransfer, Token: tBase, To: owner("d"), Amount: lotsWei(1), Deadline: uint64(skipped)})
	// The late update's release cannot be undone: the order is cancelled.
	h.expectEvents(h.tick(skipped), "cancel rest", "transfer e->d 1000000000000000")
	if _, ok := h.e.Order(h.id("rest")); ok {
		t.Fatal("order rests without its reservation")
	}
}

func TestSnapshotCanonical(t *testing.T) {
	// Two engines reach the same state through different arena histories.
	a, b := scenario(t), scenario(t)
	b.order("c", "tmp", Buy, 1, 5, 0)
	b.mustAdmit("c", nil, Intent{Kind: IntentCancel, Book: tBookID, OrderID: b.id("tmp"), Deadline: b.deadline()})
	b.tick()
	a.tick()
	for _, h := range []*harness{a, b} {
		h.nonce = 100
		h.order("a", "x", Buy, 3, 9, 0)
		h.order("b", "y", Sell, 2, 12, 0)
		h.tick()
	}
	sa, sb := a.e.AppendSnapshot(nil), b.e.AppendSnapshot(nil)
	// The envelope counters differ (b admitted two more); the rest must not.
	if !bytes.Equal(sa[13:], sb[13:]) {
		t.Fatal("same state, different snapshot bytes")
	}
}
