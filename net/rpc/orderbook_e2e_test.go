package rpc_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// The orderbook through the whole node, driven by go-ethereum: calls
// encoded with its abi package, signed with dev keys, sent with ethclient,
// the auction ticked with admin_advanceTime on the manual clock.

const intervalUs = 500_000

var (
	orderbookAddr = common.Address(core.OrderbookAddress)
	wethBook      = common.Hash(node.DevMarkets()[0].ID)
	wbtcBook      = common.Hash(node.DevMarkets()[1].ID)
	weth          = common.Address(node.DevWETH)
	native        = common.Address(core.NativeToken)
	e18           = big.NewInt(1e18)
)

func eth(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), e18) }

// obSender sends one dev account's orderbook transactions, tracking its nonce.
type obSender struct {
	tn    *testNode
	key   *ecdsa.PrivateKey
	nonce uint64
}

func (tn *testNode) sender(t *testing.T, i int) *obSender {
	return &obSender{tn: tn, key: node.DevKey(i)}
}

func (s *obSender) addr() common.Address { return crypto.PubkeyToAddress(s.key.PublicKey) }

// gasPrice is the fee cap of every orderbook transaction: the base fee
// (1 gwei), no tip, so the effective price is exactly 1 gwei.
var gasPrice = gwei

// send signs and sends calldata to the orderbook; on success the nonce
// advances and the receipt is awaited.
func (s *obSender) send(t *testing.T, data []byte) (*types.Receipt, error) {
	t.Helper()
	return s.sendValue(t, data, new(big.Int))
}

// sign signs calldata to the orderbook at the sender's next nonce, with gas
// (core.TxGas: eth_estimateGas's answer) at 1 gwei.
func (s *obSender) sign(t *testing.T, data []byte, value *big.Int, gas uint64) *types.Transaction {
	t.Helper()
	tx, err := types.SignNewTx(s.key, types.LatestSignerForChainID(big.NewInt(chainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chainID), Nonce: s.nonce, GasTipCap: new(big.Int), GasFeeCap: gasPrice, Gas: gas,
		To: &orderbookAddr, Data: data, Value: value,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

func (s *obSender) sendValue(t *testing.T, data []byte, value *big.Int) (*types.Receipt, error) {
	t.Helper()
	tx := s.sign(t, data, value, core.TxGas)
	if err := s.tn.eth.SendTransaction(context.Background(), tx); err != nil {
		return nil, err
	}
	s.nonce++
	return s.tn.waitReceipt(tx.Hash()), nil
}

func (s *obSender) mustSend(t *testing.T, data []byte) *types.Receipt {
	t.Helper()
	r, err := s.send(t, data)
	if err != nil {
		t.Fatalf("orderbook call refused: %v (%v)", err, errorData(err))
	}
	if r.Status != 1 || r.BlockNumber != nil {
		t.Fatalf("admitted intent's receipt: status %d block %v, want 1 and null", r.Status, r.BlockNumber)
	}
	return r
}

func pack(t *testing.T, method string, args ...any) []byte {
	t.Helper()
	data, err := orderbookABI.Pack(method, args...)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// nextDeadline is the first tick after the node's now (the manual clock
// plus the offset evm_increaseTime adds).
func (tn *testNode) nextDeadline() *big.Int {
	now := tn.node.Clock().NowMicros()
	return big.NewInt((now/intervalUs + 1) * intervalUs)
}

func (tn *testNode) submit(t *testing.T, book common.Hash, size, price *big.Int, typ uint8, ttl int64, flags uint8) []byte {
	return pack(t, "submitOrder", book, size, price, typ, tn.nextDeadline(), big.NewInt(ttl), flags)
}

// tick advances the manual clock by one interval; the answer comes once the
// tick is durable.
func (tn *testNode) tick(t *testing.T) {
	t.Helper()
	if err := tn.admin.CallContext(context.Background(), nil, "admin_advanceTime", intervalUs); err != nil {
		t.Fatal(err)
	}
}

func orderID(signer common.Address, nonce uint64, seq uint32) common.Hash {
	args := abi.Arguments{{Type: mustType("address")}, {Type: mustType("uint64")}, {Type: mustType("uint32")}}
	enc, err := args.Pack(signer, nonce, seq)
	if err != nil {
		panic(err)
	}
	return crypto.Keccak256Hash(enc)
}

func mustType(s string) abi.Type {
	ty, err := abi.NewType(s, "", nil)
	if err != nil {
		panic(err)
	}
	return ty
}

// gasCost is what an orderbook transaction's gas costs at 1 gwei.
func gasCost(r *types.Receipt) *big.Int {
	return new(big.Int).Mul(new(big.Int).SetUint64(r.GasUsed), gasPrice)
}

// TestOrderbookCrossingOrdersSettle: two dev accounts cross on WETH/USD;
// both receipts land in the tick, balances move by exactly the cleared
// amounts minus fees, and the read methods and logs show it.
func TestOrderbookCrossingOrdersSettle(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	aliceNative0, _ := tn.eth.BalanceAt(ctx, alice.addr(), nil)
	bobNative0, _ := tn.eth.BalanceAt(ctx, bob.addr(), nil)

	buy := alice.mustSend(t, tn.submit(t, wethBook, eth(2), eth(3000), 0, 0, 0))
	sell := bob.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(2990), 0, 0, 0))
	// Alice's buy locks 2 × 3000 plus the larger fee (0.03 %) on it.
	locked := new(big.Int).Add(eth(6000), new(big.Int).Div(new(big.Int).Mul(eth(6000), big.NewInt(3)), big.NewInt(10_000)))
	if w, _ := tn.eth.BalanceAt(ctx, alice.addr(), nil); new(big.Int).Sub(aliceNative0, w).Cmp(new(big.Int).Add(locked, gasCost(buy))) != 0 {
		t.Fatalf("withdrawable after a resting buy: spent %v, want lock %v + gas", new(big.Int).Sub(aliceNative0, w), locked)
	}

	tn.tick(t)
	// Bounds: matched limit buy 3000, matched limit sell 2990, Alice's unmatched
	// remainder at 3000 is the best limit buy left → [max(2990, 3000), 3000] = 3000.
	price := eth(3000)
	quote := new(big.Int).Set(price) // 1 WETH
	fee := new(big.Int).Div(new(big.Int).Mul(quote, big.NewInt(3)), big.NewInt(10_000))
	for _, h := range []common.Hash{buy.TxHash, sell.TxHash} {
		r, err := tn.eth.TransactionReceipt(ctx, h)
		if err != nil || r.BlockNumber == nil || r.BlockNumber.Int64() != tn.clock.NowMicros() || r.Status != 1 {
			t.Fatalf("receipt after the tick: %+v %v", r, err)
		}
	}
	rb, _ := tn.eth.TransactionReceipt(ctx, buy.TxHash)
	rs, _ := tn.eth.TransactionReceipt(ctx, sell.TxHash)
	if rb.BlockHash != rs.BlockHash || rb.BlockHash == (common.Hash{}) {
		t.Fatalf("block hashes %s %s: both intents landed in one tick", rb.BlockHash, rs.BlockHash)
	}

	// Bob sold 1 WETH for 3000 minus the taker fee and paid his gas.
	bobNative, _ := tn.eth.BalanceAt(ctx, bob.addr(), nil)
	wantBob := new(big.Int).Sub(new(big.Int).Add(bobNative0, quote), new(big.Int).Add(fee, gasCost(sell)))
	if bobNative.Cmp(wantBob) != 0 {
		t.Fatalf("bob native %v, want %v", bobNative, wantBob)
	}
	if b := callView(t, tn, "balanceOf", weth, bob.addr()); b.Cmp(eth(99)) != 0 {
		t.Fatalf("bob WETH %v, want 99", b)
	}
	// Alice holds 101 WETH; her cash paid 3000 + fee; 1 WETH of her buy
	// still rests, locking 3000 + its fee reservation.
	if b := callView(t, tn, "balanceOf", weth, alice.addr()); b.Cmp(eth(101)) != 0 {
		t.Fatalf("alice WETH %v, want 101", b)
	}
	cash := callView(t, tn, "balanceOf", native, alice.addr())
	wantCash := new(big.Int).Sub(aliceNative0, new(big.Int).Add(new(big.Int).Add(quote, fee), gasCost(buy)))
	if cash.Cmp(wantCash) != 0 {
		t.Fatalf("alice cash %v, want %v", cash, wantCash)
	}
	rest := new(big.Int).Add(eth(3000), new(big.Int).Div(new(big.Int).Mul(eth(3000), big.NewInt(3)), big.NewInt(10_000)))
	if w := callView(t, tn, "withdrawableBalance", native, alice.addr()); new(big.Int).Sub(cash, w).Cmp(rest) != 0 {
		t.Fatalf("alice locked %v, want %v", new(big.Int).Sub(cash, w), rest)
	}

	var book struct {
		Buys  map[string]struct{ Volume hexutil.Big } `json:"buys"`
		Sells map[string]struct{ Volume hexutil.Big } `json:"sells"`
		Price hexutil.Big                             `json:"clearing_price"`
	}
	if err := json.Unmarshal(tn.rawCall("ob_getOrderbook", wethBook, 10), &book); err != nil {
		t.Fatal(err)
	}
	if lv, ok := book.Buys[eth(3000).String()]; len(book.Sells) != 0 || len(book.Buys) != 1 || !ok || lv.Volume.ToInt().Cmp(e18) != 0 || book.Price.ToInt().Cmp(price) != 0 {
		t.Fatalf("orderbook %s", tn.rawCall("ob_getOrderbook", wethBook, 10))
	}
	var orders struct {
		Orders []struct {
			ID     common.Hash `json:"order_id"`
			Status string      `json:"status"`
		} `json:"orders"`
	}
	if err := json.Unmarshal(tn.rawCall("ob_getOrders", bob.addr(), map[string]any{"orderbook_id": wethBook}), &orders); err != nil {
		t.Fatal(err)
	}
	if len(orders.Orders) != 1 || orders.Orders[0].ID != orderID(bob.addr(), 0, 0) || orders.Orders[0].Status != "filled" {
		t.Fatalf("bob's orders %+v", orders)
	}

	var markets []struct {
		ID    common.Hash  `json:"id"`
		Last  *hexutil.Big `json:"last_clearing_price"`
		Vol   *hexutil.Big `json:"volume_24h"`
		Kind  string       `json:"market_type"`
		Inter int64        `json:"auction_interval"`
	}
	if err := json.Unmarshal(tn.rawCall("ob_getMarkets"), &markets); err != nil || len(markets) != 2 || markets[0].ID != wethBook ||
		markets[0].Last.ToInt().Cmp(price) != 0 || markets[0].Vol.ToInt().Cmp(e18) != 0 || markets[0].Kind != "spot" || markets[0].Inter != intervalUs {
		t.Fatalf("markets %s (%v)", tn.rawCall("ob_getMarkets"), err)
	}
	var candles []struct {
		Close  *hexutil.Big `json:"close"`
		Volume *hexutil.Big `json:"volume"`
	}
	if err := json.Unmarshal(tn.rawCall("ob_getCandles", wethBook, map[string]any{"resolution": "1m", "from_ts": 0}), &candles); err != nil ||
		len(candles) != 1 || candles[0].Close.ToInt().Cmp(price) != 0 || candles[0].Volume.ToInt().Cmp(e18) != 0 {
		t.Fatalf("candles %s (%v)", tn.rawCall("ob_getCandles", wethBook, map[string]any{"resolution": "1m", "from_ts": 0}), err)
	}
	var positions struct {
		Positions []struct {
			Book    common.Hash  `json:"orderbook_id"`
			Balance *hexutil.Big `json:"balance"`
		} `json:"positions"`
	}
	if err := json.Unmarshal(tn.rawCall("ob_getPositions", bob.addr()), &positions); err != nil || len(positions.Positions) == 0 ||
		positions.Positions[0].Book != wethBook || positions.Positions[0].Balance.ToInt().Cmp(eth(99)) != 0 {
		t.Fatalf("positions %s (%v)", tn.rawCall("ob_getPositions", bob.addr()), err)
	}
	err := tn.rpc.CallContext(ctx, new(json.RawMessage), "ob_getOrderbook", common.Hash{0xde})
	wantRPCError(t, err, -32602, "Invalid params", nil)

	// The tick's logs are found once the tick itself is attested (the
	// order's receipt names the tick as soon as it is durable).
	tn.waitReceipt(rb.BlockHash)
	logs, err := tn.eth.FilterLogs(ctx, ethereum.FilterQuery{Addresses: []common.Address{orderbookAddr},
		Topics: [][]common.Hash{{common.Hash(core.TopicSolutionExecuted)}, {wethBook}}})
	if err != nil || len(logs) != 1 || logs[0].TxHash != rb.BlockHash {
		t.Fatalf("SolutionExecuted logs %+v %v", logs, err)
	}
	fills, err := tn.eth.FilterLogs(ctx, ethereum.FilterQuery{Topics: [][]common.Hash{{common.Hash(core.TopicOrderFilled)}}})
	if err != nil || len(fills) != 2 {
		t.Fatalf("OrderFilled logs %d %v", len(fills), err)
	}
}

// TestOrderbookCancelAndUpdate: a cancel admitted before the tick applies
// before matching; an update reprices a resting order.
func TestOrderbookCancelAndUpdate(t *testing.T) {
	tn := startNode(t)
	alice, bob := tn.sender(t, 2), tn.sender(t, 3)
	alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2000), 0, 0, 0))
	id := orderID(alice.addr(), 0, 0)
	alice.mustSend(t, pack(t, "cancel", wethBook, id, tn.nextDeadline()))
	bob.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(1900), 0, 0, 0))
	tn.tick(t)
	if b := callView(t, tn, "balanceOf", weth, alice.addr()); b.Cmp(eth(100)) != 0 {
		t.Fatalf("a cancelled buy traded: alice WETH %v", b)
	}
	// Bob's sell rests at 1900; reprice it to 2100 and let Alice buy at 2100.
	bobID := orderID(bob.addr(), 0, 0)
	bob.mustSend(t, pack(t, "update", wethBook, bobID, e18, eth(2100), weth, tn.nextDeadline()))
	alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2050), 0, 0, 0))
	tn.tick(t)
	if b := callView(t, tn, "balanceOf", weth, alice.addr()); b.Cmp(eth(100)) != 0 {
		t.Fatalf("a buy at 2050 traded against a sell repriced to 2100: alice WETH %v", b)
	}
	alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(2100), 0, 0, 2 /* IOC */))
	tn.tick(t)
	if b := callView(t, tn, "balanceOf", weth, alice.addr()); b.Cmp(eth(101)) != 0 {
		t.Fatalf("alice WETH after buying at 2100: %v", b)
	}
}

// TestOrderbookRejections provokes every admission reason over the wire:
// code 3, "execution reverted", Error("CLOB validation failed: <reason>"),
// and nothing consumed.
func TestOrderbookRejections(t *testing.T) {
	tn := startNode(t)
	s, other := tn.sender(t, 4), tn.sender(t, 5)
	other.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1000), 0, 0, 0))
	othersOrder := orderID(other.addr(), 0, 0)
	d := tn.nextDeadline()
	now := big.NewInt(tn.clock.NowMicros())
	sub := func(book common.Hash, size, price *big.Int, typ uint8, deadline *big.Int, flags uint8) []byte {
		return pack(t, "submitOrder", book, size, price, typ, deadline, new(big.Int), flags)
	}
	good := sub(wethBook, eth(1), eth(1000), 0, d, 0)
	inner := func(n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = good
		}
		return out
	}
	fFrom := func(s *obSender, reason string, data []byte, value *big.Int) {
		t.Helper()
		_, err := s.sendValue(t, data, value)
		wantRPCError(t, err, 3, "execution reverted", nil)
		got, uerr := abi.UnpackRevert(common.FromHex(errorData(err).(string)))
		if uerr != nil || got != "CLOB validation failed: "+reason {
			t.Fatalf("revert %q (%v), want %q", got, uerr, "CLOB validation failed: "+reason)
		}
	}
	f := func(reason string, data []byte) { t.Helper(); fFrom(s, reason, data, new(big.Int)) }
	f("unknown orderbook", sub(common.Hash{9}, eth(1), eth(1000), 0, d, 0))
	f("Deadline is not aligned to auction interval", sub(wethBook, eth(1), eth(1000), 0, new(big.Int).Add(d, big.NewInt(1)), 0))
	f("deadline already executed", sub(wethBook, eth(1), eth(1000), 0, new(big.Int).Sub(d, big.NewInt(intervalUs)), 0))
	f("deadline more than 100 years ahead", sub(wethBook, eth(1), eth(1000), 0, new(big.Int).Add(now, big.NewInt(100*365*86_400*1_000_000+intervalUs)), 0))
	f("unknown flag bits", sub(wethBook, eth(1), eth(1000), 0, d, 0x08))
	f("IOC and POST_ONLY cannot be combined", sub(wethBook, eth(1), eth(1000), 0, d, 0x06))
	f("market orders must be IOC", sub(wethBook, eth(1), eth(1000), 1, d, 0))
	f("market orders cannot be POST_ONLY", sub(wethBook, eth(1), eth(1000), 1, d, 0x04))
	f("REDUCE_ONLY is only allowed on perpetual markets", sub(wethBook, eth(1), eth(1000), 0, d, 0x01))
	f("size is not a multiple of the lot size", sub(wethBook, big.NewInt(1), eth(1000), 0, d, 0))
	f("price is not a multiple of the tick precision", sub(wethBook, eth(1), big.NewInt(1), 0, d, 0))
	f("size is zero", sub(wethBook, new(big.Int), eth(1000), 0, d, 0))
	f("price is zero", sub(wethBook, eth(1), new(big.Int), 0, d, 0))
	f("insufficient balance", sub(wethBook, eth(1000), eth(1000), 0, d, 0))
	f("insufficient balance", sub(wethBook, eth(-1000), eth(1000), 0, d, 0))
	f("unknown order", pack(t, "cancel", wethBook, common.Hash{1}, d))
	f("order owned by another account", pack(t, "cancel", wethBook, othersOrder, d))
	f("unknown order", pack(t, "cancel", wbtcBook, othersOrder, d))
	f("transfer amount is zero", pack(t, "transfer", weth, other.addr(), new(big.Int), d))
	f("insufficient balance", pack(t, "transfer", weth, other.addr(), eth(101), d))
	f("batch must carry 1 to 64 intents", pack(t, "submitBatch", [][]byte{}))
	f("batch must carry 1 to 64 intents", pack(t, "submitBatch", inner(65)))
	f("nested batches are not allowed", pack(t, "submitBatch", [][]byte{good, pack(t, "submitBatch", inner(1))}))
	f("batch intents must share one deadline", pack(t, "submitBatch", [][]byte{good, sub(wethBook, eth(1), eth(1000), 0, new(big.Int).Add(d, big.NewInt(intervalUs)), 0)}))
	// Atomicity: the third intent fails, so neither of the first two lands.
	f("insufficient balance", pack(t, "submitBatch", [][]byte{good, good, sub(wethBook, eth(-500), eth(1000), 0, d, 0)}))
	f("invalid delegation signature", pack(t, "delegated", other.addr(), uint64(1<<62), make([]byte, 65), good))
	f("unknown function selector", []byte{1, 2, 3, 4})
	fFrom(s, "transaction value must be 0", good, big.NewInt(1))
	if s.nonce != 0 {
		t.Fatalf("refused intents consumed nonces: %d", s.nonce)
	}
	if n, _ := tn.eth.NonceAt(context.Background(), s.addr(), nil); n != 0 {
		t.Fatalf("refused intents consumed the on-ledger nonce: %d", n)
	}
	if w := callView(t, tn, "withdrawableBalance", native, s.addr()); w.Cmp(node.DevBalanceWei.ToBig()) != 0 {
		t.Fatalf("refused intents locked or spent funds: withdrawable %v", w)
	}
}
