package rpc_test

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHostileHTTPIsIsolated: garbage, truncated, oversized and chunked
// requests get their HTTP error (or a closed connection) while a
// well-behaved go-ethereum client on another connection keeps getting
// answers, and the node is still healthy afterwards.
func TestHostileHTTPIsIsolated(t *testing.T) {
	tn := startNode(t)
	addr := strings.TrimPrefix(tn.url, "http://")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the well-behaved client
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if id, err := tn.eth.ChainID(context.Background()); err != nil || id.Uint64() != chainID {
				t.Errorf("good client: %v %v", id, err)
				return
			}
		}
	}()
	for _, c := range []struct {
		name, send, wantStatus string
	}{
		{"garbage", "\x00\x01\x02 not http at all\r\n\r\n", "400"},
		{"bad header", "POST / HTTP/1.1\r\nHost x\r\n\r\n", "400"},
		{"chunked", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", "411"},
		{"no length", "POST / HTTP/1.1\r\nHost: x\r\n\r\n", "411"},
		{"oversized", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n", "413"},
		{"huge header", "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", 20000) + "\r\n\r\n", "431"},
		{"truncated body", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"", ""},
		{"half a head", "POST / HTTP/1.1\r\nContent-Le", ""},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.Write([]byte(c.send))
		if c.wantStatus == "" { // the client gives up mid-request
			conn.Close()
			continue
		}
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		conn.Close()
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 "+c.wantStatus) {
			t.Errorf("%s: got %q %v, want status %s", c.name, line, err, c.wantStatus)
		}
	}
	close(stop)
	wg.Wait()
	if bal, err := tn.eth.BalanceAt(context.Background(), devAddr(0), nil); err != nil || bal.Sign() <= 0 {
		t.Fatalf("node unhealthy after hostile traffic: %v %v", bal, err)
	}
}
