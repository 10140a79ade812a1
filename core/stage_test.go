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
	runStaged(t, "their tick", func(r *stagedRun, tick *Input) []*Input {
		r.live.BeginTick(tick.TimeUs)
		r.live.ClearConcurrent()
		after := r.arrive(func(in *Input) Reject {
			// The replaying ledger applies it at the same place in the
			// log: before the tick.
			in.Staged = true
			rej := r.apply(in)
			if rej.Code == RejectWaitTick {
				in.Staged = false
			}
			return rej
		})
		r.apply(tick)
		return after
	})
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
	runStaged(t, "the window's end", func(r *stagedRun, tick *Input) []*Input {
		r.apply(tick)
		r.live.BeginStaging()
		after := r.arrive(func(in *Input) Reject {
			rec, rej := r.live.Apply(in)
			if rej.Code != RejectWaitTick { // else not in the log yet: applied after the window
				r.compare(in, rec, rej)
			}
			return rej
		})
		r.live.EndStaging()
		return after
	})
}

// stagedRun is one seed of a staging test: a workload applied to live, as
// the sequencer applies it, and to replay, in log order.
type stagedRun struct {
	t              *testing.T
	seed           uint64
	step           int
	w              *workload
	live, replay   *Ledger
	staged, waited int // transactions staged, and refused RejectWaitTick
}

// runStaged runs four seeds of a workload; each due tick of the live
// ledger goes through tick, which applies it and the transactions that
// arrive around it (arrive) to both ledgers, and returns the inputs to
// apply after it. Tick results, state hashes and the supply are checked
// as it goes, and the stream must have staged and deferred enough.
func runStaged(t *testing.T, waitedFor string, tick func(r *stagedRun, tick *Input) []*Input) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w, live := newWorkload(seed, clob.Limits{})
			_, replay := newWorkload(seed, clob.Limits{})
			r := &stagedRun{t: t, seed: seed, w: w, live: live, replay: replay}
			for r.step = range 1200 {
				w.advance()
				for range 200 {
					in, ok := w.tick(live)
					if !ok {
						break
					}
					after := tick(r, in)
					if !reflect.DeepEqual(live.LastTick(), replay.LastTick()) {
						t.Fatalf("seed %d step %d: tick results differ", seed, r.step)
					}
					if live.Orderbook().Staging() || replay.Orderbook().Staging() {
						t.Fatalf("seed %d step %d: still staging before %s", seed, r.step, waitedFor)
					}
					for _, in := range after {
						r.apply(in)
					}
				}
				r.apply(w.next(live))
				if r.step%100 == 99 && live.StateHash() != replay.StateHash() {
					t.Fatalf("seed %d step %d: state hashes differ", seed, r.step)
				}
			}
			if live.StateHash() != replay.StateHash() || !live.CheckSupply() {
				t.Fatalf("seed %d: state hashes differ or supply not conserved", seed)
			}
			if r.staged < 50 || r.waited < 10 {
				t.Fatalf("seed %d: %d transactions staged and %d waited: the stream is too tame", seed, r.staged, r.waited)
			}
			t.Logf("seed %d: %d staged, %d waited for %s", seed, r.staged, r.waited, waitedFor)
		})
	}
}

// compare applies in to the replaying ledger and checks its answer
// against the live ledger's.
func (r *stagedRun) compare(in *Input, recA *TxRecord, rejA Reject) {
	r.t.Helper()
	recB, rejB := r.replay.Apply(in)
	if !reflect.DeepEqual(rejA, rejB) || !reflect.DeepEqual(recA, recB) {
		r.t.Fatalf("seed %d step %d (%+v): live %+v %+v, replay %+v %+v", r.seed, r.step, in.Kind, rejA, recA, rejB, recB)
	}
	if recA != nil {
		r.live.Settle(recA)
		r.replay.Settle(recB)
	}
}

// apply applies in to both ledgers and compares their answers.
func (r *stagedRun) apply(in *Input) Reject {
	r.t.Helper()
	rec, rej := r.live.Apply(in)
	r.compare(in, rec, rej)
	return rej
}

// arrive draws what arrives while the live ledger stages (0 to 5 inputs):
// admit applies each transaction staged and returns its refusal; those
// refused RejectWaitTick, and the inputs that are not transactions, are
// returned, to be applied once staging ends.
func (r *stagedRun) arrive(admit func(*Input) Reject) (after []*Input) {
	for range r.w.r.IntN(6) {
		in := r.w.next(r.live)
		if in.Kind != InputTx {
			after = append(after, in)
			continue
		}
		switch rej := admit(in); {
		case rej.Code == RejectWaitTick:
			after = append(after, in)
			r.waited++
		case rej.OK():
			r.staged++
		}
	}
	return after
}
