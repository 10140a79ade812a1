package clob

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/holiman/uint256"
)

// testAccounts is a map-backed ledger that records the first violation of
// its invariants (never negative, never lock more than available) instead
// of failing at once, so that its calls allocate nothing.
type testAccounts struct {
	bal     map[[40]byte]*testBalance
	fees    map[Address]*uint256.Int
	supply  map[Address]*uint256.Int // Σ cash + fees, fixed at funding
	problem string
	// engine, when set, is the engine whose perp positions' cost the
	// native supply check counts (docs/perps.md, "Invariants").
	engine *Engine
}

type testBalance struct{ cash, locked, debt uint256.Int }

// payDebt moves free cash to pay debt (Credit and Unlock do).
func (b *testBalance) payDebt() {
	var free uint256.Int
	free.Sub(&b.cash, &b.locked)
	if b.debt.Lt(&free) {
		free = b.debt
	}
	b.cash.Sub(&b.cash, &free)
	b.debt.Sub(&b.debt, &free)
}

// debit takes free cash first, the rest becomes debt.
func (b *testBalance) debit(amount *uint256.Int) {
	var free uint256.Int
	free.Sub(&b.cash, &b.locked)
	if amount.Lt(&free) {
		b.cash.Sub(&b.cash, amount)
		return
	}
	b.cash.Sub(&b.cash, &free)
	free.Sub(amount, &free)
	b.debt.Add(&b.debt, &free)
}

func newTestAccounts() *testAccounts {
	return &testAccounts{bal: map[[40]byte]*testBalance{}, fees: map[Address]*uint256.Int{}, supply: map[Address]*uint256.Int{}}
}

func balKey(token, owner Address) (k [40]byte) {
	copy(k[:20], token[:])
	copy(k[20:], owner[:])
	return k
}

func (a *testAccounts) get(token, owner Address) *testBalance {
	k := balKey(token, owner)
	b := a.bal[k]
	if b == nil {
		b = &testBalance{}
		a.bal[k] = b
	}
	return b
}

func (a *testAccounts) fee(token Address) *uint256.Int {
	f := a.fees[token]
	if f == nil {
		f = new(uint256.Int)
		a.fees[token] = f
	}
	return f
}

// fund credits cash from outside: it raises the token's supply.
func (a *testAccounts) fund(token, owner Address, amount *uint256.Int) {
	b := a.get(token, owner)
	b.cash.Add(&b.cash, amount)
	s := a.supply[token]
	if s == nil {
		s = new(uint256.Int)
		a.supply[token] = s
		a.fee(token)
	}
	s.Add(s, amount)
}

func (a *testAccounts) fail(format string, args ...any) {
	if a.problem == "" {
		a.problem = fmt.Sprintf(format, args...)
	}
}

func (a *testAccounts) Available(token, owner Address) uint256.Int {
	b := a.get(token, owner)
	var v uint256.Int
	if b.locked.Gt(&b.cash) {
		a.fail("locked > cash for %x/%x", token[0], owner[0])
		return v
	}
	v.Sub(&b.cash, &b.locked)
	return v
}

func (a *testAccounts) Lock(token, owner Address, amount *uint256.Int) {
	if avail := a.Available(token, owner); avail.Lt(amount) {
		a.fail("lock %s > available %s", amount.Dec(), avail.Dec())
	}
	b := a.get(token, owner)
	b.locked.Add(&b.locked, amount)
}

func (a *testAccounts) Unlock(token, owner Address, amount *uint256.Int) {
	b := a.get(token, owner)
	if b.locked.Lt(amount) {
		a.fail("unlock %s > locked %s", amount.Dec(), b.locked.Dec())
	}
	b.locked.Sub(&b.locked, amount)
	b.payDebt()
}

func (a *testAccounts) SpendLocked(token, owner Address, amount *uint256.Int) {
	b := a.get(token, owner)
	if b.locked.Lt(amount) || b.cash.Lt(amount) {
		a.fail("spend %s > locked %s / cash %s", amount.Dec(), b.locked.Dec(), b.cash.Dec())
	}
	b.locked.Sub(&b.locked, amount)
	b.cash.Sub(&b.cash, amount)
}

func (a *testAccounts) Credit(token, owner Address, amount *uint256.Int) {
	b := a.get(token, owner)
	b.cash.Add(&b.cash, amount)
	b.payDebt()
}

func (a *testAccounts) Debit(token, owner Address, amount *uint256.Int) {
	a.get(token, owner).debit(amount)
}

func (a *testAccounts) Holding(token, owner Address) (cash, locked, debt uint256.Int) {
	b := a.get(token, owner)
	return b.cash, b.locked, b.debt
}

func (a *testAccounts) CollectFee(token Address, amount *uint256.Int) {
	f := a.fee(token)
	f.Add(f, amount)
}

// check verifies no violation happened and value is conserved per token.
func (a *testAccounts) check() error {
	if a.problem != "" {
		return fmt.Errorf("ledger: %s", a.problem)
	}
	sums := map[Address]*uint256.Int{}
	for k, b := range a.bal {
		var token Address
		copy(token[:], k[:20])
		if sums[token] == nil {
			sums[token] = new(uint256.Int)
		}
		sums[token].Add(sums[token], &b.cash)
		sums[token].Sub(sums[token], &b.debt)
		if !b.debt.IsZero() && !b.cash.Eq(&b.locked) {
			return fmt.Errorf("%x/%x: debt %s beside free cash", token[:2], k[20:22], b.debt.Dec())
		}
	}
	for token, s := range a.supply {
		got := new(uint256.Int)
		if sums[token] != nil {
			got.Set(sums[token])
		}
		got.Add(got, a.fee(token))
		want := *s
		if a.engine != nil && token == NativeToken {
			c := a.engine.PerpCost()
			if c.Neg {
				want.Sub(&want, &c.Abs)
			} else {
				want.Add(&want, &c.Abs)
			}
		}
		if !got.Eq(&want) {
			return fmt.Errorf("conservation: token %x: Σ (cash − debt) + fees = %s, supply + Σ cost %s", token[:2], got.Dec(), want.Dec())
		}
	}
	return nil
}

// checkEngine verifies the engine's internal invariants against the ledger:
// locked = Σ reservations + pending transfers per (token, owner); levels
// sorted, non-empty, volumes and counts exact; heap positions right; no
// order resting and free; fills ≤ size.
func checkEngine(e *Engine, a *testAccounts) error {
	locked := map[[40]byte]*uint256.Int{}
	add := func(token, owner Address, v *uint256.Int) {
		k := balKey(token, owner)
		if locked[k] == nil {
			locked[k] = new(uint256.Int)
		}
		locked[k].Add(locked[k], v)
	}
	for _, b := range e.books {
		if err := checkBook(b, add); err != nil {
			return fmt.Errorf("book %x: %w", b.cfg.ID[:2], err)
		}
	}
	for i := range e.transfers.len() {
		t := e.transfers.at(i)
		add(t.token, t.owner, &t.amount)
	}
	for k, b := range a.bal {
		want := locked[k]
		if want == nil {
			want = new(uint256.Int)
		}
		if !b.locked.Eq(want) {
			return fmt.Errorf("locked %x/%x = %s, Σ reservations = %s", k[:2], k[20:22], b.locked.Dec(), want.Dec())
		}
	}
	return nil
}

func checkBook(b *book, add func(token, owner Address, v *uint256.Int)) error {
	live, expiring := 0, 0
	for s := 1; s < len(b.nodes); s++ {
		n, o := &b.nodes[s], &b.ords[s]
		if n.state == stateFree {
			continue
		}
		live++
		if n.state == stateNew {
			return fmt.Errorf("order %x still new between ticks", o.id[:4])
		}
		if n.remLots <= 0 || n.remLots > unitsMax {
			return fmt.Errorf("order %x remaining %d", o.id[:4], n.remLots)
		}
		if o.filledBase.Gt(&o.sizeBase) {
			return fmt.Errorf("order %x filled %s > size %s", o.id[:4], o.filledBase.Dec(), o.sizeBase.Dec())
		}
		if b.index.find(&o.id, b.ords) != uint32(s) {
			return fmt.Errorf("order %x missing from the index", o.id[:4])
		}
		if o.expiresUs != 0 && n.state == stateResting {
			expiring++
		}
		if n.state == stateResting && (n.typ == Market || n.flags&FlagIOC != 0) {
			return fmt.Errorf("IOC or market order %x rests", o.id[:4])
		}
		add(b.u.backing(n.side), o.owner, &o.reserved)
		var need, tmp uint256.Int
		b.u.reserve(&need, &tmp, n.side, n.remLots, n.priceSteps)
		if b.perp == nil && n.state == stateResting && o.pendingUpdates == 0 && o.reserved.Lt(&need) {
			return fmt.Errorf("order %x reserves %s < %s", o.id[:4], o.reserved.Dec(), need.Dec())
		}
	}
	if live != b.live() || b.index.n != live {
		return fmt.Errorf("live %d, arena says %d, index %d", live, b.live(), b.index.n)
	}
	for side := range b.sides {
		if err := checkSide(b, Side(side)); err != nil {
			return err
		}
	}
	return checkExpiry(b, expiring)
}

// checkExpiry verifies the expiry queue: the run sorted, the heap ordered,
// one entry with its expiresUs per resting order with a ttl (expiring of
// them), a live earliest entry.
func checkExpiry(b *book, expiring int) error {
	q := &b.expiry
	for i := q.head + 1; i < len(q.run); i++ {
		if q.run[i-1].us > q.run[i].us {
			return fmt.Errorf("expiry run out of order at %d", i)
		}
	}
	for i := 1; i < len(q.heap); i++ {
		if q.heap[(i-1)/2].us > q.heap[i].us {
			return fmt.Errorf("expiry heap order broken at %d", i)
		}
	}
	seen := make([]bool, len(b.nodes))
	for _, x := range slices.Concat(q.run[q.head:], q.heap) {
		s := b.deref(x.ref)
		if s == 0 {
			continue
		}
		if seen[s] || b.ords[s].expiresUs != x.us {
			return fmt.Errorf("order %x: expiry entry %d twice or not its expiry", b.ords[s].id[:4], x.us)
		}
		seen[s] = true
		expiring--
	}
	if expiring != 0 {
		return fmt.Errorf("%d resting orders with a ttl not in the expiry queue", expiring)
	}
	if x, _, ok := q.top(); ok && b.deref(x.ref) == 0 {
		return fmt.Errorf("stale earliest expiry entry")
	}
	return nil
}

// checkSide verifies one side's levels: sorted best last, none empty,
// queues doubly linked, counts and volumes exact.
func checkSide(b *book, side Side) error {
	lv := b.sides[side]
	for i := range lv {
		if i > 0 && key(side, lv[i-1].priceSteps) >= key(side, lv[i].priceSteps) {
			return fmt.Errorf("side %d levels out of order", side)
		}
		var vol volume
		count := int32(0)
		prev := uint32(0)
		for s := lv[i].head; s != 0; s = b.nodes[s].next {
			n := &b.nodes[s]
			if n.state != stateResting || n.priceSteps != lv[i].priceSteps || n.prev != prev || side != n.side {
				return fmt.Errorf("level %d queue corrupt", lv[i].priceSteps)
			}
			prev = s
			vol.add(n.remLots)
			count++
		}
		if count == 0 || count != lv[i].count || vol != lv[i].vol || prev != lv[i].tail {
			return fmt.Errorf("level %d: count %d/%d", lv[i].priceSteps, count, lv[i].count)
		}
	}
	return nil
}

// checkTick verifies one tick's output: per book a single clearing price
// within every filled order's own limit, terminal orders gone, running
// totals consistent.
func checkTick(e *Engine, out *TickResult, prices map[Hash]orderPrice) error {
	for _, bt := range out.Books {
		b := e.book(bt.Book)
		var p int64 = -1
		for _, ev := range out.Events[bt.FirstEvent:bt.EndEvent] {
			if ev.Terminal {
				if _, live := e.Order(ev.OrderID); live {
					return fmt.Errorf("order %x terminal and live", ev.OrderID[:4])
				}
			}
			if ev.Kind != EventFill {
				continue
			}
			var per, q uint256.Int
			lots := new(uint256.Int).Div(&ev.Base, &b.u.lot)
			per.Mul(lots, &b.u.unitQuote)
			q.Div(&ev.Quote, &per)
			half := int64(q.Uint64())
			if p >= 0 && half != p {
				return fmt.Errorf("two clearing prices %d and %d", p, half)
			}
			p = half
			op, ok := prices[ev.OrderID]
			if ok && (ev.Side == Buy && half > 2*op.steps || ev.Side == Sell && half < 2*op.steps) {
				return fmt.Errorf("order %x side %d limit %d filled at %d half-steps", ev.OrderID[:4], ev.Side, op.steps, half)
			}
		}
		if bt.Traded && (!bt.HasPrice || p < 0) || !bt.Traded && p >= 0 {
			return fmt.Errorf("BookTick traded=%v but fill price %d", bt.Traded, p)
		}
		if p >= 0 {
			var want uint256.Int
			b.u.priceWei(&want, p)
			if !want.Eq(&bt.Price) {
				return fmt.Errorf("BookTick price %s, fills at %s", bt.Price.Dec(), want.Dec())
			}
		}
	}
	if !slices.IsSortedFunc(out.Books, func(x, y BookTick) int { return bytes.Compare(x.Book[:], y.Book[:]) }) {
		return fmt.Errorf("books out of order")
	}
	return checkRanges(out)
}

// checkRanges verifies where a tick's events lie: the books' ranges are
// consecutive from event 0, each holding only its book's events; every
// event of a book but a trigger's firing is in its book's range (late ones
// included: liquidation, flat sweep, triggers); after the last range come
// the transfers, then the firings.
func checkRanges(out *TickResult) error {
	next := 0
	for _, bt := range out.Books {
		if bt.FirstEvent != next || bt.EndEvent < bt.FirstEvent {
			return fmt.Errorf("book %x: range [%d, %d) does not start at %d", bt.Book[:1], bt.FirstEvent, bt.EndEvent, next)
		}
		for i := bt.FirstEvent; i < bt.EndEvent; i++ {
			if ev := &out.Events[i]; ev.Book != bt.Book || ev.Kind == EventTransfer || ev.Kind == EventTriggerFired {
				return fmt.Errorf("event %d (kind %d, book %x) in the range of book %x", i, ev.Kind, ev.Book[:1], bt.Book[:1])
			}
		}
		next = bt.EndEvent
	}
	fired := false
	for i := next; i < len(out.Events); i++ {
		switch ev := &out.Events[i]; {
		case ev.Kind == EventTriggerFired:
			fired = true
		case ev.Kind != EventTransfer || fired:
			return fmt.Errorf("event %d (kind %d, book %x) outside every range", i, ev.Kind, ev.Book[:1])
		}
	}
	return nil
}

// limitsAt returns the limit every live order will have when tick T
// matches: its price now, or that of its last update that is not late.
func limitsAt(e *Engine, T int64) map[Hash]orderPrice {
	m := map[Hash]orderPrice{}
	for _, b := range e.books {
		for s := 1; s < len(b.nodes); s++ {
			if n := &b.nodes[s]; n.state != stateFree {
				m[b.ords[s].id] = orderPrice{n.side, n.priceSteps}
			}
		}
		for i := range b.pending.len() {
			p := b.pending.at(i)
			if s := b.deref(p.ref); s != 0 && p.kind == IntentUpdate && p.deadlineUs >= uint64(T) {
				m[b.ords[s].id] = orderPrice{b.nodes[s].side, p.newSteps}
			}
		}
	}
	return m
}

// orderPrice is what a test knows of an order's current limit.
type orderPrice struct {
	side  Side
	steps int64
}

// Test market: lot 1e15, tick 2e15, so unitQuote = 1e12 and the quote of
// L lots at h half-steps is L·h·1e12. Maker fee 0.1 %, taker 0.2 %.
var (
	tBase   = Address{0xBA}
	tQuote  = Address{0xC0}
	tBookID = Hash{0x01}
	e15     = uint256.NewInt(1_000_000_000_000_000)
)

func testMarket(id Hash, intervalUs int64) MarketConfig {
	return MarketConfig{ID: id, Name: "T/Q", Kind: Spot, Base: tBase, Quote: tQuote, IntervalUs: intervalUs,
		LotSize: *e15, TickPrecision: *new(uint256.Int).Mul(e15, uint256.NewInt(2)),
		MakerFee: *e15, TakerFee: *new(uint256.Int).Mul(e15, uint256.NewInt(2))}
}

func lotsWei(l int64) uint256.Int { return *new(uint256.Int).Mul(uint256.NewInt(uint64(l)), e15) }
func stepsWei(s int64) uint256.Int {
	return *new(uint256.Int).Mul(uint256.NewInt(uint64(s)), uint256.NewInt(2e15))
}

// harness drives one engine with named owners and orders.
type harness struct {
	t      testing.TB
	e      *Engine
	acc    *testAccounts
	out    TickResult
	nonce  uint64
	nowUs  int64
	iv     int64
	names  map[Hash]string
	ids    map[string]Hash
	owners map[Address]string
}

func newHarness(t testing.TB, l Limits) *harness {
	h := &harness{t: t, e: NewEngine(l), acc: newTestAccounts(), iv: 1_000_000,
		names: map[Hash]string{}, ids: map[string]Hash{}, owners: map[Address]string{}}
	m := testMarket(tBookID, h.iv)
	if err := h.e.CreateMarket(&m); err != nil {
		t.Fatal(err)
	}
	h.nowUs = 100
	return h
}

func owner(name string) Address {
	var a Address
	copy(a[:], name)
	return a
}

// fund gives an owner base lots and quote wei (as 1e12 units).
func (h *harness) fund(name string, baseLots, quoteUnits int64) {
	a := owner(name)
	h.owners[a] = name
	b := lotsWei(baseLots)
	q := new(uint256.Int).Mul(uint256.NewInt(uint64(quoteUnits)), uint256.NewInt(1e12))
	h.acc.fund(tBase, a, &b)
	h.acc.fund(tQuote, a, q)
}

func (h *harness) deadline() uint64 { return uint64(landing(h.nowUs, h.iv)) }

// limit builds a submit intent.
func (h *harness) limit(side Side, lots, steps int64, flags uint8) Intent {
	return Intent{Kind: IntentSubmit, Book: tBookID, Side: side, Size: lotsWei(lots), Price: stepsWei(steps),
		Type: Limit, Flags: flags, Deadline: h.deadline()}
}

// admit admits intents for owner and names the orders it creates.
func (h *harness) admit(who string, names []string, in ...Intent) Reason {
	h.t.Helper()
	a := Admission{Signer: owner(who), Owner: owner(who), Nonce: h.nonce, NowUs: h.nowUs, Tag: h.nonce}
	h.nonce++
	r := h.e.Admit(&a, &Envelope{Intents: in}, h.acc)
	for i := range in {
		id := OrderID(a.Signer, a.Nonce, uint32(i))
		if r == OK && (in[i].Kind == IntentSubmit || in[i].Kind == IntentSubmitTrigger) && i < len(names) {
			h.names[id] = names[i]
			h.ids[names[i]] = id
		}
	}
	if err := h.acc.check(); err != nil {
		h.t.Fatalf("after admission: %v", err)
	}
	if err := checkEngine(h.e, h.acc); err != nil {
		h.t.Fatalf("after admission: %v", err)
	}
	return r
}

// id returns a named order's id.
func (h *harness) id(name string) Hash {
	id, ok := h.ids[name]
	if !ok {
		h.t.Fatalf("no order %q", name)
	}
	return id
}

// tick runs the next tick (or tickUs if given) and returns its events as text.
func (h *harness) tick(tickUs ...int64) []string {
	h.t.Helper()
	T := landing(h.nowUs, h.iv)
	if len(tickUs) > 0 {
		T = tickUs[0]
	}
	prices := limitsAt(h.e, T)
	h.e.Tick(T, h.acc, &h.out)
	h.nowUs = T + 100
	h.checkTicked(T, prices)
	if err := checkPerp(h.e, h.acc); err != nil {
		h.t.Fatalf("tick %d: %v", T, err)
	}
	return h.format()
}

// checkTicked checks the accounts, the engine and the events of the tick
// at T just run, prices being limitsAt before it.
func (h *harness) checkTicked(T int64, prices map[Hash]orderPrice) {
	h.t.Helper()
	if err := h.acc.check(); err != nil {
		h.t.Fatalf("tick %d: %v", T, err)
	}
	if err := checkEngine(h.e, h.acc); err != nil {
		h.t.Fatalf("tick %d: %v", T, err)
	}
	if err := checkTick(h.e, &h.out, prices); err != nil {
		h.t.Fatalf("tick %d: %v", T, err)
	}
}

var kindText = map[EventKind]string{EventPlaced: "placed", EventFill: "fill", EventCancel: "cancel",
	EventExpire: "expire", EventPostOnlyRefused: "refused", EventUpdate: "update", EventTransfer: "transfer",
	EventTriggerFired: "fired", EventTriggerCancel: "tcancel", EventMarginCancel: "mcancel"}

// format renders events: "fill a 3@10.5 maker T" (lots @ price in steps).
func (h *harness) format() []string {
	var s []string
	uq := uint256.NewInt(1e12)
	for _, ev := range h.out.Events {
		name := h.names[ev.OrderID]
		switch ev.Kind {
		case EventTransfer:
			s = append(s, fmt.Sprintf("transfer %s->%s %s", h.owners[ev.Owner], h.owners[ev.To], ev.Amount.Dec()))
			continue
		case EventFill:
			lots := new(uint256.Int).Div(&ev.Base, e15).Uint64()
			per := new(uint256.Int).Mul(uint256.NewInt(lots), uq)
			half := new(uint256.Int).Div(&ev.Quote, per).Uint64()
			price := new(big.Rat).SetFrac64(int64(half), 2).FloatString(1)
			line := fmt.Sprintf("fill %s %d@%s", name, lots, strings.TrimSuffix(price, ".0"))
			if ev.Maker {
				line += " maker"
			}
			if ev.Terminal {
				line += " T"
			}
			s = append(s, line)
			continue
		}
		line := kindText[ev.Kind] + " " + name
		if ev.Terminal && ev.Kind != EventCancel && ev.Kind != EventExpire && ev.Kind != EventPostOnlyRefused && ev.Kind != EventMarginCancel {
			line += " T"
		}
		s = append(s, line)
	}
	return s
}

// levels renders a side as "lots@steps" best first.
func (h *harness) levels(side Side) string {
	var parts []string
	for _, l := range h.e.AppendLevels(nil, tBookID, side, 0) {
		var st, lots uint256.Int
		st.Div(&l.Price, uint256.NewInt(2e15))
		lots.Div(&l.Volume, e15)
		parts = append(parts, fmt.Sprintf("%s@%s/%d", lots.Dec(), st.Dec(), l.Orders))
	}
	return strings.Join(parts, " ")
}

func (h *harness) expectEvents(got []string, want ...string) {
	h.t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		h.t.Fatalf("events:\n  got:  %q\n  want: %q", got, want)
	}
}
