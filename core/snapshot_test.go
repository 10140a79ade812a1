package core

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

var (
	snapSeeds = flag.Int("snap.seeds", 24, "seeded streams in TestLoadSnapshotContinues")
	snapSteps = flag.Int("snap.steps", 1500, "workload steps per stream")
	snapSeed  = flag.Int64("snap.seed", -1, "run only this seed")
)

// Reproduce one stream: go test ./core -run TestLoadSnapshotContinues -snap.seed=N

// TestLoadSnapshotContinues is the property a snapshot exists for: a ledger
// loaded from another's snapshot, fed the same inputs from then on, produces
// the same records, rejections, tick results and due ticks, and ends with
// the same state hash. Each stream loads several followers at random points,
// some from the original, some from earlier followers (a load of a load), and
// checks each load re-encodes to its snapshot's bytes.
func TestLoadSnapshotContinues(t *testing.T) {
	for _, seed := range snapSeedList() {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			if d := continueRun(t, seed, *snapSteps, nil); d != "" {
				t.Fatalf("seed %d: %s", seed, d)
			}
		})
	}
}

// TestLoadSnapshotNoticesLoss shows TestLoadSnapshotContinues can fail: a
// loader that forgets part of the state must be caught by a behavioural
// comparison (not only by the final state hash) on some seed.
func TestLoadSnapshotNoticesLoss(t *testing.T) {
	f := func(name string, lose func(l *Ledger)) {
		t.Helper()
		for seed := range uint64(8) {
			d := continueRun(t, seed, 600, lose)
			if d != "" && !strings.HasPrefix(d, "final") {
				return
			}
		}
		t.Errorf("%s: no seed noticed the loss", name)
	}
	f("base fee", func(l *Ledger) { l.baseFee = *gwei })
	f("nonces", func(l *Ledger) {
		for _, acc := range l.accounts {
			acc.Nonce = 0
		}
	})
	f("pending withdrawals", func(l *Ledger) { l.wd.pending = l.wd.pending[:0] })
	f("locks", func(l *Ledger) {
		for _, acc := range l.accounts {
			acc.Native.Locked.Clear()
		}
	})
}

func snapSeedList() []uint64 {
	if *snapSeed >= 0 {
		return []uint64{uint64(*snapSeed)}
	}
	seeds := make([]uint64, *snapSeeds)
	for i := range seeds {
		seeds[i] = uint64(i)
	}
	return seeds
}

// follower is a ledger fed the same inputs as the original from the point
// it was loaded.
type follower struct {
	name string
	l    *Ledger
}

// continueRun plays seed's workload for steps steps on a ledger and every
// follower it loads along the way (lose, if set, damages each loaded
// ledger). It returns the first difference, "" if none; a difference only
// in the final state hashes starts with "final".
func continueRun(t testing.TB, seed uint64, steps int, lose func(l *Ledger)) string {
	w, a := newWorkload(seed, clob.Limits{})
	fs := []*follower{{name: "original", l: a}}
	loadAt := map[int]bool{}
	for range 4 {
		loadAt[w.r.IntN(steps)] = true
	}
	var pending []*TxRecord
	for step := range steps {
		w.advance()
		for range 200 {
			in, ok := w.tick(a)
			if !ok {
				break
			}
			if d := applyAll(fs, in, nil); d != "" {
				return fmt.Sprintf("step %d, tick %d: %s", step, in.TimeUs, d)
			}
		}
		if d := applyAll(fs, w.next(a), &pending); d != "" {
			return fmt.Sprintf("step %d: %s", step, d)
		}
		pending = settleSome(fs, pending, w.r, 50)
		if d := sameDue(fs, w.nowUs); d != "" {
			return fmt.Sprintf("step %d: %s", step, d)
		}
		if step%4 == 0 || step == steps-1 {
			if d := sameViews(fs, w); d != "" {
				return fmt.Sprintf("step %d: %s", step, d)
			}
		}
		if loadAt[step] {
			pending = settleSome(fs, pending, w.r, 100) // the snapshot carries no pending marks
			src := fs[w.r.IntN(len(fs))]
			f, d := load(t, w.cfg, src)
			if d != "" {
				return fmt.Sprintf("step %d: %s", step, d)
			}
			if lose != nil {
				lose(f.l)
			}
			fs = append(fs, f)
		}
	}
	return finalDiff(fs)
}

// load loads a follower from src's snapshot and checks it re-encodes to it.
func load(t testing.TB, cfg Config, src *follower) (*follower, string) {
	snap := src.l.AppendSnapshot(nil)
	l, err := LoadSnapshot(cfg, snap)
	if err != nil {
		return nil, fmt.Sprintf("load of %s's snapshot: %v", src.name, err)
	}
	if again := l.AppendSnapshot(nil); !bytes.Equal(again, snap) {
		return nil, fmt.Sprintf("load of %s's snapshot re-encodes differently (%d vs %d bytes)", src.name, len(again), len(snap))
	}
	return &follower{name: fmt.Sprintf("load of %s at seq %d", src.name, l.Seq()), l: l}, ""
}

// applyAll applies in to every follower and compares what each returns with
// the original's. Records of accepted transactions join *pending.
func applyAll(fs []*follower, in *Input, pending *[]*TxRecord) string {
	rec, rej := fs[0].l.Apply(in)
	for _, f := range fs[1:] {
		r, j := f.l.Apply(in)
		if !reflect.DeepEqual(r, rec) {
			return fmt.Sprintf("input kind %d: %s's record differs:\n %+v\n original %+v", in.Kind, f.name, r, rec)
		}
		if !reflect.DeepEqual(j, rej) {
			return fmt.Sprintf("input kind %d: %s's rejection %+v, original %+v", in.Kind, f.name, j, rej)
		}
		if in.Kind == InputTick {
			if d := diffTickResult(f.l.LastTick(), fs[0].l.LastTick()); d != "" {
				return fmt.Sprintf("%s's tick result differs: %s", f.name, d)
			}
			if a, b := f.l.LastWithdrawals(), fs[0].l.LastWithdrawals(); !slices.Equal(a, b) {
				return fmt.Sprintf("%s's withdrawals differ: %+v, original %+v", f.name, a, b)
			}
		}
	}
	if pending != nil && rec != nil && rec.Kind == RecordTx {
		*pending = append(*pending, rec)
	}
	return ""
}

// diffTickResult compares tick results by value (a fresh TickResult's
// empty slices are nil, a reused one's are not).
func diffTickResult(a, b *clob.TickResult) string {
	switch {
	case a.TickUs != b.TickUs:
		return fmt.Sprintf("TickUs %d, original %d", a.TickUs, b.TickUs)
	case !slices.Equal(a.Books, b.Books):
		return fmt.Sprintf("books %+v, original %+v", a.Books, b.Books)
	case !slices.Equal(a.Events, b.Events):
		return fmt.Sprintf("events %+v, original %+v", a.Events, b.Events)
	case !slices.Equal(a.Landed, b.Landed):
		return fmt.Sprintf("landed %v, original %v", a.Landed, b.Landed)
	}
	return ""
}

// settleSome settles pct % of the pending records on every follower.
func settleSome(fs []*follower, pending []*TxRecord, r *rand.Rand, pct int) []*TxRecord {
	kept := pending[:0]
	for _, rec := range pending {
		if r.IntN(100) >= pct {
			kept = append(kept, rec)
			continue
		}
		for _, f := range fs {
			f.l.Settle(rec)
		}
	}
	return kept
}

func sameDue(fs []*follower, nowUs int64) string {
	T, ok := fs[0].l.NextTickDue(nowUs)
	for _, f := range fs[1:] {
		if t, o := f.l.NextTickDue(nowUs); t != T || o != ok {
			return fmt.Sprintf("%s's next tick %d %v, original %d %v", f.name, t, o, T, ok)
		}
	}
	return ""
}

// sameViews compares what the node's read paths show: balances and nonces
// of the workload's accounts, and per market its configuration, levels and
// last price, and the recent orders.
func sameViews(fs []*follower, w *workload) string {
	v := viewOf(fs[0].l, w)
	for _, f := range fs[1:] {
		if u := viewOf(f.l, w); !reflect.DeepEqual(u, v) {
			return fmt.Sprintf("%s's views differ:\n%+v\noriginal:\n%+v", f.name, u, v)
		}
	}
	return ""
}

// ledgerView is what the read paths show of a ledger.
type ledgerView struct {
	Nonces   []uint64
	Balances []Balance
	Markets  []clob.MarketConfig
	Prices   []uint256.Int
	Priced   []bool
	Levels   [][]clob.Level
	Orders   []clob.OrderInfo
}

func viewOf(l *Ledger, w *workload) *ledgerView {
	v := &ledgerView{}
	for _, a := range w.accts {
		v.Nonces = append(v.Nonces, l.Nonce(a))
		for _, tok := range w.tokens {
			v.Balances = append(v.Balances, l.Balance(tok, a))
		}
	}
	ob := l.Orderbook()
	for _, id := range ob.AppendMarkets(nil) {
		m, _ := ob.Market(id)
		p, ok := ob.LastPrice(id)
		v.Markets, v.Prices, v.Priced = append(v.Markets, *m), append(v.Prices, p), append(v.Priced, ok)
		for _, side := range []clob.Side{clob.Buy, clob.Sell} {
			v.Levels = append(v.Levels, ob.AppendLevels(nil, id, side, 0))
		}
	}
	for i := max(0, len(w.ids)-40); i < len(w.ids); i++ {
		o, _ := ob.Order(w.ids[i].id) // the zero OrderInfo when not live
		v.Orders = append(v.Orders, o)
	}
	return v
}

func finalDiff(fs []*follower) string {
	h := fs[0].l.StateHash()
	for _, f := range fs {
		if !f.l.CheckSupply() {
			return fmt.Sprintf("final: %s breaks conservation", f.name)
		}
		if f.l.StateHash() != h {
			return fmt.Sprintf("final: %s's state hash differs", f.name)
		}
	}
	return ""
}

// TestLoadSnapshotRoundTrip: for many random states, the snapshot of the
// loaded ledger is the snapshot it was loaded from.
func TestLoadSnapshotRoundTrip(t *testing.T) {
	states := 0
	for seed := range uint64(12) {
		w, l := newWorkload(100+seed, clob.Limits{})
		for step := range 40 {
			w.play(l, 20)
			snap := l.AppendSnapshot(nil)
			got, err := LoadSnapshot(w.cfg, snap)
			if err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			if !bytes.Equal(got.AppendSnapshot(nil), snap) || got.StateHash() != l.StateHash() {
				t.Fatalf("seed %d step %d: the loaded ledger re-encodes differently", seed, step)
			}
			states++
		}
	}
	t.Logf("%d states", states)
}

// TestLoadSnapshotRefuses: corrupt snapshots are errors, never panics.
func TestLoadSnapshotRefuses(t *testing.T) {
	w, l := newWorkload(7, clob.Limits{OrdersMax: 64, PendingMax: 64})
	w.play(l, 300)
	snap := l.AppendSnapshot(nil)
	if _, err := LoadSnapshot(w.cfg, snap); err != nil {
		t.Fatal(err)
	}
	f := func(name string, cfg Config, b []byte, want string) {
		t.Helper()
		_, err := LoadSnapshot(cfg, b)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: error %v, want one containing %q", name, err, want)
		}
	}
	edit := func(fn func(b []byte)) []byte {
		b := bytes.Clone(snap)
		fn(b)
		return b
	}
	// Offsets: magic 6, chain id 8, seq 8, base fee 32, fees burned 32,
	// clock offset 8, account count 4, then the first account: address 20,
	// nonce 8, newest transaction 32, lock bit 1, cash 32.
	const nAccts, lock = 6 + 8 + 8 + 32 + 32 + 8, 6 + 8 + 8 + 32 + 32 + 8 + 4 + 20 + 8 + 32
	const cash = lock + 1
	f("magic", w.cfg, edit(func(b []byte) { b[0] = 'X' }), "magic")
	other := w.cfg
	other.ChainID++
	f("chain id", other, snap, "chain id")
	f("trailing byte", w.cfg, append(bytes.Clone(snap), 0), "1 bytes after the engine")
	f("account count", w.cfg, edit(func(b []byte) { b[nAccts] = 0xff }), "entries of ≥")
	f("accounts out of order", w.cfg, edit(func(b []byte) { b[nAccts+4] = 0xff }), "after")
	f("cash", w.cfg, edit(func(b []byte) { b[cash+31] ^= 1 }), "do not add up")
	f("lock bit", w.cfg, edit(func(b []byte) { b[lock] = 2 }), "lock bit 2")
	f("locked above cash", w.cfg, edit(func(b []byte) { b[cash] = 0; b[cash+32] = 1 }), "do not add up")
	if booked(l) < 2 {
		t.Fatal("the state has fewer than 2 orders in a book")
	}
	f("orders over the limit", Config{ChainID: testChainID, Orderbook: clob.Limits{OrdersMax: 1, PendingMax: 64}}, snap, "at most 1")
}

// booked is the most orders resting in one book.
func booked(l *Ledger) int {
	most := 0
	for _, id := range l.Orderbook().AppendMarkets(nil) {
		n := 0
		for _, side := range []clob.Side{clob.Buy, clob.Sell} {
			for _, lv := range l.Orderbook().AppendLevels(nil, id, side, 0) {
				n += lv.Orders
			}
		}
		most = max(most, n)
	}
	return most
}

// TestLoadSnapshotTruncated: a snapshot cut at any byte is refused.
func TestLoadSnapshotTruncated(t *testing.T) {
	w, l := newWorkload(8, clob.Limits{OrdersMax: 16, PendingMax: 16})
	w.play(l, 60)
	snap := l.AppendSnapshot(nil)
	if _, err := LoadSnapshot(w.cfg, snap); err != nil {
		t.Fatal(err)
	}
	for n := range len(snap) {
		if _, err := LoadSnapshot(w.cfg, snap[:n]); err == nil {
			t.Fatalf("a snapshot cut at byte %d of %d loads", n, len(snap))
		}
	}
}

// TestLoadSnapshotLocks: a lock the orderbook does not account for, or a
// reservation the ledger does not lock, is refused.
func TestLoadSnapshotLocks(t *testing.T) {
	l := newOrderbookLedger(t)
	if _, rej := l.Apply(orderbookInputs()[0]); !rej.OK() { // alice's buy locks native
		t.Fatal(rej)
	}
	cfg := Config{ChainID: testChainID}
	f := func(name string, mutate func(c *Ledger), want string) {
		t.Helper()
		c, err := LoadSnapshot(cfg, l.AppendSnapshot(nil))
		if err != nil {
			t.Fatal(err)
		}
		mutate(c)
		if _, err := LoadSnapshot(cfg, c.AppendSnapshot(nil)); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: error %v, want one containing %q", name, err, want)
		}
	}
	f("lock without reservation", func(c *Ledger) {
		c.accounts[bob].Native.Locked.SetUint64(1)
	}, "locks 1 of token")
	f("reservation without lock", func(c *Ledger) {
		c.accounts[alice].Native.Locked.Clear()
	}, "locks 0 of token")
	f("reservation without holding", func(c *Ledger) {
		// alice's balances move, unlocked, to an address the orderbook
		// does not know.
		acc := c.accounts[alice]
		acc.Native.Locked.Clear()
		c.accounts[Address{0xaa}] = acc
		delete(c.accounts, alice)
	}, "which holds none")
}

var fuzzLimits = clob.Limits{OrdersMax: 64, PendingMax: 64}

// FuzzLoadSnapshot: no input panics; whatever loads re-encodes to the same
// bytes and keeps running (ticks) without panicking.
//
// The seeds are small on purpose. The fuzzer minimizes every input that
// finds new coverage, in time quadratic in its length, for up to
// -fuzzminimizetime (60 s by default); an edit deep inside the workload's
// 8 kB states could not be cut from the tail, and minimizing it took whole
// fuzzing runs. FuzzEditedSnapshot covers deep edits cheaply.
func FuzzLoadSnapshot(f *testing.F) {
	for _, snap := range fuzzSeeds(f) {
		f.Add(snap)
	}
	f.Add(NewLedger(Config{ChainID: testChainID, Orderbook: fuzzLimits}).AppendSnapshot(nil))
	f.Fuzz(checkLoad)
}

// FuzzEditedSnapshot is FuzzLoadSnapshot on real snapshots with up to
// eight bytes replaced: the input picks a seed and lists (offset u16, value)
// edits, so it stays a few bytes long while every execution decodes a whole
// snapshot.
func FuzzEditedSnapshot(f *testing.F) {
	seeds := fuzzSeeds(f)
	f.Add(uint8(0), []byte{})
	f.Add(uint8(len(seeds)-1), []byte{0x01, 0x00, 0xff})
	f.Fuzz(func(t *testing.T, which uint8, edits []byte) {
		snap := bytes.Clone(seeds[int(which)%len(seeds)])
		for i := 0; i+3 <= len(edits) && i < 8*3; i += 3 {
			snap[int(binary.BigEndian.Uint16(edits[i:]))%len(snap)] = edits[i+2]
		}
		checkLoad(t, snap)
	})
}

// checkLoad is the fuzz property: data loads or is refused without a
// panic; what loads re-encodes to data and runs a few ticks.
func checkLoad(t *testing.T, data []byte) {
	l, err := LoadSnapshot(Config{ChainID: testChainID, Orderbook: fuzzLimits}, data)
	if err != nil {
		return
	}
	if got := l.AppendSnapshot(nil); !bytes.Equal(got, data) {
		t.Fatalf("loaded %d bytes, re-encoded %d different ones", len(data), len(got))
	}
	for range 3 {
		T, ok := l.NextTickDue(1 << 62)
		if !ok {
			break
		}
		l.Tick(T)
	}
}

// fuzzSeeds are snapshots of a small ledger at each step of a script that
// leaves, in the end, a resting order with a ttl, a last price, and pending
// intents of every kind: a submit, a cancel, an update and a transfer.
func fuzzSeeds(tb testing.TB) [][]byte {
	l := NewLedger(Config{ChainID: testChainID, BaseFee: *gwei, Orderbook: fuzzLimits})
	l.Genesis(NativeToken, alice, new(uint256.Int).Mul(uint256.NewInt(10_000), uint256.NewInt(1e18)))
	l.Genesis(NativeToken, bob, uint256.NewInt(1e18))
	l.Genesis(weth, bob, new(uint256.Int).Mul(uint256.NewInt(5), uint256.NewInt(1e18)))
	if err := l.GenesisMarket(wethMarket()); err != nil {
		tb.Fatal(err)
	}
	var seeds [][]byte
	nonces := map[Address]uint64{}
	call := func(from Address, nowUs int64, in ...clob.Intent) {
		inner := make([][]byte, len(in))
		for i := range in {
			inner[i] = abi.AppendIntent(nil, &in[i])
		}
		data := inner[0]
		if len(in) > 1 {
			data = abi.AppendSubmitBatch(nil, inner)
		}
		tx := Tx{Hash: Hash{byte(len(seeds))}, Type: TxTypeDynamicFee, ChainID: testChainID, Nonce: nonces[from], From: from,
			To: OrderbookAddress, HasTo: true, Gas: 100_000, GasFeeCap: *uint256.NewInt(2e9), Data: data}
		rec, rej := l.ApplyTx(&tx, nowUs)
		if !rej.OK() {
			tb.Fatalf("seed call %d: %+v", len(seeds), rej)
		}
		l.Settle(rec)
		nonces[from]++
		seeds = append(seeds, l.AppendSnapshot(nil))
	}
	order := func(side clob.Side, lots, steps, ttl uint64, deadline uint64) clob.Intent {
		in := clob.Intent{Kind: clob.IntentSubmit, Book: wethBook, Side: side, Deadline: deadline, TTL: ttl}
		in.Size.Mul(uint256.NewInt(lots), uint256.NewInt(1e15))
		in.Price.Mul(uint256.NewInt(steps), uint256.NewInt(1e16))
		return in
	}
	call(alice, 600_000, order(clob.Buy, 2, 3000, 0, 1_000_000), order(clob.Buy, 1, 2990, 60_000_000, 1_000_000))
	call(bob, 600_000, order(clob.Sell, 1, 3000, 0, 1_000_000))
	l.Tick(1_000_000) // one lot trades, the rest rests
	seeds = append(seeds, l.AppendSnapshot(nil))
	rest := clob.OrderID(clob.Address(alice), 0, 0)
	call(bob, 1_100_000, order(clob.Sell, 3, 3100, 0, 1_500_000))
	call(alice, 1_200_000, clob.Intent{Kind: clob.IntentCancel, Book: wethBook, OrderID: clob.OrderID(clob.Address(alice), 0, 1), Deadline: 1_500_000})
	up := order(clob.Buy, 2, 2995, 0, 1_500_000)
	up.Kind, up.OrderID = clob.IntentUpdate, rest
	call(alice, 1_300_000, up)
	tr := clob.Intent{Kind: clob.IntentTransfer, Token: clob.Address(weth), To: clob.Address(alice), Deadline: 1_500_000}
	tr.Amount.SetUint64(1e15)
	call(bob, 1_400_000, tr)
	return seeds
}
