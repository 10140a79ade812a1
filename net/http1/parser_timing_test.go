package http1

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"
)

var benchRequests = []struct {
	name string
	raw  string
}{
	{"small", "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"},
	{"medium", "POST / HTTP/1.1\r\nHost: localhost:8545\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n" +
		"Content-Type: application/json\r\nContent-Length: 67\r\n\r\n" +
		`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x1"]}`},
	{"large", "POST /rpc HTTP/1.1\r\nHost: node.example.com\r\nConnection: keep-alive\r\n" +
		"User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36\r\n" +
		"Accept: application/json\r\nAccept-Encoding: gzip, deflate, br\r\nAccept-Language: en-US,en;q=0.9\r\n" +
		"Origin: https://wallet.example.com\r\nReferer: https://wallet.example.com/\r\n" +
		"Sec-Fetch-Dest: empty\r\nSec-Fetch-Mode: cors\r\nSec-Fetch-Site: cross-site\r\n" +
		"Content-Type: application/json\r\nContent-Length: 4096\r\n\r\n" + strings.Repeat("x", 4096)},
}

var sinkN int

func BenchmarkParse(b *testing.B) {
	for _, bc := range benchRequests {
		b.Run(bc.name, func(b *testing.B) {
			var (
				p Parser
				r Request
			)
			buf := []byte(bc.raw)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				n, err := p.Parse(buf, &r)
				if err != nil || n != len(buf) {
					b.Fatal(n, err)
				}
				sinkN += n + len(r.Header("content-type"))
			}
		})
	}
}

// BenchmarkParseStdlib is the baseline: net/http's request reader.
func BenchmarkParseStdlib(b *testing.B) {
	for _, bc := range benchRequests {
		b.Run(bc.name, func(b *testing.B) {
			rd := bytes.NewReader([]byte(bc.raw))
			br := bufio.NewReader(rd)
			b.SetBytes(int64(len(bc.raw)))
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset([]byte(bc.raw))
				br.Reset(rd)
				req, err := http.ReadRequest(br)
				if err != nil {
					b.Fatal(err)
				}
				sinkN += int(req.ContentLength) + len(req.Header.Get("Content-Type"))
			}
		})
	}
}

func BenchmarkAppendResponse(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":"0x0000000000000000000000000000000000000000000000000de0b6b3a7640000"}`)
	dst := make([]byte, 0, 1024)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendResponse(dst[:0], 200, "application/json", nil, body, true)
		sinkN += len(dst)
	}
}
