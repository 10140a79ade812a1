package rpc_test

import (
	"testing"

	"github.com/ledgervenue/node/net/http1"
	"github.com/ledgervenue/node/net/rpc"
	"github.com/ledgervenue/node/net/server"
)

var (
	chainIDBody    = []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`)
	getBalanceBody = []byte(`{"jsonrpc":"2.0","id":7,"method":"eth_getBalance","params":["0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266","latest"]}`)
)

// serveFunc runs one request through the dispatcher the way the server's
// event loop does (parsed HTTP request in, response body out), without
// sockets, so allocations and time are the dispatcher's alone. opts adjust
// the dispatcher's configuration.
func serveFunc(tb testing.TB, body []byte, opts ...func(*rpc.Config)) (func(), *server.Response) {
	tb.Helper()
	tn := startNodeTB(tb)
	cfg := rpc.Config{Node: tn.node}
	for _, o := range opts {
		o(&cfg)
	}
	svc := rpc.New(cfg)
	tb.Cleanup(svc.Close)
	req := &http1.Request{Method: []byte("POST"), Path: []byte("/"), Body: body}
	w := &server.Response{}
	return func() {
		w.Body = w.Body[:0]
		svc.Serve(req, w)
	}, w
}

func TestReadPathsAllocateNothing(t *testing.T) {
	for _, c := range []struct {
		name string
		body []byte
		want string
	}{
		{"eth_chainId", chainIDBody, `{"jsonrpc":"2.0","id":1,"result":"0x50d"}`},
		{"eth_getBalance", getBalanceBody, `{"jsonrpc":"2.0","id":7,"result":"0x21e19e0c9bab2400000"}`},
	} {
		serve, w := serveFunc(t, c.body)
		serve()
		if string(w.Body) != c.want {
			t.Fatalf("%s: %s", c.name, w.Body)
		}
		if raceEnabled {
			continue
		}
		if n := testing.AllocsPerRun(200, serve); n != 0 {
			t.Errorf("%s: %.1f allocs per request, want 0", c.name, n)
		}
	}
}

func BenchmarkServeChainID(b *testing.B)    { benchServe(b, chainIDBody) }
func BenchmarkServeGetBalance(b *testing.B) { benchServe(b, getBalanceBody) }

func benchServe(b *testing.B, body []byte) {
	serve, _ := serveFunc(b, body)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		serve()
	}
}
