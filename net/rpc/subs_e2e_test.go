//go:build unix

package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/gorilla/websocket"

	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/server"
)

// End-to-end tests of every eth_subscribe channel over real loopback
// sockets: go-ethereum's client (EthSubscribe) where notifications are
// plain results, gorilla/websocket where the order of frames on the wire or
// a close notification matters.
//
// Determinism without sleeps: everything the hub sends on a connection
// (snapshots and replays queued when a subscription activates, then each
// tick's notifications: per book the book channels, then markets,
// positions, withdrawals, transfers, and newHeads last) goes out in the
// order it was queued. So a newHeads subscription on the same connection
// is a sentinel: once a tick's head is read, everything that tick (and any
// earlier snapshot or replay) sent on the connection has been read, and
// "nothing arrived" is an exact assertion. Answers to later calls are not
// ordered against notifications queued before them (they may overtake
// them), so they are never used as such a marker.

const subsWait = 5 * time.Second

// recv waits for the next notification of a go-ethereum subscription.
func recv(t *testing.T, ch <-chan json.RawMessage, sub *gethrpc.ClientSubscription) json.RawMessage {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case err := <-sub.Err():
		t.Fatalf("subscription ended: %v", err)
	case <-time.After(subsWait):
		t.Fatal("no notification in time")
	}
	return nil
}

func (tn *testNode) ethSubscribe(t *testing.T, c *gethrpc.Client, params ...any) (chan json.RawMessage, *gethrpc.ClientSubscription) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), subsWait)
	defer cancel()
	ch := make(chan json.RawMessage, 64)
	sub, err := c.EthSubscribe(ctx, ch, params...)
	if err != nil {
		t.Fatalf("eth_subscribe %v: %v", params[0], err)
	}
	t.Cleanup(sub.Unsubscribe)
	return ch, sub
}

// cross makes buyer buy and seller sell size at price in book, both landing
// in the next tick (not run here).
func (tn *testNode) cross(t *testing.T, buyer, seller *obSender, book common.Hash, size, price *big.Int) {
	t.Helper()
	buyer.mustSend(t, tn.submit(t, book, size, price, 0, 0, 0))
	seller.mustSend(t, tn.submit(t, book, new(big.Int).Neg(size), price, 0, 0, 0))
}

// sconn is a raw connection that keeps the notifications it reads while
// waiting for an answer: an answer may overtake a notification queued
// before it (only the eth_subscribe answer is ordered before the new
// subscription's first notification), so nothing here assumes otherwise.
type sconn struct {
	*wsRaw
	stash []notification
}

func (tn *testNode) dialSubs(t *testing.T) *sconn { return &sconn{wsRaw: tn.dialRaw(t)} }

// answer reads until the answer with id, stashing notifications.
func (c *sconn) answer(id int) map[string]json.RawMessage {
	c.t.Helper()
	for {
		m := c.wsRaw.next()
		if _, ok := m["method"]; !ok {
			if string(m["id"]) != fmt.Sprint(id) {
				c.t.Fatalf("answer %s, want id %d", m["id"], id)
			}
			return m
		}
		var n notification
		if string(m["method"]) != `"eth_subscription"` || json.Unmarshal(m["params"], &n) != nil {
			c.t.Fatalf("not a notification: %v", m)
		}
		c.stash = append(c.stash, n)
	}
}

// sub subscribes and returns the id; the answer must precede the
// subscription's first notification.
func (c *sconn) sub(id int, params ...any) string {
	c.t.Helper()
	c.call(id, "eth_subscribe", params...)
	m := c.answer(id)
	var sid string
	if err := json.Unmarshal(m["result"], &sid); err != nil || sid == "" {
		c.t.Fatalf("subscribe %v: %s (%v)", params[0], m["error"], err)
	}
	if len(of(c.stash, sid)) != 0 {
		c.t.Fatalf("a notification of %s came before its subscribe answer", sid)
	}
	return sid
}

// chainID makes a plain call and checks its answer.
func (c *sconn) chainID(id int) {
	c.t.Helper()
	c.call(id, "eth_chainId")
	if m := c.answer(id); string(m["result"]) != `"0x50d"` {
		c.t.Fatalf("eth_chainId answer %v", m)
	}
}

// note returns the next notification, stashed ones first.
func (c *sconn) note() notification {
	c.t.Helper()
	if len(c.stash) > 0 {
		n := c.stash[0]
		c.stash = c.stash[1:]
		return n
	}
	return c.wsRaw.notification()
}

// until reads until a notification of sentinel and returns those of other
// subscriptions that came before it.
func (c *sconn) until(sentinel string) []notification {
	c.t.Helper()
	var notes []notification
	for {
		n := c.note()
		if n.Subscription == sentinel {
			return notes
		}
		notes = append(notes, n)
	}
}

func of(notes []notification, id string) []notification {
	var out []notification
	for _, n := range notes {
		if n.Subscription == id {
			out = append(out, n)
		}
	}
	return out
}

func hexInt(t *testing.T, raw json.RawMessage) *big.Int {
	t.Helper()
	var h hexutil.Big
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatalf("hex quantity %s: %v", raw, err)
	}
	return h.ToInt()
}

func sameAddr(s string, a common.Address) bool {
	return common.IsHexAddress(s) && common.HexToAddress(s) == a && strings.EqualFold(s, a.Hex())
}

// TestSubsOrdersFill: svc_orders delivers the array of OrderUpdate of a
// fill for the subscribed bidder.
func TestSubsOrdersFill(t *testing.T) {
	tn := startNode(t)
	c := tn.dialWS(t)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	ch, sub := tn.ethSubscribe(t, c, "svc_orders", map[string]any{"orderbook_ids": []common.Hash{wethBook}, "bidder": bob.addr()})
	alice.mustSend(t, tn.submit(t, wethBook, eth(2), eth(3000), 0, 0, 0))
	bob.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(2990), 0, 0, 0))
	tn.tick(t)
	raw := recv(t, ch, sub)
	var ups []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &ups); err != nil || len(ups) == 0 {
		t.Fatalf("svc_orders payload is not a non-empty array: %s (%v)", raw, err)
	}
	bobOrder := orderID(bob.addr(), 0, 0)
	fills := 0
	for _, u := range ups {
		var typ, id string
		_ = json.Unmarshal(u["type"], &typ)
		_ = json.Unmarshal(u["order_id"], &id)
		if common.HexToHash(id) != bobOrder {
			t.Fatalf("an update of another order reached bob's subscription: %s", raw)
		}
		if typ != "fill" {
			continue
		}
		fills++
		var book, bidder, status string
		_ = json.Unmarshal(u["orderbook_id"], &book)
		_ = json.Unmarshal(u["bidder"], &bidder)
		_ = json.Unmarshal(u["status"], &status)
		if common.HexToHash(book) != wethBook || !sameAddr(bidder, bob.addr()) || status != "filled" ||
			hexInt(t, u["base_amount"]).Cmp(e18) != 0 || hexInt(t, u["quote_amount"]).Cmp(eth(3000)) != 0 {
			t.Fatalf("fill update %s", raw)
		}
	}
	if fills != 1 {
		t.Fatalf("%d fills in %s, want 1", fills, raw)
	}
}

type framesV2 struct {
	Book   common.Hash                  `json:"book"`
	Batch  int64                        `json:"batch"`
	Accts  []string                     `json:"accts"`
	Orders []map[string]json.RawMessage `json:"orders"`
	Events []map[string]json.RawMessage `json:"events"`
}

// TestSubsOrdersV2Bidders: svc_orders_v2 with bidders naming two accounts
// sends frames carrying accts, with an `a` on every order and event that
// names the order's owner.
func TestSubsOrdersV2Bidders(t *testing.T) {
	tn := startNode(t)
	c := tn.dialWS(t)
	alice, bob, carol := tn.sender(t, 0), tn.sender(t, 1), tn.sender(t, 2)
	ch, sub := tn.ethSubscribe(t, c, "svc_orders_v2", map[string]any{"bidders": []common.Address{alice.addr(), bob.addr()}})
	oneCh, oneSub := tn.ethSubscribe(t, c, "svc_orders_v2", map[string]any{"bidders": []common.Address{bob.addr()}})
	tn.cross(t, alice, bob, wethBook, eth(1), eth(3000))
	carol.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1000), 0, 0, 0)) // not in the set
	tn.tick(t)
	raw := recv(t, ch, sub)
	var f framesV2
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if f.Book != wethBook || f.Batch != tn.clock.NowMicros() || len(f.Accts) != 2 || len(f.Orders) != 2 || len(f.Events) == 0 {
		t.Fatalf("frame %s", raw)
	}
	owner := map[common.Hash]common.Address{orderID(alice.addr(), 0, 0): alice.addr(), orderID(bob.addr(), 0, 0): bob.addr()}
	acct := func(m map[string]json.RawMessage) common.Address {
		var a int
		if err := json.Unmarshal(m["a"], &a); err != nil || a < 0 || a >= len(f.Accts) {
			t.Fatalf("`a` missing or out of range in %s", raw)
		}
		return common.HexToAddress(f.Accts[a])
	}
	for _, o := range f.Orders {
		var id common.Hash
		_ = json.Unmarshal(o["id"], &id)
		if w, ok := owner[id]; !ok || acct(o) != w {
			t.Fatalf("order %s: owner per `a` %s, want %s", id, acct(o), w)
		}
	}
	fills := 0
	for _, e := range f.Events {
		_, hasO := e["o"]
		_, hasID := e["id"]
		if hasO == hasID {
			t.Fatalf("event without exactly one of o/id: %s", raw)
		}
		var id common.Hash
		if hasO {
			var o int
			_ = json.Unmarshal(e["o"], &o)
			_ = json.Unmarshal(f.Orders[o]["id"], &id)
		} else {
			_ = json.Unmarshal(e["id"], &id)
		}
		if acct(e) != owner[id] {
			t.Fatalf("event's `a` is not the owner of its order: %s", raw)
		}
		var k string
		_ = json.Unmarshal(e["k"], &k)
		if k == "fill" {
			fills++
		}
	}
	if fills != 2 {
		t.Fatalf("%d fills, want one per side: %s", fills, raw)
	}
	if !((sameAddr(f.Accts[0], alice.addr()) && sameAddr(f.Accts[1], bob.addr())) || (sameAddr(f.Accts[0], bob.addr()) && sameAddr(f.Accts[1], alice.addr()))) {
		t.Fatalf("accts %v, want alice and bob", f.Accts)
	}
	// bidders naming one account: accts and every `a` omitted.
	raw = recv(t, oneCh, oneSub)
	var one framesV2
	if err := json.Unmarshal(raw, &one); err != nil || one.Accts != nil || strings.Contains(string(raw), `"accts"`) ||
		len(one.Orders) != 1 || len(one.Events) == 0 {
		t.Fatalf("one-account frame %s (%v)", raw, err)
	}
	for _, m := range append(one.Orders, one.Events...) {
		if _, ok := m["a"]; ok {
			t.Fatalf("`a` in a one-account frame: %s", raw)
		}
	}
}

// TestSubsCandles: svc_candles sends the clearing price and volume of the
// cleared book at the tick.
func TestSubsCandles(t *testing.T) {
	tn := startNode(t)
	c := tn.dialWS(t)
	ch, sub := tn.ethSubscribe(t, c, "svc_candles", map[string]any{"orderbook_ids": []common.Hash{wethBook}})
	tn.cross(t, tn.sender(t, 0), tn.sender(t, 1), wethBook, eth(2), eth(2500))
	tn.tick(t)
	raw := recv(t, ch, sub)
	var cd struct {
		Book  common.Hash  `json:"orderbook"`
		Ts    int64        `json:"timestamp_us"`
		Price *hexutil.Big `json:"price"`
		Vol   *hexutil.Big `json:"volume"`
		QVol  *hexutil.Big `json:"quote_volume"`
	}
	if err := json.Unmarshal(raw, &cd); err != nil || cd.Book != wethBook || cd.Ts != tn.clock.NowMicros() ||
		cd.Price.ToInt().Cmp(eth(2500)) != 0 || cd.Vol.ToInt().Cmp(eth(2)) != 0 || cd.QVol.ToInt().Cmp(eth(5000)) != 0 {
		t.Fatalf("candle %s (%v)", raw, err)
	}
}

type marketEntry struct {
	Book common.Hash  `json:"orderbook"`
	ID   common.Hash  `json:"id"`
	Last *hexutil.Big `json:"last_clearing_price"`
	Vol  *hexutil.Big `json:"volume_24h"`
}

// TestSubsMarketsSnapshotThenLive: svc_markets sends the current entry
// immediately on subscribe (before any further tick), then the entry a
// tick publishes.
func TestSubsMarketsSnapshotThenLive(t *testing.T) {
	tn := startNode(t)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	tn.cross(t, alice, bob, wethBook, eth(1), eth(3000))
	tn.tick(t)
	w := tn.dialSubs(t)
	id := w.sub(1, "svc_markets", map[string]any{"orderbook_ids": []common.Hash{wethBook}})
	heads := w.sub(2, "newHeads")
	n := w.note() // no tick has run since: this is the snapshot
	var m marketEntry
	if err := json.Unmarshal(n.Result, &m); err != nil || n.Subscription != id || m.Book != wethBook || m.ID != wethBook ||
		m.Last.ToInt().Cmp(eth(3000)) != 0 || m.Vol.ToInt().Cmp(e18) != 0 {
		t.Fatalf("snapshot %s (%v)", n.Result, err)
	}
	tn.cross(t, alice, bob, wethBook, eth(1), eth(3100))
	tn.tick(t)
	notes := w.until(heads)
	if len(notes) != 1 {
		t.Fatalf("%d notifications for the tick, want one live entry: %+v", len(notes), notes)
	}
	if err := json.Unmarshal(notes[0].Result, &m); err != nil || notes[0].Subscription != id || m.Book != wethBook ||
		m.Last.ToInt().Cmp(eth(3100)) != 0 || m.Vol.ToInt().Cmp(eth(2)) != 0 {
		t.Fatalf("live entry %s (%v)", notes[0].Result, err)
	}
}

// TestSubsMarketsSnapshotEveryMarket: the snapshot of a state channel is
// the current state, so svc_markets must send every subscribed market that
// exists (as ob_getMarkets lists it), also one that has not run a tick
// since the node started.
func TestSubsMarketsSnapshotEveryMarket(t *testing.T) {
	tn := startNode(t)
	w := tn.dialSubs(t)
	all := w.sub(1, "svc_markets", map[string]any{})
	heads := w.sub(2, "newHeads")
	buyer, seller := tn.sender(t, 0), tn.sender(t, 1)
	tn.cross(t, buyer, seller, wethBook, eth(1), eth(3000))
	tn.tick(t)
	// Before the tick's own WETH entry: the snapshot of both markets.
	var books []common.Hash
	for _, n := range w.until(heads) {
		var m marketEntry
		if err := json.Unmarshal(n.Result, &m); err != nil || n.Subscription != all {
			t.Fatalf("%s (%v)", n.Result, err)
		}
		books = append(books, m.Book)
	}
	if len(books) != 3 || books[0] != wethBook || books[1] != wbtcBook || books[2] != wethBook {
		t.Fatalf("fresh node: entries %v, want the snapshot WETH, WBTC then the tick's WETH (ob_getMarkets: %s)", books, tn.rawCall("ob_getMarkets"))
	}
	wbtc := w.sub(3, "svc_markets", map[string]any{"orderbook_ids": []common.Hash{wbtcBook}})
	tn.cross(t, buyer, seller, wethBook, eth(1), eth(3000))
	tn.tick(t)
	if n := of(w.until(heads), wbtc); len(n) != 1 {
		t.Fatalf("WBTC/USD (never ran): %d snapshot entries, want 1", len(n))
	}
}

type positionsUpdate struct {
	Account common.Address `json:"account"`
	Data    struct {
		Positions []struct {
			Book    common.Hash  `json:"orderbook_id"`
			Balance *hexutil.Big `json:"balance"`
		} `json:"positions"`
	} `json:"data"`
}

func (p *positionsUpdate) balance(book common.Hash) *big.Int {
	for _, x := range p.Data.Positions {
		if x.Book == book {
			return x.Balance.ToInt()
		}
	}
	return nil
}

// TestSubsPositionsSnapshotThenLive: svc_positions sends the account's
// positions immediately, then after a fill that touches it; a tick that
// does not touch an account sends it nothing.
func TestSubsPositionsSnapshotThenLive(t *testing.T) {
	tn := startNode(t)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	w := tn.dialSubs(t)
	id := w.sub(1, "svc_positions", map[string]any{"account": bob.addr()})
	other := w.sub(2, "svc_positions", map[string]any{"bidder": devAddr(7)}) // alias
	heads := w.sub(3, "newHeads")
	snaps := []notification{w.note(), w.note()} // no tick yet: the snapshots
	if len(of(snaps, id)) != 1 || len(of(snaps, other)) != 1 {
		t.Fatalf("snapshots %+v, want one per subscription", snaps)
	}
	var p positionsUpdate
	if err := json.Unmarshal(of(snaps, id)[0].Result, &p); err != nil || p.Account != bob.addr() || p.balance(wethBook).Cmp(eth(100)) != 0 {
		t.Fatalf("bob's snapshot %s (%v)", of(snaps, id)[0].Result, err)
	}
	if err := json.Unmarshal(of(snaps, other)[0].Result, &p); err != nil || p.Account != devAddr(7) {
		t.Fatalf("snapshot of account 7 %s (%v)", of(snaps, other)[0].Result, err)
	}
	tn.cross(t, alice, bob, wethBook, eth(1), eth(3000))
	tn.tick(t)
	notes := w.until(heads)
	if len(notes) != 1 || notes[0].Subscription != id {
		t.Fatalf("tick notifications %+v, want one for bob's subscription only", notes)
	}
	if err := json.Unmarshal(notes[0].Result, &p); err != nil || p.Account != bob.addr() || p.balance(wethBook).Cmp(eth(99)) != 0 {
		t.Fatalf("bob's update %s (%v)", notes[0].Result, err)
	}
}

// TestSubsTransfers: svc_transfers sends nothing on a tick without a
// transfer, then one array element with from/to for a settled transfer,
// to the subscriptions it matches (no account, or from/to).
func TestSubsTransfers(t *testing.T) {
	tn := startNode(t)
	alice, bob, carol := tn.sender(t, 0), tn.sender(t, 1), tn.sender(t, 2)
	w := tn.dialSubs(t)
	all := w.sub(1, "svc_transfers", map[string]any{})
	toCarol := w.sub(2, "svc_transfers", map[string]any{"account": carol.addr()})
	fromAlice := w.sub(3, "svc_transfers", map[string]any{"account": alice.addr(), "orderbook_ids": []common.Hash{wbtcBook}}) // books ignored
	unrelated := w.sub(4, "svc_transfers", map[string]any{"account": devAddr(8)})
	heads := w.sub(5, "newHeads")
	tn.cross(t, alice, bob, wethBook, eth(1), eth(3000))
	tn.tick(t)
	if n := w.until(heads); len(n) != 0 {
		t.Fatalf("on subscribe or on a tick without a transfer: %+v", n)
	}
	alice.mustSend(t, pack(t, "transfer", weth, carol.addr(), eth(3), tn.nextDeadline()))
	tn.tick(t)
	tick := tn.clock.NowMicros()
	notes := w.until(heads)
	if len(notes) != 3 || len(of(notes, all)) != 1 || len(of(notes, toCarol)) != 1 || len(of(notes, fromAlice)) != 1 || len(of(notes, unrelated)) != 0 {
		t.Fatalf("transfer tick notifications %+v", notes)
	}
	for _, n := range notes {
		var tr []struct {
			From   common.Address `json:"from"`
			To     common.Address `json:"to"`
			Token  common.Address `json:"token"`
			Amount *hexutil.Big   `json:"amount"`
			Batch  int64          `json:"batch"`
		}
		if err := json.Unmarshal(n.Result, &tr); err != nil || len(tr) != 1 || tr[0].From != alice.addr() || tr[0].To != carol.addr() ||
			tr[0].Token != weth || tr[0].Amount.ToInt().Cmp(eth(3)) != 0 || tr[0].Batch != tick {
			t.Fatalf("transfer update %s (%v)", n.Result, err)
		}
	}
	if b := callView(t, tn, "balanceOf", weth, carol.addr()); b.Cmp(eth(103)) != 0 {
		t.Fatalf("carol WETH %v after the transfer", b)
	}
	// Catch-up: since = the orders-only tick replays the transfer tick only.
	w2 := tn.dialSubs(t)
	replay := w2.sub(1, "svc_transfers", map[string]any{"since": tick - intervalUs})
	heads2 := w2.sub(2, "newHeads")
	tn.cross(t, alice, bob, wethBook, eth(1), eth(3000))
	tn.tick(t)
	if notes := w2.until(heads2); len(notes) != 1 || notes[0].Subscription != replay || !strings.Contains(string(notes[0].Result), fmt.Sprintf(`"batch":%d`, tick)) {
		t.Fatalf("svc_transfers since %d: %+v, want the transfer of %d once", tick-intervalUs, notes, tick)
	}
}

// TestSubsTransfersFirstNotification: as a client sees it with
// go-ethereum: subscribed through a tick with only orders and a tick with
// a transfer, the first notification received is the transfer.
func TestSubsTransfersFirstNotification(t *testing.T) {
	tn := startNode(t)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	c := tn.dialWS(t)
	ch, sub := tn.ethSubscribe(t, c, "svc_transfers", map[string]any{})
	tn.cross(t, alice, bob, wethBook, eth(1), eth(3000))
	tn.tick(t)
	bob.mustSend(t, pack(t, "transfer", native, alice.addr(), eth(7), tn.nextDeadline()))
	tn.tick(t)
	raw := recv(t, ch, sub)
	var tr []struct {
		From  common.Address `json:"from"`
		To    common.Address `json:"to"`
		Batch int64          `json:"batch"`
	}
	if err := json.Unmarshal(raw, &tr); err != nil || len(tr) != 1 || tr[0].From != bob.addr() || tr[0].To != alice.addr() || tr[0].Batch != tn.clock.NowMicros() {
		t.Fatalf("first svc_transfers notification %s (%v), want the transfer of the second tick", raw, err)
	}
}

type receiptNote struct {
	TxHash common.Hash `json:"transactionHash"`
	Status string      `json:"status"`
	Meta   *struct {
		Root common.Hash `json:"receipt_root"`
	} `json:"svc_metadata"`
}

// TestSubsAccountReceipts: svc_accountReceipts delivers the receipts of
// an address live, not others'; with since it replays the retained
// receipts attested after since (in order), then continues live.
func TestSubsAccountReceipts(t *testing.T) {
	tn := startNode(t)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	w := tn.dialSubs(t)
	live := w.sub(1, "svc_accountReceipts", map[string]any{"address": alice.addr()})
	bob.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(5000), 0, 0, 0)) // not alice's
	pay := dynTx(t, bob.key, chainID, bob.nonce, alice.addr(), big.NewInt(1), gwei, new(big.Int).Mul(gwei, big.NewInt(2)))
	if err := tn.eth.SendTransaction(context.Background(), pay); err != nil {
		t.Fatal(err)
	}
	bob.nonce++
	tn.waitReceipt(pay.Hash())
	first := alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1000), 0, 0, 0))
	rcpt := func(c *sconn, sid string, want common.Hash) {
		t.Helper()
		n := c.note()
		var r receiptNote
		if err := json.Unmarshal(n.Result, &r); err != nil || n.Subscription != sid || r.TxHash != want || r.Status != "0x1" || r.Meta == nil {
			t.Fatalf("receipt %s on %s (%v), want %s on %s", n.Result, n.Subscription, err, want, sid)
		}
	}
	rcpt(w, live, pay.Hash()) // alice is its `to`
	rcpt(w, live, first.TxHash)
	attested1 := tn.clock.NowMicros() // the manual clock stamps attestations
	tn.tick(t)
	second := alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1001), 0, 0, 0))
	rcpt(w, live, second.TxHash)

	w2 := tn.dialSubs(t)
	replayAll := w2.sub(1, "svc_accountReceipts", map[string]any{"address": alice.addr(), "since": 0})
	replayLater := w2.sub(2, "svc_accountReceipts", map[string]any{"address": alice.addr(), "since": attested1})
	third := alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1002), 0, 0, 0))
	rcpt(w2, replayAll, pay.Hash())
	rcpt(w2, replayAll, first.TxHash)
	rcpt(w2, replayAll, second.TxHash)
	rcpt(w2, replayLater, second.TxHash)
	third1, third2 := w2.note(), w2.note()
	for _, n := range []notification{third1, third2} {
		var r receiptNote
		if json.Unmarshal(n.Result, &r) != nil || r.TxHash != third.TxHash {
			t.Fatalf("after the replays: %s, want %s", n.Result, third.TxHash)
		}
	}
	if third1.Subscription == third2.Subscription {
		t.Fatalf("the live receipt went twice to %s", third1.Subscription)
	}
	rcpt(w, live, third.TxHash)
}

// TestSubsConfirmedReceipts: svc_confirmedReceipts delivers every
// confirmed receipt with its svc_metadata (go-ethereum client).
func TestSubsConfirmedReceipts(t *testing.T) {
	tn := startNode(t)
	c := tn.dialWS(t)
	ch, sub := tn.ethSubscribe(t, c, "svc_confirmedReceipts", map[string]any{})
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	want := []common.Hash{
		alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1000), 0, 0, 0)).TxHash,
		bob.mustSend(t, pack(t, "transfer", weth, alice.addr(), e18, tn.nextDeadline())).TxHash,
	}
	for _, h := range want {
		raw := recv(t, ch, sub)
		var r receiptNote
		if err := json.Unmarshal(raw, &r); err != nil || r.TxHash != h || r.Status != "0x1" || r.Meta == nil || r.Meta.Root == (common.Hash{}) {
			t.Fatalf("confirmed receipt %s (%v), want %s", raw, err, h)
		}
	}
}

// TestSubsPastPerfectTime: svc_pastPerfectTime sends the past-perfect time
// as a hex string once it reaches the subscribed timestamp: not before.
func TestSubsPastPerfectTime(t *testing.T) {
	tn := startNode(t)
	w := tn.dialSubs(t)
	target := tn.clock.NowMicros() + intervalUs
	id := w.sub(1, "svc_pastPerfectTime", hexutil.EncodeUint64(uint64(target)))
	later := w.sub(2, "svc_pastPerfectTime", map[string]any{"timestamp": target + 100*intervalUs})
	heads := w.sub(3, "newHeads")
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	for range 2 {
		tn.cross(t, alice, bob, wethBook, eth(1), eth(3000))
		tn.tick(t)
	}
	// The time is published right after each tick (possibly coalesced):
	// read past both ticks' heads and the first time notification.
	var notes []notification
	for seenHeads := 0; seenHeads < 2 || len(notes) == 0; {
		n := w.note()
		if n.Subscription == heads {
			seenHeads++
			continue
		}
		if n.Subscription != id {
			t.Fatalf("notification of %s (later: %s): %s", n.Subscription, later, n.Result)
		}
		notes = append(notes, n)
	}
	var s string
	if err := json.Unmarshal(notes[0].Result, &s); err != nil || !strings.HasPrefix(s, "0x") {
		t.Fatalf("past-perfect time %s is not a hex string", notes[0].Result)
	}
	if v, err := hexutil.DecodeUint64(s); err != nil || int64(v) < target || int64(v) > tn.clock.NowMicros() {
		t.Fatalf("past-perfect time %s (%v), want in [%d, %d]", s, err, target, tn.clock.NowMicros())
	}
}

// TestSubsWithdrawalsAndTriggersQuiet: svc_withdrawals and svc_triggers
// are accepted; nothing feeds them yet, so a tick sends them nothing
// (svc_triggers, a state channel, sends its empty snapshot on subscribe).
func TestSubsWithdrawalsAndTriggersQuiet(t *testing.T) {
	tn := startNode(t)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	w := tn.dialSubs(t)
	wAll := w.sub(1, "svc_withdrawals", map[string]any{})
	wAlice := w.sub(2, "svc_withdrawals", map[string]any{"account": alice.addr(), "since": 0})
	trig := w.sub(3, "svc_triggers", map[string]any{"account": alice.addr()})
	heads := w.sub(4, "newHeads")
	tn.cross(t, alice, bob, wethBook, eth(1), eth(3000))
	alice.mustSend(t, pack(t, "transfer", native, bob.addr(), e18, tn.nextDeadline()))
	tn.tick(t)
	notes := w.until(heads)
	if len(notes) != 1 || notes[0].Subscription != trig {
		t.Fatalf("got %+v, want only the svc_triggers snapshot (withdrawals %s %s)", notes, wAll, wAlice)
	}
	var tu struct {
		Account  common.Address    `json:"account"`
		Triggers []json.RawMessage `json:"triggers"`
	}
	if err := json.Unmarshal(notes[0].Result, &tu); err != nil || tu.Account != alice.addr() || tu.Triggers == nil || len(tu.Triggers) != 0 {
		t.Fatalf("svc_triggers snapshot %s (%v)", notes[0].Result, err)
	}
	tn.cross(t, alice, bob, wethBook, eth(1), eth(3000))
	tn.tick(t)
	if n := w.until(heads); len(n) != 0 {
		t.Fatalf("a second tick sent %+v", n)
	}
}

// TestSubsOrdersV2ResumeAcrossBooks: one tick trades in two books. A
// client that accepted the first book's frame of that tick resumes with
// (since, since_book) = (that frame's batch, its book) and gets only the
// second book's frame of the tick; since alone means the whole batch
// arrived; since_book only cuts the batch named by since (spec, Catch-up
// rule 4: "skips every book at or below since_book in that batch and
// delivers later batches whole").
func TestSubsOrdersV2ResumeAcrossBooks(t *testing.T) {
	tn := startNode(t)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	tn.cross(t, alice, bob, wethBook, eth(1), eth(300))
	tn.tick(t)
	t0 := tn.clock.NowMicros()
	tn.cross(t, alice, bob, wethBook, eth(1), eth(301))
	tn.cross(t, alice, bob, wbtcBook, big.NewInt(1e17), eth(10000))
	tn.tick(t)
	t1 := tn.clock.NowMicros()
	type key struct {
		book  common.Hash
		batch int64
	}
	bidders := []common.Address{alice.addr(), bob.addr()}
	cases := []struct {
		params map[string]any
		want   []key
	}{
		{map[string]any{"bidders": bidders, "since": t1, "since_book": wethBook}, []key{{wbtcBook, t1}}},
		{map[string]any{"since": t1, "since_book": wethBook.Hex()}, []key{{wbtcBook, t1}}},
		{map[string]any{"bidders": bidders, "since": t0}, []key{{wethBook, t1}, {wbtcBook, t1}}},
		{map[string]any{"bidders": bidders, "since": t0, "since_book": wethBook}, []key{{wethBook, t1}, {wbtcBook, t1}}},
		{map[string]any{"bidders": bidders, "since": t1, "since_book": wbtcBook}, nil},
		{map[string]any{"bidders": bidders, "since": t1}, nil},
	}
	conns := make([]*sconn, len(cases))
	ids := make([]string, len(cases))
	for i, c := range cases {
		conns[i] = tn.dialSubs(t)
		ids[i] = conns[i].sub(1, "svc_orders_v2", c.params)
	}
	// A live tick: its frame comes after whatever was replayed.
	tn.cross(t, alice, bob, wethBook, eth(1), eth(302))
	tn.tick(t)
	t2 := tn.clock.NowMicros()
	for i, c := range cases {
		var got []key
		for {
			n := conns[i].note()
			var f framesV2
			if err := json.Unmarshal(n.Result, &f); err != nil || n.Subscription != ids[i] {
				t.Fatalf("frame %s (%v)", n.Result, err)
			}
			if _, single := c.params["bidders"]; single && len(f.Accts) != 2 {
				t.Fatalf("frame of a two-account subscription without accts: %s", n.Result)
			}
			if f.Batch == t2 {
				break
			}
			got = append(got, key{f.Book, f.Batch})
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Fatalf("%v replayed %v, want %v", c.params, got, c.want)
		}
	}
}

// TestSubsSinceAcrossRestart: the replay buffer and the receipts ring
// survive a restart. A since from before it replays on every delta channel
// exactly the notifications sent live before it, byte for byte, then the
// live ones; a receipt channel's since replays the receipts attested after
// it, as the confirmed listing has them.
func TestSubsSinceAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	inDir := func(c *node.Config) { c.DataDir = dir }
	channels := []string{"svc_orderbook", "svc_orders", "svc_orders_v2", "svc_candles", "svc_withdrawals", "svc_transfers"}
	after := map[string][]string{} // channel → results sent live after the first tick
	var t1, t2, rcptSince int64
	var rcpts []common.Hash // attested after rcptSince
	t.Run("before restart", func(t *testing.T) {
		tn := startNode(t, inDir)
		w := tn.dialSubs(t)
		chOf := map[string]string{}
		for i, ch := range channels {
			chOf[w.sub(i, ch, map[string]any{})] = ch
		}
		heads := w.sub(len(channels), "newHeads")
		alice, bob := tn.sender(t, 0), tn.sender(t, 1)
		rcptSince = tn.clock.NowMicros() // the first orders' attestation time
		for round := range 2 {
			tn.cross(t, alice, bob, wethBook, eth(1), eth(3000+int64(round)))
			tn.tick(t)
			for _, n := range w.until(heads) {
				if round == 1 {
					after[chOf[n.Subscription]] = append(after[chOf[n.Subscription]], string(n.Result))
				}
			}
			t1, t2 = t2, tn.clock.NowMicros()
		}
		if len(after["svc_orderbook"]) == 0 || len(after["svc_candles"]) == 0 {
			t.Fatalf("the second tick sent no svc_orderbook or svc_candles notification: %v", after)
		}
		var nonce uint64
		tn.sendTransfers(t, 2, 3, 1, &nonce) // attested last: every record before it is attested
		rcpts = tn.walk(t, "svc_listConfirmedReceipts", map[string]any{"since": rcptSince}, 100, nil)
	})
	if t.Failed() {
		return
	}
	tn := startNode(t, inDir)
	if tn.node.LastTickUs() != t2 {
		t.Fatalf("the node did not reopen its data: last tick %d, want %d", tn.node.LastTickUs(), t2)
	}
	tn.clock.Advance(t2 - tn.clock.NowMicros()) // the clock starts over: on to the last tick
	w := tn.dialSubs(t)
	heads := w.sub(0, "newHeads")
	confirmed := w.sub(1, "svc_confirmedReceipts", map[string]any{"since": rcptSince})
	idOf := map[string]string{}
	for i, ch := range channels {
		idOf[ch] = w.sub(2+i, ch, map[string]any{"since": t1})
	}
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	alice.nonce, bob.nonce = 2, 2
	tn.cross(t, alice, bob, wethBook, eth(1), eth(3002))
	tn.tick(t)
	notes := w.until(heads)
	for _, ch := range channels {
		var got []string
		for _, n := range of(notes, idOf[ch]) {
			got = append(got, string(n.Result))
		}
		if len(got) < len(after[ch]) || fmt.Sprint(got[:len(after[ch])]) != fmt.Sprint(after[ch]) {
			t.Fatalf("%s since %d after the restart replayed %v, want first %v", ch, t1, got, after[ch])
		}
		live := got[len(after[ch]):]
		if (ch == "svc_orderbook" || ch == "svc_candles") && len(live) == 0 {
			t.Fatalf("%s: nothing live after the replay", ch)
		}
		for _, r := range live {
			if !strings.Contains(r, fmt.Sprint(t2+intervalUs)) {
				t.Fatalf("%s: live notification %s is not the new tick's", ch, r)
			}
		}
	}
	var got []common.Hash
	for _, n := range of(notes, confirmed) {
		var r struct {
			Hash common.Hash `json:"transactionHash"`
		}
		if err := json.Unmarshal(n.Result, &r); err != nil {
			t.Fatalf("receipt %s: %v", n.Result, err)
		}
		got = append(got, r.Hash)
	}
	if len(got) < len(rcpts) || fmt.Sprint(got[:len(rcpts)]) != fmt.Sprint(rcpts) {
		t.Fatalf("svc_confirmedReceipts since %d after the restart replayed %v, want first %v", rcptSince, got, rcpts)
	}
}

// TestSubsInvalidParams: every malformed subscription the spec lists is
// answered -32602, and the connection keeps working.
func TestSubsInvalidParams(t *testing.T) {
	tn := startNode(t)
	c := tn.dialWS(t)
	var bidders65 []common.Address
	for i := range 65 {
		bidders65 = append(bidders65, common.BigToAddress(big.NewInt(int64(i+1))))
	}
	topic := common.Hash{1}
	for _, tc := range []struct {
		name   string
		params []any
		data   string
	}{
		{"unknown type", []any{"svc_nope", map[string]any{}}, "unknown subscription type"},
		{"type not a string", []any{42, map[string]any{}}, ""},
		{"65 bidders", []any{"svc_orders_v2", map[string]any{"bidders": bidders65}}, "bidders: want an array of 1 to 64"},
		{"empty bidders", []any{"svc_orders_v2", map[string]any{"bidders": []common.Address{}}}, "bidders"},
		{"duplicate bidders", []any{"svc_orders_v2", map[string]any{"bidders": []common.Address{devAddr(0), devAddr(0)}}}, "distinct"},
		{"bidder and bidders", []any{"svc_orders_v2", map[string]any{"bidder": devAddr(0), "bidders": []common.Address{devAddr(1)}}}, "mutually exclusive"},
		{"bidders outside v2", []any{"svc_orders", map[string]any{"bidders": []common.Address{devAddr(1)}}}, "bidders"},
		{"positions without account", []any{"svc_positions", map[string]any{}}, "account: required"},
		{"positions without params", []any{"svc_positions"}, "account: required"},
		{"triggers without account", []any{"svc_triggers", map[string]any{"orderbook_ids": []common.Hash{wethBook}}}, "account: required"},
		{"logs with 5 topics", []any{"logs", map[string]any{"topics": []any{topic, nil, topic, nil, topic}}}, "topics"},
		{"accountReceipts without address", []any{"svc_accountReceipts", map[string]any{}}, "address: required"},
		{"bad bidder", []any{"svc_orders", map[string]any{"bidder": "0x12"}}, "bidder"},
		{"since_book without since", []any{"svc_orders_v2", map[string]any{"since_book": wethBook}}, "since_book"},
		{"negative since", []any{"svc_candles", map[string]any{"since": -1}}, "since"},
		{"params not an object", []any{"svc_orders", []any{1}}, "object"},
		{"pastPerfectTime without time", []any{"svc_pastPerfectTime"}, "svc_pastPerfectTime"},
	} {
		mustRefuseSubscription(t, c, tc.name, tc.params, tc.data)
	}
	// 64 distinct bidders is the limit, not beyond it.
	_, sub := tn.ethSubscribe(t, c, "svc_orders_v2", map[string]any{"bidders": bidders65[:64]})
	sub.Unsubscribe()
	var id string
	if err := c.CallContext(context.Background(), &id, "eth_chainId"); err != nil || id != "0x50d" {
		t.Fatalf("connection after the refusals: %q %v", id, err)
	}
}

func asRPCError(err error, re *gethrpc.Error) bool { return errors.As(err, re) }

// TestSubsPermessageDeflate: a client offering permessage-deflate gets it
// (Sec-WebSocket-Extensions in the 101) and exchanges compressed answers
// and notifications correctly, large ones included.
func TestSubsPermessageDeflate(t *testing.T) {
	tn := startNode(t)
	d := websocket.Dialer{EnableCompression: true, HandshakeTimeout: subsWait}
	conn, resp, err := d.Dial(tn.ws, http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("101 without permessage-deflate: %q", ext)
	}
	w := &sconn{wsRaw: &wsRaw{t: t, conn: conn}}
	obID := w.sub(1, "svc_orderbook", map[string]any{"orderbook_ids": []common.Hash{wethBook}})
	cdID := w.sub(2, "svc_candles", map[string]any{})
	w.chainID(3)
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	var batch [][]byte
	for i := range 64 {
		batch = append(batch, tn.submit(t, wethBook, big.NewInt(1e15), new(big.Int).Mul(big.NewInt(int64(1000+i)), big.NewInt(1e16)), 0, 0, 0))
	}
	alice.mustSend(t, pack(t, "submitBatch", batch))
	tn.cross(t, alice, bob, wethBook, eth(1), eth(3000))
	tn.tick(t)
	var ob struct {
		Book common.Hash                `json:"orderbook_id"`
		Buys map[string]json.RawMessage `json:"buys"`
	}
	n := w.note()
	if err := json.Unmarshal(n.Result, &ob); err != nil || n.Subscription != obID || ob.Book != wethBook || len(ob.Buys) != 64 {
		t.Fatalf("compressed orderbook notification: %d buys (%v)", len(ob.Buys), err)
	}
	var cd struct {
		Price *hexutil.Big `json:"price"`
	}
	n = w.note()
	if err := json.Unmarshal(n.Result, &cd); err != nil || n.Subscription != cdID || cd.Price.ToInt().Cmp(eth(3000)) != 0 {
		t.Fatalf("compressed candle %s (%v)", n.Result, err)
	}
	w.call(4, "eth_getBalance", alice.addr(), "latest")
	if m := w.answer(4); hexInt(t, m["result"]).Sign() <= 0 {
		t.Fatalf("compressed answer %v", m)
	}
}

// TestSubsSlowReaderClosed: a subscriber that stops reading while deep
// books tick is closed with -32022 once its connection's backlog passes
// OutboundMax; the close comes after the delivered notifications, the
// connection stays usable, and since = resume_since replays the rest.
func TestSubsSlowReaderClosed(t *testing.T) {
	const backlog, rcvBuf, mss = 64 << 10, 32 << 10, 1024
	tn := startNodeSrv(t, func(c *server.Config) { c.OutboundMax = backlog })
	alice, bob, carol := tn.sender(t, 0), tn.sender(t, 1), tn.sender(t, 2)
	price := func(cents int) *big.Int { return new(big.Int).Mul(big.NewInt(int64(cents)), big.NewInt(1e16)) }
	lot := big.NewInt(1e15)
	// 100 buy levels (alice) and 100 sell levels (bob): the most a tick
	// publishes per side.
	for _, side := range []struct {
		s     *obSender
		size  *big.Int
		cents int
	}{{alice, lot, 100_000}, {bob, new(big.Int).Neg(lot), 300_000}} {
		for start := 0; start < 100; start += 50 {
			var batch [][]byte
			for i := start; i < start+50; i++ {
				batch = append(batch, tn.submit(t, wethBook, side.size, price(side.cents+i), 0, 0, 0))
			}
			side.s.mustSend(t, pack(t, "submitBatch", batch))
		}
	}
	tn.tick(t)

	// A small receive buffer and MSS, set before the SYN: the client's
	// kernel holds little, and the server's send buffer, which Linux sizes
	// from its congestion window in segments of the peer's MSS, stays
	// small too, so the backlog passes OutboundMax after a few ticks.
	d := websocket.Dialer{HandshakeTimeout: subsWait,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			nd := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
				var serr error
				err := rc.Control(func(fd uintptr) {
					if serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvBuf); serr == nil {
						serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, mss)
					}
				})
				if err != nil {
					return err
				}
				return serr
			}}
			return nd.DialContext(ctx, network, addr)
		}}
	conn, _, err := d.Dial(tn.ws, http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	w := &sconn{wsRaw: &wsRaw{t: t, conn: conn}}
	id := w.sub(1, "svc_orderbook", map[string]any{"orderbook_ids": []common.Hash{wethBook}})
	closes := tn.hub.Stats().Closes

	// Stop reading; tick (each tick moves the book by one more order)
	// until the hub gives up on the subscription.
	var ticks []int64
	deadline := time.Now().Add(8 * time.Second)
	for tn.hub.Stats().Closes == closes {
		if time.Now().After(deadline) {
			t.Fatalf("no -32022 after %d ticks", len(ticks))
		}
		carol.mustSend(t, tn.submit(t, wethBook, lot, price(50_000+len(ticks)), 0, 0, 0))
		tn.tick(t)
		ticks = append(ticks, tn.clock.NowMicros())
	}
	t.Logf("closed after %d ticks", len(ticks))
	start := time.Now()
	defer func() { t.Logf("drained in %v", time.Since(start)) }()

	// Read it all now: the delivered snapshots, in tick order, then the close.
	var delivered []int64
	var closed notification
	for closed.Error == nil {
		n := w.note()
		if n.Subscription != id {
			t.Fatalf("notification of %s", n.Subscription)
		}
		if n.Error != nil {
			closed = n
			break
		}
		var s struct {
			Ts int64 `json:"timestamp"`
		}
		if err := json.Unmarshal(n.Result, &s); err != nil {
			t.Fatal(err)
		}
		delivered = append(delivered, s.Ts)
	}
	if len(delivered) == 0 || len(delivered) >= len(ticks) {
		t.Fatalf("%d of %d ticks delivered before the close", len(delivered), len(ticks))
	}
	for i, ts := range delivered {
		if ts != ticks[i] {
			t.Fatalf("delivered tick %d is %d, want %d (no gap)", i, ts, ticks[i])
		}
	}
	e := closed.Error
	if e.Code != -32022 || e.Message != "subscriber did not accept a notification in time" || string(e.Data["resumable"]) != "true" {
		t.Fatalf("close %+v", e)
	}
	var resumeSince int64
	if err := json.Unmarshal(e.Data["resume_since"], &resumeSince); err != nil || resumeSince != delivered[len(delivered)-1] {
		t.Fatalf("resume_since %s, want the last delivered tick %d", e.Data["resume_since"], delivered[len(delivered)-1])
	}
	// The connection is still open: a plain call and an unsubscribe of the
	// closed id are answered.
	w.chainID(2)
	w.call(3, "eth_unsubscribe", id)
	if m := w.answer(3); string(m["result"]) != "false" {
		t.Fatalf("unsubscribe of the closed subscription: %v", m)
	}
	// Resume: every tick after resume_since, in order, then live.
	rid := w.sub(4, "svc_orderbook", map[string]any{"orderbook_ids": []common.Hash{wethBook}, "since": resumeSince})
	carol.mustSend(t, tn.submit(t, wethBook, lot, price(50_000+len(ticks)), 0, 0, 0))
	tn.tick(t)
	ticks = append(ticks, tn.clock.NowMicros())
	for _, want := range ticks[len(delivered):] {
		n := w.note()
		var s struct {
			Ts   int64                      `json:"timestamp"`
			Buys map[string]json.RawMessage `json:"buys"`
		}
		if err := json.Unmarshal(n.Result, &s); err != nil || n.Subscription != rid || s.Ts != want || len(s.Buys) != 100 {
			t.Fatalf("resumed notification %s at %d with %d buys, want tick %d (%v)", n.Subscription, s.Ts, len(s.Buys), want, err)
		}
	}
}

// mustRefuseSubscription subscribes with params and fails the test unless
// the node refuses with -32602 and data mentioning data.
func mustRefuseSubscription(t *testing.T, c *gethrpc.Client, name string, params []any, data string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), subsWait)
	sub, err := c.EthSubscribe(ctx, make(chan json.RawMessage), params...)
	cancel()
	if err == nil {
		sub.Unsubscribe()
		t.Fatalf("%s: subscription accepted", name)
	}
	var re gethrpc.Error
	if !asRPCError(err, &re) || re.ErrorCode() != -32602 {
		t.Fatalf("%s: %v, want -32602", name, err)
	}
	if d, _ := errorData(err).(string); !strings.Contains(d, data) {
		t.Fatalf("%s: data %q, want it to mention %q", name, d, data)
	}
}
