package bridge

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"

	"github.com/ledgervenue/node/bench/proc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/attest"
	"github.com/ledgervenue/node/net/node"
)

// ledgerd is the binary TestMain builds.
var ledgerd string

func TestMain(m *testing.M) { os.Exit(proc.Main(m, "../..", &ledgerd)) }

const (
	// ledgerChainID, ledgerSeed and ledgerValidators are ledgerd's chain id
	// and default committee (its --committee-seed and --validators).
	ledgerChainID    = 0x50d
	ledgerSeed       = "ledgerd committee"
	ledgerValidators = 4
	// waitTimeout bounds every wait for the ledger or the chain to catch up.
	waitTimeout = 30 * time.Second
)

// tools fails the test (or skips it under -short) unless npm/node_modules
// holds anvil and solc.
func tools(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the bridge tests start anvil and ledgerd")
	}
	if _, err := os.Stat(anvilBin()); err != nil {
		t.Fatalf("anvil is missing (%v): run make bridge-tools (npm ci --prefix bench/bridge/npm)", err)
	}
}

// anvilBin is the anvil binary of the npm package for this platform.
func anvilBin() string { return proc.AnvilBin("npm") }

// artifact is a compiled contract.
type artifact struct {
	ABI abi.ABI
	Bin []byte
}

var compiled = sync.OnceValues(func() (map[string]artifact, error) {
	out, err := os.MkdirTemp("", "ledgerd-solc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(out)
	cmd := exec.Command(filepath.Join("npm", "node_modules", ".bin", "solcjs"), "--bin", "--abi", "--optimize",
		"--base-path", "sol", "-o", out, "sol/Bridge.sol", "sol/TestToken.sol")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("solcjs: %v\n%s", err, msg)
	}
	arts := map[string]artifact{}
	for _, name := range []string{"Bridge_sol_Bridge", "TestToken_sol_TestToken"} {
		abiJSON, err := os.ReadFile(filepath.Join(out, name+".abi"))
		if err != nil {
			return nil, err
		}
		bin, err := os.ReadFile(filepath.Join(out, name+".bin"))
		if err != nil {
			return nil, err
		}
		a, err := abi.JSON(strings.NewReader(string(abiJSON)))
		if err != nil {
			return nil, err
		}
		arts[name[strings.LastIndex(name, "_")+1:]] = artifact{ABI: a, Bin: common.FromHex(string(bin))}
	}
	return arts, nil
})

// anvil is a running anvil with go-ethereum clients.
type anvil struct {
	URL     string
	Client  *ethclient.Client
	ChainID *big.Int
}

// startAnvil starts anvil on a free loopback port with go-ethereum clients;
// the test's cleanup kills it.
func startAnvil(t *testing.T) *anvil {
	t.Helper()
	a := &anvil{URL: proc.StartAnvil(t, anvilBin())}
	var err error
	if a.Client, err = ethclient.Dial(a.URL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Client.Close)
	if a.ChainID, err = a.Client.ChainID(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a
}

// transactor signs with key for chain; bind fills in nonce, fees and gas.
func transactor(t *testing.T, key *ecdsa.PrivateKey, chainID *big.Int) *bind.TransactOpts {
	t.Helper()
	opts := bind.NewKeyedTransactor(key, chainID)
	opts.Context = context.Background()
	return opts
}

// mined waits for tx's receipt and fails the test unless it succeeded.
func mined(t *testing.T, client *ethclient.Client, tx *types.Transaction, err error) *types.Receipt {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	rec, err := bind.WaitMined(ctx, client, tx.Hash())
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("tx %s reverted", tx.Hash().Hex())
	}
	return rec
}

// bridged is the bridge and the three tokens deployed on an anvil.
type bridged struct {
	*anvil
	Bridge    *bind.BoundContract
	Tokens    [3]*bind.BoundContract // USD (native), WETH, WBTC: node.DevBridgeConfig's order
	Committee *attest.Committee
	owner     *bind.TransactOpts
	abi       abi.ABI // the bridge's
}

// deploy deploys the bridge (ledgerd's default committee) and the tokens
// from dev account 0 at nonces 0..3, checks that they landed where
// node.DevBridgeConfig expects them, and whitelists the pairs.
func deploy(t *testing.T, a *anvil) *bridged {
	t.Helper()
	arts, err := compiled()
	if err != nil {
		t.Fatal(err)
	}
	committee := attest.NewCommittee([]byte(ledgerSeed), ledgerValidators, 0)
	validators := make([]common.Address, committee.N)
	for i, m := range committee.Members {
		validators[i] = m
	}
	b := &bridged{anvil: a, Committee: committee, owner: transactor(t, node.DevKey(0), a.ChainID), abi: arts["Bridge"].ABI}
	cfg := node.DevBridgeConfig()
	deployOne := func(art artifact, want core.Address, args ...any) *bind.BoundContract {
		input, err := art.ABI.Pack("", args...)
		if err != nil {
			t.Fatal(err)
		}
		addr, tx, err := bind.DeployContract(b.owner, art.Bin, a.Client, input)
		mined(t, a.Client, tx, err)
		if addr != common.Address(want) {
			t.Fatalf("deployed at %s, node.DevBridgeConfig expects %s: was anvil fresh?", addr.Hex(), common.Address(want).Hex())
		}
		return bind.NewBoundContract(addr, art.ABI, a.Client, a.Client, a.Client)
	}
	b.Bridge = deployOne(arts["Bridge"], cfg.SourceContract, validators, big.NewInt(int64(committee.F)),
		big.NewInt(ledgerChainID), new(big.Int).SetUint64(cfg.Version), common.Address(core.BridgeAddress))
	names := [3][2]string{{"Test USD", "USD"}, {"Test WETH", "WETH"}, {"Test WBTC", "WBTC"}}
	for i, tok := range cfg.Tokens {
		b.Tokens[i] = deployOne(arts["TestToken"], tok.L1Token, names[i][0], names[i][1], tok.Decimals)
	}
	for i, tok := range cfg.Tokens {
		tx, err := b.Bridge.Transact(b.owner, "whitelistToken", b.Tokens[i].Address(), common.Address(tok.Token))
		mined(t, a.Client, tx, err)
	}
	return b
}

// balanceOf is token's ERC-20 balance of who.
func balanceOf(t *testing.T, token *bind.BoundContract, who common.Address) *big.Int {
	t.Helper()
	var out []any
	if err := token.Call(nil, &out, "balanceOf", who); err != nil {
		t.Fatal(err)
	}
	return out[0].(*big.Int)
}

// deposit mints amount of token i to the depositor key, approves the bridge
// and deposits it for the ledger account to.
func (b *bridged) deposit(t *testing.T, key *ecdsa.PrivateKey, i int, amount *big.Int, to common.Address) {
	t.Helper()
	from := transactor(t, key, b.ChainID)
	tx, err := b.Tokens[i].Transact(from, "mint", from.From, amount)
	mined(t, b.Client, tx, err)
	tx, err = b.Tokens[i].Transact(from, "approve", b.Bridge.Address(), amount)
	mined(t, b.Client, tx, err)
	tx, err = b.Bridge.Transact(from, "deposit", b.Tokens[i].Address(), amount, to)
	mined(t, b.Client, tx, err)
}

// revertName is the name of the bridge's custom error err carries, or "" when err is nil.
func (b *bridged) revertName(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var de gethrpc.DataError
	if !errors.As(err, &de) {
		t.Fatalf("not a revert: %v", err)
	}
	s, _ := de.ErrorData().(string)
	data, derr := hexutil.Decode(s)
	if derr != nil || len(data) < 4 {
		t.Fatalf("revert without an error selector: %v (data %v)", err, de.ErrorData())
	}
	for name, e := range b.abi.Errors {
		if [4]byte(e.ID[:4]) == [4]byte(data[:4]) {
			return name
		}
	}
	return fmt.Sprintf("unknown error 0x%x", data[:4])
}

// callClaim runs claim as an eth_call and returns the revert's error name
// ("" when it would pay).
func (b *bridged) callClaim(t *testing.T, token common.Address, amount *big.Int, to common.Address, proof, aux []byte) string {
	t.Helper()
	input, err := b.abi.Pack("claim", token, amount, to, proof, aux)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Bridge.CallRaw(&bind.CallOpts{From: b.owner.From}, input)
	return b.revertName(t, err)
}
