package core

import (
	"bytes"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

var perpBook = clob.Hash{31: 2}

func ether(n uint64) *uint256.Int {
	return new(uint256.Int).Mul(uint256.NewInt(n), uint256.NewInt(1e18))
}

// perpLedger: ETH-PERP at 3000, leverage 10; alice has 1200 native, bob
// plenty; alice goes long 2 ETH from bob at 3000 (IM 600, MM 300).
func perpLedger(t *testing.T) *Ledger {
	t.Helper()
	l := NewLedger(Config{ChainID: testChainID, BaseFee: *gwei})
	l.Genesis(NativeToken, alice, ether(1200))
	l.Genesis(NativeToken, bob, ether(100_000))
	m := &clob.MarketConfig{ID: perpBook, Name: "ETH-PERP", Kind: clob.Perp, Base: clob.Address{0x51}, Quote: clob.NativeToken,
		IntervalUs: 500_000, TickPrecision: *uint256.NewInt(1e16), LotSize: *uint256.NewInt(1e15),
		Perp: clob.PerpParams{MaxLeverage: 10, OraclePrice: *ether(3000)}}
	if err := l.GenesisMarket(m); err != nil {
		t.Fatal(err)
	}
	order := func(from Address, side clob.Side) *Input {
		in := clob.Intent{Kind: clob.IntentSubmit, Book: perpBook, Side: side, Deadline: 1_000_000}
		in.Size.Set(ether(2))
		in.Price.Set(ether(3000))
		tx := Tx{Hash: Hash{from[0]}, Type: TxTypeDynamicFee, ChainID: testChainID, From: from,
			To: OrderbookAddress, HasTo: true, Gas: 100_000, GasFeeCap: *uint256.NewInt(2e9), Data: abi.AppendSubmitOrder(nil, &in)}
		return &Input{Kind: InputTx, Tx: tx, TimeUs: 600_000}
	}
	for i, in := range []*Input{order(alice, clob.Buy), order(bob, clob.Sell), {Kind: InputTick, TimeUs: 1_000_000}} {
		rec, rej := l.Apply(in)
		if !rej.OK() || rec == nil || rec.Status != 1 {
			t.Fatalf("input %d: %+v", i, rej)
		}
		l.Settle(rec)
	}
	if !l.CheckSupply() {
		t.Fatal("supply after the fill")
	}
	return l
}

func TestPerpThroughLedger(t *testing.T) {
	l := perpLedger(t)
	gas := new(uint256.Int).Mul(uint256.NewInt(TxGas), gwei)
	cash := new(uint256.Int).Sub(ether(1200), gas)
	// Withdrawable = cash − IM of the position (600).
	if w, want := l.Withdrawable(NativeToken, alice), new(uint256.Int).Sub(cash, ether(600)); !w.Eq(want) {
		t.Fatalf("withdrawable %s, want %s", w.Dec(), want.Dec())
	}
	if b := l.BalanceOf(NativeToken, alice); b.Neg || !b.Abs.Eq(cash) {
		t.Fatalf("balanceOf %+v", b)
	}
	// A value transfer of more than the withdrawable part cannot be paid for.
	tx := Tx{Hash: Hash{9}, Type: TxTypeDynamicFee, ChainID: testChainID, Nonce: 1, From: alice, To: bob, HasTo: true,
		Gas: TxGas, GasFeeCap: *gwei, Value: *ether(700)}
	if _, rej := l.Apply(&Input{Kind: InputTx, Tx: tx}); rej.OK() {
		t.Fatal("spent margin")
	}
	// Off-grid oracle prices are refused and change nothing.
	seq := l.Seq()
	if _, rej := l.Apply(&Input{Kind: InputSetOracle, Book: perpBook, Price: *uint256.NewInt(1)}); rej.Reason != clob.ReasonOraclePrice {
		t.Fatalf("off-grid oracle: %+v", rej)
	}
	if l.Seq() != seq {
		t.Fatal("a refused oracle price counted as an input")
	}
	// The oracle at 2000: alice loses 2000 of her ~1200: liquidated, the
	// backstop takes the position and covers the ~800 of bad debt.
	if _, rej := l.Apply(&Input{Kind: InputSetOracle, Book: perpBook, Price: *ether(2000)}); !rej.OK() {
		t.Fatal(rej)
	}
	l.Apply(&Input{Kind: InputTick, TimeUs: 1_500_000})
	if !l.CheckSupply() {
		t.Fatal("supply after the liquidation")
	}
	if b := l.Balance(NativeToken, alice); !b.Cash.IsZero() || !b.Debt.IsZero() {
		t.Fatalf("alice after bad debt: %+v", b)
	}
	debt := new(uint256.Int).Sub(ether(2000), cash)
	bs := Address(clob.BackstopAddress)
	if b := l.Balance(NativeToken, bs); !b.Debt.Eq(debt) || !b.Cash.IsZero() {
		t.Fatalf("backstop %+v, want debt %s", b, debt.Dec())
	}
	if b := l.BalanceOf(NativeToken, bs); !b.Neg || !b.Abs.Eq(debt) {
		t.Fatalf("insurance %+v", b)
	}
	if w := l.Withdrawable(NativeToken, bs); !w.IsZero() {
		t.Fatalf("backstop withdrawable %s", w.Dec())
	}
	// The snapshot carries debt and positions, loads, and re-encodes.
	snap := l.AppendSnapshot(nil)
	l2, err := LoadSnapshot(Config{ChainID: testChainID}, snap)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(l2.AppendSnapshot(nil), snap) {
		t.Fatal("re-encoding differs")
	}
	// A deposit to the backstop pays its debt first.
	l2.Deposit(Hash{7}, NativeToken, bs, ether(1000))
	if b := l2.Balance(NativeToken, bs); !b.Debt.IsZero() || !b.Cash.Eq(new(uint256.Int).Sub(ether(1000), debt)) || !l2.CheckSupply() {
		t.Fatalf("backstop after a deposit: %+v", b)
	}
}

// TestDebtInvariant: debits take free cash first; unlocks and credits pay
// debt first; CheckSupply refuses debt beside free cash.
func TestDebtInvariant(t *testing.T) {
	l := NewLedger(Config{ChainID: testChainID})
	l.Genesis(NativeToken, alice, uint256.NewInt(100))
	a := (*ledgerAccounts)(l)
	na, al := clob.NativeToken, clob.Address(alice)
	a.Lock(na, al, uint256.NewInt(60))
	a.Debit(na, al, uint256.NewInt(70)) // 40 free, 30 debt
	if b := l.Balance(NativeToken, alice); b.Cash.Uint64() != 60 || b.Locked.Uint64() != 60 || b.Debt.Uint64() != 30 {
		t.Fatalf("after the debit: %+v", b)
	}
	a.Unlock(na, al, uint256.NewInt(20)) // frees 20, all to the debt
	if b := l.Balance(NativeToken, alice); b.Cash.Uint64() != 40 || b.Locked.Uint64() != 40 || b.Debt.Uint64() != 10 {
		t.Fatalf("after the unlock: %+v", b)
	}
	a.Credit(na, al, uint256.NewInt(25))
	if b := l.Balance(NativeToken, alice); b.Cash.Uint64() != 55 || b.Debt.Uint64() != 0 {
		t.Fatalf("after the credit: %+v", b)
	}
	a.Credit(na, clob.Address(bob), uint256.NewInt(70)) // the other sides of the moves
	a.Debit(na, clob.Address(bob), uint256.NewInt(25))
	a.Unlock(na, al, uint256.NewInt(40))
	if !l.CheckSupply() {
		t.Fatal("CheckSupply")
	}
	n := &l.accounts[alice].Native // debt beside free cash, the sum unchanged
	n.Debt.SetUint64(1)
	n.Cash.AddUint64(&n.Cash, 1)
	if l.CheckSupply() {
		t.Fatal("CheckSupply accepted debt beside free cash")
	}
}

// TestMoveOracle: the strategy lab's oracle jump moves the price now and
// the walk goes on from it; a gap holds the oracle (no walk) until its end
// tick, which moves it by the gap's bps; a gap survives a snapshot,
// admin_setOraclePrice ends it, and
// bad moves are refused without counting as inputs.
func TestMoveOracle(t *testing.T) {
	walking := func() *Ledger {
		l := NewLedger(Config{ChainID: testChainID, BaseFee: *gwei})
		m := &clob.MarketConfig{ID: perpBook, Name: "ETH-PERP", Kind: clob.Perp, Base: clob.Address{0x51}, Quote: clob.NativeToken,
			IntervalUs: 500_000, TickPrecision: *uint256.NewInt(1e16), LotSize: *uint256.NewInt(1e15),
			Perp: clob.PerpParams{MaxLeverage: 10, OraclePrice: *ether(3000), WalkBps: 10, WalkSeed: 7}}
		if err := l.GenesisMarket(m); err != nil {
			t.Fatal(err)
		}
		return l
	}
	oracle := func(l *Ledger) uint64 {
		info, _ := l.Orderbook().PerpMarket(perpBook)
		return new(uint256.Int).Div(&info.Oracle, uint256.NewInt(1e16)).Uint64() // steps of 0.01
	}
	apply := func(l *Ledger, in *Input) Reject {
		_, rej := l.Apply(in)
		return rej
	}
	tick := func(l *Ledger, us int64) { apply(l, &Input{Kind: InputTick, TimeUs: us}) }
	plain, moved := walking(), walking()
	tick(plain, 500_000)
	tick(moved, 500_000)
	before := oracle(moved)
	if rej := apply(moved, &Input{Kind: InputMoveOracle, Book: perpBook, Bps: -1000}); !rej.OK() {
		t.Fatal(rej)
	}
	if got, want := oracle(moved), before-before/10; got != want {
		t.Fatalf("after a -10%% jump: %d steps, want %d", got, want)
	}
	// The walk goes on from the new price: the same steps as an unmoved
	// walk (step sizes are bps of the price, so compare directions).
	for us := int64(1_000_000); us <= 3_000_000; us += 500_000 {
		p0, m0 := oracle(plain), oracle(moved)
		tick(plain, us)
		tick(moved, us)
		if (oracle(plain) > p0) != (oracle(moved) > m0) || oracle(moved) == m0 {
			t.Fatalf("tick %d: plain %d→%d, moved %d→%d", us, p0, oracle(plain), m0, oracle(moved))
		}
	}
	// A gap until 5 s: the oracle holds at 3.5 s, 4 s and 4.5 s, and the 5 s
	// tick moves it by +2 % instead of walking.
	if rej := apply(moved, &Input{Kind: InputMoveOracle, Book: perpBook, Bps: 200, TimeUs: 5_000_000}); !rej.OK() {
		t.Fatal(rej)
	}
	held := oracle(moved)
	snap := moved.AppendSnapshot(nil)
	restored, err := LoadSnapshot(Config{ChainID: testChainID, BaseFee: *gwei}, snap)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(restored.AppendSnapshot(nil), snap) {
		t.Fatal("a gap does not survive a snapshot")
	}
	for us := int64(3_500_000); us < 5_000_000; us += 500_000 {
		tick(moved, us)
		tick(restored, us)
		if oracle(moved) != held || oracle(restored) != held {
			t.Fatalf("tick %d during the gap: %d and %d, want %d", us, oracle(moved), oracle(restored), held)
		}
	}
	tick(moved, 5_000_000)
	tick(restored, 5_000_000)
	if got, want := oracle(moved), held+held*200/10_000; got != want || oracle(restored) != want {
		t.Fatalf("after the gap: %d and %d, want %d", got, oracle(restored), want)
	}
	if moved.StateHash() != restored.StateHash() {
		t.Fatal("the restored ledger parts from the one it was taken from")
	}
	// After the gap the walk resumes.
	tick(moved, 5_500_000)
	if oracle(moved) == held+held*200/10_000 {
		t.Fatal("the walk did not resume after the gap")
	}
	// admin_setOraclePrice ends a gap: the price stays exact at its end.
	apply(moved, &Input{Kind: InputMoveOracle, Book: perpBook, Bps: 500, TimeUs: 7_000_000})
	apply(moved, &Input{Kind: InputSetOracle, Book: perpBook, Price: *ether(2500)})
	tick(moved, 7_000_000)
	if got := oracle(moved); got != 250_000 {
		t.Fatalf("an exact price after a gap: %d steps", got)
	}
	// Refusals: zero, beyond ±5000 bps, a spot or unknown book.
	seq := moved.Seq()
	for _, in := range []*Input{
		{Kind: InputMoveOracle, Book: perpBook},
		{Kind: InputMoveOracle, Book: perpBook, Bps: 5001},
		{Kind: InputMoveOracle, Book: perpBook, Bps: -5001},
		{Kind: InputMoveOracle, Book: clob.Hash{9}, Bps: 10},
	} {
		if rej := apply(moved, in); rej.OK() {
			t.Fatalf("%+v admitted", in)
		}
	}
	if moved.Seq() != seq {
		t.Fatal("a refused move counted as an input")
	}
}
