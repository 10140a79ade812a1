package rpc_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

var recoveryABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[{"name":"recover","type":"function","inputs":[{"name":"txHash","type":"bytes32"},{"name":"nonce","type":"uint64"}],"outputs":[]}]`))
	if err != nil {
		panic(err)
	}
	return a
}()

// targetTx is the live API's TargetTx; TxHash is the same hash under the
// name the live recovery guide reads.
type targetTx struct {
	Hash   common.Hash `json:"hash"`
	TxHash common.Hash `json:"txHash"`
	Nonce  uint64      `json:"nonce"`
}

// targetOf is the TargetTx naming h at nonce.
func targetOf(h common.Hash, nonce uint64) targetTx { return targetTx{h, h, nonce} }

// wire is one transport's clients: plain and authorized.
type wire struct {
	name       string
	rpc, admin *gethrpc.Client
	eth        *ethclient.Client
}

func wires(t *testing.T, tn *testNode) []wire {
	t.Helper()
	ctx := context.Background()
	ws, err := gethrpc.DialContext(ctx, tn.ws)
	if err != nil {
		t.Fatal(err)
	}
	wsAdmin, err := gethrpc.DialOptions(ctx, tn.ws, gethrpc.WithHeader("Authorization", "Bearer "+testAdminToken))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close(); wsAdmin.Close() })
	return []wire{{"HTTP", tn.rpc, tn.admin, tn.eth}, {"WS", ws, wsAdmin, ethclient.NewClient(ws)}}
}

// recoverTx signs recover(target) at nonce, to the Recovery application.
func recoverTx(t *testing.T, key *ecdsa.PrivateKey, nonce uint64, target targetTx, value *big.Int) *types.Transaction {
	t.Helper()
	data, err := recoveryABI.Pack("recover", target.Hash, target.Nonce)
	if err != nil {
		t.Fatal(err)
	}
	to := common.Address(core.RecoveryAddress)
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(chainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chainID), Nonce: nonce, GasTipCap: gwei, GasFeeCap: new(big.Int).Mul(gwei, big.NewInt(3)),
		Gas: 21000, To: &to, Value: value, Data: data,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// wantLocked asserts err is 999 `Account locked` naming target.
func wantLocked(t *testing.T, err error, target targetTx) {
	t.Helper()
	wantRPCError(t, err, 999, "Account locked", nil)
	data, _ := errorData(err).(map[string]any)
	if len(data) != 2 || data["recovery_target"] != target.Hash.Hex() || data["recovery_target_nonce"] != float64(target.Nonce) {
		t.Fatalf("999 data %#v, want recovery_target %s and recovery_target_nonce %d", errorData(err), target.Hash.Hex(), target.Nonce)
	}
}

func (w *wire) call(t *testing.T, c *gethrpc.Client, out any, method string, args ...any) {
	t.Helper()
	if err := c.CallContext(context.Background(), out, method, args...); err != nil {
		t.Fatalf("%s %s: %v", w.name, method, err)
	}
}

// send sends tx and waits for its receipt, which must succeed.
func (w *wire) send(t *testing.T, tn *testNode, tx *types.Transaction) {
	t.Helper()
	if err := w.eth.SendTransaction(context.Background(), tx); err != nil {
		t.Fatalf("%s: %v", w.name, err)
	}
	if r := tn.waitReceipt(tx.Hash()); r.Status != 1 {
		t.Fatalf("%s: receipt status %d", w.name, r.Status)
	}
}

// TestLockAndRecover: admin_lockAccount locks an account; every transfer
// gets 999 with the target until a signed recover(...) of that target
// lands (receipt status 1); then the account transacts at the next nonce.
// Over HTTP and WebSocket.
func TestLockAndRecover(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	fee := new(big.Int).Mul(gwei, big.NewInt(3))
	for i, w := range wires(t, tn) {
		key, from, to := node.DevKey(3+i), devAddr(3+i), devAddr(9)
		var none json.RawMessage
		w.call(t, w.rpc, &none, "svc_getAccountInfo", from)
		if string(none) != "null" {
			t.Fatalf("%s: account info before any transaction %s, want null", w.name, none)
		}
		first := dynTx(t, key, chainID, 0, to, big.NewInt(1), gwei, fee)
		w.send(t, tn, first)
		w.call(t, w.rpc, &none, "svc_getRecoveryTargetTx", from)
		if string(none) != "null" {
			t.Fatalf("%s: recovery target of an open account %s, want null", w.name, none)
		}
		var info struct {
			Next     uint64      `json:"next_finalized_nonce"`
			Expected uint64      `json:"expected_nonce"`
			Last     common.Hash `json:"last_finalized_tx"`
		}
		w.call(t, w.rpc, &info, "svc_getAccountInfo", from)
		var last uint64
		w.call(t, w.rpc, &last, "svc_getLastFinalizedNonce", from)
		if info.Next != 1 || info.Expected != 1 || info.Last != first.Hash() || last != 0 {
			t.Fatalf("%s: account info %+v, last finalized nonce %d", w.name, info, last)
		}
		// An open account's recovery is refused.
		err := w.eth.SendTransaction(ctx, recoverTx(t, key, 1, targetOf(first.Hash(), 0), nil))
		wantRPCError(t, err, -32000, "transaction validation failed", "Recovery validation failed: account is not locked")

		var locked targetTx
		w.call(t, w.admin, &locked, "admin_lockAccount", map[string]any{"address": from})
		want := targetOf(first.Hash(), 0)
		if locked != want {
			t.Fatalf("%s: admin_lockAccount answered %+v, want %+v", w.name, locked, want)
		}
		wantLocked(t, w.eth.SendTransaction(ctx, dynTx(t, key, chainID, 1, to, big.NewInt(1), gwei, fee)), want)
		var target targetTx
		w.call(t, w.rpc, &target, "svc_getRecoveryTargetTx", from)
		if target != want {
			t.Fatalf("%s: recovery target %+v, want %+v", w.name, target, want)
		}
		// Refused recoveries change nothing.
		err = w.eth.SendTransaction(ctx, recoverTx(t, key, 1, targetOf(first.Hash(), 1), nil))
		wantRPCError(t, err, -32000, "transaction validation failed", "Recovery validation failed: not the recovery target")
		err = w.eth.SendTransaction(ctx, recoverTx(t, key, 1, target, big.NewInt(1)))
		wantRPCError(t, err, -32000, "transaction validation failed", "Recovery validation failed: value must be zero")

		rec := recoverTx(t, key, 1, target, nil)
		w.send(t, tn, rec)
		// A recovery transaction is in no block (the spec).
		var raw struct {
			BlockNumber, BlockHash *string
			Status                 string
		}
		w.call(t, w.rpc, &raw, "eth_getTransactionReceipt", rec.Hash())
		if raw.BlockNumber != nil || raw.BlockHash != nil || raw.Status != "0x1" {
			t.Fatalf("%s: recovery receipt %+v, want status 1 in no block", w.name, raw)
		}
		w.call(t, w.rpc, &none, "svc_getRecoveryTargetTx", from)
		if string(none) != "null" {
			t.Fatalf("%s: recovery target after the recovery %s, want null", w.name, none)
		}
		if n, err := w.eth.NonceAt(ctx, from, nil); err != nil || n != 2 {
			t.Fatalf("%s: nonce after the recovery %d %v, want 2", w.name, n, err)
		}
		w.send(t, tn, dynTx(t, key, chainID, 2, to, big.NewInt(1), gwei, fee))
	}
}

// TestLockAccountRefusals: admin_lockAccount needs authorization and an
// account with a transaction.
func TestLockAccountRefusals(t *testing.T) {
	tn := startNode(t)
	var out json.RawMessage
	ctx := context.Background()
	err := tn.admin.CallContext(ctx, &out, "admin_lockAccount", map[string]any{"address": devAddr(7)})
	wantRPCError(t, err, -32602, "Invalid params", "the account has no transaction to be its recovery target: it cannot be locked")
	err = tn.rpc.CallContext(ctx, &out, "admin_lockAccount", map[string]any{"address": devAddr(7)})
	wantRPCError(t, err, -32600, "Invalid Request", nil)
	err = tn.admin.CallContext(ctx, &out, "admin_lockAccount", devAddr(7))
	wantRPCError(t, err, -32602, "Invalid params", "admin_lockAccount needs an object {address}")
}

// TestEquivocationLocks: a second, different transaction at the nonce of
// one that is not yet durable (the log is held) locks the account and is
// answered 999; the first one lands; the lock survives a restart; a
// recovery opens the account.
func TestEquivocationLocks(t *testing.T) {
	dir := t.TempDir()
	gate := make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(gate)
		}
	}()
	tn := startNode(t, func(c *node.Config) {
		c.DataDir = dir
		c.BeforeAppend = func() error { <-gate; return nil }
	})
	ctx := context.Background()
	key, from, to, fee := node.DevKey(5), devAddr(5), devAddr(9), new(big.Int).Mul(gwei, big.NewInt(3))
	first := dynTx(t, key, chainID, 0, to, big.NewInt(1), gwei, fee)
	sent := make(chan error, 1)
	go func() { sent <- tn.eth.SendTransaction(ctx, first) }()
	// The first send answers only once durable: wait until it is applied.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if n, err := tn.eth.PendingNonceAt(ctx, from); err != nil || n == 1 || time.Now().After(deadline) {
			break
		}
	}
	want := targetOf(first.Hash(), 0)
	wantLocked(t, tn.eth.SendTransaction(ctx, dynTx(t, key, chainID, 0, to, big.NewInt(2), gwei, fee)), want)
	close(gate)
	released = true
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if r := tn.waitReceipt(first.Hash()); r.Status != 1 {
		t.Fatal("the first transaction failed")
	}
	wantLocked(t, tn.eth.SendTransaction(ctx, dynTx(t, key, chainID, 1, to, big.NewInt(1), gwei, fee)), want)

	tn.stop()
	tn = startNode(t, func(c *node.Config) { c.DataDir = dir })
	wantLocked(t, tn.eth.SendTransaction(ctx, dynTx(t, key, chainID, 1, to, big.NewInt(1), gwei, fee)), want)
	var target targetTx
	if err := tn.rpc.CallContext(ctx, &target, "svc_getRecoveryTargetTx", from); err != nil || target != want {
		t.Fatalf("recovery target after a restart %+v %v, want %+v", target, err, want)
	}
	w := wire{"HTTP", tn.rpc, tn.admin, tn.eth}
	var last uint64 // replayed from the log: attested before the restart
	if w.call(t, w.rpc, &last, "svc_getLastFinalizedNonce", from); last != 0 {
		t.Fatalf("last finalized nonce after a restart %d, want 0", last)
	}
	w.send(t, tn, recoverTx(t, key, 1, target, nil))
	transfer := dynTx(t, key, chainID, 2, to, big.NewInt(1), gwei, fee)
	w.send(t, tn, transfer)

	// After a restart from a snapshot the account is open, and its newest
	// transaction (in the snapshot, not replayed) is its last finalized.
	var seq json.RawMessage
	w.call(t, w.admin, &seq, "admin_snapshot")
	tn.stop()
	tn = startNode(t, func(c *node.Config) { c.DataDir = dir })
	w = wire{"HTTP", tn.rpc, tn.admin, tn.eth}
	var info struct {
		Next     uint64      `json:"next_finalized_nonce"`
		Expected uint64      `json:"expected_nonce"`
		Last     common.Hash `json:"last_finalized_tx"`
	}
	if w.call(t, w.rpc, &info, "svc_getAccountInfo", from); info.Next != 3 || info.Expected != 3 || info.Last != transfer.Hash() {
		t.Fatalf("account info after a restart from a snapshot %+v, want 3, 3, %s", info, transfer.Hash())
	}
	w.send(t, tn, dynTx(t, key, chainID, 3, to, big.NewInt(1), gwei, fee))
}

// TestRecoveryBlockCompat: with --compat a recovery's receipt is in its
// attestation batch's block (strict decoders refuse a receipt in no block,
// and would wait for it forever).
func TestRecoveryBlockCompat(t *testing.T) {
	tn := startNodeWith(t, nodeSetup{compat: true})
	w := wire{"HTTP", tn.rpc, tn.admin, tn.eth}
	key, from, fee := node.DevKey(6), devAddr(6), new(big.Int).Mul(gwei, big.NewInt(3))
	w.send(t, tn, dynTx(t, key, chainID, 0, devAddr(9), big.NewInt(1), gwei, fee))
	var target targetTx
	w.call(t, w.admin, &target, "admin_lockAccount", map[string]any{"address": from})
	rec := recoverTx(t, key, 1, target, nil)
	w.send(t, tn, rec)
	if r := tn.waitReceipt(rec.Hash()); r.BlockNumber == nil || r.BlockNumber.Sign() == 0 || r.BlockHash == (common.Hash{}) {
		t.Fatalf("compat recovery receipt in block %v %s", r.BlockNumber, r.BlockHash)
	}
}
