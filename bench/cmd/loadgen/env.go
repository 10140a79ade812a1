package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/bench/baseline"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
	"github.com/ledgervenue/node/net/server"
	"github.com/ledgervenue/node/net/subs"
)

// Chain settings of the in-process node, as ledgerd --dev uses them.
const (
	chainID    = 0x50d
	baseFeeWei = 1_000_000_000
	validators = 4
)

// env is the node and the baseline, both on loopback ports.
type env struct {
	dir      string
	node     *node.Node
	srv      *server.Server
	hub      *subs.Hub // eth_subscribe over WebSocket, as ledgerd serves it
	base     *baseline.Server
	token    string            // admin bearer token of the node
	manual   *node.ManualClock // the node's clock under -clock manual, else nil
	oursAddr string
	baseAddr string
	// groups counts the node's group commits (one Badger transaction and
	// fsync each), through its BeforeAppend hook.
	groups atomic.Int64
}

func startEnv(clock string) (*env, error) {
	dir, err := os.MkdirTemp("", "loadgen-")
	if err != nil {
		return nil, fmt.Errorf("cannot create datadir: %w", err)
	}
	e := &env{dir: dir}
	if err := e.start(clock); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *env) start(clock string) error {
	var token [16]byte
	if _, err := rand.Read(token[:]); err != nil {
		return err
	}
	e.token = hex.EncodeToString(token[:])
	cfg := node.Config{DataDir: e.dir, ChainID: chainID, BaseFee: *uint256.NewInt(baseFeeWei),
		Validators: validators, CommitteeSeed: []byte("loadgen"), Clock: node.WallClock{}, Genesis: node.DevGenesis(),
		Markets: append(node.DevMarkets(), node.DevPerpMarkets()...), Bridge: node.DevBridgeConfig(), BeforeAppend: func() error { e.groups.Add(1); return nil }}
	var manual *node.ManualClock
	if clock == "manual" {
		manual = node.NewManualClock(time.Now().UnixMicro())
		cfg.Clock = manual
	}
	e.manual = manual
	n, err := node.Open(cfg)
	if err != nil {
		return fmt.Errorf("cannot open node: %w", err)
	}
	e.node = n
	e.hub = rpc.StartHub(n, false, rpc.PrefixSvc)
	srv := server.New(rpc.New(rpc.Config{Node: n, AdminToken: e.token, Manual: manual, Hub: e.hub}),
		server.Config{Addr: "127.0.0.1:0", Multicore: true})
	if err := srv.Start(); err != nil {
		return fmt.Errorf("cannot start node server: %w", err)
	}
	e.srv, e.oursAddr = srv, srv.Addr()
	if e.base, err = baseline.Start("127.0.0.1:0", baseline.NewHandler(chainID, baseline.NativeBalances(node.DevGenesis()))); err != nil {
		return err
	}
	e.baseAddr = e.base.Addr()
	return nil
}

func (e *env) close() {
	if e.base != nil {
		e.base.Close()
	}
	if e.hub != nil {
		e.hub.Close() // subscribers still connected get -32021, as under ledgerd
	}
	if e.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if e.hub != nil {
			flush, cancelFlush := context.WithTimeout(ctx, time.Second)
			e.srv.WaitWSFlushed(flush)
			cancelFlush()
		}
		e.srv.Stop(ctx)
		cancel()
	}
	if e.node != nil {
		e.node.Close()
	}
	os.RemoveAll(e.dir)
}

// adminHeader is the request header line that authorizes admin_* calls.
func (e *env) adminHeader() string { return "Authorization: Bearer " + e.token + "\r\n" }
