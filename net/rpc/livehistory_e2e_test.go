package rpc_test

import (
	"context"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
)

// The live network's history and vote methods (openapi.yaml's
// pod_getTransactions, pod_listTransactions, pod_getVoteBatches,
// pod_getVotes) under the svc_ prefix, over HTTP and WebSocket with
// go-ethereum's rpc client, against real transfers: every field with its
// type, and its value against the node's own answers.

// TestLiveHistoryMethods sends two transfers per transport, then checks
// svc_getTransactions, svc_listTransactions and svc_getVoteBatches.
func TestLiveHistoryMethods(t *testing.T) {
	tn, transports := startLiveNode(t)
	for i, c := range transports {
		t.Run(c.name, func(t *testing.T) {
			from, to := 5+i, 7+i // a sender and a recipient of each transport's own
			var txs []*types.Transaction
			for nonce := range uint64(2) {
				tx := dynTx(t, node.DevKey(from), chainID, nonce, devAddr(to), big.NewInt(int64(1+nonce)), gwei, big.NewInt(2e9))
				if err := tn.eth.SendTransaction(context.Background(), tx); err != nil {
					t.Fatal(err)
				}
				tn.waitReceipt(tx.Hash())
				txs = append(txs, tx)
			}
			liveGetTransactions(t, tn, c.client, txs)
			liveListTransactions(t, tn, c.client, devAddr(from), devAddr(to), txs)
			liveVoteBatches(t, tn, c.client, txs)
		})
	}
}

// liveArray calls method and decodes an array result into raw elements.
func liveArray(t *testing.T, c *gethrpc.Client, method string, args ...any) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	if err := c.CallContext(context.Background(), &out, method, args...); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return out
}

// liveGetTransactions: the known hashes come back in the order asked, each
// exactly as eth_getTransactionByHash answers it; an unknown one is left
// out; too many or malformed hashes are -32602.
func liveGetTransactions(t *testing.T, tn *testNode, c *gethrpc.Client, txs []*types.Transaction) {
	got := liveArray(t, c, "svc_getTransactions", []common.Hash{txs[1].Hash(), {0xde, 0xad}, txs[0].Hash()})
	if len(got) != 2 {
		t.Fatalf("svc_getTransactions: %d transactions, want 2", len(got))
	}
	for k, tx := range []*types.Transaction{txs[1], txs[0]} {
		if want := tn.rawCall("eth_getTransactionByHash", tx.Hash()); string(got[k]) != string(want) {
			t.Fatalf("svc_getTransactions[%d]:\n%s\nwant eth_getTransactionByHash's\n%s", k, got[k], want)
		}
		var signed types.Transaction // the signed envelope, as the SDK decodes it
		if err := json.Unmarshal(got[k], &signed); err != nil || signed.Hash() != tx.Hash() {
			t.Fatalf("svc_getTransactions[%d] does not decode to the signed transaction: %v", k, err)
		}
		var obj map[string]json.RawMessage
		json.Unmarshal(got[k], &obj)
		if _, ok := obj["svc_metadata"]; !ok {
			t.Fatalf("svc_getTransactions[%d] has no svc_metadata: %s", k, got[k])
		}
	}
	if got := liveArray(t, c, "svc_getTransactions", []common.Hash{}); len(got) != 0 {
		t.Fatalf("no hashes: %s", got)
	}
	err := c.CallContext(context.Background(), nil, "svc_getTransactions", make([]common.Hash, rpc.TxHashesMax+1))
	wantRPCError(t, err, -32602, "Invalid params", "tx_hashes: at most 256 hashes")
	err = c.CallContext(context.Background(), nil, "svc_getTransactions", []string{"0x12"})
	wantRPCError(t, err, -32602, "Invalid params", "tx_hashes: want an array of 0x-prefixed 32-byte hashes")
	err = c.CallContext(context.Background(), nil, "svc_getTransactions", txs[0].Hash())
	wantRPCError(t, err, -32602, "Invalid params", "tx_hashes: want an array of 0x-prefixed 32-byte hashes")
	err = c.CallContext(context.Background(), nil, "svc_getTransactions")
	wantRPCError(t, err, -32602, "Invalid params", "missing value for required argument 0")
}

// liveListTransactions: by sender, by recipient, by both, newest first, cut
// at the limit; the history's other records (the genesis deposits) are
// not signed transactions and never listed.
func liveListTransactions(t *testing.T, tn *testNode, c *gethrpc.Client, from, to common.Address, txs []*types.Transaction) {
	hashes := func(items []json.RawMessage) []common.Hash {
		var hs []common.Hash
		for _, it := range items {
			var tx struct {
				Hash common.Hash
				From common.Address
			}
			if err := json.Unmarshal(it, &tx); err != nil {
				t.Fatal(err)
			}
			hs = append(hs, tx.Hash)
		}
		return hs
	}
	newest := []common.Hash{txs[1].Hash(), txs[0].Hash()}
	for _, q := range []struct {
		args []any
		want []common.Hash
	}{
		{[]any{from}, newest},
		{[]any{nil, to}, newest},
		{[]any{from, to, 10}, newest},
		{[]any{from, nil, 1}, newest[:1]},
		{[]any{to}, nil},         // the recipient sent nothing
		{[]any{from, from}, nil}, // nor received from the sender
		{[]any{nil, from}, nil},
	} {
		items := liveArray(t, c, "svc_listTransactions", q.args...)
		if got := hashes(items); !slices.Equal(got, q.want) {
			t.Fatalf("svc_listTransactions%v: %v, want %v", q.args, got, q.want)
		}
		for _, it := range items {
			if want := tn.rawCall("eth_getTransactionByHash", hashes([]json.RawMessage{it})[0]); string(it) != string(want) {
				t.Fatalf("listed %s, want eth_getTransactionByHash's %s", it, want)
			}
		}
	}
	all := hashes(liveArray(t, c, "svc_listTransactions"))
	if len(all) < 2 || all[0] != txs[1].Hash() && all[1] != txs[1].Hash() {
		t.Fatalf("svc_listTransactions with no filter: %v, want the newest first", all)
	}
	for _, tx := range all {
		if r := tn.waitReceipt(tx); r.Type != types.DynamicFeeTxType {
			t.Fatalf("listed %s, a record of type %d, not a signed transaction", tx, r.Type)
		}
	}
	for _, bad := range []struct {
		args []any
		data string
	}{
		{[]any{from, nil, 0}, "limit: want an integer from 1 to 1000 or null"},
		{[]any{from, nil, 1001}, "limit: want an integer from 1 to 1000 or null"},
		{[]any{from, nil, "ten"}, "limit: want an integer from 1 to 1000 or null"},
		{[]any{"0x12"}, "from_account: want a 0x-prefixed 20-byte hex address or null"},
		{[]any{nil, 7}, "to_account: want a 0x-prefixed 20-byte hex address or null"},
	} {
		err := c.CallContext(context.Background(), nil, "svc_listTransactions", bad.args...)
		wantRPCError(t, err, -32602, "Invalid params", bad.data)
	}
}

// liveVoteBatches: the batch that attests each transfer lists its hash and
// carries the committee's votes, each a signature by its validator over the
// batch's digest; the range bounds are inclusive; pod_getVoteBatches is the
// same method.
func liveVoteBatches(t *testing.T, tn *testNode, c *gethrpc.Client, txs []*types.Transaction) {
	type vote struct {
		Index     int            `json:"validator_index"`
		Address   common.Address `json:"validator_address"`
		Signature hexutil.Bytes  `json:"signature"`
	}
	type batch struct {
		Seq       uint64        `json:"sequence_number"`
		Epoch     uint64        `json:"epoch"`
		Timestamp int64         `json:"timestamp"`
		Root      common.Hash   `json:"root"`
		Digest    common.Hash   `json:"digest"`
		TxHashes  []common.Hash `json:"tx_hashes"`
		Votes     []vote        `json:"votes"`
	}
	committee := tn.node.Committee()
	for _, tx := range txs {
		var r struct {
			Meta struct {
				Attestations []struct {
					Seq uint64 `json:"sequence_number"`
				}
				Epoch uint64      `json:"committee_epoch"`
				Root  common.Hash `json:"receipt_root"`
			} `json:"svc_metadata"`
		}
		json.Unmarshal(tn.rawCall("eth_getTransactionReceipt", tx.Hash()), &r)
		seq := r.Meta.Attestations[0].Seq
		raw := liveArray(t, c, "svc_getVoteBatches", seq, seq)
		if len(raw) != 1 {
			t.Fatalf("svc_getVoteBatches(%d, %d): %d batches", seq, seq, len(raw))
		}
		var obj map[string]json.RawMessage
		json.Unmarshal(raw[0], &obj)
		wantFields(t, "vote batch", obj, map[string]string{"sequence_number": "int", "epoch": "int", "timestamp": "int",
			"root": "string", "digest": "string", "tx_hashes": "other", "votes": "other"})
		var b batch
		if err := json.Unmarshal(raw[0], &b); err != nil {
			t.Fatal(err)
		}
		if b.Seq != seq || b.Epoch != r.Meta.Epoch || b.Root != r.Meta.Root || !slices.Contains(b.TxHashes, tx.Hash()) {
			t.Fatalf("batch %+v does not attest %s (receipt: seq %d, root %s)", b, tx.Hash(), seq, r.Meta.Root)
		}
		if len(b.Votes) != len(committee.Members) {
			t.Fatalf("batch %d: %d votes, want the committee's %d", seq, len(b.Votes), len(committee.Members))
		}
		for _, v := range b.Votes {
			var vo map[string]json.RawMessage
			json.Unmarshal(mustJSON(t, v), &vo)
			sig := slices.Clone(v.Signature)
			sig[64] -= 27
			pub, err := crypto.SigToPub(b.Digest[:], sig)
			if err != nil || crypto.PubkeyToAddress(*pub) != v.Address || common.Address(committee.Members[v.Index]) != v.Address {
				t.Fatalf("vote %+v is not its validator's signature over the digest %s: %v", v, b.Digest, err)
			}
		}
		var votes []map[string]json.RawMessage
		json.Unmarshal(obj["votes"], &votes)
		wantFields(t, "vote", votes[0], map[string]string{"validator_index": "int", "validator_address": "string", "signature": "string"})
		if pod := liveArray(t, c, "pod_getVoteBatches", seq, seq); string(pod[0]) != string(raw[0]) {
			t.Fatalf("pod_getVoteBatches %s, svc_getVoteBatches %s", pod[0], raw[0])
		}
	}
	// From the start, in sequence order, without gaps; null bounds are open.
	all := liveArray(t, c, "svc_getVoteBatches", nil, nil)
	if len(all) == 0 || len(all) > rpc.VoteBatchesMax {
		t.Fatalf("svc_getVoteBatches(null, null): %d batches", len(all))
	}
	for k, raw := range all {
		var b batch
		json.Unmarshal(raw, &b)
		if b.Seq != uint64(k+1) {
			t.Fatalf("batch %d has sequence number %d", k, b.Seq)
		}
	}
	if got := liveArray(t, c, "svc_getVoteBatches", 1_000_000); len(got) != 0 {
		t.Fatalf("batches past the newest: %s", got)
	}
	for _, bad := range []struct {
		args []any
		data string
	}{
		{[]any{5, 4}, "to_sequence: below from_sequence"},
		{[]any{-1}, "from_sequence: want a non-negative integer or null"},
		{[]any{nil, "x"}, "to_sequence: want a non-negative integer or null"},
	} {
		err := c.CallContext(context.Background(), nil, "svc_getVoteBatches", bad.args...)
		wantRPCError(t, err, -32602, "Invalid params", bad.data)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLiveVotes: while two of four validators are silent a transfer stays
// pending, and svc_getVotes (and pod_getVotes) answers its votes: the two
// signing validators, the quorum of three; at another nonce, for another
// account, and once the validators are back and it is attested, null.
func TestLiveVotes(t *testing.T) {
	tn, transports := startLiveNode(t)
	committee := tn.node.Committee()
	tn.adminFaults("admin_setValidatorFaults", map[string]any{"silent": 2})
	tx := faultTransfer(t, 2, 0, 3)
	if err := tn.eth.SendTransaction(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	for _, tr := range transports {
		c := tr.client
		for _, method := range []string{"svc_getVotes", "pod_getVotes"} {
			v := liveCall(t, c, method, devAddr(2), 0)
			wantFields(t, method, v, map[string]string{"account": "string", "nonce": "int", "txs": "other",
				"bot_voters": "other", "total_tx_votes": "int", "quorum": "int"})
			var got struct {
				Account common.Address
				Nonce   uint64
				Txs     []struct {
					TxHash common.Hash `json:"tx_hash"`
					Voters []struct {
						Index   int            `json:"validator_index"`
						Address common.Address `json:"validator_address"`
					}
				}
				BotVoters []json.RawMessage `json:"bot_voters"`
				Total     int               `json:"total_tx_votes"`
				Quorum    int
			}
			json.Unmarshal(mustJSON(t, v), &got)
			if got.Account != devAddr(2) || got.Nonce != 0 || len(got.Txs) != 1 || got.Txs[0].TxHash != tx.Hash() ||
				len(got.Txs[0].Voters) != 2 || got.Total != 2 || got.Quorum != committee.Quorum || got.BotVoters == nil || len(got.BotVoters) != 0 {
				t.Fatalf("%s while pending: %+v", method, got)
			}
			signing := tn.node.SigningValidators()
			for k, vr := range got.Txs[0].Voters {
				if vr.Index != signing[k] || vr.Address != common.Address(committee.Members[vr.Index]) {
					t.Fatalf("voter %+v, want validator %d of %v", vr, signing[k], signing)
				}
			}
			for _, args := range [][]any{{devAddr(2), 1}, {devAddr(3), 0}} {
				var none json.RawMessage
				if err := c.CallContext(context.Background(), &none, method, args...); err != nil || string(none) != "null" {
					t.Fatalf("%s%v: %s %v, want null", method, args, none, err)
				}
			}
		}
		err := c.CallContext(context.Background(), nil, "svc_getVotes", devAddr(2))
		wantRPCError(t, err, -32602, "Invalid params", "missing value for required argument 1")
		err = c.CallContext(context.Background(), nil, "svc_getVotes", devAddr(2), "zero")
		wantRPCError(t, err, -32602, "Invalid params", "nonce: want a non-negative integer")
		err = c.CallContext(context.Background(), nil, "svc_getVotes", "0x12", 0)
		wantRPCError(t, err, -32602, "Invalid params", "address: want 0x followed by 40 hex digits")
	}
	tn.adminFaults("admin_setValidatorFaults", map[string]any{})
	tn.waitReceipt(tx.Hash())
	var none json.RawMessage
	if err := tn.rpc.CallContext(context.Background(), &none, "svc_getVotes", devAddr(2), 0); err != nil || string(none) != "null" {
		t.Fatalf("svc_getVotes once attested: %s %v, want null", none, err)
	}
	if !strings.Contains(string(tn.rawCall("svc_getTxStatus", tx.Hash())), `"finalized"`) {
		t.Fatal("the transfer is not final")
	}
}
