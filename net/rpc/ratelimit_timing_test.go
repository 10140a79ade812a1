package rpc_test

import (
	"testing"

	"github.com/ledgervenue/node/net/ratelimit"
	"github.com/ledgervenue/node/net/rpc"
	"github.com/ledgervenue/node/net/server"
)

// serveLimited is serveFunc with the rate limits on, their budget too large
// to run out: every call takes the pass path of the check.
func serveLimited(tb testing.TB, body []byte) (func(), *server.Response) {
	big := ratelimit.Bucket{Capacity: ratelimit.CapacityMax, RefillPerS: ratelimit.CapacityMax}
	return serveFunc(tb, body, func(c *rpc.Config) { c.RateLimit = ratelimit.Config{Address: big, Account: big} })
}

// TestRateLimitedReadAllocatesNothing: a read that passes the rate limits
// allocates nothing, as without them (TestReadPathsAllocateNothing).
func TestRateLimitedReadAllocatesNothing(t *testing.T) {
	serve, w := serveLimited(t, chainIDBody)
	serve()
	if string(w.Body) != `{"jsonrpc":"2.0","id":1,"result":"0x50d"}` {
		t.Fatalf("eth_chainId under the rate limits: %s", w.Body)
	}
	if raceEnabled {
		return
	}
	if n := testing.AllocsPerRun(200, serve); n != 0 {
		t.Errorf("%.1f allocs per rate-limited request, want 0", n)
	}
}

// BenchmarkServeChainIDRateLimited is BenchmarkServeChainID with the rate
// limits on: the difference is the cost of the check.
func BenchmarkServeChainIDRateLimited(b *testing.B) {
	serve, _ := serveLimited(b, chainIDBody)
	b.ReportAllocs()
	b.SetBytes(int64(len(chainIDBody)))
	for b.Loop() {
		serve()
	}
}
