package abi

import (
	"testing"

	"github.com/ledgervenue/node/core/clob"
)

// TestDecodeAllocs locks the plain single-intent path to zero allocations
// into a reused Envelope.
func TestDecodeAllocs(t *testing.T) {
	submit := sampleSubmit(sampleDeadline)
	cancel := sampleCancel(sampleDeadline)
	update := sampleUpdate(sampleDeadline)
	transfer := sampleTransfer(sampleDeadline)
	legacy := submit
	legacy.Flags = clob.FlagReduceOnly
	trig := sampleSubmitTrigger(sampleDeadline)
	cancelTrig := sampleCancelTrigger(sampleDeadline)
	updateTrig := sampleUpdateTrigger(sampleDeadline)
	calls := []namedCall{
		{"submitOrder", AppendSubmitOrder(nil, &submit)},
		{"submitOrderDeprecated", AppendSubmitOrderDeprecated(nil, &legacy)},
		{"cancel", AppendCancel(nil, &cancel)},
		{"update", AppendUpdate(nil, &update)},
		{"transfer", AppendTransfer(nil, &transfer)},
		{"submitTrigger", AppendSubmitTrigger(nil, &trig)},
		{"cancelTrigger", AppendCancelTrigger(nil, &cancelTrig)},
		{"updateTrigger", AppendUpdateTrigger(nil, &updateTrig)},
	}
	env := clob.Envelope{Intents: make([]clob.Intent, 0, 1)}
	for _, c := range calls {
		allocs := testing.AllocsPerRun(1000, func() {
			if r := Decode(c.data, testChainID, testSigner, &env); r != clob.OK {
				t.Fatalf("%s: %q", c.name, r)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per Decode", c.name, allocs)
		}
	}
}
