package clob

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/holiman/uint256"
)

// newTrigHarness returns a harness with the perp market tPerpID on the
// harness's own interval (the same units as the spot one: lot 1e15, tick
// 2e15), oracle at 100 steps, leverage 10, MarkClamp 100 % and no premium:
// the mark follows the oracle at once.
func newTrigHarness(t testing.TB, l Limits) *harness {
	h := newHarness(t, l)
	m := perpMarket(tPerpID, 10, 100)
	m.IntervalUs, m.MakerFee, m.TakerFee = h.iv, testMarket(tPerpID, h.iv).MakerFee, testMarket(tPerpID, h.iv).TakerFee
	m.Perp.MarkClamp = *uint256.NewInt(1e18)
	h.acc.engine = h.e
	if err := h.e.CreateMarket(&m); err != nil {
		t.Fatal(err)
	}
	return h
}

// fundPerp gives an owner native collateral.
func (h *harness) fundPerp(name string) {
	a := owner(name)
	h.owners[a] = name
	h.acc.fund(NativeToken, a, uint256.NewInt(1e18))
}

// trigger builds a submitTrigger intent on the perp book (limit 0 = market).
func (h *harness) trigger(side Side, lots, limit, trig int64, typ, group uint8) Intent {
	return Intent{Kind: IntentSubmitTrigger, Book: tPerpID, Side: side, Size: lotsWei(lots), Price: stepsWei(limit),
		TriggerPrice: stepsWei(trig), TriggerType: typ, Grouping: group, Deadline: h.deadline()}
}

// trigOrder builds a limit order on the perp book.
func (h *harness) trigOrder(side Side, lots, steps int64) Intent {
	return h.perpOrder(tPerpID, side, lots, steps, 0)
}

// setMark moves the perp book's oracle, and with it the mark its next tick
// computes (the market has no premium and no clamp).
func (h *harness) setMark(steps int64) {
	h.t.Helper()
	p := stepsWei(steps)
	if r := h.e.SetOraclePrice(tPerpID, &p); r != OK {
		h.t.Fatal(r)
	}
}

// perpTick runs the next tick with a resting order of "poke" admitted just
// before, so that the perp book runs even if its market only ticks with
// work; it returns the events without poke's.
func (h *harness) perpTick() []string {
	h.t.Helper()
	if _, ok := h.owners[owner("poke")]; !ok {
		h.fundPerp("poke")
	}
	h.mustAdmit("poke", []string{"poke"}, h.trigOrder(Buy, 1, 1))
	var got []string
	for _, l := range h.tick() {
		if !strings.HasSuffix(l, " poke") {
			got = append(got, l)
		}
	}
	if err := checkTriggers(h.e); err != nil {
		h.t.Fatal(err)
	}
	return got
}

// checkTriggers verifies every trigger store: byID sorted and exactly the
// live slots; byAsset sorted and exactly the Asset-grouped ones; hot parts
// mirror the arena; the pending ring's trigger submits are the pending
// triggers; the perp book counts its asset-bound orders and its flat list
// is empty between ticks.
func checkTriggers(e *Engine) error {
	for _, b := range e.books {
		ts := &b.trig
		if len(ts.byID) != ts.live() || ts.live() > ts.max {
			return fmt.Errorf("book %x: %d indexed, %d live, max %d", b.cfg.ID[:1], len(ts.byID), ts.live(), ts.max)
		}
		pending, grouped := 0, 0
		for i, s := range ts.byID {
			t := &ts.arena[s]
			if t.state == trigFree || i > 0 && bytes.Compare(ts.arena[ts.byID[i-1]].id[:], t.id[:]) >= 0 {
				return fmt.Errorf("book %x: trigger index broken at %d", b.cfg.ID[:1], i)
			}
			if t.state == trigPending {
				pending++
			}
			if t.grouping == GroupingAsset {
				grouped++
				if j, ok := ts.assetSearch(&t.owner, &t.id); !ok || ts.byAsset[j] != s {
					return fmt.Errorf("book %x: trigger %x missing from the Asset index", b.cfg.ID[:1], t.id[:4])
				}
			}
		}
		if grouped != len(ts.byAsset) {
			return fmt.Errorf("book %x: %d Asset triggers, Asset index holds %d", b.cfg.ID[:1], grouped, len(ts.byAsset))
		}
		if b.perp != nil {
			bound := 0
			for s := 1; s < len(b.nodes); s++ {
				if b.nodes[s].state != stateFree && b.ords[s].assetBound {
					bound++
				}
			}
			if bound != b.perp.bound || len(b.perp.flat) != 0 {
				return fmt.Errorf("book %x: %d asset-bound orders, counted %d; flat list %v", b.cfg.ID[:1], bound, b.perp.bound, b.perp.flat)
			}
		}
		for s := 1; s < len(ts.arena); s++ { // slot 0 is nil
			h := ts.hot[s]
			ts.sync(uint32(s))
			if ts.hot[s] != h {
				return fmt.Errorf("book %x: slot %d's hot part %+v, arena says %+v", b.cfg.ID[:1], s, h, ts.hot[s])
			}
		}
		inRing := 0
		for i := range b.pending.len() {
			if p := b.pending.at(i); p.kind == IntentSubmitTrigger && ts.deref(p.ref) != 0 {
				inRing++
			}
		}
		if inRing != pending {
			return fmt.Errorf("book %x: %d pending triggers, %d submits in the ring", b.cfg.ID[:1], pending, inRing)
		}
	}
	return nil
}

func (h *harness) triggers(who string) []TriggerInfo { return h.e.AppendTriggers(nil, owner(who)) }

// TestTriggerRefusals: every refusal of a trigger intent has its reason and
// changes nothing (the snapshot bytes stay the same).
func TestTriggerRefusals(t *testing.T) {
	h := newTrigHarness(t, Limits{OrdersMax: 4, PendingMax: 8})
	h.fundPerp("a")
	h.fundPerp("b")
	h.mustAdmit("a", []string{"mine"}, h.trigger(Sell, 1, 0, 90, TriggerStopLoss, 0))
	h.perpTick()
	mine := h.id("mine")
	f := func(name, who string, want Reason, in ...Intent) {
		t.Helper()
		before := h.e.AppendSnapshot(nil)
		if r := h.admit(who, nil, in...); r != want {
			t.Fatalf("%s: %v, want %v", name, r, want)
		}
		if !bytes.Equal(before, h.e.AppendSnapshot(nil)) {
			t.Fatalf("%s: refused envelope changed the engine", name)
		}
	}
	ok := h.trigger(Sell, 1, 0, 90, TriggerStopLoss, 0)
	mod := func(fn func(in *Intent)) Intent {
		in := ok
		fn(&in)
		return in
	}
	cancel := Intent{Kind: IntentCancelTrigger, Book: tPerpID, OrderID: mine, Deadline: h.deadline()}
	update := Intent{Kind: IntentUpdateTrigger, Book: tPerpID, OrderID: mine, Side: Sell, Size: lotsWei(1),
		TriggerPrice: stepsWei(95), Deadline: h.deadline()}
	f("unknown book", "a", ReasonUnknownBook, mod(func(in *Intent) { in.Book = Hash{9} }))
	f("spot", "a", ReasonTriggerSpot, mod(func(in *Intent) { in.Book = tBookID }))
	f("spot cancel", "a", ReasonTriggerSpot, func() Intent { in := cancel; in.Book = tBookID; return in }())
	f("spot update", "a", ReasonTriggerSpot, func() Intent { in := update; in.Book = tBookID; return in }())
	f("deadline align", "a", ReasonDeadlineAlign, mod(func(in *Intent) { in.Deadline++ }))
	f("deadline past", "a", ReasonDeadlinePast, mod(func(in *Intent) { in.Deadline -= uint64(h.iv) }))
	f("deadline far", "a", ReasonDeadlineFar, mod(func(in *Intent) { in.Deadline += DeadlineAheadMaxUs }))
	f("side", "a", ReasonMalformed, mod(func(in *Intent) { in.Side = 2 }))
	f("flags", "a", ReasonFlagsUnknown, mod(func(in *Intent) { in.Flags = FlagPostOnly }))
	f("type", "a", ReasonTriggerType, mod(func(in *Intent) { in.TriggerType = 2 }))
	f("grouping", "a", ReasonTriggerGrouping, mod(func(in *Intent) { in.Grouping = 2 }))
	f("grouping 255", "a", ReasonTriggerGrouping, mod(func(in *Intent) { in.Grouping = 255 }))
	f("size zero", "a", ReasonSizeZero, mod(func(in *Intent) { in.Size.Clear() }))
	f("size lot", "a", ReasonSizeLot, mod(func(in *Intent) { in.Size.AddUint64(&in.Size, 1) }))
	f("size range", "a", ReasonValueRange, mod(func(in *Intent) { in.Size = lotsWei(unitsMax + 1) }))
	f("limit step", "a", ReasonPriceStep, mod(func(in *Intent) { in.Price.SetUint64(3) }))
	f("trigger zero", "a", ReasonTriggerPriceZero, mod(func(in *Intent) { in.TriggerPrice.Clear() }))
	f("trigger step", "a", ReasonTriggerPriceStep, mod(func(in *Intent) { in.TriggerPrice.AddUint64(&in.TriggerPrice, 1) }))
	f("cancel unknown", "a", ReasonUnknownTrigger, func() Intent { in := cancel; in.OrderID = Hash{7}; return in }())
	f("update unknown", "a", ReasonUnknownTrigger, func() Intent { in := update; in.OrderID = Hash{7}; return in }())
	f("cancel an order id", "a", ReasonUnknownTrigger, func() Intent { in := cancel; in.OrderID = h.id("poke"); return in }())
	f("cancel not owner", "b", ReasonNotOwner, cancel)
	f("update not owner", "b", ReasonNotOwner, update)
	f("update size", "a", ReasonSizeZero, func() Intent { in := update; in.Size.Clear(); return in }())
	f("update trigger price", "a", ReasonTriggerPriceZero, func() Intent { in := update; in.TriggerPrice.Clear(); return in }())
	// A valid intent first: a batch is all or nothing.
	f("batch", "a", ReasonTriggerType, ok, mod(func(in *Intent) { in.TriggerType = 7 }))
	// Capacity: the book holds OrdersMax = 4 triggers, one stored.
	f("triggers full", "a", ReasonTriggersFull, ok, ok, ok, ok)
	f("ring full", "a", ReasonBookFull, ok, ok, update, update, update, update, update, update, update)
	if r := h.admit("a", nil, ok, ok, ok); r != OK {
		t.Fatal(r)
	}
	f("triggers full after", "b", ReasonTriggersFull, ok)
}

// TestTriggerLifecycle: a trigger is pending from admission, stored when its
// intent drains (its envelope landing), updated and cancelled by its owner;
// a cancel in the same envelope as the submit removes it at the drain.
func TestTriggerLifecycle(t *testing.T) {
	h := newTrigHarness(t, Limits{OrdersMax: 16, PendingMax: 16})
	h.fundPerp("a")
	in := h.trigger(Sell, 2, 0, 90, TriggerStopLoss, GroupingAsset)
	in.TTL, in.Flags = 50*uint64(h.iv), FlagReduceOnly
	h.mustAdmit("a", []string{"sl"}, in)
	tag := h.nonce - 1
	got := h.triggers("a")
	if len(got) != 1 || got[0].ID != h.id("sl") || got[0].AdmitTickUs != 0 || got[0].Grouping != GroupingAsset || got[0].Flags != FlagReduceOnly {
		t.Fatalf("pending trigger: %+v", got)
	}
	h.expectEvents(h.perpTick())
	if !containsTag(h.out.Landed, tag) {
		t.Fatalf("landed %v, want the trigger's envelope %d", h.out.Landed, tag)
	}
	got = h.triggers("a")
	T := h.out.TickUs
	want := TriggerInfo{ID: h.id("sl"), Book: tPerpID, Owner: owner("a"), Signer: owner("a"), Nonce: tag, Side: Sell,
		Size: lotsWei(2), TriggerPrice: stepsWei(90), TriggerType: TriggerStopLoss, Grouping: GroupingAsset, Flags: FlagReduceOnly,
		DeadlineUs: T, AdmitTickUs: T, ExpiresUs: T + 50*h.iv}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("stored trigger:\n got %+v\nwant %+v", got, want)
	}
	h.mustAdmit("a", nil, Intent{Kind: IntentUpdateTrigger, Book: tPerpID, OrderID: h.id("sl"), Side: Buy,
		Size: lotsWei(5), Price: stepsWei(120), TriggerPrice: stepsWei(110), Deadline: h.deadline()})
	h.expectEvents(h.perpTick())
	got = h.triggers("a")
	want.Side, want.Size, want.LimitPrice, want.TriggerPrice = Buy, lotsWei(5), stepsWei(120), stepsWei(110)
	if len(got) != 1 || got[0] != want {
		t.Fatalf("updated trigger:\n got %+v\nwant %+v", got, want)
	}
	h.mustAdmit("a", nil, Intent{Kind: IntentCancelTrigger, Book: tPerpID, OrderID: h.id("sl"), Deadline: h.deadline()})
	h.expectEvents(h.perpTick(), "tcancel sl")
	if got = h.triggers("a"); len(got) != 0 {
		t.Fatalf("after cancel: %+v", got)
	}
	// Submit and cancel in one envelope.
	tr := h.trigger(Buy, 1, 0, 150, TriggerStopLoss, 0)
	a := Admission{Signer: owner("a"), Owner: owner("a"), Nonce: h.nonce, NowUs: h.nowUs}
	h.nonce++
	c := Intent{Kind: IntentCancelTrigger, Book: tPerpID, OrderID: OrderID(a.Signer, a.Nonce, 0), Deadline: h.deadline()}
	if r := h.e.Admit(&a, &Envelope{Intents: []Intent{tr, c}}, h.acc); r != OK {
		t.Fatal(r)
	}
	h.names[c.OrderID] = "both"
	h.expectEvents(h.perpTick(), "tcancel both")
	if got = h.triggers("a"); len(got) != 0 {
		t.Fatalf("after submit+cancel: %+v", got)
	}
}

func containsTag(tags []uint64, tag uint64) bool {
	for _, x := range tags {
		if x == tag {
			return true
		}
	}
	return false
}

// TestTriggerTPSL: a take-profit / stop-loss pair; the mark falls through
// the stop, which fires (at that mark) and leaves the take-profit armed
// (no one-cancels-the-other); its market order lands in the next tick
// without a transaction of its own and trades there (at its cap, mark −
// 10 %, as the auction prices a market order against a lone bid).
func TestTriggerTPSL(t *testing.T) {
	h := newTrigHarness(t, Limits{OrdersMax: 16, PendingMax: 16})
	h.fundPerp("a")
	h.fundPerp("b")
	h.mustAdmit("a", []string{"sl", "tp"},
		h.trigger(Sell, 2, 0, 90, TriggerStopLoss, GroupingNone), h.trigger(Sell, 2, 0, 110, TriggerTakeProfit, GroupingNone))
	h.mustAdmit("a", []string{"alone", "asset"}, h.trigger(Sell, 1, 0, 120, TriggerTakeProfit, GroupingNone),
		h.trigger(Sell, 1, 0, 130, TriggerTakeProfit, GroupingAsset))
	h.mustAdmit("b", []string{"b's"}, h.trigger(Sell, 1, 0, 140, TriggerTakeProfit, GroupingAsset))
	h.expectEvents(h.perpTick())
	h.setMark(95) // between the two: nothing fires
	h.expectEvents(h.perpTick())
	h.mustAdmit("b", []string{"bid"}, h.trigOrder(Buy, 2, 85))
	h.setMark(89)
	h.expectEvents(h.perpTick(), "placed bid", "fired sl")
	fired := h.out.Events[len(h.out.Events)-1]
	if want := stepsWei(89); fired.Price != want || fired.Owner != owner("a") || fired.Side != Sell {
		t.Fatalf("fired event %+v, want price %s", fired, want.Dec())
	}
	if o, ok := h.e.Order(h.id("sl")); !ok || !o.Pending || o.Type != Market || o.Flags != FlagIOC || o.Price != stepsWei(81) {
		t.Fatalf("fired order: %+v (live %v), want a pending market sell capped at 81 steps", o, ok)
	}
	if got := h.triggers("a"); len(got) != 3 || len(h.triggers("b")) != 1 {
		t.Fatalf("triggers left: a %+v, b %+v", got, h.triggers("b"))
	}
	h.tick() // nothing else is pending: only the fired order lands
	h.expectEvents(h.format(), "placed sl", "fill bid 2@81 maker T", "fill sl 2@81 T")
	if len(h.out.Landed) != 0 {
		t.Fatalf("a fired order landed envelopes %v", h.out.Landed)
	}
}

// TestTriggerBuySide: a buy stop-loss fires at or above its price, a buy
// take-profit at or below; a limit price makes a limit order, IOC only when
// asked.
func TestTriggerBuySide(t *testing.T) {
	h := newTrigHarness(t, Limits{OrdersMax: 16, PendingMax: 16})
	h.fundPerp("a")
	ioc := h.trigger(Buy, 1, 104, 104, TriggerStopLoss, 0)
	ioc.Flags = FlagIOC
	h.mustAdmit("a", []string{"stop", "take", "ioc"}, h.trigger(Buy, 1, 105, 105, TriggerStopLoss, 0),
		h.trigger(Buy, 1, 0, 90, TriggerTakeProfit, 0), ioc)
	h.expectEvents(h.perpTick())
	h.setMark(104)
	h.expectEvents(h.perpTick(), "fired ioc")
	h.setMark(105)
	h.expectEvents(h.perpTick(), "placed ioc", "cancel ioc", "fired stop")
	h.setMark(90)
	h.expectEvents(h.perpTick(), "placed stop", "fired take")
	if o, ok := h.e.Order(h.id("stop")); !ok || o.Pending || o.Type != Limit || o.Flags != 0 || o.Price != stepsWei(105) {
		t.Fatalf("fired limit order: %+v (live %v)", o, ok)
	}
	if o, ok := h.e.Order(h.id("take")); !ok || o.Type != Market || o.Price != stepsWei(99) {
		t.Fatalf("fired market buy: %+v (live %v), want capped at 99 steps", o, ok)
	}
}

// TestTriggerTTLAndRefusedOrder: a trigger expires ttl after its admission
// tick; a trigger whose order the book cannot take is cancelled instead of
// firing, and the owner's other triggers stay.
func TestTriggerTTLAndRefusedOrder(t *testing.T) {
	h := newTrigHarness(t, Limits{OrdersMax: 4, PendingMax: 16})
	h.fundPerp("a")
	ttl := h.trigger(Sell, 1, 0, 50, TriggerStopLoss, 0)
	ttl.TTL = 2 * uint64(h.iv)
	h.mustAdmit("a", []string{"ttl", "full", "mate"}, ttl, h.trigger(Sell, 1, 0, 90, TriggerStopLoss, GroupingAsset),
		h.trigger(Sell, 1, 0, 200, TriggerTakeProfit, GroupingAsset))
	h.expectEvents(h.perpTick())
	h.expectEvents(h.perpTick())
	h.expectEvents(h.perpTick(), "tcancel ttl")
	// The book holds OrdersMax = 4 orders: fill it with pokes.
	for !h.e.book(tPerpID).full() {
		h.perpTick()
	}
	h.setMark(80)
	// An update of the other trigger makes the book run.
	h.mustAdmit("a", nil, Intent{Kind: IntentUpdateTrigger, Book: tPerpID, OrderID: h.id("mate"), Side: Sell,
		Size: lotsWei(1), TriggerPrice: stepsWei(200), Deadline: h.deadline()})
	h.expectEvents(h.tick(), "tcancel full")
	if got := h.triggers("a"); len(got) != 1 || got[0].ID != h.id("mate") {
		t.Fatalf("triggers left: %+v", got)
	}
}

// TestCancelTriggersOf: liquidation's entry point cancels every trigger of
// one owner, pending or stored, books and ids ascending; the pending
// submit then drains to nothing.
func TestCancelTriggersOf(t *testing.T) {
	h := newTrigHarness(t, Limits{OrdersMax: 16, PendingMax: 16})
	h.fundPerp("a")
	h.fundPerp("b")
	h.mustAdmit("a", []string{"x", "y"}, h.trigger(Sell, 1, 0, 90, TriggerStopLoss, 0), h.trigger(Sell, 1, 0, 80, TriggerStopLoss, 0))
	h.mustAdmit("b", []string{"other"}, h.trigger(Sell, 1, 0, 90, TriggerStopLoss, 0))
	h.perpTick()
	h.mustAdmit("a", []string{"z"}, h.trigger(Sell, 1, 0, 70, TriggerStopLoss, 0))
	h.out = TickResult{}
	h.e.cancelTriggersOf(owner("a"), &h.out)
	lines := h.format()
	if len(lines) != 3 || strings.Join(lines, ",") != strings.Join(h.sortedTriggerLines(lines), ",") ||
		strings.Contains(strings.Join(lines, ","), "other") {
		t.Fatalf("events %q, want a's three triggers cancelled by id", lines)
	}
	h.expectEvents(h.perpTick())
	if got := h.triggers("a"); len(got) != 0 {
		t.Fatalf("a keeps %+v", got)
	}
	if got := h.triggers("b"); len(got) != 1 {
		t.Fatalf("b's trigger: %+v", got)
	}
}

// sortedTriggerLines sorts "tcancel name" lines by the named ids.
func (h *harness) sortedTriggerLines(lines []string) []string {
	s := append([]string(nil), lines...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			a, b := h.id(strings.Fields(s[i])[1]), h.id(strings.Fields(s[j])[1])
			if bytes.Compare(b[:], a[:]) < 0 {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

// triggerScenario leaves triggers in every state: stored (one with a ttl),
// pending submit, pending cancel and update of stored ones, and an order a
// trigger became waiting in the ring.
func triggerScenario(t testing.TB) *harness {
	h := newTrigHarness(t, Limits{OrdersMax: 32, PendingMax: 32})
	h.fundPerp("a")
	h.fundPerp("b")
	ttl := h.trigger(Sell, 1, 0, 50, TriggerStopLoss, 0)
	ttl.TTL = 7 * uint64(h.iv)
	h.mustAdmit("a", []string{"sl", "tp", "ttl"}, h.trigger(Sell, 2, 0, 90, TriggerStopLoss, GroupingAsset),
		h.trigger(Sell, 2, 96, 110, TriggerTakeProfit, GroupingAsset), ttl)
	h.mustAdmit("b", []string{"b1", "b2", "b3"}, h.trigger(Buy, 1, 0, 120, TriggerStopLoss, 0),
		h.trigger(Buy, 3, 130, 125, TriggerStopLoss, GroupingAsset), h.trigger(Buy, 1, 0, 80, TriggerTakeProfit, 0))
	h.mustAdmit("b", []string{"bid"}, h.trigOrder(Buy, 2, 85))
	h.perpTick()
	h.setMark(89)
	h.perpTick() // sl fires: its order waits in the ring
	h.mustAdmit("a", []string{"new"}, h.trigger(Sell, 1, 0, 60, TriggerStopLoss, 0))
	h.mustAdmit("b", nil, Intent{Kind: IntentCancelTrigger, Book: tPerpID, OrderID: h.id("b1"), Deadline: h.deadline()},
		Intent{Kind: IntentUpdateTrigger, Book: tPerpID, OrderID: h.id("b2"), Side: Sell, Size: lotsWei(2),
			TriggerPrice: stepsWei(70), Deadline: h.deadline()})
	return h
}

// TestTriggerSnapshot: triggers in every state re-encode to the same bytes
// after LoadEngine, and the loaded engine runs the same ticks; the same
// inputs give the same events and bytes (determinism).
func TestTriggerSnapshot(t *testing.T) {
	h := triggerScenario(t)
	snap := h.e.AppendSnapshot(nil)
	if !bytes.Equal(snap, triggerScenario(t).e.AppendSnapshot(nil)) {
		t.Fatal("the same inputs gave different snapshots")
	}
	e, rest, err := LoadEngine(h.e.limits, snap)
	if err != nil || len(rest) != 0 {
		t.Fatalf("%v (%d bytes left)", err, len(rest))
	}
	if !bytes.Equal(e.AppendSnapshot(nil), snap) {
		t.Fatal("loaded engine re-encodes differently")
	}
	if err := checkTriggers(e); err != nil {
		t.Fatal(err)
	}
	h2 := &harness{t: t, e: e, acc: cloneAccounts(h.acc), iv: h.iv, nowUs: h.nowUs, nonce: h.nonce, names: h.names, ids: h.ids, owners: h.owners}
	h2.acc.engine = e // its supply check counts the loaded engine's positions
	for i, mark := range []int64{89, 70, 130, 60, 100, 100, 100} {
		h.setMark(mark)
		h2.setMark(mark)
		want, got := strings.Join(h.perpTick(), "\n"), strings.Join(h2.perpTick(), "\n")
		if got != want {
			t.Fatalf("tick %d: loaded engine:\n%s\noriginal:\n%s", i, got, want)
		}
		if !bytes.Equal(h.e.AppendSnapshot(nil), h2.e.AppendSnapshot(nil)) {
			t.Fatalf("tick %d: snapshots differ", i)
		}
	}
}

// TestTriggerSnapshotRefuses: trigger records a state cannot hold are load
// errors.
func TestTriggerSnapshotRefuses(t *testing.T) {
	f := func(name string, mutate func(h *harness), want string) {
		t.Helper()
		h := triggerScenario(t)
		mutate(h)
		_, _, err := LoadEngine(h.e.limits, h.e.AppendSnapshot(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: error %v, want one containing %q", name, err, want)
		}
	}
	trig := func(h *harness, name string) *trigger {
		ts := &h.e.book(tPerpID).trig
		i, ok := ts.search(ptrHash(h.id(name)))
		if !ok {
			h.t.Fatalf("no trigger %s", name)
		}
		return &ts.arena[ts.byID[i]]
	}
	f("type", func(h *harness) { trig(h, "b3").typ = 2 }, "grouping or flags")
	f("grouping", func(h *harness) { trig(h, "b3").grouping = 2 }, "grouping or flags")
	f("flags", func(h *harness) { trig(h, "b3").flags = FlagPostOnly }, "grouping or flags")
	f("size", func(h *harness) { trig(h, "b3").lots = 0 }, "out of range")
	f("trigger price", func(h *harness) { trig(h, "b3").trigSteps = 0 }, "out of range")
	f("expiry", func(h *harness) { trig(h, "ttl").expiresUs++ }, "expiry")
	f("pending with times", func(h *harness) { trig(h, "new").admitTickUs = 5 }, "tick times")
	f("zero id", func(h *harness) { trig(h, "b3").id = Hash{} }, "zero id")
	f("duplicate", func(h *harness) { trig(h, "b3").id = h.id("new") }, "twice")
	f("order", func(h *harness) {
		ts := &h.e.book(tPerpID).trig
		ts.byID[0], ts.byID[1] = ts.byID[1], ts.byID[0]
	}, "after trigger")
	h := triggerScenario(t)
	snap := h.e.AppendSnapshot(nil)
	// The pending cancel names b1 by id before the stored b1 is written.
	b1 := h.id("b1")
	bad := bytes.Clone(snap)
	bad[bytes.Index(bad, b1[:])+3] ^= 0xff
	if _, _, err := LoadEngine(h.e.limits, bad); err == nil || !strings.Contains(err.Error(), "not live") {
		t.Fatalf("cancel target: %v", err)
	}
	if _, _, err := LoadEngine(Limits{OrdersMax: 4, PendingMax: 32}, snap); err == nil || !strings.Contains(err.Error(), "trigger") {
		t.Fatalf("5 triggers, OrdersMax 4: %v", err)
	}
	for n := range len(snap) {
		if _, _, err := LoadEngine(h.e.limits, snap[:n]); err == nil {
			t.Fatalf("a snapshot cut at byte %d of %d loads", n, len(snap))
		}
	}
}

// TestTriggerAllocs: admitting a trigger and ticking with stored triggers
// (none firing, one firing and its order trading) allocate nothing.
func TestTriggerAllocs(t *testing.T) {
	h := newTrigHarness(t, Limits{OrdersMax: 256, PendingMax: 64})
	for _, who := range []string{"a", "b"} {
		h.fundPerp(who)
	}
	a := &Admission{}
	env := &Envelope{Intents: make([]Intent, 1)}
	T := int64(0)
	admit := func(who string, in Intent) {
		a.Signer, a.Owner = owner(who), owner(who)
		a.Nonce++
		a.NowUs = T + 1
		in.Deadline = uint64(T + h.iv)
		env.Intents[0] = in
		if r := h.e.Admit(a, env, h.acc); r != OK {
			t.Fatalf("admit: %v", r)
		}
	}
	for i := range 100 { // stored triggers that never fire
		admit("a", h.trigger(Sell, 1, 0, 1+int64(i%10), TriggerStopLoss, 0))
		if i%10 == 9 {
			T += h.iv
			h.e.Tick(T, h.acc, &h.out)
		}
	}
	bid, sl := h.trigOrder(Buy, 1, 75), h.trigger(Sell, 1, 0, 90, TriggerStopLoss, 0)
	prices := [2]uint256.Int{stepsWei(100), stepsWei(80)}
	mark, fills := 0, 0
	cycle := func() { // a stop fires and trades in the next tick
		admit("b", bid)
		admit("a", sl)
		T += h.iv
		h.e.Tick(T, h.acc, &h.out)
		for i := range h.out.Events {
			if h.out.Events[i].Kind == EventFill {
				fills++
			}
		}
		mark = 1 - mark // 80, 100, 80, ...
		if r := h.e.SetOraclePrice(tPerpID, &prices[mark]); r != OK {
			t.Fatal(r)
		}
		admit("a", sl)
		T += h.iv
		h.e.Tick(T, h.acc, &h.out)
	}
	for range 50 {
		cycle()
	}
	if fills == 0 {
		t.Fatal("no fired order traded")
	}
	if n := testing.AllocsPerRun(100, cycle); n != 0 {
		t.Fatalf("trigger cycle: %v allocations per run", n)
	}
	admitTick := func() { // stored and fired at once (the mark is below it): no bid, so cancelled
		admit("a", sl)
		T += h.iv
		h.e.Tick(T, h.acc, &h.out)
	}
	if n := testing.AllocsPerRun(100, admitTick); n != 0 {
		t.Fatalf("trigger admission and tick: %v allocations per run", n)
	}
	if err := checkEngine(h.e, h.acc); err != nil {
		t.Fatal(err)
	}
}

// TestTriggerFiringTable: the live ABI's table, with its enum numbers
// (enum TriggerType { TakeProfit, StopLoss }): a buy take-profit and a
// sell stop-loss fire when the mark is at or below the trigger price, a
// buy stop-loss and a sell take-profit when it is at or above; none fires
// while the mark is on the other side.
func TestTriggerFiringTable(t *testing.T) {
	const takeProfit, stopLoss = 0, 1 // the ABI's values, not our constants
	f := func(name string, side Side, typ uint8, trig, near int64) {
		t.Helper()
		h := newTrigHarness(t, Limits{OrdersMax: 16, PendingMax: 16})
		h.fundPerp("a")
		h.mustAdmit("a", []string{name}, h.trigger(side, 1, 0, trig, typ, GroupingNone))
		h.expectEvents(h.perpTick()) // the mark, 100, is on the other side
		h.setMark(near)              // one step short of the trigger
		h.expectEvents(h.perpTick())
		h.setMark(trig) // at the trigger price
		h.expectEvents(h.perpTick(), "fired "+name)
	}
	f("buy-take-profit", Buy, takeProfit, 90, 91)
	f("buy-stop-loss", Buy, stopLoss, 110, 109)
	f("sell-take-profit", Sell, takeProfit, 110, 109)
	f("sell-stop-loss", Sell, stopLoss, 90, 91)
	if TriggerTakeProfit != takeProfit || TriggerStopLoss != stopLoss || GroupingNone != 0 || GroupingAsset != 1 {
		t.Fatal("trigger constants differ from the live ABI's enums")
	}
}

// TestTriggerAssetGrouping: a long with an Asset take-profit (fired, its
// limit order resting), an Asset stop-loss and a None stop-loss. A manual
// close makes the position flat: at the end of that tick the resting
// order and the Asset stop are cancelled, before the triggers fire (the
// mark crossed the stop in the same tick), while the None stop survives.
// An Asset trigger armed while flat stays until a position opens and goes
// flat; a grouping other than None or Asset is refused.
func TestTriggerAssetGrouping(t *testing.T) {
	h := newTrigHarness(t, Limits{OrdersMax: 32, PendingMax: 32})
	for _, who := range []string{"a", "b", "c"} {
		h.fundPerp(who)
	}
	h.mustAdmit("a", []string{"open"}, h.trigOrder(Buy, 2, 100))
	h.mustAdmit("b", []string{"counter"}, h.trigOrder(Sell, 2, 100))
	h.perpTick()
	if s, _ := h.pos(tPerpID, "a"); s != 2 {
		t.Fatalf("a's position %d, want 2", s)
	}
	bad := h.trigger(Sell, 2, 0, 90, TriggerStopLoss, 2)
	if r := h.admit("a", nil, bad); r != ReasonTriggerGrouping {
		t.Fatalf("grouping 2: %v", r)
	}
	h.mustAdmit("a", []string{"tp", "sl", "keep"}, h.trigger(Sell, 2, 130, 105, TriggerTakeProfit, GroupingAsset),
		h.trigger(Sell, 2, 0, 90, TriggerStopLoss, GroupingAsset), h.trigger(Sell, 1, 0, 80, TriggerStopLoss, GroupingNone))
	h.mustAdmit("c", []string{"flat-armed"}, h.trigger(Buy, 1, 0, 150, TriggerStopLoss, GroupingAsset))
	h.expectEvents(h.perpTick())
	h.setMark(105)
	h.expectEvents(h.perpTick(), "fired tp")
	h.setMark(100)
	h.expectEvents(h.perpTick(), "placed tp") // rests: no bid at 130
	if o, ok := h.e.Order(h.id("tp")); !ok || o.Pending || o.Price != stepsWei(130) {
		t.Fatalf("tp's order: %+v (live %v)", o, ok)
	}
	// The close trades at 100 while the mark falls through the stop.
	h.mustAdmit("a", []string{"close"}, h.trigOrder(Sell, 2, 100))
	h.mustAdmit("b", []string{"cover"}, h.trigOrder(Buy, 2, 100))
	h.setMark(89)
	h.expectEvents(h.perpTick(), "placed close", "placed cover", "fill cover 2@100 T", "fill close 2@100 T", "cancel tp", "tcancel sl")
	if s, _ := h.pos(tPerpID, "a"); s != 0 {
		t.Fatalf("a's position %d after the close", s)
	}
	if got := h.triggers("a"); len(got) != 1 || got[0].ID != h.id("keep") {
		t.Fatalf("a's triggers after the close: %+v", got)
	}
	if _, ok := h.e.Order(h.id("tp")); ok {
		t.Fatal("the take-profit's order survived the close")
	}
	if got := h.triggers("c"); len(got) != 1 {
		t.Fatalf("c's trigger, armed while flat: %+v", got)
	}
	// The stop's price again: nothing of a's fires, a stays flat.
	h.setMark(85)
	h.expectEvents(h.perpTick())
	if s, _ := h.pos(tPerpID, "a"); s != 0 {
		t.Fatalf("a's position %d", s)
	}
	snap := h.e.AppendSnapshot(nil)
	e, _, err := LoadEngine(h.e.limits, snap)
	if err != nil || !bytes.Equal(e.AppendSnapshot(nil), snap) {
		t.Fatalf("reload: %v", err)
	}
	// c opens a short and closes it: its Asset trigger goes with it.
	h.setMark(100)
	h.mustAdmit("c", []string{"c-open"}, h.trigOrder(Sell, 1, 100))
	h.mustAdmit("b", []string{"b-buy"}, h.trigOrder(Buy, 1, 100))
	h.perpTick()
	if got := h.triggers("c"); len(got) != 1 {
		t.Fatalf("c's trigger while short: %+v", got)
	}
	h.mustAdmit("c", []string{"c-close"}, h.trigOrder(Buy, 1, 100))
	h.mustAdmit("b", []string{"b-sell"}, h.trigOrder(Sell, 1, 100))
	got := h.perpTick()
	if len(got) == 0 || got[len(got)-1] != "tcancel flat-armed" {
		t.Fatalf("c's close: %q", got)
	}
}

// TestTriggerAssetOrderSnapshot: an Asset trigger's resting order keeps
// its binding through a snapshot: the loaded engine cancels it when the
// position goes flat, and a snapshot claiming it on a spot book is
// refused.
func TestTriggerAssetOrderSnapshot(t *testing.T) {
	h := newTrigHarness(t, Limits{OrdersMax: 32, PendingMax: 32})
	h.fundPerp("a")
	h.fundPerp("b")
	h.mustAdmit("a", nil, h.trigOrder(Buy, 2, 100))
	h.mustAdmit("b", nil, h.trigOrder(Sell, 2, 100))
	h.mustAdmit("a", []string{"tp"}, h.trigger(Sell, 2, 130, 100, TriggerTakeProfit, GroupingAsset))
	h.perpTick()
	h.perpTick() // tp fired at the mark of 100
	h.perpTick() // its order rests
	snap := h.e.AppendSnapshot(nil)
	e, _, err := LoadEngine(h.e.limits, snap)
	if err != nil {
		t.Fatal(err)
	}
	if s := e.book(tPerpID).index.find(ptrHash(h.id("tp")), e.book(tPerpID).ords); s == 0 || !e.book(tPerpID).ords[s].assetBound {
		t.Fatal("the loaded order lost its binding")
	}
	h.e = e
	h.acc.engine = e
	h.mustAdmit("a", []string{"close"}, h.trigOrder(Sell, 2, 100))
	h.mustAdmit("b", []string{"cover"}, h.trigOrder(Buy, 2, 100))
	if got := h.perpTick(); len(got) == 0 || got[len(got)-1] != "cancel tp" {
		t.Fatalf("close after reload: %q", got)
	}
	// The binding byte of a spot order: the spot book's first order.
	s := newHarness(t, Limits{OrdersMax: 8, PendingMax: 8})
	s.fund("x", 1_000_000, 1_000_000)
	s.mustAdmit("x", []string{"o"}, s.limit(Buy, 1, 100, 0))
	s.tick()
	spot := s.e.AppendSnapshot(nil)
	id := s.id("o")
	at := bytes.Index(spot, id[:]) + 32 + 20 + 4
	if spot[at] != 0 {
		t.Fatalf("binding byte %d", spot[at])
	}
	spot[at] = 1
	if _, _, err := LoadEngine(s.e.limits, spot); err == nil || !strings.Contains(err.Error(), "spot book") {
		t.Fatalf("asset-bound spot order: %v", err)
	}
}

// TestTriggerSweepAllocs: a position that opens and goes flat with an
// Asset trigger armed, each cycle (the flat sweep cancels the trigger)
// allocates nothing.
func TestTriggerSweepAllocs(t *testing.T) {
	h := newTrigHarness(t, Limits{OrdersMax: 256, PendingMax: 64})
	for _, who := range []string{"a", "b"} {
		h.fundPerp(who)
	}
	a := &Admission{}
	env := &Envelope{Intents: make([]Intent, 1)}
	T := int64(0)
	admit := func(who string, in Intent) {
		a.Signer, a.Owner = owner(who), owner(who)
		a.Nonce++
		a.NowUs = T + 1
		in.Deadline = uint64(T + h.iv)
		env.Intents[0] = in
		if r := h.e.Admit(a, env, h.acc); r != OK {
			t.Fatalf("admit: %v", r)
		}
	}
	buy, sell := h.trigOrder(Buy, 1, 100), h.trigOrder(Sell, 1, 100)
	stop := h.trigger(Sell, 1, 0, 50, TriggerStopLoss, GroupingAsset)
	swept := 0
	cycle := func() {
		admit("a", buy)
		admit("b", sell)
		admit("a", stop)
		T += h.iv
		h.e.Tick(T, h.acc, &h.out)
		admit("a", sell)
		admit("b", buy)
		T += h.iv
		h.e.Tick(T, h.acc, &h.out)
		for i := range h.out.Events {
			if h.out.Events[i].Kind == EventTriggerCancel {
				swept++
			}
		}
	}
	for range 20 {
		cycle()
	}
	if swept != 20 {
		t.Fatalf("%d sweeps in 20 cycles", swept)
	}
	if n := testing.AllocsPerRun(100, cycle); n != 0 {
		t.Fatalf("open, arm, close: %v allocations per run", n)
	}
	if err := checkEngine(h.e, h.acc); err != nil {
		t.Fatal(err)
	}
}
