package rpc_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/node"
)

// The live network's node methods (openapi.yaml's pod_status,
// pod_getPrecompiles, pod_getPrecompileInfo, pod_getValidatorStatus) under
// the svc_ prefix, over HTTP and WebSocket with go-ethereum's rpc client:
// every field of the openapi's schema with its type, and its value against
// the node's state.

// liveCall calls method over c and decodes the result into a map of raw
// fields, failing on an error or a result that is not an object.
func liveCall(t *testing.T, c *gethrpc.Client, method string, args ...any) map[string]json.RawMessage {
	t.Helper()
	var out map[string]json.RawMessage
	if err := c.CallContext(context.Background(), &out, method, args...); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return out
}

// wantFields checks that obj has exactly the named fields, each of the
// JSON kind given ("bool", "int", "string", "null", "int|null").
func wantFields(t *testing.T, what string, obj map[string]json.RawMessage, kinds map[string]string) {
	t.Helper()
	if len(obj) != len(kinds) {
		t.Fatalf("%s: fields %v, want %v", what, keys(obj), kinds)
	}
	for name, kind := range kinds {
		v, ok := obj[name]
		if !ok {
			t.Fatalf("%s: no field %q", what, name)
		}
		if got := jsonKind(v); !strings.Contains("|"+kind+"|", "|"+got+"|") {
			t.Fatalf("%s.%s = %s: a %s, want %s", what, name, v, got, kind)
		}
	}
}

func keys(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func jsonKind(v json.RawMessage) string {
	s := string(v)
	switch {
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "bool"
	case strings.HasPrefix(s, `"`):
		return "string"
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return "int"
	}
	return "other"
}

func jsonInt(t *testing.T, v json.RawMessage) int64 {
	t.Helper()
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		t.Fatalf("%s is not an integer", v)
	}
	return n
}

// liveTransport is one of a test node's two transports.
type liveTransport struct {
	name   string
	client *gethrpc.Client
}

// startLiveNode starts a test node and dials its WebSocket: the node and
// both transports, HTTP first.
func startLiveNode(t *testing.T, opts ...nodeOption) (*testNode, []liveTransport) {
	t.Helper()
	tn := startNode(t, opts...)
	ws, err := gethrpc.DialContext(context.Background(), tn.ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ws.Close)
	return tn, []liveTransport{{"HTTP", tn.rpc}, {"WebSocket", ws}}
}

// TestLiveNodeMethods runs every check over HTTP and over WebSocket.
func TestLiveNodeMethods(t *testing.T) {
	tn, transports := startLiveNode(t)
	for i, c := range transports {
		t.Run(c.name, func(t *testing.T) {
			liveStatus(t, tn, c.client)
			livePrecompiles(t, tn, c.client)
			liveValidatorStatus(t, tn, c.client, tn.sender(t, 1+i))
		})
	}
}

// liveStatus: read_only is false, and true exactly while f + 1 validators
// reject every transaction (then a send is refused, -32003).
func liveStatus(t *testing.T, tn *testNode, c *gethrpc.Client) {
	st := liveCall(t, c, "svc_status")
	wantFields(t, "svc_status", st, map[string]string{"read_only": "bool"})
	if string(st["read_only"]) != "false" {
		t.Fatalf("read_only %s on a healthy committee", st["read_only"])
	}
	tn.adminFaults("admin_setValidatorFaults", map[string]any{"reject": 2, "reason": "maintenance"})
	if st := liveCall(t, c, "svc_status"); string(st["read_only"]) != "true" {
		t.Fatalf("read_only %s while 2 of 4 validators reject everything", st["read_only"])
	}
	err := tn.eth.SendTransaction(context.Background(), dynTx(t, node.DevKey(3), chainID, 0, devAddr(4), gwei, gwei, gwei))
	wantRPCError(t, err, -32003, "Transaction rejected: maintenance", nil)
	tn.adminFaults("admin_setValidatorFaults", map[string]any{"reject": 1, "reason": "one"})
	if st := liveCall(t, c, "svc_status"); string(st["read_only"]) != "false" {
		t.Fatalf("read_only %s with one rejecting validator (f = 1)", st["read_only"])
	}
	tn.adminFaults("admin_setValidatorFaults", map[string]any{})
}

// livePrecompiles: the four enshrined applications, each with code and an
// interface naming its functions; an address that is none is -32602.
func livePrecompiles(t *testing.T, tn *testNode, c *gethrpc.Client) {
	var list []map[string]json.RawMessage
	if err := c.CallContext(context.Background(), &list, "svc_getPrecompiles"); err != nil {
		t.Fatal(err)
	}
	want := map[common.Address]string{
		common.Address(core.MintAddress): "mint(", common.Address(core.BridgeAddress): "withdraw(",
		common.Address(core.OrderbookAddress): "submitOrder(", common.Address(core.RecoveryAddress): "recover(",
	}
	if len(list) != len(want) {
		t.Fatalf("%d precompiles, want %d", len(list), len(want))
	}
	for _, p := range list {
		wantFields(t, "precompile", p, map[string]string{"address": "string", "name": "string"})
		var addr common.Address
		var name string
		if err := json.Unmarshal(p["address"], &addr); err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(p["name"], &name)
		fn, ok := want[addr]
		if !ok || name == "" {
			t.Fatalf("precompile %s %q is not an enshrined application", addr, name)
		}
		delete(want, addr)
		if code, err := tn.eth.CodeAt(context.Background(), addr, nil); err != nil || len(code) == 0 {
			t.Fatalf("precompile %s has no code: %x %v", addr, code, err)
		}
		info := liveCall(t, c, "svc_getPrecompileInfo", addr)
		wantFields(t, "svc_getPrecompileInfo", info, map[string]string{"address": "string", "name": "string", "interface": "string"})
		if string(info["address"]) != string(p["address"]) || string(info["name"]) != string(p["name"]) ||
			!strings.Contains(string(info["interface"]), "function "+fn) {
			t.Fatalf("svc_getPrecompileInfo(%s) %v, want %s's interface with %s", addr, info, name, fn)
		}
	}
	err := c.CallContext(context.Background(), nil, "svc_getPrecompileInfo", devAddr(1))
	wantRPCError(t, err, -32602, "Invalid params", "address: not an enshrined precompile (svc_getPrecompiles lists them)")
	err = c.CallContext(context.Background(), nil, "svc_getPrecompileInfo", "0x1234")
	wantRPCError(t, err, -32602, "Invalid params", "address: want 0x followed by 40 hex digits")
	err = c.CallContext(context.Background(), nil, "svc_getPrecompileInfo")
	wantRPCError(t, err, -32602, "Invalid params", "missing value for required argument 0")
}

// liveValidatorStatus: the node's sequence, past-perfect time, last tick
// and committee, each against the node's own answers.
func liveValidatorStatus(t *testing.T, tn *testNode, c *gethrpc.Client, trader *obSender) {
	kinds := map[string]string{"validator_index": "null", "validator_address": "null", "append_log_sequence": "int",
		"current_ppt": "int", "last_executed_batch": "int|null", "next_solution_deadline": "int|null",
		"quorum": "int", "committee_size": "int"}
	// A tick: an order, then the interval passes.
	trader.mustSend(t, tn.submit(t, wethBook, eth(1), eth(1000), 0, 0, 0))
	tn.tick(t)
	var ppt string
	if err := c.CallContext(context.Background(), &ppt, "svc_pastPerfectTime"); err != nil {
		t.Fatal(err)
	}
	st := liveCall(t, c, "svc_getValidatorStatus")
	wantFields(t, "svc_getValidatorStatus", st, kinds)
	var sh struct{ Seq string }
	if err := tn.admin.CallContext(context.Background(), &sh, "admin_stateHash"); err != nil {
		t.Fatal(err)
	}
	if seq, _ := strconv.ParseUint(strings.TrimPrefix(sh.Seq, "0x"), 16, 64); uint64(jsonInt(t, st["append_log_sequence"])) != seq {
		t.Fatalf("append_log_sequence %s, admin_stateHash seq %d", st["append_log_sequence"], seq)
	}
	if before, _ := strconv.ParseInt(ppt, 10, 64); jsonInt(t, st["current_ppt"]) < before {
		t.Fatalf("current_ppt %s before svc_pastPerfectTime %s", st["current_ppt"], ppt)
	}
	last := jsonInt(t, st["last_executed_batch"])
	if now := tn.clock.NowMicros(); last <= 0 || last%intervalUs != 0 || last > now || now-last >= intervalUs {
		t.Fatalf("last_executed_batch %d, clock %d: not the tick admin_advanceTime just ran", last, now)
	}
	if next := jsonInt(t, st["next_solution_deadline"]); next != last+clob.TransferIntervalUs {
		t.Fatalf("next_solution_deadline %d, want %d", next, last+clob.TransferIntervalUs)
	}
	committee := liveCall(t, c, "svc_getCommittee")
	var replicas []string
	json.Unmarshal(committee["replicas"], &replicas)
	if string(st["quorum"]) != string(committee["quorum_size"]) || jsonInt(t, st["committee_size"]) != int64(len(replicas)) {
		t.Fatalf("quorum %s, committee_size %s; committee %v", st["quorum"], st["committee_size"], committee)
	}
}
