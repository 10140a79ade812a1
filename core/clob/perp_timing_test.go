package clob

import (
	"encoding/binary"
	"testing"

	"github.com/holiman/uint256"
)

// BenchmarkPerpTick: 100 000 open positions across 10 000 accounts in 10
// perp markets, the oracle moving every tick (a walk of 1 bp), so that
// every tick marks every position to market, pays funding (the oracle is
// high enough that funding is non-zero) and scans every account for
// liquidation. The positions are booked directly (as fills would). As in
// BenchmarkTick, the ledger is a flat array (perpBenchAccounts), so that
// the engine, not a map, is measured; ledger=map runs the map-backed test
// ledger instead. The spot baseline at the same size is
// BenchmarkTick/resting=100000 (engine_timing_test.go).
func BenchmarkPerpTick(b *testing.B) {
	b.Run("ledger=flat", func(b *testing.B) { benchPerpTick(b, true) })
	b.Run("ledger=map", func(b *testing.B) { benchPerpTick(b, false) })
}

func benchPerpTick(b *testing.B, flat bool) {
	const (
		markets  = 10
		accounts = 10_000
		lots     = 5
		oracle   = 1_000_000_000
	)
	h := newPerpHarness(b, Limits{OrdersMax: 64, PendingMax: 64})
	h.acc.engine = nil // the supply check is not run here
	owners := make([]Address, accounts)
	cash := new(uint256.Int).Lsh(uint256.NewInt(1), 90)
	for i := range owners {
		owners[i] = Address{0xAC}
		binary.BigEndian.PutUint32(owners[i][1:], uint32(i))
		h.acc.fund(NativeToken, owners[i], cash)
	}
	for m := range markets {
		cfg := perpMarket(Hash{0x10, byte(m)}, 10, oracle)
		cfg.Perp.WalkBps, cfg.Perp.WalkSeed = 1, uint64(m)
		if err := h.e.CreateMarket(&cfg); err != nil {
			b.Fatal(err)
		}
	}
	var realized uint256.Int
	for _, bk := range h.e.pp.books {
		pb := bk.perp
		for i, o := range owners {
			a := h.e.pp.acctFor(o)
			j := pb.slot(a)
			delta := int64(lots)
			if i%2 == 1 {
				delta = -lots
			}
			pb.applyFill(j, delta, 2*oracle, 0, &realized, &h.e.pp.t)
			h.e.pp.resized(a, 0, delta)
		}
	}
	var acc Accounts = h.acc
	if flat {
		fa := &perpBenchAccounts{bal: make([]testBalance, accounts)}
		for i := range fa.bal {
			fa.bal[i].cash = *cash
		}
		acc = fa
	}
	T := int64(0)
	tick := func() {
		T += h.iv
		h.e.Tick(T, acc, &h.out)
	}
	for range 3 {
		tick()
	}
	if len(h.out.Events) != 0 || len(h.e.AppendPerpAccounts(nil)) != accounts {
		b.Fatalf("not in steady state: %d events", len(h.out.Events))
	}
	if pb := h.e.pp.books[0].perp; pb.f == 0 || len(pb.pos) != accounts {
		b.Fatalf("funding %d, %d positions", pb.f, len(pb.pos))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tick()
	}
	b.StopTimer()
	if len(h.out.Events) != 0 {
		b.Fatalf("%d events: the oracle walked into liquidations", len(h.out.Events))
	}
}

// perpBenchAccounts is a flat native ledger for BenchmarkPerpTick: owner i
// is Address{0xAC, i as 4 bytes}; the backstop and other tokens are not
// expected.
type perpBenchAccounts struct {
	bal  []testBalance
	fees uint256.Int
}

func (a *perpBenchAccounts) of(owner Address) *testBalance {
	return &a.bal[binary.BigEndian.Uint32(owner[1:])]
}

func (a *perpBenchAccounts) Available(token, owner Address) uint256.Int {
	b := a.of(owner)
	var v uint256.Int
	return *v.Sub(&b.cash, &b.locked)
}

func (a *perpBenchAccounts) Lock(token, owner Address, amount *uint256.Int) {
	b := a.of(owner)
	b.locked.Add(&b.locked, amount)
}

func (a *perpBenchAccounts) Unlock(token, owner Address, amount *uint256.Int) {
	b := a.of(owner)
	b.locked.Sub(&b.locked, amount)
	b.payDebt()
}

func (a *perpBenchAccounts) SpendLocked(token, owner Address, amount *uint256.Int) {
	b := a.of(owner)
	b.locked.Sub(&b.locked, amount)
	b.cash.Sub(&b.cash, amount)
}

func (a *perpBenchAccounts) Credit(token, owner Address, amount *uint256.Int) {
	b := a.of(owner)
	b.cash.Add(&b.cash, amount)
	b.payDebt()
}

func (a *perpBenchAccounts) Debit(token, owner Address, amount *uint256.Int) {
	a.of(owner).debit(amount)
}

func (a *perpBenchAccounts) Holding(token, owner Address) (cash, locked, debt uint256.Int) {
	b := a.of(owner)
	return b.cash, b.locked, b.debt
}

func (a *perpBenchAccounts) CollectFee(token Address, amount *uint256.Int) {
	a.fees.Add(&a.fees, amount)
}
