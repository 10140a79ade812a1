package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
	"github.com/ledgervenue/node/net/node"
)

// Orders and mm (ledgerd only) trade the WETH/USD dev market around a fixed
// mid of ordersMid price steps (10.00 USD at the 0.01 step: small, so the
// funding below covers many orders), one lot per order.
const (
	ordersMid = 1000
	// ordersDeadlineSlack is how long past a run's end its orders stay
	// valid: near, as a bot's, and bounding --duration for these scenarios
	// (ordersDurationMax).
	ordersDeadlineSlack = 60 * time.Second
	ordersDurationMax   = 8 * time.Minute
	// mmLevels is the price levels per side of a market maker's ladder;
	// its orders rest mmTTL, so the book stays bounded without cancels.
	mmLevels = 4
	mmTTL    = 2 * time.Second
	// mmTakerEvery: every mmTakerEvery-th account is a taker.
	mmTakerEvery = 4
)

// Funding of each order account from the funding dev account (10 000 USD,
// 100 WETH): at most ordersNativeMax USD and ordersBaseMax WETH, and in all
// no more than 9 000 USD and 90 WETH. An account buys and sells in turn, so
// its holdings stay near what it was given.
var (
	ordersNativeMax = new(big.Int).Mul(big.NewInt(50), big.NewInt(1e18))
	ordersBaseMax   = big.NewInt(1e18)
	ordersNativeAll = new(big.Int).Mul(big.NewInt(9000), big.NewInt(1e18))
	ordersBaseAll   = new(big.Int).Mul(big.NewInt(90), big.NewInt(1e18))
)

// orders builds the orders and mm scenarios on senders.
type orders struct {
	*senders
	market   clob.MarketConfig
	mm       bool
	duration time.Duration
	deadline uint64 // of the current run's orders, µs
	checked  bool   // the node serves the market
	base     *big.Int
}

func newOrders(name string, o *options) (scenario, error) {
	if o.duration > ordersDurationMax {
		return nil, fmt.Errorf("--duration %v: the %s scenario's orders must stay valid through a run, so at most %v", o.duration, name, ordersDurationMax)
	}
	accounts := max(o.accounts, 2)
	s := &orders{market: node.DevMarkets()[0], mm: name == "mm", duration: o.duration}
	native := new(big.Int).Div(ordersNativeAll, big.NewInt(int64(accounts)))
	s.base = new(big.Int).Div(ordersBaseAll, big.NewInt(int64(accounts)))
	s.senders = &senders{accounts: accounts, seed: o.seed + "/" + name, funder: o.funder, native: minBig(native, ordersNativeMax),
		tx: s.call, fundMore: s.fundBase, beforeRun: s.beforeRun, settle: 2 * clob.TransferIntervalUs * time.Microsecond}
	s.base = minBig(s.base, ordersBaseMax)
	return s, nil
}

func minBig(a, b *big.Int) *big.Int {
	if a.Cmp(b) < 0 {
		return a
	}
	return b
}

// beforeRun checks (once) that the node serves the market, and sets the
// run's deadline.
func (s *orders) beforeRun(ctx context.Context, t *target) error {
	if !s.checked {
		c, err := t.client(ctx)
		if err != nil {
			return err
		}
		var markets json.RawMessage
		cctx, cancel := context.WithTimeout(ctx, setupTimeout)
		err = c.Client().CallContext(cctx, &markets, "ob_getMarkets")
		cancel()
		if err != nil || !bytes.Contains(markets, []byte(s.market.Name)) {
			return fmt.Errorf("the orders and mm scenarios need ledgerd --dev (its %s market; ob_getMarkets: %v)", s.market.Name, err)
		}
		s.checked = true
	}
	iv := uint64(s.market.IntervalUs)
	s.deadline = uint64(time.Now().Add(s.duration+ordersDeadlineSlack).UnixMicro()) / iv * iv
	return nil
}

// fundBase sends every account s.base WETH through the orderbook's
// transfer call.
func (s *orders) fundBase(ctx context.Context, c *ethclient.Client, dev *ecdsa.PrivateKey, nonce uint64) (common.Hash, error) {
	var last common.Hash
	deadline := uint64(time.Now().Add(ordersDeadlineSlack).UnixMicro()) / clob.TransferIntervalUs * clob.TransferIntervalUs
	for i, a := range s.addrs {
		in := &clob.Intent{Kind: clob.IntentTransfer, Token: s.market.Base, To: clob.Address(a), Deadline: deadline}
		in.Amount.SetFromBig(s.base)
		var err error
		if last, err = s.send(ctx, c, dev, nonce+uint64(i), common.Address(core.OrderbookAddress), new(big.Int), abi.AppendTransfer(nil, in)); err != nil {
			return last, fmt.Errorf("funding %s with %s: %w", a.Hex(), s.market.BaseSymbol, err)
		}
	}
	return last, nil
}

// call is the k-th order call of account in a run. orders: accounts buy
// and sell in turn (half of them buying at any time), 1..3 steps through
// the mid, limit IOC, so every buy crosses every sell. mm: takers (every mmTakerEvery-th account) do the
// same 4 steps through; the others quote a ladder of mmLevels resting
// orders a side in one submitBatch, each living mmTTL.
func (s *orders) call(account int, k uint64) (common.Address, []byte) {
	to := common.Address(core.OrderbookAddress)
	if !s.mm {
		return to, abi.AppendSubmitOrder(nil, s.intent((k+uint64(account))%2 == 0, 1+int64(k+uint64(account/2))%3, clob.FlagIOC, 0))
	}
	if account%mmTakerEvery == mmTakerEvery-1 {
		return to, abi.AppendSubmitOrder(nil, s.intent((k+uint64(account))%2 == 0, mmLevels, clob.FlagIOC, 0))
	}
	inner := make([][]byte, 0, 2*mmLevels)
	ttl := uint64(mmTTL.Microseconds())
	for l := range int64(mmLevels) {
		inner = append(inner, abi.AppendSubmitOrder(nil, s.intent(true, -1-l, 0, ttl)),
			abi.AppendSubmitOrder(nil, s.intent(false, -1-l, 0, ttl)))
	}
	return to, abi.AppendSubmitBatch(nil, inner)
}

// intent is a one-lot limit order `through` steps past the mid toward the
// other side (negative: resting behind it).
func (s *orders) intent(buy bool, through int64, flags uint8, ttl uint64) *clob.Intent {
	in := &clob.Intent{Kind: clob.IntentSubmit, Book: s.market.ID, Side: clob.Buy, Type: clob.Limit, Flags: flags,
		Deadline: s.deadline, TTL: ttl, Size: s.market.LotSize}
	steps := ordersMid + through
	if !buy {
		in.Side, steps = clob.Sell, ordersMid-through
	}
	in.Price.Mul(uint256.NewInt(uint64(steps)), &s.market.TickPrecision)
	return in
}
