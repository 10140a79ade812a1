package clob_test

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/internal/refbook"
)

// The differential test: the fast engine (this package) and the naive
// reference (internal/refbook) are fed the same seeded stream of envelopes
// and ticks, each with its own ledger, and must agree on every Admit reason,
// every TickResult, every balance, every book level and every last price.
// The reference side is also checked against the money invariants of
// docs/auction.md. A second fast engine fed the same stream must produce the
// same snapshot bytes (determinism).
//
// Reproduce one stream: go test ./core/clob -run TestDifferential -diff.seed=N -diff.v

var (
	diffSeeds   = flag.Int("diff.seeds", 200, "number of seeded streams")
	diffTicks   = flag.Int("diff.ticks", 300, "ticks per stream")
	diffSeed    = flag.Int64("diff.seed", -1, "run only this seed")
	diffVerbose = flag.Bool("diff.v", false, "log every envelope and event of the stream")
	diffSkip    = flag.Bool("diff.skip", true, "sometimes tick at a later grid point than NextTickDue (drops intents past their deadline)")
	diffRefOnly = flag.Bool("diff.refonly", false, "run the reference against itself (harness check)")
)

// engine is the method set both engines share.
type engine interface {
	CreateMarket(cfg *clob.MarketConfig) error
	Admit(a *clob.Admission, env *clob.Envelope, acc clob.Accounts) clob.Reason
	NextTickDue(nowUs int64) (int64, bool)
	Tick(tickUs int64, acc clob.Accounts, out *clob.TickResult)
	AppendLevels(dst []clob.Level, book clob.Hash, side clob.Side, depth int) []clob.Level
	Order(id clob.Hash) (clob.OrderInfo, bool)
	LastPrice(book clob.Hash) (uint256.Int, bool)
	AppendMarkets(dst []clob.Hash) []clob.Hash
}

// accounts is a map-backed ledger with the contract's debt (Debit spends
// free cash and the rest becomes debt; Credit and Unlock pay debt first).
// It records the first illegal move (a lock beyond available, an unlock or
// spend beyond locked) instead of letting a balance go negative.
type accounts struct {
	cash, locked, debt map[[2]clob.Address]*uint256.Int
	fees               map[clob.Address]*uint256.Int
	err                error
}

func newAccounts() *accounts {
	return &accounts{
		cash:   map[[2]clob.Address]*uint256.Int{},
		locked: map[[2]clob.Address]*uint256.Int{},
		debt:   map[[2]clob.Address]*uint256.Int{},
		fees:   map[clob.Address]*uint256.Int{},
	}
}

// payDebt pays the owner's debt out of its free cash.
func (a *accounts) payDebt(token, owner clob.Address) {
	d := a.slot(a.debt, token, owner)
	if d.IsZero() {
		return
	}
	x := a.Available(token, owner)
	if d.Lt(&x) {
		x = *d
	}
	c := a.slot(a.cash, token, owner)
	c.Sub(c, &x)
	d.Sub(d, &x)
}

func (a *accounts) slot(m map[[2]clob.Address]*uint256.Int, token, owner clob.Address) *uint256.Int {
	k := [2]clob.Address{token, owner}
	if m[k] == nil {
		m[k] = new(uint256.Int)
	}
	return m[k]
}

func (a *accounts) fail(format string, args ...any) {
	if a.err == nil {
		a.err = fmt.Errorf(format, args...)
	}
}

func (a *accounts) Available(token, owner clob.Address) uint256.Int {
	c, l := a.slot(a.cash, token, owner), a.slot(a.locked, token, owner)
	var z uint256.Int
	if l.Gt(c) {
		a.fail("locked %s > cash %s for %x/%x", l.Dec(), c.Dec(), token[:2], owner[:2])
		return z
	}
	z.Sub(c, l)
	return z
}

func (a *accounts) Lock(token, owner clob.Address, amount *uint256.Int) {
	av := a.Available(token, owner)
	if amount.Gt(&av) {
		a.fail("Lock %s > available %s for %x/%x", amount.Dec(), av.Dec(), token[:2], owner[:2])
	}
	l := a.slot(a.locked, token, owner)
	l.Add(l, amount)
}

func (a *accounts) Unlock(token, owner clob.Address, amount *uint256.Int) {
	l := a.slot(a.locked, token, owner)
	if amount.Gt(l) {
		a.fail("Unlock %s > locked %s for %x/%x", amount.Dec(), l.Dec(), token[:2], owner[:2])
		l.Clear()
		return
	}
	l.Sub(l, amount)
	a.payDebt(token, owner)
}

func (a *accounts) SpendLocked(token, owner clob.Address, amount *uint256.Int) {
	a.Unlock(token, owner, amount)
	c := a.slot(a.cash, token, owner)
	if amount.Gt(c) {
		a.fail("SpendLocked %s > cash %s", amount.Dec(), c.Dec())
		c.Clear()
		return
	}
	c.Sub(c, amount)
}

func (a *accounts) Credit(token, owner clob.Address, amount *uint256.Int) {
	c := a.slot(a.cash, token, owner)
	c.Add(c, amount)
	a.payDebt(token, owner)
}

// Debit is a perp market's (spot markets never call it): free cash first,
// the rest becomes debt.
func (a *accounts) Debit(token, owner clob.Address, amount *uint256.Int) {
	x := a.Available(token, owner)
	if amount.Lt(&x) {
		x = *amount
	}
	c, d := a.slot(a.cash, token, owner), a.slot(a.debt, token, owner)
	c.Sub(c, &x)
	x.Sub(amount, &x)
	d.Add(d, &x)
}

func (a *accounts) Holding(token, owner clob.Address) (cash, locked, debt uint256.Int) {
	return a.get(a.cash, token, owner), a.get(a.locked, token, owner), a.get(a.debt, token, owner)
}

func (a *accounts) CollectFee(token clob.Address, amount *uint256.Int) {
	if a.fees[token] == nil {
		a.fees[token] = new(uint256.Int)
	}
	a.fees[token].Add(a.fees[token], amount)
}

func (a *accounts) get(m map[[2]clob.Address]*uint256.Int, token, owner clob.Address) uint256.Int {
	if v := m[[2]clob.Address{token, owner}]; v != nil {
		return *v
	}
	return uint256.Int{}
}

func (a *accounts) fee(token clob.Address) uint256.Int {
	if v := a.fees[token]; v != nil {
		return *v
	}
	return uint256.Int{}
}

// world is the fixed cast of one stream: owners, signers, tokens, books.
type world struct {
	owners  []clob.Address
	signers []clob.Address // signers[i] acts for owners[i % len(owners)]
	tokens  []clob.Address
	books   []clob.MarketConfig
	mid     []int64 // a price around which each book's orders cluster, in steps
}

func e18(n uint64) uint256.Int {
	var z uint256.Int
	z.Mul(uint256.NewInt(n), uint256.NewInt(1_000_000_000_000_000_000))
	return z
}

func pow10(n int) uint256.Int {
	var z uint256.Int
	z.Exp(uint256.NewInt(10), uint256.NewInt(uint64(n)))
	return z
}

func newWorld(r *rand.Rand) *world {
	w := &world{}
	for i := 0; i < 4; i++ {
		w.owners = append(w.owners, clob.Address{0xa0 + byte(i), 19: byte(i)})
	}
	for i := 0; i < 6; i++ {
		w.signers = append(w.signers, clob.Address{0x50 + byte(i), 18: 0x5, 19: byte(i)})
	}
	for i := 0; i < 4; i++ {
		w.tokens = append(w.tokens, clob.Address{0x70 + byte(i), 19: 0x70 + byte(i)})
	}
	quote := w.tokens[0]
	intervals := []int64{500_000, 1_000_000, 2_000_000}
	nbooks := 2 + r.IntN(2)
	for i := 0; i < nbooks; i++ {
		// lot × tick / 2e18 must be whole: lot 10^a, tick 10^b with a+b ≥ 19.
		a := 15 + r.IntN(4)
		b := 19 - a + r.IntN(2)
		cfg := clob.MarketConfig{
			ID:            clob.Hash{byte(0x10 * (nbooks - i)), 31: byte(i)},
			Name:          fmt.Sprintf("B%d/Q", i),
			Kind:          clob.Spot,
			Base:          w.tokens[1+i],
			Quote:         quote,
			IntervalUs:    intervals[r.IntN(len(intervals))],
			LotSize:       pow10(a),
			TickPrecision: pow10(b),
		}
		fees := []uint64{0, 100_000_000_000_000, 1_000_000_000_000_000, 2_500_000_000_000_000, 3_333_333_333_333_333}
		cfg.MakerFee.SetUint64(fees[r.IntN(len(fees))])
		cfg.TakerFee.SetUint64(fees[r.IntN(len(fees))])
		w.books = append(w.books, cfg)
		w.mid = append(w.mid, int64(50+r.IntN(2000)))
	}
	return w
}

// chooser draws a stream's choices: a seeded *rand.Rand, or fuzz bytes.
type chooser interface{ IntN(n int) int }

// draws is what the spot and perp streams share: their choices, the
// clock, the signers' nonces and the envelope tags.
type draws struct {
	c     chooser
	nonce map[clob.Address]uint64
	owner clob.Address // of the envelope being drawn
	tag   uint64
	nowUs int64
}

func (s *draws) pick(n int) int { return s.c.IntN(n) }

func (s *draws) chance(pct int) bool { return s.c.IntN(100) < pct }

// signer picks who signs the next envelope: signers[i] acts for
// owners[i % len(owners)], except that the first len(owners) owners sign
// for themselves.
func (s *draws) signer(signers, owners []clob.Address) (signer, owner clob.Address) {
	who := s.pick(len(signers))
	signer, owner = signers[who], owners[who%len(owners)]
	if who < len(owners) {
		signer = owner
	}
	s.owner = owner
	return signer, owner
}

// admission is the next envelope's admission: a fresh nonce and tag.
func (s *draws) admission(signer, owner clob.Address) clob.Admission {
	s.nonce[signer]++
	s.tag++
	return clob.Admission{Signer: signer, Owner: owner, Nonce: s.nonce[signer], NowUs: s.nowUs, Tag: s.tag}
}

// due is the next tick both engines agree is due at the stream's clock.
// Now and then (skip) the node "misses" ticks: it runs the latest grid
// point every interval divides instead, so intents whose deadline passed
// are dropped (the only way to reach that rule).
func (s *draws) due(fatalf, logf func(string, ...any), name string, fe, re engine, skip bool) (int64, bool) {
	tf, okf := fe.NextTickDue(s.nowUs)
	tr, okr := re.NextTickDue(s.nowUs)
	if okf != okr || (okf && tf != tr) {
		fatalf("NextTickDue(%d): %s %d %v, ref %d %v", s.nowUs, name, tf, okf, tr, okr)
	}
	if !okr {
		return 0, false
	}
	if late := s.nowUs / 2_000_000 * 2_000_000; skip && late > tr && s.chance(3) {
		logf("skipping ahead from %d to %d", tr, late)
		tr = late
	}
	return tr, true
}

// stream generates the envelopes of one seed.
type stream struct {
	draws
	w      *world
	ids    []known // every order id ever admitted (live or not)
	live   func(clob.Hash) bool
	limits clob.Limits
}

func landingUs(now, iv int64) int64 { return (now/iv + 1) * iv }

// amount is lots × step, with occasional invalid values.
func (s *draws) amount(step *uint256.Int, lotsMax int) uint256.Int {
	var z uint256.Int
	switch {
	case s.chance(2):
		return z // zero
	case s.chance(2):
		z.AddUint64(step, 1) // not a multiple (every step is ≥ 10)
		return z
	case s.chance(1):
		z.Lsh(uint256.NewInt(1), 54) // more than 2^53 units
		z.Mul(&z, step)
		return z
	}
	z.Mul(uint256.NewInt(uint64(1+s.pick(lotsMax))), step)
	return z
}

func (s *stream) price(book int) uint256.Int {
	cfg := &s.w.books[book]
	var z uint256.Int
	switch {
	case s.chance(2):
		return z
	case s.chance(2):
		z.AddUint64(&cfg.TickPrecision, 3)
		return z
	}
	p := s.w.mid[book] + int64(s.pick(41)) - 20
	if p < 1 {
		p = 1
	}
	z.Mul(uint256.NewInt(uint64(p)), &cfg.TickPrecision)
	return z
}

func (s *stream) flags() (clob.OrderType, uint8) {
	if s.chance(15) {
		switch {
		case s.chance(5):
			return clob.Market, 0
		case s.chance(3):
			return clob.Market, clob.FlagIOC | clob.FlagPostOnly
		}
		return clob.Market, clob.FlagIOC
	}
	switch x := s.pick(100); {
	case x < 55:
		return clob.Limit, 0
	case x < 72:
		return clob.Limit, clob.FlagPostOnly
	case x < 90:
		return clob.Limit, clob.FlagIOC
	case x < 94:
		return clob.Limit, clob.FlagIOC | clob.FlagPostOnly
	case x < 97:
		return clob.Limit, clob.FlagReduceOnly
	}
	return clob.Limit, 0x10
}

func (s *stream) bookID(book int) clob.Hash {
	if s.chance(2) {
		return clob.Hash{0xee, 31: 0xee} // unknown book
	}
	return s.w.books[book].ID
}

// known is an order id the stream has submitted (admitted or not).
type known struct {
	id    clob.Hash
	book  clob.Hash
	owner clob.Address
}

// target picks an id to cancel or update among ids: mostly a recent live
// one of this book and owner, sometimes anyone's, sometimes unknown.
func (s *draws) target(ids []known, book clob.Hash, live func(clob.Hash) bool) clob.Hash {
	if len(ids) == 0 || s.chance(5) {
		return clob.Hash{0xde, 0xad, 31: byte(s.pick(256))}
	}
	n := len(ids)
	if s.chance(80) {
		var mine []clob.Hash
		for i := n - 1; i >= 0 && i >= n-400 && len(mine) < 8; i-- {
			if ids[i].book == book && ids[i].owner == s.owner && live(ids[i].id) {
				mine = append(mine, ids[i].id)
			}
		}
		if len(mine) > 0 {
			return mine[s.pick(len(mine))]
		}
	}
	if s.chance(70) && n > 20 {
		return ids[n-1-s.pick(20)].id
	}
	return ids[s.pick(n)].id
}

func (s *stream) intent(book int) clob.Intent {
	cfg := &s.w.books[book]
	var in clob.Intent
	switch x := s.pick(100); {
	case x < 58:
		in.Kind = clob.IntentSubmit
		in.Book = s.bookID(book)
		in.Side = clob.Side(s.pick(2))
		in.Type, in.Flags = s.flags()
		in.Size = s.amount(&cfg.LotSize, 20)
		in.Price = s.price(book)
		if in.Type == clob.Market && in.Side == clob.Buy && s.chance(50) {
			in.Price.Mul(uint256.NewInt(uint64(s.w.mid[book]*2)), &cfg.TickPrecision)
		}
		if s.chance(20) {
			in.TTL = uint64(s.pick(4)) * uint64(cfg.IntervalUs)
			if s.chance(50) {
				in.TTL += uint64(1 + s.pick(int(cfg.IntervalUs)))
			}
		}
	case x < 73:
		in.Kind = clob.IntentCancel
		in.Book = s.bookID(book)
		in.OrderID = s.target(s.ids, in.Book, s.live)
	case x < 90:
		in.Kind = clob.IntentUpdate
		in.Book = s.bookID(book)
		in.OrderID = s.target(s.ids, in.Book, s.live)
		in.Size = s.amount(&cfg.LotSize, 25)
		in.Price = s.price(book)
		switch y := s.pick(10); {
		case y < 5:
		case y < 7:
			in.Token = cfg.Quote
		case y < 9:
			in.Token = cfg.Base
		default:
			in.Token = s.w.tokens[3]
		}
	default:
		in = s.transfer(s.w.tokens[s.pick(len(s.w.tokens))], s.w.owners, 1000)
	}
	return in
}

// transfer draws a transfer of token to one of owners: 0.001 to
// milliMax/1000 tokens, sometimes zero, sometimes far more than anyone has.
func (s *draws) transfer(token clob.Address, owners []clob.Address, milliMax int) clob.Intent {
	in := clob.Intent{Kind: clob.IntentTransfer, Token: token, To: owners[s.pick(len(owners))]}
	switch {
	case s.chance(5):
	case s.chance(5):
		in.Amount = e18(1_000_000_000)
	default:
		in.Amount.Mul(uint256.NewInt(uint64(1+s.pick(milliMax))), uint256.NewInt(1_000_000_000_000_000))
	}
	return in
}

// deadline draws an envelope's deadline on the grid iv: mostly one of the
// next three ticks, sometimes off the grid, past, or too far ahead.
func (s *draws) deadline(iv int64) uint64 {
	d := landingUs(s.nowUs, iv) + int64(s.pick(3))*iv
	switch {
	case s.chance(4):
		d++
	case s.chance(3):
		d = landingUs(s.nowUs, iv) - iv
	case s.chance(2):
		d = (s.nowUs+clob.DeadlineAheadMaxUs)/iv*iv + iv
	}
	return uint64(d)
}

// envelope draws one envelope, its admission, and a shared deadline.
func (s *stream) envelope() (clob.Admission, clob.Envelope) {
	n := 1
	if s.chance(30) {
		n = 2 + s.pick(4)
	}
	signer, owner := s.signer(s.w.signers, s.w.owners)
	home := s.pick(len(s.w.books))
	var env clob.Envelope
	for i := 0; i < n; i++ {
		book := home
		if s.chance(15) {
			book = s.pick(len(s.w.books))
		}
		env.Intents = append(env.Intents, s.intent(book))
	}
	iv := s.w.books[home].IntervalUs
	if env.Intents[0].Kind == clob.IntentTransfer {
		iv = clob.TransferIntervalUs
	}
	d := s.deadline(iv)
	for i := range env.Intents {
		env.Intents[i].Deadline = d
	}
	a := s.admission(signer, owner)
	for i, in := range env.Intents {
		if in.Kind == clob.IntentSubmit {
			s.ids = append(s.ids, known{id: refbook.OrderID(signer, a.Nonce, uint32(i)), book: in.Book, owner: owner})
		}
	}
	return a, env
}

// side is one engine with its ledger.
type side struct {
	name string
	e    engine
	acc  *accounts
	out  clob.TickResult
}

type run struct {
	t      *testing.T
	seed   int64
	s      *stream
	fast   side
	ref    side
	ref2   *refbook.Engine // ref.e, typed
	twin   *side           // a second fast engine: determinism
	totals map[clob.Address]*uint256.Int
	ticks  int
	log    []string
	// selfMatched counts the matched chunks whose buyer and seller are one
	// owner (selfMatches), so the test can see the streams reach them.
	selfMatched int
}

func (rn *run) fatalf(format string, args ...any) {
	rn.t.Helper()
	tail := rn.log
	if len(tail) > 40 {
		tail = tail[len(tail)-40:]
	}
	rn.t.Fatalf("seed %d, tick #%d, now %d: %s\nlast stream lines (rerun with -diff.seed=%d -diff.v for all):\n%s",
		rn.seed, rn.ticks, rn.s.nowUs, fmt.Sprintf(format, args...), rn.seed, strings.Join(tail, "\n"))
}

func (rn *run) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	rn.log = append(rn.log, line)
	if len(rn.log) > 400 {
		rn.log = rn.log[200:]
	}
	if *diffVerbose {
		rn.t.Log(line)
	}
}

func newRun(t *testing.T, seed int64) *run {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	w := newWorld(r)
	limits := clob.Limits{OrdersMax: 1 << 12, PendingMax: 1 << 10}
	if r.IntN(4) == 0 {
		limits = clob.Limits{OrdersMax: 6 + r.IntN(24), PendingMax: 8 << r.IntN(2)}
	}
	rn := &run{t: t, seed: seed}
	rn.s = &stream{draws: draws{c: r, nonce: map[clob.Address]uint64{}, nowUs: int64(r.IntN(3_000_000))}, w: w, limits: limits}
	ref := refbook.NewEngine(limits)
	rn.ref2 = ref
	rn.s.live = func(id clob.Hash) bool { _, ok := ref.Order(id); return ok }
	rn.ref = side{name: "ref", e: ref, acc: newAccounts()}
	if *diffRefOnly {
		rn.fast = side{name: "ref2", e: refbook.NewEngine(limits), acc: newAccounts()}
	} else {
		rn.fast = side{name: "fast", e: clob.NewEngine(limits), acc: newAccounts()}
		rn.twin = &side{name: "twin", e: clob.NewEngine(limits), acc: newAccounts()}
	}
	for _, sd := range rn.sides() {
		for i := range w.books {
			cfg := w.books[i]
			if err := sd.e.CreateMarket(&cfg); err != nil {
				t.Fatalf("seed %d: %s CreateMarket: %v", seed, sd.name, err)
			}
		}
	}
	var accs []*accounts
	for _, sd := range rn.sides() {
		accs = append(accs, sd.acc)
	}
	rn.totals = fund(r, w.tokens, w.owners, 100, 5000, 8, accs...)
	return rn
}

// fund credits every owner the same random amount of every token in each
// ledger: lo to lo+spread−1 whole tokens, nothing one time in zeroOneIn. It
// returns what it issued per token.
func fund(c chooser, tokens, owners []clob.Address, lo, spread, zeroOneIn int, accs ...*accounts) map[clob.Address]*uint256.Int {
	issued := map[clob.Address]*uint256.Int{}
	for _, tok := range tokens {
		issued[tok] = new(uint256.Int)
		for _, o := range owners {
			amt := e18(uint64(lo + c.IntN(spread)))
			if c.IntN(zeroOneIn) == 0 {
				amt.Clear()
			}
			issued[tok].Add(issued[tok], &amt)
			for _, a := range accs {
				a.Credit(tok, o, &amt)
			}
		}
	}
	return issued
}

func (rn *run) sides() []*side {
	s := []*side{&rn.fast, &rn.ref}
	if rn.twin != nil {
		s = append(s, rn.twin)
	}
	return s
}

func TestOrderIDSameInBothEngines(t *testing.T) {
	f := func(signer clob.Address, nonce uint64, seq uint32) {
		t.Helper()
		if a, b := clob.OrderID(signer, nonce, seq), refbook.OrderID(signer, nonce, seq); a != b {
			t.Fatalf("OrderID(%x, %d, %d): fast %x, ref %x", signer, nonce, seq, a, b)
		}
	}
	f(clob.Address{}, 0, 0)
	f(clob.Address{1, 2, 3, 19: 0xff}, 1<<64-1, 63)
	f(clob.Address{0xaa, 10: 0xbb}, 12345, 7)
}

func TestDifferential(t *testing.T) {
	seeds := make([]int64, 0, *diffSeeds)
	if *diffSeed >= 0 {
		seeds = append(seeds, *diffSeed)
	} else {
		for i := 0; i < *diffSeeds; i++ {
			seeds = append(seeds, int64(i+1))
		}
	}
	var selfMatched atomic.Int64
	t.Run("streams", func(t *testing.T) {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				rn := newRun(t, seed)
				rn.play(*diffTicks)
				selfMatched.Add(int64(rn.selfMatched))
			})
		}
	})
	// Both engines match an owner's buy with its own sell (there is no
	// self-trade prevention, docs/auction.md): the streams must reach it.
	if !t.Failed() && *diffSeed < 0 && selfMatched.Load() == 0 {
		t.Errorf("no self-match in %d streams", len(seeds))
	}
	t.Logf("%d self-matched chunks in %d streams", selfMatched.Load(), len(seeds))
}

// selfMatches counts the matched chunks of out whose buyer and seller are
// one owner: each chunk is the buyer's fill event then the seller's.
func selfMatches(out *clob.TickResult) int {
	n := 0
	for i := 1; i < len(out.Events); i++ {
		b, s := &out.Events[i-1], &out.Events[i]
		if b.Kind == clob.EventFill && s.Kind == clob.EventFill && b.Side == clob.Buy && s.Side == clob.Sell &&
			b.Book == s.Book && b.Owner == s.Owner {
			n++
			i++
		}
	}
	return n
}

func (rn *run) play(ticks int) {
	rn.t.Helper()
	ms := rn.fast.e.AppendMarkets(nil)
	mr := rn.ref.e.AppendMarkets(nil)
	if fmt.Sprint(ms) != fmt.Sprint(mr) {
		rn.fatalf("AppendMarkets: fast %x, ref %x", ms, mr)
	}
	for steps := 0; rn.ticks < ticks && steps < ticks*20; steps++ {
		s := rn.s
		switch {
		case s.chance(3):
			s.nowUs += int64(1+s.pick(8)) * 1_000_000 // clock jump: several ticks in a row
		default:
			s.nowUs += int64(s.pick(700_000))
		}
		rn.runDue()
		for k := s.pick(7); k > 0; k-- {
			rn.admit()
		}
	}
	if rn.ticks < ticks/2 {
		rn.fatalf("only %d ticks ran", rn.ticks)
	}
}

func (rn *run) admit() {
	a, env := rn.s.envelope()
	var reasons []clob.Reason
	for _, sd := range rn.sides() {
		reasons = append(reasons, sd.e.Admit(&a, &env, sd.acc))
	}
	rn.logf("admit now=%d tag=%d signer=%x owner=%x nonce=%d %s -> %q", a.NowUs, a.Tag, a.Signer[:1], a.Owner[:1], a.Nonce, fmtEnvelope(&env), reasons[1])
	if reasons[0] != reasons[1] {
		rn.fatalf("Admit tag %d: %s %q, ref %q", a.Tag, rn.fast.name, reasons[0], reasons[1])
	}
	if len(reasons) > 2 && reasons[2] != reasons[0] {
		rn.fatalf("Admit tag %d: fast %q, twin %q (nondeterministic)", a.Tag, reasons[0], reasons[2])
	}
	rn.compareState("after admit")
}

func (rn *run) runDue() {
	for i := 0; ; i++ {
		if i > 1000 {
			rn.fatalf("NextTickDue keeps returning work")
		}
		tr, ok := rn.s.due(rn.fatalf, rn.logf, rn.fast.name, rn.fast.e, rn.ref.e, *diffSkip)
		if !ok {
			return
		}
		for _, sd := range rn.sides() {
			sd.e.Tick(tr, sd.acc, &sd.out)
		}
		rn.ticks++
		rn.logf("tick %d: %d books, %d events, landed %v", tr, len(rn.ref.out.Books), len(rn.ref.out.Events), rn.ref.out.Landed)
		for i := range rn.ref.out.Events {
			rn.logf("  %s", fmtEvent(&rn.ref.out.Events[i]))
		}
		if d := diffTick(&rn.fast.out, &rn.ref.out); d != "" {
			rn.fatalf("Tick(%d): %s", tr, d)
		}
		rn.selfMatched += selfMatches(&rn.ref.out)
		rn.compareState(fmt.Sprintf("after tick %d", tr))
		rn.checkRefInvariants()
		if rn.twin != nil && rn.ticks%25 == 0 {
			a := rn.fast.e.(*clob.Engine).AppendSnapshot(nil)
			b := rn.twin.e.(*clob.Engine).AppendSnapshot(nil)
			if !bytes.Equal(a, b) {
				rn.fatalf("two fast engines fed the same stream have different snapshots (%d vs %d bytes)", len(a), len(b))
			}
		}
	}
}

// compareState compares balances, book levels, last prices and the known orders.
func (rn *run) compareState(when string) {
	rn.t.Helper()
	w := rn.s.w
	for _, sd := range rn.sides() {
		if sd.acc.err != nil {
			rn.fatalf("%s: %s ledger: %v", when, sd.name, sd.acc.err)
		}
	}
	compareCommon(rn.fatalf, when, rn.fast.name, rn.fast.e, rn.ref.e, rn.fast.acc, rn.ref.acc, w.tokens, w.owners, w.books, rn.s.ids)
}

// compareCommon compares what spot and perp runs share: every (token,
// owner) balance and the fees, every book's levels and last price, and the
// last 64 orders of ids.
func compareCommon(fatalf func(string, ...any), when, name string, fe, re engine, f, r *accounts,
	tokens, owners []clob.Address, books []clob.MarketConfig, ids []known) {
	for _, tok := range tokens {
		for _, o := range owners {
			fc, rc := f.get(f.cash, tok, o), r.get(r.cash, tok, o)
			fl, rl := f.get(f.locked, tok, o), r.get(r.locked, tok, o)
			if !fc.Eq(&rc) || !fl.Eq(&rl) {
				fatalf("%s: token %x owner %x: %s cash %s locked %s, ref cash %s locked %s",
					when, tok[:1], o[:1], name, fc.Dec(), fl.Dec(), rc.Dec(), rl.Dec())
			}
		}
		ff, rf := f.fee(tok), r.fee(tok)
		if !ff.Eq(&rf) {
			fatalf("%s: fees in %x: %s %s, ref %s", when, tok[:1], name, ff.Dec(), rf.Dec())
		}
	}
	for _, cfg := range books {
		for _, sd := range []clob.Side{clob.Buy, clob.Sell} {
			lf := fe.AppendLevels(nil, cfg.ID, sd, 0)
			lr := re.AppendLevels(nil, cfg.ID, sd, 0)
			if d := diffLevels(lf, lr); d != "" {
				fatalf("%s: AppendLevels(%x, side %d): %s", when, cfg.ID[:1], sd, d)
			}
			if lf2 := fe.AppendLevels(nil, cfg.ID, sd, 2); len(lf) >= 2 && len(lf2) != 2 {
				fatalf("%s: AppendLevels depth 2 returned %d levels", when, len(lf2))
			}
		}
		pf, okf := fe.LastPrice(cfg.ID)
		pr, okr := re.LastPrice(cfg.ID)
		if okf != okr || !pf.Eq(&pr) {
			fatalf("%s: LastPrice(%x): %s %s %v, ref %s %v", when, cfg.ID[:1], name, pf.Dec(), okf, pr.Dec(), okr)
		}
	}
	n := len(ids)
	for i := max(0, n-64); i < n; i++ {
		id := ids[i].id
		of, okf := fe.Order(id)
		or, okr := re.Order(id)
		if okf != okr {
			fatalf("%s: Order(%x) live: %s %v, ref %v", when, id[:4], name, okf, okr)
		}
		if okf && of != or {
			fatalf("%s: Order(%x):\n %s %+v\n ref %+v", when, id[:4], name, of, or)
		}
	}
}

// checkRefInvariants: conservation per token, locked = Σ reservations,
// per-order size bookkeeping.
func (rn *run) checkRefInvariants() {
	rn.t.Helper()
	a := rn.ref.acc
	for _, tok := range rn.s.w.tokens {
		sum := a.fee(tok)
		for _, o := range rn.s.w.owners {
			c := a.get(a.cash, tok, o)
			sum.Add(&sum, &c)
			l := a.get(a.locked, tok, o)
			if want := rn.ref2.Locked(tok, o); !l.Eq(&want) {
				rn.fatalf("ref: locked %s of %x in %x, reservations %s", l.Dec(), o[:1], tok[:1], want.Dec())
			}
		}
		if !sum.Eq(rn.totals[tok]) {
			rn.fatalf("ref: token %x not conserved: cash + fees %s, minted %s", tok[:1], sum.Dec(), rn.totals[tok].Dec())
		}
	}
	if err := rn.ref2.CheckInvariants(); err != nil {
		rn.fatalf("ref: %v", err)
	}
}

func diffLevels(f, r []clob.Level) string {
	if len(f) != len(r) {
		return fmt.Sprintf("fast %d levels %s, ref %d levels %s", len(f), fmtLevels(f), len(r), fmtLevels(r))
	}
	for i := range f {
		if !f[i].Price.Eq(&r[i].Price) || !f[i].Volume.Eq(&r[i].Volume) || f[i].Orders != r[i].Orders {
			return fmt.Sprintf("level %d: fast %s, ref %s", i, fmtLevels(f[i:i+1]), fmtLevels(r[i:i+1]))
		}
	}
	return ""
}

func fmtLevels(ls []clob.Level) string {
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "[%s × %s /%d]", l.Price.Dec(), l.Volume.Dec(), l.Orders)
	}
	return b.String()
}

// diffTick describes the first difference between two TickResults.
func diffTick(f, r *clob.TickResult) string {
	if f.TickUs != r.TickUs {
		return fmt.Sprintf("TickUs fast %d, ref %d", f.TickUs, r.TickUs)
	}
	for i := 0; i < min(len(f.Events), len(r.Events)); i++ {
		if d := diffEvent(&f.Events[i], &r.Events[i]); d != "" {
			return fmt.Sprintf("event %d: %s\n fast %s\n ref  %s", i, d, fmtEvent(&f.Events[i]), fmtEvent(&r.Events[i]))
		}
	}
	if len(f.Events) != len(r.Events) {
		var extra []string
		for i := min(len(f.Events), len(r.Events)); i < max(len(f.Events), len(r.Events)); i++ {
			if i < len(f.Events) {
				extra = append(extra, "fast "+fmtEvent(&f.Events[i]))
			} else {
				extra = append(extra, "ref  "+fmtEvent(&r.Events[i]))
			}
		}
		return fmt.Sprintf("fast %d events, ref %d; extra:\n %s", len(f.Events), len(r.Events), strings.Join(extra, "\n "))
	}
	if len(f.Books) != len(r.Books) {
		return fmt.Sprintf("fast %d books, ref %d", len(f.Books), len(r.Books))
	}
	for i := range f.Books {
		a, b := &f.Books[i], &r.Books[i]
		if a.Book != b.Book || !a.Price.Eq(&b.Price) || a.HasPrice != b.HasPrice || a.Traded != b.Traded ||
			!a.VolumeBase.Eq(&b.VolumeBase) || !a.VolumeQuote.Eq(&b.VolumeQuote) || a.NewOrders != b.NewOrders ||
			a.FirstEvent != b.FirstEvent || a.EndEvent != b.EndEvent {
			return fmt.Sprintf("book %d:\n fast %s\n ref  %s", i, fmtBookTick(a), fmtBookTick(b))
		}
	}
	if fmt.Sprint(f.Landed) != fmt.Sprint(r.Landed) {
		return fmt.Sprintf("Landed fast %v, ref %v", f.Landed, r.Landed)
	}
	return ""
}

func diffEvent(a, b *clob.Event) string {
	switch {
	case a.Kind != b.Kind:
		return "Kind"
	case a.Book != b.Book:
		return "Book"
	case a.OrderID != b.OrderID:
		return "OrderID"
	case a.Owner != b.Owner:
		return "Owner"
	case a.Side != b.Side:
		return "Side"
	case !a.Base.Eq(&b.Base), !a.Quote.Eq(&b.Quote), !a.Fee.Eq(&b.Fee):
		return "Base/Quote/Fee"
	case !a.TotalBase.Eq(&b.TotalBase), !a.TotalQuote.Eq(&b.TotalQuote), !a.TotalFee.Eq(&b.TotalFee):
		return "running totals"
	case a.Terminal != b.Terminal:
		return "Terminal"
	case a.Maker != b.Maker:
		return "Maker"
	case a.Token != b.Token, a.To != b.To, !a.Amount.Eq(&b.Amount):
		return "transfer fields"
	case a.Position != b.Position, a.Realized != b.Realized, !a.Price.Eq(&b.Price):
		return "perp fields (position, realized, price)"
	}
	return ""
}

var kindName = map[clob.EventKind]string{
	clob.EventPlaced: "placed", clob.EventFill: "fill", clob.EventCancel: "cancel", clob.EventExpire: "expire",
	clob.EventPostOnlyRefused: "post_only_refused", clob.EventUpdate: "update", clob.EventTransfer: "transfer",
	clob.EventLiquidation: "liquidation", clob.EventTriggerFired: "trigger_fired", clob.EventTriggerCancel: "trigger_cancel",
	clob.EventMarginCancel: "margin_cancel",
}

func fmtEvent(e *clob.Event) string {
	if e.Kind == clob.EventTransfer {
		return fmt.Sprintf("transfer id %x from %x to %x token %x amount %s", e.OrderID[:4], e.Owner[:1], e.To[:1], e.Token[:1], e.Amount.Dec())
	}
	line := fmt.Sprintf("%s book %x order %x owner %x side %d base %s quote %s fee %s totals %s/%s/%s terminal %v maker %v",
		kindName[e.Kind], e.Book[:1], e.OrderID[:4], e.Owner[:1], e.Side, e.Base.Dec(), e.Quote.Dec(), e.Fee.Dec(),
		e.TotalBase.Dec(), e.TotalQuote.Dec(), e.TotalFee.Dec(), e.Terminal, e.Maker)
	if e.Kind >= clob.EventLiquidation || e.Position != (clob.Signed{}) || e.Realized != (clob.Signed{}) {
		line += fmt.Sprintf(" position %s realized %s price %s amount %s", fmtSigned(e.Position), fmtSigned(e.Realized), e.Price.Dec(), e.Amount.Dec())
	}
	return line
}

func fmtBookTick(b *clob.BookTick) string {
	return fmt.Sprintf("book %x price %s has %v traded %v vol %s/%s new %d events [%d,%d)",
		b.Book[:1], b.Price.Dec(), b.HasPrice, b.Traded, b.VolumeBase.Dec(), b.VolumeQuote.Dec(), b.NewOrders, b.FirstEvent, b.EndEvent)
}

func fmtEnvelope(env *clob.Envelope) string {
	var b strings.Builder
	for i := range env.Intents {
		in := &env.Intents[i]
		switch in.Kind {
		case clob.IntentSubmit:
			fmt.Fprintf(&b, "[submit book %x side %d type %d flags %#x size %s price %s ttl %d dl %d]",
				in.Book[:1], in.Side, in.Type, in.Flags, in.Size.Dec(), in.Price.Dec(), in.TTL, in.Deadline)
		case clob.IntentCancel:
			fmt.Fprintf(&b, "[cancel book %x order %x dl %d]", in.Book[:1], in.OrderID[:4], in.Deadline)
		case clob.IntentUpdate:
			fmt.Fprintf(&b, "[update book %x order %x size %s price %s token %x dl %d]",
				in.Book[:1], in.OrderID[:4], in.Size.Dec(), in.Price.Dec(), in.Token[:1], in.Deadline)
		case clob.IntentTransfer:
			fmt.Fprintf(&b, "[transfer token %x to %x amount %s dl %d]", in.Token[:1], in.To[:1], in.Amount.Dec(), in.Deadline)
		case clob.IntentSubmitTrigger, clob.IntentUpdateTrigger:
			fmt.Fprintf(&b, "[trigger kind %d book %x id %x side %d size %s limit %s at %s type %d group %d flags %#x ttl %d dl %d]",
				in.Kind, in.Book[:1], in.OrderID[:4], in.Side, in.Size.Dec(), in.Price.Dec(), in.TriggerPrice.Dec(),
				in.TriggerType, in.Grouping, in.Flags, in.TTL, in.Deadline)
		case clob.IntentCancelTrigger:
			fmt.Fprintf(&b, "[cancel trigger book %x id %x dl %d]", in.Book[:1], in.OrderID[:4], in.Deadline)
		}
	}
	return b.String()
}

func fmtSigned(s clob.Signed) string {
	if s.Neg {
		return "-" + s.Abs.Dec()
	}
	return s.Abs.Dec()
}
