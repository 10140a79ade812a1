package marketdata

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// checkRoundTrip requires that x's snapshot loads, re-encodes to the same
// bytes, and that the loaded index answers every query as x does. It
// returns the snapshot.
func checkRoundTrip(t *testing.T, x *Index) []byte {
	t.Helper()
	checkInvariants(t, x)
	snap := x.AppendSnapshot(nil)
	if again := x.AppendSnapshot([]byte("prefix")); string(again[len("prefix"):]) != string(snap) {
		t.Fatalf("two snapshots of one state differ")
	}
	y, err := Load(x.live, snap)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	checkInvariants(t, y)
	if got := y.AppendSnapshot(nil); !bytes.Equal(got, snap) {
		t.Fatalf("snapshot does not round-trip: %d bytes, then %d", len(snap), len(got))
	}
	requireSameAnswers(t, x, y)
	return snap
}

// checkInvariants checks the index's invariants against a recount.
func checkInvariants(t *testing.T, x *Index) {
	t.Helper()
	active := map[clob.Hash]*[2]int{}
	for _, id := range x.bookIDs {
		active[id] = new([2]int)
	}
	listed := 0
	for owner, a := range x.accounts {
		terminal := 0
		if len(a.orders) == 0 {
			t.Fatalf("account %x has no orders", owner)
		}
		for i, o := range a.orders {
			if i > 0 && compareOrders(a.orders[i-1], o) >= 0 {
				t.Fatalf("account %x: orders not ascending at %d", owner, i)
			}
			if x.orders[o.Meta.ID] != o || o.Meta.Owner != owner {
				t.Fatalf("order %x: id map or owner disagrees", o.Meta.ID)
			}
			if o.Status == StatusActive {
				active[o.Meta.Book][o.Meta.Side]++
			}
			if o.Status.Terminal() {
				terminal++
			}
			if len(o.Fills) > OrderFillsMax {
				t.Fatalf("order %x: %d fills", o.Meta.ID, len(o.Fills))
			}
		}
		if terminal != a.terminalCount || terminal > TerminalOrdersPerAccount {
			t.Fatalf("account %x: %d terminal orders, counted %d", owner, terminal, a.terminalCount)
		}
		listed += len(a.orders)
	}
	if listed != len(x.orders) {
		t.Fatalf("id map holds %d orders, accounts list %d", len(x.orders), listed)
	}
	for id, b := range x.books {
		if b.activeCount != *active[id] {
			t.Fatalf("book %x: active counts %v, recounted %v", id, b.activeCount, *active[id])
		}
		for r := range b.candles {
			if b.candles[r].len() > CandleBucketsMax {
				t.Fatalf("book %x: %d candles", id, b.candles[r].len())
			}
		}
	}
}

// answers encodes every query the ob_ methods can ask of x, each named.
func answers(x *Index) map[string]string {
	out := map[string]string{}
	ms := x.Markets(nil)
	for i := range ms {
		// The snapshot does not carry the perp parameters (the engine's
		// copy counts), nor did ob_getMarkets show them.
		c := *ms[i].Config
		c.Perp = clob.PerpParams{}
		ms[i].Config = &c
	}
	out["markets"] = string(appendDump(nil, ms))
	levels := []clob.Level{{Price: dec("7"), Volume: dec("3"), Orders: 1}, {Price: dec("6"), Volume: dec("2"), Orders: 2}}
	books := append([]clob.Hash{hashOf(0xee)}, x.bookIDs...) // an unknown book too
	var owners []clob.Address
	for owner := range x.accounts {
		owners = append(owners, owner)
	}
	owners = append(owners, addrOf(0xee))
	for _, id := range books {
		for _, depth := range []int{0, 1} {
			s, ok := x.Orderbook(id, levels, levels, depth)
			out[fmt.Sprintf("orderbook %x depth %d", id, depth)] = fmt.Sprint(ok, string(appendDump(nil, &s)))
		}
		for r := range resolutionCount {
			for _, q := range []CandlesQuery{
				{Resolution: r, ToUs: math.MaxInt64},
				{Resolution: r, ToUs: math.MaxInt64, Limit: 3},
				{Resolution: r, FromUs: x.nowUs - 3*dayUs, ToUs: x.nowUs - dayUs},
			} {
				cs, ok := x.Candles(nil, id, &q)
				out[fmt.Sprintf("candles %x %+v", id, q)] = fmt.Sprint(ok, string(appendDump(nil, cs)))
			}
		}
	}
	balances := func(token, owner clob.Address) (cash, locked uint256.Int) {
		cash.SetUint64(uint64(token[19]) * uint64(owner[19]) % 5)
		locked.SetUint64(uint64(owner[19]) % 2)
		return cash, locked
	}
	for _, owner := range owners {
		out[fmt.Sprintf("positions %x", owner)] = string(appendDump(nil, &PositionsData{Spot: x.Positions(nil, owner, balances)}))
		for _, q := range ordersQueries(books) {
			out[fmt.Sprintf("orders %x %+v", owner, q)] = allPages(x, owner, q)
		}
	}
	return out
}

// ordersQueries is every filter combination over books, at two page sizes.
func ordersQueries(books []clob.Hash) []OrdersQuery {
	var qs []OrdersQuery
	for _, limit := range []int{37, OrdersLimitMax} {
		for s := range statusCount {
			qs = append(qs, OrdersQuery{Limit: limit, Status: s, WithTotal: true, WithFills: s == StatusFilled})
		}
		for _, b := range books {
			qs = append(qs, OrdersQuery{Limit: limit, Book: b, HasBook: true, WithFills: true},
				OrdersQuery{Limit: limit, Book: b, HasBook: true, Status: StatusActive, WithTotal: true})
		}
	}
	// A cursor that names no order starts a page in the middle.
	qs = append(qs, OrdersQuery{Limit: 5, HasCursor: true, Cursor: Cursor{TsUs: 5_000_000, Nonce: 3}})
	return qs
}

// allPages walks the query's pages through their cursors.
func allPages(x *Index, owner clob.Address, q OrdersQuery) string {
	var out []byte
	for range 1000 {
		page := x.Orders(nil, owner, &q)
		out = appendDump(out, &page)
		if !page.HasNext {
			break
		}
		q.Cursor, q.HasCursor = page.Next, true
	}
	return string(out)
}

func requireSameAnswers(t *testing.T, want, got *Index) {
	t.Helper()
	requireAnswers(t, answers(want), got)
}

// requireAnswers requires got to answer as a, the answers of another index.
func requireAnswers(t *testing.T, a map[string]string, got *Index) {
	t.Helper()
	b := answers(got)
	if len(a) != len(b) {
		t.Fatalf("%d answers, want %d", len(b), len(a))
	}
	for k, v := range a {
		if b[k] != v {
			i := 0
			for i < len(v) && i < len(b[k]) && v[i] == b[k][i] {
				i++
			}
			from := max(i-200, 0)
			t.Fatalf("%s differs at byte %d:\ngot  …%.400s\nwant …%.400s", k, i, b[k][from:], v[from:])
		}
	}
}

// sim drives indexes with engine-like inputs from a seeded generator: orders
// admitted to random books by a few owners, ticks where due books place,
// expire, refuse, fill, cancel and update them, prices and volumes, time
// jumps that roll candles and 24h statistics, markets added late and
// reconfigured. Its own state lives in slices only, so a seed reproduces a
// run.
type sim struct {
	rng     *rand.Rand
	live    fakeLive
	cfgs    []*clob.MarketConfig // ascending id
	owners  []clob.Address
	nowUs   int64 // the sequencer's clock
	nextID  uint32
	placed  map[clob.Address]int      // orders admitted, by owner
	pending map[clob.Hash][]clob.Hash // by book, admission order
	active  map[clob.Hash][]*simOrder // by book
}

type simOrder struct {
	id                  clob.Hash
	base, quote, fee    uint256.Int
	postOnly, immediate bool
}

func newSim(seed uint64) *sim {
	s := &sim{
		rng: rand.New(rand.NewPCG(seed, seed^0x5eed)), live: fakeLive{},
		owners: []clob.Address{addrOf(0xc3), bob, alice}, // alice places most
		placed: map[clob.Address]int{}, pending: map[clob.Hash][]clob.Hash{}, active: map[clob.Hash][]*simOrder{},
	}
	s.cfgs = []*clob.MarketConfig{marketA(), marketB()}
	return s
}

// step is one input, applied to every index alike.
type step struct {
	market *clob.MarketConfig
	meta   *OrderMeta
	tick   *clob.TickResult
}

func (st *step) apply(x *Index) {
	switch {
	case st.market != nil:
		x.AddMarket(st.market)
	case st.meta != nil:
		x.Admitted(st.meta)
	default:
		x.Tick(st.tick)
	}
}

func (s *sim) next() step {
	r := s.rng.IntN(100)
	switch {
	case r == 0 && len(s.cfgs) < 4:
		c := marketA()
		c.ID, c.Name, c.Base = hashOf(byte(10+len(s.cfgs))), fmt.Sprintf("M%d/USD", len(s.cfgs)), addrOf(byte(0x40+len(s.cfgs)))
		s.cfgs = append(s.cfgs, c) // ids above the first two: still ascending
		return step{market: c}
	case r == 1:
		c := *s.cfgs[s.rng.IntN(len(s.cfgs))]
		c.Name += "'"
		c.TakerFee.AddUint64(&c.TakerFee, 1)
		return step{market: &c}
	case r < 45:
		return step{meta: s.admit()}
	}
	return step{tick: s.tick()}
}

func (s *sim) admit() *OrderMeta {
	s.nowUs += int64(s.rng.IntN(3)) // equal times on purpose: the nonce and id break ties
	s.nextID++
	var id clob.Hash
	id[0], id[1], id[2], id[3] = byte(s.nextID>>24), byte(s.nextID>>16), byte(s.nextID>>8), byte(s.nextID)
	id[31] = byte(s.rng.Uint32()) // ids not ascending with time
	owner := s.owners[min(s.rng.IntN(len(s.owners)+2), len(s.owners)-1)]
	c := s.cfgs[s.rng.IntN(len(s.cfgs))]
	m := &OrderMeta{
		ID: id, Book: c.ID, Owner: owner, Signer: owner, TxHash: hashOf(byte(s.nextID)),
		Nonce: uint64(s.rng.IntN(50)), Side: clob.Side(s.rng.IntN(2)), Type: clob.OrderType(s.rng.IntN(2)),
		Price: *uint256.NewInt(uint64(1 + s.rng.IntN(1000))), Size: *uint256.NewInt(uint64(1 + s.rng.IntN(1000))),
		DeadlineUs: s.nowUs + 1_000_000, AdmittedUs: s.nowUs,
	}
	switch s.rng.IntN(4) {
	case 0:
		m.Flags = clob.FlagPostOnly
	case 1:
		m.Flags = clob.FlagIOC
	}
	if s.rng.IntN(3) == 0 {
		m.TTLUs = int64(1+s.rng.IntN(100)) * 1_000_000
	}
	s.pending[c.ID] = append(s.pending[c.ID], id)
	s.placed[owner]++
	return m
}

func (s *sim) tick() *clob.TickResult {
	switch r := s.rng.IntN(100); {
	case r < 30:
		s.nowUs += 500_000
	case r < 98:
		s.nowUs += int64(1+s.rng.IntN(3)) * minuteUs
	default:
		s.nowUs += int64(1+s.rng.IntN(30)) * 60 * minuteUs
	}
	res := &clob.TickResult{TickUs: s.nowUs}
	for _, c := range s.cfgs {
		if s.rng.IntN(4) == 0 {
			continue // not due
		}
		bt := clob.BookTick{Book: c.ID, FirstEvent: len(res.Events)}
		bt.NewOrders = s.drain(res, c.ID)
		volume := s.match(res, c.ID)
		if s.rng.IntN(2) == 0 { // trades of orders the sim leaves out: candles fill faster
			volume.AddUint64(&volume, uint64(1+s.rng.IntN(100)))
		}
		if !volume.IsZero() {
			bt.Traded, bt.VolumeBase = true, volume
		}
		if bt.Traded || s.rng.IntN(3) == 0 {
			bt.Price, bt.HasPrice = *uint256.NewInt(uint64(1 + s.rng.IntN(1000))), true
		}
		if s.rng.IntN(10) == 0 { // an order the index never saw, or forgot
			res.Events = append(res.Events, clob.Event{Kind: clob.EventCancel, OrderID: hashOf(0xfe)})
		}
		bt.EndEvent = len(res.Events)
		res.Books = append(res.Books, bt)
	}
	return res
}

// drain places, expires or refuses the book's pending orders.
func (s *sim) drain(res *clob.TickResult, book clob.Hash) (placed int) {
	for _, id := range s.pending[book] {
		switch r := s.rng.IntN(10); {
		case r == 0:
			res.Events = append(res.Events, clob.Event{Kind: clob.EventExpire, OrderID: id, Terminal: true})
		case r == 1:
			res.Events = append(res.Events, clob.Event{Kind: clob.EventPlaced, OrderID: id},
				clob.Event{Kind: clob.EventPostOnlyRefused, OrderID: id, Terminal: true})
			placed++
		default:
			res.Events = append(res.Events, clob.Event{Kind: clob.EventPlaced, OrderID: id})
			s.active[book] = append(s.active[book], &simOrder{id: id, immediate: r == 2})
			placed++
		}
	}
	s.pending[book] = s.pending[book][:0]
	return placed
}

// match fills, cancels, expires and updates the book's active orders and
// returns the base volume traded.
func (s *sim) match(res *clob.TickResult, book clob.Hash) (volume uint256.Int) {
	kept := s.active[book][:0]
	for _, o := range s.active[book] {
		ev := clob.Event{OrderID: o.id}
		done := false
		switch r := s.rng.IntN(20); {
		case r < 6 || o.immediate && r < 12:
			fills := 1 + s.rng.IntN(2) // two fills in one tick merge into one row
			for i := range fills {
				ev.Kind = clob.EventFill
				ev.Base.SetUint64(uint64(1 + s.rng.IntN(100)))
				ev.Quote.SetUint64(uint64(1 + s.rng.IntN(10_000)))
				ev.Fee.SetUint64(uint64(s.rng.IntN(10)))
				o.base.Add(&o.base, &ev.Base)
				o.quote.Add(&o.quote, &ev.Quote)
				o.fee.Add(&o.fee, &ev.Fee)
				volume.Add(&volume, &ev.Base)
				ev.TotalBase, ev.TotalQuote, ev.TotalFee = o.base, o.quote, o.fee
				ev.Terminal = i == fills-1 && s.rng.IntN(3) == 0
				done = ev.Terminal
				res.Events = append(res.Events, ev)
			}
		case r < 8 || o.immediate:
			ev.Kind, ev.Terminal, done = clob.EventCancel, true, true
		case r < 9:
			ev.Kind, ev.Terminal, done = clob.EventExpire, true, true
		case r < 11:
			ev.Kind = clob.EventUpdate
			info := clob.OrderInfo{Price: *uint256.NewInt(uint64(1 + s.rng.IntN(1000)))}
			if s.rng.IntN(2) == 0 {
				info.ExpiresUs = s.nowUs + int64(s.rng.IntN(1000))*1_000_000
			}
			s.live[o.id] = info
		}
		if ev.Kind != clob.EventFill && ev.Kind != 0 {
			ev.TotalBase, ev.TotalQuote, ev.TotalFee = o.base, o.quote, o.fee
			res.Events = append(res.Events, ev)
		}
		if !done {
			kept = append(kept, o)
		}
	}
	s.active[book] = kept
	return volume
}

// TestSnapshotContinuation feeds one input sequence to index a, to b built
// alike (other map layouts: the snapshot must not depend on them) and to
// copies loaded from a's snapshot at random points; every copy must answer
// every query as a does, and snapshot to the same bytes, ever after.
func TestSnapshotContinuation(t *testing.T) {
	steps := 12_000
	if testing.Short() {
		steps = 3_000
	}
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			s := newSim(seed)
			a, b := New(s.live), New(s.live)
			for _, c := range s.cfgs {
				a.AddMarket(c)
				b.AddMarket(c)
			}
			loadAt := map[int]bool{}
			for range 3 {
				loadAt[s.rng.IntN(steps)] = true
			}
			var copies []*Index
			for i := range steps {
				st := s.next()
				st.apply(a)
				st.apply(b)
				for _, c := range copies {
					st.apply(c)
				}
				if loadAt[i] {
					c, err := Load(s.live, a.AppendSnapshot(nil))
					if err != nil {
						t.Fatalf("seed %d step %d: load: %v", seed, i, err)
					}
					requireSameAnswers(t, a, c)
					copies = append(copies, c)
				}
			}
			if !testing.Short() && s.placed[alice] <= len(a.accounts[alice].orders) {
				t.Fatalf("seed %d: the run never forgot an order", seed)
			}
			if !testing.Short() && a.books[bookA].candles[Res1m].head == 0 {
				t.Fatalf("seed %d: the 1m ring never wrapped", seed)
			}
			snap := a.AppendSnapshot(nil)
			final, err := Load(s.live, snap)
			if err != nil {
				t.Fatalf("seed %d: load at the end: %v", seed, err)
			}
			want := answers(a)
			for _, x := range append([]*Index{b, final}, copies...) {
				checkInvariants(t, x)
				requireAnswers(t, want, x)
				if !bytes.Equal(x.AppendSnapshot(nil), snap) {
					t.Fatalf("seed %d: snapshots differ", seed)
				}
			}
		})
	}
}

// TestTerminalOrdersBound runs 50 000 orders of one account to terminal
// states beside a few orders that stay live, and requires the index (its
// lists, id map, fill rows, candles and snapshot) to stay within its limits.
func TestTerminalOrdersBound(t *testing.T) {
	const (
		ordersTotal = 50_000
		batch       = 20
		liveCount   = 10
	)
	x := newTestIndex()
	var res clob.TickResult
	tickUs := int64(0)
	tick := func(events []clob.Event) {
		tickUs += minuteUs // a 1m bucket every tick: the ring wraps
		res = clob.TickResult{TickUs: tickUs, Events: events, Books: []clob.BookTick{{
			Book: bookA, Price: dec("5"), HasPrice: true, Traded: true, VolumeBase: dec("1"), EndEvent: len(events),
		}}}
		x.Tick(&res)
	}
	orderID := func(n int) clob.Hash {
		var id clob.Hash
		id[0], id[1], id[2], id[3] = 0xff, byte(n>>16), byte(n>>8), byte(n)
		return id
	}
	var events []clob.Event
	for i := range liveCount {
		x.Admitted(&OrderMeta{ID: hashOf(byte(i)), Book: bookA, Owner: alice, AdmittedUs: int64(i)})
		events = append(events, clob.Event{Kind: clob.EventPlaced, OrderID: hashOf(byte(i))})
	}
	tick(events)
	kinds := []clob.EventKind{clob.EventFill, clob.EventCancel, clob.EventExpire, clob.EventPostOnlyRefused, clob.EventMarginCancel}
	for n := 0; n < ordersTotal; n += batch {
		events = events[:0]
		for i := range liveCount { // the live orders trade every tick: their fill rows roll
			events = append(events, clob.Event{Kind: clob.EventFill, OrderID: hashOf(byte(i)), Base: dec("1")})
		}
		for i := n; i < n+batch; i++ {
			id := orderID(i)
			x.Admitted(&OrderMeta{ID: id, Book: bookA, Owner: alice, Nonce: uint64(i), AdmittedUs: tickUs + 1})
			events = append(events, clob.Event{Kind: clob.EventPlaced, OrderID: id},
				clob.Event{Kind: kinds[i%len(kinds)], OrderID: id, Base: dec("1"), Terminal: true})
		}
		tick(events)
		if len(x.orders) > TerminalOrdersPerAccount+liveCount || len(x.accounts[alice].orders) != len(x.orders) {
			t.Fatalf("after %d orders: id map %d, account list %d; bound %d + %d live",
				n+batch, len(x.orders), len(x.accounts[alice].orders), TerminalOrdersPerAccount, liveCount)
		}
	}
	a := x.accounts[alice]
	if len(x.orders) != TerminalOrdersPerAccount+liveCount || a.terminalCount != TerminalOrdersPerAccount {
		t.Fatalf("kept %d orders, %d terminal", len(x.orders), a.terminalCount)
	}
	for i := range liveCount {
		o := a.orders[i]
		if o.Meta.ID != hashOf(byte(i)) || o.Status != StatusActive || len(o.Fills) != OrderFillsMax {
			t.Fatalf("live order %d: %x %s with %d fill rows", i, o.Meta.ID, o.Status, len(o.Fills))
		}
	}
	// The newest terminal orders are kept, the older forgotten.
	if _, ok := x.Order(orderID(ordersTotal - TerminalOrdersPerAccount)); !ok {
		t.Fatalf("the oldest order within the bound was forgotten")
	}
	if _, ok := x.Order(orderID(ordersTotal - TerminalOrdersPerAccount - 1)); ok {
		t.Fatalf("an order beyond the bound is kept")
	}
	page := x.Orders(nil, alice, &OrdersQuery{Limit: 1, WithTotal: true})
	if page.Total != TerminalOrdersPerAccount+liveCount {
		t.Fatalf("total_count %d", page.Total)
	}
	if n := x.books[bookA].candles[Res1m].len(); n != CandleBucketsMax {
		t.Fatalf("1m ring holds %d", n)
	}
	snap := checkRoundTrip(t, x)
	sizeMax := len(snapshotMagic) + 8 + 4 + 4 + accountFixedSize
	for _, id := range x.bookIDs {
		c := &x.books[id].cfg
		sizeMax += bookFixedSize + len(c.Name) + len(c.BaseSymbol) + len(c.QuoteSymbol) + int(resolutionCount)*CandleBucketsMax*candleSize
	}
	sizeMax += (TerminalOrdersPerAccount + liveCount) * (orderFixedSize + OrderFillsMax*fillSize)
	if len(snap) > sizeMax {
		t.Fatalf("snapshot of %d bytes, the limits allow %d", len(snap), sizeMax)
	}
}

// snapshotStates builds indexes in varied states, for the round trip, the
// load errors and the fuzz seeds.
func snapshotStates() []*Index {
	triggered, _ := triggeredState()
	states := []*Index{New(nil), newTestIndex(), smallState(), historyIndex(), triggered}
	for _, steps := range []int{60, 300} {
		s := newSim(uint64(steps))
		x := New(s.live)
		for _, c := range s.cfgs {
			x.AddMarket(c)
		}
		for range steps {
			st := s.next()
			st.apply(x)
		}
		states = append(states, x)
	}
	return states
}

// smallState has two markets, one of which traded, and three orders of two
// owners: active, filled and pending.
func smallState() *Index {
	x := newTestIndex()
	x.Admitted(meta(1, bookA, alice, 1, 100, clob.Buy))
	x.Admitted(meta(2, bookA, alice, 2, 200, clob.Sell))
	x.Admitted(meta(3, bookB, bob, 1, 300, clob.Buy))
	x.Tick(mkTick(60_000_000, bookTick{book: bookA, price: "5", volume: "1", events: []clob.Event{
		ev(clob.EventPlaced, 1), ev(clob.EventPlaced, 2), fillEv(1, "1", "5", "1", "5", true),
	}}))
	return x
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, x := range snapshotStates() {
		checkRoundTrip(t, x)
	}
}

// TestLoadTruncated cuts a snapshot at every byte offset (past 4 KiB, at
// every 7th: a cut costs a load of its prefix) and appends to it: each must
// be refused, without a panic.
func TestLoadTruncated(t *testing.T) {
	for _, x := range snapshotStates() {
		snap := x.AppendSnapshot(nil)
		for i := 0; i < len(snap); i++ {
			if _, err := Load(nil, snap[:i]); err == nil {
				t.Fatalf("snapshot cut at %d of %d loaded", i, len(snap))
			}
			if i >= 4096 && i+7 < len(snap) {
				i += 6
			}
		}
		if _, err := Load(nil, append(snap[:len(snap):len(snap)], 0)); err == nil || !strings.Contains(err.Error(), "trailing") {
			t.Fatalf("trailing byte: %v", err)
		}
	}
}

// TestLoadRejects corrupts a valid state in one way each (the encoder
// writes whatever it holds) and requires Load to refuse it by name.
func TestLoadRejects(t *testing.T) {
	f := func(want string, corrupt func(x *Index, snap []byte) []byte) {
		t.Helper()
		x := smallState()
		snap := corrupt(x, x.AppendSnapshot(nil))
		if snap == nil {
			snap = x.AppendSnapshot(nil)
		}
		_, err := Load(nil, snap)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("want an error with %q, got %v", want, err)
		}
	}
	order := func(x *Index, id byte) *Order { return x.orders[hashOf(id)] }
	f("bad magic", func(_ *Index, snap []byte) []byte { snap[4]++; return snap })
	f("bad magic", func(_ *Index, snap []byte) []byte { return snap[:3] })
	f("now -1 is negative", func(x *Index, _ []byte) []byte { x.nowUs = -1; return nil })
	f("status 9 is never stored", func(x *Index, _ []byte) []byte { order(x, 1).Status = 9; return nil })
	f("status 0 is never stored", func(x *Index, _ []byte) []byte { order(x, 1).Status = StatusAny; return nil })
	f("status 8 is never stored", func(x *Index, _ []byte) []byte { order(x, 1).Status = StatusInvalid; return nil })
	f("unknown side 2", func(x *Index, _ []byte) []byte { order(x, 3).Meta.Side = 2; return nil })
	f("unknown order type 2", func(x *Index, _ []byte) []byte { order(x, 3).Meta.Type = 2; return nil })
	f("unknown flags 0x8", func(x *Index, _ []byte) []byte { order(x, 3).Meta.Flags = 8; return nil })
	f("unknown market kind 7", func(x *Index, _ []byte) []byte { order(x, 3).MarketKind = 7; return nil })
	f("unknown market kind 2", func(x *Index, _ []byte) []byte { x.books[bookB].cfg.Kind = 2; return nil })
	f("unknown book", func(x *Index, _ []byte) []byte { order(x, 3).Meta.Book = hashOf(9); return nil })
	f("listed twice", func(x *Index, _ []byte) []byte {
		a := x.accounts[bob]
		a.orders = append(a.orders, order(x, 1))
		return nil
	})
	f("orders not ascending", func(x *Index, _ []byte) []byte {
		a := x.accounts[alice]
		a.orders[0], a.orders[1] = a.orders[1], a.orders[0]
		return nil
	})
	f("books not ascending", func(x *Index, _ []byte) []byte {
		x.bookIDs[0], x.bookIDs[1] = x.bookIDs[1], x.bookIDs[0]
		return nil
	})
	f("accounts not ascending", func(x *Index, _ []byte) []byte {
		p, q := clob.Address(bytes.Repeat([]byte{0x5a}, 20)), clob.Address(bytes.Repeat([]byte{0xa5}, 20))
		x.Admitted(meta(4, bookA, p, 1, 400, clob.Buy))
		x.Admitted(meta(5, bookA, q, 1, 500, clob.Buy))
		snap := x.AppendSnapshot(nil)
		// Swap the two owners' addresses in place: ascending no more.
		i, j := bytes.Index(snap, p[:]), bytes.Index(snap, q[:])
		copy(snap[i:], q[:])
		copy(snap[j:], p[:])
		return snap
	})
	f("no orders", func(x *Index, _ []byte) []byte { x.accounts[addrOf(7)] = &account{}; return nil })
	f("more than TerminalOrdersPerAccount", func(x *Index, _ []byte) []byte {
		a := x.accounts[bob]
		for i := range TerminalOrdersPerAccount + 1 {
			o := &Order{Meta: *meta(0, bookB, bob, uint64(10+i), 1000, clob.Buy), Status: StatusCanceled}
			o.Meta.ID[0] = byte(i >> 8)
			o.Meta.ID[1] = byte(i)
			a.orders = append(a.orders, o)
		}
		return nil
	})
	f("more than OrderFillsMax", func(x *Index, _ []byte) []byte {
		order(x, 1).Fills = make([]Fill, OrderFillsMax+1)
		return nil
	})
	f("more than CandleBucketsMax", func(x *Index, _ []byte) []byte {
		ring := &x.books[bookA].candles[Res1d]
		ring.buf = make([]Candle, CandleBucketsMax+1)
		return nil
	})
	f("not a bucket boundary", func(x *Index, _ []byte) []byte { x.books[bookA].candles[Res5m].buf[0].StartUs = 1; return nil })
	f("candles not ascending", func(x *Index, _ []byte) []byte {
		ring := &x.books[bookA].candles[Res1m]
		ring.buf = append(ring.buf, ring.buf[0])
		return nil
	})
	f("after now", func(x *Index, _ []byte) []byte {
		x.books[bookA].candles[Res1m].buf[0].StartUs = 2 * minuteUs
		return nil
	})
	f("last tick 120000000 after now", func(x *Index, _ []byte) []byte { x.books[bookA].lastTickUs = 2 * minuteUs; return nil })
	f("tick fields set on a book that never ran", func(x *Index, _ []byte) []byte { x.books[bookB].newOrders = 1; return nil })
	f("price set on a book that never cleared", func(x *Index, _ []byte) []byte {
		x.books[bookB].price = dec("1")
		return nil
	})
	f("boolean byte 2", func(x *Index, snap []byte) []byte {
		// The first book's ran flag follows its fixed fields and names.
		c := &x.books[x.bookIDs[0]].cfg
		at := len(snapshotMagic) + 8 + 4 + 32 + 1 + 20 + 20 + 8 + 4*32 + 3*4 + len(c.Name) + len(c.BaseSymbol) + len(c.QuoteSymbol)
		if snap[at] != 1 {
			t.Fatalf("offset %d is not the ran flag", at)
		}
		snap[at] = 2
		return snap
	})
	f("exceeds the", func(_ *Index, snap []byte) []byte {
		at := len(snapshotMagic) + 8 // nBooks
		snap[at] = 0x7f
		return snap
	})
}

// TestLoadedIndexContinues checks a loaded index takes inputs: an order
// forgotten before the snapshot stays forgotten, the counts derived on
// load move as they did before it.
func TestLoadedIndexContinues(t *testing.T) {
	x := newTestIndex()
	x.Admitted(meta(1, bookA, alice, 1, 100, clob.Buy))
	x.Admitted(meta(2, bookA, alice, 2, 200, clob.Sell))
	x.Tick(mkTick(500_000, bookTick{book: bookA, events: []clob.Event{ev(clob.EventPlaced, 1), ev(clob.EventPlaced, 2)}}))
	y, err := Load(nil, x.AppendSnapshot(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range []*Index{x, y} {
		z.Tick(mkTick(1_000_000, bookTick{book: bookA, events: []clob.Event{ev(clob.EventCancel, 2)}}))
		s, _ := z.Orderbook(bookA, nil, nil, 0)
		if s.BuysCount != 1 || s.SellsCount != 0 {
			t.Fatalf("counts after a cancel: %d buys, %d sells", s.BuysCount, s.SellsCount)
		}
	}
	requireSameAnswers(t, x, y)
}
