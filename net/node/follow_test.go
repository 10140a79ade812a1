package node

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/persist"
)

// pump feeds a follower the leader's durable frames (as net/replicate does
// through a stream) until stop is closed; it returns when done is.
func pump(t *testing.T, leader, f *Node, stop chan struct{}) (done chan error) {
	done = make(chan error, 1)
	tl, err := leader.log.Tail(persist.Pos{Seq: f.ResumeSeq()})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer tl.Close()
		var buf []byte
		for {
			from := tl.Pos()
			var err error
			buf, _, err = tl.Read(buf[:0], 64<<10)
			if err == nil && len(buf) > 0 {
				err = f.ApplyFrames(from, buf)
			}
			if err != nil {
				done <- err
				return
			}
			if len(buf) == 0 {
				select {
				case <-stop:
					done <- nil
					return
				case <-time.After(time.Millisecond):
				}
			}
		}
	}()
	return done
}

// transferFrom5 is a transfer from dev account 5, which obTx leaves alone.
func transferFrom5(nonce, value uint64) *core.Tx {
	tx := devTransfer(nonce, value)
	tx.From, tx.Hash[2] = DevAddress(5), 5
	return tx
}

// caughtUp waits until f has applied and attested what the leader has.
func caughtUp(t *testing.T, leader, f *Node, last core.Hash) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ls, lh := leader.StateAt()
		fs, fh := f.StateAt()
		r, ok := f.Lookup(last)
		if ls == fs && lh == fh && ok && r.Attested {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("follower at %d %x (last attested %v), leader at %d %x", fs, fh, r.Attested, ls, lh)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFollowerAppliesTheLeadersLog: a follower fed the leader's frames
// reaches the leader's state hash, books and receipts (the same batches,
// roots and ticks), refuses writes naming the leader, resumes after a
// restart where it stopped, and once promoted signs the next batch seq and
// admits writes.
func TestFollowerAppliesTheLeadersLog(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Markets = DevMarkets()
	clock := cfg.Clock.(*ManualClock)
	leader := openNode(t, cfg)
	defer leader.Close()
	fcfg := testConfig(t, t.TempDir())
	fcfg.Markets = DevMarkets()
	fcfg.Follow = true
	f := openNode(t, fcfg)
	f.SetLeader("http://127.0.0.1:1")
	stop := make(chan struct{})
	done := pump(t, leader, f, stop)

	book := DevMarkets()[0].ID
	nonce := uint64(0)
	var last core.Hash
	round := func(r uint64) {
		deadline := uint64((clock.NowMicros()/500_000 + 1) * 500_000)
		for i := range 4 {
			side := clob.Side(i % 2)
			tx := obTx(i, r, submitOrder(book, side, 3+uint64(i), 200_000-uint64(side)*100+r*10, deadline))
			submitWait(t, leader, tx)
		}
		tx := transferFrom5(nonce, 1000+r)
		nonce++
		submitWait(t, leader, tx)
		last = tx.Hash
		advanceTick(t, leader, clock, 500_000)
	}
	for r := range uint64(3) {
		round(r)
	}
	caughtUp(t, leader, f, last)
	if f.levels(book) != leader.levels(book) {
		t.Fatalf("books differ: follower %s, leader %s", f.levels(book), leader.levels(book))
	}
	lr, _ := leader.Lookup(last)
	fr, _ := f.Lookup(last)
	if lr.Batch.Seq != fr.Batch.Seq || lr.Batch.Root != fr.Batch.Root || lr.Index != fr.Index || lr.TickUs != fr.TickUs {
		t.Fatalf("receipt on the follower %+v, on the leader %+v", fr, lr)
	}
	if lt, ft := leader.LastTickUs(), f.LastTickUs(); lt != ft {
		t.Fatalf("last tick: follower %d, leader %d", ft, lt)
	}
	var nl *NotLeaderError
	if _, err := f.SubmitTx(transferFrom5(nonce, 1), func(*Entry, error) {}); !errors.As(err, &nl) || nl.Leader != "http://127.0.0.1:1" {
		t.Fatalf("a write on the follower: %v", err)
	}

	// A restart: the follower resumes at the input after its newest.
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	round(3)
	f = openNode(t, fcfg)
	defer f.Close()
	stop = make(chan struct{})
	done = pump(t, leader, f, stop)
	round(4)
	caughtUp(t, leader, f, last)

	// Promotion: the leader's last batch seq is the follower's too; the
	// promoted node signs the next and takes writes.
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	seq := lr.Batch.Seq
	lr, _ = leader.Lookup(last)
	if lr.Batch.Seq <= seq {
		t.Fatal("no batch after the restart")
	}
	leader.Close()
	lg, err := persist.OpenReadOnly(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	head, err := lg.Head()
	lg.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Promote(); err != nil {
		t.Fatal(err)
	}
	tx := transferFrom5(nonce, 7)
	submitWait(t, f, tx)
	r, _ := f.Lookup(tx.Hash)
	if r.Batch.Seq != head.NextSeq {
		t.Fatalf("the promoted node signed batch %d, the leader's next was %d", r.Batch.Seq, head.NextSeq)
	}
	fclock := fcfg.Clock.(*ManualClock)
	fclock.Advance(clock.NowMicros() - fclock.NowMicros() + 500_000)
	if _, err := f.RunDueTicks(); err != nil {
		t.Fatal(err)
	}
}

// TestReplicatedRefusesStateReplacement: evm_revert and anvil_loadState
// replace the whole state, which no run of frames carries: a replicated
// leader refuses them, and a follower refuses them as it refuses writes.
func TestReplicatedRefusesStateReplacement(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Replicated = true
	leader := openNode(t, cfg)
	defer leader.Close()
	if _, err := leader.EvmRevert(1); !errors.Is(err, ErrReplicated) {
		t.Fatalf("evm_revert on a replicated leader: %v", err)
	}
	if err := leader.LoadState(strings.NewReader("")); !errors.Is(err, ErrReplicated) {
		t.Fatalf("anvil_loadState on a replicated leader: %v", err)
	}
	fcfg := testConfig(t, t.TempDir())
	fcfg.Follow = true
	f := openNode(t, fcfg)
	defer f.Close()
	var nl *NotLeaderError
	if _, err := f.EvmRevert(1); !errors.As(err, &nl) {
		t.Fatalf("evm_revert on a follower: %v", err)
	}
	if err := f.Deposit(core.Hash{}, core.NativeToken, DevAddress(1), uint256.NewInt(1), func(*Entry, error) {}); !errors.As(err, &nl) {
		t.Fatalf("a deposit on a follower: %v", err)
	}
}
