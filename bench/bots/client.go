package bots

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
)

// RequestTimeout bounds each call a bot makes; a call past it counts as an
// error, and Close waits at most about this long for the bots to stop.
const RequestTimeout = 10 * time.Second

// client is one bot's connection to the node: a go-ethereum rpc client over
// WebSocket or HTTP (its own keep-alive connection), carrying the admin
// token for admin_deposit. Every call is a public JSON-RPC method.
type client struct{ c *gethrpc.Client }

func dial(ctx context.Context, addr, transport, adminToken string) (*client, error) {
	opts := []gethrpc.ClientOption{gethrpc.WithHeader("Authorization", "Bearer "+adminToken)}
	if transport == "http" {
		// A transport of its own: the default one keeps two idle
		// connections per host for the whole process.
		opts = append(opts, gethrpc.WithHTTPClient(&http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}))
	}
	c, err := gethrpc.DialOptions(ctx, transport+"://"+addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s://%s: %w", transport, addr, err)
	}
	return &client{c: c}, nil
}

func (c *client) close() { c.c.Close() }

func (c *client) call(ctx context.Context, result any, method string, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	return c.c.CallContext(ctx, result, method, args...)
}

// market is what a bot needs of an ob_getMarkets entry.
type market struct {
	ID         clob.Hash
	Name       string
	Perp       bool
	Base       common.Address
	Step, Lot  uint256.Int // tick precision and lot size, wei
	IntervalUs int64
}

func (c *client) markets(ctx context.Context) ([]market, error) {
	var raw []struct {
		ID         common.Hash    `json:"id"`
		Name       string         `json:"name"`
		Type       string         `json:"market_type"`
		Base       common.Address `json:"base_token_address"`
		Step       *hexutil.Big   `json:"tick_precision"`
		Lot        *hexutil.Big   `json:"lot_size"`
		IntervalUs int64          `json:"auction_interval"`
	}
	if err := c.call(ctx, &raw, "ob_getMarkets"); err != nil {
		return nil, err
	}
	ms := make([]market, 0, len(raw))
	for _, r := range raw {
		m := market{ID: clob.Hash(r.ID), Name: r.Name, Perp: r.Type == "perpetual", Base: r.Base, IntervalUs: r.IntervalUs}
		if r.Step == nil || r.Lot == nil || m.Step.SetFromBig(r.Step.ToInt()) || m.Lot.SetFromBig(r.Lot.ToInt()) ||
			m.Step.IsZero() || m.Lot.IsZero() || r.IntervalUs <= 0 {
			return nil, fmt.Errorf("ob_getMarkets: market %q has no usable step, lot or interval", r.Name)
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// top is the best level of each side of a book and a perp book's oracle
// price, in price steps (0: none).
type top struct {
	Bid, Ask, Oracle uint64
}

func (c *client) top(ctx context.Context, m *market) (top, error) {
	var raw struct {
		Buys   map[string]json.RawMessage `json:"buys"`
		Sells  map[string]json.RawMessage `json:"sells"`
		Oracle *hexutil.Big               `json:"oracle_price"` // null on spot books
	}
	if err := c.call(ctx, &raw, "ob_getOrderbook", common.Hash(m.ID), hexutil.Uint64(1)); err != nil {
		return top{}, err
	}
	var t top
	var err error
	if t.Bid, err = bestSteps(raw.Buys, m); err == nil {
		t.Ask, err = bestSteps(raw.Sells, m)
	}
	t.Oracle = bigSteps(raw.Oracle, m)
	return t, err
}

// bestSteps reads the one level of a depth-1 side (keys are decimal prices).
func bestSteps(levels map[string]json.RawMessage, m *market) (uint64, error) {
	for key := range levels { // depth 1: at most one key
		p, ok := new(big.Int).SetString(key, 10)
		if !ok {
			return 0, fmt.Errorf("ob_getOrderbook: level key %q is not a decimal price", key)
		}
		return bigSteps((*hexutil.Big)(p), m), nil
	}
	return 0, nil
}

// bigSteps converts a price in wei to whole steps of m (0 for nil or a
// price past 2^63 steps, which no book holds).
func bigSteps(p *hexutil.Big, m *market) uint64 {
	if p == nil {
		return 0
	}
	s := new(big.Int).Quo(p.ToInt(), m.Step.ToBig())
	if !s.IsUint64() || s.Uint64() > 1<<63 {
		return 0
	}
	return s.Uint64()
}

// liveOrders lists the ids of owner's newest orders in m that are pending
// or resting, looking at the newest limit orders (terminal ones included).
func (c *client) liveOrders(ctx context.Context, owner common.Address, m *market, limit int) ([]clob.Hash, error) {
	var page struct {
		Orders []struct {
			ID     common.Hash `json:"order_id"`
			Status string      `json:"status"`
		} `json:"orders"`
	}
	q := map[string]any{"orderbook_id": common.Hash(m.ID), "limit": limit}
	if err := c.call(ctx, &page, "ob_getOrders", owner, q); err != nil {
		return nil, err
	}
	var ids []clob.Hash
	for _, o := range page.Orders {
		if o.Status == "pending" || o.Status == "active" {
			ids = append(ids, clob.Hash(o.ID))
		}
	}
	return ids, nil
}

func (c *client) nonce(ctx context.Context, a common.Address) (uint64, error) {
	var n hexutil.Uint64
	err := c.call(ctx, &n, "eth_getTransactionCount", a, "latest")
	return uint64(n), err
}

func (c *client) quantity(ctx context.Context, method string) (*big.Int, error) {
	var q hexutil.Big
	err := c.call(ctx, &q, method)
	return q.ToInt(), err
}

// deposit credits amount of token to to with admin_deposit.
func (c *client) deposit(ctx context.Context, token, to common.Address, amount *big.Int) error {
	var answer json.RawMessage
	return c.call(ctx, &answer, "admin_deposit", map[string]any{"token": token, "to": to, "amount": (*hexutil.Big)(amount)})
}

// send submits a signed transaction. A refusal (the node answered with an
// error) comes back as reason, with validation set for the node's -32000
// refusals, and err nil; err is a transport problem, where the transaction
// may or may not have been admitted.
func (c *client) send(ctx context.Context, raw []byte) (reason string, validation bool, err error) {
	var h common.Hash
	err = c.call(ctx, &h, "eth_sendRawTransaction", hexutil.Bytes(raw))
	var rerr gethrpc.Error
	switch {
	case errors.As(err, &rerr) && rerr.ErrorCode() == validationFailedCode:
		return validationFailed, true, nil
	case errors.As(err, &rerr):
		return refusalReason(rerr), false, nil
	}
	return "", false, err
}

// validationFailedCode is the code of the node's protocol-level refusals (a
// nonce, a pending transaction, a balance: the reason is in the data). The
// code, not the message, tells them: under --compat the message is
// go-ethereum's, with the nonces and the address in it ("nonce too low:
// address …, tx: 3 state: 5"), so a bot counts them all under the spec's
// message, validationFailed, in either mode.
const (
	validationFailedCode = -32000
	validationFailed     = "transaction validation failed"
)

// revertPrefix is what every orderbook refusal's reason starts with.
const revertPrefix = "CLOB validation failed: "

// refusalReason is the Error(string) reason of a revert (without the CLOB
// prefix), else the error's message.
func refusalReason(err gethrpc.Error) string {
	var derr gethrpc.DataError
	if errors.As(err, &derr) {
		if s, ok := derr.ErrorData().(string); ok {
			if b, herr := hex.DecodeString(strings.TrimPrefix(s, "0x")); herr == nil && len(b) >= 4+64 {
				// selector, offset word, length word, the text
				n := new(big.Int).SetBytes(b[4+32 : 4+64])
				if n.IsUint64() && n.Uint64() <= uint64(len(b)-4-64) {
					return strings.TrimPrefix(string(b[4+64:4+64+n.Uint64()]), revertPrefix)
				}
			}
		}
	}
	return err.Error()
}
