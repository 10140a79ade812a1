package core

import (
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

var (
	weth     = Address{0x50, 19: 1}
	wethBook = clob.Hash{31: 1}
)

func wethMarket() *clob.MarketConfig {
	return &clob.MarketConfig{ID: wethBook, Name: "WETH/USD", Base: clob.Address(weth), Quote: clob.Address(NativeToken),
		IntervalUs: 500_000, TickPrecision: *uint256.NewInt(1e16), LotSize: *uint256.NewInt(1e15),
		TakerFee: *uint256.NewInt(3e14)}
}

// orderbookInputs are a genesis-independent stream: two crossing orders,
// then the tick at 1 s.
func orderbookInputs() []*Input {
	order := func(from Address, nonce uint64, side clob.Side) *Input {
		in := clob.Intent{Kind: clob.IntentSubmit, Book: wethBook, Side: side, Deadline: 1_000_000}
		in.Size.SetUint64(2e18)
		in.Price.Mul(uint256.NewInt(3000), uint256.NewInt(1e18))
		tx := Tx{Hash: Hash{byte(nonce), from[0]}, Type: TxTypeDynamicFee, ChainID: testChainID, Nonce: nonce, From: from,
			To: OrderbookAddress, HasTo: true, Gas: 100_000, GasFeeCap: *uint256.NewInt(2e9), Data: abi.AppendSubmitOrder(nil, &in)}
		return &Input{Kind: InputTx, Tx: tx, TimeUs: 600_000}
	}
	return []*Input{order(alice, 0, clob.Buy), order(bob, 0, clob.Sell), {Kind: InputTick, TimeUs: 1_000_000}}
}

func newOrderbookLedger(t *testing.T) *Ledger {
	t.Helper()
	l := NewLedger(Config{ChainID: testChainID, BaseFee: *gwei})
	l.Genesis(NativeToken, alice, new(uint256.Int).Mul(uint256.NewInt(10_000), uint256.NewInt(1e18)))
	l.Genesis(NativeToken, bob, uint256.NewInt(1e18))
	l.Genesis(weth, bob, new(uint256.Int).Mul(uint256.NewInt(5), uint256.NewInt(1e18)))
	if err := l.GenesisMarket(wethMarket()); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestOrderbookThroughLedger: crossing orders settle at the tick, value is
// conserved per token, and replaying the same inputs gives the same state
// hash byte for byte.
func TestOrderbookThroughLedger(t *testing.T) {
	run := func() *Ledger {
		l := newOrderbookLedger(t)
		for i, in := range orderbookInputs() {
			rec, rej := l.Apply(in)
			if !rej.OK() || rec == nil {
				t.Fatalf("input %d: %+v", i, rej)
			}
			l.Settle(rec)
			if !l.CheckSupply() {
				t.Fatalf("input %d broke conservation", i)
			}
		}
		return l
	}
	l := run()
	if got := l.Balance(weth, alice).Cash; got.Uint64() != 2e18 {
		t.Fatalf("alice WETH %v", got.Dec())
	}
	if b := l.Balance(NativeToken, alice); !b.Locked.IsZero() {
		t.Fatalf("alice still locks %v after a complete fill", b.Locked.Dec())
	}
	if rec := l.Tick(1_500_000); len(rec.Logs) != 0 || !l.CheckSupply() {
		t.Fatalf("an idle tick logged %d events", len(rec.Logs))
	}
	if a, b := run().StateHash(), run().StateHash(); a != b {
		t.Fatalf("replay gave %x and %x", a, b)
	}
}

// TestOrderbookRefusalChangesNothing: a refused intent leaves the state
// hash as it was, also for a sender the ledger had never seen (zero fees).
func TestOrderbookRefusalChangesNothing(t *testing.T) {
	f := func(name string, mutate func(l *Ledger, in *Input)) {
		t.Helper()
		l := newOrderbookLedger(t)
		in := orderbookInputs()[0]
		mutate(l, in)
		before := l.StateHash()
		if rec, rej := l.Apply(in); rej.Code != RejectApp || rec != nil {
			t.Fatalf("%s: %+v", name, rej)
		}
		if l.StateHash() != before {
			t.Fatalf("%s: a refused intent changed the state", name)
		}
	}
	f("misaligned deadline", func(_ *Ledger, in *Input) {
		in.Tx.Data = abi.AppendCancel(nil, &clob.Intent{Kind: clob.IntentCancel, Book: wethBook, Deadline: 1})
	})
	f("unknown sender at zero fees", func(l *Ledger, in *Input) {
		l.SetBaseFee(new(uint256.Int))
		in.Tx.From, in.Tx.GasFeeCap = Address{0x77}, uint256.Int{}
	})
	f("value sent", func(_ *Ledger, in *Input) { in.Tx.Value.SetUint64(1) })
}
