package rpc_test

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
)

// The shapes the spec gives and the ones --compat serves instead, pinned
// both ways through go-ethereum (docs/decisions.md, "Client
// compatibility"), and the gas rule that makes eth_estimateGas's answer
// enough for every call.

// TestBlockShapeByMode: the spec's block has a zero-padded difficulty,
// which go-ethereum's header decoder refuses; --compat serves 0x0, and
// HeaderByNumber (so bind's default fee lookup) works.
func TestBlockShapeByMode(t *testing.T) {
	ctx := context.Background()
	spec := startNode(t)
	if _, err := spec.eth.HeaderByNumber(ctx, nil); err == nil {
		t.Fatal("go-ethereum decoded the spec's zero-padded difficulty: the spec shape changed")
	}
	var block map[string]any
	if err := json.Unmarshal(spec.rawCall("eth_getBlockByNumber", "latest", false), &block); err != nil || block["difficulty"] != "0x0000000000000000" {
		t.Fatalf("spec block difficulty %v (%v)", block["difficulty"], err)
	}

	compat := startNodeWith(t, nodeSetup{compat: true})
	h, err := compat.eth.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatalf("HeaderByNumber in compat mode: %v", err)
	}
	if h.Difficulty.Sign() != 0 || h.BaseFee.Cmp(gwei) != 0 || h.Number.Sign() <= 0 {
		t.Fatalf("compat header: difficulty %v base fee %v number %v", h.Difficulty, h.BaseFee, h.Number)
	}
}

// blockAt is the block number of time us in either mode.
func blockAt(us int64, compat bool) uint64 {
	if compat {
		return uint64(us / rpc.CompatBlockUs)
	}
	return uint64(us)
}

// TestTransferShapesByMode: a plain transfer is in the block of its
// attestation batch in both modes, numbered by its time (µs, or the compat
// slot); transactionIndex is null or 0x0.
func TestTransferShapesByMode(t *testing.T) {
	for _, compat := range []bool{false, true} {
		tn := startNodeWith(t, nodeSetup{compat: compat})
		ctx := context.Background()
		tx := dynTx(t, node.DevKey(0), chainID, 0, devAddr(5), big.NewInt(1), gwei, new(big.Int).Mul(gwei, big.NewInt(3)))
		if err := tn.eth.SendTransaction(ctx, tx); err != nil {
			t.Fatal(err)
		}
		rcpt := tn.waitReceipt(tx.Hash())
		var att struct {
			Meta struct {
				Attestations []struct {
					Timestamp int64 `json:"timestamp"`
				} `json:"attestations"`
			} `json:"svc_metadata"`
		}
		if err := json.Unmarshal(tn.rawCall("eth_getTransactionReceipt", tx.Hash()), &att); err != nil || len(att.Meta.Attestations) == 0 {
			t.Fatalf("attestations %+v %v", att, err)
		}
		if want := blockAt(att.Meta.Attestations[0].Timestamp, compat); rcpt.BlockNumber.Uint64() != want {
			t.Fatalf("compat=%v blockNumber %v, want %d", compat, rcpt.BlockNumber, want)
		}
		if head, err := tn.eth.BlockNumber(ctx); err != nil || head != blockAt(tn.clock.NowMicros(), compat) {
			t.Fatalf("compat=%v eth_blockNumber %d (%v), clock %d", compat, head, err, tn.clock.NowMicros())
		}
		var raw struct {
			TxIndex     *string     `json:"transactionIndex"`
			BlockNumber string      `json:"blockNumber"`
			BlockHash   common.Hash `json:"blockHash"`
		}
		for _, method := range []string{"eth_getTransactionReceipt", "eth_getTransactionByHash"} {
			if err := json.Unmarshal(tn.rawCall(method, tx.Hash()), &raw); err != nil {
				t.Fatal(err)
			}
			if (raw.TxIndex == nil) == compat || (compat && *raw.TxIndex != "0x0") {
				t.Fatalf("compat=%v %s transactionIndex %v", compat, method, raw.TxIndex)
			}
			if raw.BlockHash != rcpt.BlockHash || raw.BlockHash == (common.Hash{}) || raw.BlockNumber != "0x"+rcpt.BlockNumber.Text(16) {
				t.Fatalf("compat=%v %s block %s %s, receipt's %s %v", compat, method, raw.BlockNumber, raw.BlockHash, rcpt.BlockHash, rcpt.BlockNumber)
			}
		}
	}
}

// TestIntentReceiptByMode: before its auction tick an intent is in no
// block. The spec serves its receipt with blockNumber null; compat serves
// no receipt yet (strict decoders refuse a null blockNumber and wait on a
// missing receipt). After the tick both name the tick.
func TestIntentReceiptByMode(t *testing.T) {
	for _, compat := range []bool{false, true} {
		tn := startNodeWith(t, nodeSetup{compat: compat})
		ctx := context.Background()
		tx := tn.sender(t, 0).sign(t, tn.submit(t, wethBook, eth(1), eth(2000), 0, 0, 0), nil, core.TxGas)
		// With a timeout the answer waits for the attestation, so the
		// receipt exists in the node from here on.
		if err := tn.rpc.CallContext(ctx, nil, "eth_sendRawTransaction", hexBytes(t, tx), 10_000); err != nil {
			t.Fatal(err)
		}
		var rcpt map[string]any
		if err := tn.rpc.CallContext(ctx, &rcpt, "eth_getTransactionReceipt", tx.Hash()); err != nil {
			t.Fatal(err)
		}
		switch {
		case compat && rcpt != nil:
			t.Fatalf("compat: an intent before its tick has a receipt %v", rcpt)
		case !compat && (rcpt == nil || rcpt["blockNumber"] != nil || rcpt["status"] != "0x1"):
			t.Fatalf("spec: an intent before its tick: receipt %v, want one with blockNumber null", rcpt)
		}
		if _, pending, err := tn.eth.TransactionByHash(ctx, tx.Hash()); err != nil || !pending {
			t.Fatalf("compat=%v: before its tick the intent is pending=%v (%v), want true", compat, pending, err)
		}

		tn.tick(t)
		r := tn.waitReceipt(tx.Hash())
		if want := blockAt(tn.clock.NowMicros(), compat); r.BlockNumber == nil || r.BlockNumber.Uint64() != want {
			t.Fatalf("compat=%v: after the tick blockNumber %v, want %d", compat, r.BlockNumber, want)
		}
		if _, pending, err := tn.eth.TransactionByHash(ctx, tx.Hash()); err != nil || pending {
			t.Fatalf("compat=%v: after its tick the intent is pending=%v (%v)", compat, pending, err)
		}
	}
}

// TestGasEstimateIsAdmitted: eth_estimateGas answers 21000 for an orderbook
// call, the call is admitted with it and uses exactly it; one gas less is
// refused with the spec's reason.
func TestGasEstimateIsAdmitted(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	alice := tn.sender(t, 0)
	data := tn.submit(t, wethBook, eth(1), eth(2000), 0, 0, 0)
	gas, err := tn.eth.EstimateGas(ctx, ethereum.CallMsg{From: alice.addr(), To: &orderbookAddr, Data: data})
	if err != nil || gas != core.TxGas {
		t.Fatalf("estimate %d (%v), want %d", gas, err, core.TxGas)
	}

	short := alice.sign(t, data, nil, gas-1)
	wantRPCError(t, tn.eth.SendTransaction(ctx, short), -32000, "transaction validation failed", "Insufficient balance")

	r := alice.mustSend(t, data) // signed with Gas = the estimate
	if r.GasUsed != gas || r.CumulativeGasUsed != gas {
		t.Fatalf("gasUsed %d cumulative %d, want %d", r.GasUsed, r.CumulativeGasUsed, gas)
	}
}

func hexBytes(t testing.TB, tx *types.Transaction) string {
	t.Helper()
	b, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return "0x" + common.Bytes2Hex(b)
}

// TestCompatHeadsAndLogBounds: with --compat, newHeads numbers a tick's
// header by its slot, like receipts, and eth_getLogs reads fromBlock and
// toBlock as slots of the logs' attestation time (in the spec's mode they
// are seconds).
func TestCompatHeadsAndLogBounds(t *testing.T) {
	tn := startNodeWith(t, nodeSetup{compat: true})
	ctx := context.Background()
	eth, err := ethclient.DialContext(ctx, tn.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer eth.Close()
	heads := make(chan *types.Header, 4)
	hsub, err := eth.SubscribeNewHead(ctx, heads)
	if err != nil {
		t.Fatal(err)
	}
	defer hsub.Unsubscribe()

	tx := tn.sender(t, 0).sign(t, tn.submit(t, wethBook, eth18(1), eth18(2000), 0, 0, 0), nil, core.TxGas)
	if err := tn.eth.SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	tn.tick(t)
	slot := blockAt(tn.clock.NowMicros(), true)
	select {
	case h := <-heads:
		if h.Number.Uint64() != slot {
			t.Fatalf("newHeads number %v, want slot %d", h.Number, slot)
		}
	case err := <-hsub.Err():
		t.Fatal(err)
	case <-time.After(5 * time.Second):
		t.Fatal("no newHeads notification")
	}

	// The tick's record is its own block (the order's receipt names it),
	// attested at the tick's time (the manual clock stands still): its
	// SolutionExecuted log is found in the slot the header carried.
	tn.waitReceipt(tn.waitReceipt(tx.Hash()).BlockHash)
	for _, q := range []struct {
		from, to uint64
		want     bool
	}{{slot, slot, true}, {slot + 1, slot + 2, false}} {
		logs, err := tn.eth.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(q.from), ToBlock: new(big.Int).SetUint64(q.to),
			Addresses: []common.Address{orderbookAddr}, Topics: [][]common.Hash{{common.Hash(core.TopicSolutionExecuted)}}})
		if err != nil {
			t.Fatal(err)
		}
		if found := len(logs) > 0; found != q.want {
			t.Fatalf("blocks [%d, %d]: found the tick's log %v, want %v", q.from, q.to, found, q.want)
		}
	}
}

// TestEnshrinedCode: an enshrined application's address has code (one
// INVALID opcode), so go-ethereum's bind will call it; other addresses have
// none.
func TestEnshrinedCode(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	for _, a := range []common.Address{orderbookAddr, common.Address(core.BridgeAddress), common.Address(core.RecoveryAddress), devAddr(0)} {
		code, err := tn.eth.CodeAt(ctx, a, nil)
		if want := a != devAddr(0); err != nil || (len(code) > 0) != want {
			t.Fatalf("code at %s: %x (%v), want code %v", a, code, err, want)
		}
	}
}
