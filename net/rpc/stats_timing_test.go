package rpc

import "testing"

// BenchmarkCount is the per-request cost of the metrics: finding the
// method's counters and two atomic adds (0 allocs/op).
func BenchmarkCount(b *testing.B) {
	var st rpcStats
	methods := [][]byte{[]byte("eth_getBalance"), []byte("eth_sendRawTransaction"), []byte("ob_getOrderbook"), []byte("nope")}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		st.count(methods[i&3], i&1 == 0, i&7 == 0)
	}
}
