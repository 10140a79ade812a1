package clob

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// loadScenario is a state with a bit of everything: resting orders on both
// sides at several levels, one with a ttl (in the expiry heap), a last
// price, and pending intents of every kind: a submit, a cancel and an update
// of resting orders, an update of the pending submit, and a transfer.
func loadScenario(t testing.TB) *harness {
	h := newHarness(t, Limits{OrdersMax: 64, PendingMax: 64})
	for _, who := range []string{"a", "b", "c", "d"} {
		h.fund(who, 1000, 1_000_000)
	}
	h.order("a", "bid1", Buy, 2, 9, 0)
	h.order("a", "bid2", Buy, 3, 8, 0)
	h.order("b", "ask1", Sell, 2, 11, 0)
	h.order("b", "cross", Sell, 1, 9, 0)
	in := h.limit(Sell, 4, 12, 0)
	in.TTL = 5 * uint64(h.iv)
	h.mustAdmit("b", []string{"ttl"}, in)
	h.tick()
	h.order("c", "new", Buy, 1, 7, 0)
	h.mustAdmit("a", nil, Intent{Kind: IntentCancel, Book: tBookID, OrderID: h.id("bid2"), Deadline: h.deadline()})
	if r := h.update("b", "ask1", 1, 11); r != OK {
		t.Fatal(r)
	}
	if r := h.update("c", "new", 2, 7); r != OK {
		t.Fatal(r)
	}
	h.mustAdmit("d", nil, Intent{Kind: IntentTransfer, Token: tQuote, To: owner("a"), Amount: lotsWei(1),
		Deadline: uint64(landing(h.nowUs, TransferIntervalUs))})
	return h
}

// TestLoadEngineScenario: the scenario loads, re-encodes to its bytes,
// passes every invariant check against the same ledger, and then runs the
// same ticks as the original.
func TestLoadEngineScenario(t *testing.T) {
	h := loadScenario(t)
	snap := h.e.AppendSnapshot(nil)
	e, rest, err := LoadEngine(h.e.limits, append(bytes.Clone(snap), "trailer"...))
	if err != nil {
		t.Fatal(err)
	}
	if string(rest) != "trailer" || !bytes.Equal(e.AppendSnapshot(nil), snap) {
		t.Fatalf("rest %q; re-encodes equal: %v", rest, bytes.Equal(e.AppendSnapshot(nil), snap))
	}
	if err := checkEngine(e, h.acc); err != nil {
		t.Fatal(err)
	}
	if e.books[0].expiry.len() != 1 || e.books[0].pending.len() != 4 || e.transfers.len() != 1 {
		t.Fatalf("scenario: %d expiring, %d pending, %d transfers", e.books[0].expiry.len(), e.books[0].pending.len(), e.transfers.len())
	}
	// Run both for a few ticks, each with its own ledger copy.
	h2 := &harness{t: t, e: e, acc: cloneAccounts(h.acc), iv: h.iv, nowUs: h.nowUs, names: h.names, ids: h.ids, owners: h.owners}
	for range 8 {
		want, got := strings.Join(h.tick(), "\n"), strings.Join(h2.tick(), "\n")
		if got != want {
			t.Fatalf("loaded engine's tick:\n%s\noriginal's:\n%s", got, want)
		}
	}
}

func cloneAccounts(a *testAccounts) *testAccounts {
	c := newTestAccounts()
	for k, b := range a.bal {
		v := *b
		c.bal[k] = &v
	}
	for k, v := range a.fees {
		c.fees[k] = v.Clone()
	}
	for k, v := range a.supply {
		c.supply[k] = v.Clone()
	}
	return c
}

// TestLoadEngineRefuses: each way a snapshot can describe a state the engine
// cannot be in is an error naming it, never a panic.
func TestLoadEngineRefuses(t *testing.T) {
	f := func(name string, mutate func(h *harness), want string) {
		t.Helper()
		h := loadScenario(t)
		mutate(h)
		_, _, err := LoadEngine(h.e.limits, h.e.AppendSnapshot(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: error %v, want one containing %q", name, err, want)
		}
	}
	slot := func(h *harness, name string) uint32 {
		return h.e.books[0].index.find(ptrHash(h.id(name)), h.e.books[0].ords)
	}
	node := func(h *harness, name string) *node { return &h.e.books[0].nodes[slot(h, name)] }
	ord := func(h *harness, name string) *order { return &h.e.books[0].ords[slot(h, name)] }
	f("side", func(h *harness) { node(h, "bid1").side = 2 }, "side 2")
	f("type", func(h *harness) { node(h, "bid1").typ = 5 }, "type 5")
	f("flags", func(h *harness) { node(h, "bid1").flags = 0x80 }, "flags 0x80")
	f("resting IOC", func(h *harness) { node(h, "bid1").flags = FlagIOC }, "IOC order rests")
	f("resting market", func(h *harness) { node(h, "bid1").typ = Market }, "IOC order rests")
	f("no lots", func(h *harness) { node(h, "bid1").remLots = 0 }, "0 lots")
	f("price range", func(h *harness) { node(h, "new").priceSteps = unitsMax + 1 }, "lots at")
	f("state", func(h *harness) { node(h, "bid1").state = stateNew }, "state 2")
	f("pending with tick", func(h *harness) { node(h, "new").queueTick = 5 }, "tick times")
	f("update count", func(h *harness) { ord(h, "bid1").pendingUpdates = 1; ord(h, "bid1").settled.SetOne() }, "pending updates")
	f("zero id", func(h *harness) { ord(h, "bid1").id = Hash{} }, "zero id")
	f("duplicate id", func(h *harness) { ord(h, "ask1").id = h.id("bid1") }, "twice")
	f("level order", func(h *harness) {
		lv := h.e.books[0].sides[Buy]
		lv[0], lv[1] = lv[1], lv[0]
	}, "out of order")
	f("level mismatch", func(h *harness) { h.e.books[0].sides[Buy][0].priceSteps = 3 }, "in level")
	f("level count", func(h *harness) { h.e.books[0].sides[Sell][0].count = 0 }, "empty level")
	f("intent kind", func(h *harness) { h.e.books[0].pending.at(1).kind = 9 }, "kind 9")
	f("intent order", func(h *harness) { h.e.books[0].pending.at(0).seq = 99 }, "envelope 99")
	f("update size", func(h *harness) { h.e.books[0].pending.at(2).newLots = 0 }, "update to 0 lots")
	f("transfer order", func(h *harness) { h.e.transfers.at(0).seq = h.e.seq }, "envelope")
	f("book tick", func(h *harness) { h.e.books[0].lastTickUs = 7 }, "off the")
	f("price flag", func(h *harness) { h.e.books[0].hasPrice = false }, "last price")
	f("price range", func(h *harness) { h.e.books[0].priceHalf = 0 }, "last price")
	f("market", func(h *harness) { h.e.books[0].cfg.LotSize.Clear() }, "lot size")
	f("book order", func(h *harness) {
		m := testMarket(Hash{0x00}, h.iv)
		if err := h.e.CreateMarket(&m); err != nil {
			t.Fatal(err)
		}
		h.e.books[0], h.e.books[1] = h.e.books[1], h.e.books[0]
	}, "after book")

	h := loadScenario(t)
	snap := h.e.AppendSnapshot(nil)
	g := func(name string, l Limits, b []byte, want string) {
		t.Helper()
		if _, _, err := LoadEngine(l, b); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: error %v, want one containing %q", name, err, want)
		}
	}
	g("magic", h.e.limits, append([]byte("CLOB0"), snap[5:]...), "magic")
	g("orders", Limits{OrdersMax: 4, PendingMax: 64}, snap, "OrdersMax")
	g("pending", Limits{OrdersMax: 64, PendingMax: 2}, snap, "4 pending intents, at most 2")
	// The cancel names bid2 by id; changing that id (its last occurrence)
	// makes it name an order that is not live.
	id := h.id("bid2")
	bad := bytes.Clone(snap)
	bad[bytes.LastIndex(bad, id[:])] ^= 0xff
	g("cancel target", h.e.limits, bad, "not live")
	// bid1's settled reservation, written as zero: it has no pending update.
	bid1 := h.id("bid1")
	bad = bytes.Clone(snap)
	bad[bytes.Index(bad, bid1[:])+32+20+4+5*8+2*8+4+32+31] = 1
	g("settled", h.e.limits, bad, "settled")
	for n := range len(snap) {
		if _, _, err := LoadEngine(h.e.limits, snap[:n]); err == nil {
			t.Fatalf("a snapshot cut at byte %d of %d loads", n, len(snap))
		}
	}
}

func ptrHash(h Hash) *Hash { return &h }

// TestLoadEngineMidStream: the random driver's streams, with the engine
// replaced now and then by one loaded from its snapshot; the harness checks
// every invariant (heap positions, index, level links and volumes, locks)
// after every admission and tick, so a loaded engine that is only
// superficially right fails here.
func TestLoadEngineMidStream(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 0x10ad))
		l := Limits{OrdersMax: 16 + r.IntN(200), PendingMax: 64}
		d := newDriver(t, randSource{r}, l)
		for i := range 2000 {
			d.step()
			if i%97 != 0 {
				continue
			}
			snap := d.h.e.AppendSnapshot(nil)
			e, rest, err := LoadEngine(l, snap)
			if err != nil || len(rest) != 0 {
				t.Fatalf("seed %d step %d: %v (%d bytes left)", seed, i, err, len(rest))
			}
			if err := checkEngine(e, d.h.acc); err != nil {
				t.Fatalf("seed %d step %d: loaded engine: %v", seed, i, err)
			}
			d.h.e = e
		}
	}
}

// FuzzLoadEngine: no input panics LoadEngine; whatever loads re-encodes to
// the bytes it consumed, and keeps running (ticks) without panicking. The
// seeds are small on purpose (see FuzzLoadSnapshot in package core).
func FuzzLoadEngine(f *testing.F) {
	h := loadScenario(f)
	f.Add(h.e.AppendSnapshot(nil))
	h.tick()
	f.Add(h.e.AppendSnapshot(nil))
	f.Add(NewEngine(h.e.limits).AppendSnapshot(nil))
	f.Add(triggerScenario(f).e.AppendSnapshot(nil))
	l := h.e.limits
	f.Fuzz(func(t *testing.T, data []byte) {
		e, rest, err := LoadEngine(l, data)
		if err != nil {
			return
		}
		if got := e.AppendSnapshot(nil); !bytes.Equal(got, data[:len(data)-len(rest)]) {
			t.Fatalf("loaded %d bytes, re-encoded %d different ones", len(data)-len(rest), len(got))
		}
		acc := newTestAccounts() // records what goes wrong, never panics
		var out TickResult
		for range 3 {
			T, ok := e.NextTickDue(1 << 62)
			if !ok {
				break
			}
			e.Tick(T, acc, &out)
		}
	})
}
