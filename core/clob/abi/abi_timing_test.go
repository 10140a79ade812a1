package abi

import (
	"testing"

	"github.com/ledgervenue/node/core/clob"
)

var sinkReason clob.Reason

func benchmarkDecode(b *testing.B, data []byte) {
	b.Helper()
	env := clob.Envelope{Intents: make([]clob.Intent, 0, clob.BatchIntentsMax)}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sinkReason = Decode(data, testChainID, testSigner, &env)
	}
	if sinkReason != clob.OK {
		b.Fatal(sinkReason)
	}
}

func BenchmarkDecode(b *testing.B) {
	calls := sampleCalls(b)
	for _, name := range []string{"submitOrder", "cancel", "batch64", "delegatedSubmit", "delegatedBatch"} {
		for _, c := range calls {
			if c.name == name {
				b.Run(name, func(b *testing.B) { benchmarkDecode(b, c.data) })
			}
		}
	}
}
