package core

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/ledgervenue/node/core/clob"
)

// TestStagedTicksEqualReplay: two ledgers of one seeded workload (spot
// markets, transfers, withdrawals, deposits, controls); every tick of the
// first runs as the sequencer runs it live — BeginTick, ClearConcurrent,
// the transactions of the workload arriving meanwhile applied staged
// (those refused core.RejectWaitTick, and every input that is not a
// transaction, applied after the tick) — and the second replays the same
// inputs in log order (the staged ones, then the tick). Every record (the
// tick's logs included, which the live tick makes partly while its books
// clear), refusal, tick result and state hash must be the same.
func TestStagedTicksEqualReplay(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w, live := newWorkload(seed, clob.Limits{})
			_, replay := newWorkload(seed, clob.Limits{})
			staged, waited := 0, 0
			apply := func(step int, in *Input) Reject {
				t.Helper()
				recA, rejA := live.Apply(in)
				recB, rejB := replay.Apply(in)
				if !reflect.DeepEqual(rejA, rejB) || !reflect.DeepEqual(recA, recB) {
					t.Fatalf("seed %d step %d (%+v): live %+v %+v, replay %+v %+v", seed, step, in.Kind, rejA, recA, rejB, recB)
				}
				if recA != nil {
					live.Settle(recA)
					replay.Settle(recB)
				}
				return rejA
			}
			for step := range 1200 {
				w.advance()
				for range 200 {
					tick, ok := w.tick(live)
					if !ok {
						break
					}
					live.BeginTick(tick.TimeUs)
					live.ClearConcurrent()
					var after []*Input
					for range w.r.IntN(6) {
						in := w.next(live)
						if in.Kind != InputTx {
							after = append(after, in)
							continue
						}
						in.Staged = true
						// The replaying ledger applies it at the same place
						// in the log: before the tick.
						if rej := apply(step, in); rej.Code == RejectWaitTick {
							in.Staged = false
							after = append(after, in)
							waited++
						} else if rej.OK() {
							staged++
						}
					}
					apply(step, tick)
					if !reflect.DeepEqual(live.LastTick(), replay.LastTick()) {
						t.Fatalf("seed %d step %d: tick results differ", seed, step)
					}
					if live.Orderbook().Staging() || replay.Orderbook().Staging() {
						t.Fatalf("seed %d step %d: still staging after the tick", seed, step)
					}
					for _, in := range after {
						apply(step, in)
					}
				}
				apply(step, w.next(live))
				if step%100 == 99 && live.StateHash() != replay.StateHash() {
					t.Fatalf("seed %d step %d: state hashes differ", seed, step)
				}
			}
			if live.StateHash() != replay.StateHash() || !live.CheckSupply() {
				t.Fatalf("seed %d: state hashes differ or supply not conserved", seed)
			}
			if staged < 50 || waited < 10 {
				t.Fatalf("seed %d: %d transactions staged and %d waited: the stream is too tame", seed, staged, waited)
			}
			t.Logf("seed %d: %d staged, %d waited for their tick", seed, staged, waited)
		})
	}
}

// TestStagingWindowEqualsReplay: the window after a tick (BeginStaging,
// EndStaging), in which the node builds the tick's downstream while it
// admits staged transactions, logs them as ordinary ones. One ledger runs
// every tick followed by a window in which the workload's transactions
// are applied staged (those refused core.RejectWaitTick, and every input
// that is not a transaction, applied after the window closes); the other
// applies the same inputs plainly, in the same order. Every record,
// refusal, tick result and state hash must be the same.
func TestStagingWindowEqualsReplay(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w, live := newWorkload(seed, clob.Limits{})
			_, replay := newWorkload(seed, clob.Limits{})
			staged, waited := 0, 0
			compare := func(step int, in *Input, recA *TxRecord, rejA Reject) {
				t.Helper()
				recB, rejB := replay.Apply(in)
				if !reflect.DeepEqual(rejA, rejB) || !reflect.DeepEqual(recA, recB) {
					t.Fatalf("seed %d step %d (%+v): live %+v %+v, replay %+v %+v", seed, step, in.Kind, rejA, recA, rejB, recB)
				}
				if recA != nil {
					live.Settle(recA)
					replay.Settle(recB)
				}
			}
			apply := func(step int, in *Input) {
				t.Helper()
				rec, rej := live.Apply(in)
				compare(step, in, rec, rej)
			}
			for step := range 1200 {
				w.advance()
				for range 200 {
					tick, ok := w.tick(live)
					if !ok {
						break
					}
					apply(step, tick)
					live.BeginStaging()
					var after []*Input
					for range w.r.IntN(6) {
						in := w.next(live)
						if in.Kind != InputTx {
							after = append(after, in)
							continue
						}
						rec, rej := live.Apply(in)
						if rej.Code == RejectWaitTick {
							// Not in the log yet: applied after the window.
							after = append(after, in)
							waited++
							continue
						}
						if rej.OK() {
							staged++
						}
						compare(step, in, rec, rej)
					}
					live.EndStaging()
					if live.Orderbook().Staging() {
						t.Fatalf("seed %d step %d: still staging after the window", seed, step)
					}
					for _, in := range after {
						apply(step, in)
					}
				}
				apply(step, w.next(live))
				if step%100 == 99 && live.StateHash() != replay.StateHash() {
					t.Fatalf("seed %d step %d: state hashes differ", seed, step)
				}
			}
			if !reflect.DeepEqual(live.LastTick(), replay.LastTick()) {
				t.Fatalf("seed %d: tick results differ", seed)
			}
			if live.StateHash() != replay.StateHash() || !live.CheckSupply() {
				t.Fatalf("seed %d: state hashes differ or supply not conserved", seed)
			}
			if staged < 50 || waited < 10 {
				t.Fatalf("seed %d: %d transactions staged and %d waited: the stream is too tame", seed, staged, waited)
			}
			t.Logf("seed %d: %d staged, %d waited for the window's end", seed, staged, waited)
		})
	}
}
