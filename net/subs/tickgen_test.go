package subs

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
)

// tickGen makes real ticks: seeded random orders, cancels, updates and
// transfers go through a clob.Engine and an marketdata.Index, and each tick
// that ran becomes a Tick the way the node's buildTick makes it (levels,
// snapshot, created/touched metadata, modifications, markets, positions),
// plus synthetic withdrawals (no bridge exists yet). The seed reproduces
// the ticks exactly.
type tickGen struct {
	seed   uint64
	rng    *rand.Rand
	e      *clob.Engine
	idx    *marketdata.Index
	acc    *genAccounts
	books  []clob.Hash
	owners []clob.Address
	orders []genOrder // every order created, for cancels and updates
	nonce  uint64
	nowUs  int64
	parent clob.Hash
	res    clob.TickResult
	trig   map[clob.Address][]marketdata.Trigger // synthetic stored triggers
}

type genOrder struct {
	id    clob.Hash
	book  clob.Hash
	owner clob.Address
}

const genIntervalUs = clob.TransferIntervalUs

var (
	genQuote = addr(0xc0)
	genE15   = uint256.NewInt(1e15)
)

func newTickGen(seed uint64, booksCount, ownersCount int) *tickGen {
	g := &tickGen{seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5eed)), e: clob.NewEngine(clob.Limits{}),
		acc: &genAccounts{bal: map[[40]byte]*genBalance{}}, nowUs: 1_700_000_000_000_000}
	g.idx = marketdata.New(g.e)
	for i := range booksCount {
		id := bookID(byte(0x10 + i))
		cfg := &clob.MarketConfig{ID: id, Name: fmt.Sprintf("B%d/Q", i), BaseSymbol: fmt.Sprintf("B%d", i), QuoteSymbol: "Q",
			Base: addr(byte(0xb0 + i)), Quote: genQuote, IntervalUs: genIntervalUs,
			TickPrecision: *genE15, LotSize: *genE15, MakerFee: *genE15, TakerFee: *uint256.NewInt(2e15)}
		if err := g.e.CreateMarket(cfg); err != nil {
			panic(err)
		}
		g.idx.AddMarket(cfg)
		g.books = append(g.books, id)
	}
	rich := w(1_000_000_000)
	for i := range ownersCount {
		a := addr(byte(1 + i))
		a[0] = 0x11
		g.owners = append(g.owners, a)
		g.acc.credit(genQuote, a, &rich)
		for j := range booksCount {
			g.acc.credit(addr(byte(0xb0+j)), a, &rich)
		}
	}
	return g
}

// next admits about envelopes envelopes and runs ticks until one runs
// something; it returns that tick.
func (g *tickGen) next(envelopes int) *tickrec.Tick {
	for {
		T := (g.nowUs/genIntervalUs + 1) * genIntervalUs
		for range envelopes/2 + g.rng.IntN(envelopes+1) {
			g.admit(T)
		}
		g.e.Tick(T, g.acc, &g.res)
		g.nowUs = T + 1 + g.rng.Int64N(genIntervalUs/2)
		if len(g.res.Books) == 0 && len(g.res.Events) == 0 {
			continue
		}
		g.idx.Tick(&g.res)
		return g.build()
	}
}

// ticks returns n consecutive ticks.
func (g *tickGen) ticks(n, envelopes int) []*tickrec.Tick {
	out := make([]*tickrec.Tick, n)
	for i := range out {
		out[i] = g.next(envelopes)
	}
	return out
}

func (g *tickGen) admit(T int64) {
	owner := g.owners[g.rng.IntN(len(g.owners))]
	a := clob.Admission{Signer: owner, Owner: owner, Nonce: g.nonce, NowUs: g.nowUs, Tag: g.nonce}
	g.nonce++
	if g.rng.IntN(8) == 0 { // delegated: the signer differs from the owner
		a.Signer[0] = 0x22
	}
	var in []clob.Intent
	for range 1 + g.rng.IntN(3) {
		in = append(in, g.intent(owner, uint64(T)))
	}
	if g.e.Admit(&a, &clob.Envelope{Intents: in}, g.acc) != clob.OK {
		return
	}
	for i := range in {
		if in[i].Kind != clob.IntentSubmit {
			continue
		}
		id := clob.OrderID(a.Signer, a.Nonce, uint32(i))
		var tx clob.Hash
		binary.BigEndian.PutUint64(tx[:], a.Nonce)
		tx[31] = 0x77
		m := marketdata.OrderMeta{ID: id, Book: in[i].Book, Owner: owner, Signer: a.Signer, TxHash: tx, Nonce: a.Nonce,
			Side: in[i].Side, Type: in[i].Type, Flags: in[i].Flags, Price: in[i].Price, Size: in[i].Size,
			DeadlineUs: int64(in[i].Deadline), TTLUs: int64(in[i].TTL), AdmittedUs: g.nowUs}
		g.idx.Admitted(&m)
		g.orders = append(g.orders, genOrder{id: id, book: in[i].Book, owner: owner})
	}
}

func (g *tickGen) intent(owner clob.Address, deadline uint64) clob.Intent {
	book := g.books[g.rng.IntN(len(g.books))]
	o := g.recent(owner)
	switch r := g.rng.IntN(20); {
	case r < 2: // transfer
		to := g.owners[g.rng.IntN(len(g.owners))]
		return clob.Intent{Kind: clob.IntentTransfer, Token: genQuote, To: to, Amount: w(uint64(1 + g.rng.IntN(50))), Deadline: deadline}
	case r < 6 && o != nil: // cancel or update one of the owner's recent orders, live or not
		if r < 4 {
			return clob.Intent{Kind: clob.IntentCancel, Book: o.book, OrderID: o.id, Deadline: deadline}
		}
		return clob.Intent{Kind: clob.IntentUpdate, Book: o.book, OrderID: o.id, Size: g.size(), Price: g.price(), Deadline: deadline}
	}
	in := clob.Intent{Kind: clob.IntentSubmit, Book: book, Side: clob.Side(g.rng.IntN(2)), Size: g.size(), Price: g.price(),
		Deadline: deadline}
	switch r := g.rng.IntN(10); {
	case r == 0:
		in.Type, in.Flags = clob.Market, clob.FlagIOC
	case r == 1:
		in.Flags = clob.FlagIOC
	case r == 2:
		in.Flags = clob.FlagPostOnly
	case r == 3:
		in.TTL = uint64(genIntervalUs * (1 + g.rng.IntN(4)))
	}
	return in
}

// recent returns one of the owner's latest orders, or nil.
func (g *tickGen) recent(owner clob.Address) *genOrder {
	for i := len(g.orders) - 1; i >= max(0, len(g.orders)-64); i-- {
		if g.orders[i].owner == owner && g.rng.IntN(3) > 0 {
			return &g.orders[i]
		}
	}
	return nil
}

// price is 2000 ± 0.1, in 1e15 steps: up to 200 levels a book.
func (g *tickGen) price() uint256.Int {
	var p uint256.Int
	p.Mul(uint256.NewInt(uint64(1_999_900+g.rng.IntN(200))), genE15)
	return p
}

// size is 1 to 5000 lots of 1e15.
func (g *tickGen) size() uint256.Int {
	var s uint256.Int
	s.Mul(uint256.NewInt(uint64(1+g.rng.IntN(5000))), genE15)
	return s
}

// build is the node's buildTick (net/node/publish.go) on the generator's
// engine and index.
func (g *tickGen) build() *tickrec.Tick {
	res := &g.res
	hash := sha256.Sum256(binary.BigEndian.AppendUint64([]byte(fmt.Sprint(g.seed)), uint64(res.TickUs)))
	t := &tickrec.Tick{TickUs: res.TickUs, Hash: hash, ParentHash: g.parent}
	g.parent = t.Hash
	t.CopyResult(res)
	owners := map[clob.Address]bool{}
	ran := map[clob.Hash]bool{}
	t.Books = make([]tickrec.BookUpdate, len(res.Books))
	for i := range res.Books {
		bt := &res.Books[i]
		bu := &t.Books[i]
		ran[bt.Book] = true
		buys := g.e.AppendLevels(nil, bt.Book, clob.Buy, 100)
		sells := g.e.AppendLevels(nil, bt.Book, clob.Sell, 100)
		bu.Snapshot, _ = g.idx.Orderbook(bt.Book, buys, sells, 0)
		if m, ok := g.e.Market(bt.Book); ok {
			bu.Kind = m.Kind
		}
		for j := bt.FirstEvent; j < bt.EndEvent; j++ {
			ev := &res.Events[j]
			owners[ev.Owner] = true
			o, ok := g.idx.Order(ev.OrderID)
			switch {
			case !ok:
			case ev.Kind == clob.EventPlaced || o.EnteredUs == 0 || o.EnteredUs == res.TickUs:
				if !containsMetaID(bu.Created, ev.OrderID) {
					bu.Created = append(bu.Created, o.Meta)
				}
			case !containsMetaID(bu.Touched, ev.OrderID):
				bu.Touched = append(bu.Touched, o.Meta)
			}
			if ev.Kind == clob.EventUpdate {
				if info, ok := g.e.Order(ev.OrderID); ok {
					bu.Modified = append(bu.Modified, tickrec.Modification{OrderID: ev.OrderID, Price: info.Price, Size: info.Remaining})
				}
			}
		}
	}
	for i := range res.Events {
		if ev := &res.Events[i]; ev.Kind == clob.EventTransfer {
			owners[ev.Owner], owners[ev.To] = true, true
		}
	}
	for _, m := range g.idx.Markets(nil) {
		if ran[m.Config.ID] {
			t.Markets = append(t.Markets, m)
		}
	}
	sorted := make([]clob.Address, 0, len(owners))
	for a := range owners {
		sorted = append(sorted, a)
	}
	slices.SortFunc(sorted, func(a, b clob.Address) int { return bytes.Compare(a[:], b[:]) })
	for _, a := range sorted {
		t.Positions = append(t.Positions, tickrec.AccountPositions{Account: a, Data: g.positions(a)})
	}
	if g.rng.IntN(3) == 0 { // an account's triggers change
		a := g.owners[g.rng.IntN(len(g.owners))]
		ts := make([]marketdata.Trigger, g.rng.IntN(3))
		for i := range ts {
			g.nonce++
			ts[i] = marketdata.Trigger{Info: clob.TriggerInfo{ID: clob.OrderID(a, g.nonce, 0), Book: g.books[g.rng.IntN(len(g.books))],
				Owner: a, Signer: a, Nonce: g.nonce, Side: clob.Side(g.rng.IntN(2)), Size: w(1 + uint64(g.rng.IntN(5))),
				TriggerPrice: w(1000 + uint64(g.rng.IntN(2000))), TriggerType: uint8(g.rng.IntN(2)), DeadlineUs: t.TickUs}}
		}
		if g.trig == nil {
			g.trig = map[clob.Address][]marketdata.Trigger{}
		}
		g.trig[a] = ts
		t.Triggers = append(t.Triggers, tickrec.AccountTriggers{Account: a, Triggers: ts})
	}
	if g.rng.IntN(4) == 0 {
		a := g.owners[g.rng.IntN(len(g.owners))]
		t.Withdrawals = append(t.Withdrawals, tickrec.Withdrawal{Account: a,
			JSON: fmt.Appendf(nil, `{"account":"%s","amount":"0x%x","batch":%d}`, hexAddr(a), 1+g.rng.IntN(1e6), t.TickUs)})
	}
	return t
}

func containsMetaID(ms []marketdata.OrderMeta, id clob.Hash) bool {
	for i := range ms {
		if ms[i].ID == id {
			return true
		}
	}
	return false
}

// markets, positions and triggers are Config.Markets, Config.Positions and
// Config.Triggers: the generator's current state.
func (g *tickGen) markets() []marketdata.Market { return g.idx.Markets(nil) }

func (g *tickGen) positions(a clob.Address) marketdata.PositionsData {
	return marketdata.PositionsData{Spot: g.idx.Positions(nil, a, g.acc.balances)}
}

// triggers is Config.Triggers: the generator's current triggers.
func (g *tickGen) triggers(a clob.Address) []marketdata.Trigger { return g.trig[a] }

// genAccounts is a map-backed ledger for the generator's engine.
type genAccounts struct{ bal map[[40]byte]*genBalance }

type genBalance struct{ cash, locked uint256.Int }

func (a *genAccounts) get(token, owner clob.Address) *genBalance {
	var k [40]byte
	copy(k[:20], token[:])
	copy(k[20:], owner[:])
	b := a.bal[k]
	if b == nil {
		b = &genBalance{}
		a.bal[k] = b
	}
	return b
}

func (a *genAccounts) credit(token, owner clob.Address, v *uint256.Int) {
	b := a.get(token, owner)
	b.cash.Add(&b.cash, v)
}

func (a *genAccounts) balances(token, owner clob.Address) (cash, locked uint256.Int) {
	b := a.get(token, owner)
	return b.cash, b.locked
}

func (a *genAccounts) Available(token, owner clob.Address) uint256.Int {
	b := a.get(token, owner)
	var v uint256.Int
	v.Sub(&b.cash, &b.locked)
	return v
}

func (a *genAccounts) Lock(token, owner clob.Address, v *uint256.Int) {
	b := a.get(token, owner)
	b.locked.Add(&b.locked, v)
}

func (a *genAccounts) Unlock(token, owner clob.Address, v *uint256.Int) {
	b := a.get(token, owner)
	b.locked.Sub(&b.locked, v)
}

func (a *genAccounts) SpendLocked(token, owner clob.Address, v *uint256.Int) {
	b := a.get(token, owner)
	b.locked.Sub(&b.locked, v)
	b.cash.Sub(&b.cash, v)
}

func (a *genAccounts) Credit(token, owner clob.Address, v *uint256.Int) { a.credit(token, owner, v) }

func (a *genAccounts) CollectFee(clob.Address, *uint256.Int) {}

// Debit and Holding serve perp markets, which this generator has none of.
func (a *genAccounts) Debit(token, owner clob.Address, v *uint256.Int) {
	panic("genAccounts: Debit on a spot-only engine")
}

func (a *genAccounts) Holding(token, owner clob.Address) (cash, locked, debt uint256.Int) {
	cash, locked = a.balances(token, owner)
	return cash, locked, debt
}
