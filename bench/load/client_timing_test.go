package load

import (
	"context"
	"testing"
	"time"
)

var sinkN int

func BenchmarkParseResponse(b *testing.B) {
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 41\r\n" +
		"Access-Control-Allow-Origin: *\r\n\r\n" + `{"jsonrpc":"2.0","id":1,"result":"0x50d"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(resp)))
	for b.Loop() {
		n, _, _, err := parseResponse(resp)
		if err != nil || n != len(resp) {
			b.Fatal(n, err)
		}
		sinkN += n
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	b.ReportAllocs()
	d := time.Duration(1)
	for b.Loop() {
		d = d*7919 + 13
		h.Record(d & (1<<30 - 1))
	}
	sinkN += int(h.Count())
}

// BenchmarkRun measures the whole client plus the echo server per request:
// an upper bound on what the client itself costs the shared CPUs.
func BenchmarkRun(b *testing.B) {
	s := startEchoServer(b, 1, false)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`)
	b.ReportAllocs()
	r, err := Run(context.Background(), Config{Addr: s.addr(), Conns: 4, Pipeline: 8,
		Requests: int64(b.N), Duration: time.Minute, Body: body})
	if err != nil || r.Errors != 0 || r.Done != int64(b.N) {
		b.Fatal(err, r)
	}
}
