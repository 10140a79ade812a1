package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
)

func TestEthclientReads(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	id, err := tn.eth.ChainID(ctx)
	if err != nil || id.Uint64() != 0x50d {
		t.Fatalf("chain id %v %v", id, err)
	}
	if nid, err := tn.eth.NetworkID(ctx); err != nil || nid.Uint64() != 1293 {
		t.Fatalf("network id %v %v", nid, err)
	}
	bal, err := tn.eth.BalanceAt(ctx, devAddr(0), nil)
	if err != nil || bal.Cmp(node.DevBalanceWei.ToBig()) != 0 {
		t.Fatalf("balance %v %v", bal, err)
	}
	if nonce, err := tn.eth.NonceAt(ctx, devAddr(0), nil); err != nil || nonce != 0 {
		t.Fatalf("nonce %d %v", nonce, err)
	}
	if tip, err := tn.eth.SuggestGasTipCap(ctx); err != nil || tip.Sign() != 0 {
		t.Fatalf("tip %v %v", tip, err)
	}
	if price, err := tn.eth.SuggestGasPrice(ctx); err != nil || price.Cmp(gwei) != 0 {
		t.Fatalf("gas price %v %v", price, err)
	}
	fh, err := tn.eth.FeeHistory(ctx, 4, nil, []float64{25, 75})
	if err != nil || len(fh.BaseFee) != 5 || fh.BaseFee[4].Cmp(gwei) != 0 || len(fh.Reward) != 4 || len(fh.Reward[0]) != 2 {
		t.Fatalf("fee history %+v %v", fh, err)
	}
	bn, err := tn.eth.BlockNumber(ctx)
	if err != nil || bn != uint64(tn.clock.NowMicros()) {
		t.Fatalf("block number %d %v, want the manual clock %d", bn, err, tn.clock.NowMicros())
	}
	if g, err := tn.eth.EstimateGas(ctx, ethereum.CallMsg{From: devAddr(0), To: ptr(devAddr(1))}); err != nil || g != 21000 {
		t.Fatalf("estimate %d %v", g, err)
	}
	if g, err := tn.eth.EstimateGas(ctx, ethereum.CallMsg{From: devAddr(0), To: ptr(devAddr(1)), Gas: 50000}); err != nil || g != 50000 {
		t.Fatalf("estimate with gas %d %v", g, err)
	}
	var committee struct {
		Quorum   int              `json:"quorum_size"`
		Replicas []common.Address `json:"replicas"`
	}
	if err := json.Unmarshal(tn.rawCall("svc_getCommittee"), &committee); err != nil || committee.Quorum != 3 || len(committee.Replicas) != 4 {
		t.Fatalf("committee %+v %v", committee, err)
	}
	if err := tn.rpc.CallContext(ctx, new(json.RawMessage), "svc_getCommittee", struct{}{}); err != nil {
		t.Fatalf("committee with an empty object: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestSendTransferReceiptVerifies is the basic wallet flow: sign an EIP-1559
// transfer with a dev key, send it, poll the receipt, check the balances
// moved by exactly value + gas × effective price, and verify the receipt's
// attestations against the committee — and that a tampered copy fails.
func TestSendTransferReceiptVerifies(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	value := new(big.Int).Mul(big.NewInt(3), big.NewInt(1e18))
	tx := dynTx(t, node.DevKey(0), chainID, 0, devAddr(5), value, gwei, new(big.Int).Mul(gwei, big.NewInt(3)))
	if err := tn.eth.SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	rcpt := tn.waitReceipt(tx.Hash())
	if rcpt.Status != 1 || rcpt.GasUsed != 21000 || rcpt.BlockNumber == nil || rcpt.TxHash != tx.Hash() {
		t.Fatalf("receipt %+v", rcpt)
	}
	price := new(big.Int).Mul(gwei, big.NewInt(2)) // base fee + tip, under the cap
	if rcpt.EffectiveGasPrice.Cmp(price) != 0 {
		t.Fatalf("effective price %v", rcpt.EffectiveGasPrice)
	}
	spent := new(big.Int).Add(value, new(big.Int).Mul(price, big.NewInt(21000)))
	if b, _ := tn.eth.BalanceAt(ctx, devAddr(0), nil); new(big.Int).Sub(node.DevBalanceWei.ToBig(), b).Cmp(spent) != 0 {
		t.Fatalf("sender spent %v, want %v", new(big.Int).Sub(node.DevBalanceWei.ToBig(), b), spent)
	}
	if b, _ := tn.eth.BalanceAt(ctx, devAddr(5), nil); new(big.Int).Sub(b, node.DevBalanceWei.ToBig()).Cmp(value) != 0 {
		t.Fatalf("recipient got %v", b)
	}
	if n, _ := tn.eth.NonceAt(ctx, devAddr(0), nil); n != 1 {
		t.Fatalf("nonce %d", n)
	}
	got, pending, err := tn.eth.TransactionByHash(ctx, tx.Hash())
	if err != nil || got.Hash() != tx.Hash() || pending {
		t.Fatalf("transaction by hash: %v (hash round trip %v, pending %v)", err, got != nil && got.Hash() == tx.Hash(), pending)
	}
	raw := tn.rawCall("eth_getTransactionReceipt", tx.Hash())
	committee := tn.rawCall("svc_getCommittee")
	if err := rpc.VerifyReceiptJSON(raw, committee); err != nil {
		t.Fatalf("receipt does not verify: %v", err)
	}
	var meta struct {
		Meta struct {
			Attestations []struct {
				Timestamp uint64 `json:"timestamp"`
			} `json:"attestations"`
		} `json:"svc_metadata"`
		TxIndex any `json:"transactionIndex"`
	}
	if json.Unmarshal(raw, &meta); len(meta.Meta.Attestations) < 3 || meta.TxIndex != nil {
		t.Fatalf("metadata %+v", meta)
	}
	// A plain transfer's block is its attestation batch: its time in µs, no
	// later than the past-perfect time eth_blockNumber reports.
	if at := meta.Meta.Attestations[0].Timestamp; rcpt.BlockNumber.Uint64() != at {
		t.Fatalf("blockNumber %v, attested at %d", rcpt.BlockNumber, at)
	}
	if head, err := tn.eth.BlockNumber(ctx); err != nil || head < rcpt.BlockNumber.Uint64() {
		t.Fatalf("eth_blockNumber %d (%v) before the receipt's block %v", head, err, rcpt.BlockNumber)
	}
	for _, tamper := range []struct{ from, to string }{
		{`"gasUsed":"0x5208"`, `"gasUsed":"0x5209"`},
		{`"status":"0x1"`, `"status":"0x0"`},
		{`"from":"0x` + strings.ToLower(devAddr(0).Hex()[2:]), `"from":"0x` + strings.ToLower(devAddr(1).Hex()[2:])},
		{`"timestamp":`, `"timestamp":1`},
	} {
		bad := bytes.Replace(raw, []byte(tamper.from), []byte(tamper.to), 1)
		if bytes.Equal(bad, raw) {
			t.Fatalf("tamper pattern %q not found in %s", tamper.from, raw)
		}
		if rpc.VerifyReceiptJSON(bad, committee) == nil {
			t.Fatalf("receipt tampered with %q still verifies", tamper.to)
		}
	}
}

func TestLegacyTransactionAccepted(t *testing.T) {
	tn := startNode(t)
	to := devAddr(2)
	tx, err := types.SignNewTx(node.DevKey(1), types.NewEIP155Signer(big.NewInt(chainID)),
		&types.LegacyTx{Nonce: 0, GasPrice: gwei, Gas: 21000, To: &to, Value: big.NewInt(7)})
	if err != nil {
		t.Fatal(err)
	}
	if err := tn.eth.SendTransaction(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	if r := tn.waitReceipt(tx.Hash()); r.Status != 1 || r.Type != 0 {
		t.Fatalf("receipt %+v", r)
	}
}

// TestSendTimeoutWaitsForConfirmation: with a timeout the call returns only
// once the transaction is attested, so the receipt is there at once.
func TestSendTimeoutWaitsForConfirmation(t *testing.T) {
	tn := startNode(t)
	tx := dynTx(t, node.DevKey(3), chainID, 0, devAddr(4), big.NewInt(1), gwei, new(big.Int).Mul(gwei, big.NewInt(2)))
	raw, _ := tx.MarshalBinary()
	var h common.Hash
	if err := tn.rpc.CallContext(context.Background(), &h, "eth_sendRawTransaction", hexutil.Encode(raw), 5000); err != nil {
		t.Fatal(err)
	}
	if h != tx.Hash() {
		t.Fatalf("hash %s, want %s", h, tx.Hash())
	}
	if r, err := tn.eth.TransactionReceipt(context.Background(), h); err != nil || r.Status != 1 {
		t.Fatalf("receipt right after a confirmed send: %v", err)
	}
}

func TestValidationErrors(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	key := node.DevKey(6)
	to := devAddr(7)
	fee := new(big.Int).Mul(gwei, big.NewInt(2))
	send := func(tx *types.Transaction) error { return tn.eth.SendTransaction(ctx, tx) }
	const failed = "transaction validation failed"

	wantRPCError(t, send(dynTx(t, key, 1, 0, to, big.NewInt(1), gwei, fee)), -32000, failed, "Invalid chain ID: 1")
	wantRPCError(t, send(dynTx(t, key, chainID, 5, to, big.NewInt(1), gwei, fee)), -32000, failed, "Future nonce: tx nonce 5, expected 0")
	huge := new(big.Int).Mul(big.NewInt(20_000), big.NewInt(1e18))
	wantRPCError(t, send(dynTx(t, key, chainID, 0, to, huge, gwei, fee)), -32000, failed, "Insufficient balance")
	wantRPCError(t, send(dynTx(t, key, chainID, 0, to, big.NewInt(1), big.NewInt(1), big.NewInt(1))), -32000, failed,
		"Underpriced tx: max_fee_per_gas 1 < base fee 1000000000")
	first := dynTx(t, key, chainID, 0, to, big.NewInt(1), gwei, fee)
	if err := send(first); err != nil {
		t.Fatal(err)
	}
	tn.waitReceipt(first.Hash())
	wantRPCError(t, send(dynTx(t, key, chainID, 0, to, big.NewInt(2), gwei, fee)), -32000, failed, "Past nonce: tx nonce 0, expected 1")

	// An enshrined application's refusal is a revert, code 3.
	err := send(dynTx(t, key, chainID, 1, common.Address(core.BridgeAddress), big.NewInt(0), gwei, fee))
	wantRPCError(t, err, 3, "execution reverted", nil)
	reason, uerr := abi.UnpackRevert(common.FromHex(errorData(err).(string)))
	if uerr != nil || reason != "Bridge validation failed: malformed call, want withdraw(address,address,uint256,uint128)" {
		t.Fatalf("revert reason %q %v", reason, uerr)
	}
	// Nothing was consumed by the refusals.
	if n, _ := tn.eth.NonceAt(ctx, devAddr(6), nil); n != 1 {
		t.Fatalf("nonce after refusals %d", n)
	}
}

// TestPendingTransactionRefused holds the intent log so a transaction stays
// admitted-but-not-durable; the account's next one is refused as pending.
func TestPendingTransactionRefused(t *testing.T) {
	gate := make(chan struct{})
	released := false
	tn := startNode(t, func(c *node.Config) { c.BeforeAppend = func() error { <-gate; return nil } })
	defer func() {
		if !released {
			close(gate)
		}
	}()
	key, to, fee := node.DevKey(8), devAddr(9), new(big.Int).Mul(gwei, big.NewInt(2))
	first := dynTx(t, key, chainID, 0, to, big.NewInt(1), gwei, fee)
	sent := make(chan error, 1)
	go func() { sent <- tn.eth.SendTransaction(context.Background(), first) }()
	// The first send cannot return before the gate opens; retry the second
	// until the sequencer has admitted the first.
	var err error
	for range 1000 {
		err = tn.eth.SendTransaction(context.Background(), dynTx(t, key, chainID, 1, to, big.NewInt(1), gwei, fee))
		if d, _ := errorData(err).(string); d != "Future nonce: tx nonce 1, expected 0" {
			break
		}
	}
	wantRPCError(t, err, -32000, "transaction validation failed", "Account has pending transaction")
	close(gate)
	released = true
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	tn.waitReceipt(first.Hash())
}

var orderbookABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[
	{"name":"balanceOf","type":"function","stateMutability":"view","inputs":[{"name":"token","type":"address"},{"name":"account","type":"address"}],"outputs":[{"type":"int256"}]},
	{"name":"withdrawableBalance","type":"function","stateMutability":"view","inputs":[{"name":"token","type":"address"},{"name":"account","type":"address"}],"outputs":[{"type":"uint256"}]},
	{"name":"submitOrder","type":"function","inputs":[{"name":"orderbookId","type":"bytes32"},{"name":"size","type":"int256"},{"name":"price","type":"uint256"},{"name":"orderType","type":"uint8"},{"name":"deadline","type":"uint128"},{"name":"ttl","type":"uint128"},{"name":"flags","type":"uint8"}],"outputs":[]},
	{"name":"cancel","type":"function","inputs":[{"name":"orderbookId","type":"bytes32"},{"name":"orderId","type":"bytes32"},{"name":"deadline","type":"uint128"}],"outputs":[]},
	{"name":"update","type":"function","inputs":[{"name":"orderbookId","type":"bytes32"},{"name":"orderId","type":"bytes32"},{"name":"newSize","type":"uint256"},{"name":"newPrice","type":"uint256"},{"name":"token","type":"address"},{"name":"deadline","type":"uint128"}],"outputs":[]},
	{"name":"transfer","type":"function","inputs":[{"name":"token","type":"address"},{"name":"to","type":"address"},{"name":"amount","type":"uint256"},{"name":"deadline","type":"uint128"}],"outputs":[]},
	{"name":"deposit","type":"function","inputs":[{"name":"token","type":"address"},{"name":"recipient","type":"address"},{"name":"amount","type":"uint256"},{"name":"deadline","type":"uint128"}],"outputs":[]},
	{"name":"submitBatch","type":"function","inputs":[{"name":"inner","type":"bytes[]"}],"outputs":[]},
	{"name":"delegated","type":"function","inputs":[{"name":"master","type":"address"},{"name":"validUntil","type":"uint64"},{"name":"signature","type":"bytes"},{"name":"inner","type":"bytes"}],"outputs":[]}]`))
	if err != nil {
		panic(err)
	}
	return a
}()

func callView(t *testing.T, tn *testNode, method string, token, account common.Address) *big.Int {
	t.Helper()
	data, err := orderbookABI.Pack(method, token, account)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tn.eth.CallContract(context.Background(), ethereum.CallMsg{To: ptr(common.Address(core.OrderbookAddress)), Data: data}, nil)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	vals, err := orderbookABI.Unpack(method, out)
	if err != nil {
		t.Fatal(err)
	}
	return vals[0].(*big.Int)
}

// TestAdminDepositViewsAndLogs: an admin deposit credits the recipient,
// the orderbook views report it, and its log is found by FilterLogs.
func TestAdminDepositViewsAndLogs(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	token := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	var res struct {
		TxHash common.Hash `json:"tx_hash"`
	}
	deposit := map[string]any{"token": token, "to": devAddr(3), "amount": "0x2a"}
	wantRPCError(t, tn.rpc.CallContext(ctx, &res, "admin_deposit", deposit), -32600, "Invalid Request", nil)
	if err := tn.admin.CallContext(ctx, &res, "admin_deposit", deposit); err != nil {
		t.Fatal(err)
	}
	if got := callView(t, tn, "balanceOf", token, devAddr(3)); got.Int64() != 42 {
		t.Fatalf("balanceOf %v", got)
	}
	if got := callView(t, tn, "withdrawableBalance", common.Address(core.NativeToken), devAddr(3)); got.Cmp(node.DevBalanceWei.ToBig()) != 0 {
		t.Fatalf("withdrawableBalance native %v", got)
	}
	tn.waitReceipt(res.TxHash)
	q := ethereum.FilterQuery{Addresses: []common.Address{common.Address(core.BridgeAddress)},
		Topics: [][]common.Hash{{common.Hash(core.DepositTopic())}, nil, {common.BytesToHash(devAddr(3).Bytes())}}}
	logs, err := tn.eth.FilterLogs(ctx, q)
	if err != nil || len(logs) != 1 || logs[0].TxHash != res.TxHash || new(big.Int).SetBytes(logs[0].Data).Int64() != 42 || logs[0].BlockNumber != 1 {
		t.Fatalf("logs %+v %v", logs, err)
	}
	q.Topics[2] = []common.Hash{common.BytesToHash(devAddr(4).Bytes())}
	if logs, err := tn.eth.FilterLogs(ctx, q); err != nil || len(logs) != 0 {
		t.Fatalf("filter on another recipient: %d %v", len(logs), err)
	}
	var many []map[string]any
	wantRPCError(t, tn.rpc.CallContext(ctx, &many, "eth_getLogs", map[string]any{"topics": []any{nil, nil, nil, nil, nil}}), -32602, "Invalid params", nil)
	for _, c := range []struct {
		min  int
		want int
	}{{4, 1}, {5, 0}} {
		if err := tn.rpc.CallContext(ctx, &many, "eth_getLogs", map[string]any{"minimum_attestations": c.min}); err != nil || len(many) != c.want {
			t.Fatalf("minimum_attestations %d: %d logs %v", c.min, len(many), err)
		}
	}
	// Unknown orderbook function: code 3 with the CLOB prefix.
	_, err = tn.eth.CallContract(ctx, ethereum.CallMsg{To: ptr(common.Address(core.OrderbookAddress)), Data: []byte{1, 2, 3, 4}}, nil)
	wantRPCError(t, err, 3, "execution reverted", nil)
}

func TestAdminBaseFeeAndClock(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	var ok bool
	if err := tn.admin.CallContext(ctx, &ok, "admin_setBaseFee", "0x77359400"); err != nil || !ok { // 2 gwei
		t.Fatalf("setBaseFee %v %v", ok, err)
	}
	if p, _ := tn.eth.SuggestGasPrice(ctx); p.Int64() != 2e9 {
		t.Fatalf("gas price after setBaseFee %v", p)
	}
	err := tn.eth.SendTransaction(ctx, dynTx(t, node.DevKey(0), chainID, 0, devAddr(1), big.NewInt(1), big.NewInt(0), gwei))
	wantRPCError(t, err, -32000, "transaction validation failed", "Underpriced tx: max_fee_per_gas 1000000000 < base fee 2000000000")
	before, _ := tn.eth.BlockNumber(ctx)
	var now hexutil.Uint64
	if err := tn.admin.CallContext(ctx, &now, "admin_advanceTime", 500_000); err != nil {
		t.Fatal(err)
	}
	if after, _ := tn.eth.BlockNumber(ctx); after != before+500_000 || uint64(now) != after {
		t.Fatalf("block number %d → %d (admin said %d)", before, after, now)
	}
	wantRPCError(t, tn.rpc.CallContext(ctx, &now, "admin_advanceTime", 1), -32600, "Invalid Request", nil)
}

func TestBatchThroughGethClient(t *testing.T) {
	tn := startNode(t)
	var id hexutil.Uint64
	var bal hexutil.Big
	var none any
	batch := []gethrpc.BatchElem{
		{Method: "eth_chainId", Result: &id},
		{Method: "eth_getBalance", Args: []any{devAddr(2), "latest"}, Result: &bal},
		{Method: "no_suchMethod", Result: &none},
		{Method: "eth_getBalance", Args: []any{"0x1234", "latest"}, Result: &none},
	}
	if err := tn.rpc.BatchCallContext(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if batch[0].Error != nil || id != 0x50d || batch[1].Error != nil || bal.ToInt().Cmp(node.DevBalanceWei.ToBig()) != 0 {
		t.Fatalf("batch results: %v %v %v %v", batch[0].Error, id, batch[1].Error, bal.ToInt())
	}
	wantRPCError(t, batch[2].Error, -32601, "Method not found", nil)
	wantRPCError(t, batch[3].Error, -32602, "Invalid params", nil)
}

// TestInternalErrorWhenNodeStopped: a node that no longer takes writes
// answers -32603, and reads keep working.
func TestInternalErrorWhenNodeStopped(t *testing.T) {
	tn := startNode(t)
	if err := tn.node.Close(); err != nil {
		t.Fatal(err)
	}
	err := tn.eth.SendTransaction(context.Background(), dynTx(t, node.DevKey(0), chainID, 0, devAddr(1), big.NewInt(1), gwei, new(big.Int).Mul(gwei, big.NewInt(2))))
	wantRPCError(t, err, -32603, "Internal error", node.ErrStopped.Error())
	if _, err := tn.eth.ChainID(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestMetricsAreMeasured: after a burst of transfers, svc_metrics reports
// what happened over its window — not constants.
func TestMetricsAreMeasured(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	const count = 20
	tip, feeCap := gwei, new(big.Int).Mul(gwei, big.NewInt(3))
	var hashes []common.Hash
	for i := range uint64(count) {
		tx := dynTx(t, node.DevKey(2), chainID, i, devAddr(3), big.NewInt(1), tip, feeCap)
		var h common.Hash
		raw, _ := tx.MarshalBinary()
		if err := tn.rpc.CallContext(ctx, &h, "eth_sendRawTransaction", hexutil.Encode(raw), 5000); err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, h)
	}
	// Uptime as the receipts show it: signatures collected over signatures
	// asked (one per committee member) by the batches that attested them.
	var committee struct {
		Replicas []string `json:"replicas"`
	}
	if err := json.Unmarshal(tn.rawCall("svc_getCommittee"), &committee); err != nil {
		t.Fatal(err)
	}
	signed := map[uint64]int{} // batch sequence number -> signatures
	for _, h := range hashes {
		var r struct {
			Meta struct {
				Attestations []struct {
					Seq uint64 `json:"sequence_number"`
				} `json:"attestations"`
			} `json:"svc_metadata"`
		}
		if err := json.Unmarshal(tn.rawCall("eth_getTransactionReceipt", h), &r); err != nil || len(r.Meta.Attestations) == 0 {
			t.Fatalf("receipt %s: %v", h, err)
		}
		signed[r.Meta.Attestations[0].Seq] = len(r.Meta.Attestations)
	}
	sigs := 0
	for _, n := range signed {
		sigs += n
	}
	wantUptime := float64(sigs) / float64(len(signed)*len(committee.Replicas))
	// The window counts complete seconds only: wait for the current one to end.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	var m struct {
		GasPrice   *big.Int `json:"gas_price"`
		Uptime     float64  `json:"validator_uptime"`
		Latency    float64  `json:"latency"`
		Throughput float64  `json:"throughput"`
	}
	if err := json.Unmarshal(tn.rawCall("svc_metrics"), &m); err != nil {
		t.Fatal(err)
	}
	// 20 transactions over a 10 s window, each paying base fee + tip.
	if m.Throughput != count/10.0 || m.GasPrice.Cmp(new(big.Int).Add(gwei, tip)) != 0 || m.Uptime != wantUptime || m.Latency <= 0 {
		t.Fatalf("metrics %+v, want uptime %v (%d signatures over %d batches of %d members)", m, wantUptime, sigs, len(signed), len(committee.Replicas))
	}
}

// TestDiskFailureKeepsReads: when the intent log cannot be written (the
// hook fails the group commit as a failing disk would), the write that hit
// it and every later one get -32603 saying so, nothing crashes, and reads,
// receipts and listings keep working.
func TestDiskFailureKeepsReads(t *testing.T) {
	var failing atomic.Bool
	tn := startNode(t, func(c *node.Config) {
		c.BeforeAppend = func() error {
			if failing.Load() {
				return errors.New("write /data/000001.vlog: no space left on device")
			}
			return nil
		}
	})
	ctx := context.Background()
	tip, feeCap := gwei, new(big.Int).Mul(gwei, big.NewInt(3))
	ok := dynTx(t, node.DevKey(0), chainID, 0, devAddr(1), big.NewInt(1), tip, feeCap)
	if err := tn.eth.SendTransaction(ctx, ok); err != nil {
		t.Fatal(err)
	}
	tn.waitReceipt(ok.Hash())

	failing.Store(true)
	for nonce := uint64(1); nonce <= 2; nonce++ { // the write that hits the failure, then one after
		err := tn.eth.SendTransaction(ctx, dynTx(t, node.DevKey(0), chainID, nonce, devAddr(1), big.NewInt(1), tip, feeCap))
		wantRPCError(t, err, -32603, "Internal error", node.ErrLogFailed.Error())
	}
	if _, err := tn.eth.TransactionReceipt(ctx, ok.Hash()); err != nil {
		t.Fatalf("a receipt from before the failure: %v", err)
	}
	if b, err := tn.eth.BalanceAt(ctx, devAddr(1), nil); err != nil || b.Sign() <= 0 {
		t.Fatalf("balance after the failure: %v %v", b, err)
	}
	var p page
	if err := tn.rpc.CallContext(ctx, &p, "svc_listConfirmedReceipts", map[string]any{"since": 0}); err != nil || len(p.Items) != 1 {
		t.Fatalf("listing after the failure: %d items, %v", len(p.Items), err)
	}
}
