package load

import (
	"testing"
	"time"
)

// TestHotPathAllocs locks the per-request work of a connection to zero
// allocations once its buffers have grown: building a request, parsing its
// response out of the inbox, recording the latency.
func TestHotPathAllocs(t *testing.T) {
	head := requestHead(&Config{Addr: "127.0.0.1:1", Path: "/"})
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`)
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 41\r\n\r\n" +
		`{"jsonrpc":"2.0","id":1,"result":"0x50d"}`)
	var (
		out []byte
		in  inbox
		h   Histogram
	)
	step := func() {
		out = appendRequest(out[:0], head, body)
		in.commit(copy(in.space(), resp))
		status, _, ok, err := in.next()
		if !ok || err != nil || status != 200 {
			t.Fatalf("next: %d %v %v", status, ok, err)
		}
		h.Record(time.Duration(len(out)))
	}
	step()
	if allocs := testing.AllocsPerRun(1000, step); allocs != 0 {
		t.Fatalf("%v allocations per request, want 0", allocs)
	}
}
