package clob

import (
	"fmt"
	"testing"

	"github.com/holiman/uint256"
)

// Perp test markets: lot 1e15, tick 2e15, so unitQuote q = 1e12 wei, no
// fees unless a test sets them.
var (
	tPerpID  = Hash{0x02}
	tPerp2ID = Hash{0x03}
	tSynth   = Address{0xB1}
	q12      = uint256.NewInt(1e12)
)

func perpMarket(id Hash, lev uint32, oracleSteps int64) MarketConfig {
	m := testMarket(id, 1_000_000)
	m.Name, m.Kind, m.Base, m.Quote = "T-PERP", Perp, tSynth, NativeToken
	m.MakerFee, m.TakerFee = uint256.Int{}, uint256.Int{}
	m.Perp = PerpParams{MaxLeverage: lev, OraclePrice: stepsWei(oracleSteps)}
	return m
}

// newPerpHarness returns a harness whose engine also has the perp markets
// cfgs, and whose ledger counts their cost in the supply check.
func newPerpHarness(t testing.TB, l Limits, cfgs ...MarketConfig) *harness {
	h := newHarness(t, l)
	h.acc.engine = h.e
	for i := range cfgs {
		if err := h.e.CreateMarket(&cfgs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// fundNative gives an owner native cash, in q (1e12 wei).
func (h *harness) fundNative(name string, qs int64) {
	a := owner(name)
	h.owners[a] = name
	v := new(uint256.Int).Mul(uint256.NewInt(uint64(qs)), q12)
	h.acc.fund(NativeToken, a, v)
}

// perpOrder builds a submit intent on book.
func (h *harness) perpOrder(book Hash, side Side, lots, steps int64, flags uint8) Intent {
	in := Intent{Kind: IntentSubmit, Book: book, Side: side, Size: lotsWei(lots), Price: stepsWei(steps),
		Type: Limit, Flags: flags, Deadline: h.deadline()}
	if flags&FlagIOC != 0 && steps == 0 {
		in.Type, in.Price = Market, stepsWei(unitsMax)
	}
	return in
}

// pos returns owner's position (lots, cost in q) on book.
func (h *harness) pos(book Hash, name string) (int64, int64) {
	b := h.e.book(book)
	a := h.e.pp.acctOf(owner(name))
	if a < 0 {
		return 0, 0
	}
	i := b.perp.find(a)
	if i < 0 {
		return 0, 0
	}
	p := &b.perp.pos[i]
	c := signedOf(&p.cost)
	v := int64(c.Abs.Uint64())
	if c.Neg {
		v = -v
	}
	return p.size, v
}

// cashQ returns owner's native Cash − Debt in q (exact multiples only).
func (h *harness) cashQ(name string) int64 {
	h.t.Helper()
	cash, _, debt := h.acc.Holding(NativeToken, owner(name))
	var v, r uint256.Int
	v.Sub(&cash, &debt)
	s := signedOf(&v)
	s.Abs.DivMod(&s.Abs, q12, &r)
	if !r.IsZero() {
		h.t.Fatalf("%s: cash %s is not a whole number of q", name, v.Dec())
	}
	if s.Neg {
		return -int64(s.Abs.Uint64())
	}
	return int64(s.Abs.Uint64())
}

// checkPerp verifies the perp invariants (docs/perps.md, "Invariants")
// and the engine's own: Σ S = 0 per market; B and A equal the live
// non-reduce-only orders; records hold something and are indexed; open
// counts; and after a tick, no account but the backstop below maintenance
// with a position, or negative without one.
func checkPerp(e *Engine, acc *testAccounts) error {
	open := make([]int32, len(e.pp.accts))
	for _, b := range e.pp.books {
		pb := b.perp
		var sum int64
		want := map[int32][2]int64{}
		ro := 0
		for s := 1; s < len(b.nodes); s++ {
			n := &b.nodes[s]
			if n.state != stateFree && n.flags&FlagReduceOnly != 0 {
				ro++
			}
			if n.state == stateFree || n.flags&FlagReduceOnly != 0 {
				continue
			}
			a := e.pp.acctOf(b.ords[s].owner)
			w := want[a]
			w[n.side] += n.remLots
			want[a] = w
		}
		for i := range pb.pos {
			p := &pb.pos[i]
			sum += p.size
			if p.size == 0 && p.bid == 0 && p.ask == 0 || pb.find(p.acct) != i {
				return fmt.Errorf("perp %x: record %d of account %d empty or not indexed", b.cfg.ID[:1], i, p.acct)
			}
			if (p.size < 0) != (p.cost.Sign() < 0) || p.size == 0 && !p.cost.IsZero() {
				return fmt.Errorf("perp %x: account %d size %d cost %s", b.cfg.ID[:1], p.acct, p.size, p.cost.Hex())
			}
			if w := want[p.acct]; w[Buy] != p.bid || w[Sell] != p.ask {
				return fmt.Errorf("perp %x: account %d B/A %d/%d, orders %d/%d", b.cfg.ID[:1], p.acct, p.bid, p.ask, w[Buy], w[Sell])
			}
			delete(want, p.acct)
			if p.size != 0 {
				open[p.acct]++
			}
		}
		if len(want) != 0 {
			return fmt.Errorf("perp %x: orders without a record: %v", b.cfg.ID[:1], want)
		}
		if ro != pb.reduceOnly {
			return fmt.Errorf("perp %x: %d live reduce-only orders, counted %d", b.cfg.ID[:1], ro, pb.reduceOnly)
		}
		if sum != 0 {
			return fmt.Errorf("perp %x: Σ S = %d", b.cfg.ID[:1], sum)
		}
	}
	for i := range e.pp.accts {
		a := &e.pp.accts[i]
		if a.open != open[i] || a.open > 0 && !a.listed {
			return fmt.Errorf("account %x: open %d, counted %d, listed %v", a.owner[:2], a.open, open[i], a.listed)
		}
		if a.owner == BackstopAddress || !a.listed {
			continue
		}
		m := e.Margin(a.owner, acc)
		if a.open > 0 && cmpSigned(&m.Equity, &Signed{Abs: m.Maintenance}) < 0 {
			return fmt.Errorf("account %x: equity %v below maintenance %s after the tick", a.owner[:2], m.Equity, m.Maintenance.Dec())
		}
		if a.open == 0 && m.Cash.Neg {
			return fmt.Errorf("account %x: negative cash %s without a position", a.owner[:2], m.Cash.Abs.Dec())
		}
	}
	return nil
}

func cmpSigned(x, y *Signed) int {
	switch {
	case x.Neg && !y.Neg:
		return -1
	case !x.Neg && y.Neg:
		return 1
	case x.Neg:
		return y.Abs.Cmp(&x.Abs)
	}
	return x.Abs.Cmp(&y.Abs)
}
