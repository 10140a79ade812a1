package rpc_test

import (
	"testing"

	"github.com/ledgervenue/node/net/http1"
	"github.com/ledgervenue/node/net/rpc"
	"github.com/ledgervenue/node/net/server"
)

// BenchmarkServeChainIDLatencyRule is BenchmarkServeChainID with one
// latency rule in force for every answer (a uniform draw): the
// dispatcher's cost of matching the rule and drawing the delay, which the
// transport then waits out (net/server, delay.go).
func BenchmarkServeChainIDLatencyRule(b *testing.B) {
	tn := startNodeTB(b)
	svc := rpc.New(rpc.Config{Node: tn.node, Dev: true})
	b.Cleanup(svc.Close)
	w := &server.Response{}
	svc.Serve(&http1.Request{Method: []byte("POST"), Path: []byte("/"), Body: []byte(
		`{"jsonrpc":"2.0","id":1,"method":"lab_setLatency","params":[{"scope":"all","answers":{"dist":"uniform","min_ms":1,"max_ms":2}}]}`)}, w)
	if string(w.Body) != `{"jsonrpc":"2.0","id":1,"result":"0x1"}` {
		b.Fatalf("lab_setLatency: %s", w.Body)
	}
	req := &http1.Request{Method: []byte("POST"), Path: []byte("/"), Body: chainIDBody}
	b.ReportAllocs()
	b.SetBytes(int64(len(chainIDBody)))
	for b.Loop() {
		w.Body = w.Body[:0]
		svc.Serve(req, w)
	}
}
