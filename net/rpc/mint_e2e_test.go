package rpc_test

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// The Mint application (the dev faucet, docs/faucet.md) through the whole
// node: mints signed the way the live SDK's mint() signs them (a fresh
// throwaway key, nonce 0, maxFeePerGas = eth_gasPrice, no tip, gas
// 1 000 000) and sent with eth_sendRawTransaction.

var mintAddr = common.Address(core.MintAddress)

// mintFaucetABI is the live SDK's Mint function.
var mintFaucetABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[{"type":"function","name":"mint","inputs":[
		{"name":"to","type":"address"},
		{"name":"tokens","type":"tuple[]","components":[{"name":"token","type":"address"},{"name":"amount","type":"uint256"}]},
		{"name":"depositToClob","type":"bool"}]}]`))
	if err != nil {
		panic(err)
	}
	return a
}()

type mintEntry struct {
	Token  common.Address
	Amount *big.Int
}

func withMint(c *node.Config) { c.MintAllowed = true }

// sendMint signs mint(to, entries, depositToClob) as the SDK does and sends
// it; it returns the transaction and the send's error.
func (tn *testNode) sendMint(t *testing.T, to common.Address, depositToClob bool, entries ...mintEntry) (*types.Transaction, error) {
	t.Helper()
	data, err := mintFaucetABI.Pack("mint", to, entries, depositToClob)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	price, err := tn.eth.SuggestGasPrice(ctx) // eth_gasPrice
	if err != nil {
		t.Fatal(err)
	}
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	tx := signMint(t, key, price, data)
	return tx, tn.eth.SendTransaction(ctx, tx)
}

func signMint(t *testing.T, key *ecdsa.PrivateKey, feeCap *big.Int, data []byte) *types.Transaction {
	t.Helper()
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(chainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chainID), GasTipCap: new(big.Int), GasFeeCap: feeCap, Gas: 1_000_000, To: &mintAddr, Data: data,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// wantMintRefusal asserts err is code 3, execution reverted, with
// Error("Mint validation failed: <reason>") as data.
func wantMintRefusal(t *testing.T, err error, reason string) {
	t.Helper()
	wantRPCError(t, err, 3, "execution reverted", nil)
	got, uerr := abi.UnpackRevert(common.FromHex(errorData(err).(string)))
	if uerr != nil || got != "Mint validation failed: "+reason {
		t.Fatalf("revert %q (%v), want %q", got, uerr, "Mint validation failed: "+reason)
	}
}

// TestMintOverTheWire: a mint of native and WETH to a fresh address from an
// unfunded throwaway key is admitted without gas; the recipient's
// eth_getBalance and its orderbook balances (balanceOf, withdrawableBalance)
// rise by exactly the amounts, with and without depositToClob; the receipt
// shows status 1, gas 21 000 at price 0, a block, and one Mint log per
// entry, which eth_getLogs finds by recipient; the Mint address has code.
func TestMintOverTheWire(t *testing.T) {
	tn := startNode(t, withMint)
	ctx := context.Background()
	to := common.HexToAddress("0x00000000000000000000000000000000000a11ce")
	tx, err := tn.sendMint(t, to, true, mintEntry{native, eth(250)}, mintEntry{weth, eth(3)})
	if err != nil {
		t.Fatalf("mint refused: %v (%v)", err, errorData(err))
	}
	r := tn.waitReceipt(tx.Hash())
	if r.Status != 1 || r.GasUsed != core.TxGas || r.EffectiveGasPrice.Sign() != 0 || r.BlockNumber == nil {
		t.Fatalf("receipt: status %d gas %d price %v block %v", r.Status, r.GasUsed, r.EffectiveGasPrice, r.BlockNumber)
	}
	if len(r.Logs) != 2 {
		t.Fatalf("%d logs, want 2", len(r.Logs))
	}
	for i, want := range []mintEntry{{native, eth(250)}, {weth, eth(3)}} {
		lg := r.Logs[i]
		if lg.Address != mintAddr || len(lg.Topics) != 3 || lg.Topics[0] != common.Hash(core.MintTopic()) ||
			common.BytesToAddress(lg.Topics[1][:]) != want.Token || common.BytesToAddress(lg.Topics[2][:]) != to ||
			len(lg.Data) != 64 || new(big.Int).SetBytes(lg.Data[:32]).Cmp(want.Amount) != 0 || lg.Data[63] != 1 {
			t.Fatalf("log %d: %+v", i, lg)
		}
	}
	if b := tn.balance(t, to); b.Cmp(eth(250)) != 0 {
		t.Fatalf("eth_getBalance %v, want 250 ether", b)
	}
	for _, c := range []struct {
		view  string
		token common.Address
		want  *big.Int
	}{{"balanceOf", native, eth(250)}, {"withdrawableBalance", native, eth(250)}, {"balanceOf", weth, eth(3)}, {"withdrawableBalance", weth, eth(3)}} {
		if got := callView(t, tn, c.view, c.token, to); got.Cmp(c.want) != 0 {
			t.Fatalf("%s(%v) %v, want %v", c.view, c.token, got, c.want)
		}
	}
	// Without depositToClob the same balance moves (the ledger keeps one).
	tx2, err := tn.sendMint(t, to, false, mintEntry{weth, eth(1)})
	if err != nil {
		t.Fatal(err)
	}
	if r := tn.waitReceipt(tx2.Hash()); r.Status != 1 || r.Logs[0].Data[63] != 0 {
		t.Fatalf("second mint: %+v", r)
	}
	if got := callView(t, tn, "balanceOf", weth, to); got.Cmp(eth(4)) != 0 {
		t.Fatalf("WETH %v after the second mint, want 4 ether", got)
	}
	logs := tn.rawCall("eth_getLogs", map[string]any{"address": mintAddr, "topics": []any{nil, nil, common.BytesToHash(to[:])}})
	if n := strings.Count(string(logs), `"transactionHash"`); n != 3 {
		t.Fatalf("eth_getLogs by recipient: %d logs, want 3: %s", n, logs)
	}
	code, err := tn.eth.CodeAt(ctx, mintAddr, nil)
	if err != nil || common.Bytes2Hex(code) != "fe" {
		t.Fatalf("eth_getCode(Mint) %x %v", code, err)
	}
	_, err = tn.eth.CallContract(ctx, ethereum.CallMsg{To: &mintAddr, Data: []byte{1, 2, 3, 4}}, nil)
	wantMintRefusal(t, err, "no view function 0x01020304")
}

// TestMintRefusedOverTheWire: every refusal is code 3 with the exact
// reason and spends nothing; without MintAllowed (ledgerd without --dev)
// every mint is refused; the hourly bound holds whoever signs.
func TestMintRefusedOverTheWire(t *testing.T) {
	off := startNode(t)
	_, err := off.sendMint(t, devAddr(1), true, mintEntry{native, eth(1)})
	wantMintRefusal(t, err, "Minting is disabled")
	if b := off.balance(t, devAddr(1)); b.Cmp(eth(10_000)) != 0 {
		t.Fatalf("a refused mint moved the balance to %v", b)
	}

	tn := startNode(t, withMint)
	to := common.HexToAddress("0x00000000000000000000000000000000000b0b00")
	_, err = tn.sendMint(t, to, true, mintEntry{common.Address{0x77}, eth(1)})
	wantMintRefusal(t, err, "token not mintable 0x7700000000000000000000000000000000000000")
	_, err = tn.sendMint(t, to, true, mintEntry{native, new(big.Int).Add(eth(1_000_000), big.NewInt(1))})
	wantMintRefusal(t, err, "amount above maximum 1000000000000000000000000")
	_, err = tn.sendMint(t, common.Address{}, true, mintEntry{native, eth(1)})
	wantMintRefusal(t, err, "zero recipient")
	mintN(t, tn, to, core.MintsPerAccountHourMax)
	_, err = tn.sendMint(t, to, true, mintEntry{native, eth(1)})
	wantMintRefusal(t, err, fmt.Sprintf("too many mints to this account this hour (max %d)", core.MintsPerAccountHourMax))
	if b := tn.balance(t, to); b.Cmp(eth(core.MintsPerAccountHourMax)) != 0 {
		t.Fatalf("balance %v, want %d ether", b, core.MintsPerAccountHourMax)
	}
	// The next hour of the node's clock serves the recipient again.
	if err := tn.admin.Call(nil, "admin_advanceTime", core.MintHourUs); err != nil {
		t.Fatal(err)
	}
	mintN(t, tn, to, 1)
}

// mintN mints 1 native to `to` n times, each from its own throwaway key.
func mintN(t *testing.T, tn *testNode, to common.Address, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		tx, err := tn.sendMint(t, to, true, mintEntry{native, eth(1)})
		if err != nil {
			t.Fatalf("mint %d: %v (%v)", i, err, errorData(err))
		}
		tn.waitReceipt(tx.Hash())
	}
}

// TestMintSurvivesRestart: the minted balances, the receipts and the
// hour's counters come back after a restart, from the log alone and from a
// snapshot: the recipient that used its hour is still refused.
func TestMintSurvivesRestart(t *testing.T) {
	for _, every := range []int{-1, 1} {
		t.Run(fmt.Sprintf("SnapshotEvery=%d", every), func(t *testing.T) {
			dir := t.TempDir()
			opts := []nodeOption{withMint, func(c *node.Config) { c.DataDir, c.SnapshotEvery = dir, every }}
			tn := startNode(t, opts...)
			to := common.HexToAddress("0x000000000000000000000000000000000000c0de")
			mintN(t, tn, to, core.MintsPerAccountHourMax-1)
			last, err := tn.sendMint(t, to, true, mintEntry{weth, eth(5)})
			if err != nil {
				t.Fatal(err)
			}
			tn.waitReceipt(last.Hash())
			tn.stop()

			tn = startNode(t, opts...) // the manual clock starts at the same time: the same hour
			if b := tn.balance(t, to); b.Cmp(eth(core.MintsPerAccountHourMax-1)) != 0 {
				t.Fatalf("native %v after the restart", b)
			}
			if got := callView(t, tn, "balanceOf", weth, to); got.Cmp(eth(5)) != 0 {
				t.Fatalf("WETH %v after the restart", got)
			}
			if r, err := tn.eth.TransactionReceipt(context.Background(), last.Hash()); err != nil || r.Status != 1 || len(r.Logs) != 1 {
				t.Fatalf("receipt after the restart: %+v %v", r, err)
			}
			_, err = tn.sendMint(t, to, true, mintEntry{native, eth(1)})
			wantMintRefusal(t, err, fmt.Sprintf("too many mints to this account this hour (max %d)", core.MintsPerAccountHourMax))
		})
	}
}
