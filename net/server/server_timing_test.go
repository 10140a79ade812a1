package server

import (
	"io"
	"net"
	"strings"
	"testing"
)

const benchRequest = "POST / HTTP/1.1\r\nHost: localhost:8545\r\nContent-Type: application/json\r\n" +
	"Content-Length: 47\r\n\r\n" + `{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`

// BenchmarkTraffic measures the OnTraffic path (parse, handler, render,
// write) without sockets.
func BenchmarkTraffic(b *testing.B) {
	for _, bc := range []struct {
		name  string
		count int
	}{{"single", 1}, {"pipelined16", 16}} {
		b.Run(bc.name, func(b *testing.B) {
			c := newFakeConn(b, allocFreeHandler{}, Config{})
			stream := strings.Repeat(benchRequest, bc.count)
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for b.Loop() {
				c.out = c.out[:0]
				c.traffic(stream)
			}
			if c.closed {
				b.Fatal("connection closed")
			}
		})
	}
}

// BenchmarkLoopback measures full round trips through a real loopback socket
// and the gnet loop: one keep-alive connection, requests sent one at a time
// or 16 per write. allocs/op covers client and server.
func BenchmarkLoopback(b *testing.B) {
	for _, bc := range []struct {
		name  string
		count int
	}{{"sequential", 1}, {"pipelined16", 16}} {
		b.Run(bc.name, func(b *testing.B) {
			s := startServer(b, allocFreeHandler{}, Config{})
			conn, err := net.Dial("tcp", s.Addr())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			req := []byte(strings.Repeat(benchRequest, bc.count))
			resp := make([]byte, bc.count*responseLen(b, conn))
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := conn.Write(req); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(conn, resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// responseLen sends one request and measures its response.
func responseLen(b *testing.B, conn net.Conn) int {
	b.Helper()
	if _, err := io.WriteString(conn, benchRequest); err != nil {
		b.Fatal(err)
	}
	want := string(appendResponse(nil, 200, "application/json",
		[]byte(`{"jsonrpc":"2.0","id":1,"result":"0x1"}`), respMeta{keepAlive: true}))
	got := make([]byte, len(want))
	if _, err := io.ReadFull(conn, got); err != nil || string(got) != want {
		b.Fatalf("response %q, %v", got, err)
	}
	return len(want)
}
