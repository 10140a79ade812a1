package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/ledgervenue/node/bench/txgen"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// Setting up: funding and nonces go through go-ethereum's client.
const (
	// setupTimeout bounds each setup call, and the wait for the funding
	// transfers' receipts.
	setupTimeout = 30 * time.Second
	// receiptPoll is how often a funding receipt is asked for.
	receiptPoll = 50 * time.Millisecond
	// txGas is every transaction's gas limit: a plain transfer's, which is
	// also what ledgerd charges an orderbook call.
	txGas = core.TxGas
)

// fundWei is what each fresh sender of transfers receives from a dev
// account: 1 native token, enough for about 23 000 transfers at a 2 gwei fee
// cap. Both ledgerd --dev and anvil prefund the dev accounts with 10 000.
var fundWei = big.NewInt(1e18)

// scenario makes the requests of one node's runs.
type scenario interface {
	// prepare readies the requests of one run of count requests against t.
	prepare(ctx context.Context, t *target, count int) error
	// next returns the body of request i of the run (load.OpenConfig.Next).
	next(i uint64) []byte
	// check judges an answer (load.OpenConfig.Check).
	check(status int, body []byte) bool
	// ordered says requests i and i+conns must go out one after another.
	ordered() bool
}

func newScenario(name string, o *options) (scenario, error) {
	switch name {
	case "balance", "chainid":
		return newReads(name)
	case "idle":
		if o.probe == nil {
			return nil, fmt.Errorf("--scenario idle sends nothing but the probe: add --probe")
		}
		return idle{}, nil
	case "transfer", "subs":
		return &senders{accounts: o.accounts, seed: o.seed, funder: o.funder, native: fundWei}, nil
	case "orders", "mm":
		return newOrders(name, o)
	}
	return nil, fmt.Errorf("unknown scenario %q (balance, chainid, transfer, orders, mm, subs, idle)", name)
}

// resultAnswer accepts a JSON-RPC answer with a hex result: a balance, a
// chain id, a transaction hash.
func resultAnswer(status int, body []byte) bool {
	return status == 200 && bytes.Contains(body, []byte(`"result":"0x`))
}

// reads cycles through fixed read requests. An answer must carry want
// (nil: a hex result, resultAnswer).
type reads struct {
	bodies [][]byte
	want   []byte
}

func (r *reads) prepare(context.Context, *target, int) error { return nil }
func (r *reads) next(i uint64) []byte                        { return r.bodies[i%uint64(len(r.bodies))] }
func (r *reads) ordered() bool                               { return false }

func (r *reads) check(status int, body []byte) bool {
	if r.want == nil {
		return resultAnswer(status, body)
	}
	return status == 200 && bytes.Contains(body, r.want)
}

// idle sends nothing: a run of it is the probe alone, for the figure of an
// unloaded node. measure does not start a load for it.
type idle struct{}

func (idle) prepare(context.Context, *target, int) error { return nil }
func (idle) next(uint64) []byte                          { return nil }
func (idle) check(int, []byte) bool                      { return false }
func (idle) ordered() bool                               { return false }

// senders sends transactions from fresh accounts, funded from a dev account
// (--funder) on the first run: 1-wei transfers to a sink, or, with tx set,
// orderbook calls. Request i is account i % accounts's next nonce; the
// bodies are signed before each run.
type senders struct {
	accounts int
	seed     string
	funder   int      // index of the dev account that funds
	native   *big.Int // funding of each account, wei
	// tx, when set, returns the call of the k-th request of a run by
	// account (to and calldata) instead of a transfer; fundMore sends the
	// extra funding it needs (from dev, from nonce on) and returns the
	// last transaction's hash.
	tx       func(account int, k uint64) (common.Address, []byte)
	fundMore func(ctx context.Context, c *ethclient.Client, dev *ecdsa.PrivateKey, nonce uint64) (common.Hash, error)
	// beforeRun, when set, runs before each run's signing.
	beforeRun func(ctx context.Context, t *target) error
	// settle is waited after the funding's receipts: ledgerd moves tokens
	// sent through the orderbook at its next transfer tick.
	settle  time.Duration
	keys    []*ecdsa.PrivateKey
	addrs   []common.Address
	signer  types.Signer
	chainID *big.Int
	feeCap  *big.Int
	sink    common.Address
	bodies  [][]byte
}

func (s *senders) ordered() bool                      { return true }
func (s *senders) next(i uint64) []byte               { return s.bodies[i] }
func (s *senders) check(status int, body []byte) bool { return resultAnswer(status, body) }

func (s *senders) prepare(ctx context.Context, t *target, count int) error {
	if count > SignedMax {
		return fmt.Errorf("rate x duration is %d transactions, above the %d signed ahead at most", count, SignedMax)
	}
	if s.beforeRun != nil {
		if err := s.beforeRun(ctx, t); err != nil {
			return err
		}
	}
	if s.keys == nil {
		if err := s.fund(ctx, t); err != nil {
			return fmt.Errorf("funding the senders: %w", err)
		}
	}
	nonces := make([]uint64, len(s.keys))
	c, err := t.client(ctx)
	if err != nil {
		return err
	}
	for a, addr := range s.addrs {
		cctx, cancel := context.WithTimeout(ctx, setupTimeout)
		nonces[a], err = c.PendingNonceAt(cctx, addr)
		cancel()
		if err != nil {
			return fmt.Errorf("nonce of %s: %w", addr.Hex(), err)
		}
	}
	perAccount := (count + len(s.keys) - 1) / len(s.keys)
	if cost := new(big.Int).Mul(big.NewInt(int64(perAccount)), new(big.Int).Add(new(big.Int).Mul(s.feeCap, big.NewInt(txGas)), big.NewInt(1))); cost.Cmp(s.native) > 0 {
		return fmt.Errorf("the gas of %d transactions per account costs more than the %v wei each was funded with: add --accounts", perAccount, s.native)
	}
	s.bodies = make([][]byte, count)
	return txgen.Parallel(len(s.keys), func(a int) error {
		for i := a; i < count; i += len(s.keys) {
			k := uint64(i / len(s.keys))
			to, value, data := s.sink, big.NewInt(1), []byte(nil)
			if s.tx != nil {
				to, data = s.tx(a, k)
				value = new(big.Int)
			}
			raw, err := s.sign(s.keys[a], nonces[a]+k, to, value, data)
			if err != nil {
				return err
			}
			s.bodies[i] = txgen.SendRawBody(raw)
		}
		return nil
	})
}

// fund derives the fresh senders and sends each s.native from the funding
// dev account (and what fundMore adds), then waits for the last transaction's
// receipt (a sender's transactions are included in nonce order).
func (s *senders) fund(ctx context.Context, t *target) error {
	c, err := t.client(ctx)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	if s.chainID, err = c.ChainID(cctx); err != nil {
		return err
	}
	price, err := c.SuggestGasPrice(cctx)
	if err != nil {
		return err
	}
	s.feeCap = new(big.Int).Mul(price, big.NewInt(2))
	s.signer = types.LatestSignerForChainID(s.chainID)
	s.sink = common.BytesToAddress(crypto.Keccak256([]byte("ledger-bench sink"), []byte(s.seed)))
	s.keys, s.addrs = txgen.DeriveKeys("ledger-bench key", s.seed, 0, s.accounts)
	dev := node.DevKey(s.funder)
	nonce, err := c.PendingNonceAt(cctx, crypto.PubkeyToAddress(dev.PublicKey))
	if err != nil {
		return err
	}
	var last common.Hash
	for i, to := range s.addrs {
		if last, err = s.send(cctx, c, dev, nonce+uint64(i), to, s.native, nil); err != nil {
			return fmt.Errorf("funding %s: %w", to.Hex(), err)
		}
	}
	if s.fundMore != nil {
		if last, err = s.fundMore(cctx, c, dev, nonce+uint64(len(s.addrs))); err != nil {
			return err
		}
	}
	for {
		r, err := c.TransactionReceipt(cctx, last)
		if err == nil {
			if r.Status != types.ReceiptStatusSuccessful {
				return fmt.Errorf("funding transfer %s failed", last.Hex())
			}
			time.Sleep(s.settle)
			return nil
		}
		select {
		case <-cctx.Done():
			return fmt.Errorf("no receipt for funding transfer %s: %w", last.Hex(), err)
		case <-time.After(receiptPoll):
		}
	}
}

// sign returns the raw EIP-1559 transaction sending value and data to
// `to`, tip 0 and a fee cap of twice the node's gas price.
func (s *senders) sign(key *ecdsa.PrivateKey, nonce uint64, to common.Address, value *big.Int, data []byte) ([]byte, error) {
	tx, err := types.SignNewTx(key, s.signer, &types.DynamicFeeTx{ChainID: s.chainID, Nonce: nonce,
		GasTipCap: new(big.Int), GasFeeCap: s.feeCap, Gas: txGas, To: &to, Value: value, Data: data})
	if err != nil {
		return nil, err
	}
	return tx.MarshalBinary()
}

// send signs and sends one setup transaction and returns its hash.
func (s *senders) send(ctx context.Context, c *ethclient.Client, key *ecdsa.PrivateKey, nonce uint64, to common.Address,
	value *big.Int, data []byte) (common.Hash, error) {
	raw, err := s.sign(key, nonce, to, value, data)
	if err != nil {
		return common.Hash{}, err
	}
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(raw); err != nil {
		return common.Hash{}, err
	}
	return tx.Hash(), c.SendTransaction(ctx, tx)
}
