package clob

import (
	"fmt"
	"testing"
)

// BenchmarkTickTriggers: the trigger pass of one tick of a perp book
// holding n stored triggers that do not fire (a scan of their hot parts).
func BenchmarkTickTriggers(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			h := newTrigHarness(b, Limits{OrdersMax: n + 64, PendingMax: 1 << 10})
			h.fundPerp("a")
			in := make([]Intent, BatchIntentsMax)
			for i := 0; i < n; i += BatchIntentsMax {
				for j := range in {
					in[j] = h.trigger(Sell, 1, 0, 1+int64(j), TriggerStopLoss, 0)
				}
				a := Admission{Signer: owner("a"), Owner: owner("a"), Nonce: uint64(i), NowUs: h.nowUs}
				if r := h.e.Admit(&a, &Envelope{Intents: in[:min(BatchIntentsMax, n-i)]}, h.acc); r != OK {
					b.Fatal(r)
				}
				if h.e.book(tPerpID).pending.len() > 512 {
					h.e.Tick(landing(h.nowUs, h.iv), h.acc, &h.out)
					h.nowUs = h.out.TickUs + 100
				}
			}
			h.e.Tick(landing(h.nowUs, h.iv), h.acc, &h.out)
			T := h.out.TickUs
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				T += h.iv
				// A perp book ticks every interval; the skeleton's only
				// with work, so bump lastTickUs as a tick would.
				h.e.book(tPerpID).lastTickUs = T
				h.e.fireTriggers(T, h.acc, &h.out)
			}
		})
	}
}
