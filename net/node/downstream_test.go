package node

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

// TestDownstreamEqualsInline: a tick's downstream stage (the index's Tick,
// the tick's record, the books) runs without the sequencer lock in a
// staging window (downstream.go). Two nodes get the same inputs: on A the
// transactions of each round arrive while the stage of a tick runs
// (DuringDownstream holds it 60 ms) and are admitted at once, staged; a
// cancel and a perp order sent then wait for the window's end; on B
// (InlineDownstream) the same transactions arrive after the tick. Both
// logs then hold the same inputs in the same order, and the two nodes
// must have the same state hash, the same stored tick records, byte for
// byte, and the same books; A's restart and `ledgerd replay` reach its
// state. A crossing bid admitted in the window trades in the next tick.
func TestDownstreamEqualsInline(t *testing.T) {
	book := DevMarkets()[0].ID
	perp := DevPerpMarkets()[0]
	const iv = 500_000
	type side struct {
		n      *Node
		cfg    Config
		clock  *ManualClock
		during func() // A: what its DuringDownstream sends
	}
	open := func(inline bool) *side {
		s := &side{}
		s.cfg = testConfig(t, t.TempDir())
		s.cfg.Markets = append(DevMarkets(), DevPerpMarkets()...)
		s.cfg.SnapshotEvery = -1
		s.cfg.InlineDownstream = inline
		s.clock = s.cfg.Clock.(*ManualClock)
		s.cfg.DuringDownstream = func() {
			if f := s.during; f != nil {
				f()
			}
		}
		s.n = openNode(t, s.cfg)
		return s
	}
	a, b := open(false), open(true)
	defer func() { b.n.Close() }()
	var nonces [6]uint64
	next := func(i int) uint64 { nonces[i]++; return nonces[i] - 1 }
	deadline := func() uint64 { return uint64((a.clock.NowMicros()/iv + 4) * iv) }
	both := func(tx *core.Tx) {
		t.Helper()
		submitWait(t, a.n, tx)
		submitWait(t, b.n, tx)
	}
	tick := func(s *side) {
		t.Helper()
		advanceTick(t, s.n, s.clock, iv)
	}
	for k := range 3 {
		both(obTx(1, next(1), submitOrder(book, clob.Sell, 2, 200_000+uint64(k)*10, deadline())))
	}
	var farAsks []clob.Hash // account 5's, one cancelled a round
	for k := range 4 {
		tx := obTx(5, next(5), submitOrder(book, clob.Sell, 1, 201_000+uint64(k), deadline()+20*iv))
		both(tx)
		farAsks = append(farAsks, clob.OrderID(clob.Address(tx.From), tx.Nonce, 0))
	}
	tick(a)
	tick(b)
	var windowTxs, waited atomic.Int64
	for round := range 4 {
		bid := clob.Intent{Kind: clob.IntentSubmit, Book: book, Side: clob.Buy, Deadline: deadline()}
		bid.Size.Mul(uint256.NewInt(1), uint256.NewInt(1e15))
		bid.Price.Mul(uint256.NewInt(200_050), uint256.NewInt(1e16))
		txs := []*core.Tx{
			obTx(2, next(2), abi.AppendSubmitBatch(nil, [][]byte{abi.AppendSubmitOrder(nil, &bid), abi.AppendSubmitOrder(nil, &bid)})),
			obTx(3, next(3), submitOrder(book, clob.Buy, 1, 199_000-uint64(round), deadline())),
			devTransfer(next(0), 3),
		}
		// Not stageable: a cancel of one of account 5's asks, a perp order.
		cancel := obTx(5, next(5), abi.AppendCancel(nil, &clob.Intent{Kind: clob.IntentCancel, Book: book,
			OrderID: farAsks[round], Deadline: deadline()}))
		perpOrder := obTx(4, next(4), submitOrder(perp.ID, clob.Buy, 1, 199_000, deadline()))
		durable := make(chan error, len(txs)+2)
		a.during = func() {
			a.during = nil // one window a round
			for _, tx := range txs {
				start := time.Now()
				rej, err := a.n.SubmitTx(tx, func(_ *Entry, err error) { durable <- err })
				if err == nil && !rej.OK() {
					err = fmt.Errorf("refused: %+v", rej)
				}
				if err == nil && time.Since(start) > 50*time.Millisecond {
					err = fmt.Errorf("admitted in %v during the downstream window", time.Since(start))
				}
				if err != nil {
					durable <- err
					continue
				}
				windowTxs.Add(1)
			}
			for _, tx := range []*core.Tx{cancel, perpOrder} {
				go func() {
					start := time.Now()
					rej, err := a.n.SubmitTx(tx, func(_ *Entry, err error) { durable <- err })
					if err == nil && !rej.OK() {
						err = fmt.Errorf("refused: %+v", rej)
					}
					if err != nil {
						durable <- err
					} else if time.Since(start) >= 40*time.Millisecond {
						waited.Add(1)
					}
				}()
			}
			time.Sleep(60 * time.Millisecond) // they wait meanwhile; the stage is held
		}
		tick(a)
		for range len(txs) + 2 {
			if err := <-durable; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		tick(b)
		for _, tx := range append(txs, cancel, perpOrder) {
			submitWait(t, b.n, tx)
		}
		if r, _ := a.n.Lookup(txs[0].Hash); r.InTick {
			t.Fatalf("round %d: the bid admitted in the window landed in the tick before it", round)
		}
		tick(a)
		tick(b)
		if r, _ := a.n.Lookup(txs[0].Hash); !r.InTick {
			t.Fatalf("round %d: the bid admitted in the window did not land in the next tick: %+v", round, r)
		}
	}
	if windowTxs.Load() != 12 || waited.Load() != 8 {
		t.Fatalf("%d transactions admitted in windows (want 12), %d waited for the window's end (want 8)", windowTxs.Load(), waited.Load())
	}
	if _, traded := a.n.ledger.Orderbook().LastPrice(book); !traded {
		t.Fatal("the bids never traded")
	}
	_, ha := a.n.StateAt()
	_, hb := b.n.StateAt()
	if ha != hb {
		t.Fatalf("state hashes differ: downstream off the lock %x, in line %x", ha, hb)
	}
	if la, lb := a.n.levels(book), b.n.levels(book); la != lb {
		t.Fatalf("books differ: %s, %s", la, lb)
	}
	sameStoredTicks(t, a.n, b.n, 9)
	a.cfg.DuringDownstream = nil
	a.n = closeReplayRestart(t, a.n, a.cfg, nil)
	a.n.Close()
}

// TestRestartBuildsALateRecord: a live tick's subscription record is
// stored after the tick's input, with a later group (admission.body). The
// node stops between the two store writes: the stored mark of derived
// rows must have stayed before the tick, so that the restart builds the
// record again, and the node then stores the ticks a node that never
// stopped stores, byte for byte.
func TestRestartBuildsALateRecord(t *testing.T) {
	book := DevMarkets()[0].ID
	const iv = 500_000
	run := func(crash bool) *Node {
		cfg := testConfig(t, t.TempDir())
		cfg.Markets = DevMarkets()
		clock := cfg.Clock.(*ManualClock)
		var armed, failing atomic.Bool
		if crash {
			cfg.DuringDownstream = func() {
				if armed.Load() {
					time.Sleep(100 * time.Millisecond) // the tick's input is stored meanwhile
					failing.Store(true)
				}
			}
			cfg.BeforeStore = func(int) error {
				if failing.Load() {
					return errors.New("the process died here")
				}
				return nil
			}
		}
		n := openNode(t, cfg)
		deadline := uint64((clock.NowMicros()/iv + 8) * iv)
		for i := range 3 {
			submitWait(t, n, obTx(1, uint64(i), submitOrder(book, clob.Sell, 1, 200_000+uint64(i), deadline)))
			submitWait(t, n, obTx(2, uint64(i), submitOrder(book, clob.Buy, 1, 200_010, deadline)))
			advanceTick(t, n, clock, iv)
		}
		submitWait(t, n, obTx(1, 3, submitOrder(book, clob.Sell, 2, 200_000, deadline)))
		submitWait(t, n, obTx(2, 3, submitOrder(book, clob.Buy, 1, 200_010, deadline)))
		armed.Store(true)
		clock.Advance(iv)
		durable, err := n.RunDueTicks()
		if err != nil {
			t.Fatal(err)
		}
		err = <-durable
		if !crash {
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if err == nil {
			t.Fatal("the tick whose record could not be stored was answered")
		}
		if d, _ := n.log.Derived(); d >= n.log.Len() {
			t.Fatalf("derived %d of %d inputs: the mark passed the tick whose record is not stored", d, n.log.Len())
		}
		n.Close()
		cfg.DuringDownstream, cfg.BeforeStore = nil, nil
		n = openNode(t, cfg)
		if d, err := n.log.Derived(); err != nil || d != n.log.Len() {
			t.Fatalf("after the restart: derived %d of %d inputs, %v", d, n.log.Len(), err)
		}
		return n
	}
	ref := run(false)
	defer ref.Close()
	got := run(true)
	defer got.Close()
	sameStoredTicks(t, got, ref, 4)
}
