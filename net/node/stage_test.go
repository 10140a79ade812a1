package node

import (
	"bytes"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
	"github.com/ledgervenue/node/persist"
)

// TestAdmissionDuringTick: while a tick's books clear (DuringClearing
// holds it), new orders and transfers are admitted at once, staged; a
// cancel waits for the tick's end. A staged order crossing the book does
// not trade in the tick it was admitted during, only in the next. After
// rounds of it, a restart and `ledgerd replay` rebuild the same state
// hash and the same book from the log, which holds each tick after the
// transactions staged during it.
func TestAdmissionDuringTick(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Markets = append(DevMarkets(), DevPerpMarkets()...)
	cfg.SnapshotEvery = -1 // the restart replays the whole log
	clock := cfg.Clock.(*ManualClock)
	book := DevMarkets()[0].ID
	const iv = 500_000

	type staged struct {
		tx       *core.Tx
		rej      core.Reject
		err      error
		took     time.Duration
		durable  chan error
		inTickUs int64 // the tick clearing when it was admitted
	}
	var (
		during   func(tickUs int64) []*staged
		got      []*staged
		nonces   [6]uint64
		cancelOK = make(chan error, 8)
	)
	var n *Node
	cfg.DuringClearing = func() {
		if during == nil {
			return
		}
		tickUs := n.ledger.LastTick().TickUs
		for _, s := range during(tickUs) {
			s.durable = make(chan error, 1)
			start := time.Now()
			s.rej, s.err = n.SubmitTx(s.tx, func(_ *Entry, err error) { s.durable <- err })
			s.took, s.inTickUs = time.Since(start), tickUs
			got = append(got, s)
		}
	}
	n = openNode(t, cfg)
	next := func(i int) uint64 { nonces[i]++; return nonces[i] - 1 }
	deadline := func() uint64 { return uint64((clock.NowMicros()/iv + 2) * iv) }

	// Resting asks from account 1 at 2000.00 and 2000.10.
	var restingIDs []clob.Hash
	for k := range 2 {
		tx := obTx(1, next(1), submitOrder(book, clob.Sell, 2, 200_000+uint64(k)*10, deadline()))
		submitWait(t, n, tx)
		restingIDs = append(restingIDs, clob.OrderID(clob.Address(tx.From), tx.Nonce, 0))
	}
	tick := func() {
		t.Helper()
		advanceTick(t, n, clock, iv)
	}
	tick() // the asks rest

	for round := range 4 {
		got = got[:0]
		during = func(tickUs int64) []*staged {
			// A crossing bid of account 2 (two intents in one batch), a
			// bid below the book of account 3, a plain transfer of 0.
			bids := []clob.Intent{
				{Kind: clob.IntentSubmit, Book: book, Side: clob.Buy, Deadline: deadline()},
				{Kind: clob.IntentSubmit, Book: book, Side: clob.Buy, Deadline: deadline()},
			}
			for i := range bids {
				bids[i].Size.Mul(uint256.NewInt(1), uint256.NewInt(1e15))
				bids[i].Price.Mul(uint256.NewInt(200_050), uint256.NewInt(1e16))
			}
			batch := abi.AppendSubmitBatch(nil, [][]byte{abi.AppendSubmitOrder(nil, &bids[0]), abi.AppendSubmitOrder(nil, &bids[1])})
			transfer := devTransfer(next(0), 3)
			return []*staged{
				{tx: obTx(2, next(2), batch)},
				{tx: obTx(3, next(3), submitOrder(book, clob.Buy, 1, 199_000-uint64(round), deadline()))},
				{tx: transfer},
			}
		}
		if round == 1 {
			// A cancel sent while the tick clears waits for its end.
			cancel := obTx(1, next(1), abi.AppendCancel(nil, &clob.Intent{Kind: clob.IntentCancel, Book: book,
				OrderID: restingIDs[1], Deadline: deadline()}))
			inner := during
			during = func(tickUs int64) []*staged {
				go func() {
					start := time.Now()
					_, err := n.SubmitTx(cancel, func(*Entry, error) {})
					if err == nil && time.Since(start) < 50*time.Millisecond {
						err = errCancelEarly
					}
					cancelOK <- err
				}()
				time.Sleep(100 * time.Millisecond) // the cancel waits meanwhile
				return inner(tickUs)
			}
		}
		tick()
		during = nil
		if round == 1 {
			if err := <-cancelOK; err != nil {
				t.Fatalf("the cancel sent during the tick: %v", err)
			}
		}
		if len(got) != 3 {
			t.Fatalf("round %d: %d transactions staged, want 3", round, len(got))
		}
		for _, s := range got {
			if s.err != nil || !s.rej.OK() {
				t.Fatalf("round %d: staged %x refused: %v %+v", round, s.tx.Hash, s.err, s.rej)
			}
			if s.took > 50*time.Millisecond {
				t.Errorf("round %d: admitted in %v while the tick cleared", round, s.took)
			}
			if err := <-s.durable; err != nil {
				t.Fatal(err)
			}
		}
		// The crossing bid landed in no tick yet: it was admitted after
		// the tick's intents were closed.
		r, _ := n.Lookup(got[0].tx.Hash)
		if r.InTick {
			t.Fatalf("round %d: the bid staged during tick %d landed in tick %d", round, got[0].inTickUs, r.TickUs)
		}
		tick()
		r, _ = n.Lookup(got[0].tx.Hash)
		if !r.InTick || r.TickUs <= got[0].inTickUs {
			t.Fatalf("round %d: the staged bid after the next tick: %+v (staged during %d)", round, r, got[0].inTickUs)
		}
	}
	if _, traded := n.ledger.Orderbook().LastPrice(book); !traded {
		t.Fatal("the staged crossing bids never traded")
	}
	if !n.ledger.CheckSupply() {
		t.Fatal("supply not conserved")
	}
	levels := n.levels(book)
	cfg.DuringClearing = nil
	n = closeReplayRestart(t, n, cfg, nil)
	defer n.Close()
	if got := n.levels(book); got != levels {
		t.Fatalf("book after restart %s, before %s", got, levels)
	}
	if !bytes.Contains([]byte(levels), []byte("199")) {
		t.Fatalf("the staged bids below the book are not resting: %s", levels)
	}
}

var errCancelEarly = errorString("the cancel was admitted while the tick's books cleared")

type errorString string

func (e errorString) Error() string { return string(e) }

// TestRestartInsideAStagedRun: the node stops after a transaction staged
// during a tick is durable (and acknowledged) but before the tick is: the
// log ends inside a staged run. The restarted node keeps the transaction,
// joins its order to the book (a logged clock offset that changes
// nothing), lands it in the next tick, and `ledgerd replay` and a second
// restart reach the same state.
func TestRestartInsideAStagedRun(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Markets = DevMarkets()
	cfg.SnapshotEvery = -1
	clock := cfg.Clock.(*ManualClock)
	book := DevMarkets()[0].ID
	const iv = 500_000
	deadline := func() uint64 { return uint64((clock.NowMicros()/iv + 2) * iv) }
	var (
		n       *Node
		armed   bool
		failing atomic.Bool
		staged  = obTx(2, 0, nil)
	)
	cfg.BeforeAppend = func() error {
		if failing.Load() {
			return errDiskGone
		}
		return nil
	}
	cfg.DuringClearing = func() {
		if !armed {
			return
		}
		armed = false
		submitWait(t, n, staged) // durable, acknowledged and attested while the tick clears
		failing.Store(true)      // the tick's group never reaches the log
	}
	n = openNode(t, cfg)
	ask := obTx(1, 0, submitOrder(book, clob.Sell, 2, 200_000, deadline()))
	submitWait(t, n, ask)
	staged.Data = submitOrder(book, clob.Buy, 2, 200_010, deadline())
	armed = true
	clock.Advance(iv)
	if durable, err := n.RunDueTicks(); err == nil && durable != nil {
		if err := <-durable; err == nil {
			t.Fatal("the tick became durable: the test did not stop the node inside the staged run")
		}
	}
	n.Close()
	// `ledgerd replay` of the log as the stop left it: the staged order
	// joined, as the restart below joins it (with one more input).
	crashed, err := Replay(ReplayConfig{DataDir: dir, Out: io.Discard})
	if err != nil {
		t.Fatalf("replay of the log ending inside a staged run: %v", err)
	}

	cfg.BeforeAppend, cfg.DuringClearing = nil, nil
	n = openNode(t, cfg)
	if seq, _ := n.StateAt(); seq != crashed.Seq+1 {
		t.Fatalf("restarted at seq %d, want the replay's %d and the joining input", seq, crashed.Seq)
	}
	if n.ledger.Orderbook().Staging() {
		t.Fatal("the restarted node still stages: its books are not whole")
	}
	if r, ok := n.Lookup(staged.Hash); !ok || r.InTick {
		t.Fatalf("the staged order after the restart: %v %+v, want known and not yet in a tick", ok, r)
	}
	if _, traded := n.ledger.Orderbook().LastPrice(book); traded {
		t.Fatal("traded before the next tick")
	}
	advanceTick(t, n, clock, iv)
	if r, _ := n.Lookup(staged.Hash); !r.InTick {
		t.Fatal("the staged order did not land in the tick after the restart")
	}
	if _, traded := n.ledger.Orderbook().LastPrice(book); !traded {
		t.Fatal("the staged bid and the ask did not trade")
	}
	n = closeReplayRestart(t, n, cfg, nil)
	n.Close()
}

var errDiskGone = errorString("the disk is gone")

// advanceTick moves the clock by us and runs the ticks then due, waiting
// until they are durable; at least one must be.
func advanceTick(t *testing.T, n *Node, clock *ManualClock, us int64) {
	t.Helper()
	clock.Advance(us)
	durable, err := n.RunDueTicks()
	if err != nil || durable == nil {
		t.Fatalf("tick: %v %v", durable, err)
	}
	if err := <-durable; err != nil {
		t.Fatal(err)
	}
}

// closeReplayRestart closes n, checks that `ledgerd replay` of dir and a
// restart with cfg reach the state n had, and returns the restarted node;
// closed runs between the close and the replay.
func closeReplayRestart(t *testing.T, n *Node, cfg Config, closed func()) *Node {
	t.Helper()
	seq, hash := n.StateAt()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if closed != nil {
		closed()
	}
	res, err := Replay(ReplayConfig{DataDir: cfg.DataDir, Out: io.Discard})
	if err != nil || res.Seq != seq || res.Hash != hash {
		t.Fatalf("replay: %+v %v, want seq %d hash %x", res, err, seq, hash)
	}
	n = openNode(t, cfg)
	if s2, h2 := n.StateAt(); s2 != seq || h2 != hash {
		n.Close()
		t.Fatalf("restart: seq %d hash %x, want %d %x", s2, h2, seq, hash)
	}
	return n
}

// TestStagedUnderLoad: market makers' ladders from six accounts, sent as
// fast as each account's previous one is durable, while a driver moves the
// clock by an auction interval every few milliseconds and runs the ticks
// on two spot books; many ladders arrive while a tick's books clear, or
// while its downstream stage runs, and are staged. After the load,
// `ledgerd replay` and a restart reach the state hash the node had, and
// the supply is conserved. Under -race it checks the node's own state
// against the clearing and the downstream stage too.
func TestStagedUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3 s load")
	}
	const iv = 50_000
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.SnapshotEvery = -1
	// windows counts the downstream windows open: a ladder admitted while
	// one was open before and after its send was admitted in it.
	var windows, inWindow atomic.Int64
	cfg.DuringDownstream = func() {
		windows.Add(1)
		time.Sleep(200 * time.Microsecond) // a window long enough to meet the senders
		windows.Add(-1)
	}
	clock := cfg.Clock.(*ManualClock)
	markets := DevMarkets()
	for i := range markets {
		markets[i].IntervalUs = iv
	}
	cfg.Markets = markets
	n := openNode(t, cfg)
	stop := time.Now().Add(3 * time.Second)
	ticks := make(chan error, 1)
	go func() {
		var err error
		for err == nil && time.Now().Before(stop) {
			clock.Advance(iv)
			_, err = n.RunDueTicks()
			time.Sleep(2 * time.Millisecond)
		}
		ticks <- err
	}()
	errs := make(chan error, 6)
	for a := range 6 {
		go func() {
			var nonce uint64
			for time.Now().Before(stop) {
				now := n.Clock().NowMicros()
				var inner [][]byte
				for i := range 10 {
					m := &markets[i%2]
					side := clob.Side(i % 2)
					price := uint64(200_000) - uint64(3+i) // bids below, asks above; every fourth crosses
					if side == clob.Sell {
						price = 200_000 + uint64(3+i)
					}
					if i%4 == 0 {
						price = 200_000
					}
					if m.ID != markets[0].ID {
						price /= 4
					}
					in := clob.Intent{Kind: clob.IntentSubmit, Book: m.ID, Side: side,
						Deadline: uint64((now/iv + 20) * iv), TTL: 200_000}
					in.Size.Mul(uint256.NewInt(1), &m.LotSize)
					in.Price.Mul(uint256.NewInt(price), &m.TickPrecision)
					inner = append(inner, abi.AppendIntent(nil, &in))
				}
				tx := obTx(a, nonce, abi.AppendSubmitBatch(nil, inner))
				tx.Hash[3], tx.Hash[4] = byte(nonce>>8), byte(nonce>>16)
				durable := make(chan error, 1)
				open := windows.Load() > 0
				rej, err := n.SubmitTx(tx, func(_ *Entry, err error) { durable <- err })
				if open && windows.Load() > 0 {
					inWindow.Add(1)
				}
				if err == nil && !rej.OK() {
					err = fmt.Errorf("account %d nonce %d refused: %+v", a, nonce, rej)
				}
				if err == nil {
					err = <-durable
				}
				if err != nil {
					errs <- err
					return
				}
				nonce++
			}
			errs <- nil
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-ticks; err != nil {
		t.Fatal(err)
	}
	if !n.ledger.CheckSupply() {
		t.Fatal("supply not conserved")
	}
	n = closeReplayRestart(t, n, cfg, func() {
		lg, err := persist.OpenReadOnly(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer lg.Close()
		staged, txs := 0, 0
		if err := lg.Replay(0, func(_ uint64, in *core.Input) error {
			if in.Kind == core.InputTx {
				txs++
			}
			if in.Staged {
				staged++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d ladders, %d of them staged during a clearing, about %d during a downstream window", txs, staged, inWindow.Load())
		if inWindow.Load() == 0 {
			t.Error("no ladder arrived while a tick's downstream stage ran: the test did not test its window")
		}
		if staged == 0 {
			t.Fatal("no ladder arrived while a tick's books cleared: the test did not test staging")
		}
	})
	n.Close()
}
