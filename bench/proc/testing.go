package proc

import (
	"context"
	"net"
	"testing"
	"time"

	gethrpc "github.com/ethereum/go-ethereum/rpc"
)

// CallTimeout bounds each Call.
const CallTimeout = 10 * time.Second

// StartT starts bin as Start does and stops it when the test ends, logging
// the node's output if the test failed; a node that does not start fails
// the test.
func StartT(t testing.TB, bin string, args ...string) *Ledgerd {
	t.Helper()
	n, err := Start(bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Stop()
		if t.Failed() {
			t.Log(n.Log())
		}
	})
	return n
}

// Dial connects go-ethereum's rpc client to url (http:// or ws://) with
// the admin token in every request, and closes it when the test ends.
func Dial(t testing.TB, url, adminToken string) *gethrpc.Client {
	t.Helper()
	c, err := gethrpc.DialOptions(context.Background(), url, gethrpc.WithHeader("Authorization", "Bearer "+adminToken))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Call calls method within CallTimeout and fails the test on an error.
func Call(t testing.TB, c *gethrpc.Client, result any, method string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	if err := c.CallContext(ctx, result, method, args...); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}

// FreeAddr returns a loopback address nothing listens on now, for a
// process the test starts with its own --addr.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
