package node

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/tickrec"
	"github.com/ledgervenue/node/net/subs"
)

// steppingClock is the wall clock plus an offset the test moves: a wall
// clock that NTP steps back.
type steppingClock struct{ offUs atomic.Int64 }

func (c *steppingClock) NowMicros() int64 { return time.Now().UnixMicro() + c.offUs.Load() }

func TestMonotonicHoldsUntilTheSourceCatchesUp(t *testing.T) {
	src := NewManualClock(1_000)
	c := &monotonic{src: src}
	if got := c.NowMicros(); got != 1_000 {
		t.Fatalf("first reading %d, want the source's 1000", got)
	}
	src.us.Store(400) // the source steps back
	if got := c.NowMicros(); got != 1_000 {
		t.Fatalf("after a step back: %d, want 1000 held", got)
	}
	src.us.Store(1_200)
	if got := c.NowMicros(); got != 1_200 {
		t.Fatalf("after the source caught up: %d, want 1200", got)
	}
	if got := c.raise(5_000); got != 5_000 || c.NowMicros() != 5_000 {
		t.Fatalf("raise: %d, then %d; want 5000 held", got, c.NowMicros())
	}
}

// TestMonotonicConcurrent: readers racing with a source that jumps both
// ways each see a non-decreasing sequence, and never less than any reading
// completed before theirs began.
func TestMonotonicConcurrent(t *testing.T) {
	src := NewManualClock(0)
	c := &monotonic{src: src}
	var published atomic.Int64 // newest reading some reader has returned
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(-1)
			for range 20_000 {
				floor := published.Load()
				now := c.NowMicros()
				if now < last || now < floor {
					errs <- fmt.Errorf("reader %d: %d after %d (floor %d)", r, now, last, floor)
					return
				}
				last = now
				for p := published.Load(); now > p && !published.CompareAndSwap(p, now); p = published.Load() {
				}
			}
		}()
	}
	for i := range 20_000 {
		src.us.Store(int64(i%97) * 1_000) // forwards and back
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// clockWatch is a Publisher that forwards to a real subscription hub (which
// panics on a tick time that does not increase) and records every time the
// node hands it.
type clockWatch struct {
	hub *subs.Hub
	mu  sync.Mutex
	// lastTick, lastIdle, lastPPT, lastAtt are the newest times seen;
	// bad lists every time that went backwards.
	lastTick, lastIdle, lastPPT, lastAtt int64
	bad                                  []string
}

func (w *clockWatch) see(what string, last *int64, us int64, strict bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if us < *last || strict && us == *last {
		w.bad = append(w.bad, fmt.Sprintf("%s %d after %d", what, us, *last))
	}
	*last = max(*last, us)
}

func (w *clockWatch) PublishTick(t *tickrec.Tick) {
	w.see("tick", &w.lastTick, t.TickUs, true)
	w.hub.PublishTick(t)
}

func (w *clockWatch) WatchedPositions(dst []clob.Address) []clob.Address { return dst }
func (w *clockWatch) Reverted([]*tickrec.Tick, int64, error)             {}

func (w *clockWatch) IdleSlot(t tickrec.Tick, pastPerfectUs int64) {
	w.see("idle slot", &w.lastIdle, t.TickUs, true)
	w.see("past-perfect time", &w.lastPPT, pastPerfectUs, false)
	w.hub.PublishIdleSlot(t)
}

func (w *clockWatch) Attested(rs []Receipt) {
	for _, r := range rs {
		w.see("attestation time", &w.lastAtt, r.Batch.Timestamp, false)
	}
}

func (w *clockWatch) newestTick() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastTick
}

// TestWallClockStepsBack runs a node on the wall clock and steps that clock
// back by three seconds after an auction tick has run: tick times (the hub
// panics on one that does not increase), idle slots, attestation times and
// the past-perfect time never decrease; an order admitted during the step
// lands in a tick after the one already run (today's hub panicked on it:
// the tick landed on the time already published); and time and idle slots
// (newHeads) move again once the wall clock has caught up.
func TestWallClockStepsBack(t *testing.T) {
	const stepUs = 3_000_000
	clock := &steppingClock{}
	cfg := testConfig(t, t.TempDir())
	cfg.Clock, cfg.Markets = clock, DevMarkets()
	n := openNode(t, cfg)
	defer n.Close()
	watch := &clockWatch{hub: subs.New(subs.Config{ReplayTicks: ReplayTicks, FloorUs: n.LastTickUs(),
		Positions: n.Positions, Markets: n.Markets})}
	n.SetPublisherWith(func([]*tickrec.Tick, int64, error) Publisher { return watch })
	stop := make(chan struct{})
	polled := make(chan error, 1)
	go func() { // past-perfect time as svc_pastPerfectTime reads it
		last := int64(0)
		for {
			select {
			case <-stop:
				polled <- nil
				return
			case <-time.After(time.Millisecond):
			}
			if now := n.PastPerfectTime(); now < last {
				polled <- fmt.Errorf("past-perfect time %d after %d", now, last)
				return
			} else {
				last = now
			}
		}
	}()

	// An order on the first book; wait for its tick.
	books := DevMarkets()
	deadline := func() uint64 { return uint64((n.Clock().NowMicros()/500_000 + 10) * 500_000) }
	first := obTx(0, 0, submitOrder(books[0].ID, clob.Buy, 1, 200_000, deadline()))
	submitWait(t, n, first)
	waitInTick(t, n, first.Hash)
	ranUs := watch.newestTick()

	clock.offUs.Add(-stepUs)
	// During the step: an order on the other book (which has never run a
	// tick, so nothing in the engine holds it after ranUs), and a transfer.
	second := obTx(1, 0, submitOrder(books[1].ID, clob.Buy, 1, 200_000, deadline()))
	submitWait(t, n, second)
	submitWait(t, n, devTransfer(1, 1))
	r := waitInTick(t, n, second.Hash)
	if r.TickUs <= ranUs {
		t.Fatalf("the order admitted after the step back landed at %d, not after the tick already run at %d", r.TickUs, ranUs)
	}
	close(stop)
	if err := <-polled; err != nil {
		t.Fatal(err)
	}
	before := n.PastPerfectTime()
	time.Sleep(1200 * time.Millisecond)
	if now := n.PastPerfectTime(); now-before < 1_000_000 {
		t.Fatalf("past-perfect time moved from %d to %d in 1.2 s after the wall clock caught up", before, now)
	}
	watch.mu.Lock()
	defer watch.mu.Unlock()
	if len(watch.bad) > 0 || watch.lastIdle <= r.TickUs || watch.lastAtt == 0 {
		t.Fatalf("times that went backwards: %v; newest idle slot %d (want one after the tick at %d), attestation %d",
			watch.bad, watch.lastIdle, r.TickUs, watch.lastAtt)
	}
}

// waitInTick waits until h's auction tick has run and is durable.
func waitInTick(t *testing.T, n *Node, h core.Hash) Receipt {
	t.Helper()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(5 * time.Millisecond) {
		if r, ok := n.Lookup(h); ok && r.InTick {
			return r
		}
	}
	t.Fatalf("%x never landed in a tick", h[:4])
	return Receipt{}
}
