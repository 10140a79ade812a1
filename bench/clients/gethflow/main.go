// Command gethflow is the go-ethereum column of the client-compatibility
// matrix: it drives a running node through go-ethereum's default paths and
// prints one line per step,
//
//	STEP <name> ok <milliseconds the step took>
//	STEP <name> fail <one-line message>
//
// in a fixed order: chainId balance nonce transfer wait getTransaction
// receipt logs newHeads svc_orderbook order. Every step runs even when an
// earlier one failed, each under its own timeout and all under one overall
// budget. The exit status is 0 whenever the flow ran; a failing step is a
// finding, not a crash.
//
// Environment: LEDGERD_HTTP (http://127.0.0.1:PORT) and LEDGERD_WS
// (ws://127.0.0.1:PORT).
//
// Transactions go through accounts/abi/bind/v2, the package go-ethereum
// documents as the binding runtime in v1.17 (accounts/abi/bind v1 is marked
// deprecated and now forwards to it). Nothing is set by hand: bind fills the
// nonce (PendingNonceAt), the fees (HeaderByNumber's baseFee,
// SuggestGasTipCap) and the gas (EstimateGas), so a node that go-ethereum's
// decoders or bind's checks refuse fails a step here, on purpose. The one
// exception is the native transfer, see transfer.
package main

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	obabi "github.com/ledgervenue/node/core/clob/abi"
)

// Dev accounts 1, 2 and 3 (indices 0..2) of the standard test mnemonic,
// node.DevKeys in net/node/devnet.go: 10 000 native, 100 WETH, 10 WBTC each.
const (
	dev1Key = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
	dev2Key = "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
	dev3Key = "5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a"
)

var (
	wantChainID = big.NewInt(0x50d)
	orderbook   = common.HexToAddress("0x50d0000000000000000000000000000000000002")
	weth        = common.HexToAddress("0x5000000000000000000000000000000000000001")
	wethUSD     = common.HexToHash("0x01") // the dev WETH/USD orderbook id
	oneEther    = big.NewInt(1e18)         // 1 WETH, and 1 native for the transfer
)

// budget bounds the whole flow; each step also has its own timeout.
const budget = 55 * time.Second

type flow struct {
	root       context.Context
	httpURL    string
	wsURL      string
	client     *ethclient.Client
	dev1, dev2 *ecdsa.PrivateKey
	dev3       common.Address

	transferTx *types.Transaction // set by transfer
	buyTx      *types.Transaction // set by order
}

func main() {
	root, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	f := &flow{
		root:    root,
		httpURL: env("LEDGERD_HTTP", "http://127.0.0.1:8545"),
		wsURL:   env("LEDGERD_WS", "ws://127.0.0.1:8545"),
		dev1:    mustKey(dev1Key),
		dev2:    mustKey(dev2Key),
		dev3:    crypto.PubkeyToAddress(mustKey(dev3Key).PublicKey),
	}
	client, err := ethclient.Dial(f.httpURL) // lazy for HTTP: fails only on a malformed URL
	if err != nil {
		fmt.Fprintln(os.Stderr, "gethflow:", err)
		os.Exit(2)
	}
	defer client.Close()
	f.client = client

	f.step("chainId", 5*time.Second, f.chainID)
	f.step("balance", 5*time.Second, f.balance)
	f.step("nonce", 5*time.Second, f.nonce)
	f.step("transfer", 10*time.Second, f.transfer)
	f.step("wait", 10*time.Second, f.wait)
	f.step("getTransaction", 12*time.Second, f.getTransaction)
	f.step("receipt", 5*time.Second, f.receipt)

	// The subscriptions start before the order so that the ticks it causes
	// are seen; order runs before logs, which looks for its transaction, but
	// its line is printed last, in the matrix's order.
	heads := f.subscribeHeads()
	books := f.subscribeOrderbook()
	orderStart := time.Now()
	orderErr := f.run(15*time.Second, f.order)
	orderTook := time.Since(orderStart)
	f.step("logs", 5*time.Second, f.logs)
	f.step("newHeads", 10*time.Second, heads)
	f.step("svc_orderbook", 10*time.Second, books)
	report("order", orderErr, orderTook)
}

// step runs fn under its own timeout and prints its line.
func (f *flow) step(name string, timeout time.Duration, fn func(context.Context) error) {
	start := time.Now()
	err := f.run(timeout, fn)
	report(name, err, time.Since(start))
}

// run runs fn under timeout (and the overall budget); a panic in fn, e.g.
// in a decoder, is the step's failure, not the flow's.
func (f *flow) run(timeout time.Duration, fn func(context.Context) error) (err error) {
	ctx, cancel := context.WithTimeout(f.root, timeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn(ctx)
}

func report(name string, err error, took time.Duration) {
	if err == nil {
		fmt.Printf("STEP %s ok %d\n", name, took.Milliseconds())
		return
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	fmt.Printf("STEP %s fail %s\n", name, msg)
}

func (f *flow) chainID(ctx context.Context) error {
	id, err := f.client.ChainID(ctx)
	if err != nil {
		return err
	}
	if id.Cmp(wantChainID) != 0 {
		return fmt.Errorf("chain id %d, want %d", id, wantChainID)
	}
	return nil
}

func (f *flow) balance(ctx context.Context) error {
	b, err := f.client.BalanceAt(ctx, address(f.dev1), nil)
	if err != nil {
		return err
	}
	if b.Sign() <= 0 {
		return fmt.Errorf("dev account 1 has balance %s", b)
	}
	return nil
}

func (f *flow) nonce(ctx context.Context) error {
	n, err := f.client.NonceAt(ctx, address(f.dev1), nil)
	if err != nil {
		return fmt.Errorf("NonceAt: %w", err)
	}
	p, err := f.client.PendingNonceAt(ctx, address(f.dev1))
	if err != nil {
		return fmt.Errorf("PendingNonceAt: %w", err)
	}
	if p < n {
		return fmt.Errorf("pending nonce %d below nonce %d", p, n)
	}
	return nil
}

// transactor is bind's keyed transactor for key on the node's chain, with
// nothing but the context set: bind fills nonce, fees and gas.
func (f *flow) transactor(ctx context.Context, key *ecdsa.PrivateKey) (*bind.TransactOpts, error) {
	id, err := f.client.ChainID(ctx)
	if err != nil {
		return nil, err
	}
	opts := bind.NewKeyedTransactor(key, id)
	opts.Context = ctx
	return opts, nil
}

// transfer sends 1 native from dev account 1 to dev account 3 through a
// BoundContract at the recipient. bind's own gas estimate refuses an
// address without code (ErrNoCode) on any chain, Ethereum included, so the
// gas limit comes from go-ethereum's EstimateGas (eth_estimateGas); nonce
// and fees are still bind's defaults. RawTransact with no calldata is
// Transfer without its check that the ABI declares a receive function,
// which an account has no ABI for.
func (f *flow) transfer(ctx context.Context) error {
	opts, err := f.transactor(ctx, f.dev1)
	if err != nil {
		return err
	}
	opts.Value = oneEther
	gas, err := f.client.EstimateGas(ctx, ethereum.CallMsg{From: opts.From, To: &f.dev3, Value: opts.Value})
	if err != nil {
		return fmt.Errorf("EstimateGas: %w", err)
	}
	opts.GasLimit = gas
	to := bind.NewBoundContract(f.dev3, abi.ABI{}, f.client, f.client, f.client)
	tx, err := to.RawTransact(opts, nil)
	if err != nil {
		return err
	}
	f.transferTx = tx
	return nil
}

var errNoTransfer = errors.New("no transaction: transfer failed")

func (f *flow) wait(ctx context.Context) error {
	if f.transferTx == nil {
		return errNoTransfer
	}
	r, err := bind.WaitMined(ctx, f.client, f.transferTx.Hash())
	if err != nil {
		return err
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return fmt.Errorf("receipt status %d", r.Status)
	}
	return nil
}

func (f *flow) getTransaction(ctx context.Context) error {
	if f.transferTx == nil {
		return errNoTransfer
	}
	for {
		tx, pending, err := f.client.TransactionByHash(ctx, f.transferTx.Hash())
		var state string
		switch {
		case err == nil && tx.Hash() != f.transferTx.Hash():
			return fmt.Errorf("got transaction %s", tx.Hash())
		case err == nil && !pending:
			return nil
		case err == nil:
			state = "still pending"
		case errors.Is(err, ethereum.NotFound):
			state = "not found"
		default:
			return err
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return fmt.Errorf("%s: %w", state, err)
		}
	}
}

func (f *flow) receipt(ctx context.Context) error {
	if f.transferTx == nil {
		return errNoTransfer
	}
	r, err := f.client.TransactionReceipt(ctx, f.transferTx.Hash())
	if err != nil {
		return err
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return fmt.Errorf("receipt status %d", r.Status)
	}
	return nil
}

// order submits a limit buy (dev 1) and a limit sell (dev 2) of 1 WETH at
// 2000 USD on WETH/USD with the orderbook's JSON ABI, then waits for the
// buyer's WETH balance to grow by 1 WETH.
func (f *flow) order(ctx context.Context) error {
	ob, err := abi.JSON(strings.NewReader(obabi.OrderbookJSON))
	if err != nil {
		return err
	}
	book := bind.NewBoundContract(orderbook, ob, f.client, f.client, f.client)
	buyer := address(f.dev1)
	before, err := wethBalance(ctx, book, buyer)
	if err != nil {
		return fmt.Errorf("balanceOf: %w", err)
	}
	// Deadlines are µs on the 500 ms auction grid, 1.5 to 2 s ahead; ttl
	// 60 s. Price and size are 18-decimal integers (tick 0.01 USD, lot
	// 0.001 WETH); a negative size sells.
	deadline := big.NewInt((time.Now().UnixMicro()/500_000 + 4) * 500_000)
	ttl := big.NewInt(60_000_000)
	price := new(big.Int).Mul(big.NewInt(2000), oneEther)
	for _, o := range []struct {
		key  *ecdsa.PrivateKey
		size *big.Int
	}{{f.dev1, oneEther}, {f.dev2, new(big.Int).Neg(oneEther)}} {
		opts, err := f.transactor(ctx, o.key)
		if err != nil {
			return err
		}
		tx, err := book.Transact(opts, "submitOrder", wethUSD, o.size, price, uint8(0), deadline, ttl, uint8(0))
		if err != nil {
			return fmt.Errorf("submitOrder from %s: %w", opts.From, err)
		}
		if o.key == f.dev1 {
			f.buyTx = tx
		}
	}
	want := new(big.Int).Add(before, oneEther)
	for {
		now, err := wethBalance(ctx, book, buyer)
		switch {
		case err != nil:
			err = fmt.Errorf("balanceOf: %w", err)
		case now.Cmp(want) >= 0:
			return nil
		default:
			err = fmt.Errorf("buyer's WETH balance %s, want %s", now, want)
		}
		if werr := sleep(ctx, 250*time.Millisecond); werr != nil {
			return fmt.Errorf("%w (%v)", err, werr)
		}
	}
}

func wethBalance(ctx context.Context, book *bind.BoundContract, account common.Address) (*big.Int, error) {
	var out []any
	if err := book.Call(&bind.CallOpts{Context: ctx}, &out, "balanceOf", weth, account); err != nil {
		return nil, err
	}
	return out[0].(*big.Int), nil
}

// logs looks for a log of the buyer's order transaction among the
// orderbook's logs. No FromBlock/ToBlock: on this node they are seconds.
func (f *flow) logs(ctx context.Context) error {
	if f.buyTx == nil {
		return errors.New("no transaction: order failed")
	}
	logs, err := f.client.FilterLogs(ctx, ethereum.FilterQuery{Addresses: []common.Address{orderbook}})
	if err != nil {
		return err
	}
	for _, l := range logs {
		if l.TxHash == f.buyTx.Hash() {
			return nil
		}
	}
	return fmt.Errorf("%d orderbook logs, none of the buy order %s", len(logs), f.buyTx.Hash())
}

// subscribeHeads subscribes to newHeads over WebSocket now and returns the
// step that waits for the first header.
func (f *flow) subscribeHeads() func(context.Context) error {
	ctx, cancel := context.WithTimeout(f.root, 5*time.Second)
	defer cancel()
	ws, err := ethclient.DialContext(ctx, f.wsURL)
	if err != nil {
		return failed(fmt.Errorf("dial %s: %w", f.wsURL, err))
	}
	ch := make(chan *types.Header, 64)
	sub, err := ws.SubscribeNewHead(ctx, ch)
	if err != nil {
		ws.Close()
		return failed(err)
	}
	return firstOf(f, ch, sub, ws.Close, "header")
}

// subscribeOrderbook subscribes to svc_orderbook for WETH/USD now and
// returns the step that waits for the first notification.
func (f *flow) subscribeOrderbook() func(context.Context) error {
	ctx, cancel := context.WithTimeout(f.root, 5*time.Second)
	defer cancel()
	c, err := rpc.DialContext(ctx, f.wsURL)
	if err != nil {
		return failed(fmt.Errorf("dial %s: %w", f.wsURL, err))
	}
	ch := make(chan json.RawMessage, 64)
	sub, err := c.EthSubscribe(ctx, ch, "svc_orderbook",
		map[string]any{"orderbook_ids": []string{wethUSD.Hex()}, "depth": 10})
	if err != nil {
		c.Close()
		return failed(err)
	}
	return firstOf(f, ch, sub, c.Close, "notification")
}

// firstOf is the step that waits for the first value of a subscription,
// then ends it and closes its client.
func firstOf[T any](f *flow, ch <-chan T, sub ethereum.Subscription, closeClient func(), what string) func(context.Context) error {
	return func(ctx context.Context) error {
		defer closeClient()
		defer sub.Unsubscribe()
		select {
		case <-ch:
			return nil
		case err := <-sub.Err():
			return fmt.Errorf("subscription: %w", err)
		case <-ctx.Done():
			return fmt.Errorf("no %s: %w%s", what, ctx.Err(), f.noOrder())
		}
	}
}

// noOrder qualifies a silent subscription: the node publishes a tick only
// when it has work, and without the order step's orders there may be none
// (newHeads hears idle slots too).
func (f *flow) noOrder() string {
	if f.buyTx == nil {
		return " (the order step placed no order)"
	}
	return ""
}

func failed(err error) func(context.Context) error {
	return func(context.Context) error { return err }
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func address(k *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(k.PublicKey) }

func mustKey(hexKey string) *ecdsa.PrivateKey {
	k, err := crypto.HexToECDSA(hexKey)
	if err != nil {
		panic(err)
	}
	return k
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
