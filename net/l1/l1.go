// Package l1 connects the node to the bridged chain (docs/bridge.md §6):
// Dial checks that the chain behind a JSON-RPC endpoint is the one the
// bridge configuration names (its chain id is claim_chain_id, and
// source_contract holds code), and Chain.Run polls the bridge contract's
// Deposit events and credits each one as admin_deposit does.
//
// Invariants: every deposit is credited through Depositor.Deposit with the
// event's id as the deposit id, so a deposit is credited at most once (the
// node refuses a known id) and a rescan, after a restart or a failed
// credit, is harmless. The poller keeps only its scan cursor, in memory: it
// starts from block 0 and reads the chain in ranges of at most
// BlockRangeMax blocks. It credits at the chain's head, with no
// confirmation depth: the bridged chain of the tests (anvil) does not
// reorganize.
package l1

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

const (
	// PollInterval is how long the poller waits between two looks at the
	// bridged chain's head.
	PollInterval = 250 * time.Millisecond
	// BlockRangeMax bounds the blocks one eth_getLogs call covers, so that
	// a long chain is read in requests any endpoint answers.
	BlockRangeMax = 2000
	// CallTimeout bounds each call to the bridged chain.
	CallTimeout = 10 * time.Second
)

// DepositTopic is the topic of the bridge contract's
// Deposit(bytes32 indexed id, address indexed token, uint256 amount, address indexed to).
var DepositTopic = crypto.Keccak256Hash([]byte("Deposit(bytes32,address,uint256,address)"))

// Depositor credits a deposit observed on the bridged chain: *node.Node.
type Depositor interface {
	Deposit(id core.Hash, token, to core.Address, amount *uint256.Int, done func(*node.Entry, error)) error
}

// Chain is a connection to the bridged chain of a bridge configuration.
type Chain struct {
	url    string
	client *ethclient.Client
	cfg    *core.BridgeConfig
}

// Dial connects to the bridged chain at url and checks it against cfg: its
// eth_chainId must be cfg.ClaimChainID and cfg.SourceContract must hold
// code there. The error says which check failed.
func Dial(ctx context.Context, url string, cfg *core.BridgeConfig) (*Chain, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	client, err := ethclient.DialContext(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("bridged chain %s: %w", url, err)
	}
	c := &Chain{url: url, client: client, cfg: cfg}
	if err := c.check(ctx); err != nil {
		client.Close()
		return nil, err
	}
	return c, nil
}

func (c *Chain) check(ctx context.Context) error {
	id, err := c.client.ChainID(ctx)
	if err != nil {
		return fmt.Errorf("bridged chain %s: eth_chainId: %w", c.url, err)
	}
	if !id.IsUint64() || id.Uint64() != c.cfg.ClaimChainID {
		return fmt.Errorf("bridged chain %s has chain id %s, the bridge configuration's claim_chain_id is %d", c.url, id, c.cfg.ClaimChainID)
	}
	code, err := c.client.CodeAt(ctx, common.Address(c.cfg.SourceContract), nil)
	if err != nil {
		return fmt.Errorf("bridged chain %s: eth_getCode: %w", c.url, err)
	}
	if len(code) == 0 {
		return fmt.Errorf("bridged chain %s has no contract at the bridge configuration's source_contract %s: deploy the bridge there first (bench/bridge/sol)",
			c.url, common.Address(c.cfg.SourceContract).Hex())
	}
	return nil
}

// Close closes the connection.
func (c *Chain) Close() { c.client.Close() }

// Run polls the bridge contract's Deposit events from block 0 and credits
// each through dep, every PollInterval, until ctx ends or the node stops.
// Errors of the bridged chain are logged (once until the next success) and
// retried.
func (c *Chain) Run(ctx context.Context, dep Depositor, logf func(string, ...any)) {
	var next uint64 // the first block not scanned yet
	var lastErr string
	for {
		var err error
		next, err = c.scan(ctx, dep, next, logf)
		switch {
		case errors.Is(err, node.ErrStopped) || ctx.Err() != nil:
			return
		case err != nil && err.Error() != lastErr:
			logf("bridged chain %s: %v (retrying every %v)", c.url, err, PollInterval)
			lastErr = err.Error()
		case err == nil:
			lastErr = ""
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(PollInterval):
		}
	}
}

// scan credits the deposits of blocks next..head and returns the first
// block it has not finished.
func (c *Chain) scan(ctx context.Context, dep Depositor, next uint64, logf func(string, ...any)) (uint64, error) {
	cctx, cancel := context.WithTimeout(ctx, CallTimeout)
	head, err := c.client.BlockNumber(cctx)
	cancel()
	if err != nil {
		return next, fmt.Errorf("eth_blockNumber: %w", err)
	}
	for next <= head {
		last := min(head, next+BlockRangeMax-1)
		cctx, cancel := context.WithTimeout(ctx, CallTimeout)
		logs, err := c.client.FilterLogs(cctx, ethereum.FilterQuery{
			FromBlock: new(big.Int).SetUint64(next), ToBlock: new(big.Int).SetUint64(last),
			Addresses: []common.Address{common.Address(c.cfg.SourceContract)},
			Topics:    [][]common.Hash{{DepositTopic}},
		})
		cancel()
		if err != nil {
			return next, fmt.Errorf("eth_getLogs %d..%d: %w", next, last, err)
		}
		for i := range logs {
			if err := c.credit(dep, &logs[i], logf); err != nil {
				// Resume at this log's block: the deposits before it in
				// the block are refused as known.
				return logs[i].BlockNumber, err
			}
		}
		next = last + 1
	}
	return next, nil
}

// credit hands one Deposit event to dep. A deposit the configuration cannot
// map (an unknown token, a zero id, an amount past 2^256 once scaled) is
// logged and skipped; a known deposit is not an error. It returns the
// errors worth a retry (an overloaded or stopped node).
func (c *Chain) credit(dep Depositor, l *types.Log, logf func(string, ...any)) error {
	d, err := Decode(c.cfg, l)
	if err != nil {
		logf("bridged chain %s: skipping the event of tx %s: %v", c.url, l.TxHash.Hex(), err)
		return nil
	}
	err = dep.Deposit(d.ID, d.Token, d.To, &d.Amount, func(_ *node.Entry, err error) {
		if err != nil {
			logf("bridged chain %s: deposit %s not stored: %v", c.url, common.Hash(d.ID).Hex(), err)
		}
	})
	if errors.Is(err, node.ErrDuplicateDeposit) {
		return nil
	}
	return err
}

// Deposit is a Deposit event in ledger terms.
type Deposit struct {
	ID     core.Hash
	Token  core.Address // ledger side
	To     core.Address
	Amount uint256.Int // 18 decimals
}

// Decode maps a Deposit event of the bridge contract to the ledger: the
// bridged-chain token to its ledger token and the amount to 18 decimals.
func Decode(cfg *core.BridgeConfig, l *types.Log) (Deposit, error) {
	if len(l.Topics) != 4 || l.Topics[0] != DepositTopic || len(l.Data) != 32 {
		return Deposit{}, errors.New("not a Deposit(bytes32,address,uint256,address) event")
	}
	d := Deposit{ID: core.Hash(l.Topics[1]), To: core.Address(common.BytesToAddress(l.Topics[3][:]))}
	if d.ID == (core.Hash{}) {
		return Deposit{}, errors.New("deposit id 0 (the ledger reads a zero id as 'derive one')")
	}
	tok := l1Token(cfg, core.Address(common.BytesToAddress(l.Topics[2][:])))
	if tok == nil {
		return Deposit{}, fmt.Errorf("token %s is not bridged", common.BytesToAddress(l.Topics[2][:]).Hex())
	}
	d.Token = tok.Token
	scale := tok.Step()
	if _, overflow := d.Amount.MulOverflow(new(uint256.Int).SetBytes32(l.Data), &scale); overflow {
		return Deposit{}, errors.New("amount overflows 256 bits in 18 decimals")
	}
	return d, nil
}

// l1Token returns the rules of a bridged-chain token, or nil.
func l1Token(cfg *core.BridgeConfig, token core.Address) *core.BridgeToken {
	for i := range cfg.Tokens {
		if cfg.Tokens[i].L1Token == token {
			return &cfg.Tokens[i]
		}
	}
	return nil
}
