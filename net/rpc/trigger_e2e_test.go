package rpc_test

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/core"
)

// Take-profit / stop-loss over the wire with the live network's ABI numbers
// (docs/perps.md, "Triggers"): enum TriggerType { TakeProfit, StopLoss },
// enum TriggerGrouping { None, Asset }. The numbers are literals on
// purpose: a client encodes them from the live ABI, not from our constants.
const (
	abiTakeProfit    uint8 = 0
	abiStopLoss      uint8 = 1
	abiGroupingNone  uint8 = 0
	abiGroupingAsset uint8 = 1
)

// overTransports runs fn once per transport on a fresh node: orderbook
// transactions are sent and their receipts read over it, and so are the
// reads fn makes with c.
func overTransports(t *testing.T, fn func(t *testing.T, tn *testNode, c *gethrpc.Client)) {
	for _, transport := range []string{"http", "ws"} {
		t.Run(transport, func(t *testing.T) {
			tn := startNode(t)
			if transport == "http" {
				fn(t, tn, tn.rpc)
				return
			}
			ws := tn.dialWS(t)
			over := *tn
			over.eth = ethclient.NewClient(ws)
			fn(t, &over, ws)
		})
	}
}

// trigger packs submitTrigger for the next tick, no ttl.
func (tn *testNode) trigger(t *testing.T, book common.Hash, size, limit, price *big.Int, typ, grouping uint8, reduceOnly bool) []byte {
	return packTrigger(t, "submitTrigger", book, size, limit, price, typ, grouping, tn.nextDeadline(), new(big.Int), reduceOnly, false)
}

func listTriggers(t *testing.T, c *gethrpc.Client, a common.Address) triggersAnswer {
	t.Helper()
	var ts triggersAnswer
	if err := c.CallContext(context.Background(), &ts, "ob_getTriggers", a); err != nil {
		t.Fatal(err)
	}
	return ts
}

// fired reports whether a TriggerFired log names the trigger. A tick's
// logs are served once its record is attested, which may trail the tick:
// with wait it looks again for up to 5 s before answering false.
func (tn *testNode) fired(t *testing.T, book, id common.Hash, wait bool) bool {
	t.Helper()
	q := ethereum.FilterQuery{Addresses: []common.Address{orderbookAddr},
		Topics: [][]common.Hash{{common.Hash(core.TopicTriggerFired)}, {book}, {id}}}
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		logs, err := tn.eth.FilterLogs(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(logs) > 0 || !wait || time.Now().After(end) {
			return len(logs) > 0
		}
	}
}

// TestTriggerE2ELongKeepsTakeProfitAndStopLoss: the regression. A
// long entered in one submitBatch with a reduce-only take-profit above the
// mark and a stop-loss below it (the live guide's example) stays open
// while the mark sits between them, although a bid is there to close it;
// ob_getTriggers lists the pair as take_profit / stop_loss, both asset.
// Before the fix the stop-loss (1) was read as a take-profit and fired at
// once.
func TestTriggerE2ELongKeepsTakeProfitAndStopLoss(t *testing.T) {
	overTransports(t, func(t *testing.T, tn *testNode, c *gethrpc.Client) {
		book := tn.createMarket(t, perpMarket("T-PERP"))
		long, short, bidder := tn.sender(t, 1), tn.sender(t, 2), tn.sender(t, 3)
		nonce := long.nonce
		long.mustSend(t, pack(t, "submitBatch", [][]byte{
			tn.submit(t, book, eth(1), eth(3000), 0, 0, 0),
			tn.trigger(t, book, eth(-1), new(big.Int), eth(3300), abiTakeProfit, abiGroupingAsset, true),
			tn.trigger(t, book, eth(-1), new(big.Int), eth(2700), abiStopLoss, abiGroupingAsset, true),
		}))
		short.mustSend(t, tn.submit(t, book, eth(-1), eth(3000), 0, 0, 0))
		tn.tick(t)
		bidder.mustSend(t, tn.submit(t, book, eth(1), eth(2990), 0, 0, 0))
		for range 3 {
			tn.tick(t)
		}
		if p := tn.positions(t, c, long.addr()).perpOf(book); p == nil || p.Side != "long" || p.Size != decimal(eth(1)) {
			t.Fatalf("the long after three ticks at 3000: %+v", p)
		}
		ts := listTriggers(t, c, long.addr())
		want := map[common.Hash]string{orderID(long.addr(), nonce, 1): "take_profit", orderID(long.addr(), nonce, 2): "stop_loss"}
		if ts.Total != 2 || len(ts.Triggers) != 2 {
			t.Fatalf("triggers: %+v", ts)
		}
		for _, tr := range ts.Triggers {
			if want[tr.ID] != tr.TriggerType || tr.Grouping != "asset" || !tr.ReduceOnly {
				t.Fatalf("trigger %+v, want %s, asset, reduce-only", tr, want[tr.ID])
			}
		}
		// The mark falls to the stop: it fires and the bid closes the long;
		// the take-profit goes with the position.
		tn.setOracle(t, book, eth(2700))
		tn.tick(t)
		tn.tick(t)
		if p := tn.positions(t, c, long.addr()).perpOf(book); p != nil {
			t.Fatalf("the long after its stop-loss: %+v", p)
		}
		if !tn.fired(t, book, orderID(long.addr(), nonce, 2), true) || tn.fired(t, book, orderID(long.addr(), nonce, 1), false) {
			t.Fatal("the stop-loss must have fired, the take-profit not")
		}
		if ts := listTriggers(t, c, long.addr()); ts.Total != 0 {
			t.Fatalf("triggers after the close: %+v", ts)
		}
	})
}

// TestTriggerE2EFiringTable: the live table. A buy take-profit and a sell
// stop-loss fire when the mark is at or below their price, a buy stop-loss
// and a sell take-profit at or above; each waits one step short of it, and
// while the mark is on the other side.
func TestTriggerE2EFiringTable(t *testing.T) {
	overTransports(t, func(t *testing.T, tn *testNode, c *gethrpc.Client) {
		book := tn.createMarket(t, perpMarket("T-PERP"))
		type tcase struct {
			name  string
			who   *obSender
			size  *big.Int
			typ   uint8
			price *big.Int
			id    common.Hash
		}
		cases := []*tcase{
			{name: "buy take-profit", who: tn.sender(t, 3), size: big.NewInt(1e17), typ: abiTakeProfit, price: eth(2900)},
			{name: "buy stop-loss", who: tn.sender(t, 4), size: big.NewInt(1e17), typ: abiStopLoss, price: eth(3100)},
			{name: "sell take-profit", who: tn.sender(t, 5), size: big.NewInt(-1e17), typ: abiTakeProfit, price: eth(3100)},
			{name: "sell stop-loss", who: tn.sender(t, 6), size: big.NewInt(-1e17), typ: abiStopLoss, price: eth(2900)},
		}
		for _, k := range cases {
			k.id = orderID(k.who.addr(), k.who.nonce, 0)
			k.who.mustSend(t, tn.trigger(t, book, k.size, new(big.Int), k.price, k.typ, abiGroupingNone, false))
		}
		labels := map[uint8]string{abiTakeProfit: "take_profit", abiStopLoss: "stop_loss"}
		expect := func(step string, firedNames ...string) {
			t.Helper()
			for _, k := range cases {
				want := false
				for _, n := range firedNames {
					want = want || n == k.name
				}
				ts := listTriggers(t, c, k.who.addr())
				if got := tn.fired(t, book, k.id, want); got != want || (ts.Total == 0) != want {
					t.Fatalf("%s: %s fired %v, listed %+v; want fired %v", step, k.name, got, ts, want)
				}
				if !want && (ts.Triggers[0].TriggerType != labels[k.typ] || ts.Triggers[0].Grouping != "none") {
					t.Fatalf("%s: %s listed as %+v", step, k.name, ts.Triggers[0])
				}
			}
		}
		tn.tick(t)
		expect("mark 3000")
		tn.setOracle(t, book, eth(2901))
		tn.tick(t)
		expect("mark 2901")
		tn.setOracle(t, book, eth(3099))
		tn.tick(t)
		expect("mark 3099")
		tn.setOracle(t, book, eth(2900))
		tn.tick(t)
		expect("mark 2900", "buy take-profit", "sell stop-loss")
		tn.setOracle(t, book, eth(3100))
		tn.tick(t)
		expect("mark 3100", "buy take-profit", "sell stop-loss", "buy stop-loss", "sell take-profit")
	})
}

// TestTriggerE2EAssetStopAfterManualClose: a long's asset-grouped stop (not
// reduce-only) is removed at the end of the tick in which a manual close
// makes the position flat, although the mark crossed the stop in that very
// tick; the mark staying there, the stop never fires and never opens a
// short. A grouping-none stop of the same account stays armed; grouping 2
// is refused.
func TestTriggerE2EAssetStopAfterManualClose(t *testing.T) {
	overTransports(t, func(t *testing.T, tn *testNode, c *gethrpc.Client) {
		book := tn.createMarket(t, perpMarket("T-PERP"))
		long, short := tn.sender(t, 1), tn.sender(t, 2)
		tn.cross(t, long, short, book, eth(1), eth(3000))
		tn.tick(t)
		_, err := long.send(t, tn.trigger(t, book, eth(-1), new(big.Int), eth(2800), abiStopLoss, 2, false))
		wantRPCError(t, err, 3, "execution reverted", nil)
		stopNonce := long.nonce
		long.mustSend(t, tn.trigger(t, book, eth(-1), new(big.Int), eth(2800), abiStopLoss, abiGroupingAsset, false))
		keepNonce := long.nonce
		long.mustSend(t, tn.trigger(t, book, big.NewInt(-1e17), new(big.Int), eth(2500), abiStopLoss, abiGroupingNone, false))
		tn.tick(t)
		stop, keep := orderID(long.addr(), stopNonce, 0), orderID(long.addr(), keepNonce, 0)
		ts := listTriggers(t, c, long.addr())
		groupings := map[common.Hash]string{}
		for _, tr := range ts.Triggers {
			if tr.TriggerType != "stop_loss" {
				t.Fatalf("trigger %+v", tr)
			}
			groupings[tr.ID] = tr.Grouping
		}
		if ts.Total != 2 || groupings[stop] != "asset" || groupings[keep] != "none" {
			t.Fatalf("triggers before the close: %+v", ts)
		}
		// The close trades at 3000 while the mark falls to the stop.
		tn.cross(t, short, long, book, eth(1), eth(3000))
		tn.setOracle(t, book, eth(2800))
		tn.tick(t)
		if p := tn.positions(t, c, long.addr()).perpOf(book); p != nil {
			t.Fatalf("the long after the close: %+v", p)
		}
		if ts := listTriggers(t, c, long.addr()); ts.Total != 1 || ts.Triggers[0].ID != keep {
			t.Fatalf("triggers after the close: %+v", ts)
		}
		for range 3 {
			tn.tick(t)
		}
		if p := tn.positions(t, c, long.addr()).perpOf(book); p != nil {
			t.Fatalf("the account after the stop's price held: %+v", p)
		}
		if tn.fired(t, book, stop, false) {
			t.Fatal("the asset-grouped stop fired after the close")
		}
	})
}
