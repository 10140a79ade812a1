package refperp

import (
	"math/big"
	"testing"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/internal/refbook"
)

// Hand-computed scenarios of docs/perps.md. The market: lot 1 base unit,
// tick 0.001 quote (so q = lot × tick / 2e18 = 5e14 wei), 1 s ticks,
// leverage 10, no fees unless a test sets them, no walk, no premium, a
// mark free to jump (markClamp 100 %), no funding unless a test sets it.

// ledger is a map-backed Accounts that fails the test on an illegal move.
type ledger struct {
	t            *testing.T
	cash, locked map[clob.Address]*uint256.Int // native only
	fees         uint256.Int
}

func (l *ledger) slot(m map[clob.Address]*uint256.Int, owner clob.Address) *uint256.Int {
	if m[owner] == nil {
		m[owner] = new(uint256.Int)
	}
	return m[owner]
}

func (l *ledger) Available(token, owner clob.Address) uint256.Int {
	var z uint256.Int
	z.Sub(l.slot(l.cash, owner), l.slot(l.locked, owner))
	return z
}

func (l *ledger) Lock(token, owner clob.Address, a *uint256.Int) {
	if av := l.Available(token, owner); a.Gt(&av) {
		l.t.Fatalf("Lock %s > available %s", a.Dec(), av.Dec())
	}
	lk := l.slot(l.locked, owner)
	lk.Add(lk, a)
}

func (l *ledger) Unlock(token, owner clob.Address, a *uint256.Int) {
	lk := l.slot(l.locked, owner)
	if a.Gt(lk) {
		l.t.Fatalf("Unlock %s > locked %s", a.Dec(), lk.Dec())
	}
	lk.Sub(lk, a)
}

func (l *ledger) SpendLocked(token, owner clob.Address, a *uint256.Int) {
	l.Unlock(token, owner, a)
	c := l.slot(l.cash, owner)
	c.Sub(c, a)
}

func (l *ledger) Credit(token, owner clob.Address, a *uint256.Int) {
	c := l.slot(l.cash, owner)
	c.Add(c, a)
}

func (l *ledger) CollectFee(token clob.Address, a *uint256.Int) { l.fees.Add(&l.fees, a) }

// Debit is never called: the reference keeps debt itself.
func (l *ledger) Debit(token, owner clob.Address, a *uint256.Int) {
	l.t.Fatalf("Debit %s reached the reference's inner ledger", a.Dec())
}

func (l *ledger) Holding(token, owner clob.Address) (cash, locked, debt uint256.Int) {
	return *l.slot(l.cash, owner), *l.slot(l.locked, owner), debt
}

var (
	native = clob.Address{0xee, 19: 0xee}
	synth  = clob.Address{0x5e}
	alice  = clob.Address{0xa1}
	bob    = clob.Address{0xb0}
	perpID = clob.Hash{0x02}
)

const iv = 1_000_000

// wei parses a decimal amount.
func wei(s string) *big.Int {
	z, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return z
}

// tokens is n × 1e18 wei.
func tokens(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), wad) }

type fixture struct {
	t     *testing.T
	e     *Engine
	l     *ledger
	nonce uint64
	out   clob.TickResult
	now   int64
	dl    uint64 // deadline of the next envelopes (0: the next tick)
}

func u256(x *big.Int) *uint256.Int { u, _ := uint256.FromBig(x); return u }

func newFixture(t *testing.T, tune func(*clob.PerpParams)) *fixture {
	e := NewEngine(clob.Limits{OrdersMax: 100, PendingMax: 128})
	cfg := clob.MarketConfig{ID: perpID, Kind: clob.Perp, Base: synth, Quote: native, IntervalUs: iv,
		TickPrecision: *uint256.NewInt(1e15), LotSize: *u256(wad)}
	cfg.Perp = clob.PerpParams{MaxLeverage: 10, MarkClamp: *u256(wad), OraclePrice: *u256(tokens(100))}
	if tune != nil {
		tune(&cfg.Perp)
	}
	if err := e.CreateMarket(&cfg); err != nil {
		t.Fatal(err)
	}
	l := &ledger{t: t, cash: map[clob.Address]*uint256.Int{}, locked: map[clob.Address]*uint256.Int{}}
	return &fixture{t: t, e: e, l: l}
}

func (f *fixture) fund(owner clob.Address, n int64) { f.l.Credit(native, owner, u256(tokens(n))) }

// order is a perp limit order of lots at price steps (0.001 quote each).
func order(side clob.Side, lots, steps uint64, flags uint8) clob.Intent {
	in := clob.Intent{Kind: clob.IntentSubmit, Book: perpID, Side: side, Type: clob.Limit, Flags: flags}
	in.Size = *u256(new(big.Int).Mul(new(big.Int).SetUint64(lots), wad))
	in.Price.Mul(uint256.NewInt(steps), uint256.NewInt(1e15))
	return in
}

// admit admits one envelope landing in the next tick; it returns the ids.
func (f *fixture) admit(owner clob.Address, want clob.Reason, in ...clob.Intent) []clob.Hash {
	f.t.Helper()
	f.nonce++
	a := clob.Admission{Signer: owner, Owner: owner, Nonce: f.nonce, NowUs: f.now, Tag: f.nonce}
	for i := range in {
		in[i].Deadline = uint64((f.now/iv + 1) * iv)
		if f.dl != 0 {
			in[i].Deadline = f.dl
		}
	}
	if got := f.e.Admit(&a, &clob.Envelope{Intents: in}, f.l); got != want {
		f.t.Fatalf("Admit: got %q, want %q", got, want)
	}
	ids := make([]clob.Hash, len(in))
	for i := range in {
		ids[i] = refbook.OrderID(owner, f.nonce, uint32(i))
	}
	return ids
}

// tick runs the tick at now + dt (a multiple of the interval) and checks
// the invariants.
func (f *fixture) tick(dt int64) []clob.Event {
	f.t.Helper()
	f.now = (f.now/iv)*iv + dt
	f.e.Tick(f.now, f.l, &f.out)
	if err := f.e.CheckInvariants(f.l, alice, bob, clob.BackstopAddress); err != nil {
		f.t.Fatal(err)
	}
	return f.out.Events
}

func (f *fixture) position(owner clob.Address) (int64, string) {
	p := f.e.pos[posKey{perpID, owner}]
	if p == nil {
		return 0, "0"
	}
	return p.S, p.C.String()
}

func (f *fixture) wantPos(owner clob.Address, s int64, c string) {
	f.t.Helper()
	if gs, gc := f.position(owner); gs != s || gc != c {
		f.t.Fatalf("position of %x: (%d, %s), want (%d, %s)", owner[:1], gs, gc, s, c)
	}
}

func (f *fixture) wantCash(owner clob.Address, want *big.Int) {
	f.t.Helper()
	if got := f.e.cashMinusDebt(owner); got.Cmp(want) != 0 {
		f.t.Fatalf("cash − debt of %x: %s, want %s", owner[:1], got, want)
	}
}

func signedStr(s clob.Signed) string {
	if s.Neg {
		return "-" + s.Abs.Dec()
	}
	return s.Abs.Dec()
}

// fills returns the fill events' (realized, position) by owner, in order.
func fills(evs []clob.Event, owner clob.Address) (out [][2]string) {
	for _, ev := range evs {
		if ev.Kind == clob.EventFill && ev.Owner == owner {
			out = append(out, [2]string{signedStr(ev.Realized), signedStr(ev.Position)})
		}
	}
	return out
}

func TestOpenReduceFlip(t *testing.T) {
	f := newFixture(t, nil)
	f.fund(alice, 1000)
	f.fund(bob, 1000)
	f.tick(iv) // the market's first tick
	// open: 4 lots at 100 (100000 steps = 200000 half-steps): C = 4 × 200000.
	f.admit(alice, clob.OK, order(clob.Buy, 4, 100000, 0))
	f.admit(bob, clob.OK, order(clob.Sell, 4, 100000, 0))
	f.tick(iv)
	f.wantPos(alice, 4, "800000")
	f.wantPos(bob, -4, "-800000")
	// flip at 110: r = 4, Cr = 800000, R = 4 × 220000 − 800000 = 80000 q =
	// 40 tokens; the 2 left open a short at C = −440000.
	f.admit(alice, clob.OK, order(clob.Sell, 6, 110000, 0))
	f.admit(bob, clob.OK, order(clob.Buy, 6, 110000, 0))
	evs := f.tick(iv)
	if got := fills(evs, alice); len(got) != 1 || got[0] != [2]string{"40000000000000000000", "-2000000000000000000"} {
		t.Fatalf("alice's flip fill: %v", got)
	}
	if got := fills(evs, bob); len(got) != 1 || got[0] != [2]string{"-40000000000000000000", "2000000000000000000"} {
		t.Fatalf("bob's flip fill: %v", got)
	}
	f.wantPos(alice, -2, "-440000")
	f.wantPos(bob, 2, "440000")
	f.wantCash(alice, tokens(1040))
	f.wantCash(bob, tokens(960))
	// reduce by 1 at 105: Cr = trunc(−440000 / 2) = −220000,
	// R = −210000 + 220000 = 10000 q = 5 tokens.
	f.admit(alice, clob.OK, order(clob.Buy, 1, 105000, 0))
	f.admit(bob, clob.OK, order(clob.Sell, 1, 105000, 0))
	f.tick(iv)
	f.wantPos(alice, -1, "-220000")
	f.wantPos(bob, 1, "220000")
	f.wantCash(alice, tokens(1045))
	f.wantCash(bob, tokens(955))
}

func TestTruncatedCostShare(t *testing.T) {
	f := newFixture(t, nil)
	f.fund(alice, 1000)
	f.fund(bob, 1000)
	f.tick(iv)
	// C = 3 × 200002 = 600006 after one fill at 100001 steps.
	f.admit(alice, clob.OK, order(clob.Buy, 3, 100001, 0))
	f.admit(bob, clob.OK, order(clob.Sell, 3, 100001, 0))
	f.tick(iv)
	f.wantPos(alice, 3, "600006")
	// sell 2 at 100000: Cr = trunc(600006 × 2 / 3) = 400004, R = 400000 −
	// 400004 = −4 q = −2e15 wei; C = 200002.
	f.admit(alice, clob.OK, order(clob.Sell, 2, 100000, 0))
	f.admit(bob, clob.OK, order(clob.Buy, 2, 100000, 0))
	f.tick(iv)
	f.wantPos(alice, 1, "200002")
	f.wantCash(alice, new(big.Int).Sub(tokens(1000), wei("2000000000000000")))
}

func TestFeesAndDebt(t *testing.T) {
	g := newFeeFixture(t)
	g.fund(alice, 50)
	g.fund(bob, 1000)
	g.tick(iv)
	// 4 lots at 100: quote 400 tokens, taker fee 1 % = 4 tokens each side.
	g.admit(alice, clob.OK, order(clob.Buy, 4, 100000, 0))
	g.admit(bob, clob.OK, order(clob.Sell, 4, 100000, 0))
	evs := g.tick(iv)
	if len(evs) < 4 || evs[2].Fee.Dec() != "4000000000000000000" {
		t.Fatalf("fill fee: %+v", evs)
	}
	g.wantCash(alice, tokens(46))
	if g.l.fees.Dec() != "8000000000000000000" {
		t.Fatalf("fees %s", g.l.fees.Dec())
	}
	// a loss beyond free cash becomes debt: close at 88 (−48 tokens) with
	// a 1 % fee (3.52 tokens): cash − debt = 46 − 48 − 3.52 = −5.52.
	g.admit(alice, clob.OK, order(clob.Sell, 4, 88000, clob.FlagReduceOnly))
	g.admit(bob, clob.OK, order(clob.Buy, 4, 88000, 0))
	g.tick(iv)
	// With no position left, the liquidation pass hands the 5.52 of bad
	// debt to the backstop (step 5).
	g.wantPos(alice, 0, "0")
	g.wantCash(alice, new(big.Int))
	g.wantCash(clob.BackstopAddress, wei("-5520000000000000000"))
	if d := g.e.Debt(alice); !d.IsZero() || !g.l.slot(g.l.cash, alice).IsZero() {
		t.Fatalf("debt %s, cash %s", d.Dec(), g.l.slot(g.l.cash, alice).Dec())
	}
}

func TestDebtMoves(t *testing.T) {
	f := newFixture(t, nil)
	f.fund(alice, 10)
	f.e.inner = f.l
	// a loss spends free cash first, the rest is debt
	f.e.change(alice, tokens(-15))
	if d := f.e.Debt(alice); d.Dec() != "5000000000000000000" || !f.l.slot(f.l.cash, alice).IsZero() {
		t.Fatalf("debt %s, cash %s", d.Dec(), f.l.slot(f.l.cash, alice).Dec())
	}
	// a credit pays the debt first
	f.e.change(alice, tokens(7))
	f.wantCash(alice, tokens(2))
	if d := f.e.Debt(alice); !d.IsZero() {
		t.Fatalf("debt %s after a credit", d.Dec())
	}
	// with cash locked behind a transfer, a loss leaves Cash = Locked and
	// the unlock of a dropped transfer pays the debt at once
	tr := clob.Intent{Kind: clob.IntentTransfer, Token: native, To: bob, Amount: *u256(tokens(2))}
	f.dl = 500_000
	f.admit(alice, clob.OK, tr)
	f.e.change(alice, tokens(-3))
	if d := f.e.Debt(alice); d.Dec() != "3000000000000000000" {
		t.Fatalf("debt %s with cash locked", d.Dec())
	}
	// The tick drops the transfer (its deadline, 0.5 s, has passed): the
	// unlocked 2 pay debt down to 1, which the liquidation pass then hands
	// to the backstop (no position left).
	f.tick(iv)
	f.wantCash(alice, new(big.Int))
	f.wantCash(clob.BackstopAddress, tokens(-1))
	if !f.l.slot(f.l.cash, alice).IsZero() {
		t.Fatalf("after the unlock: cash %s", f.l.slot(f.l.cash, alice).Dec())
	}
}

func newFeeFixture(t *testing.T) *fixture {
	e := NewEngine(clob.Limits{OrdersMax: 100, PendingMax: 128})
	cfg := clob.MarketConfig{ID: perpID, Kind: clob.Perp, Base: synth, Quote: native, IntervalUs: iv,
		TickPrecision: *uint256.NewInt(1e15), LotSize: *u256(wad), TakerFee: *uint256.NewInt(1e16), MakerFee: *uint256.NewInt(1e16)}
	cfg.Perp = clob.PerpParams{MaxLeverage: 10, MarkClamp: *u256(wad), OraclePrice: *u256(tokens(100))}
	if err := e.CreateMarket(&cfg); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, e: e, l: &ledger{t: t, cash: map[clob.Address]*uint256.Int{}, locked: map[clob.Address]*uint256.Int{}}}
}

// open4 opens alice 4 lots long and bob 4 short at 100 (C = ±800000 q).
func (f *fixture) open4(aliceCash, bobCash int64) {
	f.fund(alice, aliceCash)
	f.fund(bob, bobCash)
	f.tick(iv)
	f.admit(alice, clob.OK, order(clob.Buy, 4, 100000, 0))
	f.admit(bob, clob.OK, order(clob.Sell, 4, 100000, 0))
	f.tick(iv)
	f.wantPos(alice, 4, "800000")
}

func (f *fixture) setOracle(steps uint64) {
	f.t.Helper()
	var p uint256.Int
	p.Mul(uint256.NewInt(steps), uint256.NewInt(1e15))
	if r := f.e.SetOraclePrice(perpID, &p); r != clob.OK {
		f.t.Fatalf("SetOraclePrice: %s", r)
	}
}

func TestMarginAdmissionAndWithdrawable(t *testing.T) {
	f := newFixture(t, nil)
	f.fund(alice, 50)
	f.fund(bob, 1000)
	f.tick(iv)
	// 5 lots at 100: IMo = ceil(2 × 100000 × 5 / 10) q = 50 tokens ≤ 50.
	// 6 lots: 60 > 50: refused.
	f.admit(alice, clob.ReasonInsufficientMargin, order(clob.Buy, 6, 100000, 0))
	ids := f.admit(alice, clob.OK, order(clob.Buy, 4, 100000, 0))
	// IMo counts the resting order: W = 4, 40 tokens; withdrawable 10.
	if m := f.e.Margin(alice, f.l); m.Withdrawable.Dec() != "10000000000000000000" || m.OrderMargin.Dec() != "40000000000000000000" {
		t.Fatalf("margin with an open order: %+v", m)
	}
	// a sell does not grow W = max(|0+4|, |0−2|): admitted with no headroom check
	f.admit(alice, clob.OK, order(clob.Sell, 2, 200000, 0))
	// a transfer may take at most the withdrawable 10 tokens
	tr := clob.Intent{Kind: clob.IntentTransfer, Token: native, To: bob, Amount: *u256(tokens(11))}
	f.admit(alice, clob.ReasonInsufficientBalance, tr)
	tr.Amount = *u256(tokens(10))
	f.admit(alice, clob.OK, tr)
	f.admit(bob, clob.OK, order(clob.Sell, 4, 100000, 0))
	f.tick(iv)
	f.wantPos(alice, 4, "800000")
	if _, live := f.e.Order(ids[0]); live {
		t.Fatal("alice's buy should have filled")
	}
	// S = 4, resting sell 2: W = max(4, |4 − 2|) = 4: IMo = 40, cash 40.
	m := f.e.Margin(alice, f.l)
	if m.Cash.Abs.Dec() != "40000000000000000000" || m.Withdrawable.Dec() != "0" || m.InitialMargin.Dec() != "40000000000000000000" ||
		m.Maintenance.Dec() != "20000000000000000000" || m.Positions != 1 {
		t.Fatalf("margin after the fill: %+v", m)
	}
}

func TestFundingAndMark(t *testing.T) {
	f := newFixture(t, func(p *clob.PerpParams) {
		p.MaxPremium.SetUint64(1e16) // 1 %: EMA cap floor(200000 × 1e16 / 1e18) = 2000 half-steps
		p.MarkClamp.SetUint64(1e16)  // 1 % of the last mark: 1000 steps
		p.InterestRate.SetUint64(1e14)
		p.MaxFundingRate.SetUint64(32e16)
	})
	f.fund(alice, 1000)
	f.fund(bob, 1000)
	f.tick(iv) // first tick: mark = oracle, dt = 0
	f.dl = uint64(f.now + 90*iv)
	f.admit(alice, clob.OK, order(clob.Buy, 1, 100500, 0))
	f.admit(bob, clob.OK, order(clob.Sell, 1, 100700, 0))
	f.tick(90 * iv)
	// dt = 90 s; book = 100500 + 100700 = 201200, gap = 1200,
	// ema = trunc(1200 × 90 / 180) = 600, mark = floor(200600 / 2) = 100300.
	// premium = floor(500 × 1e18 / 100000) = 5e15, rate = 1e14 + 5e15.
	// f = trunc(5.1e15 × 200000 × 90e6 / (1e18 × 28.8e9)) = 3 q per lot:
	// index 3 q/lot = 3 × 5e14 wei per base unit.
	info, _ := f.e.PerpMarket(perpID)
	if info.Mark.Dec() != "100300000000000000000" || info.FundingRate.Abs.Dec() != "5100000000000000" ||
		info.FundingIndex.Abs.Dec() != "1500000000000000" || info.FundingLastUs != f.now {
		t.Fatalf("perp market: %+v", info)
	}
	// the next tick: dt = 180 s (capped from 200 s), gap 1200:
	// ema = 600 + trunc(600 × 180 / 180) = 1200, mark = 100600 (within
	// the clamp 100300 ± 1003).
	f.tick(200 * iv)
	info, _ = f.e.PerpMarket(perpID)
	if info.Mark.Dec() != "100600000000000000000" {
		t.Fatalf("mark %s, want 100.6", info.Mark.Dec())
	}
}

func TestFundingPayments(t *testing.T) {
	f := newFixture(t, func(p *clob.PerpParams) {
		p.InterestRate.SetUint64(1e16)
		p.MaxFundingRate.SetUint64(32e16)
	})
	f.open4(1000, 1000)
	// no book: rate = 1e16; dt = 180 s:
	// f = trunc(1e16 × 200000 × 180e6 / 2.88e28) = 12 q per lot;
	// alice pays 4 × 12 q = 48 × 5e14 wei, bob receives it.
	f.tick(180 * iv)
	paid := wei("24000000000000000")
	f.wantCash(alice, new(big.Int).Sub(tokens(1000), paid))
	f.wantCash(bob, new(big.Int).Add(tokens(1000), paid))
	ps := f.e.AppendPositions(nil, alice)
	if len(ps) != 1 || ps[0].Funding.Neg || ps[0].Funding.Abs.Dec() != paid.String() || ps[0].EntryPrice.Dec() != "100000000000000000000" {
		t.Fatalf("alice's position: %+v", ps)
	}
}

func TestLiquidationWithPenalty(t *testing.T) {
	f := newFixture(t, nil)
	f.open4(50, 1000)
	f.admit(alice, clob.OK, order(clob.Sell, 1, 200000, 0)) // cancelled by the liquidation
	f.tick(iv)
	f.setOracle(92000)
	// mark 92: U = 736000 − 800000 = −64000 q = −32 tokens; equity 18;
	// MM = ceil(736000 / 20) = 36800 q = 18.4 tokens > 18: liquidated.
	// penalty = min(18, ceil(18.4 / 2)) = 9.2 tokens.
	evs := f.tick(iv)
	var kinds []clob.EventKind
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind)
	}
	if len(evs) != 2 || kinds[0] != clob.EventMarginCancel || kinds[1] != clob.EventLiquidation {
		t.Fatalf("events %v", kinds)
	}
	l := evs[1]
	if l.Owner != alice || l.Side != clob.Buy || l.Amount.Dec() != "9200000000000000000" || l.Price.Dec() != "92000000000000000000" ||
		signedStr(l.Realized) != "-32000000000000000000" || l.Quote.Dec() != "368000000000000000000" {
		t.Fatalf("liquidation event %+v", l)
	}
	f.wantPos(alice, 0, "0")
	f.wantPos(clob.BackstopAddress, 4, "736000")
	f.wantCash(alice, wei("8800000000000000000"))
	f.wantCash(clob.BackstopAddress, wei("9200000000000000000"))
}

func TestLiquidationBadDebt(t *testing.T) {
	f := newFixture(t, nil)
	f.open4(50, 1000)
	f.setOracle(80000)
	// U = 640000 − 800000 = −160000 q = −80 tokens; equity −30 < MM 16:
	// no penalty; the 30 of bad debt falls on the backstop.
	f.tick(iv)
	f.wantPos(alice, 0, "0")
	f.wantCash(alice, new(big.Int))
	if d := f.e.Debt(alice); !d.IsZero() {
		t.Fatalf("alice keeps debt %s", d.Dec())
	}
	f.wantCash(clob.BackstopAddress, tokens(-30))
	f.wantPos(clob.BackstopAddress, 4, "640000")
	// value: issued 1050 = Σ (cash − debt) − Σ C·q = (0 + 1000 − 30) − (−800000 + 640000) × 5e14
	sum := new(big.Int)
	for _, o := range []clob.Address{alice, bob, clob.BackstopAddress} {
		sum.Add(sum, f.e.cashMinusDebt(o))
	}
	cost := f.e.PerpCost()
	if !cost.Neg || cost.Abs.Dec() != "80000000000000000000" || sum.Add(sum, tokens(80)).Cmp(tokens(1050)) != 0 {
		t.Fatalf("value not conserved: Σ cash − debt + 80 = %s, cost %+v", sum, cost)
	}
}

func TestReduceOnly(t *testing.T) {
	f := newFixture(t, nil)
	f.open4(1000, 1000)
	f.admit(alice, clob.ReasonReduceOnlyNoPosition, order(clob.Buy, 1, 100000, clob.FlagReduceOnly))
	ids := f.admit(alice, clob.OK, order(clob.Sell, 10, 101000, clob.FlagReduceOnly))
	if o, _ := f.e.Order(ids[0]); o.Size.Dec() != "4000000000000000000" {
		t.Fatalf("reduce-only cut to %s", o.Size.Dec())
	}
	f.tick(iv)
	// two more (3 and 3): in queue order the ones at 101 and 102 keep 4, 0
	a := f.admit(alice, clob.OK, order(clob.Sell, 3, 102000, clob.FlagReduceOnly))
	evs := f.tick(iv)
	if _, live := f.e.Order(a[0]); live || evs[len(evs)-1].Kind != clob.EventCancel || evs[len(evs)-1].OrderID != a[0] {
		t.Fatalf("the reduce-only order beyond the position should be cancelled: %+v", evs)
	}
	// reduce-only orders need no margin and do not count in IMo
	if m := f.e.Margin(alice, f.l); m.OrderMargin.Dec() != m.InitialMargin.Dec() {
		t.Fatalf("IMo %s, IM %s", m.OrderMargin.Dec(), m.InitialMargin.Dec())
	}
}

func TestTakeProfitStopLossPair(t *testing.T) {
	f := newFixture(t, nil)
	f.open4(1000, 1000)
	trig := func(typ uint8, at uint64) clob.Intent {
		in := order(clob.Sell, 4, 0, clob.FlagReduceOnly)
		in.Kind, in.Type, in.Price = clob.IntentSubmitTrigger, clob.Market, uint256.Int{}
		in.TriggerType, in.Grouping = typ, clob.GroupingAsset
		in.TriggerPrice.Mul(uint256.NewInt(at), uint256.NewInt(1e15))
		return in
	}
	bad := trig(2, 95000)
	f.admit(alice, clob.ReasonTriggerType, bad)
	bad = trig(clob.TriggerStopLoss, 95000)
	bad.Grouping = 2
	f.admit(alice, clob.ReasonTriggerGrouping, bad)
	ids := f.admit(alice, clob.OK, trig(clob.TriggerStopLoss, 95000), trig(clob.TriggerTakeProfit, 110000))
	f.tick(iv)
	if ts := f.e.AppendTriggers(nil, alice); len(ts) != 2 {
		t.Fatalf("stored triggers: %+v", ts)
	}
	f.admit(bob, clob.OK, order(clob.Buy, 4, 111000, 0))
	f.setOracle(111000)
	triggerEvents := func(evs []clob.Event) (got []clob.Event) {
		for _, ev := range evs {
			if ev.Kind == clob.EventTriggerFired || ev.Kind == clob.EventTriggerCancel {
				got = append(got, ev)
			}
		}
		return got
	}
	// the take-profit fires; the stop-loss stays (no one-cancels-the-other)
	if got := triggerEvents(f.tick(iv)); len(got) != 1 || got[0].Kind != clob.EventTriggerFired || got[0].OrderID != ids[1] ||
		got[0].Price.Dec() != "111000000000000000000" {
		t.Fatalf("trigger events %+v", got)
	}
	if ts := f.e.AppendTriggers(nil, alice); len(ts) != 1 || ts[0].ID != ids[0] {
		t.Fatalf("triggers left: %+v", ts)
	}
	// the fired market sell lands in the next tick and closes the long at
	// 111: the position is flat, so the Asset stop-loss is cancelled
	if got := triggerEvents(f.tick(iv)); len(got) != 1 || got[0].Kind != clob.EventTriggerCancel || got[0].OrderID != ids[0] {
		t.Fatalf("trigger events after the close %+v", got)
	}
	if ts := f.e.AppendTriggers(nil, alice); len(ts) != 0 {
		t.Fatalf("triggers left: %+v", ts)
	}
	f.wantPos(alice, 0, "0")
	f.wantCash(alice, tokens(1044)) // 4 × (111 − 100)
}

func TestOracleWalk(t *testing.T) {
	if x := splitmix64(0); x != 0xe220a8397b1dcdaf {
		t.Fatalf("splitmix64(0) = %#x", x)
	}
	f := newFixture(t, func(p *clob.PerpParams) { p.WalkBps = 100; p.WalkSeed = iv })
	// the first tick is at iv (a perp market never ticks at 0): x =
	// splitmix64(seed ⊕ iv) = splitmix64(0) is odd: P = 100000 + floor(100000 × 100 / 10000)
	f.now = iv
	f.e.Tick(f.now, f.l, &f.out)
	if info, _ := f.e.PerpMarket(perpID); info.Oracle.Dec() != "101000000000000000000" || info.Mark.Dec() != info.Oracle.Dec() {
		t.Fatalf("after one walk step: %+v", info)
	}
	f.setOracle(50000)
	f.tick(iv)
	if info, _ := f.e.PerpMarket(perpID); info.Oracle.Dec() != "50000000000000000000" || !info.WalkFrozen {
		t.Fatalf("frozen: %+v", info)
	}
}

func TestTriggerTTLAndRefusedFire(t *testing.T) {
	f := newFixture(t, nil)
	f.open4(1000, 50)
	// bob (cash 50, short 4 at 100: IM 40) stores a buy take-profit of 20
	// lots that no margin covers, and alice a stop-loss with a 2.5 s ttl.
	tp := order(clob.Buy, 20, 0, 0)
	tp.Kind, tp.Type, tp.Price, tp.TriggerType = clob.IntentSubmitTrigger, clob.Market, uint256.Int{}, clob.TriggerTakeProfit
	tp.TriggerPrice.Mul(uint256.NewInt(99000), uint256.NewInt(1e15))
	bt := f.admit(bob, clob.OK, tp)
	sl := order(clob.Sell, 4, 90000, clob.FlagReduceOnly)
	sl.Kind, sl.TriggerType, sl.TTL = clob.IntentSubmitTrigger, clob.TriggerStopLoss, 2_500_000
	sl.TriggerPrice.Mul(uint256.NewInt(50000), uint256.NewInt(1e15))
	at := f.admit(alice, clob.OK, sl)
	f.tick(iv) // stored at 3 s; alice's expires at 5.5 s
	if ts := f.e.AppendTriggers(nil, alice); len(ts) != 1 || ts[0].ExpiresUs != f.now+2_500_000 || ts[0].AdmitTickUs != f.now {
		t.Fatalf("alice's trigger: %+v", ts)
	}
	// the mark falls to 99: bob's take-profit fires, but its order needs
	// more margin than bob has: refused, reported as a cancel.
	f.setOracle(99000)
	evs := f.tick(iv)
	if len(evs) != 1 || evs[0].Kind != clob.EventTriggerCancel || evs[0].OrderID != bt[0] {
		t.Fatalf("refused fire: %+v", evs)
	}
	f.tick(iv) // 5 s: alive
	if ts := f.e.AppendTriggers(nil, alice); len(ts) != 1 {
		t.Fatal("alice's trigger expired early")
	}
	evs = f.tick(iv) // 6 s ≥ 5.5 s
	if len(evs) != 1 || evs[0].Kind != clob.EventTriggerCancel || evs[0].OrderID != at[0] {
		t.Fatalf("ttl expiry: %+v", evs)
	}
}

func TestSpotRefusals(t *testing.T) {
	f := newFixture(t, nil)
	spot := clob.MarketConfig{ID: clob.Hash{0x01}, Kind: clob.Spot, Base: clob.Address{0xba}, Quote: clob.Address{0x90},
		IntervalUs: iv, TickPrecision: *uint256.NewInt(1e15), LotSize: *u256(wad)}
	if err := f.e.CreateMarket(&spot); err != nil {
		t.Fatal(err)
	}
	in := order(clob.Sell, 1, 100000, clob.FlagReduceOnly)
	in.Book = spot.ID
	f.admit(alice, clob.ReasonReduceOnlySpot, in)
	in.Kind, in.Flags = clob.IntentSubmitTrigger, 0
	in.TriggerPrice = in.Price
	f.admit(alice, clob.ReasonTriggerSpot, in)
	in.Kind, in.OrderID = clob.IntentCancelTrigger, clob.Hash{0xde}
	f.admit(alice, clob.ReasonTriggerSpot, in)
	// a perp market must be margined in the one native token
	bad := spot
	bad.ID, bad.Kind, bad.Perp = clob.Hash{0x03}, clob.Perp, clob.PerpParams{MaxLeverage: 2, OraclePrice: *u256(wad)}
	if err := f.e.CreateMarket(&bad); err == nil {
		t.Fatal("a perp market quoted in another token was created")
	}
}
