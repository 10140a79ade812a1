package core

import (
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

var ethPerpBook = clob.Hash{31: 2}

func ethPerpMarket() *clob.MarketConfig {
	m := wethMarket()
	m.ID, m.Name, m.Kind, m.Base = ethPerpBook, "ETH-PERP", clob.Perp, clob.Address{0x50, 19: 0xee}
	// MarkClamp 100 % and no premium: the mark follows the oracle at once.
	m.Perp = clob.PerpParams{MaxLeverage: 10, OraclePrice: *eth(3000), MarkClamp: *uint256.NewInt(1e18)}
	return m
}

func eth(n uint64) *uint256.Int { return new(uint256.Int).Mul(uint256.NewInt(n), uint256.NewInt(1e18)) }

// TestTriggersThroughLedger: a stop-loss / take-profit pair sent as a
// submitBatch of submitTrigger calls is logged at admission, lands in the
// next tick, and when the oracle (hence the mark) moves through the stop, the tick logs TriggerFired and TriggerCancelled; the
// order it became lands in the following tick without a transaction.
func TestTriggersThroughLedger(t *testing.T) {
	l := NewLedger(Config{ChainID: testChainID, BaseFee: *gwei})
	l.Genesis(NativeToken, alice, eth(100_000))
	if err := l.GenesisMarket(ethPerpMarket()); err != nil {
		t.Fatal(err)
	}
	apply := func(in *Input) *TxRecord {
		t.Helper()
		rec, rej := l.Apply(in)
		if !rej.OK() {
			t.Fatalf("input %d: %+v (%v)", in.Kind, rej, rej.Reason)
		}
		if rec != nil {
			l.Settle(rec)
		}
		if !l.CheckSupply() {
			t.Fatalf("input %d broke conservation", in.Kind)
		}
		return rec
	}
	tx := func(nonce uint64, data []byte, timeUs int64) *TxRecord {
		return apply(&Input{Kind: InputTx, TimeUs: timeUs, Tx: Tx{Hash: Hash{byte(nonce), 0x7}, Type: TxTypeDynamicFee,
			ChainID: testChainID, Nonce: nonce, From: alice, To: OrderbookAddress, HasTo: true, Gas: 100_000,
			GasFeeCap: *uint256.NewInt(2e9), Data: data}})
	}
	topics := func(rec *TxRecord) []Hash {
		var ts []Hash
		for _, lg := range rec.Logs {
			ts = append(ts, lg.Topics[0])
		}
		return ts
	}
	expect := func(what string, got []Hash, want ...Hash) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d logs, want %d", what, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: log %d has topic %x, want %x", what, i, got[i], want[i])
			}
		}
	}

	// A short's stop-loss (buy at or above 3100) and take-profit (buy at or
	// below 2800), Asset-grouped (alice holds no position: nothing sweeps
	// them).
	sl := clob.Intent{Kind: clob.IntentSubmitTrigger, Book: ethPerpBook, Side: clob.Buy, Size: *eth(2),
		TriggerPrice: *eth(3100), TriggerType: clob.TriggerStopLoss, Grouping: clob.GroupingAsset, Deadline: 1_000_000}
	tp := sl
	tp.TriggerPrice, tp.TriggerType = *eth(2800), clob.TriggerTakeProfit
	rec := tx(0, abi.AppendSubmitBatch(nil, [][]byte{abi.AppendSubmitTrigger(nil, &sl), abi.AppendSubmitTrigger(nil, &tp)}), 600_000)
	expect("admission", topics(rec), TopicTriggerSubmitted, TopicTriggerSubmitted)
	slID, tpID := clob.OrderID(clob.Address(alice), 0, 0), clob.OrderID(clob.Address(alice), 0, 1)
	if rec.Logs[0].Topics[2] != Hash(slID) {
		t.Fatalf("TriggerSubmitted names %x, want the order-id formula's %x", rec.Logs[0].Topics[2], slID)
	}
	expect("tick 1 s", topics(apply(&Input{Kind: InputTick, TimeUs: 1_000_000})), TopicSolutionExecuted)
	if got := l.engine.AppendTriggers(nil, clob.Address(alice)); len(got) != 2 || got[0].AdmitTickUs != 1_000_000 {
		t.Fatalf("stored triggers: %+v", got)
	}

	apply(&Input{Kind: InputSetOracle, Book: ethPerpBook, Price: *eth(3150)})
	up := clob.Intent{Kind: clob.IntentUpdateTrigger, Book: ethPerpBook, OrderID: tpID, Side: clob.Buy, Size: *eth(2),
		TriggerPrice: *eth(2750), Deadline: 1_500_000}
	expect("update", topics(tx(1, abi.AppendUpdateTrigger(nil, &up), 1_100_000)), TopicTriggerUpdateRequested)
	rec = apply(&Input{Kind: InputTick, TimeUs: 1_500_000})
	expect("tick 1.5 s", topics(rec), TopicSolutionExecuted, TopicTriggerFired)
	if rec.Logs[1].Topics[2] != Hash(slID) {
		t.Fatal("the stop-loss must fire")
	}
	if got := l.engine.AppendTriggers(nil, clob.Address(alice)); len(got) != 1 || got[0].ID != tpID {
		t.Fatalf("triggers left: %+v, want the take-profit (no one-cancels-the-other)", got)
	}

	// The fired market buy lands, finds no seller and is cancelled.
	due, ok := l.NextTickDue(1 << 40)
	if !ok || due != 2_000_000 {
		t.Fatalf("next tick due %d (%v), want 2 s", due, ok)
	}
	rec = apply(&Input{Kind: InputTick, TimeUs: due})
	expect("tick 2 s", topics(rec), TopicSolutionExecuted, TopicOrderClosed)
	if rec.Logs[1].Topics[2] != Hash(slID) || len(l.LastTick().Landed) != 0 {
		t.Fatalf("the fired order (its id %x) must close without landing a transaction (landed %v)", slID, l.LastTick().Landed)
	}
}
