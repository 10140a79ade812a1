package bots

import (
	"context"
	"crypto/ecdsa"
	"encoding/binary"
	"fmt"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

// Pacing and funding of a bot.
const (
	// BackoffMin and BackoffMax bound the pause after a failed action
	// (refusal or error): it doubles from BackoffMin up to BackoffMax and
	// drops back to none after a success, so a failing bot never hot-loops.
	BackoffMin = 100 * time.Millisecond
	BackoffMax = 5 * time.Second
	// QuoteTTLRounds: a maker's orders rest this many quote periods at
	// most, so the quotes of a bot that stopped leave the book by
	// themselves.
	QuoteTTLRounds = 4
	// FundQuoteUnits and FundBaseUnits are what each bot is credited at
	// start with admin_deposit, whole tokens: of the native (quote and
	// collateral) token, and of each spot market's base token.
	FundQuoteUnits = 1_000_000_000
	FundBaseUnits  = 1_000_000
	// RefusalReasonsMax bounds the distinct refusal reasons a bot counts;
	// further ones count under "other".
	RefusalReasonsMax = 16
)

type role uint8

const (
	maker role = iota
	taker
)

func (r role) String() string { return [...]string{"maker", "taker"}[r] }

// bot is one maker or taker on one market, with its own account, PRNG and
// connection. Only its own goroutine touches the fields above counters.
type bot struct {
	name   string
	role   role
	market market
	spec   *Spec
	key    *ecdsa.PrivateKey
	addr   common.Address
	signer types.Signer
	feeCap *big.Int
	c      *client
	d      *decider
	now    func() int64 // the node's time, µs (Config.NowMicros)
	nonce  uint64
	synced bool   // nonce matches the node's; false after a transport error
	ref    uint64 // a spot maker's reference price, steps (0: not yet set)
	orders []order
	inner  [][]byte
	counters
}

// counters are a bot's figures, read by Status while it runs.
type counters struct {
	sent, acked, errors atomic.Uint64
	mu                  sync.Mutex
	refused             map[string]uint64
	lastError           string
}

func (c *counters) refuse(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refused == nil {
		c.refused = map[string]uint64{}
	}
	if _, ok := c.refused[reason]; !ok && len(c.refused) >= RefusalReasonsMax {
		reason = "other"
	}
	c.refused[reason]++
}

func (c *counters) fail(err error) {
	c.errors.Add(1)
	c.mu.Lock()
	c.lastError = err.Error()
	c.mu.Unlock()
}

// botKey derives bot i's key from the seed: keccak256("ledgerd bots" ‖
// seed ‖ i), big-endian.
func botKey(seed uint64, i int) (*ecdsa.PrivateKey, error) {
	var b [12]byte
	binary.BigEndian.PutUint64(b[:8], seed)
	binary.BigEndian.PutUint32(b[8:], uint32(i))
	return crypto.ToECDSA(crypto.Keccak256([]byte("ledgerd bots"), b[:]))
}

// run funds the bot, then acts until ctx ends: a maker every quote period
// in the middle of an auction interval, a taker at Poisson arrivals.
func (b *bot) run(ctx context.Context) {
	backoff := time.Duration(0)
	for funded := false; ; {
		// The backoff first, then the schedule: a maker keeps its phase.
		if !sleep(ctx, backoff) || funded && !sleep(ctx, b.next()) {
			return
		}
		// Stopping waits for the action in flight (each call is bounded by
		// RequestTimeout), so every transaction sent gets its outcome counted.
		calls := context.WithoutCancel(ctx)
		var ok bool
		if !funded {
			ok = b.fund(calls)
			funded = ok
		} else {
			ok = b.act(calls)
		}
		if ok {
			backoff = 0
		} else {
			backoff = min(max(2*backoff, BackoffMin), BackoffMax)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// next is the time to the bot's next action. A maker acts half an interval
// after an auction tick: its cancels then name orders that tick left live,
// and the next tick is half an interval away.
func (b *bot) next() time.Duration {
	if b.role == taker {
		return b.d.pause()
	}
	interval, period := b.market.IntervalUs, b.quotePeriodUs()
	now := b.now()
	at := ((now-interval/2)/period+1)*period + interval/2
	return time.Duration(at-now) * time.Microsecond
}

// quotePeriodUs is the time between a maker's quote rounds: they follow
// the ticks at the multiples of it (half an interval after each on the wall
// clock, right after each in lockstep).
func (b *bot) quotePeriodUs() int64 { return b.market.IntervalUs * int64(b.spec.QuoteEvery) }

// fund credits the bot's account and reads its nonce.
func (b *bot) fund(ctx context.Context) bool {
	quote := new(big.Int).Mul(big.NewInt(FundQuoteUnits), big.NewInt(1e18))
	if err := b.c.deposit(ctx, common.Address(core.NativeToken), b.addr, quote); err != nil {
		b.fail(fmt.Errorf("admin_deposit: %w", err))
		return false
	}
	if !b.market.Perp {
		base := new(big.Int).Mul(big.NewInt(FundBaseUnits), big.NewInt(1e18))
		if err := b.c.deposit(ctx, b.market.Base, b.addr, base); err != nil {
			b.fail(fmt.Errorf("admin_deposit: %w", err))
			return false
		}
	}
	return b.syncNonce(ctx)
}

func (b *bot) syncNonce(ctx context.Context) bool {
	n, err := b.c.nonce(ctx, b.addr)
	if err != nil {
		b.fail(fmt.Errorf("eth_getTransactionCount: %w", err))
		return false
	}
	b.nonce, b.synced = n, true
	return true
}

// act runs one quote round or one taker order; false on a refusal or error.
func (b *bot) act(ctx context.Context) bool {
	if !b.synced && !b.syncNonce(ctx) {
		return false
	}
	t, err := b.c.top(ctx, &b.market)
	if err != nil {
		b.fail(fmt.Errorf("ob_getOrderbook: %w", err))
		return false
	}
	deadline := b.deadline()
	b.inner = b.inner[:0]
	if b.role == taker {
		o, ok := b.d.take(t.Bid, t.Ask)
		if !ok {
			return true // nothing to take on that side yet
		}
		return b.submit(ctx, abi.AppendIntent(nil, b.intent(&o, clob.FlagIOC, deadline, 0)))
	}
	live, err := b.c.liveOrders(ctx, b.addr, &b.market, 2*b.spec.Levels)
	if err != nil {
		b.fail(fmt.Errorf("ob_getOrders: %w", err))
		return false
	}
	for _, id := range live {
		b.inner = append(b.inner, abi.AppendCancel(nil, &clob.Intent{Kind: clob.IntentCancel, Book: b.market.ID, OrderID: id, Deadline: deadline}))
	}
	ttl := uint64(b.quotePeriodUs()) * QuoteTTLRounds
	b.orders = b.d.ladder(b.orders[:0], b.reference(&t))
	for i := range b.orders {
		b.inner = append(b.inner, abi.AppendIntent(nil, b.intent(&b.orders[i], 0, deadline, ttl)))
	}
	return b.submit(ctx, abi.AppendSubmitBatch(nil, b.inner))
}

// reference is the price a maker quotes around, in steps: a perp market's
// oracle; on a spot market the book's mid (else the last reference, else
// the spec's start price) pulled towards the start price (revert) and moved
// by one step of the seeded walk.
func (b *bot) reference(t *top) uint64 {
	if b.market.Perp && t.Oracle != 0 {
		return t.Oracle
	}
	start := new(uint256.Int).Mul(uint256.NewInt(b.spec.StartPrice), uint256.NewInt(1e18))
	anchor := max(1, new(uint256.Int).Div(start, &b.market.Step).Uint64())
	switch {
	case t.Bid != 0 && t.Ask != 0:
		b.ref = (t.Bid + t.Ask) / 2
	case b.ref == 0:
		b.ref = anchor
	}
	b.ref = b.d.walk(revert(b.ref, anchor))
	return b.ref
}

// deadline is the auction after the one an order sent now lands in: one
// interval of slack for the request's way to the node.
func (b *bot) deadline() uint64 {
	interval := b.market.IntervalUs
	return uint64((b.now()/interval + 2) * interval)
}

func (b *bot) intent(o *order, flags uint8, deadline, ttl uint64) *clob.Intent {
	in := &clob.Intent{Kind: clob.IntentSubmit, Book: b.market.ID, Side: o.Side, Type: clob.Limit, Flags: flags,
		Deadline: deadline, TTL: ttl}
	in.Size.Mul(uint256.NewInt(o.Lots), &b.market.Lot)
	in.Price.Mul(uint256.NewInt(o.Steps), &b.market.Step)
	return in
}

// submit signs calldata to the orderbook with the bot's next nonce and
// sends it, counting the outcome.
func (b *bot) submit(ctx context.Context, data []byte) bool {
	to := common.Address(core.OrderbookAddress)
	tx, err := types.SignNewTx(b.key, b.signer, &types.DynamicFeeTx{ChainID: b.signer.ChainID(), Nonce: b.nonce,
		GasTipCap: new(big.Int), GasFeeCap: b.feeCap, Gas: core.TxGas, To: &to, Data: data})
	if err != nil {
		b.fail(fmt.Errorf("cannot sign: %w", err))
		return false
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		b.fail(fmt.Errorf("cannot encode: %w", err))
		return false
	}
	b.sent.Add(1)
	reason, validation, err := b.c.send(ctx, raw)
	switch {
	case err != nil:
		b.synced = false // admitted or not: ask the node
		b.fail(fmt.Errorf("eth_sendRawTransaction: %w", err))
		return false
	case reason != "": // a refusal consumes no nonce
		b.refuse(reason)
		if validation {
			// Perhaps a nonce the node no longer expects (an evm_revert
			// took it back): read it again before the next round.
			b.synced = false
		}
		return false
	}
	b.nonce++
	b.acked.Add(1)
	return true
}
