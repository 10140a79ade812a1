package clob

import (
	"testing"

	"github.com/holiman/uint256"
)

// Self-matches (docs/auction.md, "Self-matching"): the live network has no
// self-trade prevention, so an account's buy that crosses its own sell is
// matched like any other pair: same walk, same clearing price, both fills
// and both fees. Nothing is cancelled for it and no status says so. These
// tests pin that, on spot and perp books, for resting, IOC and market
// orders; TestPostOnlyRefused, that a post-only order is refused against
// its own account's order as against anyone's.

// holdings returns an owner's base and quote cash on the test spot market.
func (h *harness) holdings(who string) (base, quote uint256.Int) {
	base, _, _ = h.acc.Holding(tBase, owner(who))
	quote, _, _ = h.acc.Holding(tQuote, owner(who))
	return base, quote
}

// wantPaidOnlyFees checks that who's base is unchanged since base0 and its
// quote is quote0 less fee units of 1e6 wei (the test fees are whole
// multiples of it), and that the orderbook collected exactly fee.
func (h *harness) wantPaidOnlyFees(who string, base0, quote0 uint256.Int, fee uint64) {
	h.t.Helper()
	base, quote := h.holdings(who)
	var want uint256.Int
	want.Sub(&quote0, uint256.NewInt(fee*1e6))
	if !base.Eq(&base0) || !quote.Eq(&want) {
		h.t.Fatalf("%s: base %s quote %s, want base %s quote %s (only %d×1e6 of fees gone)", who, base.Dec(), quote.Dec(),
			base0.Dec(), want.Dec(), fee)
	}
	if got := h.acc.fee(tQuote); !got.Eq(uint256.NewInt(fee * 1e6)) {
		h.t.Fatalf("fees collected %s, want %d×1e6", got.Dec(), fee)
	}
}

// One account's buy and sell at one price in one tick: both fill at the
// price, both as takers (0.2 % of 5 × 20 × 1e12 = 0.2e12 each).
func TestSelfTradeOnePrice(t *testing.T) {
	h := scenario(t)
	base0, quote0 := h.holdings("a")
	h.order("a", "sell", Sell, 5, 10, 0)
	h.order("a", "buy", Buy, 5, 10, 0)
	h.expectEvents(h.tick(), "placed sell", "placed buy", "fill buy 5@10 T", "fill sell 5@10 T")
	if h.levels(Buy) != "" || h.levels(Sell) != "" {
		t.Fatalf("book not empty: %q %q", h.levels(Buy), h.levels(Sell))
	}
	h.wantPaidOnlyFees("a", base0, quote0, 400_000)
	if p, ok := h.e.LastPrice(tBookID); !ok || !p.Eq(ptr(stepsWei(10))) {
		t.Fatalf("a self-match sets the clearing price like any match: %s %v", p.Dec(), ok)
	}
}

// A buy that sweeps three of its own resting asks, on three levels: every
// fill at the one clearing price (lo = hi = 12), the asks as makers.
func TestSelfTradeAcrossLevels(t *testing.T) {
	h := scenario(t)
	base0, quote0 := h.holdings("a")
	h.order("a", "s10", Sell, 3, 10, 0)
	h.order("a", "s11", Sell, 3, 11, 0)
	h.order("a", "s12", Sell, 3, 12, 0)
	h.tick()
	h.order("a", "buy", Buy, 9, 12, 0)
	h.expectEvents(h.tick(), "placed buy",
		"fill buy 3@12", "fill s10 3@12 maker T",
		"fill buy 3@12", "fill s11 3@12 maker T",
		"fill buy 3@12 T", "fill s12 3@12 maker T")
	// 9 × 24 × 1e12 = 216e12 traded: taker 0.432e12, makers 0.216e12.
	h.wantPaidOnlyFees("a", base0, quote0, 648_000)
}

// Partial fills against another account come before the self-match in
// queue order and are kept; the self-matched part trades too, and what is
// left of the own ask rests.
func TestSelfTradeAfterPartialFills(t *testing.T) {
	h := scenario(t)
	h.order("b", "theirs", Sell, 2, 10, 0)
	h.order("a", "mine", Sell, 3, 11, 0)
	h.tick()
	h.order("a", "buy", Buy, 4, 11, 0)
	// pb = 11, ps = 11, s' = mine (partly matched, so left): p = 11.
	h.expectEvents(h.tick(), "placed buy",
		"fill buy 2@11", "fill theirs 2@11 maker T",
		"fill buy 2@11 T", "fill mine 2@11 maker")
	if got := h.levels(Sell); got != "1@11/1" {
		t.Fatalf("asks %q", got)
	}
	info, ok := h.e.Order(h.id("mine"))
	if !ok || !info.FilledBase.Eq(ptr(lotsWei(2))) {
		t.Fatalf("own ask after the self-match: %+v %v", info, ok)
	}
	// A second tick: the rest of the own ask trades with the account's own
	// IOC buy, whose unmatched part is cancelled as any IOC remainder.
	h.order("a", "ioc", Buy, 3, 11, FlagIOC)
	h.expectEvents(h.tick(), "placed ioc", "fill ioc 1@11", "fill mine 1@11 maker T", "cancel ioc")
}

// A market order against the same account's resting limit order.
func TestSelfTradeMarketOrder(t *testing.T) {
	h := scenario(t)
	base0, quote0 := h.holdings("c")
	h.order("c", "bid", Buy, 2, 10, 0)
	h.tick()
	h.market("c", "msell", Sell, 2, 5)
	h.expectEvents(h.tick(), "placed msell", "fill bid 2@10 maker T", "fill msell 2@10 T")
	// 2 × 20 × 1e12 = 40e12: taker 0.08e12, maker 0.04e12.
	h.wantPaidOnlyFees("c", base0, quote0, 120_000)
}

// On a perp book a self-match is two fills that cancel out: the position
// is what it was, the cash pays both fees, Σ S stays 0 (checkPerp).
func TestSelfTradePerp(t *testing.T) {
	m := perpMarket(tPerpID, 10, 100)
	m.MakerFee, m.TakerFee = *uint256.NewInt(1e15), *uint256.NewInt(2e15) // 0.1 %, 0.2 %
	h := newPerpHarness(t, Limits{}, m)
	const f = 1_000_000
	h.fundNative("a", f)
	h.fundNative("b", f)
	h.trade(tPerpID, "a", "b", 2, 100) // a long 2: 2 × 200 q, taker 0.8 q each side
	h.wantPos(tPerpID, "a", 2, 400)
	cash0 := new(uint256.Int).Set(ptr(h.acc.get(NativeToken, owner("a")).cash))
	h.mustAdmit("a", []string{"ask"}, h.perpOrder(tPerpID, Sell, 3, 100, 0))
	h.tick()
	h.mustAdmit("a", []string{"bid"}, h.perpOrder(tPerpID, Buy, 3, 100, 0))
	evs := h.tick()
	h.expectEvents(evs, "placed bid", "fill bid 3@100 T", "fill ask 3@100 maker T")
	h.wantPos(tPerpID, "a", 2, 400)
	// 3 × 200 q = 600 q: taker 1.2 q, maker 0.6 q.
	want := new(uint256.Int).Sub(cash0, new(uint256.Int).Mul(uint256.NewInt(18), uint256.NewInt(1e11)))
	if got := &h.acc.get(NativeToken, owner("a")).cash; !got.Eq(want) {
		t.Fatalf("a's cash %s, want %s (only the two fees gone)", got.Dec(), want.Dec())
	}
	// The sell's fill (a long 2 sold 3: flips to −1) and the buy's (back
	// to 2) each carry the position after it, in allocation order: the buy
	// first, so its fill reads 5, then the sell's 2.
	var after []int64
	for i := range h.out.Events {
		if ev := &h.out.Events[i]; ev.Kind == EventFill {
			l := int64(new(uint256.Int).Div(&ev.Position.Abs, e15).Uint64())
			if ev.Position.Neg {
				l = -l
			}
			after = append(after, l)
		}
	}
	if len(after) != 2 || after[0] != 5 || after[1] != 2 {
		t.Fatalf("positions after the fills %v, want [5 2]", after)
	}
}
