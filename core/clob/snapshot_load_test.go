package clob_test

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
)

// The continuation test: the differential stream (differential_test.go)
// drives an engine, and at random points engines are loaded from the
// snapshot of the original or of an earlier load, each with a copy of its
// source's ledger. From then on every engine gets the same envelopes and
// ticks and must give the same reasons, tick results, due ticks, balances,
// levels, prices and orders, and in the end the same snapshot.
//
// Reproduce one stream: go test ./core/clob -run TestLoadEngineContinues -load.seed=N

var (
	loadSeeds = flag.Int("load.seeds", 60, "seeded streams in TestLoadEngineContinues")
	loadSeed  = flag.Int64("load.seed", -1, "run only this seed")
)

func TestLoadEngineContinues(t *testing.T) {
	seeds := []int64{*loadSeed}
	if *loadSeed < 0 {
		seeds = seeds[:0]
		for i := range *loadSeeds {
			seeds = append(seeds, int64(i+1))
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			if d := continueEngine(seed, 250, nil); d != "" {
				t.Fatalf("seed %d: %s", seed, d)
			}
		})
	}
}

// TestLoadEngineNoticesLoss shows the continuation test can fail: for each
// part of the state a loader could forget (clob.Losses), some seed must show
// a difference in behaviour, not only in the final snapshot.
func TestLoadEngineNoticesLoss(t *testing.T) {
	for _, loss := range clob.Losses {
		t.Run(loss.Name, func(t *testing.T) {
			for seed := range int64(20) {
				if d := continueEngine(seed+1, 150, loss.Lose); d != "" && !strings.HasPrefix(d, "final") {
					return
				}
			}
			t.Errorf("no seed noticed the loss of the %s", loss.Name)
		})
	}
}

// copy is one engine of the continuation test with its own ledger.
type copyOf struct {
	name string
	e    *clob.Engine
	acc  *accounts
	out  clob.TickResult
}

// continueEngine plays seed's stream for ticks ticks, loading copies along
// the way (lose, if set, damages each); it returns the first difference,
// "" if none. A difference only in the final snapshots starts with "final".
func continueEngine(seed int64, ticks int, lose func(e *clob.Engine)) string {
	s, orig := newLoadStream(seed)
	cs := []*copyOf{orig}
	nTicks := 0
	for steps := 0; nTicks < ticks && steps < ticks*20; steps++ {
		if s.chance(3) {
			s.nowUs += int64(1+s.pick(8)) * 1_000_000
		} else {
			s.nowUs += int64(s.pick(700_000))
		}
		n, d := tickAll(s, cs)
		if d != "" {
			return fmt.Sprintf("tick #%d: %s", nTicks+n, d)
		}
		nTicks += n
		for k := s.pick(7); k > 0; k-- {
			if d := admitAll(s, cs); d != "" {
				return fmt.Sprintf("after tick #%d: %s", nTicks, d)
			}
		}
		if steps%4 == 0 {
			if d := sameState(s, cs); d != "" {
				return fmt.Sprintf("after tick #%d: %s", nTicks, d)
			}
		}
		if len(cs) < 7 && s.chance(2) {
			c, d := loadCopy(s, cs[s.pick(len(cs))], len(cs))
			if d != "" {
				return d
			}
			if lose != nil {
				lose(c.e)
			}
			cs = append(cs, c)
		}
	}
	want := orig.e.AppendSnapshot(nil)
	for _, c := range cs[1:] {
		if !bytes.Equal(c.e.AppendSnapshot(nil), want) {
			return fmt.Sprintf("final: %s's snapshot differs", c.name)
		}
	}
	return ""
}

// newLoadStream sets up seed's world and stream, as the differential test
// does, on one fast engine.
func newLoadStream(seed int64) (*stream, *copyOf) {
	r := rand.New(rand.NewPCG(uint64(seed), 0x10ad))
	w := newWorld(r)
	limits := clob.Limits{OrdersMax: 1 << 10, PendingMax: 1 << 8}
	if r.IntN(4) == 0 {
		limits = clob.Limits{OrdersMax: 6 + r.IntN(24), PendingMax: 8 << r.IntN(2)}
	}
	s := &stream{draws: draws{c: r, nonce: map[clob.Address]uint64{}, nowUs: int64(r.IntN(3_000_000))}, w: w, limits: limits}
	orig := &copyOf{name: "original", e: clob.NewEngine(limits), acc: newAccounts()}
	s.live = func(id clob.Hash) bool { _, ok := orig.e.Order(id); return ok }
	for i := range w.books {
		if err := orig.e.CreateMarket(&w.books[i]); err != nil {
			panic(err)
		}
	}
	for _, tok := range w.tokens {
		for _, o := range w.owners {
			amt := e18(uint64(100 + r.IntN(5000)))
			orig.acc.Credit(tok, o, &amt)
		}
	}
	return s, orig
}

// loadCopy loads a copy of src from its snapshot, with a copy of its ledger.
func loadCopy(s *stream, src *copyOf, k int) (*copyOf, string) {
	snap := src.e.AppendSnapshot(nil)
	e, rest, err := clob.LoadEngine(s.limits, snap)
	switch {
	case err != nil:
		return nil, fmt.Sprintf("load of %s: %v", src.name, err)
	case len(rest) != 0:
		return nil, fmt.Sprintf("load of %s left %d bytes", src.name, len(rest))
	case !bytes.Equal(e.AppendSnapshot(nil), snap):
		return nil, fmt.Sprintf("load of %s re-encodes differently", src.name)
	}
	return &copyOf{name: fmt.Sprintf("copy %d (of %s at %dµs)", k, src.name, s.nowUs), e: e, acc: src.acc.clone()}, ""
}

// tickAll runs every due tick on every copy and compares; it returns how
// many ticks ran.
func tickAll(s *stream, cs []*copyOf) (int, string) {
	orig := cs[0]
	for n := 0; n < 1000; n++ {
		T, ok := orig.e.NextTickDue(s.nowUs)
		for _, c := range cs[1:] {
			if t, o := c.e.NextTickDue(s.nowUs); t != T || o != ok {
				return n, fmt.Sprintf("NextTickDue(%d): %s %d %v, original %d %v", s.nowUs, c.name, t, o, T, ok)
			}
		}
		if !ok {
			return n, ""
		}
		if skip := s.nowUs / 2_000_000 * 2_000_000; skip > T && s.chance(3) {
			T = skip
		}
		for _, c := range cs {
			c.e.Tick(T, c.acc, &c.out)
		}
		for _, c := range cs[1:] {
			if d := diffTick(&c.out, &orig.out); d != "" {
				return n, fmt.Sprintf("Tick(%d): %s vs original: %s", T, c.name, d)
			}
		}
		if d := sameState(s, cs); d != "" {
			return n, fmt.Sprintf("after Tick(%d): %s", T, d)
		}
	}
	return 1000, "NextTickDue keeps returning work"
}

// admitAll admits one envelope of the stream on every copy and compares
// the reasons.
func admitAll(s *stream, cs []*copyOf) string {
	a, env := s.envelope()
	want := cs[0].e.Admit(&a, &env, cs[0].acc)
	for _, c := range cs[1:] {
		if got := c.e.Admit(&a, &env, c.acc); got != want {
			return fmt.Sprintf("Admit tag %d: %s %q, original %q", a.Tag, c.name, got, want)
		}
	}
	return ""
}

// sameState compares ledgers and the engines' read paths.
func sameState(s *stream, cs []*copyOf) string {
	orig := cs[0]
	for _, c := range cs {
		if c.acc.err != nil {
			return fmt.Sprintf("%s's ledger: %v", c.name, c.acc.err)
		}
	}
	for _, c := range cs[1:] {
		if d := c.acc.diff(orig.acc); d != "" {
			return fmt.Sprintf("%s's ledger: %s", c.name, d)
		}
		for _, id := range orig.e.AppendMarkets(nil) {
			for _, sd := range []clob.Side{clob.Buy, clob.Sell} {
				if d := diffLevels(c.e.AppendLevels(nil, id, sd, 0), orig.e.AppendLevels(nil, id, sd, 0)); d != "" {
					return fmt.Sprintf("%s: levels of %x side %d: %s", c.name, id[:1], sd, d)
				}
			}
			p, ok := c.e.LastPrice(id)
			q, okq := orig.e.LastPrice(id)
			if ok != okq || !p.Eq(&q) {
				return fmt.Sprintf("%s: last price of %x %s %v, original %s %v", c.name, id[:1], p.Dec(), ok, q.Dec(), okq)
			}
		}
		for i := max(0, len(s.ids)-32); i < len(s.ids); i++ {
			o, ok := c.e.Order(s.ids[i].id)
			q, okq := orig.e.Order(s.ids[i].id)
			if ok != okq || o != q {
				return fmt.Sprintf("%s: Order(%x) %+v %v, original %+v %v", c.name, s.ids[i].id[:4], o, ok, q, okq)
			}
		}
	}
	return ""
}

func (a *accounts) clone() *accounts {
	c := newAccounts()
	for k, v := range a.cash {
		c.cash[k] = new(uint256.Int).Set(v)
	}
	for k, v := range a.locked {
		c.locked[k] = new(uint256.Int).Set(v)
	}
	for k, v := range a.debt {
		c.debt[k] = new(uint256.Int).Set(v)
	}
	for k, v := range a.fees {
		c.fees[k] = new(uint256.Int).Set(v)
	}
	return c
}

// diff compares two ledgers by value (a missing entry is zero).
func (a *accounts) diff(b *accounts) string {
	for _, m := range [3][2]map[[2]clob.Address]*uint256.Int{{a.cash, b.cash}, {a.locked, b.locked}, {a.debt, b.debt}} {
		for _, pair := range [2][2]map[[2]clob.Address]*uint256.Int{{m[0], m[1]}, {m[1], m[0]}} {
			for k := range pair[0] {
				x, y := a.get(m[0], k[0], k[1]), b.get(m[1], k[0], k[1])
				if !x.Eq(&y) {
					return fmt.Sprintf("token %x owner %x: %s, original %s", k[0][:1], k[1][:1], x.Dec(), y.Dec())
				}
			}
		}
	}
	for _, pair := range [2]map[clob.Address]*uint256.Int{a.fees, b.fees} {
		for tok := range pair {
			if x, y := a.fee(tok), b.fee(tok); !x.Eq(&y) {
				return fmt.Sprintf("fees in %x: %s, original %s", tok[:1], x.Dec(), y.Dec())
			}
		}
	}
	return ""
}
