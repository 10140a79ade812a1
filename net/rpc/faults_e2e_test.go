package rpc_test

import (
	"context"
	"encoding/json"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
)

// faultTransfer signs a 1-wei transfer from dev account from to dev account to.
func faultTransfer(t *testing.T, from int, nonce uint64, to int) *types.Transaction {
	return dynTx(t, node.DevKey(from), chainID, nonce, devAddr(to), big.NewInt(1), big.NewInt(0), big.NewInt(2e9))
}

func (tn *testNode) adminFaults(method string, arg map[string]any) {
	tn.t.Helper()
	var ok bool
	if err := tn.admin.CallContext(context.Background(), &ok, method, arg); err != nil || !ok {
		tn.t.Fatalf("%s %v: %v %v", method, arg, ok, err)
	}
}

// wantNotEntered checks that a refused transaction left no trace: the
// sender's nonce is unchanged and the hash is unknown.
func (tn *testNode) wantNotEntered(tx *types.Transaction, from int, nonce uint64) {
	tn.t.Helper()
	ctx := context.Background()
	if n, err := tn.eth.NonceAt(ctx, devAddr(from), nil); err != nil || n != nonce {
		tn.t.Fatalf("nonce of the refused sender %d (%v), want %d", n, err, nonce)
	}
	var got json.RawMessage
	if err := tn.rpc.CallContext(ctx, &got, "eth_getTransactionByHash", tx.Hash()); err != nil || string(got) != "null" {
		tn.t.Fatalf("refused transaction known: %s %v", got, err)
	}
}

// TestBlacklist: a transaction from or to a blacklisted address, or with a
// blacklisted hash, is refused -32000 "Transaction is blacklisted" over
// HTTP and WebSocket, and never enters the log; removed, it goes through.
// Only an authorized caller can edit the list.
func TestBlacklist(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	ws, err := ethclient.Dial(tn.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var ok bool
	err = tn.rpc.CallContext(ctx, &ok, "admin_blacklist", map[string]any{"address": devAddr(1)})
	wantRPCError(t, err, -32600, "Invalid Request", nil)

	tn.adminFaults("admin_blacklist", map[string]any{"address": devAddr(1)})
	for _, c := range []struct {
		name     string
		client   *ethclient.Client
		from, to int
	}{{"to, HTTP", tn.eth, 0, 1}, {"from, HTTP", tn.eth, 1, 2}, {"to, WS", ws, 0, 1}, {"from, WS", ws, 1, 2}} {
		t.Run(c.name, func(t *testing.T) {
			tx := faultTransfer(t, c.from, 0, c.to)
			err := c.client.SendTransaction(ctx, tx)
			wantRPCError(t, err, -32000, "transaction validation failed", "Transaction is blacklisted")
			tn.wantNotEntered(tx, c.from, 0)
		})
	}
	tn.adminFaults("admin_blacklist", map[string]any{"address": devAddr(1), "remove": true})

	// By hash: only that transaction; another at the same nonce passes.
	tx := faultTransfer(t, 2, 0, 3)
	tn.adminFaults("admin_blacklist", map[string]any{"tx_hash": tx.Hash()})
	wantRPCError(t, tn.eth.SendTransaction(ctx, tx), -32000, "transaction validation failed", "Transaction is blacklisted")
	tn.wantNotEntered(tx, 2, 0)
	other := faultTransfer(t, 2, 0, 4)
	if err := tn.eth.SendTransaction(ctx, other); err != nil {
		t.Fatalf("another transaction of the sender: %v", err)
	}
	tn.waitReceipt(other.Hash())
	tn.adminFaults("admin_blacklist", map[string]any{"tx_hash": tx.Hash(), "remove": true})
	if err := tn.eth.SendTransaction(ctx, faultTransfer(t, 1, 0, 2)); err != nil {
		t.Fatalf("after removal: %v", err)
	}

	for _, bad := range []map[string]any{{}, {"address": devAddr(1), "tx_hash": tx.Hash()}, {"address": "0x12"}, {"address": devAddr(1), "remove": 1}} {
		err := tn.admin.CallContext(ctx, &ok, "admin_blacklist", bad)
		if code := rpcCode(err); code != -32602 {
			t.Fatalf("admin_blacklist %v: %v, want -32602", bad, err)
		}
	}
}

func rpcCode(err error) int {
	if e, ok := err.(gethrpc.Error); ok {
		return e.ErrorCode()
	}
	return 0
}

// syncSend is svc_sendRawTransaction's result.
type syncSend struct {
	TxHash    common.Hash `json:"tx_hash"`
	Successes int         `json:"successes"`
	Errors    []struct {
		Error string `json:"error"`
	} `json:"errors"`
}

func (tn *testNode) syncSend(c *gethrpc.Client, tx *types.Transaction, timeoutSecs any) (syncSend, error) {
	raw, err := tx.MarshalBinary()
	if err != nil {
		tn.t.Fatal(err)
	}
	var out syncSend
	args := []any{hexutil.Bytes(raw)}
	if timeoutSecs != nil {
		args = append(args, timeoutSecs)
	}
	err = c.CallContext(context.Background(), &out, "svc_sendRawTransaction", args...)
	return out, err
}

// TestRejectingValidators: with f + 1 = 2 of 4 validators rejecting, a
// transaction is refused -32003 with one {error} per rejecting validator
// and never enters the log; with f = 1 it is accepted, and
// svc_sendRawTransaction reports the dissent next to the other three
// validators' signatures.
func TestRejectingValidators(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	tn.adminFaults("admin_setValidatorFaults", map[string]any{"reject": 2, "reason": "Insufficient balance"})
	tx := faultTransfer(t, 0, 0, 1)
	err := tn.eth.SendTransaction(ctx, tx)
	wantRPCError(t, err, -32003, "Transaction rejected: Insufficient balance", nil)
	want := []any{map[string]any{"error": "Insufficient balance"}, map[string]any{"error": "Insufficient balance"}}
	if got := errorData(err); !reflect.DeepEqual(got, want) {
		t.Fatalf("-32003 data %#v, want %#v", got, want)
	}
	_, err = tn.syncSend(tn.rpc, tx, nil)
	wantRPCError(t, err, -32003, "Transaction rejected: Insufficient balance", nil)
	tn.wantNotEntered(tx, 0, 0)

	// Silent validators do not reject either: 2 rejecting of which 1 is
	// silent (the highest-indexed 3 are) leave 1 rejection, below f + 1.
	tn.adminFaults("admin_setValidatorFaults", map[string]any{"reject": 2, "reason": "nope", "silent": 3})
	if err := tn.eth.SendTransaction(ctx, tx); err != nil {
		t.Fatalf("one rejection of four: %v", err)
	}
	tn.adminFaults("admin_setValidatorFaults", map[string]any{})
	tn.waitReceipt(tx.Hash())

	// f = 1 rejecting: accepted; the synchronous send waits for the
	// attestation and reports 3 successes and the one rejection.
	tn.adminFaults("admin_setValidatorFaults", map[string]any{"reject": 1, "reason": "nope"})
	tx = faultTransfer(t, 0, 1, 1)
	got, err := tn.syncSend(tn.rpc, tx, 5)
	if err != nil || got.TxHash != tx.Hash() || got.Successes != 3 || len(got.Errors) != 1 || got.Errors[0].Error != "nope" {
		t.Fatalf("svc_sendRawTransaction with one rejecting validator: %+v %v", got, err)
	}
	if r, err := tn.eth.TransactionReceipt(ctx, tx.Hash()); err != nil || r.Status != 1 {
		t.Fatalf("receipt after the synchronous send: %v %v", r, err)
	}

	for _, bad := range []map[string]any{{"reject": 5}, {"silent": -1}, {"reject": 1}, {"reject": "1"}, {"reject": 1, "reason": string(make([]byte, node.FaultReasonMax+1))}} {
		var ok bool
		if err := tn.admin.CallContext(ctx, &ok, "admin_setValidatorFaults", bad); rpcCode(err) != -32602 {
			t.Fatalf("admin_setValidatorFaults %v: %v, want -32602", bad, err)
		}
	}
}

// TestSyncSend: svc_sendRawTransaction over HTTP and WebSocket answers once
// the transaction is attested, with every validator's success and no
// errors; a protocol refusal is the same error as eth_sendRawTransaction's.
func TestSyncSend(t *testing.T) {
	tn := startNode(t)
	wsc := tn.dialWS(t)
	for i, c := range []*gethrpc.Client{tn.rpc, wsc} {
		tx := faultTransfer(t, 0, uint64(i), 1)
		got, err := tn.syncSend(c, tx, nil)
		if err != nil || got.TxHash != tx.Hash() || got.Successes != 4 || len(got.Errors) != 0 {
			t.Fatalf("client %d: %+v %v", i, got, err)
		}
		if r, err := tn.eth.TransactionReceipt(context.Background(), tx.Hash()); err != nil || r.Status != 1 {
			t.Fatalf("client %d: the answer came before the receipt: %v", i, err)
		}
	}
	_, err := tn.syncSend(tn.rpc, faultTransfer(t, 0, 0, 1), nil)
	wantRPCError(t, err, -32000, "transaction validation failed", "Past nonce: tx nonce 0, expected 2")
}

// receiptSignatures returns how many validator signatures the receipt of h
// carries, after checking that it verifies against the committee.
func (tn *testNode) receiptSignatures(h common.Hash) int {
	tn.t.Helper()
	raw := tn.rawCall("eth_getTransactionReceipt", h)
	if err := rpc.VerifyReceiptJSON(raw, tn.rawCall("svc_getCommittee")); err != nil {
		tn.t.Fatalf("receipt does not verify: %v", err)
	}
	var meta struct {
		Meta struct {
			Attestations []json.RawMessage `json:"attestations"`
		} `json:"svc_metadata"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		tn.t.Fatal(err)
	}
	return len(meta.Meta.Attestations)
}

type txStatus struct {
	Status    string `json:"status"`
	Account   common.Address
	Nonce     uint64
	Success   bool
	GasUsed   uint64 `json:"gas_used"`
	Quorum    int
	Expected  uint64 `json:"account_expected_nonce"`
	Finalized uint64 `json:"account_next_finalized_nonce"`
	Votes     struct {
		Txs []struct {
			TxHash common.Hash `json:"tx_hash"`
			Voters []struct {
				Index   int            `json:"validator_index"`
				Address common.Address `json:"validator_address"`
			}
		}
		TotalTxVotes int `json:"total_tx_votes"`
		Quorum       int
	}
}

func (tn *testNode) txStatus(h common.Hash) txStatus {
	tn.t.Helper()
	var s txStatus
	if err := json.Unmarshal(tn.rawCall("svc_getTxStatus", h), &s); err != nil {
		tn.t.Fatal(err)
	}
	return s
}

func (tn *testNode) uptime() float64 {
	tn.t.Helper()
	var m struct {
		Uptime float64 `json:"validator_uptime"`
	}
	if err := json.Unmarshal(tn.rawCall("svc_metrics"), &m); err != nil {
		tn.t.Fatal(err)
	}
	return m.Uptime
}

// TestSilentValidators: one silent validator of four leaves receipts with
// three signatures (still a quorum: they verify) and validator_uptime at
// 3/4; two silent leave fewer than a quorum, so the receipt waits
// (svc_getTxStatus: pending, two voters), the synchronous send times out
// with no success, uptime falls further; once the validators are back the
// receipt arrives, signed by all four.
func TestSilentValidators(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	committee := tn.node.Committee()
	tn.adminFaults("admin_setValidatorFaults", map[string]any{"silent": 1})
	tx := faultTransfer(t, 0, 0, 1)
	if got, err := tn.syncSend(tn.rpc, tx, nil); err != nil || got.Successes != 3 {
		t.Fatalf("one silent: %+v %v", got, err)
	}
	if n := tn.receiptSignatures(tx.Hash()); n != 3 {
		t.Fatalf("one silent validator: %d signatures", n)
	}
	if s := tn.txStatus(tx.Hash()); s.Status != "finalized" || s.Account != devAddr(0) || s.Nonce != 0 || !s.Success || s.GasUsed != 21000 {
		t.Fatalf("finalized status %+v", s)
	}
	time.Sleep(1100 * time.Millisecond) // the metrics window counts complete seconds
	if u := tn.uptime(); u != 0.75 {
		t.Fatalf("uptime with one silent validator of four: %v, want 0.75", u)
	}

	tn.adminFaults("admin_setValidatorFaults", map[string]any{"silent": 2})
	tx = faultTransfer(t, 0, 1, 1)
	if got, err := tn.syncSend(tn.rpc, tx, 1); err != nil || got.Successes != 0 || got.TxHash != tx.Hash() {
		t.Fatalf("two silent, after the timeout: %+v %v", got, err)
	}
	if r, err := tn.eth.TransactionReceipt(ctx, tx.Hash()); err == nil {
		t.Fatalf("a receipt without a quorum: %+v", r)
	}
	s := tn.txStatus(tx.Hash())
	if s.Status != "pending" || s.Quorum != 3 || s.Votes.Quorum != 3 || s.Votes.TotalTxVotes != 2 || s.Expected != 2 || s.Finalized != 1 ||
		len(s.Votes.Txs) != 1 || s.Votes.Txs[0].TxHash != tx.Hash() || len(s.Votes.Txs[0].Voters) != 2 ||
		s.Votes.Txs[0].Voters[1].Index != 1 || s.Votes.Txs[0].Voters[1].Address != common.Address(committee.Members[1]) {
		t.Fatalf("pending status %+v", s)
	}
	time.Sleep(1100 * time.Millisecond)
	if u := tn.uptime(); u >= 0.75 || u <= 0 {
		t.Fatalf("uptime while two of four are silent: %v, want below 0.75", u)
	}

	tn.adminFaults("admin_setValidatorFaults", map[string]any{})
	tn.waitReceipt(tx.Hash())
	if n := tn.receiptSignatures(tx.Hash()); n != 4 {
		t.Fatalf("after the validators returned: %d signatures", n)
	}
	if s := tn.txStatus(tx.Hash()); s.Status != "finalized" {
		t.Fatalf("status after the validators returned: %+v", s)
	}
	if s := tn.txStatus(common.Hash{1}); s.Status != "not_found" {
		t.Fatalf("unknown hash: %+v", s)
	}
}

// TestRestartClearsFaults: a transaction waiting for a quorum of signers is
// durable; a restart clears the faults and attests it.
func TestRestartClearsFaults(t *testing.T) {
	dir := t.TempDir()
	inDir := func(c *node.Config) { c.DataDir = dir }
	tn := startNode(t, inDir)
	tn.adminFaults("admin_setValidatorFaults", map[string]any{"silent": 3})
	tx := faultTransfer(t, 0, 0, 1)
	if err := tn.eth.SendTransaction(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	tn.stop()
	tn = startNode(t, inDir)
	if f := tn.node.ValidatorFaults(); f != (node.Faults{}) {
		t.Fatalf("faults after the restart: %+v", f)
	}
	tn.waitReceipt(tx.Hash())
	if n := tn.receiptSignatures(tx.Hash()); n != 4 {
		t.Fatalf("%d signatures", n)
	}
}

// TestProcessedDeposits: svc_getProcessedDeposits is the live network's
// replay-protection set: with ids 1 and 2 processed (0 is never an id) the
// watermark is 3; the ids above it (5, and a derived one) are listed
// ascending.
func TestProcessedDeposits(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	var derived struct {
		TxHash common.Hash `json:"tx_hash"`
	}
	for _, id := range []any{common.Hash{31: 5}, common.Hash{31: 2}, common.Hash{31: 1}, nil} {
		arg := map[string]any{"token": common.Address(core.NativeToken), "to": devAddr(3), "amount": "0x1"}
		if id != nil {
			arg["tx_hash"] = id
		}
		if err := tn.admin.CallContext(ctx, &derived, "admin_deposit", arg); err != nil {
			t.Fatalf("deposit %v: %v", id, err)
		}
	}
	tn.waitReceipt(derived.TxHash)
	var got struct {
		Watermark hexutil.Big   `json:"watermark"`
		Above     []hexutil.Big `json:"above_watermark"`
	}
	if err := json.Unmarshal(tn.rawCall("svc_getProcessedDeposits"), &got); err != nil {
		t.Fatal(err)
	}
	d := new(big.Int).SetBytes(derived.TxHash[:])
	if got.Watermark.ToInt().Int64() != 3 || len(got.Above) != 2 || got.Above[0].ToInt().Int64() != 5 || got.Above[1].ToInt().Cmp(d) != 0 {
		t.Fatalf("processed deposits: watermark %v, above %v (derived id %x)", got.Watermark.ToInt(), got.Above, d)
	}
}
