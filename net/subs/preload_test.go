package subs

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
)

// replayCase is one subscription made on both hubs under comparison.
type replayCase struct{ typ, params string }

// replayCases subscribes every tick-driven and state channel, with filters,
// at since values around every boundary of ticks (the published ones).
func replayCases(g *tickGen, ticks []*tickrec.Tick) []replayCase {
	n := len(ticks)
	sinces := []int64{0, ticks[0].TickUs - 1, ticks[0].TickUs, ticks[1].TickUs, ticks[n/2].TickUs, ticks[n/2].TickUs + 1,
		ticks[n-2].TickUs, ticks[n-1].TickUs - 1, ticks[n-1].TickUs, ticks[n-1].TickUs + 1<<40}
	if n > 128 { // around the floor of a 128-tick buffer
		f := ticks[n-129].TickUs
		sinces = append(sinces, f-1, f, f+1, ticks[n-128].TickUs)
	}
	b, o := g.books, g.owners
	delta := []replayCase{
		{"svc_orderbook", `{}`},
		{"svc_orderbook", `{"depth":2}`},
		{"svc_orderbook", `{"orderbook_ids":["` + hexHash(b[0]) + `"]}`},
		{"svc_candles", `{}`},
		{"svc_orders", `{}`},
		{"svc_orders", `{"bidder":"` + hexAddr(o[0]) + `"}`},
		{"svc_orders_v2", `{}`},
		{"svc_orders_v2", `{"bidder":"` + hexAddr(o[1]) + `"}`},
		{"svc_orders_v2", `{"bidders":["` + hexAddr(o[0]) + `","` + hexAddr(o[2]) + `"]}`},
		{"svc_transfers", `{}`},
		{"svc_transfers", `{"account":"` + hexAddr(o[3]) + `"}`},
		{"svc_withdrawals", `{}`},
		{"svc_withdrawals", `{"account":"` + hexAddr(o[4]) + `"}`},
	}
	var out []replayCase
	for _, c := range delta {
		out = append(out, c)
		for _, s := range sinces {
			out = append(out, replayCase{c.typ, strings.Replace(c.params, "{", fmt.Sprintf(`{"since":%d,`, s), 1)})
		}
	}
	for _, s := range sinces {
		out = append(out, replayCase{"svc_orders_v2", fmt.Sprintf(`{"since":%d,"since_book":"%s"}`, s, hexHash(b[1]))})
	}
	for i := range out {
		out[i].params = strings.Replace(out[i].params, ",}", "}", 1)
	}
	return append(out,
		replayCase{"svc_markets", `{}`},
		replayCase{"svc_markets", `{"orderbook_ids":["` + hexHash(b[2]) + `"]}`},
		replayCase{"svc_positions", `{"account":"` + hexAddr(o[0]) + `"}`},
		replayCase{"svc_positions", `{"account":"` + hexAddr(o[5]) + `"}`},
		replayCase{"svc_positions", `{"account":"` + hexAddr(addr(0xee)) + `"}`}, // never touched
		replayCase{"svc_triggers", `{"account":"` + hexAddr(o[0]) + `"}`},
		replayCase{"newHeads", ``},
	)
}

// refConn keeps references to what the hub sends (the hub never modifies
// a slice it has passed to Send), without the copies of fakeConn.
type refConn struct {
	msgs   [][2][]byte // head, body (the tail is constant)
	closes []string
}

func (c *refConn) Send(head, body, tail []byte) bool {
	c.msgs = append(c.msgs, [2][]byte{head, body})
	return true
}

func (c *refConn) SendClose(msg []byte) { c.closes = append(c.closes, string(msg)) }

func (c *refConn) RemoteIP() netip.Addr { return netip.Addr{} }

// compareHubs makes every case's subscription on both hubs, then publishes
// live to both, and returns every difference in what the subscriptions
// got (errors, notifications, closes), and how many notifications matched
// per channel.
func compareHubs(t *testing.T, a, b *Hub, cases []replayCase, liveA, liveB []*tickrec.Tick) (diffs []string, matched map[string]int) {
	t.Helper()
	matched = map[string]int{}
	ca, cb := make([]*refConn, len(cases)), make([]*refConn, len(cases))
	for i, c := range cases {
		ca[i], cb[i] = &refConn{}, &refConn{}
		idA, errA := subscribeErr(a, ca[i], c.typ, c.params)
		idB, errB := subscribeErr(b, cb[i], c.typ, c.params)
		if fmt.Sprint(errA) != fmt.Sprint(errB) || idA != idB {
			diffs = append(diffs, fmt.Sprintf("%s %s: subscribe: live (%q, %v), preloaded (%q, %v)", c.typ, c.params, idA, errA, idB, errB))
			continue
		}
		if errA == nil {
			a.Activate(ca[i], idA)
			b.Activate(cb[i], idB)
		}
	}
	for i := range liveA {
		a.PublishTick(liveA[i])
		b.PublishTick(liveB[i])
		a.Pump()
		b.Pump()
	}
	for i, c := range cases {
		ma, mb := ca[i].msgs, cb[i].msgs
		for j := range max(len(ma), len(mb)) {
			switch {
			case j >= len(ma) || j >= len(mb):
				diffs = append(diffs, fmt.Sprintf("%s %s: %d notifications live, %d preloaded", c.typ, c.params, len(ma), len(mb)))
			case !bytes.Equal(ma[j][0], mb[j][0]) || !bytes.Equal(ma[j][1], mb[j][1]):
				diffs = append(diffs, fmt.Sprintf("%s %s: notification %d:\n live      %.300s\n preloaded %.300s",
					c.typ, c.params, j, string(ma[j][0])+string(ma[j][1]), string(mb[j][0])+string(mb[j][1])))
			default:
				matched[c.typ]++
				continue
			}
			break
		}
		if fmt.Sprint(ca[i].closes) != fmt.Sprint(cb[i].closes) {
			diffs = append(diffs, fmt.Sprintf("%s %s: closes live %v, preloaded %v", c.typ, c.params, ca[i].closes, cb[i].closes))
		}
	}
	return diffs, matched
}

// viaCodec returns the ticks as a restart gets them back: decoded from
// their encoding.
func viaCodec(t *testing.T, ticks []*tickrec.Tick) []*tickrec.Tick {
	t.Helper()
	out := make([]*tickrec.Tick, len(ticks))
	var buf []byte
	for i, tk := range ticks {
		buf = tickrec.AppendTick(buf[:0], tk)
		d, err := tickrec.DecodeTick(buf)
		if err != nil {
			t.Fatalf("tick %d: %v", tk.TickUs, err)
		}
		out[i] = d
	}
	return out
}

// A hub that published ticks live and a fresh hub given the same ticks
// through the codec and Preload send byte-identical notifications on every
// channel, for every since, and keep doing so on the live ticks after.
func TestPreloadMatchesLive(t *testing.T) {
	const replay = 128
	type scenario struct {
		name      string
		ticks     int // generated before the restart
		from      int // the live hub starts at ticks[from] (FloorUs = ticks[from-1]); ticks[from-1:] are preloaded
		preload   int // preload only the newest this many (0: from on)
		positions bool
	}
	for _, sc := range []scenario{
		{name: "genesis", ticks: 100, positions: true},
		{name: "evicted", ticks: 300, positions: true},
		// A restart reads back only the newest ReplayTicks+1: the oldest
		// gives the floor. Positions differ: the live hub still holds
		// entries from ticks the preloaded one never saw.
		{name: "newest only", ticks: 300, preload: replay + 1},
		// The first preloaded tick has a parent: the ticks before it are
		// unknown, it only bounds the range. The live hub started at it.
		{name: "not from genesis", ticks: 100, from: 10},
	} {
		t.Run(sc.name, func(t *testing.T) {
			seed := uint64(len(sc.name)*1000 + sc.ticks)
			g := newTickGen(seed, 3, 12)
			all := g.ticks(sc.ticks+20, 20)
			before, after := all[:sc.ticks], all[sc.ticks:]
			cfg := Config{ReplayTicks: replay, Markets: g.markets, Positions: g.positions, Triggers: g.triggers}

			liveCfg := cfg
			liveFrom := 0
			if sc.from > 0 {
				liveCfg.FloorUs, liveFrom = before[sc.from-1].TickUs, sc.from
			}
			live := New(liveCfg)
			for _, tk := range before[liveFrom:] {
				live.PublishTick(tk)
				live.Pump()
			}

			pre := before[max(0, sc.from-1):]
			if sc.preload > 0 {
				pre = before[len(before)-sc.preload:]
			}
			restCfg := cfg
			restCfg.FloorUs = before[len(before)-1].TickUs
			restored := New(restCfg)
			if err := restored.Preload(viaCodec(t, pre)); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}

			cases := replayCases(g, before)
			if !sc.positions {
				cases = dropChannel(cases, "svc_positions")
			}
			diffs, matched := compareHubs(t, live, restored, cases, after, viaCodec(t, after))
			if len(diffs) > 0 {
				t.Fatalf("seed %d: %d differences, first ones:\n%s", seed, len(diffs), strings.Join(diffs[:min(5, len(diffs))], "\n"))
			}
			for _, c := range cases {
				if matched[c.typ] == 0 {
					t.Fatalf("seed %d: no %s notification compared: %v", seed, c.typ, matched)
				}
			}
			t.Logf("seed %d: %d subscriptions, identical notifications %v", seed, len(cases), matched)
		})
	}
}

func dropChannel(cs []replayCase, typ string) []replayCase {
	out := cs[:0:0]
	for _, c := range cs {
		if c.typ != typ {
			out = append(out, c)
		}
	}
	return out
}

// The comparison of TestPreloadMatchesLive detects a preloaded tick that
// differs in one level's volume by one wei, and a preload that misses a tick.
func TestPreloadComparisonCanFail(t *testing.T) {
	g := newTickGen(3, 3, 12)
	all := g.ticks(60, 20)
	before, after := all[:50], all[50:]
	cfg := Config{ReplayTicks: 128, Markets: g.markets, Positions: g.positions, Triggers: g.triggers}
	f := func(name string, edit func([]*tickrec.Tick) []*tickrec.Tick) {
		t.Helper()
		live := New(cfg)
		for _, tk := range before {
			live.PublishTick(tk)
			live.Pump()
		}
		restCfg := cfg
		restCfg.FloorUs = before[len(before)-1].TickUs
		restored := New(restCfg)
		if err := restored.Preload(edit(viaCodec(t, before))); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		diffs, _ := compareHubs(t, live, restored, replayCases(g, before), after, viaCodec(t, after))
		if len(diffs) == 0 {
			t.Fatalf("%s: no difference found", name)
		}
	}
	f("level volume", func(ts []*tickrec.Tick) []*tickrec.Tick {
		v := &ts[30].Books[0].Snapshot.Buys[0].Volume
		v.AddUint64(v, 1)
		return ts
	})
	f("tick missing", func(ts []*tickrec.Tick) []*tickrec.Tick {
		ts[31].ParentHash = ts[29].Hash
		return append(ts[:30:30], ts[31:]...)
	})
}

// chain returns ticks at from×1000 … to×1000, one book each, each the
// parent of the next; the first has no parent when genesis.
func chain(from, to int, genesis bool) []*tickrec.Tick {
	var out []*tickrec.Tick
	for i := from; i <= to; i++ {
		tk := newTick(int64(i)*1000).book(bookID(1), true, nil).t
		tk.Hash = txHash(byte(i))
		tk.Hash[1] = byte(i >> 8)
		switch {
		case i > from:
			tk.ParentHash = out[len(out)-1].Hash
		case !genesis:
			tk.ParentHash = orderID(0xfe)
		}
		out = append(out, tk)
	}
	return out
}

func TestPreloadFloor(t *testing.T) {
	f := func(name string, ticks []*tickrec.Tick, params string, want string) {
		t.Helper()
		h := New(Config{ReplayTicks: 128, FloorUs: ticks[len(ticks)-1].TickUs})
		if err := h.Preload(ticks); err != nil {
			t.Fatal(err)
		}
		c := &fakeConn{}
		id, err := subscribeErr(h, c, "svc_orders_v2", params)
		if err != nil {
			if want != "-32602" || err.Code != -32602 {
				t.Fatalf("%s %s: %v, want %s", name, params, err, want)
			}
			return
		}
		h.Activate(c, id)
		var got []string
		for _, r := range results(t, c, id) {
			got = append(got, fmt.Sprint(r["batch"]))
		}
		if g := strings.Join(got, " "); g != want {
			t.Fatalf("%s %s: got %q, want %q", name, params, g, want)
		}
	}
	book := `,"since_book":"` + hexHash(bookID(0)) + `"`
	genesis := chain(1, 4, true)
	for i, tk := range genesis { // svc_orders_v2 needs events
		tk.Result.Events = []clob.Event{{Kind: clob.EventCancel, Book: bookID(1), OrderID: orderID(byte(i)), Owner: addr(1)}}
		tk.Result.Books[0].EndEvent = 1
	}
	f("genesis", genesis, `{"since":0}`, "1000 2000 3000 4000")
	f("genesis", genesis, `{"since":1000}`, "2000 3000 4000")
	f("genesis", genesis, `{"since":1000`+book+`}`, "1000 2000 3000 4000")
	f("genesis", genesis, `{"since":4000}`, "")
	f("genesis", genesis, `{}`, "")
	later := viaCodecNoT(genesis)
	later[0].ParentHash = orderID(0xfe) // ticks before 1000 existed
	f("later", later, `{"since":999}`, "-32602")
	f("later", later, `{"since":1000}`, "2000 3000 4000")
	f("later", later, `{"since":1000`+book+`}`, "-32602") // 1000 is the floor
	f("later", later, `{"since":1500}`, "2000 3000 4000")
	long := chain(1, 133, false) // 128 kept: 6000 … 133000; 5000 is the floor
	f("evicted", long, `{"since":4999}`, "-32602")
	f("evicted", long, `{"since":5000`+book+`}`, "-32602")
	f("evicted", long, `{"since":131000}`, "") // no events: nothing sent
	f("evicted", long, `{"since":132500}`, "") // nor here; accepted
	f("evicted", long, `{"since":5000}`, "")   // accepted
}

func viaCodecNoT(ticks []*tickrec.Tick) []*tickrec.Tick {
	out := make([]*tickrec.Tick, len(ticks))
	for i, tk := range ticks {
		d, err := tickrec.DecodeTick(tickrec.AppendTick(nil, tk))
		if err != nil {
			panic(err)
		}
		out[i] = d
	}
	return out
}

func TestPreloadRefuses(t *testing.T) {
	f := func(name, want string, edit func([]*tickrec.Tick) []*tickrec.Tick, floorUs int64) {
		t.Helper()
		ticks := edit(chain(1, 5, true))
		h := New(Config{ReplayTicks: 128, FloorUs: floorUs})
		err := h.Preload(ticks)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: err %v, want %q", name, err, want)
		}
		// Nothing changed: a since before the node's last tick is too old,
		// and a correct Preload still works.
		if _, err := subscribeErr(h, &fakeConn{}, "svc_orderbook", fmt.Sprintf(`{"since":%d}`, floorUs-1)); err == nil || err.Code != -32602 {
			t.Fatalf("%s: since below the floor: %v", name, err)
		}
		h2 := New(Config{ReplayTicks: 128, FloorUs: 5000})
		if err := h2.Preload(chain(1, 5, true)); err != nil {
			t.Fatalf("%s: good preload: %v", name, err)
		}
	}
	same := func(ts []*tickrec.Tick) []*tickrec.Tick { return ts }
	f("order", "does not follow", func(ts []*tickrec.Tick) []*tickrec.Tick { ts[2].TickUs = 2000; return ts }, 5000)
	f("chain", "does not chain", func(ts []*tickrec.Tick) []*tickrec.Tick { ts[3].ParentHash = ts[1].Hash; return ts }, 5000)
	f("gap", "does not chain", func(ts []*tickrec.Tick) []*tickrec.Tick { return append(ts[:2:2], ts[3:]...) }, 5000)
	f("behind", "the node's last tick (Config.FloorUs) at 6000", same, 6000)
	f("ahead", "the node's last tick (Config.FloorUs) at 4000", same, 4000)
	f("invalid", "tick 1 at 2000: 0 book updates for 1 books", func(ts []*tickrec.Tick) []*tickrec.Tick { ts[1].Books = nil; return ts }, 5000)
	f("nil", "tick 4 is nil", func(ts []*tickrec.Tick) []*tickrec.Tick { ts[4] = nil; return ts }, 5000)
}

func TestPreloadRequiresFreshHub(t *testing.T) {
	f := func(name string, before func(h *Hub)) {
		t.Helper()
		h := New(Config{ReplayTicks: 128, FloorUs: 5000})
		before(h)
		defer func() {
			if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "BUG: subs.Hub.Preload") {
				t.Fatalf("%s: recovered %v", name, r)
			}
		}()
		_ = h.Preload(chain(1, 5, true))
	}
	f("published", func(h *Hub) { h.PublishTick(newTick(6000).t) })
	f("subscribed", func(h *Hub) { subscribeErr(h, &fakeConn{}, "newHeads", ``) })
	f("twice", func(h *Hub) { _ = h.Preload(nil) })
	f("closed", func(h *Hub) { h.Close() })
}

// The live tick after Preload chains on the newest preloaded one (its
// header names it as parent); one that does not makes the hub forget the
// preloaded ticks and their state.
func TestPreloadChainsOn(t *testing.T) {
	cfgMarkets := func() []marketdata.Market {
		return []marketdata.Market{{Config: &clob.MarketConfig{ID: bookID(1), Name: "FROM/CONFIG"}}}
	}
	setup := func() (*Hub, []*tickrec.Tick) {
		ticks := chain(1, 5, true)
		h := New(Config{ReplayTicks: 128, FloorUs: 5000, Markets: cfgMarkets})
		if err := h.Preload(ticks); err != nil {
			t.Fatal(err)
		}
		return h, ticks
	}
	h, ticks := setup()
	c := &fakeConn{}
	mk := subscribe(t, h, c, "svc_markets", `{}`)
	if got := results(t, c, mk); len(got) != 1 || got[0]["name"] != "WETH/USD" {
		t.Fatalf("markets from the preloaded ticks %v", got)
	}
	heads := subscribe(t, h, c, "newHeads", ``)
	next := newTick(6000).book(bookID(1), true, nil).t
	next.ParentHash = ticks[4].Hash
	h.PublishTick(next)
	h.Pump()
	if got := results(t, c, heads); len(got) != 1 || got[0]["parentHash"] != hexHash(ticks[4].Hash) {
		t.Fatalf("heads %v", got)
	}
	if _, err := subscribeErr(h, c, "svc_orderbook", `{"since":1000}`); err != nil {
		t.Fatalf("preloaded range lost: %v", err)
	}

	h, ticks = setup()
	c = &fakeConn{}
	stray := newTick(6000).book(bookID(1), true, nil).t
	stray.ParentHash = ticks[3].Hash
	h.PublishTick(stray)
	h.Pump()
	if _, err := subscribeErr(h, c, "svc_orderbook", `{"since":4999}`); err == nil || err.Code != -32602 {
		t.Fatalf("preloaded ticks still replayable: %v", err)
	}
	ob := subscribe(t, h, c, "svc_orderbook", `{"since":5000}`)
	if got := tickTimes(t, c, ob, "timestamp"); fmt.Sprint(got) != "[6000]" {
		t.Fatalf("replay after a broken chain %v", got)
	}
	// The stray tick's own entry is the latest now; before it, Config's.
	mk = subscribe(t, h, c, "svc_markets", `{}`)
	if got := results(t, c, mk); len(got) != 1 || got[0]["name"] != "WETH/USD" {
		t.Fatalf("markets %v", got)
	}
	h, ticks = setup()
	stray = newTick(6000).t // runs no book: no market entry
	stray.ParentHash = ticks[3].Hash
	h.PublishTick(stray)
	h.Pump()
	c = &fakeConn{}
	mk = subscribe(t, h, c, "svc_markets", `{}`)
	if got := results(t, c, mk); len(got) != 1 || got[0]["name"] != "FROM/CONFIG" {
		t.Fatalf("markets after forgetting %v", got)
	}
}

// TestPreloadReceipts: preloaded receipts replay for a since at or above
// the floor as published ones would, and are not sent live; a since below
// the floor, or below a receipt given but not kept, is refused; decreasing
// times are refused without a change; a hub that took receipts already
// panics.
func TestPreloadReceipts(t *testing.T) {
	a, b := addr(1), addr(2)
	rs := []Receipt{
		{Body: rbody(`{"r":1}`), From: a, To: b, HasTo: true, TimeUs: 10},
		{Body: rbody(`{"r":2}`), From: b, TimeUs: 11},
		{Body: rbody(`{"r":3}`), From: a, TimeUs: 11},
	}
	h := New(Config{})
	if err := h.PreloadReceipts(rs, 7); err != nil {
		t.Fatal(err)
	}
	c := &fakeConn{}
	live := subscribe(t, h, c, "svc_confirmedReceipts", ``)
	conf := subscribe(t, h, c, "svc_confirmedReceipts", `{"since":10}`)
	acct := subscribe(t, h, c, "svc_accountReceipts", `{"address":"`+hexAddr(a)+`","since":7}`)
	h.PublishReceipts([]Receipt{{Body: rbody(`{"r":4}`), From: a, TimeUs: 12}})
	h.Pump()
	for id, want := range map[string]string{live: `{"r":4}`, conf: `{"r":2} {"r":3} {"r":4}`, acct: `{"r":1} {"r":3} {"r":4}`} {
		if got := strings.Join(rawResults(t, c, id), " "); got != want {
			t.Fatalf("%s: got %s want %s", id, got, want)
		}
	}
	if _, err := subscribeErr(h, c, "svc_confirmedReceipts", `{"since":6}`); err == nil || err.Code != -32602 {
		t.Fatalf("since below the floor: %v", err)
	}

	many := make([]Receipt, ReceiptsRingSize+2)
	for i := range many {
		many[i] = Receipt{Body: rbody(`{}`), TimeUs: int64(100 + i)}
	}
	h = New(Config{})
	if err := h.PreloadReceipts(many, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := subscribeErr(h, c, "svc_confirmedReceipts", `{"since":100}`); err == nil || err.Code != -32602 {
		t.Fatalf("since below a receipt given but not kept: %v", err)
	}
	c = &fakeConn{}
	if id := subscribe(t, h, c, "svc_confirmedReceipts", `{"since":101}`); len(rawResults(t, c, id)) != ReceiptsRingSize {
		t.Fatalf("since at the floor replayed %d receipts, want %d", len(rawResults(t, c, id)), ReceiptsRingSize)
	}

	h = New(Config{})
	if err := h.PreloadReceipts([]Receipt{{TimeUs: 5}, {TimeUs: 4}}, 3); err == nil || !strings.Contains(err.Error(), "older than") {
		t.Fatalf("decreasing times: %v", err)
	}
	if _, err := subscribeErr(h, &fakeConn{}, "svc_confirmedReceipts", `{"since":0}`); err != nil {
		t.Fatalf("after a refused preload: %v", err)
	}
	h = New(Config{})
	h.PublishReceipts(rs[:1])
	defer func() {
		if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "BUG: subs.Hub.PreloadReceipts") {
			t.Fatalf("preload after a publish: recovered %v", r)
		}
	}()
	_ = h.PreloadReceipts(rs, -1)
}

// TestResetMatchesPreload: a hub that ran one history and is Reset to
// another (a node's evm_revert) ends its subscriptions with -32024, not
// resumable, and then answers every subscription exactly as a fresh hub
// preloaded with that other history does.
func TestResetMatchesPreload(t *testing.T) {
	const replay = 128
	g := newTickGen(42, 3, 12)
	all := g.ticks(120, 20)
	kept, after := all[:80], all[100:] // the revert goes back to tick 79; 80..99 are undone
	undone := all[80:100]
	cfg := Config{ReplayTicks: replay, Markets: g.markets, Positions: g.positions, Triggers: g.triggers}

	reset := New(cfg)
	for _, tk := range append(append([]*tickrec.Tick{}, kept...), undone...) {
		reset.PublishTick(tk)
		reset.Pump()
	}
	old, heads := &refConn{}, &refConn{}
	id, err := subscribeErr(reset, old, "svc_orderbook", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	reset.Activate(old, id)
	headsID, err := subscribeErr(reset, heads, "newHeads", ``)
	if err != nil {
		t.Fatal(err)
	}
	reset.Activate(heads, headsID)
	reset.Pump()
	newest := kept[len(kept)-1].TickUs
	if err := reset.Reset(newest, viaCodec(t, kept), nil, -1); err != nil {
		t.Fatal(err)
	}
	if len(old.closes) != 1 || !strings.Contains(old.closes[0], `"code":-32024`) || !strings.Contains(old.closes[0], `"data":{"resumable":false}`) {
		t.Fatalf("close of a subscription at the reset: %q", old.closes)
	}
	if st := reset.Stats(); st.Ended[EndReverted] != 1 || st.Subscriptions != 1 || len(heads.closes) != 0 {
		t.Fatalf("after the reset: ended %v, %d open (want newHeads), newHeads closes %q", st.Ended, st.Subscriptions, heads.closes)
	}
	headsBefore := len(heads.msgs)

	freshCfg := cfg
	freshCfg.FloorUs = newest
	fresh := New(freshCfg)
	if err := fresh.Preload(viaCodec(t, kept)); err != nil {
		t.Fatal(err)
	}
	// Ids go on counting across a reset: take the ones the old
	// subscriptions had.
	dummy := &refConn{}
	for range 2 {
		if id, err := subscribeErr(fresh, dummy, "svc_orderbook", `{}`); err != nil || !fresh.Unsubscribe(dummy, id) {
			t.Fatal(err)
		}
	}
	diffs, matched := compareHubs(t, reset, fresh, replayCases(g, kept), after, viaCodec(t, after))
	if len(diffs) > 0 {
		t.Fatalf("%d differences, first ones:\n%s", len(diffs), strings.Join(diffs[:min(5, len(diffs))], "\n"))
	}
	if matched["svc_orderbook"] == 0 || matched["newHeads"] == 0 {
		t.Fatalf("too little compared: %v", matched)
	}
	// The newHeads subscription went on: a head per tick after the reset,
	// the first chained on the restored head.
	if got := len(heads.msgs) - headsBefore; got != len(after) {
		t.Fatalf("newHeads after the reset: %d heads for %d ticks", got, len(after))
	}
}
