package rpc_test

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// Withdrawals through the whole node (docs/bridge.md §2-§3): signed with
// dev keys, sent with ethclient, executed at the batch admin_advanceTime
// runs.

var bridgeAddr = common.Address(core.BridgeAddress)

func withBridge(c *node.Config) { c.Bridge = node.DevBridgeConfig() }

// signWithdraw signs a withdraw call to the Bridge at gas core.TxGas and a
// 1 gwei fee cap.
func signWithdraw(t *testing.T, key *ecdsa.PrivateKey, nonce uint64, data []byte, value *big.Int) *types.Transaction {
	t.Helper()
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(chainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chainID), Nonce: nonce, GasTipCap: new(big.Int), GasFeeCap: gwei, Gas: core.TxGas,
		To: &bridgeAddr, Data: data, Value: value,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

func withdrawCall(token common.Address, to common.Address, amount *big.Int, deadline *big.Int) []byte {
	return core.AppendWithdrawCall(nil, core.Address(token), core.Address(to), uint256.MustFromBig(amount), deadline.Uint64())
}

// TestWithdrawOverTheWire: a native and a WETH withdrawal are accepted
// (status 1, no block yet, no fee), land in the withdrawal batch's tick
// with an orderbook intent of the same interval (same blockNumber and
// blockHash), and reduce eth_getBalance and balanceOf by exactly their
// amounts.
func TestWithdrawOverTheWire(t *testing.T) {
	tn := startNode(t, withBridge)
	ctx := context.Background()
	key, addr := node.DevKey(0), devAddr(0)
	recipient := common.HexToAddress("0x00000000000000000000000000000000000000ca")
	native0, weth0 := tn.balance(t, addr), callView(t, tn, "balanceOf", weth, addr)

	batch := tn.nextDeadline()
	var hashes []common.Hash
	for i, w := range []struct {
		token  common.Address
		amount *big.Int
	}{{native, eth(3)}, {weth, eth(2)}} {
		tx := signWithdraw(t, key, uint64(i), withdrawCall(w.token, recipient, w.amount, batch), new(big.Int))
		if err := tn.eth.SendTransaction(ctx, tx); err != nil {
			t.Fatalf("withdrawal %d refused: %v (%v)", i, err, errorData(err))
		}
		r := tn.waitReceipt(tx.Hash())
		if r.Status != 1 || r.BlockNumber != nil || r.EffectiveGasPrice.Sign() != 0 {
			t.Fatalf("admitted withdrawal's receipt: status %d block %v price %v, want 1, null, 0", r.Status, r.BlockNumber, r.EffectiveGasPrice)
		}
		hashes = append(hashes, tx.Hash())
	}
	if b := tn.balance(t, addr); b.Cmp(native0) != 0 {
		t.Fatalf("admission moved %v (no fee, nothing debited before the batch)", new(big.Int).Sub(native0, b))
	}
	intent := tn.sender(t, 1).mustSend(t, tn.submit(t, wethBook, eth(1), eth(1000), 0, 0, 0))

	tn.tick(t)
	var block common.Hash
	for _, h := range append(hashes, intent.TxHash) {
		r, err := tn.eth.TransactionReceipt(ctx, h)
		if err != nil || r.Status != 1 || r.BlockNumber == nil || r.BlockNumber.Cmp(batch) != 0 {
			t.Fatalf("receipt %s after the batch: %+v %v, want block %v", h, r, err, batch)
		}
		if block == (common.Hash{}) {
			block = r.BlockHash
		}
		if r.BlockHash != block || block == (common.Hash{}) {
			t.Fatalf("receipt %s in block %s, the batch's is %s", h, r.BlockHash, block)
		}
	}
	if b := tn.balance(t, addr); new(big.Int).Sub(native0, b).Cmp(eth(3)) != 0 {
		t.Fatalf("eth_getBalance fell by %v, want 3 ether", new(big.Int).Sub(native0, b))
	}
	if b := callView(t, tn, "balanceOf", weth, addr); new(big.Int).Sub(weth0, b).Cmp(eth(2)) != 0 {
		t.Fatalf("balanceOf(WETH) fell by %v, want 2 ether", new(big.Int).Sub(weth0, b))
	}
}

// TestWithdrawRefusedOverTheWire: every Bridge refusal answers code 3,
// execution reverted, with Error("Bridge validation failed: <reason>") in
// data; nothing is spent. A withdraw inside submitBatch or delegated is the
// orderbook's refusal.
func TestWithdrawRefusedOverTheWire(t *testing.T) {
	tn := startNode(t, withBridge)
	ctx := context.Background()
	key, addr := node.DevKey(2), devAddr(2)
	to := devAddr(3)
	d := tn.nextDeadline()
	plus := func(v *big.Int, n int64) *big.Int { return new(big.Int).Add(v, big.NewInt(n)) }
	f := func(reason string, data []byte, value *big.Int) {
		t.Helper()
		err := tn.eth.SendTransaction(ctx, signWithdraw(t, key, 0, data, value))
		wantRPCError(t, err, 3, "execution reverted", nil)
		got, uerr := abi.UnpackRevert(common.FromHex(errorData(err).(string)))
		if uerr != nil || got != "Bridge validation failed: "+reason {
			t.Fatalf("revert %q (%v), want %q", got, uerr, "Bridge validation failed: "+reason)
		}
	}
	good := withdrawCall(native, to, eth(1), d)
	zero := new(big.Int)
	f("malformed call, want withdraw(address,address,uint256,uint128)", good[:len(good)-1], zero)
	f("unknown function selector 0x"+common.Bytes2Hex(crypto.Keccak256([]byte("deposit(address,uint256,address)"))[:4]),
		append(crypto.Keccak256([]byte("deposit(address,uint256,address)"))[:4], good[4:]...), zero)
	f("value must be zero", good, big.NewInt(1))
	f("token not bridged", withdrawCall(common.Address{0x77}, to, eth(1), d), zero)
	f("zero recipient", withdrawCall(native, common.Address{}, eth(1), d), zero)
	f("zero amount", withdrawCall(native, to, zero, d), zero)
	f("amount not a whole number of bridged-chain units (multiple of 1000000000000)", withdrawCall(native, to, plus(eth(1), 1), d), zero)
	f("amount below minimum 1000000", withdrawCall(native, to, big.NewInt(1e17), d), zero)
	f("amount above maximum 10000000000", withdrawCall(common.Address(node.DevWBTC), to, eth(101), d), zero)
	f("deadline not aligned to the auction interval (500000 µs)", withdrawCall(native, to, eth(1), plus(d, 1)), zero)
	f("deadline passed", withdrawCall(native, to, eth(1), plus(d, -intervalUs)), zero)

	// Inside the orderbook's envelopes: the orderbook's own reason (the
	// inner call is decoded before the delegation's signature is checked).
	s := tn.sender(t, 2)
	for _, data := range [][]byte{pack(t, "submitBatch", [][]byte{good}), pack(t, "delegated", to, uint64(1<<62), make([]byte, 65), good)} {
		_, err := s.send(t, data)
		wantRPCError(t, err, 3, "execution reverted", nil)
		got, _ := abi.UnpackRevert(common.FromHex(errorData(err).(string)))
		if want := "CLOB validation failed: withdraw cannot be batched or delegated"; got != want {
			t.Fatalf("revert %q, want %q", got, want)
		}
	}
	if n, _ := tn.eth.NonceAt(ctx, addr, nil); n != 0 {
		t.Fatalf("nonce after refusals %d", n)
	}
}

// TestWithdrawSurvivesRestart: a withdrawal executed before a restart keeps
// its batch's block, and one waiting for its batch executes after it, from
// a replay of the log and from a snapshot alike.
func TestWithdrawSurvivesRestart(t *testing.T) {
	for _, every := range []int{-1, 1} {
		t.Run(fmt.Sprintf("SnapshotEvery=%d", every), func(t *testing.T) { withdrawRestart(t, every) })
	}
}

func withdrawRestart(t *testing.T, every int) {
	dir := t.TempDir()
	opts := []nodeOption{withBridge, func(c *node.Config) { c.DataDir, c.SnapshotEvery = dir, every }}
	tn := startNode(t, opts...)
	key, addr := node.DevKey(4), devAddr(4)
	native0 := tn.balance(t, addr)
	send := func(nonce uint64, amount int64) (common.Hash, *big.Int) {
		batch := tn.nextDeadline()
		tx := signWithdraw(t, key, nonce, withdrawCall(native, devAddr(5), eth(amount), batch), new(big.Int))
		if err := tn.eth.SendTransaction(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
		tn.waitReceipt(tx.Hash())
		return tx.Hash(), batch
	}
	first, firstBatch := send(0, 1)
	tn.tick(t)
	second, secondBatch := send(1, 2)
	tn.stop()

	tn = startNode(t, opts...)
	for tn.clock.NowMicros() < secondBatch.Int64() { // a new manual clock starts at genesis time
		tn.tick(t)
	}
	for _, c := range []struct {
		h     common.Hash
		batch *big.Int
	}{{first, firstBatch}, {second, secondBatch}} {
		r, err := tn.eth.TransactionReceipt(context.Background(), c.h)
		if err != nil || r.BlockNumber == nil || r.BlockNumber.Cmp(c.batch) != 0 {
			t.Fatalf("snapshots every %d: receipt %+v %v, want block %v", every, r, err, c.batch)
		}
	}
	if b := tn.balance(t, addr); new(big.Int).Sub(native0, b).Cmp(eth(3)) != 0 {
		t.Fatalf("snapshots every %d: balance fell by %v, want 3 ether", every, new(big.Int).Sub(native0, b))
	}
	tn.stop()
}
