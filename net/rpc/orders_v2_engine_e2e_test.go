//go:build unix

package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ledgervenue/node/bench/bots"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
)

// frameLog collects every notification of a go-ethereum subscription, on
// its own goroutine: bots make more frames than a channel buffers.
type frameLog struct {
	mu     sync.Mutex
	frames []json.RawMessage
}

func (l *frameLog) collect(ch <-chan json.RawMessage, errc <-chan error) {
	go func() {
		for {
			select {
			case m := <-ch:
				l.mu.Lock()
				l.frames = append(l.frames, m)
				l.mu.Unlock()
			case <-errc:
				return
			}
		}
	}()
}

func (l *frameLog) snapshot() []json.RawMessage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]json.RawMessage(nil), l.frames...)
}

// waitQuiet waits until no frame arrived for quiet.
func (l *frameLog) waitQuiet(quiet time.Duration) []json.RawMessage {
	n := -1
	for {
		got := l.snapshot()
		if len(got) == n {
			return got
		}
		n = len(got)
		time.Sleep(quiet)
	}
}

// TestSubsOrdersV2EngineOrders is issue 23's property over the wire: in a
// session with bots on every market, trigger traffic and liquidations on a
// perp market, every svc_orders_v2 event names its order by exactly one of
// `o` (an order listed in that frame's orders) or `id` (an order listed in
// an earlier frame: the subscription starts before any order exists), and
// every order is listed at most once across all frames. The orders fired
// triggers become are listed, as kind "triggered", with their trigger's id
// and nonce and a zero transaction (engine-made, as the openapi's tx_hash),
// in the frame of the batch they land in; svc_orders says "new" for them
// with the same kind, and ob_getOrders lists them.
func TestSubsOrdersV2EngineOrders(t *testing.T) {
	var tn *testNode
	ctl := bots.New(bots.Config{AdminToken: testAdminToken, NowMicros: func() int64 { return tn.node.Clock().NowMicros() }})
	tn = startNodeWith(t, nodeSetup{rpc: func(c *rpc.Config) { c.Bots = ctl }})
	ctl.SetAddr(tn.srv.Addr())
	t.Cleanup(ctl.Close) // before the node stops (cleanups run last first)
	book := tn.createMarket(t, perpMarket("T-PERP"))
	ws := tn.dialWS(t)
	var v2, v1 frameLog
	ch, sub := tn.ethSubscribe(t, ws, "svc_orders_v2", map[string]any{})
	v2.collect(ch, sub.Err())
	ch1, sub1 := tn.ethSubscribe(t, ws, "svc_orders", map[string]any{"orderbook_ids": []common.Hash{book}})
	v1.collect(ch1, sub1.Err())

	var status json.RawMessage
	if err := tn.admin.CallContext(context.Background(), &status, "admin_startBots", "makers=1,takers=1,taker-rate=8,levels=3,seed=3"); err != nil {
		t.Fatalf("admin_startBots: %v", err)
	}
	ticks := func(n int) {
		for range n {
			time.Sleep(150 * time.Millisecond) // the bots' wall-clock pace
			tn.tick(t)
		}
	}
	ticks(8)
	long, short, c, d := tn.sender(t, 1), tn.sender(t, 2), tn.sender(t, 3), tn.sender(t, 4)
	tn.cross(t, long, short, book, eth(50), eth(3000)) // 20× each: one of them is liquidated whichever way the mark goes
	tn.cross(t, c, d, book, eth(2), eth(3000))
	tn.tick(t)
	// Each of the two to be liquidated rests an order far from the market:
	// the liquidation cancels it, and both channels must say so.
	restNonce := map[*obSender]uint64{long: long.nonce, short: short.nonce}
	long.mustSend(t, tn.submit(t, book, eth(1), eth(1000), 0, 0, 0))
	short.mustSend(t, tn.submit(t, book, eth(-1), eth(9000), 0, 0, 0))
	resting := map[common.Hash]bool{orderID(long.addr(), restNonce[long], 0): true, orderID(short.addr(), restNonce[short], 0): true}
	tn.tick(t)
	deadline := tn.nextDeadline()
	tpNonce := c.nonce
	tp := c.mustSend(t, packTrigger(t, "submitTrigger", book, eth(-1), new(big.Int), eth(3300), clob.TriggerTakeProfit, uint8(0),
		deadline, new(big.Int), true, false))
	slNonce := c.nonce
	sl := c.mustSend(t, packTrigger(t, "submitTrigger", book, eth(-1), eth(2890), eth(2900), clob.TriggerStopLoss, uint8(0),
		deadline, new(big.Int), true, false))
	ticks(2)
	tn.setOracle(t, book, eth(3300)) // the take-profit fires; the short goes under maintenance
	ticks(6)
	tn.setOracle(t, book, eth(2860)) // the stop-loss fires; the long goes under maintenance
	ticks(6)
	var stopped bool
	if err := tn.admin.CallContext(context.Background(), &stopped, "admin_stopBots"); err != nil || !stopped {
		t.Fatalf("admin_stopBots: %v %v", stopped, err)
	}
	ticks(2)
	if p := tn.positions(t, tn.rpc, short.addr()).perpOf(book); p != nil {
		t.Fatalf("the short was not liquidated at 3300: %+v", p)
	}
	if p := tn.positions(t, tn.rpc, long.addr()).perpOf(book); p != nil {
		t.Fatalf("the long was not liquidated at 2860: %+v", p)
	}
	frames := v2.waitQuiet(500 * time.Millisecond)

	if tp.TxHash == (common.Hash{}) || sl.TxHash == (common.Hash{}) {
		t.Fatal("a trigger's own transaction hash is zero")
	}
	fired := map[common.Hash]struct {
		trigger string
		tx      common.Hash // zero: the order is the engine's
		nonce   uint64
	}{
		orderID(c.addr(), tpNonce, 0): {"take_profit", common.Hash{}, tpNonce},
		orderID(c.addr(), slNonce, 0): {"stop_loss", common.Hash{}, slNonce},
	}
	listed := map[common.Hash]int64{} // order id → batch of the frame listing it
	events := 0
	for _, raw := range frames {
		var f framesV2
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatalf("frame %s: %v", raw, err)
		}
		ids := make([]common.Hash, len(f.Orders))
		for i, o := range f.Orders {
			if err := json.Unmarshal(o["id"], &ids[i]); err != nil {
				t.Fatalf("order without id in %s", raw)
			}
			if at, ok := listed[ids[i]]; ok {
				t.Fatalf("order %s listed again in batch %d (first in %d): %s", ids[i], f.Batch, at, raw)
			}
			listed[ids[i]] = f.Batch
			if want, ok := fired[ids[i]]; ok {
				var kind, trigger string
				var tx common.Hash
				var n uint64
				_ = json.Unmarshal(o["kind"], &kind)
				_ = json.Unmarshal(o["trigger"], &trigger)
				_ = json.Unmarshal(o["tx"], &tx)
				_ = json.Unmarshal(o["n"], &n)
				if kind != "triggered" || trigger != want.trigger || tx != want.tx || n != want.nonce {
					t.Fatalf("fired order %s listed as kind %q trigger %q tx %s n %d, want triggered %s %s %d", ids[i], kind, trigger, tx, n,
						want.trigger, want.tx, want.nonce)
				}
			}
		}
		for _, e := range f.Events {
			events++
			_, hasO := e["o"]
			_, hasID := e["id"]
			var k string
			_ = json.Unmarshal(e["k"], &k)
			if hasO == hasID {
				t.Fatalf("event %q without exactly one of o and id: %s", k, raw)
			}
			if strings.HasPrefix(k, "trigger_") || k == "liquidation" {
				continue // these name a trigger or a position, not an order
			}
			if hasO {
				var o int
				if err := json.Unmarshal(e["o"], &o); err != nil || o < 0 || o >= len(f.Orders) {
					t.Fatalf("event %q: o %s outside the frame's %d orders: %s", k, e["o"], len(f.Orders), raw)
				}
				continue
			}
			var id common.Hash
			_ = json.Unmarshal(e["id"], &id)
			if at, ok := listed[id]; !ok || at >= f.Batch {
				t.Fatalf("event %q names %s by id in batch %d, but no earlier frame listed it: %s", k, id, f.Batch, raw)
			}
			if k == "cancel" && resting[id] {
				if f.Book != book {
					t.Fatalf("the cancel of %s in the frame of book %s: %s", id, f.Book, raw)
				}
				delete(resting, id)
			}
		}
	}
	if len(resting) != 0 {
		t.Fatalf("svc_orders_v2 never showed the liquidation cancel the resting orders %v", resting)
	}
	for id := range fired {
		if _, ok := listed[id]; !ok {
			t.Fatalf("the order trigger %s became is in no frame's orders (%d frames, %d events)", id, len(frames), events)
		}
	}
	if len(listed) < 20 || events < 40 {
		t.Fatalf("too little traffic to mean anything: %d orders, %d events", len(listed), events)
	}

	// svc_orders: the fired orders' "new" carries their kind.
	news := 0
	v1Cancels := map[common.Hash]bool{}
	for _, raw := range v1.waitQuiet(200 * time.Millisecond) {
		var ups []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &ups); err != nil {
			t.Fatal(err)
		}
		for _, u := range ups {
			var typ, kind string
			var id common.Hash
			_ = json.Unmarshal(u["type"], &typ)
			_ = json.Unmarshal(u["order_id"], &id)
			_ = json.Unmarshal(u["kind"], &kind)
			if typ == "canceled" {
				v1Cancels[id] = true
			}
			if _, ok := fired[id]; ok && typ == "new" {
				if kind != "triggered" {
					t.Fatalf("svc_orders new of a fired order: %s", raw)
				}
				news++
			}
		}
	}
	if news != len(fired) {
		t.Fatalf("%d svc_orders new updates of fired orders, want %d", news, len(fired))
	}
	for o := range restNonce {
		if id := orderID(o.addr(), restNonce[o], 0); !v1Cancels[id] {
			t.Fatalf("svc_orders never said the liquidation canceled %s", id)
		}
	}
	// ob_getOrders lists them.
	var page struct {
		Orders []struct {
			ID          common.Hash `json:"order_id"`
			Kind        string      `json:"kind"`
			TxHash      common.Hash `json:"tx_hash"`
			TriggerType string      `json:"trigger_type"`
		} `json:"orders"`
	}
	if err := tn.rpc.CallContext(context.Background(), &page, "ob_getOrders", c.addr()); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, o := range page.Orders {
		if want, ok := fired[o.ID]; ok && o.Kind == "triggered" && o.TxHash == want.tx && o.TriggerType == want.trigger {
			found++
		}
	}
	if found != len(fired) {
		t.Fatalf("ob_getOrders lists %d of the %d fired orders: %+v", found, len(fired), page.Orders)
	}
}

// recordReplayChannels subscribes one WebSocket to every channel a replay
// writes frames of (node.ReplayChannels, no filter) and to newHeads; each
// call of record appends the notifications up to the next newHeads to live,
// one line each as the replay writes them.
func (tn *testNode) recordReplayChannels(t *testing.T) (record func(), live *bytes.Buffer) {
	t.Helper()
	w := tn.dialSubs(t)
	channel := map[string]string{}
	for i, ch := range node.ReplayChannels {
		channel[w.sub(i+1, ch, map[string]any{})] = ch
	}
	heads := w.sub(len(node.ReplayChannels)+1, "newHeads")
	live = new(bytes.Buffer)
	return func() {
		for _, n := range w.until(heads) {
			live.WriteString(`{"channel":"` + channel[n.Subscription] + `","params":{},"result":`)
			live.Write(n.Result)
			live.WriteString("}\n")
		}
	}, live
}

// TestReplayFramesWithFiredTrigger: `ledgerd replay --frames` writes the
// frames a live subscriber got, byte for byte, through a session where a
// trigger fires and its order lands and trades: the order is listed as
// kind "triggered" in both, from the trigger the replay armed itself.
func TestReplayFramesWithFiredTrigger(t *testing.T) {
	var dir string
	tn := startNode(t, withPerpMarket, func(c *node.Config) { dir = c.DataDir })
	record, live := tn.recordReplayChannels(t)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	tn.cross(t, alice, bob, perpBook, eth(10), eth(100))
	tn.tick(t)
	record()
	alice.mustSend(t, packTrigger(t, "submitTrigger", perpBook, eth(-4), new(big.Int), eth(105), clob.TriggerTakeProfit, uint8(0),
		tn.nextDeadline(), new(big.Int), true, false))
	bob.mustSend(t, tn.submit(t, perpBook, eth(5), eth(106), 0, 0, 0)) // rests: the fired order's counterparty
	tn.tick(t)
	record()
	tn.setOracle(t, perpBook, eth(107))
	for range 3 {
		tn.tick(t)
		record()
	}
	if !strings.Contains(live.String(), `"kind":"triggered"`) {
		t.Fatalf("no fired order in the live frames:\n%s", live.String())
	}
	tn.stop()
	var frames bytes.Buffer
	if _, err := node.Replay(node.ReplayConfig{DataDir: dir, Out: io.Discard, Frames: &frames}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(frames.Bytes(), live.Bytes()) {
		t.Fatalf("replayed frames differ from the live notifications:\nreplay:\n%s\nlive:\n%s", frames.String(), live.String())
	}
}

// TestSubsLiquidationCancels: the cancel of a liquidated account's resting
// order, from a batch before the liquidation, reaches svc_orders_v2 (by
// `id`, in the frame of that order's book, a plain cancel with its totals
// and no st, as the live SDK says an eviction without a fill arrives) and
// svc_orders ("canceled"): the engine lists it in the book's event range.
// ob_getOrders says "margin_canceled" (the openapi: "the engine removed the
// order because the owner's margin capacity was exhausted"), and the
// status filter finds it.
func TestSubsLiquidationCancels(t *testing.T) {
	tn := startNode(t)
	book := tn.createMarket(t, perpMarket("L-PERP"))
	ws := tn.dialWS(t)
	var v2, v1 frameLog
	ch, sub := tn.ethSubscribe(t, ws, "svc_orders_v2", map[string]any{})
	v2.collect(ch, sub.Err())
	ch1, sub1 := tn.ethSubscribe(t, ws, "svc_orders", map[string]any{"orderbook_ids": []common.Hash{book}})
	v1.collect(ch1, sub1.Err())
	long, short := tn.sender(t, 1), tn.sender(t, 2)
	tn.cross(t, long, short, book, eth(50), eth(3000))
	tn.tick(t)
	restNonce := long.nonce
	long.mustSend(t, tn.submit(t, book, eth(1), eth(1000), 0, 0, 0))
	rest := orderID(long.addr(), restNonce, 0)
	tn.tick(t)
	tn.setOracle(t, book, eth(2860))
	for range 6 {
		tn.tick(t)
	}
	if p := tn.positions(t, tn.rpc, long.addr()).perpOf(book); p != nil {
		t.Fatalf("the long was not liquidated at 2860: %+v", p)
	}
	listedAt, cancelAt := int64(-1), int64(-1)
	for _, raw := range v2.waitQuiet(300 * time.Millisecond) {
		var f framesV2
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		for _, o := range f.Orders {
			var id common.Hash
			if _ = json.Unmarshal(o["id"], &id); id == rest {
				listedAt = f.Batch
			}
		}
		for _, e := range f.Events {
			var k string
			var id common.Hash
			_ = json.Unmarshal(e["k"], &k)
			_ = json.Unmarshal(e["id"], &id)
			if k == "cancel" && id == rest {
				if _, st := e["st"]; f.Book != book || st || e["tb"] == nil {
					t.Fatalf("the cancel in the frame of book %s, with st or without totals: %s", f.Book, raw)
				}
				cancelAt = f.Batch
			}
		}
	}
	if listedAt < 0 || cancelAt <= listedAt {
		t.Fatalf("svc_orders_v2: order %s listed in batch %d, its cancel by id in batch %d", rest, listedAt, cancelAt)
	}
	canceled := false
	for _, raw := range v1.waitQuiet(200 * time.Millisecond) {
		var ups []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &ups); err != nil {
			t.Fatal(err)
		}
		for _, u := range ups {
			var typ string
			var id common.Hash
			_ = json.Unmarshal(u["type"], &typ)
			_ = json.Unmarshal(u["order_id"], &id)
			canceled = canceled || typ == "canceled" && id == rest
		}
	}
	if !canceled {
		t.Fatalf("svc_orders never said the liquidation canceled %s", rest)
	}
	orders, _ := getOrders(t, tn, long.addr(), map[string]any{"status": "margin_canceled"})
	if len(orders) != 1 || orders[0].id() != rest || orders[0].str("status") != "margin_canceled" {
		t.Fatalf("ob_getOrders status=margin_canceled: %v", orders)
	}
	if orders, _ := getOrders(t, tn, long.addr(), map[string]any{"status": "canceled"}); len(orders) != 0 {
		t.Fatalf("ob_getOrders status=canceled lists the liquidation's cancel: %v", orders)
	}
}
