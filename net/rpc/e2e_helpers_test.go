package rpc_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
	"github.com/ledgervenue/node/net/server"
	"github.com/ledgervenue/node/net/subs"
)

const (
	testAdminToken = "test-admin-token"
	chainID        = 0x50d
)

var gwei = big.NewInt(1_000_000_000)

// testNode is a whole node (ledger pipeline, dispatcher, gnet server) on a
// loopback port, with go-ethereum clients pointed at it.
type testNode struct {
	t     testing.TB
	node  *node.Node
	srv   *server.Server
	url   string
	ws    string
	hub   *subs.Hub
	eth   *ethclient.Client
	rpc   *gethrpc.Client
	admin *gethrpc.Client
	clock *node.ManualClock
	// stop shuts the node down (once; the test's cleanup calls it too), so
	// a test can start another on the same data directory.
	stop func()
}

type nodeOption func(*node.Config)

func startNode(t *testing.T, opts ...nodeOption) *testNode { return startNodeTB(t, opts...) }

func startNodeTB(t testing.TB, opts ...nodeOption) *testNode {
	t.Helper()
	return startNodeSrv(t, nil, opts...)
}

// startNodeSrv is startNodeTB with srvOpt (nil: none) adjusting the
// server's configuration before it starts, e.g. OutboundMax.
func startNodeSrv(t testing.TB, srvOpt func(*server.Config), opts ...nodeOption) *testNode {
	t.Helper()
	return startNodeWith(t, nodeSetup{srv: srvOpt}, opts...)
}

// nodeSetup adjusts how startNodeWith builds the test node.
type nodeSetup struct {
	srv func(*server.Config) // nil: the default server configuration
	// pumpHub leaves the subscription hub without its fan-out goroutine:
	// the test calls tn.hub.Pump itself (to make the fan-out lag).
	pumpHub bool
	// compat serves the --compat shapes (rpc.Config.Compat).
	compat bool
	// prefix is the service's own prefix on the wire (rpc.Config.Prefix).
	prefix rpc.Prefix
	// rpc adjusts the dispatcher's configuration (nil: the defaults).
	rpc func(*rpc.Config)
}

func startNodeWith(t testing.TB, setup nodeSetup, opts ...nodeOption) *testNode {
	t.Helper()
	clock := node.NewManualClock(1_767_225_600_000_000) // 2026-01-01T00:00:00Z
	cfg := node.Config{DataDir: t.TempDir(), ChainID: chainID, BaseFee: *uint256.NewInt(1e9), Validators: 4,
		CommitteeSeed: []byte("e2e"), Clock: clock, Genesis: node.DevGenesis(), Markets: node.DevMarkets()}
	for _, o := range opts {
		o(&cfg)
	}
	n, err := node.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hub := rpc.NewHub(n, setup.compat, setup.prefix)
	if !setup.pumpHub {
		hub.Start()
	}
	scfg := server.Config{Addr: "127.0.0.1:0", Multicore: true}
	if setup.srv != nil {
		setup.srv(&scfg)
	}
	rcfg := rpc.Config{Node: n, AdminToken: testAdminToken, Manual: clock, Hub: hub, Compat: setup.compat, Prefix: setup.prefix}
	if setup.rpc != nil {
		setup.rpc(&rcfg)
	}
	svc := rpc.New(rcfg)
	srv := server.New(svc, scfg)
	if err := srv.Start(); err != nil {
		svc.Close()
		t.Fatal(err)
	}
	tn := &testNode{t: t, node: n, srv: srv, url: "http://" + srv.Addr(), ws: "ws://" + srv.Addr(), clock: clock, hub: hub}
	ctx := context.Background()
	if tn.rpc, err = gethrpc.DialContext(ctx, tn.url); err != nil {
		t.Fatal(err)
	}
	tn.eth = ethclient.NewClient(tn.rpc)
	if tn.admin, err = gethrpc.DialOptions(ctx, tn.url, gethrpc.WithHeader("Authorization", "Bearer "+testAdminToken)); err != nil {
		t.Fatal(err)
	}
	tn.stop = sync.OnceFunc(func() {
		tn.rpc.Close()
		tn.admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hub.Close()
		srv.Stop(ctx)
		svc.Close()
		n.Close()
	})
	t.Cleanup(tn.stop)
	return tn
}

func devAddr(i int) common.Address { return common.Address(node.DevAddress(i)) }

// dynTx signs an EIP-1559 transfer.
func dynTx(t testing.TB, key *ecdsa.PrivateKey, chain int64, nonce uint64, to common.Address, value, tip, feeCap *big.Int) *types.Transaction {
	t.Helper()
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(chain)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chain), Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: 21000, To: &to, Value: value,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// waitReceipt polls like a wallet does until the receipt appears.
func (tn *testNode) waitReceipt(h common.Hash) *types.Receipt {
	tn.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r, err := tn.eth.TransactionReceipt(context.Background(), h)
		if err == nil {
			return r
		}
		time.Sleep(2 * time.Millisecond)
	}
	tn.t.Fatalf("no receipt for %s", h)
	return nil
}

func (tn *testNode) rawCall(method string, args ...any) json.RawMessage {
	tn.t.Helper()
	var out json.RawMessage
	if err := tn.rpc.CallContext(context.Background(), &out, method, args...); err != nil {
		tn.t.Fatalf("%s: %v", method, err)
	}
	return out
}

// wantRPCError asserts err is a JSON-RPC error with code, message and data.
func wantRPCError(t *testing.T, err error, code int, message string, data any) {
	t.Helper()
	var re gethrpc.Error
	if !errors.As(err, &re) {
		t.Fatalf("want JSON-RPC error %d, got %v", code, err)
	}
	if re.ErrorCode() != code || re.Error() != message {
		t.Fatalf("got error %d %q, want %d %q", re.ErrorCode(), re.Error(), code, message)
	}
	if data == nil {
		return
	}
	var de gethrpc.DataError
	if !errors.As(err, &de) || de.ErrorData() != data {
		t.Fatalf("error data %#v, want %#v", errorData(err), data)
	}
}

func errorData(err error) any {
	var de gethrpc.DataError
	if errors.As(err, &de) {
		return de.ErrorData()
	}
	return nil
}
