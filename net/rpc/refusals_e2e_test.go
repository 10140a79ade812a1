package rpc_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// TestRefusalMessagesByMode: every -32000 refusal of eth_sendRawTransaction
// through go-ethereum's client, in both modes. The spec's mode answers the
// spec's message; --compat go-ethereum's, the text ethers and viem classify
// (errors.go gethMessage, docs/compat.md); data is the spec's reason in
// both.
func TestRefusalMessagesByMode(t *testing.T) {
	const failed = "transaction validation failed"
	key := node.DevKey(6)
	from := devAddr(6).Hex()
	to := devAddr(7)
	fee := new(big.Int).Mul(gwei, big.NewInt(2))
	huge := new(big.Int).Mul(big.NewInt(20_000), big.NewInt(1e18))
	poor, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	withGas := func(gas uint64) *types.Transaction {
		tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(chainID)), &types.DynamicFeeTx{
			ChainID: big.NewInt(chainID), Nonce: 1, GasTipCap: gwei, GasFeeCap: fee, Gas: gas, To: &to, Value: big.NewInt(1),
		})
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	unprotected, err := types.SignNewTx(key, types.HomesteadSigner{}, &types.LegacyTx{
		Nonce: 1, GasPrice: fee, Gas: core.TxGas, To: &to, Value: big.NewInt(1),
	})
	if err != nil {
		t.Fatal(err)
	}
	recovery := common.Address(core.RecoveryAddress)
	cases := []struct {
		name   string
		tx     *types.Transaction
		data   string
		compat string // go-ethereum's message; "" keeps the spec's
	}{
		{"past nonce", dynTx(t, key, chainID, 0, to, big.NewInt(2), gwei, fee),
			"Past nonce: tx nonce 0, expected 1", "nonce too low: address " + from + ", tx: 0 state: 1"},
		{"future nonce", dynTx(t, key, chainID, 5, to, big.NewInt(1), gwei, fee),
			"Future nonce: tx nonce 5, expected 1", "nonce too high: address " + from + ", tx: 5 state: 1"},
		{"chain id", dynTx(t, key, 1, 1, to, big.NewInt(1), gwei, fee),
			"Invalid chain ID: 1", "invalid sender: invalid chain id for signer"},
		{"unprotected", unprotected,
			"Invalid chain ID: 0", "only replay-protected (EIP-155) transactions allowed over RPC"},
		{"balance", dynTx(t, key, chainID, 1, to, huge, gwei, fee),
			"Insufficient balance", "insufficient funds for gas * price + value"},
		{"no account", dynTx(t, poor, chainID, 0, to, big.NewInt(1), gwei, fee),
			"Insufficient balance", "insufficient funds for gas * price + value"},
		{"gas below 21000", withGas(core.TxGas - 1),
			"Insufficient balance", "intrinsic gas too low: gas 20999, minimum needed 21000"},
		{"fee cap below base fee", dynTx(t, key, chainID, 1, to, big.NewInt(1), big.NewInt(0), big.NewInt(7)),
			"Underpriced tx: max_fee_per_gas 7 < base fee 1000000000",
			"max fee per gas less than block base fee: address " + from + ", maxFeePerGas: 7, baseFee: 1000000000"},
		{"tip above fee cap", dynTx(t, key, chainID, 1, to, big.NewInt(1), new(big.Int).Mul(fee, big.NewInt(2)), fee),
			"Invalid fees: max_priority_fee_per_gas exceeds max_fee_per_gas",
			"max priority fee per gas higher than max fee per gas: address " + from +
				", maxPriorityFeePerGas: 4000000000, maxFeePerGas: 2000000000"},
		{"gas above the cap", withGas(core.TxGasLimitMax + 1),
			"Gas limit too high: gas 30000001 > 30000000", "gas limit reached (cap: 30000000, tx: 30000001)"},
		{"recovery", dynTx(t, key, chainID, 1, recovery, big.NewInt(0), gwei, fee),
			"Recovery validation failed: account is not locked", ""},
	}
	for _, compat := range []bool{false, true} {
		tn := startNodeWith(t, nodeSetup{compat: compat})
		ctx := context.Background()
		send := func(tx *types.Transaction) error { return tn.eth.SendTransaction(ctx, tx) }
		first := dynTx(t, key, chainID, 0, to, big.NewInt(1), gwei, fee)
		if err := send(first); err != nil {
			t.Fatal(err)
		}
		tn.waitReceipt(first.Hash())
		for _, c := range cases {
			msg := failed
			if compat && c.compat != "" {
				msg = c.compat
			}
			t.Logf("compat=%v %s", compat, c.name)
			wantRPCError(t, send(c.tx), -32000, msg, c.data)
		}
		// Nothing was consumed by the refusals.
		if n, err := tn.eth.NonceAt(ctx, devAddr(6), nil); err != nil || n != 1 {
			t.Fatalf("compat=%v: nonce after the refusals %d (%v)", compat, n, err)
		}
	}
}
