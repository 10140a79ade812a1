package refbook

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
)

// ledger is a map-backed Accounts that fails the test on any move the
// engine is not allowed to make.
type ledger struct {
	t      *testing.T
	cash   map[[2]clob.Address]*uint256.Int
	locked map[[2]clob.Address]*uint256.Int
	fees   map[clob.Address]*uint256.Int
}

func newLedger(t *testing.T) *ledger {
	return &ledger{t: t, cash: map[[2]clob.Address]*uint256.Int{}, locked: map[[2]clob.Address]*uint256.Int{}, fees: map[clob.Address]*uint256.Int{}}
}

func get(m map[[2]clob.Address]*uint256.Int, token, owner clob.Address) *uint256.Int {
	k := [2]clob.Address{token, owner}
	if m[k] == nil {
		m[k] = new(uint256.Int)
	}
	return m[k]
}

func (l *ledger) Available(token, owner clob.Address) uint256.Int {
	var z uint256.Int
	z.Sub(get(l.cash, token, owner), get(l.locked, token, owner))
	return z
}

func (l *ledger) Lock(token, owner clob.Address, a *uint256.Int) {
	av := l.Available(token, owner)
	if a.Gt(&av) {
		l.t.Fatalf("Lock %s > available %s", a.Dec(), av.Dec())
	}
	lk := get(l.locked, token, owner)
	lk.Add(lk, a)
}

func (l *ledger) Unlock(token, owner clob.Address, a *uint256.Int) {
	lk := get(l.locked, token, owner)
	if a.Gt(lk) {
		l.t.Fatalf("Unlock %s > locked %s", a.Dec(), lk.Dec())
	}
	lk.Sub(lk, a)
}

func (l *ledger) SpendLocked(token, owner clob.Address, a *uint256.Int) {
	l.Unlock(token, owner, a)
	c := get(l.cash, token, owner)
	c.Sub(c, a)
}

func (l *ledger) Credit(token, owner clob.Address, a *uint256.Int) {
	c := get(l.cash, token, owner)
	c.Add(c, a)
}

// Debit is a perp market's: the spot reference never calls it.
func (l *ledger) Debit(token, owner clob.Address, a *uint256.Int) {
	l.t.Fatalf("Debit %s on a spot-only engine", a.Dec())
}

func (l *ledger) Holding(token, owner clob.Address) (cash, locked, debt uint256.Int) {
	return *get(l.cash, token, owner), *get(l.locked, token, owner), debt
}

func (l *ledger) CollectFee(token clob.Address, a *uint256.Int) {
	if l.fees[token] == nil {
		l.fees[token] = new(uint256.Int)
	}
	l.fees[token].Add(l.fees[token], a)
}

// e18 is n × 1e18 (n may be a decimal fraction of 1e-6 granularity via milli).
func e18(n uint64) uint256.Int {
	var z uint256.Int
	z.Mul(uint256.NewInt(n), one18)
	return z
}

// milli is n × 1e15.
func milli(n uint64) uint256.Int {
	var z uint256.Int
	z.Mul(uint256.NewInt(n), uint256.NewInt(1_000_000_000_000_000))
	return z
}

var (
	tBase  = clob.Address{0xba}
	tQuote = clob.Address{0x90}
	alice  = clob.Address{0xa1}
	bob    = clob.Address{0xb0}
	carol  = clob.Address{0xc0}
	bookID = clob.Hash{0x01}
)

const iv = 1_000_000

// fixture: lot 1 base, step 1 quote, maker 0.1 %, taker 0.2 %, 1 s ticks;
// every owner starts with 1000 base and 10000 quote.
type fixture struct {
	t     *testing.T
	e     *Engine
	l     *ledger
	nonce uint64
	out   clob.TickResult
}

func newFixture(t *testing.T) *fixture {
	e := NewEngine(clob.Limits{OrdersMax: 1000, PendingMax: 1024})
	cfg := clob.MarketConfig{ID: bookID, Base: tBase, Quote: tQuote, IntervalUs: iv,
		TickPrecision: e18(1), LotSize: e18(1), MakerFee: milli(1), TakerFee: milli(2)}
	if err := e.CreateMarket(&cfg); err != nil {
		t.Fatal(err)
	}
	l := newLedger(t)
	for _, o := range []clob.Address{alice, bob, carol} {
		b, q := e18(1000), e18(10000)
		l.Credit(tBase, o, &b)
		l.Credit(tQuote, o, &q)
	}
	return &fixture{t: t, e: e, l: l}
}

func limit(side clob.Side, lots, price uint64, flags uint8, deadline uint64) clob.Intent {
	return clob.Intent{Kind: clob.IntentSubmit, Book: bookID, Side: side, Size: e18(lots), Price: e18(price),
		Type: clob.Limit, Flags: flags, Deadline: deadline}
}

// admit admits one envelope at now and returns the ids of its orders.
func (f *fixture) admit(now int64, owner clob.Address, want clob.Reason, in ...clob.Intent) []clob.Hash {
	f.t.Helper()
	f.nonce++
	a := clob.Admission{Signer: owner, Owner: owner, Nonce: f.nonce, NowUs: now, Tag: f.nonce}
	if got := f.e.Admit(&a, &clob.Envelope{Intents: in}, f.l); got != want {
		f.t.Fatalf("Admit: got %q, want %q", got, want)
	}
	ids := make([]clob.Hash, len(in))
	for i := range in {
		ids[i] = OrderID(owner, f.nonce, uint32(i))
	}
	return ids
}

// tick runs every tick due at now.
func (f *fixture) tick(now int64) []clob.Event {
	f.t.Helper()
	var all []clob.Event
	for {
		T, ok := f.e.NextTickDue(now)
		if !ok {
			return all
		}
		f.e.Tick(T, f.l, &f.out)
		all = append(all, f.out.Events...)
		if err := f.e.CheckInvariants(); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) cash(token, owner clob.Address) string {
	return get(f.l.cash, token, owner).Dec()
}

func (f *fixture) lockedOK() {
	f.t.Helper()
	for _, o := range []clob.Address{alice, bob, carol} {
		for _, tok := range []clob.Address{tBase, tQuote} {
			want := f.e.Locked(tok, o)
			if got := get(f.l.locked, tok, o); !got.Eq(&want) {
				f.t.Fatalf("locked %x/%x: ledger %s, engine %s", tok[:1], o[:1], got.Dec(), want.Dec())
			}
		}
	}
}

type evWant struct {
	kind     clob.EventKind
	id       clob.Hash
	base     uint64 // lots
	quote    string // wei, decimal
	fee      string
	terminal bool
	maker    bool
}

func checkEvents(t *testing.T, got []clob.Event, want []evWant) {
	t.Helper()
	if len(got) != len(want) {
		for _, g := range got {
			t.Logf("event kind %d id %x base %s quote %s", g.Kind, g.OrderID[:4], g.Base.Dec(), g.Quote.Dec())
		}
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		base := e18(w.base)
		if g.Kind != w.kind || g.OrderID != w.id || !g.Base.Eq(&base) || g.Terminal != w.terminal || g.Maker != w.maker {
			t.Fatalf("event %d: got kind %d id %x base %s terminal %v maker %v; want %+v", i, g.Kind, g.OrderID[:4], g.Base.Dec(), g.Terminal, g.Maker, w)
		}
		if w.quote != "" && g.Quote.Dec() != w.quote {
			t.Fatalf("event %d: quote %s, want %s", i, g.Quote.Dec(), w.quote)
		}
		if w.fee != "" && g.Fee.Dec() != w.fee {
			t.Fatalf("event %d: fee %s, want %s", i, g.Fee.Dec(), w.fee)
		}
	}
}

func TestOrderIDIsABIEncoding(t *testing.T) {
	addrT, _ := abi.NewType("address", "", nil)
	u64T, _ := abi.NewType("uint64", "", nil)
	u32T, _ := abi.NewType("uint32", "", nil)
	args := abi.Arguments{{Type: addrT}, {Type: u64T}, {Type: u32T}}
	f := func(signer clob.Address, nonce uint64, seq uint32) {
		t.Helper()
		enc, err := args.Pack(common.Address(signer), nonce, seq)
		if err != nil {
			t.Fatal(err)
		}
		want := common.BytesToHash(crypto.Keccak256(enc))
		if got := OrderID(signer, nonce, seq); got != clob.Hash(want) {
			t.Fatalf("OrderID(%x, %d, %d) = %x, want %x", signer, nonce, seq, got, want)
		}
	}
	f(alice, 0, 0)
	f(clob.Address{0xff, 1, 2, 3, 19: 0xee}, 1<<63+5, 63)
}

// A limit buy at 110 and a limit sell at 100 admitted in the same tick: the
// price is the midpoint of the bounds ps = 100 and pb = 110.
func TestCrossingBookMidpoint(t *testing.T) {
	f := newFixture(t)
	b := f.admit(100, alice, clob.OK, limit(clob.Buy, 3, 110, 0, iv))
	s := f.admit(200, bob, clob.OK, limit(clob.Sell, 3, 100, 0, iv))
	// reserved: 330 + 0.2 % = 330.66 quote
	if av := f.l.Available(tQuote, alice); av.Dec() != "9669340000000000000000" {
		t.Fatalf("alice available %s", av.Dec())
	}
	evs := f.tick(iv)
	// 3 lots at 105: quote 315, fees 0.2 % each = 0.63
	checkEvents(t, evs, []evWant{
		{kind: clob.EventPlaced, id: b[0]},
		{kind: clob.EventPlaced, id: s[0]},
		{kind: clob.EventFill, id: b[0], base: 3, quote: "315000000000000000000", fee: "630000000000000000", terminal: true},
		{kind: clob.EventFill, id: s[0], base: 3, quote: "315000000000000000000", fee: "630000000000000000", terminal: true},
	})
	if p, ok := f.e.LastPrice(bookID); !ok || p.Dec() != "105000000000000000000" {
		t.Fatalf("last price %s %v", p.Dec(), ok)
	}
	if got := f.cash(tQuote, alice); got != "9684370000000000000000" { // 10000 - 315.63
		t.Fatalf("alice quote %s", got)
	}
	if got := f.cash(tQuote, bob); got != "10314370000000000000000" { // 10000 + 314.37
		t.Fatalf("bob quote %s", got)
	}
	if got := f.cash(tBase, alice); got != "1003000000000000000000" {
		t.Fatalf("alice base %s", got)
	}
	if got := f.l.fees[tQuote].Dec(); got != "1260000000000000000" {
		t.Fatalf("fees %s", got)
	}
	f.lockedOK()
	if r := f.out.Books; len(r) != 1 || !r[0].Traded || r[0].VolumeBase.Dec() != "3000000000000000000" || r[0].NewOrders != 2 {
		t.Fatalf("book tick %+v", r)
	}
}

// A market buy against resting limit sells: market orders never set the
// price, so it is bounded by the highest matched sell (101) and the
// partly matched sell left at 101.
func TestMarketBuyClearsAtHighestMatchedSell(t *testing.T) {
	f := newFixture(t)
	s := f.admit(100, bob, clob.OK,
		limit(clob.Sell, 2, 100, 0, iv), limit(clob.Sell, 2, 101, 0, iv), limit(clob.Sell, 2, 105, 0, iv))
	f.tick(iv)
	m := clob.Intent{Kind: clob.IntentSubmit, Book: bookID, Side: clob.Buy, Size: e18(3), Price: e18(200),
		Type: clob.Market, Flags: clob.FlagIOC, Deadline: 2 * iv}
	b := f.admit(iv+5, alice, clob.OK, m)
	evs := f.tick(2 * iv)
	checkEvents(t, evs, []evWant{
		{kind: clob.EventPlaced, id: b[0]},
		{kind: clob.EventFill, id: b[0], base: 2, quote: "202000000000000000000", fee: "404000000000000000"},
		{kind: clob.EventFill, id: s[0], base: 2, quote: "202000000000000000000", fee: "202000000000000000", terminal: true, maker: true},
		{kind: clob.EventFill, id: b[0], base: 1, quote: "101000000000000000000", fee: "202000000000000000", terminal: true},
		{kind: clob.EventFill, id: s[1], base: 1, quote: "101000000000000000000", fee: "101000000000000000", maker: true},
	})
	if p, _ := f.e.LastPrice(bookID); p.Dec() != "101000000000000000000" {
		t.Fatalf("last price %s", p.Dec())
	}
	// The cap reserved 3 × 200 × 1.002 = 601.2; spent 303.606; the rest is back.
	if got := f.cash(tQuote, alice); got != "9696394000000000000000" {
		t.Fatalf("alice quote %s", got)
	}
	f.lockedOK()
	lv := f.e.AppendLevels(nil, bookID, clob.Sell, 0)
	if len(lv) != 2 || lv[0].Volume.Dec() != "1000000000000000000" || lv[1].Price.Dec() != "105000000000000000000" {
		t.Fatalf("levels %+v", lv)
	}
}

// Two POST_ONLY orders that cross only each other are both refused; a
// POST_ONLY order behind a resting order that absorbs the crossing sell is
// not touched.
func TestPostOnly(t *testing.T) {
	f := newFixture(t)
	b := f.admit(100, alice, clob.OK, limit(clob.Buy, 1, 101, clob.FlagPostOnly, iv))
	s := f.admit(200, bob, clob.OK, limit(clob.Sell, 1, 100, clob.FlagPostOnly, iv))
	evs := f.tick(iv)
	checkEvents(t, evs, []evWant{
		{kind: clob.EventPlaced, id: b[0]},
		{kind: clob.EventPlaced, id: s[0]},
		{kind: clob.EventPostOnlyRefused, id: b[0], terminal: true},
		{kind: clob.EventPostOnlyRefused, id: s[0], terminal: true},
	})
	if _, ok := f.e.LastPrice(bookID); ok {
		t.Fatal("a book with refused orders only has no price")
	}
	if got := f.l.Available(tQuote, alice); got.Dec() != "10000000000000000000000" {
		t.Fatalf("alice available %s", got.Dec())
	}
	f.lockedOK()

	r := f.admit(iv+1, carol, clob.OK, limit(clob.Buy, 1, 100, 0, 2*iv))
	f.tick(2 * iv)
	p := f.admit(2*iv+1, alice, clob.OK, limit(clob.Buy, 1, 100, clob.FlagPostOnly, 3*iv))
	s = f.admit(2*iv+2, bob, clob.OK, limit(clob.Sell, 1, 100, 0, 3*iv))
	evs = f.tick(3 * iv)
	checkEvents(t, evs, []evWant{
		{kind: clob.EventPlaced, id: p[0]},
		{kind: clob.EventPlaced, id: s[0]},
		{kind: clob.EventFill, id: r[0], base: 1, quote: "100000000000000000000", fee: "100000000000000000", terminal: true, maker: true},
		{kind: clob.EventFill, id: s[0], base: 1, quote: "100000000000000000000", fee: "200000000000000000", terminal: true},
	})
	if o, ok := f.e.Order(p[0]); !ok || o.Pending {
		t.Fatal("the post-only order behind the absorbing one should rest")
	}
	f.lockedOK()
}

// An order with ttl 1.5 s placed at 1 s expires at the first tick ≥ 2.5 s.
func TestTTLExpiry(t *testing.T) {
	f := newFixture(t)
	in := limit(clob.Buy, 2, 50, 0, iv)
	in.TTL = 1_500_000
	id := f.admit(10, alice, clob.OK, in)
	f.tick(iv)
	o, ok := f.e.Order(id[0])
	if !ok || o.AdmitTickUs != iv || o.ExpiresUs != 2_500_000 {
		t.Fatalf("order %+v %v", o, ok)
	}
	if _, ok := f.e.NextTickDue(2_999_999); ok {
		t.Fatal("nothing is due before 3 s")
	}
	if T, ok := f.e.NextTickDue(7 * iv); !ok || T != 3*iv {
		t.Fatalf("NextTickDue = %d %v, want 3 s", T, ok)
	}
	evs := f.tick(7 * iv)
	checkEvents(t, evs, []evWant{{kind: clob.EventExpire, id: id[0], terminal: true}})
	if got := f.l.Available(tQuote, alice); got.Dec() != "10000000000000000000000" {
		t.Fatalf("alice available %s", got.Dec())
	}
	f.lockedOK()
}

// At the marginal price level, an order resting from an earlier tick fills
// first, then the orders of this tick by ascending id.
func TestQueuePriorityAtMarginalLevel(t *testing.T) {
	f := newFixture(t)
	a := f.admit(10, alice, clob.OK, limit(clob.Sell, 2, 100, 0, iv))
	f.tick(iv)
	x := f.admit(iv+1, bob, clob.OK, limit(clob.Sell, 2, 100, 0, 2*iv))
	y := f.admit(iv+2, carol, clob.OK, limit(clob.Sell, 2, 100, 0, 2*iv))
	first, second := x[0], y[0]
	if less(second, first) {
		first, second = second, first
	}
	b := f.admit(iv+3, alice, clob.OK, limit(clob.Buy, 3, 100, 0, 2*iv))
	evs := f.tick(2 * iv)
	checkEvents(t, evs, []evWant{
		{kind: clob.EventPlaced, id: x[0]},
		{kind: clob.EventPlaced, id: y[0]},
		{kind: clob.EventPlaced, id: b[0]},
		{kind: clob.EventFill, id: b[0], base: 2},
		{kind: clob.EventFill, id: a[0], base: 2, terminal: true, maker: true},
		{kind: clob.EventFill, id: b[0], base: 1, terminal: true},
		{kind: clob.EventFill, id: first, base: 1},
	})
	if o, _ := f.e.Order(second); !o.FilledBase.IsZero() {
		t.Fatal("the later id at the marginal level must not fill")
	}
	f.lockedOK()
}

// A batch is admitted whole or not at all; each intent sees the ones
// before it.
func TestAdmissionAtomicAndOrdered(t *testing.T) {
	f := newFixture(t)
	ok := limit(clob.Buy, 1, 10, 0, iv)
	// the second intent fails: nothing of the first may stay
	f.admit(1, alice, clob.ReasonPriceStep, ok, clob.Intent{Kind: clob.IntentSubmit, Book: bookID,
		Size: e18(1), Price: milli(1500), Deadline: iv})
	if got := f.l.Available(tQuote, alice); got.Dec() != "10000000000000000000000" {
		t.Fatalf("alice available %s", got.Dec())
	}
	if lv := f.e.AppendLevels(nil, bookID, clob.Buy, 0); len(lv) != 0 {
		t.Fatal("levels after a refused batch")
	}
	// a batch may cancel the order it creates
	id := OrderID(alice, f.nonce+1, 0)
	f.admit(2, alice, clob.OK, ok, clob.Intent{Kind: clob.IntentCancel, Book: bookID, OrderID: id, Deadline: iv})
	evs := f.tick(iv)
	checkEvents(t, evs, []evWant{
		{kind: clob.EventPlaced, id: id},
		{kind: clob.EventCancel, id: id, terminal: true},
	})
	f.lockedOK()

	g := func(want clob.Reason, now int64, in clob.Intent) {
		t.Helper()
		f.admit(now, alice, want, in)
	}
	g(clob.ReasonDeadlineAlign, iv+1, limit(clob.Buy, 1, 10, 0, 2*iv+1))
	g(clob.ReasonDeadlinePast, iv+1, limit(clob.Buy, 1, 10, 0, iv))
	g(clob.ReasonDeadlineFar, iv+1, limit(clob.Buy, 1, 10, 0, (clob.DeadlineAheadMaxUs/iv+2)*iv))
	g(clob.ReasonFlagsUnknown, iv+1, limit(clob.Buy, 1, 10, 0x08, 2*iv))
	g(clob.ReasonIOCPostOnly, iv+1, limit(clob.Buy, 1, 10, clob.FlagIOC|clob.FlagPostOnly, 2*iv))
	g(clob.ReasonReduceOnlySpot, iv+1, limit(clob.Buy, 1, 10, clob.FlagReduceOnly, 2*iv))
	g(clob.ReasonSizeZero, iv+1, limit(clob.Buy, 0, 10, 0, 2*iv))
	g(clob.ReasonPriceZero, iv+1, limit(clob.Buy, 1, 0, 0, 2*iv))
	g(clob.ReasonInsufficientBalance, iv+1, limit(clob.Buy, 1000, 10, 0, 2*iv))
	g(clob.ReasonUnknownOrder, iv+1, clob.Intent{Kind: clob.IntentCancel, Book: bookID, OrderID: id, Deadline: 2 * iv})
	g(clob.ReasonTransferZero, iv+1, clob.Intent{Kind: clob.IntentTransfer, Token: tQuote, To: bob, Deadline: 1_500_000})
	var huge uint256.Int
	huge.SetFromBig(new(big.Int).Lsh(big.NewInt(1), 60))
	big1 := limit(clob.Buy, 1, 10, 0, 2*iv)
	big1.Size.Mul(&huge, one18)
	g(clob.ReasonValueRange, iv+1, big1)
}

// A transfer locks at admission and settles on the 500 ms grid.
func TestTransfer(t *testing.T) {
	f := newFixture(t)
	amt := e18(7)
	f.admit(1, alice, clob.OK, clob.Intent{Kind: clob.IntentTransfer, Token: tQuote, To: bob, Amount: amt, Deadline: 500_000})
	f.lockedOK()
	T, ok := f.e.NextTickDue(iv)
	if !ok || T != 500_000 {
		t.Fatalf("NextTickDue %d %v", T, ok)
	}
	evs := f.tick(iv)
	if len(evs) != 1 || evs[0].Kind != clob.EventTransfer || !evs[0].Amount.Eq(&amt) || f.out.Landed[0] != 1 {
		t.Fatalf("events %+v", evs)
	}
	if got := f.cash(tQuote, bob); got != "10007000000000000000000" {
		t.Fatalf("bob quote %s", got)
	}
	f.lockedOK()
}
