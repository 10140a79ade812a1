package durability

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/bench/proc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// noteWait bounds every wait for a notification or a receipt.
const noteWait = 10 * time.Second

var wethBook = common.Hash(node.DevMarkets()[0].ID) // packOrder's book

// trader is a dev account whose nonce the test tracks across restarts
// (every acknowledged transaction is durable).
type trader struct {
	key   *ecdsa.PrivateKey
	nonce uint64
}

func newTrader(t *testing.T, i int) *trader {
	t.Helper()
	return &trader{key: node.DevKey(i)}
}

// sign signs the trader's next transaction.
func (tr *trader) sign(t *testing.T, to common.Address, value *big.Int, data []byte) *types.Transaction {
	t.Helper()
	tx, err := types.SignNewTx(tr.key, types.LatestSignerForChainID(big.NewInt(chainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chainID), Nonce: tr.nonce, GasTipCap: new(big.Int), GasFeeCap: new(big.Int).Mul(gwei, big.NewInt(2)),
		Gas: 21_000, To: &to, Value: value, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// sender is the trader as a load sender of transfers.
func (tr *trader) sender() *sender {
	return &sender{key: tr.key, addr: crypto.PubkeyToAddress(tr.key.PublicKey)}
}

// send signs and sends a transaction; it returns once acknowledged.
func (tr *trader) send(t *testing.T, c *ethclient.Client, to common.Address, value *big.Int, data []byte) common.Hash {
	t.Helper()
	tx := tr.sign(t, to, value, data)
	if err := c.SendTransaction(context.Background(), tx); err != nil {
		t.Fatalf("send: %v", err)
	}
	tr.nonce++
	return tx.Hash()
}

// cross sends a buy and a sell of 0.001 WETH at 2000 USD (IOC, packOrder)
// that meet in the next auction tick, unless one passes between them. It
// returns the buy's hash and the time of the tick the sell landed in: the
// last of the ticks they make.
func cross(t *testing.T, c *rpc.Client, buyer, seller *trader) (common.Hash, int64) {
	t.Helper()
	eth := ethclient.NewClient(c)
	deadline := big.NewInt((time.Now().UnixMicro()/500_000 + 3) * 500_000)
	buy := buyer.send(t, eth, orderbook, new(big.Int), packOrder(big.NewInt(1e15), deadline))
	sell := seller.send(t, eth, orderbook, new(big.Int), packOrder(big.NewInt(-1e15), deadline))
	// An intent's receipt names its tick (blockNumber, µs) once it ran.
	for end := time.Now().Add(noteWait); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		var r *struct {
			Block *hexutil.Big `json:"blockNumber"`
		}
		if err := c.Call(&r, "eth_getTransactionReceipt", sell); err != nil {
			t.Fatal(err)
		}
		if r != nil && r.Block != nil {
			return buy, r.Block.ToInt().Int64()
		}
	}
	t.Fatalf("the sell %s landed in no tick within %v", sell, noteWait)
	return buy, 0
}

// next waits for a subscription's next notification.
func next(t *testing.T, ch <-chan json.RawMessage, sub *rpc.ClientSubscription) json.RawMessage {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case err := <-sub.Err():
		t.Fatalf("subscription ended: %v", err)
	case <-time.After(noteWait):
		t.Fatal("no notification in time")
	}
	return nil
}

func subscribe(t *testing.T, ws *rpc.Client, typ string, params map[string]any) (chan json.RawMessage, *rpc.ClientSubscription) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), noteWait)
	defer cancel()
	ch := make(chan json.RawMessage, 64)
	sub, err := ws.EthSubscribe(ctx, ch, typ, params)
	if err != nil {
		t.Fatalf("eth_subscribe %s %v: %v", typ, params, err)
	}
	return ch, sub
}

// through reads svc_orderbook notifications up to the one of the tick at
// us.
func through(t *testing.T, ch <-chan json.RawMessage, sub *rpc.ClientSubscription, us int64) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for {
		m := next(t, ch, sub)
		out = append(out, m)
		switch got := tickUs(t, m); {
		case got == us:
			return out
		case got > us:
			t.Fatalf("svc_orderbook went from before the tick at %d to %d", us, got)
		}
	}
}

// tickUs reads the tick time of an svc_orderbook notification.
func tickUs(t *testing.T, m json.RawMessage) int64 {
	t.Helper()
	var ob struct {
		Timestamp int64 `json:"timestamp"`
	}
	if err := json.Unmarshal(m, &ob); err != nil || ob.Timestamp == 0 {
		t.Fatalf("svc_orderbook notification without a timestamp: %s (%v)", m, err)
	}
	return ob.Timestamp
}

// receiptHash reads a receipt notification's transaction hash.
func receiptHash(t *testing.T, m json.RawMessage) common.Hash {
	t.Helper()
	var r struct {
		Hash common.Hash `json:"transactionHash"`
	}
	if err := json.Unmarshal(m, &r); err != nil {
		t.Fatalf("receipt %s: %v", m, err)
	}
	return r.Hash
}

// nextTxReceipt is the next receipt of a transaction: the perp markets
// tick every interval, so tick records (from the orderbook itself) come
// between a node's transactions even when no order trades.
func nextTxReceipt(t *testing.T, ch <-chan json.RawMessage, sub *rpc.ClientSubscription) json.RawMessage {
	t.Helper()
	for {
		m := next(t, ch, sub)
		var r struct {
			From common.Address `json:"from"`
		}
		if err := json.Unmarshal(m, &r); err != nil {
			t.Fatalf("receipt %s: %v", m, err)
		}
		if r.From != common.Address(core.OrderbookAddress) {
			return m
		}
	}
}

// waitAttested polls until h's receipt is attested and returns its
// attestation time.
func waitAttested(t *testing.T, c *rpc.Client, h common.Hash) int64 {
	t.Helper()
	for deadline := time.Now().Add(noteWait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var r *struct {
			Meta struct {
				Atts []struct {
					Timestamp int64 `json:"timestamp"`
				} `json:"attestations"`
			} `json:"svc_metadata"`
		}
		if err := c.Call(&r, "eth_getTransactionReceipt", h); err != nil {
			t.Fatal(err)
		}
		if r != nil && len(r.Meta.Atts) > 0 {
			return r.Meta.Atts[0].Timestamp
		}
	}
	t.Fatalf("%s not attested in %v", h, noteWait)
	return 0
}

// confirmedSince lists every receipt attested after sinceUs.
func confirmedSince(t *testing.T, c *rpc.Client, sinceUs int64) []common.Hash {
	t.Helper()
	var out []common.Hash
	pg := map[string]any{"limit": 1000}
	for {
		var p struct {
			Items []struct {
				Hash common.Hash `json:"transactionHash"`
			} `json:"items"`
			Next *string `json:"next_cursor"`
		}
		if err := c.Call(&p, "svc_listConfirmedReceipts", map[string]any{"since": sinceUs, "pagination": pg}); err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Items {
			out = append(out, it.Hash)
		}
		if p.Next == nil {
			return out
		}
		pg["cursor"] = *p.Next
	}
}

// start runs ledgerd with args and dials it over HTTP and WebSocket; the
// test's cleanup kills it and shows its log if the test failed.
func start(t *testing.T, args []string) (n *proc.Ledgerd, c, ws *rpc.Client) {
	t.Helper()
	n, err := proc.Start(ledgerd, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Kill() // nothing when it has stopped already
		if t.Failed() {
			t.Logf("ledgerd log:\n%s", n.Log())
		}
	})
	if c, err = rpc.Dial(n.HTTP); err != nil {
		t.Fatal(err)
	}
	if ws, err = rpc.Dial(n.WS); err != nil {
		t.Fatal(err)
	}
	return n, c, ws
}

// TestSinceAcrossRestart: a client that resubscribes after a restart with
// a since from before it gets exactly the notifications it was sent after
// that since, byte for byte, then the live ones: svc_orderbook from the
// ticks the node stored, svc_confirmedReceipts from its history. Once
// after SIGKILL, once after SIGTERM.
// It takes about 3 s (six auction ticks on the wall clock).
func TestSinceAcrossRestart(t *testing.T) {
	args := []string{"--dev", "--datadir", t.TempDir(), "--admin-token", "test"}
	buyer, seller, payer := newTrader(t, 4), newTrader(t, 5), newTrader(t, 6)
	book := map[string]any{"orderbook_ids": []common.Hash{wethBook}}

	n, c, ws := start(t, args)
	ch, sub := subscribe(t, ws, "svc_orderbook", book)
	var sent []json.RawMessage // every svc_orderbook notification, in order
	var sinceUs, rcptSince int64
	for round := range 4 {
		buy, us := cross(t, c, buyer, seller)
		sent = append(sent, through(t, ch, sub, us)...)
		if round == 1 {
			sinceUs, rcptSince = us, waitAttested(t, c, buy) // resume from the middle
		}
	}
	resumed := slices.IndexFunc(sent, func(m json.RawMessage) bool { return tickUs(t, m) > sinceUs })
	// Records are attested in log order: once this transfer is, all are.
	waitAttested(t, c, payer.send(t, ethclient.NewClient(c), common.Address{0xee}, big.NewInt(1), nil))
	rcpts := confirmedSince(t, c, rcptSince)
	ws.Close()
	c.Close()
	n.Kill()

	for _, how := range []string{"SIGKILL", "SIGTERM"} {
		n, c, ws = start(t, args)
		rch, rsub := subscribe(t, ws, "svc_confirmedReceipts", map[string]any{"since": rcptSince})
		for i, want := range rcpts {
			if got := receiptHash(t, next(t, rch, rsub)); got != want {
				t.Fatalf("after %s: svc_confirmedReceipts since %d replayed %s as receipt %d, want %s", how, rcptSince, got, i, want)
			}
		}
		ch, sub := subscribe(t, ws, "svc_orderbook", map[string]any{"orderbook_ids": book["orderbook_ids"], "since": sinceUs})
		for i, want := range sent[resumed:] {
			if got := next(t, ch, sub); string(got) != string(want) {
				t.Fatalf("after %s: svc_orderbook since %d replayed as notification %d\n%s\nwant\n%s", how, sinceUs, i, got, want)
			}
		}
		buy, us := cross(t, c, buyer, seller)
		live := through(t, ch, sub, us)
		if first, last := tickUs(t, live[0]), tickUs(t, sent[len(sent)-1]); first <= last {
			t.Fatalf("after %s: the notification after the replay is at %d, not after the last one sent (%d)", how, first, last)
		}
		if got := receiptHash(t, nextTxReceipt(t, rch, rsub)); got != buy {
			t.Fatalf("after %s: the receipt after the replay is %s, want the new buy %s", how, got, buy)
		}
		sent = append(sent, live...)
		waitAttested(t, c, payer.send(t, ethclient.NewClient(c), common.Address{0xee}, big.NewInt(1), nil))
		rcpts = confirmedSince(t, c, rcptSince)
		ws.Close()
		c.Close()
		n.Stop() // the next restart is after SIGTERM
	}
}
