//go:build unix

package rpc_test

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/node"
)

// End-to-end tests of the perp data on the subscription channels and of
// the perp rows of ob_getFills and ob_getBackstopTransfers. They need the
// perp engine (helper A), the triggers (helper B) and the admin and
// ob_getPositions perp data (helper D1): against the skeleton engine perp
// data reads as zero and they fail, hence the TestPerpE2E prefix.

// perpBook is the perp market the tests add to the dev markets: oracle
// 100, price step 0.01, lot 0.001, leverage 10, a 10 bps walk per tick.
var perpBook = common.Hash{31: 0x70}

func withPerpMarket(c *node.Config) {
	c.Markets = append(c.Markets, clob.MarketConfig{
		ID: clob.Hash(perpBook), Kind: clob.Perp, Name: "TEST-PERP", BaseSymbol: "TEST", QuoteSymbol: "USD",
		Base: clob.Address{0: 0x50, 19: 0x70}, Quote: clob.Address(core.NativeToken), IntervalUs: intervalUs,
		TickPrecision: *uint256.NewInt(1e16), LotSize: *uint256.NewInt(1e15), TakerFee: *uint256.NewInt(3e14),
		Perp: clob.PerpParams{MaxLeverage: 10, InterestRate: *uint256.NewInt(1e14), MaxFundingRate: *uint256.NewInt(32e16),
			MaxPremium: *uint256.NewInt(5e16), MarkClamp: *uint256.NewInt(1e17), OraclePrice: *u256(eth(100)),
			WalkBps: 10, WalkSeed: 7},
	})
}

func u256(b *big.Int) *uint256.Int { return uint256.MustFromBig(b) }

type perpPositions struct {
	Account common.Address `json:"account"`
	Data    struct {
		Positions []struct {
			Kind       string      `json:"kind"`
			Book       common.Hash `json:"orderbook_id"`
			Size       string      `json:"size"`
			Mark       string      `json:"mark_price"`
			Unrealized string      `json:"unrealized_pnl"`
		} `json:"positions"`
	} `json:"data"`
}

// perpMark returns the mark of the account's perp position in perpBook
// ("" without one).
func (p *perpPositions) perpMark() string {
	for _, x := range p.Data.Positions {
		if x.Kind == "perp" && x.Book == perpBook {
			return x.Mark
		}
	}
	return ""
}

// TestPerpE2EPositionsOnMarkMove (go-ethereum over WebSocket): alice's
// svc_positions shows her perp position after the fill that opens it, and
// again after a tick that only moved the mark (no event of hers).
func TestPerpE2EPositionsOnMarkMove(t *testing.T) {
	tn := startNode(t, withPerpMarket)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	ctx := context.Background()
	ws, err := gethrpc.DialWebsocket(ctx, tn.ws, "")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ch, sub := tn.ethSubscribe(t, ws, "svc_positions", map[string]any{"account": alice.addr()})
	var p perpPositions
	if err := json.Unmarshal(recv(t, ch, sub), &p); err != nil || p.Account != alice.addr() || p.perpMark() != "" {
		t.Fatalf("snapshot %+v (%v)", p, err)
	}
	tn.cross(t, alice, bob, perpBook, eth(10), eth(100))
	tn.tick(t)
	if err := json.Unmarshal(recv(t, ch, sub), &p); err != nil || p.perpMark() == "" {
		t.Fatalf("after the fill %+v (%v)", p, err)
	}
	before := p.perpMark()
	tn.setOracle(t, perpBook, eth(120))
	tn.tick(t)
	if err := json.Unmarshal(recv(t, ch, sub), &p); err != nil || p.perpMark() == "" || p.perpMark() == before {
		t.Fatalf("after the mark moved from %s: %+v (%v)", before, p, err)
	}
}

// TestPerpE2EMarketsIdle: on a node with no orders, svc_markets streams the
// perp market's entry every tick, with a mark that moves (the oracle
// walks), and nothing for the idle spot markets.
func TestPerpE2EMarketsIdle(t *testing.T) {
	tn := startNode(t, withPerpMarket)
	w := tn.dialSubs(t)
	mk := w.sub(1, "svc_markets", map[string]any{})
	heads := w.sub(2, "newHeads")
	marks := map[string]bool{}
	for i := range 3 {
		tn.tick(t)
		notes := of(w.until(heads), mk)
		if i == 0 { // the snapshot came first
			if len(notes) < 3 {
				t.Fatalf("snapshot %+v, want the three markets", notes)
			}
			notes = notes[3:]
		}
		if len(notes) != 1 {
			t.Fatalf("tick sent %+v, want the perp market's entry only", notes)
		}
		var e struct {
			Book    common.Hash `json:"orderbook"`
			Type    string      `json:"market_type"`
			Oracle  *string     `json:"oracle_price"`
			Mark    *string     `json:"mark_price"`
			Funding *int64      `json:"funding_last_updated"`
		}
		if err := json.Unmarshal(notes[0].Result, &e); err != nil || e.Book != perpBook || e.Type != "perpetual" ||
			e.Oracle == nil || e.Mark == nil || e.Funding == nil {
			t.Fatalf("entry %s (%v)", notes[0].Result, err)
		}
		marks[*e.Mark] = true
	}
	if len(marks) < 2 {
		t.Fatalf("the mark never moved: %v", marks)
	}
}

type triggersPush struct {
	Account  common.Address `json:"account"`
	Triggers []struct {
		ID     common.Hash  `json:"order_id"`
		TxHash *common.Hash `json:"tx_hash"`
		Type   string       `json:"trigger_type"`
		Size   string       `json:"size"`
	} `json:"triggers"`
	Total int `json:"total_count"`
}

// TestPerpE2ETriggersSnapshotThenLive: svc_triggers sends alice's (empty)
// triggers at once, then her take-profit / stop-loss pair once it is
// stored, then the take-profit once the stop-loss fired, then none once
// the stop's order closed the position (the pair is asset-grouped).
func TestPerpE2ETriggersSnapshotThenLive(t *testing.T) {
	tn := startNode(t, withPerpMarket)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	w := tn.dialSubs(t)
	trig := w.sub(1, "svc_triggers", map[string]any{"account": alice.addr()})
	heads := w.sub(2, "newHeads")
	tn.cross(t, alice, bob, perpBook, eth(10), eth(100))
	tn.tick(t)
	notes := of(w.until(heads), trig)
	var tp triggersPush
	if len(notes) != 1 || json.Unmarshal(notes[0].Result, &tp) != nil || tp.Account != alice.addr() || tp.Total != 0 {
		t.Fatalf("snapshot %+v", notes)
	}
	send := func(typ uint8, price *big.Int) common.Hash {
		data, err := triggerABI.Pack("submitTrigger", perpBook, eth(-10), new(big.Int), price, typ, uint8(1),
			tn.nextDeadline(), new(big.Int), true, false)
		if err != nil {
			t.Fatal(err)
		}
		return alice.mustSend(t, data).TxHash
	}
	sl, tpTx := send(1 /* StopLoss */, eth(90)), send(0 /* TakeProfit */, eth(110))
	tn.tick(t)
	notes = of(w.until(heads), trig)
	if len(notes) != 1 || json.Unmarshal(notes[0].Result, &tp) != nil || tp.Total != 2 || len(tp.Triggers) != 2 {
		t.Fatalf("after storing %+v", notes)
	}
	for _, tr := range tp.Triggers {
		if tr.TxHash == nil || (*tr.TxHash != sl && *tr.TxHash != tpTx) || tr.Size != "-10000000000000000000" {
			t.Fatalf("trigger %+v (txs %s %s)", tr, sl, tpTx)
		}
	}
	// The stop fires (the clamped mark reaches 90); its order, capped at
	// 81, closes the long against bob's bid in the next tick, and the
	// asset-grouped take-profit goes with the position.
	bob.mustSend(t, tn.submit(t, perpBook, eth(10), eth(85), 0, 0, 0))
	tn.setOracle(t, perpBook, eth(85))
	tn.tick(t)
	notes = of(w.until(heads), trig)
	if len(notes) != 1 || json.Unmarshal(notes[0].Result, &tp) != nil || tp.Total != 1 || *tp.Triggers[0].TxHash != tpTx {
		t.Fatalf("after firing %+v", notes)
	}
	tn.tick(t)
	notes = of(w.until(heads), trig)
	if len(notes) != 1 || json.Unmarshal(notes[0].Result, &tp) != nil || tp.Total != 0 {
		t.Fatalf("after the close %+v", notes)
	}
}

// TestPerpE2ELiquidationHistory: alice goes long 900 at 100 with 10 000 of
// cash (9x); the oracle falls to 90 and she is liquidated: her
// svc_positions hears it, ob_getBackstopTransfers lists the transfer and
// ob_getFills her perp fill with its position before and after.
func TestPerpE2ELiquidationHistory(t *testing.T) {
	tn := startNode(t, withPerpMarket)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	w := tn.dialSubs(t)
	pos := w.sub(1, "svc_positions", map[string]any{"account": alice.addr()})
	heads := w.sub(2, "newHeads")
	tn.cross(t, alice, bob, perpBook, eth(900), eth(100))
	tn.tick(t)
	if n := of(w.until(heads), pos); len(n) != 2 { // snapshot, then the fill
		t.Fatalf("positions %+v", n)
	}
	tn.setOracle(t, perpBook, eth(90))
	tn.tick(t)
	notes := of(w.until(heads), pos)
	var p perpPositions
	if len(notes) != 1 || json.Unmarshal(notes[0].Result, &p) != nil || p.perpMark() != "" {
		t.Fatalf("after the liquidation %+v", notes)
	}
	var bs struct {
		Transfers []struct {
			User common.Address `json:"user"`
			Book common.Hash    `json:"orderbook_id"`
			Size string         `json:"size"`
			Mark *hexutil.Big   `json:"mark_price"`
		} `json:"transfers"`
		Total int     `json:"total_count"`
		Next  *string `json:"next_cursor"`
	}
	if err := tn.rpc.CallContext(context.Background(), &bs, "ob_getBackstopTransfers", alice.addr(), map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if bs.Total != 1 || len(bs.Transfers) != 1 || bs.Transfers[0].User != alice.addr() || bs.Transfers[0].Book != perpBook ||
		bs.Transfers[0].Size != "900000000000000000000" || bs.Next != nil {
		t.Fatalf("backstop transfers %+v", bs)
	}
	fills := tn.fills(t, alice.addr(), map[string]any{"orderbook_id": perpBook}, 10)
	if len(fills) != 1 || fills[0].PositionBefore == nil || *fills[0].PositionBefore != "0" ||
		*fills[0].PositionAfter != "900000000000000000000" {
		t.Fatalf("perp fills %+v", fills)
	}
}
