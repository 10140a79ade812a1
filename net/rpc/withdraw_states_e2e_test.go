package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// The spec's withdrawal state table ("States and transitions"), one test
// per row, each over the wire: withdrawals signed and sent with go-ethereum
// (HTTP, and WebSocket for the executed one), the outcome read from
// svc_withdrawals through go-ethereum's WebSocket client and the status
// from GET /v1/bridge/withdrawals/by-id. The rows not here are covered
// exactly elsewhere: a withdraw inside submitBatch or delegated is
// TestWithdrawRefusedOverTheWire's.

// withdrawalFeed is a svc_withdrawals subscription of every account.
type withdrawalFeed struct {
	ch  chan json.RawMessage
	sub *gethrpc.ClientSubscription
}

func (tn *testNode) withdrawalFeed(t *testing.T, params map[string]any) withdrawalFeed {
	ch, sub := tn.ethSubscribe(t, tn.dialWS(t), "svc_withdrawals", params)
	return withdrawalFeed{ch, sub}
}

// next is the next batch's outcomes: each one's fields and raw bytes.
func (f withdrawalFeed) next(t *testing.T) ([]update, []json.RawMessage) {
	t.Helper()
	return listing(t, recv(t, f.ch, f.sub))
}

// outcome is h's WithdrawalUpdate in a batch's outcomes.
func outcome(t *testing.T, us []update, raw []json.RawMessage, h common.Hash) (update, json.RawMessage) {
	t.Helper()
	for i := range us {
		if us[i].TxHash == h {
			return us[i], raw[i]
		}
	}
	t.Fatalf("no outcome for %s in %s", h, raw)
	return update{}, nil
}

// byIDNow reads h's status once: the HTTP status, the answer and its
// withdrawal object's bytes.
func byIDNow(t *testing.T, tn *testNode, h common.Hash) (int, byID, json.RawMessage) {
	t.Helper()
	status, _, body := restGet(t, tn, "GET", "/v1/bridge/withdrawals/by-id/"+h.Hex())
	var got byID
	var raw struct {
		Withdrawal json.RawMessage `json:"withdrawal"`
	}
	if status == 200 && (json.Unmarshal(body, &got) != nil || json.Unmarshal(body, &raw) != nil) {
		t.Fatalf("by-id %s: %s", h, body)
	}
	return status, got, raw.Withdrawal
}

// wantRefused checks a terminal refusal: status refused, no proof, the
// outcome's error, the channel's bytes, and a null svc_getBridgeClaimProof.
func wantRefused(t *testing.T, tn *testNode, h common.Hash, fromFeed json.RawMessage, errStr string) {
	t.Helper()
	status, got, w := byIDNow(t, tn, h)
	if status != 200 || got.Status != node.StatusRefused || got.Proof != nil || got.Withdrawal.Error != errStr || !bytes.Equal(w, fromFeed) {
		t.Fatalf("by-id %s: %d %+v %s, want refused with error %q and the channel's %s", h, status, got, w, errStr, fromFeed)
	}
	var proof json.RawMessage
	if err := tn.rpc.CallContext(context.Background(), &proof, "svc_getBridgeClaimProof", h); err != nil || string(proof) != "null" {
		t.Fatalf("refused withdrawal's proof %s (%v)", proof, err)
	}
}

// balances is what a withdrawal could debit: the native balance
// (eth_getBalance) and the WBTC balance (balanceOf).
func balances(t *testing.T, tn *testNode, a common.Address) [2]*big.Int {
	return [2]*big.Int{tn.balance(t, a), callView(t, tn, "balanceOf", common.Address(node.DevWBTC), a)}
}

// wantBatchRefusal checks the refusal of dev account who's first
// withdrawal h by its batch with errStr: the channel's outcome (us, raw),
// wantRefused, nothing debited from the balances before, the nonce spent.
func wantBatchRefusal(t *testing.T, tn *testNode, us []update, raw []json.RawMessage, h common.Hash, errStr string, who int, before [2]*big.Int) {
	t.Helper()
	u, fromFeed := outcome(t, us, raw, h)
	if u.Error != errStr {
		t.Fatalf("outcome %s, want error %q", fromFeed, errStr)
	}
	wantRefused(t, tn, h, fromFeed, errStr)
	if after := balances(t, tn, devAddr(who)); after[0].Cmp(before[0]) != 0 || after[1].Cmp(before[1]) != 0 {
		t.Fatalf("balances %v -> %v, want nothing debited", before, after)
	}
	wantNonce(t, tn, devAddr(who), 1)
}

func wantNonce(t *testing.T, tn *testNode, a common.Address, want uint64) {
	t.Helper()
	if n, err := tn.eth.NonceAt(context.Background(), a, nil); err != nil || n != want {
		t.Fatalf("nonce of %s: %d (%v), want %d", a, n, err, want)
	}
}

// TestWithdrawStateRefusedAtAdmission, row "validity fails": the sender
// gets the error, the transaction never lands (no receipt, nonce not
// spent), no row exists (404) and the channel carries no outcome for it.
// Every validity reason is TestWithdrawRefusedOverTheWire's.
func TestWithdrawStateRefusedAtAdmission(t *testing.T) {
	tn := bridgeNode(t)
	feed := tn.withdrawalFeed(t, map[string]any{})
	bad := signWithdraw(t, node.DevKey(0), 0, withdrawCall(native, devAddr(3), big.NewInt(1e17), tn.nextDeadline()), new(big.Int))
	err := tn.eth.SendTransaction(context.Background(), bad)
	wantRPCError(t, err, 3, "execution reverted", nil)
	wantNonce(t, tn, devAddr(0), 0)
	good := tn.okRow(t, 1, 1) // the batch has an outcome to publish
	tn.tick(t)
	us, raw := feed.next(t)
	if len(us) != 1 || us[0].TxHash != good {
		t.Fatalf("batch outcomes %s, want only %s", raw, good)
	}
	if status, _, _ := byIDNow(t, tn, bad.Hash()); status != 404 {
		t.Fatalf("refused transaction by id: %d, want 404", status)
	}
	if _, err := tn.eth.TransactionReceipt(context.Background(), bad.Hash()); err == nil {
		t.Fatal("a refused withdrawal has a receipt")
	}
}

// TestWithdrawStateExecuted, rows "accepted, awaiting its batch", "covered:
// pending" and "pending -> claimable": sent over WebSocket, the withdrawal
// is accepted (status 1, no block) and 404 by id until its batch; the batch
// debits it (burned) and publishes it without error; it is pending (no
// proof) while two of four validators are silent, and claimable with a
// proof claim.Verify accepts once they sign again.
func TestWithdrawStateExecuted(t *testing.T) {
	tn := bridgeNode(t)
	ctx := context.Background()
	feed := tn.withdrawalFeed(t, map[string]any{"account": devAddr(2)})
	ws := ethclient.NewClient(tn.dialWS(t))
	to := common.Address{0x70, 0x77}
	before := balances(t, tn, devAddr(2))
	tx := signWithdraw(t, node.DevKey(2), 0, withdrawCall(native, to, eth(2), tn.nextDeadline()), new(big.Int))
	if err := ws.SendTransaction(ctx, tx); err != nil {
		t.Fatalf("withdraw refused: %v (%v)", err, errorData(err))
	}
	h := tx.Hash()
	if r := tn.waitReceipt(h); r.Status != 1 || r.BlockNumber != nil {
		t.Fatalf("accepted withdrawal's receipt: status %d block %v", r.Status, r.BlockNumber)
	}
	if status, _, _ := byIDNow(t, tn, h); status != 404 {
		t.Fatalf("accepted, awaiting its batch: %d, want 404", status)
	}

	tn.adminFaults("admin_setValidatorFaults", map[string]any{"silent": 2})
	tn.tick(t)
	us, raw := feed.next(t)
	u, fromFeed := outcome(t, us, raw, h)
	if u.Error != "" || u.Withdrawer != devAddr(2) || bytes.Contains(fromFeed, []byte(`"error"`)) {
		t.Fatalf("executed outcome %s", fromFeed)
	}
	status, got, w := byIDNow(t, tn, h)
	if status != 200 || got.Status != node.StatusPending || got.Proof != nil || !bytes.Equal(w, fromFeed) {
		t.Fatalf("with two silent validators: %d %+v %s", status, got, w)
	}
	after := balances(t, tn, devAddr(2))
	if new(big.Int).Sub(before[0], after[0]).Cmp(eth(2)) != 0 || after[1].Cmp(before[1]) != 0 {
		t.Fatalf("balances %v -> %v, want 2 native units debited", before, after)
	}

	tn.adminFaults("admin_setValidatorFaults", map[string]any{})
	claimable, _ := waitByID(t, tn, h, node.StatusClaimable)
	verifyWireProof(t, claimable.Proof, h, core.Address(to), core.NativeToken, 2e6)
}

// TestWithdrawStateInsufficientBalance, row "balance does not cover the
// amount": refused with error insufficient_balance, nothing debited, the
// nonce spent.
func TestWithdrawStateInsufficientBalance(t *testing.T) {
	tn := bridgeNode(t)
	feed := tn.withdrawalFeed(t, map[string]any{})
	before := balances(t, tn, devAddr(1))
	h := tn.poorRow(t, 1, 1)
	tn.tick(t)
	us, raw := feed.next(t)
	wantBatchRefusal(t, tn, us, raw, h, core.WithdrawInsufficientBalance, 1, before)
}

// TestWithdrawNotIncludedOverTheWire, row "the solver left the intent out":
// past the per-batch cap (WithdrawalsPerBatchMax 1 here) the second
// withdrawal of a batch is refused with error not_included, nothing
// debited, the nonce spent; the first is executed.
func TestWithdrawNotIncludedOverTheWire(t *testing.T) {
	tn := bridgeNode(t, func(c *node.Config) { c.WithdrawalsPerBatchMax = 1 })
	feed := tn.withdrawalFeed(t, map[string]any{})
	before := balances(t, tn, devAddr(1))
	first, second := tn.okRow(t, 1, 0), tn.okRow(t, 2, 1)
	tn.tick(t)
	us, raw := feed.next(t)
	if len(us) != 2 || us[0].TxHash != first || us[0].Error != "" {
		t.Fatalf("batch outcomes %s", raw)
	}
	wantBatchRefusal(t, tn, us, raw, second, core.WithdrawNotIncluded, 1, before)
	waitByID(t, tn, first, node.StatusClaimable)
}

// TestWithdrawStateTokenNotCovered, row "a node whose bridge configuration
// does not cover the token records the row": a WBTC withdrawal executed and
// claimable, then the node restarted (from a snapshot, the ledger's state
// is not replayed under the new configuration) with a configuration
// without WBTC. The row is refused with no error and no proof: the by-id
// status, svc_getBridgeClaimProof, the listing and the channel's catch-up
// all say so; the native withdrawal beside it is still claimable.
func TestWithdrawStateTokenNotCovered(t *testing.T) {
	dir := t.TempDir()
	opts := []nodeOption{func(c *node.Config) { c.DataDir = dir }}
	tn := bridgeNode(t, opts...)
	wbtc := tn.withdraw(t, 0, common.Address(node.DevWBTC), common.Address{0x70, 1}, eth(1))
	nat := tn.okRow(t, 2, 1)
	tn.tick(t)
	tick := tn.node.LastTickUs()
	claimable, _ := waitByID(t, tn, wbtc, node.StatusClaimable)
	verifyWireProof(t, claimable.Proof, wbtc, core.Address{0x70, 1}, node.DevWBTC, 1e8)
	if err := tn.admin.CallContext(context.Background(), nil, "admin_snapshot"); err != nil {
		t.Fatal(err)
	}
	tn.stop()

	tn = bridgeNode(t, append(opts, func(c *node.Config) {
		var keep []core.BridgeToken
		for _, bt := range c.Bridge.Tokens {
			if bt.Token != node.DevWBTC {
				keep = append(keep, bt)
			}
		}
		c.Bridge.Tokens = keep
	})...)
	feed := tn.withdrawalFeed(t, map[string]any{"since": tick - 1})
	us, raw := feed.next(t)
	u, fromFeed := outcome(t, us, raw, wbtc)
	if u.Error != "" || bytes.Contains(fromFeed, []byte(`"error"`)) {
		t.Fatalf("caught-up outcome %s, want no error", fromFeed)
	}
	if listed := restOK(t, tn, fmt.Sprintf("/v1/bridge/withdrawals?since=%d", tick-1)); !bytes.Contains(listed, fromFeed) {
		t.Fatalf("listing %s lacks %s", listed, fromFeed)
	}
	wantRefused(t, tn, wbtc, fromFeed, "")
	waitByID(t, tn, nat, node.StatusClaimable)
}
