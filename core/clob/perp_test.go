package clob

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/holiman/uint256"
)

// trade makes buyer buy lots from seller at steps in one tick.
func (h *harness) trade(book Hash, buyer, seller string, lots, steps int64) {
	h.t.Helper()
	if r := h.admit(buyer, nil, h.perpOrder(book, Buy, lots, steps, 0)); r != OK {
		h.t.Fatalf("%s buys: %v", buyer, r)
	}
	if r := h.admit(seller, nil, h.perpOrder(book, Sell, lots, steps, 0)); r != OK {
		h.t.Fatalf("%s sells: %v", seller, r)
	}
	h.tick()
	if !h.out.Books[len(h.out.Books)-1].Traded && h.out.Books[0].Book != book {
		h.t.Fatalf("no trade")
	}
}

func (h *harness) wantPos(book Hash, name string, size, cost int64) {
	h.t.Helper()
	if s, c := h.pos(book, name); s != size || c != cost {
		h.t.Fatalf("%s: position (%d, %d), want (%d, %d)", name, s, c, size, cost)
	}
}

func TestPerpFillsOpenGrowReduceFlip(t *testing.T) {
	h := newPerpHarness(t, Limits{}, perpMarket(tPerpID, 10, 100))
	const f = 1_000_000
	for _, n := range []string{"a", "b", "c"} {
		h.fundNative(n, f)
	}
	h.trade(tPerpID, "a", "b", 2, 100) // open
	h.wantPos(tPerpID, "a", 2, 400)
	h.wantPos(tPerpID, "b", -2, -400)
	h.trade(tPerpID, "a", "b", 1, 110) // grow
	h.wantPos(tPerpID, "a", 3, 620)
	h.trade(tPerpID, "c", "a", 2, 120) // reduce: Cr = trunc(620·2/3) = 413, R = 480 − 413
	h.wantPos(tPerpID, "a", 1, 207)
	h.wantPos(tPerpID, "c", 2, 480)
	if got := h.cashQ("a"); got != f+67 {
		t.Fatalf("a's cash %d, want %d", got, f+67)
	}
	var fill *Event
	for i := range h.out.Events {
		if ev := &h.out.Events[i]; ev.Kind == EventFill && ev.Owner == owner("a") {
			fill = ev
		}
	}
	if fill == nil || fill.Realized.Neg || !fill.Realized.Abs.Eq(new(uint256.Int).Mul(uint256.NewInt(67), q12)) ||
		fill.Position.Neg || !fill.Position.Abs.Eq(e15) {
		t.Fatalf("a's fill event %+v", fill)
	}
	h.trade(tPerpID, "b", "a", 3, 90) // flip a: R = 180 − 207; close b: R = −540 + 620
	h.wantPos(tPerpID, "a", -2, -360)
	h.wantPos(tPerpID, "b", 0, 0)
	if a, b, c := h.cashQ("a"), h.cashQ("b"), h.cashQ("c"); a != f+40 || b != f+80 || c != f {
		t.Fatalf("cash a %d b %d c %d", a, b, c)
	}
	if got := h.e.AppendPerpAccounts(nil); !reflect.DeepEqual(got, []Address{owner("a"), owner("c")}) {
		t.Fatalf("perp accounts %x", got)
	}
	if c := h.e.PerpCost(); !c.Abs.Eq(new(uint256.Int).Mul(uint256.NewInt(120), q12)) || c.Neg {
		t.Fatalf("Σ cost %+v, want 120 q", c)
	}
}

func TestPerpFeesComeOutOfCash(t *testing.T) {
	m := perpMarket(tPerpID, 10, 100)
	m.MakerFee, m.TakerFee = *uint256.NewInt(1e15), *uint256.NewInt(2e15) // 0.1 %, 0.2 %
	h := newPerpHarness(t, Limits{}, m)
	h.fundNative("a", 100)
	h.fundNative("b", 1_000_000)
	// a rests a buy, b takes it: a pays the maker fee, 0.1 % of 4 lots at
	// 200 half-steps = 800 q, and b the taker fee, 0.2 %.
	if r := h.admit("a", nil, h.perpOrder(tPerpID, Buy, 4, 100, 0)); r != OK {
		t.Fatal(r)
	}
	h.tick()
	if r := h.admit("b", nil, h.perpOrder(tPerpID, Sell, 4, 100, 0)); r != OK {
		t.Fatal(r)
	}
	h.tick()
	cash, _, debt := h.acc.Holding(NativeToken, owner("a"))
	want := new(uint256.Int).Sub(new(uint256.Int).Mul(q12, uint256.NewInt(100)), uint256.NewInt(8e11))
	if !cash.Eq(want) || !debt.IsZero() {
		t.Fatalf("a: cash %s debt %s, want %s", cash.Dec(), debt.Dec(), want.Dec())
	}
	if fee := h.acc.fee(NativeToken); !fee.Eq(uint256.NewInt(8e11 + 16e11)) {
		t.Fatalf("fees %s", fee.Dec())
	}
}

func TestPerpMarginAdmission(t *testing.T) {
	h := newPerpHarness(t, Limits{}, perpMarket(tPerpID, 10, 100))
	// IM of W lots at 100 steps, leverage 10: ceil(200·W/10) = 20·W q.
	h.fundNative("d", 100)
	if r := h.admit("d", nil, h.perpOrder(tPerpID, Buy, 5, 100, 0)); r != OK {
		t.Fatalf("5 lots on 100 q: %v", r)
	}
	if r := h.admit("d", nil, h.perpOrder(tPerpID, Buy, 1, 100, 0)); r != ReasonInsufficientMargin {
		t.Fatalf("a 6th lot: %v", r)
	}
	// Sells up to 5 lots do not raise IMo = IM(max(|B|, |A|)).
	if r := h.admit("d", nil, h.perpOrder(tPerpID, Sell, 5, 120, 0)); r != OK {
		t.Fatalf("a sell that does not raise IMo: %v", r)
	}
	if r := h.admit("d", nil, h.perpOrder(tPerpID, Sell, 1, 120, 0)); r != ReasonInsufficientMargin {
		t.Fatalf("a sell that raises IMo: %v", r)
	}
	// Two orders in one envelope count together.
	h.fundNative("e", 100)
	if r := h.admit("e", nil, h.perpOrder(tPerpID, Buy, 3, 100, 0), h.perpOrder(tPerpID, Buy, 3, 100, 0)); r != ReasonInsufficientMargin {
		t.Fatalf("3 + 3 lots in one envelope: %v", r)
	}
	if m := h.e.Margin(owner("d"), h.acc); !m.Withdrawable.IsZero() || !m.OrderMargin.Eq(new(uint256.Int).Mul(uint256.NewInt(100), q12)) {
		t.Fatalf("d's margin %+v", m)
	}
	// Native spends take only the withdrawable part.
	tr := Intent{Kind: IntentTransfer, Token: NativeToken, To: owner("x"), Amount: *q12, Deadline: uint64(landing(h.nowUs, TransferIntervalUs))}
	if r := h.admit("d", nil, tr); r != ReasonInsufficientBalance {
		t.Fatalf("transfer of margin: %v", r)
	}
	if r := h.admit("e", nil, tr); r != OK {
		t.Fatalf("transfer of free cash: %v", r)
	}
	// Updates are checked with their new size.
	h.fundNative("f", 100)
	if r := h.admit("f", []string{"f1"}, h.perpOrder(tPerpID, Buy, 2, 100, 0)); r != OK {
		t.Fatal(r)
	}
	up := Intent{Kind: IntentUpdate, Book: tPerpID, OrderID: h.id("f1"), Size: lotsWei(6), Price: stepsWei(100), Deadline: h.deadline()}
	if r := h.admit("f", nil, up); r != ReasonInsufficientMargin {
		t.Fatalf("update to 6 lots: %v", r)
	}
	up.Size = lotsWei(5)
	if r := h.admit("f", nil, up, up); r != OK { // the second changes nothing
		t.Fatalf("two updates to 5 lots in one envelope: %v", r)
	}
	h.tick()
}

func TestPerpReduceOnly(t *testing.T) {
	h := newPerpHarness(t, Limits{}, perpMarket(tPerpID, 10, 100))
	h.fund("s", 10, 10)
	if r := h.admit("s", nil, h.limit(Sell, 1, 10, FlagReduceOnly)); r != ReasonReduceOnlySpot {
		t.Fatalf("REDUCE_ONLY on spot: %v", r)
	}
	for _, n := range []string{"a", "b", "c"} {
		h.fundNative(n, 1_000_000)
	}
	if r := h.admit("a", nil, h.perpOrder(tPerpID, Sell, 1, 100, FlagReduceOnly)); r != ReasonReduceOnlyNoPosition {
		t.Fatalf("without a position: %v", r)
	}
	h.trade(tPerpID, "a", "b", 2, 100)
	if r := h.admit("a", nil, h.perpOrder(tPerpID, Buy, 1, 100, FlagReduceOnly)); r != ReasonReduceOnlyNoPosition {
		t.Fatalf("same side as the position: %v", r)
	}
	// Cut to the position at admission; a second one is cut too.
	if r := h.admit("a", []string{"r1", "r2"}, h.perpOrder(tPerpID, Sell, 5, 150, FlagReduceOnly),
		h.perpOrder(tPerpID, Sell, 5, 160, FlagReduceOnly)); r != OK {
		t.Fatal(r)
	}
	if o, _ := h.e.Order(h.id("r1")); !o.Size.Eq(e15.Clone().Mul(e15, uint256.NewInt(2))) {
		t.Fatalf("r1 size %s, want 2 lots", o.Size.Dec())
	}
	// At the tick: r1 keeps 2 lots, r2 (behind it in walk order) is cancelled.
	h.expectEvents(h.tick(), "placed r1", "placed r2", "cancel r2")
	// a sells 1 lot normally: next tick r1 is clipped to the 1 lot left.
	h.trade(tPerpID, "c", "a", 1, 100)
	h.tick()
	if o, ok := h.e.Order(h.id("r1")); !ok || !o.Remaining.Eq(e15) || !o.Size.Eq(e15) {
		t.Fatalf("r1 after the clip: %+v %v", o, ok)
	}
	// REDUCE_ONLY orders need no margin and count in neither B nor A.
	if m := h.e.Margin(owner("a"), h.acc); !m.OrderMargin.Eq(&m.InitialMargin) {
		t.Fatalf("IMo %s, IM %s", m.OrderMargin.Dec(), m.InitialMargin.Dec())
	}
}

func TestSplitmix64(t *testing.T) {
	// The reference generator's first output for seed 0.
	if got := splitmix64(0); got != 0xe220a8397b1dcdaf {
		t.Fatalf("splitmix64(0) = %#x", got)
	}
}

func TestPerpOracleWalk(t *testing.T) {
	m := perpMarket(tPerpID, 10, 10_000)
	m.Perp.WalkBps, m.Perp.WalkSeed = 100, 42
	run := func() []int64 {
		h := newPerpHarness(t, Limits{}, m)
		var seq []int64
		for range 20 {
			h.tick()
			seq = append(seq, h.e.book(tPerpID).perp.oracle)
		}
		return seq
	}
	a, b := run(), run()
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs differ: %v %v", a, b)
	}
	p, ups := int64(10_000), 0
	for i, got := range a {
		T := int64(i+1) * 1_000_000
		d := max(1, p/100)
		if splitmix64(42^uint64(T))&1 == 1 {
			p += d
			ups++
		} else {
			p -= d
		}
		if got != p {
			t.Fatalf("tick %d: oracle %d, want %d", i, got, p)
		}
	}
	if ups == 0 || ups == len(a) {
		t.Fatalf("the walk went one way only: %v", a)
	}
}

func TestPerpSetOraclePrice(t *testing.T) {
	m := perpMarket(tPerpID, 10, 10_000)
	m.Perp.WalkBps, m.Perp.WalkSeed = 100, 7
	h := newPerpHarness(t, Limits{}, m)
	one := stepsWei(1)
	half := new(uint256.Int).Div(&one, uint256.NewInt(2))
	for _, c := range []struct {
		book  Hash
		price uint256.Int
		want  Reason
	}{
		{tPerpID, uint256.Int{}, ReasonOraclePrice},
		{tPerpID, *half, ReasonOraclePrice},
		{tPerpID, *new(uint256.Int).Add(new(uint256.Int).Mul(&one, uint256.NewInt(5000)), half), ReasonOraclePrice},
		{tBookID, stepsWei(5000), ReasonUnknownBook},
		{Hash{0x77}, stepsWei(5000), ReasonUnknownBook},
	} {
		if r := h.e.SetOraclePrice(c.book, &c.price); r != c.want {
			t.Fatalf("SetOraclePrice(%x, %s) = %v, want %v", c.book[:1], c.price.Dec(), r, c.want)
		}
	}
	h.tick()
	p := stepsWei(5000)
	if r := h.e.SetOraclePrice(tPerpID, &p); r != OK {
		t.Fatal(r)
	}
	for range 5 {
		h.tick()
		info, _ := h.e.PerpMarket(tPerpID)
		if !info.Oracle.Eq(&p) || !info.Mark.Eq(&p) || !info.WalkFrozen {
			t.Fatalf("after SetOraclePrice: %+v", info)
		}
	}
}

func TestPerpMarkEMAAndClamp(t *testing.T) {
	m := perpMarket(tPerpID, 10, 10_000)
	m.Perp.MaxPremium, m.Perp.MarkClamp = *uint256.NewInt(1e16), *uint256.NewInt(1e15) // 1 %, 0.1 %
	h := newPerpHarness(t, Limits{}, m)
	h.fundNative("a", 1e9)
	h.fundNative("b", 1e9)
	if h.admit("a", nil, h.perpOrder(tPerpID, Buy, 1, 10_100, 0)) != OK || h.admit("b", nil, h.perpOrder(tPerpID, Sell, 1, 10_300, 0)) != OK {
		t.Fatal("orders refused")
	}
	pb := h.e.book(tPerpID).perp
	h.tick() // first tick: mark = oracle
	if pb.mark != 10_000 || pb.ema != 0 {
		t.Fatalf("first tick: mark %d ema %d", pb.mark, pb.ema)
	}
	h.tick() // gap 400 half-steps, dt 1 s: ema = trunc(400/180) = 2
	if pb.mark != 10_001 || pb.ema != 2 {
		t.Fatalf("second tick: mark %d ema %d", pb.mark, pb.ema)
	}
	p := stepsWei(20_000)
	h.e.SetOraclePrice(tPerpID, &p)
	h.tick() // ema 2 + trunc(−19602/180) = −106; mark 19947 clamped to 10001 + 10
	if pb.ema != -106 || pb.mark != 10_011 {
		t.Fatalf("after the jump: mark %d ema %d", pb.mark, pb.ema)
	}
	// The premium cap: ema within ±2·P·1 %.
	pb.ema = 0
	p = stepsWei(100)
	h.e.SetOraclePrice(tPerpID, &p)
	for range 3 {
		h.tick()
	}
	if pb.ema != 2 { // floor(200·1e16/1e18) = 2
		t.Fatalf("capped ema %d, want 2", pb.ema)
	}
}

func TestPerpFundingZeroSum(t *testing.T) {
	h := newPerpHarness(t, Limits{}, perpMarket(tPerpID, 10, 1_000_000_000))
	h.fundNative("a", 1e12)
	h.fundNative("b", 1e12)
	h.fundNative("c", 1e12)
	h.trade(tPerpID, "a", "b", 3, 1_000_000_000) // first tick: dt = 0, no funding
	h.trade(tPerpID, "a", "c", 1, 1_000_000_000) // f = trunc(1e14·2e9·1e6 / 2.88e28) = 6 q per lot
	a0, b0, c0 := h.cashQ("a"), h.cashQ("b"), h.cashQ("c")
	h.tick()
	if da, db, dc := h.cashQ("a")-a0, h.cashQ("b")-b0, h.cashQ("c")-c0; da != -24 || db != 18 || dc != 6 {
		t.Fatalf("funding moved a %d, b %d, c %d; want −24, 18, 6", da, db, dc)
	}
	info, _ := h.e.PerpMarket(tPerpID)
	if info.FundingRate.Neg || info.FundingRate.Abs.Uint64() != 1e14 {
		t.Fatalf("rate %+v", info.FundingRate)
	}
	// index: 2 ticks × 6 q per lot = 12e12 wei per 1e15 base wei, i.e. 12e15 per unit.
	if info.FundingIndex.Neg || info.FundingIndex.Abs.Uint64() != 12e15 {
		t.Fatalf("index %+v", info.FundingIndex)
	}
	ps := h.e.AppendPositions(nil, owner("a"))
	if len(ps) != 1 || ps[0].Funding.Neg || ps[0].Funding.Abs.Uint64() != (4*6+4*6)*1e12 /* fills come before funding */ {
		t.Fatalf("a's positions %+v", ps)
	}
}

// liquidationSetup: a long 10 lots at 100 steps on 250 q (IM 200 q, MM
// 100 q at 100 steps), with a resting buy; b short with plenty.
func liquidationSetup(t *testing.T) *harness {
	h := newPerpHarness(t, Limits{}, perpMarket(tPerpID, 10, 100))
	h.fundNative("a", 250)
	h.fundNative("b", 1_000_000)
	h.trade(tPerpID, "a", "b", 10, 100)
	if r := h.admit("a", []string{"a-bid"}, h.perpOrder(tPerpID, Buy, 1, 50, 0)); r != OK {
		t.Fatal(r)
	}
	h.tick()
	return h
}

func TestPerpLiquidationPenalty(t *testing.T) {
	h := liquidationSetup(t)
	// Liquidation price: E + 20·(P − 100) = P·10/10 at P = 10·1750/190 steps.
	ps := h.e.AppendPositions(nil, owner("a"))
	h.e.LiquidationPrices(ps, h.acc)
	if len(ps) != 1 || ps[0].Liquidation.Uint64() != 184210526315789473 {
		t.Fatalf("liquidation price %+v", ps)
	}
	// b, short 10 on 1e6 q: E − 20·(P − 100) = P·10/10 at P = 10·1002000/210.
	ps = h.e.AppendPositions(nil, owner("b"))
	h.e.LiquidationPrices(ps, h.acc)
	if len(ps) != 1 || ps[0].Liquidation.Dec() != "95428571428571428571" {
		t.Fatalf("short liquidation price %+v", ps)
	}
	p := stepsWei(90)
	h.e.SetOraclePrice(tPerpID, &p)
	// Equity 250 − 200 = 50 q < MM 90 q: liquidated; penalty min(50, 45).
	evs := h.tick()
	if len(evs) != 2 || evs[0] != "mcancel a-bid" {
		t.Fatalf("events %q", evs)
	}
	ev := h.out.Events[1]
	if ev.Kind != EventLiquidation || ev.Owner != owner("a") || ev.Side != Buy || !ev.Base.Eq(new(uint256.Int).Mul(e15, uint256.NewInt(10))) ||
		!ev.Price.Eq(&p) || !ev.Amount.Eq(new(uint256.Int).Mul(uint256.NewInt(45), q12)) ||
		!ev.Realized.Neg || !ev.Realized.Abs.Eq(new(uint256.Int).Mul(uint256.NewInt(200), q12)) {
		t.Fatalf("liquidation event %+v", ev)
	}
	h.wantPos(tPerpID, "a", 0, 0)
	if h.cashQ("a") != 5 {
		t.Fatalf("a's cash %d, want 5", h.cashQ("a"))
	}
	bs := BackstopAddress
	h.owners[bs] = "backstop"
	if got := h.e.AppendPerpAccounts(nil); !reflect.DeepEqual(got, []Address{owner("b"), bs}) {
		t.Fatalf("accounts %x", got)
	}
	ps = h.e.AppendPositions(nil, bs)
	if len(ps) != 1 || ps[0].Size.Neg || !ps[0].Size.Abs.Eq(&ev.Base) {
		t.Fatalf("backstop positions %+v", ps)
	}
	if m := h.e.Margin(bs, h.acc); m.Cash.Neg || !m.Cash.Abs.Eq(new(uint256.Int).Mul(uint256.NewInt(45), q12)) {
		t.Fatalf("insurance %+v", m.Cash)
	}
}

func TestPerpLiquidationBadDebt(t *testing.T) {
	h := liquidationSetup(t)
	h.fund("a", 0, 1_000)
	if r := h.admit("a", []string{"a-spot"}, h.limit(Buy, 1, 10, 0)); r != OK {
		t.Fatal(r)
	}
	h.tick()
	p := stepsWei(70)
	h.e.SetOraclePrice(tPerpID, &p)
	// Equity 250 − 600 < 0: the orders in every book are margin-cancelled, no
	// penalty, the backstop covers 350 q.
	if evs := h.tick(); len(evs) != 3 || evs[0] != "mcancel a-spot" || evs[1] != "mcancel a-bid" {
		t.Fatalf("events %q", evs)
	}
	if h.cashQ("a") != 0 {
		t.Fatalf("a's cash %d, want 0", h.cashQ("a"))
	}
	if m := h.e.Margin(BackstopAddress, h.acc); !m.Cash.Neg || !m.Cash.Abs.Eq(new(uint256.Int).Mul(uint256.NewInt(350), q12)) {
		t.Fatalf("insurance %+v, want −350 q", m.Cash)
	}
	if ev := h.out.Events[2]; ev.Kind != EventLiquidation || !ev.Amount.IsZero() {
		t.Fatalf("event %+v", ev)
	}
}

// TestPerpSnapshotRoundTrip: the snapshot of an engine with positions,
// orders and a moved oracle loads, re-encodes to the same bytes, and both
// engines go on identically.
func TestPerpSnapshotRoundTrip(t *testing.T) {
	m := perpMarket(tPerpID, 10, 10_000)
	m.Perp.WalkBps, m.Perp.WalkSeed, m.Perp.MaxPremium = 10, 3, *uint256.NewInt(1e16)
	h := newPerpHarness(t, Limits{OrdersMax: 64, PendingMax: 64}, m, perpMarket(tPerp2ID, 5, 500))
	for _, n := range []string{"a", "b", "c"} {
		h.fundNative(n, 1e9)
	}
	h.trade(tPerpID, "a", "b", 3, 10_000)
	h.trade(tPerp2ID, "c", "a", 2, 500)
	h.admit("b", nil, h.perpOrder(tPerpID, Buy, 1, 9_000, 0), h.perpOrder(tPerpID, Sell, 1, 11_000, FlagReduceOnly))
	snap := h.e.AppendSnapshot(nil)
	e2, rest, err := LoadEngine(Limits{OrdersMax: 64, PendingMax: 64}, snap)
	if err != nil || len(rest) != 0 {
		t.Fatalf("load: %v (%d left)", err, len(rest))
	}
	if again := e2.AppendSnapshot(nil); !bytes.Equal(again, snap) {
		t.Fatal("re-encoding differs")
	}
	acc2 := cloneAccounts(h.acc)
	acc2.engine = e2
	var out2 TickResult
	for i := range 5 {
		T := int64(10+i) * 1_000_000
		h.e.Tick(T, h.acc, &h.out)
		e2.Tick(T, acc2, &out2)
		if len(h.out.Events)+len(out2.Events) > 0 && !reflect.DeepEqual(h.out.Events, out2.Events) {
			t.Fatalf("tick %d: events differ:\n%+v\n%+v", i, h.out.Events, out2.Events)
		}
		if !bytes.Equal(h.e.AppendSnapshot(nil), e2.AppendSnapshot(nil)) {
			t.Fatalf("tick %d: snapshots differ", i)
		}
	}
	// Corrupt perp sections are refused, never a panic.
	for cut := len(snap) - 1; cut > len(snap)-400; cut-- {
		if _, _, err := LoadEngine(Limits{OrdersMax: 64, PendingMax: 64}, snap[:cut]); err == nil {
			t.Fatalf("a snapshot cut at %d loaded", cut)
		}
	}
}

// twin is an engine loaded from a snapshot of the stream's engine, with a
// copy of its ledger, that must go on exactly as the original.
type twin struct {
	e   *Engine
	acc *testAccounts
	out TickResult
}

// TestPerpRandomStream runs seeded random perp traffic (orders of every
// kind, oracle jumps, liquidations) and checks value conservation and the
// perp invariants after every tick (the harness does). Every 100 ticks an
// engine is loaded from the snapshot; from then on it gets the same inputs
// and must give the same reasons, events and snapshots.
func TestPerpRandomStream(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		m := perpMarket(tPerpID, 5, 1_000)
		m.Perp.WalkBps, m.Perp.WalkSeed, m.Perp.MaxPremium, m.Perp.MarkClamp = 200, seed, *uint256.NewInt(5e16), *uint256.NewInt(1e17)
		m.MakerFee, m.TakerFee = *uint256.NewInt(1e15), *uint256.NewInt(3e15)
		l := Limits{OrdersMax: 256, PendingMax: 256}
		h := newPerpHarness(t, l, m, perpMarket(tPerp2ID, 20, 300))
		names := []string{"a", "b", "c", "d", "e", "f"}
		for _, n := range names {
			h.fundNative(n, int64(3_000+rng.IntN(30_000)))
		}
		var twins []*twin
		liquidations := 0
		for i := range 600 {
			for range 1 + rng.IntN(8) {
				book := tPerpID
				ref := int64(h.e.book(book).perp.mark)
				if rng.IntN(3) == 0 {
					book, ref = tPerp2ID, int64(h.e.book(tPerp2ID).perp.mark)
				}
				side := Side(rng.IntN(2))
				flags := uint8(0)
				switch rng.IntN(6) {
				case 0:
					flags = FlagReduceOnly
				case 1:
					flags = FlagIOC
				}
				steps := max(1, ref+int64(rng.IntN(41))-20)
				who, in := names[rng.IntN(len(names))], h.perpOrder(book, side, 1+int64(rng.IntN(30)), steps, flags)
				a := Admission{Signer: owner(who), Owner: owner(who), Nonce: h.nonce, NowUs: h.nowUs, Tag: h.nonce}
				r := h.admit(who, nil, in)
				for _, w := range twins {
					if r2 := w.e.Admit(&a, &Envelope{Intents: []Intent{in}}, w.acc); r2 != r {
						t.Fatalf("seed %d tick %d: loaded engine admits %v, original %v", seed, i, r2, r)
					}
				}
			}
			if rng.IntN(10) == 0 {
				b := h.e.book(tPerp2ID)
				p := stepsWei(max(1, int64(b.perp.oracle)+int64(rng.IntN(61))-30))
				h.e.SetOraclePrice(tPerp2ID, &p)
				for _, w := range twins {
					w.e.SetOraclePrice(tPerp2ID, &p)
				}
			}
			T := landing(h.nowUs, h.iv)
			h.tick()
			for _, w := range twins {
				w.e.Tick(T, w.acc, &w.out)
				if len(w.out.Events)+len(h.out.Events) > 0 && !reflect.DeepEqual(w.out.Events, h.out.Events) {
					t.Fatalf("seed %d tick %d: a loaded engine's events differ", seed, i)
				}
			}
			for _, ev := range h.out.Events {
				if ev.Kind == EventLiquidation {
					liquidations++
				}
			}
			if i%100 == 50 {
				snap := h.e.AppendSnapshot(nil)
				e2, _, err := LoadEngine(l, snap)
				if err != nil {
					t.Fatalf("seed %d tick %d: %v", seed, i, err)
				}
				w := &twin{e: e2, acc: cloneAccounts(h.acc)}
				w.acc.engine = e2
				twins = append(twins, w)
			}
		}
		for _, w := range twins {
			if !bytes.Equal(w.e.AppendSnapshot(nil), h.e.AppendSnapshot(nil)) {
				t.Fatalf("seed %d: a loaded engine's final snapshot differs", seed)
			}
			if err := w.acc.check(); err != nil {
				t.Fatal(err)
			}
		}
		if liquidations == 0 {
			t.Errorf("seed %d: no liquidation", seed)
		}
	}
}

// TestPerpMarketValidation: every bound on a perp market's parameters.
func TestPerpMarketValidation(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(m *MarketConfig)
		ok   bool
	}{
		{"defaults", func(m *MarketConfig) {}, true},
		{"leverage 0", func(m *MarketConfig) { m.Perp.MaxLeverage = 0 }, false},
		{"quote not native", func(m *MarketConfig) { m.Quote = tQuote }, false},
		{"oracle 0", func(m *MarketConfig) { m.Perp.OraclePrice.Clear() }, false},
		{"oracle off grid", func(m *MarketConfig) { m.Perp.OraclePrice.AddUint64(&m.Perp.OraclePrice, 1) }, false},
		{"oracle 2^53 steps", func(m *MarketConfig) { m.Perp.OraclePrice = stepsWei(unitsMax) }, true},
		{"oracle 2^53+1 steps", func(m *MarketConfig) { m.Perp.OraclePrice = stepsWei(unitsMax + 1) }, false},
		{"rate 1e18", func(m *MarketConfig) { m.Perp.MaxFundingRate.SetUint64(RateMax) }, true},
		{"rate above 1e18", func(m *MarketConfig) { m.Perp.MaxFundingRate.SetUint64(RateMax + 1) }, false},
		{"interest above 1e18", func(m *MarketConfig) { m.Perp.InterestRate.SetUint64(RateMax + 1) }, false},
		{"premium above 1e18", func(m *MarketConfig) { m.Perp.MaxPremium.SetUint64(RateMax + 1) }, false},
		{"clamp above 1e18", func(m *MarketConfig) { m.Perp.MarkClamp.SetUint64(RateMax + 1) }, false},
		{"walk 10000 bps", func(m *MarketConfig) { m.Perp.WalkBps = WalkBpsMax }, true},
		{"walk above 10000 bps", func(m *MarketConfig) { m.Perp.WalkBps = WalkBpsMax + 1 }, false},
	} {
		e := NewEngine(Limits{OrdersMax: 8, PendingMax: 8})
		m := perpMarket(tPerpID, 10, 100)
		c.edit(&m)
		if err := e.CreateMarket(&m); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
		if got, ok := e.Market(tPerpID); c.ok && ok && (got.Perp.InterestRate.Uint64() != defaultInterestRate && c.name == "defaults" ||
			got.Perp.MaxFundingRate.IsZero()) {
			t.Errorf("%s: defaults not filled: %+v", c.name, got.Perp)
		}
	}
}

// TestPerpSizeBound: an order whose worst case exceeds 2^53 lots is
// refused (S, B and A stay within int64).
func TestPerpSizeBound(t *testing.T) {
	h := newPerpHarness(t, Limits{}, perpMarket(tPerpID, 1, 1))
	h.acc.fund(NativeToken, owner("w"), new(uint256.Int).Lsh(uint256.NewInt(1), 200))
	if r := h.admit("w", nil, h.perpOrder(tPerpID, Buy, unitsMax, 1, 0)); r != OK {
		t.Fatalf("2^53 lots: %v", r)
	}
	if r := h.admit("w", nil, h.perpOrder(tPerpID, Buy, 1, 1, 0)); r != ReasonValueRange {
		t.Fatalf("one more lot: %v", r)
	}
}

// TestPerpNextTickDue: a perp book is due every interval with no work, and
// after an idle stretch at the latest grid point reached, not at every
// missed one.
func TestPerpNextTickDue(t *testing.T) {
	e := NewEngine(Limits{OrdersMax: 8, PendingMax: 8})
	m := perpMarket(tPerpID, 10, 100)
	if err := e.CreateMarket(&m); err != nil {
		t.Fatal(err)
	}
	if due, ok := e.NextTickDue(100_500_000); !ok || due != 100_000_000 {
		t.Fatalf("idle since 0: due %d %v, want 100 s", due, ok)
	}
	var out TickResult
	e.Tick(100_000_000, newTestAccounts(), &out)
	if len(out.Books) != 1 || out.Books[0].Book != tPerpID {
		t.Fatalf("the perp book did not run: %+v", out.Books)
	}
	if due, ok := e.NextTickDue(100_500_000); ok || due != 101_000_000 {
		t.Fatalf("after the tick: due %d %v, want 101 s, not yet", due, ok)
	}
}

// TestMarginConcurrentReaders: the node answers eth_getBalance and
// ob_getPositions under a read lock, so Margin and LiquidationPrices run
// concurrently on one engine; they must write no engine state (they once
// shared the admission's scratch and returned each other's sums).
func TestMarginConcurrentReaders(t *testing.T) {
	h := newPerpHarness(t, Limits{}, perpMarket(tPerpID, 10, 100))
	names := []string{"a", "b", "c", "d"}
	for i, n := range names {
		h.fundNative(n, int64(1_000_000*(i+1)))
	}
	h.trade(tPerpID, "a", "b", 2, 100)
	h.trade(tPerpID, "c", "d", 3, 100)
	want := make([]MarginInfo, len(names))
	for i, n := range names {
		want[i] = h.e.Margin(owner(n), h.acc)
	}
	var wg sync.WaitGroup
	errs := make(chan string, len(names))
	for i, n := range names {
		wg.Go(func() {
			for range 2000 {
				if got := h.e.Margin(owner(n), h.acc); got != want[i] {
					errs <- fmt.Sprintf("%s: margin %+v, want %+v", n, got, want[i])
					return
				}
				h.e.LiquidationPrices(h.e.AppendPositions(nil, owner(n)), h.acc)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestLiquidationEventsInBookRanges: a liquidation cancels the account's
// orders on every book, a spot book that does not run in the tick
// included, and its triggers; each of those events, and the liquidation,
// lies in its own book's range (checkRanges, run by every harness tick,
// checks the layout), and the spot book gets a BookTick of its own.
func TestLiquidationEventsInBookRanges(t *testing.T) {
	h := liquidationSetup(t)
	h.fund("a", 5, 0)
	if r := h.admit("a", []string{"a-ask"}, h.limit(Sell, 2, 1000, 0)); r != OK {
		t.Fatal(r)
	}
	if r := h.admit("a", []string{"a-tp"}, h.trigger(Sell, 1, 0, 200, TriggerTakeProfit, GroupingNone)); r != OK {
		t.Fatal(r)
	}
	h.tick()
	p := stepsWei(90)
	h.e.SetOraclePrice(tPerpID, &p)
	evs := h.tick()
	if len(h.out.Books) != 2 || h.out.Books[0].Book != tBookID || h.out.Books[1].Book != tPerpID {
		t.Fatalf("books %+v, want the spot book (idle) then the perp book", h.out.Books)
	}
	spot := h.out.Books[0]
	if spot.Traded || spot.NewOrders != 0 || spot.EndEvent-spot.FirstEvent != 1 {
		t.Fatalf("spot BookTick %+v", spot)
	}
	if got := strings.Join(evs[:min(3, len(evs))], ","); len(evs) != 4 || got != "mcancel a-ask,mcancel a-bid,tcancel a-tp" {
		t.Fatalf("events %q", evs)
	}
	perp := h.out.Books[1]
	if perp.FirstEvent != 1 || perp.EndEvent != 4 || h.out.Events[3].Kind != EventLiquidation {
		t.Fatalf("perp range [%d, %d) over %q", perp.FirstEvent, perp.EndEvent, evs)
	}
	if _, live := h.e.Order(h.id("a-ask")); live {
		t.Fatal("the spot order survived the liquidation")
	}
}
