package baseline

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

var sinkN int

// benchmarkHandler measures ServeHTTP alone, without sockets: the
// per-request cost of the encoding/json path the load generator compares
// against.
func benchmarkHandler(b *testing.B, body string) {
	h := NewHandler(chainID, devBalances())
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader([]byte(body)))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		sinkN += w.Body.Len()
	}
}

func BenchmarkChainID(b *testing.B) {
	benchmarkHandler(b, `{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`)
}

func BenchmarkGetBalance(b *testing.B) {
	benchmarkHandler(b, `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266","latest"]}`)
}
