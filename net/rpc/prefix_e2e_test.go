package rpc_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ledgervenue/node/net/rpc"
)

// TestPrefixModes: with --prefix svc (the default) and --prefix pod the
// node accepts the methods and subscription types of both prefixes and
// writes its own field names with the one it was started with: metadata
// of transactions, receipts (over HTTP, in listings and on the receipt
// channels) and logs, and the bridge configuration's token key. go-ethereum
// over HTTP and WebSocket, plain HTTP for REST.
func TestPrefixModes(t *testing.T) {
	for _, mode := range []rpc.Prefix{rpc.PrefixSvc, rpc.PrefixPod} {
		t.Run(mode.String(), func(t *testing.T) {
			own, other := mode.String()+"_", "pod_"
			if mode == rpc.PrefixPod {
				other = "svc_"
			}
			tn := startNodeWith(t, nodeSetup{prefix: mode}, withBridge)
			ctx := context.Background()

			// Methods under both prefixes give the same answer; an unknown
			// pod_ name is not found.
			if a, b := tn.rawCall("svc_getCommittee"), tn.rawCall("pod_getCommittee"); string(a) != string(b) || len(a) < 10 {
				t.Fatalf("svc_getCommittee %s, pod_getCommittee %s", a, b)
			}
			var out json.RawMessage
			wantRPCError(t, tn.rpc.CallContext(ctx, &out, "pod_noSuchMethod"), -32601, "Method not found", nil)

			// Receipt channels under the other prefix's name, over WebSocket.
			c := tn.dialWS(t)
			receipts, sub := tn.ethSubscribe(t, c, other+"confirmedReceipts", map[string]any{})
			logs, lsub := tn.ethSubscribe(t, c, "logs", map[string]any{})
			books, bsub := tn.ethSubscribe(t, c, other+"orderbook", map[string]any{"orderbook_ids": []common.Hash{wethBook}})

			alice, bob := tn.sender(t, 0), tn.sender(t, 1)
			buy := alice.mustSend(t, tn.submit(t, wethBook, eth(1), eth(3000), 0, 0, 0))
			transfer := bob.mustSend(t, pack(t, "transfer", weth, alice.addr(), e18, tn.nextDeadline()))
			tn.tick(t)
			tn.waitReceipt(buy.TxHash)

			wantMeta := func(what string, raw []byte) {
				t.Helper()
				var m map[string]json.RawMessage
				if err := json.Unmarshal(raw, &m); err != nil {
					t.Fatalf("%s: %v: %s", what, err, raw)
				}
				if meta, ok := m[own+"metadata"]; !ok || !strings.Contains(string(meta), `"receipt_root":"0x`) {
					t.Fatalf("%s has no %smetadata with a receipt root: %s", what, own, raw)
				}
				if _, ok := m[other+"metadata"]; ok {
					t.Fatalf("%s carries %smetadata: %s", what, other, raw)
				}
			}
			wantMeta("eth_getTransactionReceipt", tn.rawCall("eth_getTransactionReceipt", transfer.TxHash))
			wantMeta("eth_getTransactionByHash", tn.rawCall("eth_getTransactionByHash", transfer.TxHash))
			var logList []json.RawMessage
			if err := json.Unmarshal(tn.rawCall("eth_getLogs", map[string]any{"fromBlock": "earliest"}), &logList); err != nil || len(logList) == 0 {
				t.Fatalf("eth_getLogs: %d logs, %v", len(logList), err)
			}
			wantMeta("eth_getLogs' log", logList[0])
			var page struct {
				Items []json.RawMessage `json:"items"`
			}
			list := tn.rawCall(other+"listConfirmedReceipts", map[string]any{"since": 0})
			if err := json.Unmarshal(list, &page); err != nil || len(page.Items) < 2 {
				t.Fatalf("%slistConfirmedReceipts: %s (%v)", other, list, err)
			}
			wantMeta(other+"listConfirmedReceipts' item", page.Items[0])
			wantMeta(other+"confirmedReceipts' receipt", recv(t, receipts, sub))
			wantMeta("logs' log", recv(t, logs, lsub))
			if frame := recv(t, books, bsub); !strings.Contains(string(frame), `"buys"`) {
				t.Fatalf("%sorderbook frame %s", other, frame)
			}

			// The bridge configuration's token key.
			cfg := string(restOK(t, tn, "/v1/bridge/config"))
			if !strings.Contains(cfg, `"`+own+`token":"0x`) || strings.Contains(cfg, other+"token") {
				t.Fatalf("/v1/bridge/config %s, want %stoken keys", cfg, own)
			}

			// A write under the other prefix's name: the synchronous send.
			next := bob.mustSend(t, pack(t, "transfer", weth, alice.addr(), e18, tn.nextDeadline()))
			var status json.RawMessage
			if err := tn.rpc.CallContext(ctx, &status, other+"getTxStatus", next.TxHash); err != nil {
				t.Fatalf("%sgetTxStatus: %v", other, err)
			}
		})
	}
}
