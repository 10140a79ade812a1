package rpc_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// The live network's account and solver diagnostics (openapi.yaml's
// pod_getValidatorAccountStatus, pod_getAccountDiagnostics and
// pod_getSolverState) under the svc_ prefix, over HTTP and WebSocket with
// go-ethereum's rpc client: the openapi's fields and types, and the values
// against the node's state after real transfers, orders, ticks and a lock.

// accountDiagnostics is the openapi's AccountDiagnosticsResponse.
type accountDiagnostics struct {
	Account       common.Address `json:"account"`
	NextFinalized uint64         `json:"next_finalized_nonce"`
	Expected      uint64         `json:"expected_nonce"`
	LastFinalized common.Hash    `json:"last_finalized_tx"`
	IsLocked      bool           `json:"is_locked"`
	Quorum        int            `json:"quorum"`
	Validators    []struct {
		Index        int             `json:"validator_index"`
		Address      common.Address  `json:"validator_address"`
		Highest      *uint64         `json:"highest_attested_nonce"`
		CurrentVote  json.RawMessage `json:"current_vote"`
		Equivocating bool            `json:"equivocating"`
	} `json:"validators"`
	NeedsRecovery  bool      `json:"needs_recovery"`
	RecoveryTarget *targetTx `json:"recovery_target"`
	PendingOrder   bool      `json:"has_clob_order_pending_solution"`
	Equivocating   bool      `json:"equivocating"`
}

// validatorAccountStatus is the openapi's ValidatorAccountStatusResponse.
type validatorAccountStatus struct {
	Index         int            `json:"validator_index"`
	Address       common.Address `json:"validator_address"`
	Account       common.Address `json:"account"`
	NextFinalized uint64         `json:"account_next_finalized_nonce"`
	Expected      uint64         `json:"account_expected_nonce"`
	Quorum        int            `json:"quorum"`
	Pending       []struct {
		Nonce uint64          `json:"nonce"`
		Vote  json.RawMessage `json:"vote"`
	} `json:"pending_nonces"`
}

var (
	diagnosticsKinds = map[string]string{"account": "string", "next_finalized_nonce": "int", "expected_nonce": "int",
		"last_finalized_tx": "string", "is_locked": "bool", "quorum": "int", "validators": "other", "needs_recovery": "bool",
		"recovery_target": "other|null", "has_clob_order_pending_solution": "bool", "equivocating": "bool"}
	validatorDiagnosticsKinds = map[string]string{"validator_index": "int", "validator_address": "string",
		"highest_attested_nonce": "int|null", "current_vote": "other", "equivocating": "bool"}
	accountStatusKinds = map[string]string{"validator_index": "int", "validator_address": "string", "account": "string",
		"account_next_finalized_nonce": "int", "account_expected_nonce": "int", "quorum": "int", "pending_nonces": "other"}
)

// diagnose calls svc_getAccountDiagnostics (or its pod_ name) for a,
// checks every field's type against the openapi and decodes it.
func diagnose(t *testing.T, c *gethrpc.Client, method string, a common.Address) accountDiagnostics {
	t.Helper()
	raw := liveCall(t, c, method, a)
	wantFields(t, method, raw, diagnosticsKinds)
	var vs []map[string]json.RawMessage
	json.Unmarshal(raw["validators"], &vs)
	for _, v := range vs {
		wantFields(t, "validators[]", v, validatorDiagnosticsKinds)
	}
	var d accountDiagnostics
	if err := json.Unmarshal(mustJSON(t, raw), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// accountStatus calls svc_getValidatorAccountStatus for member i of the
// committee and a, checking the fields' types.
func accountStatus(t *testing.T, tn *testNode, c *gethrpc.Client, i int, a common.Address) validatorAccountStatus {
	t.Helper()
	raw := liveCall(t, c, "svc_getValidatorAccountStatus", common.Address(tn.node.Committee().Members[i]), a)
	wantFields(t, "svc_getValidatorAccountStatus", raw, accountStatusKinds)
	var s validatorAccountStatus
	if err := json.Unmarshal(mustJSON(t, raw), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// voteFor is the ValidatorVoteKind for a vote on h; the zero hash is
// not_seen.
func voteFor(h common.Hash) string {
	if h == (common.Hash{}) {
		return `{"kind":"not_seen"}`
	}
	return `{"kind":"tx","tx_hash":"` + h.Hex() + `"}`
}

// wantWindow checks the diagnostics and every validator's account status
// of a: the nonces, the finalized transaction, and each member's vote
// (voted: the members that voted for pending, the transaction at nonce
// expected − 1 while it is not final).
func wantWindow(t *testing.T, tn *testNode, c *gethrpc.Client, a common.Address, next, expected uint64,
	last, pending common.Hash, voted []int) {
	t.Helper()
	committee := tn.node.Committee()
	d := diagnose(t, c, "svc_getAccountDiagnostics", a)
	if d.Account != a || d.NextFinalized != next || d.Expected != expected || d.LastFinalized != last ||
		d.Quorum != committee.Quorum || len(d.Validators) != len(committee.Members) || d.Equivocating {
		t.Fatalf("diagnostics of %s: %+v, want nonces %d..%d, last %s", a, d, next, expected, last)
	}
	for i, v := range d.Validators {
		want, hasVoted := common.Hash{}, slices.Contains(voted, i)
		if hasVoted {
			want = pending
		}
		if v.Index != i || v.Address != common.Address(committee.Members[i]) || v.Equivocating ||
			string(v.CurrentVote) != voteFor(want) || (v.Highest != nil) != hasVoted || hasVoted && *v.Highest != expected-1 {
			t.Fatalf("validator %d of %s: %+v (current_vote %s), want a vote %s", i, a, v, v.CurrentVote, voteFor(want))
		}
		s := accountStatus(t, tn, c, i, a)
		if s.Index != i || s.Address != v.Address || s.Account != a || s.NextFinalized != next || s.Expected != expected ||
			s.Quorum != committee.Quorum || len(s.Pending) != int(expected-next) {
			t.Fatalf("account status of validator %d, %s: %+v, want nonces %d..%d", i, a, s, next, expected)
		}
		for k, p := range s.Pending {
			if p.Nonce != next+uint64(k) || p.Nonce == expected-1 && string(p.Vote) != voteFor(want) {
				t.Fatalf("validator %d, %s: pending nonce %d vote %s, want %s", i, a, p.Nonce, p.Vote, voteFor(want))
			}
		}
	}
}

// TestLiveAccountStatus: svc_getAccountDiagnostics and
// svc_getValidatorAccountStatus over HTTP and WebSocket on a fresh
// account, while a transfer is pending with two silent validators, once it
// is final, with an order waiting for its tick and after it, and locked;
// the refusals; and pod_getAccountDiagnostics.
func TestLiveAccountStatus(t *testing.T) {
	tn, transports := startLiveNode(t)
	ctx := context.Background()
	for i, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := tr.client
			from, fromKey := 2+i, 2+i
			a := devAddr(from)
			wantWindow(t, tn, c, a, 0, 0, common.Hash{}, common.Hash{}, nil)

			// Two silent validators: the transfer is applied and durable,
			// voted on by the two that sign, short of a quorum.
			tn.adminFaults("admin_setValidatorFaults", map[string]any{"silent": 2})
			tx := faultTransfer(t, fromKey, 0, 7)
			if err := tn.eth.SendTransaction(ctx, tx); err != nil {
				t.Fatal(err)
			}
			signing := tn.node.SigningValidators()
			if len(signing) != 2 {
				t.Fatalf("signing validators %v, want two", signing)
			}
			wantWindow(t, tn, c, a, 0, 1, common.Hash{}, tx.Hash(), signing)
			var status struct {
				Status string `json:"status"`
				Next   uint64 `json:"account_next_finalized_nonce"`
			}
			json.Unmarshal(tn.rawCall("svc_getTxStatus", tx.Hash()), &status)
			if status.Status != "pending" || status.Next != 0 {
				t.Fatalf("svc_getTxStatus while pending: %+v", status)
			}
			tn.adminFaults("admin_setValidatorFaults", map[string]any{})
			tn.waitReceipt(tx.Hash())
			waitFinal(t, c, a, 1)
			wantWindow(t, tn, c, a, 1, 1, tx.Hash(), common.Hash{}, nil)

			// An order waits for its tick; the tick drains it.
			trader := tn.sender(t, 4+i)
			if d := diagnose(t, c, "svc_getAccountDiagnostics", trader.addr()); d.PendingOrder {
				t.Fatal("a pending order before any was sent")
			}
			trader.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1000), 0, 0, 0))
			if d := diagnose(t, c, "svc_getAccountDiagnostics", trader.addr()); !d.PendingOrder {
				t.Fatalf("no pending order after a submit admitted: %+v", d)
			}
			var orders struct {
				Orders []struct{ Status string } `json:"orders"`
			}
			json.Unmarshal(tn.rawCall("ob_getOrders", trader.addr(), map[string]any{"orderbook_id": wethBook}), &orders)
			if len(orders.Orders) != 1 || orders.Orders[0].Status != "pending" {
				t.Fatalf("ob_getOrders before the tick: %+v", orders)
			}
			tn.tick(t)
			if d := diagnose(t, c, "pod_getAccountDiagnostics", trader.addr()); d.PendingOrder {
				t.Fatalf("a pending order after the tick: %+v", d)
			}
			// A delegated order is its master's, not its signer's.
			ds := newDelegateSession(t, tn, tn.eth, node.DevKey(6+i))
			ds.send(t, tn.submit(t, wethBook, eth(1), eth(1000), 0, 0, 0))
			if d := diagnose(t, c, "svc_getAccountDiagnostics", ds.master); !d.PendingOrder {
				t.Fatalf("the master of a delegated order has no pending order: %+v", d)
			}
			if d := diagnose(t, c, "svc_getAccountDiagnostics", ds.addr()); d.PendingOrder {
				t.Fatalf("the delegate key has a pending order: %+v", d)
			}
			tn.tick(t)

			// Locked: the recovery target is the newest transaction.
			var locked targetTx
			if err := tn.admin.CallContext(ctx, &locked, "admin_lockAccount", map[string]any{"address": a}); err != nil {
				t.Fatal(err)
			}
			d := diagnose(t, c, "svc_getAccountDiagnostics", a)
			if !d.IsLocked || !d.NeedsRecovery || d.RecoveryTarget == nil || *d.RecoveryTarget != targetOf(tx.Hash(), 0) ||
				locked != *d.RecoveryTarget {
				t.Fatalf("diagnostics of a locked account: %+v, target %+v", d, d.RecoveryTarget)
			}
			if d := diagnose(t, c, "svc_getAccountDiagnostics", devAddr(8)); d.IsLocked || d.NeedsRecovery || d.RecoveryTarget != nil {
				t.Fatalf("diagnostics of an open account: %+v", d)
			}
			liveStatusRefusals(t, c)
		})
	}
}

// waitFinal waits until a's next finalized nonce reaches next.
func waitFinal(t *testing.T, c *gethrpc.Client, a common.Address, next uint64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if d := diagnose(t, c, "svc_getAccountDiagnostics", a); d.NextFinalized == next {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: next finalized nonce never reached %d", a, next)
		}
	}
}

func liveStatusRefusals(t *testing.T, c *gethrpc.Client) {
	ctx := context.Background()
	var none json.RawMessage
	if err := c.CallContext(ctx, &none, "svc_getValidatorAccountStatus", devAddr(1), devAddr(2)); err != nil || string(none) != "null" {
		t.Fatalf("a validator outside the committee: %s %v, want null", none, err)
	}
	for _, tc := range []struct {
		method string
		args   []any
		data   string
	}{
		{"svc_getValidatorAccountStatus", nil, "missing value for required argument 0"},
		{"svc_getValidatorAccountStatus", []any{devAddr(1)}, "missing value for required argument 1"},
		{"svc_getValidatorAccountStatus", []any{"0x12", devAddr(1)}, "validator: want a 0x-prefixed 20-byte hex address"},
		{"svc_getValidatorAccountStatus", []any{devAddr(1), 7}, "account: want a 0x-prefixed 20-byte hex address"},
		{"svc_getAccountDiagnostics", nil, "missing value for required argument 0"},
		{"svc_getAccountDiagnostics", []any{nil}, "missing value for required argument 0"},
		{"svc_getAccountDiagnostics", []any{"0xzz"}, "account: want a 0x-prefixed 20-byte hex address"},
	} {
		err := c.CallContext(ctx, nil, tc.method, tc.args...)
		wantRPCError(t, err, -32602, "Invalid params", tc.data)
	}
}

// solverState is the openapi's SolverStateResponse.
type solverState struct {
	Address       common.Address     `json:"solver_address"`
	PubKey        string             `json:"solver_pub_key"`
	NextFinalized uint64             `json:"next_finalized_nonce"`
	Executed      *solverBatch       `json:"last_executed_batch"`
	Generated     *solverBatch       `json:"last_generated_batch"`
	Votes         map[string][]int64 `json:"next_solution_votes"`
}

type solverBatch struct {
	Deadline int64       `json:"deadline"`
	TxHash   common.Hash `json:"tx_hash"`
}

var pubKeyHex = regexp.MustCompile(`^[0-9a-f]{66}$`)

func getSolverState(t *testing.T, c *gethrpc.Client, method string) solverState {
	t.Helper()
	raw := liveCall(t, c, method)
	wantFields(t, method, raw, map[string]string{"solver_address": "string", "solver_pub_key": "string",
		"next_finalized_nonce": "int", "last_executed_batch": "other|null", "last_generated_batch": "other|null",
		"next_solution_votes": "other"})
	var s solverState
	if err := json.Unmarshal(mustJSON(t, raw), &s); err != nil {
		t.Fatal(err)
	}
	for _, b := range []json.RawMessage{raw["last_executed_batch"], raw["last_generated_batch"]} {
		var fields map[string]json.RawMessage
		if json.Unmarshal(b, &fields); fields != nil {
			wantFields(t, "solver batch", fields, map[string]string{"deadline": "int", "tx_hash": "string"})
		}
	}
	if s.Votes == nil {
		t.Fatalf("%s: next_solution_votes %s, want an object", method, raw["next_solution_votes"])
	}
	return s
}

// TestLiveSolverState: svc_getSolverState over HTTP and WebSocket: the
// orderbook address with committee member 0's key, no batch before any
// tick, then the newest tick as both batches, its votes while two silent
// validators keep it pending, none once final; and pod_getSolverState.
func TestLiveSolverState(t *testing.T) {
	tn, transports := startLiveNode(t)
	ctx := context.Background()
	committee := tn.node.Committee()
	for i, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := tr.client
			s := getSolverState(t, c, "svc_getSolverState")
			if s.Address != common.Address(core.OrderbookAddress) || !pubKeyHex.MatchString(s.PubKey) {
				t.Fatalf("solver %s key %q", s.Address, s.PubKey)
			}
			key, _ := hex.DecodeString(s.PubKey)
			pub, err := crypto.DecompressPubkey(key)
			if err != nil || crypto.PubkeyToAddress(*pub) != common.Address(committee.Members[0]) {
				t.Fatalf("solver_pub_key %s is not committee member 0's key: %v", s.PubKey, err)
			}
			nonce, err := tn.eth.NonceAt(ctx, s.Address, nil)
			if err != nil || s.NextFinalized != nonce {
				t.Fatalf("next_finalized_nonce %d, the orderbook address's nonce %d %v", s.NextFinalized, nonce, err)
			}
			if i == 0 && (s.Executed != nil || s.Generated != nil || len(s.Votes) != 0) {
				t.Fatalf("solver state before any tick: %+v", s)
			}

			// A tick held pending: two silent validators vote for it.
			trader := tn.sender(t, 3+i)
			order := trader.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1000), 0, 0, 0))
			tn.adminFaults("admin_setValidatorFaults", map[string]any{"silent": 2})
			tn.tick(t)
			s = getSolverState(t, c, "svc_getSolverState")
			last := tn.node.LastTickUs()
			if s.Executed == nil || s.Generated == nil || *s.Executed != *s.Generated || s.Executed.Deadline != last {
				t.Fatalf("solver batches %+v %+v, want the tick at %d", s.Executed, s.Generated, last)
			}
			tick := s.Executed.TxHash
			var status struct {
				Status  string         `json:"status"`
				Account common.Address `json:"account"`
			}
			json.Unmarshal(tn.rawCall("svc_getTxStatus", tick), &status)
			if status.Status != "pending" || status.Account != s.Address {
				t.Fatalf("svc_getTxStatus of the tick %s: %+v", tick, status)
			}
			signing := tn.node.SigningValidators()
			if votes := s.Votes[tick.Hex()]; len(s.Votes) != 1 || len(votes) != 2 ||
				votes[0] != int64(signing[0]) || votes[1] != int64(signing[1]) {
				t.Fatalf("next_solution_votes %v, want {%s: %v}", s.Votes, tick, signing)
			}

			// Final: no votes left; the order landed in that tick.
			tn.adminFaults("admin_setValidatorFaults", map[string]any{})
			for deadline := time.Now().Add(5 * time.Second); len(s.Votes) != 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the tick's votes stayed: %v", s.Votes)
				}
				s = getSolverState(t, c, "pod_getSolverState")
			}
			if s.Executed == nil || s.Executed.TxHash != tick {
				t.Fatalf("last batch %+v, want the tick %s", s.Executed, tick)
			}
			json.Unmarshal(tn.rawCall("svc_getTxStatus", tick), &status)
			if status.Status != "finalized" {
				t.Fatalf("svc_getTxStatus of the tick once its votes are gone: %+v", status)
			}
			r := tn.waitReceipt(order.TxHash)
			if r.BlockHash != tick {
				t.Fatalf("the order landed in block %s, want the tick %s", r.BlockHash, tick)
			}
		})
	}
}

// TestSolverStateReverted: evm_revert to a state before any tick leaves
// svc_getSolverState without a batch again.
func TestSolverStateReverted(t *testing.T) {
	tn := startDevNode(t)
	ctx := context.Background()
	var start string
	if err := tn.rpc.CallContext(ctx, &start, "evm_snapshot"); err != nil {
		t.Fatal(err)
	}
	tn.sender(t, 1).mustSend(t, tn.submit(t, wethBook, eth(1), eth(1000), 0, 0, 0))
	tn.tick(t)
	if s := getSolverState(t, tn.rpc, "svc_getSolverState"); s.Executed == nil || s.Executed.Deadline != tn.node.LastTickUs() {
		t.Fatalf("solver state after a tick: %+v", s)
	}
	var ok bool
	if err := tn.rpc.CallContext(ctx, &ok, "evm_revert", start); err != nil || !ok {
		t.Fatalf("evm_revert: %v %v", ok, err)
	}
	if s := getSolverState(t, tn.rpc, "svc_getSolverState"); s.Executed != nil || s.Generated != nil || len(s.Votes) != 0 {
		t.Fatalf("solver state reverted to before any tick: %+v", s)
	}
}
