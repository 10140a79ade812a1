package clob

import (
	"testing"

	"github.com/holiman/uint256"
)

// TestSteadyStateAllocs locks the hot paths to zero allocations: a submit,
// a cancel, a tick that drains them, and a tick that matches.
func TestSteadyStateAllocs(t *testing.T) {
	h := newHarness(t, Limits{OrdersMax: 256, PendingMax: 64})
	h.fund("a", 1<<30, 1<<40)
	h.fund("b", 1<<30, 1<<40)
	a := &Admission{Signer: owner("a"), Owner: owner("a")}
	env := &Envelope{Intents: make([]Intent, 1)}
	buy, sell := h.limit(Buy, 1, 10, 0), h.limit(Sell, 1, 10, 0)
	cancel := Intent{Kind: IntentCancel, Book: tBookID}
	T := int64(0)
	admit := func(who string, in *Intent) {
		a.Signer, a.Owner = owner(who), owner(who)
		a.Nonce++
		a.NowUs = T + 1
		in.Deadline = uint64(T + h.iv)
		env.Intents[0] = *in
		if r := h.e.Admit(a, env, h.acc); r != OK {
			t.Fatalf("admit: %v", r)
		}
	}
	submitCancel := func() {
		admit("a", &buy)
		h.e.idh.orderID(&cancel.OrderID, a.Signer, a.Nonce, 0)
		admit("a", &cancel)
		T += h.iv
		h.e.Tick(T, h.acc, &h.out)
	}
	match := func() {
		admit("a", &buy)
		admit("b", &sell)
		T += h.iv
		h.e.Tick(T, h.acc, &h.out)
		if !h.out.Books[0].Traded {
			t.Fatal("no trade")
		}
	}
	for range 100 { // warm up: scratch buffers reach their steady size
		submitCancel()
		match()
	}
	f := func(name string, fn func()) {
		t.Helper()
		if n := testing.AllocsPerRun(200, fn); n != 0 {
			t.Fatalf("%s: %v allocations per run", name, n)
		}
	}
	f("submit+cancel+tick", submitCancel)
	f("match tick", match)
	if err := h.acc.check(); err != nil {
		t.Fatal(err)
	}
	if err := checkEngine(h.e, h.acc); err != nil {
		t.Fatal(err)
	}
}

// TestPerpSteadyStateAllocs extends the zero-allocation rule to a perp
// book: admission with its margin check, a tick that opens and one that
// closes positions (fills, funding, the liquidation scan), and an idle tick
// with a moving oracle.
func TestPerpSteadyStateAllocs(t *testing.T) {
	m := perpMarket(tPerpID, 10, 1_000_000_000)
	m.Perp.WalkBps, m.Perp.WalkSeed = 1, 5
	h := newPerpHarness(t, Limits{OrdersMax: 256, PendingMax: 64}, m)
	h.fundNative("a", 1e12)
	h.fundNative("b", 1e12)
	a := &Admission{}
	env := &Envelope{Intents: make([]Intent, 1)}
	T := int64(0)
	admit := func(who string, side Side) {
		a.Signer, a.Owner = owner(who), owner(who)
		a.Nonce++
		a.NowUs = T + 1
		env.Intents[0] = Intent{Kind: IntentSubmit, Book: tPerpID, Side: side, Size: *e15, Type: Market, Flags: FlagIOC,
			Deadline: uint64(T + h.iv)}
		if side == Sell {
			env.Intents[0].Type, env.Intents[0].Flags = Limit, 0
		}
		env.Intents[0].Price.Mul(uint256.NewInt(1_000_000_000), &h.e.book(tPerpID).u.tick)
		env.Intents[0].Price.Mul(&env.Intents[0].Price, uint256.NewInt(2))
		if r := h.e.Admit(a, env, h.acc); r != OK {
			t.Fatalf("admit: %v", r)
		}
	}
	round := func() {
		admit("a", Buy)
		admit("b", Sell)
		T += h.iv
		h.e.Tick(T, h.acc, &h.out)
		admit("b", Buy)
		admit("a", Sell)
		T += h.iv
		h.e.Tick(T, h.acc, &h.out)
	}
	idle := func() {
		T += h.iv
		h.e.Tick(T, h.acc, &h.out)
	}
	for range 100 {
		round()
		idle()
	}
	if n := testing.AllocsPerRun(200, round); n != 0 {
		t.Fatalf("open+close: %v allocations per run", n)
	}
	if n := testing.AllocsPerRun(200, idle); n != 0 {
		t.Fatalf("idle tick: %v allocations per run", n)
	}
	if err := h.acc.check(); err != nil {
		t.Fatal(err)
	}
	if err := checkPerp(h.e, h.acc); err != nil {
		t.Fatal(err)
	}
}
