package clob_test

import (
	"flag"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/internal/refbook"
	"github.com/ledgervenue/node/core/clob/internal/refperp"
)

// The perp differential test: the fast engine and the naive reference
// (internal/refperp, written from docs/perps.md) are fed the same seeded
// stream — perp orders of every kind (REDUCE_ONLY included), cancels,
// updates, triggers, native and token transfers, spot orders, oracle jumps
// large enough to liquidate, ticks — each with its own ledger, and must
// agree after every step on every Admit and SetOraclePrice reason, every
// event (all fields), every position, margin summary, trigger, perp market
// state, balance and book. After every tick both sides must keep the
// invariants of docs/perps.md: Σ S = 0 per market; value conserved
// (issued − fees = Σ (Cash − Debt) − Σ C·q in the native token, Σ cash +
// fees = issued in the others); no account but the backstop with an open
// position and equity < Σ MM; no account with negative cash and no
// position.
//
// Short run always (a few seeds); PERP_DIFF_LONG=1 runs many seeds and
// longer streams. Reproduce one stream:
//
//	go test ./core/clob -run TestPerpDifferential -perpdiff.seed=N -perpdiff.v

var (
	perpDiffSeed    = flag.Int64("perpdiff.seed", -1, "run only this seed")
	perpDiffVerbose = flag.Bool("perpdiff.v", false, "log every step of the perp stream")
)

// perpEngine is the method set both engines share for perps.
type perpEngine interface {
	engine
	SetOraclePrice(book clob.Hash, price *uint256.Int) clob.Reason
	Margin(owner clob.Address, acc clob.Accounts) clob.MarginInfo
	AppendPositions(dst []clob.PositionInfo, owner clob.Address) []clob.PositionInfo
	LiquidationPrices(ps []clob.PositionInfo, acc clob.Accounts)
	PerpMarket(book clob.Hash) (clob.PerpInfo, bool)
	AppendPerpAccounts(dst []clob.Address) []clob.Address
	AppendTriggers(dst []clob.TriggerInfo, owner clob.Address) []clob.TriggerInfo
	PerpCost() clob.Signed
}

// nativeToken is 0xEeee…EEeE, the collateral of every perp market.
var nativeToken = clob.Address{0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee,
	0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee}

// fuzzChooser reads choices from bytes; once they run out it says 0.
type fuzzChooser struct {
	b []byte
	i int
}

func (c *fuzzChooser) IntN(n int) int {
	if c.i >= len(c.b) {
		return 0
	}
	v := int(c.b[c.i])
	c.i++
	if n > 256 && c.i < len(c.b) {
		v = v<<8 | int(c.b[c.i])
		c.i++
	}
	return v % n
}

// perpWorld: four traders (and signers acting for them), one spot book in
// two plain tokens, two perp books on the native token.
type perpWorld struct {
	owners  []clob.Address
	signers []clob.Address // signers[i] acts for owners[i % len(owners)]
	tokens  []clob.Address // native, spot base, spot quote
	books   []clob.MarketConfig
}

func (w *perpWorld) accountsAll() []clob.Address {
	return append(w.owners[:len(w.owners):len(w.owners)], clob.BackstopAddress)
}

func newPerpWorld(c chooser) *perpWorld {
	w := &perpWorld{}
	for i := 0; i < 4; i++ {
		w.owners = append(w.owners, clob.Address{0xa0 + byte(i), 19: byte(i)})
	}
	for i := 0; i < 6; i++ {
		w.signers = append(w.signers, clob.Address{0x50 + byte(i), 18: 0x5, 19: byte(i)})
	}
	w.tokens = []clob.Address{nativeToken, {0x71, 19: 0x71}, {0x72, 19: 0x72}}
	intervals := []int64{500_000, 1_000_000, 2_000_000}
	fees := []uint64{0, 100_000_000_000_000, 1_000_000_000_000_000, 2_500_000_000_000_000}
	spot := clob.MarketConfig{ID: clob.Hash{0x30, 31: 1}, Name: "S/Q", Kind: clob.Spot, Base: w.tokens[1], Quote: w.tokens[2],
		IntervalUs: intervals[c.IntN(3)], LotSize: pow10(18), TickPrecision: pow10(15)}
	spot.MakerFee.SetUint64(fees[c.IntN(len(fees))])
	spot.TakerFee.SetUint64(fees[c.IntN(len(fees))])
	w.books = append(w.books, spot)
	for i := 0; i < 2; i++ {
		cfg := clob.MarketConfig{ID: clob.Hash{0x20 - byte(0x10*i), 31: byte(2 + i)}, Name: fmt.Sprintf("P%d-PERP", i),
			Kind: clob.Perp, Base: clob.Address{0x5e, 19: byte(i)}, Quote: nativeToken,
			IntervalUs: intervals[c.IntN(3)], LotSize: pow10(17 + c.IntN(2)), TickPrecision: pow10(15)}
		cfg.MakerFee.SetUint64(fees[c.IntN(len(fees))])
		cfg.TakerFee.SetUint64(fees[c.IntN(len(fees))])
		p := &cfg.Perp
		p.MaxLeverage = []uint32{1, 2, 5, 10, 20, 50}[c.IntN(6)]
		p.InterestRate.SetUint64([]uint64{0, 1e14, 3e17}[c.IntN(3)])
		p.MaxFundingRate.SetUint64([]uint64{32e16, 1e18}[c.IntN(2)])
		p.MaxPremium.SetUint64([]uint64{0, 1e16, 5e16}[c.IntN(3)])
		p.MarkClamp.SetUint64([]uint64{0, 1e16, 1e17, 1e18}[c.IntN(4)])
		p.WalkBps = []uint32{0, 5, 50}[c.IntN(3)]
		p.WalkSeed = uint64(c.IntN(1 << 30))
		p.OraclePrice.Mul(uint256.NewInt(uint64(20_000+c.IntN(80_000))), &cfg.TickPrecision)
		w.books = append(w.books, cfg)
	}
	return w
}

// perpStream draws the steps of one stream.
type perpStream struct {
	draws
	w      *perpWorld
	ref    perpEngine // peeked at for live ids and marks, never changed
	orders []known
	trigs  []known
}

func (s *perpStream) liveOrder(id clob.Hash) bool { _, ok := s.ref.Order(id); return ok }

// liveTrigger: any trigger id counts (a stored trigger is not looked up by
// id through the public API; unknown ones exercise the refusal).
func (s *perpStream) liveTrigger(clob.Hash) bool { return true }

// markSteps is the reference's mark of a perp book (its first oracle
// price for the spot book's stand-in), in steps.
func (s *perpStream) markSteps(book int) int64 {
	cfg := &s.w.books[book]
	if cfg.Kind == clob.Spot {
		return 1000
	}
	info, _ := s.ref.PerpMarket(cfg.ID)
	var q uint256.Int
	q.Div(&info.Mark, &cfg.TickPrecision)
	return int64(q.Uint64())
}

// price is near the mark (±2 %), sometimes invalid.
func (s *perpStream) price(book int, spreadPct int) uint256.Int {
	cfg := &s.w.books[book]
	var z uint256.Int
	switch {
	case s.chance(1):
		return z
	case s.chance(1):
		z.AddUint64(&cfg.TickPrecision, 3)
		return z
	}
	m := s.markSteps(book)
	p := m + (m*int64(s.pick(2*spreadPct+1)-spreadPct))/100 + int64(s.pick(5))
	z.Mul(uint256.NewInt(uint64(max(1, p))), &cfg.TickPrecision)
	return z
}

func (s *perpStream) bookID(book int) clob.Hash {
	if s.chance(1) {
		return clob.Hash{0xee, 31: 0xee}
	}
	return s.w.books[book].ID
}

func (s *perpStream) orderFlags() (clob.OrderType, uint8) {
	if s.chance(12) {
		if s.chance(5) {
			return clob.Market, clob.FlagReduceOnly
		}
		if s.chance(30) {
			return clob.Market, clob.FlagIOC | clob.FlagReduceOnly
		}
		return clob.Market, clob.FlagIOC
	}
	switch x := s.pick(100); {
	case x < 50:
		return clob.Limit, 0
	case x < 62:
		return clob.Limit, clob.FlagPostOnly
	case x < 74:
		return clob.Limit, clob.FlagIOC
	case x < 94:
		return clob.Limit, clob.FlagReduceOnly
	case x < 97:
		return clob.Limit, clob.FlagReduceOnly | clob.FlagIOC
	}
	return clob.Limit, 0x10
}

func (s *perpStream) intent(book int) clob.Intent {
	cfg := &s.w.books[book]
	var in clob.Intent
	switch x := s.pick(100); {
	case x < 50:
		in.Kind = clob.IntentSubmit
		in.Book = s.bookID(book)
		in.Side = clob.Side(s.pick(2))
		in.Type, in.Flags = s.orderFlags()
		in.Size = s.amount(&cfg.LotSize, 40)
		in.Price = s.price(book, 2)
		if in.Type == clob.Market {
			in.Price = s.price(book, 10)
		}
		if s.chance(15) {
			in.TTL = uint64(1+s.pick(4)) * uint64(cfg.IntervalUs)
		}
	case x < 60:
		in.Kind = clob.IntentCancel
		in.Book = s.bookID(book)
		in.OrderID = s.target(s.orders, in.Book, s.liveOrder)
	case x < 70:
		in.Kind = clob.IntentUpdate
		in.Book = s.bookID(book)
		in.OrderID = s.target(s.orders, in.Book, s.liveOrder)
		in.Size = s.amount(&cfg.LotSize, 15)
		in.Price = s.price(book, 2)
	case x < 80:
		in.Kind = clob.IntentSubmitTrigger
		in.Book = s.bookID(book)
		in.Side = clob.Side(s.pick(2))
		in.Size = s.amount(&cfg.LotSize, 12)
		if s.chance(50) {
			in.Price = s.price(book, 5)
		}
		in.TriggerPrice = s.price(book, 3)
		in.TriggerType = uint8(s.pick(2))
		if s.chance(2) {
			in.TriggerType = 2
		}
		in.Grouping = uint8(s.pick(3))
		in.Flags = []uint8{0, clob.FlagReduceOnly, clob.FlagReduceOnly, clob.FlagIOC, clob.FlagReduceOnly | clob.FlagIOC, clob.FlagPostOnly}[s.pick(6)]
		if s.chance(20) {
			in.TTL = uint64(1+s.pick(6)) * uint64(cfg.IntervalUs) / 2
		}
	case x < 84:
		in.Kind = clob.IntentCancelTrigger
		in.Book = s.bookID(book)
		in.OrderID = s.target(s.trigs, in.Book, s.liveTrigger)
	case x < 88:
		in.Kind = clob.IntentUpdateTrigger
		in.Book = s.bookID(book)
		in.OrderID = s.target(s.trigs, in.Book, s.liveTrigger)
		in.Side = clob.Side(s.pick(2))
		in.Size = s.amount(&cfg.LotSize, 12)
		if s.chance(50) {
			in.Price = s.price(book, 5)
		}
		in.TriggerPrice = s.price(book, 3)
	default:
		token := nativeToken
		if s.chance(20) {
			token = s.w.tokens[1+s.pick(2)]
		}
		in = s.transfer(token, s.w.owners, 100_000)
	}
	return in
}

func (s *perpStream) envelope() (clob.Admission, clob.Envelope) {
	n := 1
	if s.chance(20) {
		n = 2 + s.pick(3)
	}
	signer, owner := s.signer(s.w.signers, s.w.owners)
	home := 1 + s.pick(2)
	if s.chance(10) {
		home = 0 // the spot book: REDUCE_ONLY and triggers are refused there
	}
	var env clob.Envelope
	for i := 0; i < n; i++ {
		env.Intents = append(env.Intents, s.intent(home))
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
		k := known{id: refbook.OrderID(signer, a.Nonce, uint32(i)), book: in.Book, owner: owner}
		switch in.Kind {
		case clob.IntentSubmit:
			s.orders = append(s.orders, k)
		case clob.IntentSubmitTrigger:
			s.trigs = append(s.trigs, k)
		}
	}
	return a, env
}

// perpSide is one engine with its ledger.
type perpSide struct {
	name string
	e    perpEngine
	acc  *accounts
	out  clob.TickResult
}

type perpRun struct {
	t      testing.TB
	seed   int64
	s      *perpStream
	fast   perpSide
	ref    perpSide
	refE   *refperp.Engine
	issued map[clob.Address]*uint256.Int
	ticks  int
	step   int
	log    []string
	kinds  map[clob.EventKind]int // events the reference emitted
	refuse map[clob.Reason]int    // admission reasons
	// liqPrices counts the nonzero liquidation prices compared
	liqPrices int
	// selfMatched counts the reference's self-matched chunks (selfMatches).
	selfMatched int
}

func (rn *perpRun) fatalf(format string, args ...any) {
	rn.t.Helper()
	tail := rn.log
	if len(tail) > 40 {
		tail = tail[len(tail)-40:]
	}
	rn.t.Fatalf("perp seed %d, step %d, tick #%d, now %d: %s\nlast stream lines (rerun with -perpdiff.seed=%d -perpdiff.v for all):\n%s",
		rn.seed, rn.step, rn.ticks, rn.s.nowUs, fmt.Sprintf(format, args...), rn.seed, strings.Join(tail, "\n"))
}

func (rn *perpRun) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	rn.log = append(rn.log, line)
	if len(rn.log) > 400 {
		rn.log = rn.log[200:]
	}
	if *perpDiffVerbose {
		rn.t.Log(line)
	}
}

// newPerpRun builds both sides; refOnly puts a second reference in the
// fast engine's place (a check of the harness and of the reference's own
// invariants).
func newPerpRun(t testing.TB, seed int64, c chooser, refOnly bool) *perpRun {
	w := newPerpWorld(c)
	limits := clob.Limits{OrdersMax: 1 << 10, PendingMax: 1 << 9}
	if c.IntN(5) == 0 {
		limits = clob.Limits{OrdersMax: 6 + c.IntN(24), PendingMax: 8 << c.IntN(2)}
	}
	rn := &perpRun{t: t, seed: seed, kinds: map[clob.EventKind]int{}, refuse: map[clob.Reason]int{}}
	ref := refperp.NewEngine(limits)
	rn.refE = ref
	rn.s = &perpStream{draws: draws{c: c, nonce: map[clob.Address]uint64{}, nowUs: int64(c.IntN(3_000_000))}, w: w, ref: ref}
	rn.ref = perpSide{name: "ref", e: ref, acc: newAccounts()}
	if refOnly {
		rn.fast = perpSide{name: "ref2", e: refperp.NewEngine(limits), acc: newAccounts()}
	} else {
		rn.fast = perpSide{name: "fast", e: clob.NewEngine(limits), acc: newAccounts()}
	}
	for _, sd := range rn.sides() {
		for i := range w.books {
			cfg := w.books[i]
			if err := sd.e.CreateMarket(&cfg); err != nil {
				t.Fatalf("perp seed %d: %s CreateMarket %s: %v", seed, sd.name, cfg.Name, err)
			}
		}
	}
	rn.issued = fund(c, w.tokens, w.owners, 5, 300, 10, rn.fast.acc, rn.ref.acc)
	return rn
}

func (rn *perpRun) sides() []*perpSide { return []*perpSide{&rn.fast, &rn.ref} }

// play runs steps: a clock move, the ticks due, then a few envelopes and
// now and then an oracle jump.
func (rn *perpRun) play(steps int, more func() bool) {
	rn.t.Helper()
	for rn.step = 0; rn.step < steps && more(); rn.step++ {
		s := rn.s
		if s.chance(3) {
			s.nowUs += int64(1+s.pick(5)) * 1_000_000
		} else {
			s.nowUs += int64(s.pick(800_000))
		}
		rn.runDue()
		for k := s.pick(6); k > 0; k-- {
			rn.admit()
		}
		if s.chance(6) {
			rn.oracle()
		}
	}
	if !rn.t.Failed() {
		rn.s.nowUs += 10_000_000
		rn.runDue()
	}
}

func (rn *perpRun) admit() {
	a, env := rn.s.envelope()
	var reasons [2]clob.Reason
	var before [2]clob.MarginInfo
	for i, sd := range rn.sides() {
		before[i] = sd.e.Margin(a.Owner, sd.acc)
		reasons[i] = sd.e.Admit(&a, &env, sd.acc)
	}
	rn.refuse[reasons[1]]++
	rn.logf("admit now=%d tag=%d signer=%x owner=%x nonce=%d %s -> %q", a.NowUs, a.Tag, a.Signer[:1], a.Owner[:1], a.Nonce, fmtEnvelope(&env), reasons[1])
	if reasons[0] != reasons[1] {
		rn.fatalf("Admit tag %d: %s %q, ref %q\n owner's margin before: %s %+v\n ref %+v", a.Tag, rn.fast.name, reasons[0], reasons[1],
			rn.fast.name, before[0], before[1])
	}
	rn.compare("after admit")
}

// oracle moves a perp market's oracle by −30 % … +30 % (sometimes to an
// invalid price).
func (rn *perpRun) oracle() {
	s := rn.s
	book := 1 + s.pick(2)
	cfg := &s.w.books[book]
	info, _ := rn.ref.e.PerpMarket(cfg.ID)
	var steps uint256.Int
	steps.Div(&info.Oracle, &cfg.TickPrecision)
	p := int64(steps.Uint64())
	p = max(1, p+p*int64(s.pick(61)-30)/100)
	var price uint256.Int
	price.Mul(uint256.NewInt(uint64(p)), &cfg.TickPrecision)
	switch {
	case s.chance(3):
		price.Clear()
	case s.chance(3):
		price.AddUint64(&price, 1)
	}
	var reasons [2]clob.Reason
	for i, sd := range rn.sides() {
		reasons[i] = sd.e.SetOraclePrice(cfg.ID, &price)
	}
	rn.logf("oracle %x -> %s: %q", cfg.ID[:1], price.Dec(), reasons[1])
	if reasons[0] != reasons[1] {
		rn.fatalf("SetOraclePrice(%x, %s): %s %q, ref %q", cfg.ID[:1], price.Dec(), rn.fast.name, reasons[0], reasons[1])
	}
	rn.compare("after oracle")
}

func (rn *perpRun) runDue() {
	for i := 0; ; i++ {
		if i > 2000 {
			rn.fatalf("NextTickDue keeps returning work")
		}
		tr, ok := rn.s.due(rn.fatalf, rn.logf, rn.fast.name, rn.fast.e, rn.ref.e, true)
		if !ok {
			return
		}
		for _, sd := range rn.sides() {
			sd.e.Tick(tr, sd.acc, &sd.out)
		}
		rn.ticks++
		rn.logf("tick %d: %d books, %d events, landed %v", tr, len(rn.ref.out.Books), len(rn.ref.out.Events), rn.ref.out.Landed)
		for i := range rn.ref.out.Events {
			rn.kinds[rn.ref.out.Events[i].Kind]++
			rn.logf("  %s", fmtEvent(&rn.ref.out.Events[i]))
		}
		if d := diffTick(&rn.fast.out, &rn.ref.out); d != "" {
			rn.fatalf("Tick(%d): %s", tr, d)
		}
		rn.selfMatched += selfMatches(&rn.ref.out)
		rn.compare(fmt.Sprintf("after tick %d", tr))
		for _, sd := range rn.sides() {
			if err := rn.invariants(sd); err != nil {
				rn.fatalf("after tick %d: %s: %v", tr, sd.name, err)
			}
		}
		if err := rn.refE.CheckInvariants(rn.ref.acc, rn.s.w.accountsAll()...); err != nil {
			rn.fatalf("after tick %d: ref: %v", tr, err)
		}
		for _, tok := range rn.s.w.tokens {
			for _, o := range rn.s.w.accountsAll() {
				l := rn.ref.acc.get(rn.ref.acc.locked, tok, o)
				if want := rn.refE.Locked(tok, o); !l.Eq(&want) {
					rn.fatalf("ref: locked %s of %x in %x, reservations %s", l.Dec(), o[:1], tok[:1], want.Dec())
				}
			}
		}
	}
}

// compare checks that both sides agree on everything a client can read.
func (rn *perpRun) compare(when string) {
	rn.t.Helper()
	w := rn.s.w
	for _, sd := range rn.sides() {
		if sd.acc.err != nil {
			rn.fatalf("%s: %s ledger: %v", when, sd.name, sd.acc.err)
		}
	}
	f, r := rn.fast.acc, rn.ref.acc
	fe, re := rn.fast.e, rn.ref.e
	compareCommon(rn.fatalf, when, rn.fast.name, fe, re, f, r, w.tokens, w.accountsAll(), w.books, rn.s.orders)
	for _, o := range w.accountsAll() {
		if mf, mr := fe.Margin(o, f), re.Margin(o, r); mf != mr {
			rn.fatalf("%s: Margin(%x):\n %s %+v\n ref  %+v", when, o[:1], rn.fast.name, mf, mr)
		}
		pf, pr := fe.AppendPositions(nil, o), re.AppendPositions(nil, o)
		if len(pf) != len(pr) {
			rn.fatalf("%s: AppendPositions(%x): %s %d positions, ref %d", when, o[:1], rn.fast.name, len(pf), len(pr))
		}
		fe.LiquidationPrices(pf, f)
		re.LiquidationPrices(pr, r)
		for i := range pf {
			if !pr[i].Liquidation.IsZero() {
				rn.liqPrices++
			}
			if a, b := pf[i], pr[i]; a != b {
				rn.fatalf("%s: position %d of %x:\n %s %+v\n ref  %+v", when, i, o[:1], rn.fast.name, a, b)
			}
		}
		tf, tr := fe.AppendTriggers(nil, o), re.AppendTriggers(nil, o)
		if fmt.Sprint(tf) != fmt.Sprint(tr) {
			rn.fatalf("%s: AppendTriggers(%x):\n %s %+v\n ref  %+v", when, o[:1], rn.fast.name, tf, tr)
		}
	}
	if af, ar := fe.AppendPerpAccounts(nil), re.AppendPerpAccounts(nil); fmt.Sprint(af) != fmt.Sprint(ar) {
		rn.fatalf("%s: AppendPerpAccounts: %s %x, ref %x", when, rn.fast.name, af, ar)
	}
	if cf, cr := fe.PerpCost(), re.PerpCost(); cf != cr {
		rn.fatalf("%s: PerpCost: %s %s, ref %s", when, rn.fast.name, fmtSigned(cf), fmtSigned(cr))
	}
	for _, cfg := range w.books {
		pf, okf := fe.PerpMarket(cfg.ID)
		pr, okr := re.PerpMarket(cfg.ID)
		if okf != okr || pf != pr {
			rn.fatalf("%s: PerpMarket(%x):\n %s %+v %v\n ref  %+v %v", when, cfg.ID[:1], rn.fast.name, pf, okf, pr, okr)
		}
	}
}

func signedBig(s clob.Signed) *big.Int {
	z := s.Abs.ToBig()
	if s.Neg {
		z.Neg(z)
	}
	return z
}

// invariants checks docs/perps.md's invariants on one side through its
// public reads.
func (rn *perpRun) invariants(sd *perpSide) error {
	w := rn.s.w
	for _, cfg := range w.books[1:] {
		sum := new(big.Int)
		for _, o := range w.accountsAll() {
			for _, p := range sd.e.AppendPositions(nil, o) {
				if p.Book == cfg.ID {
					sum.Add(sum, signedBig(p.Size))
				}
			}
		}
		if sum.Sign() != 0 {
			return fmt.Errorf("market %x: Σ S = %s base wei", cfg.ID[:1], sum)
		}
	}
	// native: issued − fees = Σ (Cash − Debt) − Σ C·q
	lhs := rn.issued[nativeToken].ToBig()
	fee := sd.acc.fee(nativeToken)
	lhs.Sub(lhs, fee.ToBig())
	rhs := new(big.Int)
	for _, o := range w.accountsAll() {
		m := sd.e.Margin(o, sd.acc)
		rhs.Add(rhs, signedBig(m.Cash))
		if o == clob.BackstopAddress {
			continue
		}
		if m.Positions > 0 && signedBig(m.Equity).Cmp(m.Maintenance.ToBig()) < 0 {
			return fmt.Errorf("account %x has %d positions and equity %s < maintenance %s after the liquidation pass",
				o[:1], m.Positions, fmtSigned(m.Equity), m.Maintenance.Dec())
		}
		if m.Positions == 0 && m.Cash.Neg {
			return fmt.Errorf("account %x has no position and cash − debt %s", o[:1], fmtSigned(m.Cash))
		}
	}
	rhs.Sub(rhs, signedBig(sd.e.PerpCost()))
	if lhs.Cmp(rhs) != 0 {
		return fmt.Errorf("native value: issued − fees = %s, Σ (cash − debt) − Σ cost = %s", lhs, rhs)
	}
	for _, tok := range w.tokens[1:] {
		sum := sd.acc.fee(tok)
		for _, o := range w.accountsAll() {
			c := sd.acc.get(sd.acc.cash, tok, o)
			sum.Add(&sum, &c)
		}
		if !sum.Eq(rn.issued[tok]) {
			return fmt.Errorf("token %x: cash + fees %s, issued %s", tok[:1], sum.Dec(), rn.issued[tok].Dec())
		}
	}
	return nil
}

// perpDiffSize is (seeds, steps): short always, long with PERP_DIFF_LONG=1.
func perpDiffSize() (int, int) {
	if os.Getenv("PERP_DIFF_LONG") != "" {
		return 100, 1000
	}
	return 6, 300
}

func perpSeeds(n int) []int64 {
	if *perpDiffSeed >= 0 {
		return []int64{*perpDiffSeed}
	}
	seeds := make([]int64, n)
	for i := range seeds {
		seeds[i] = int64(i + 1)
	}
	return seeds
}

func runPerpDiff(t *testing.T, refOnly bool) {
	seeds, steps := perpDiffSize()
	kinds, refuse, liqPrices, selfMatched := map[clob.EventKind]int{}, map[clob.Reason]int{}, 0, 0
	for _, seed := range perpSeeds(seeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rn := newPerpRun(t, seed, rand.New(rand.NewPCG(uint64(seed), 0x9e4f)), refOnly)
			rn.play(steps, func() bool { return true })
			for k, n := range rn.kinds {
				kinds[k] += n
			}
			for r, n := range rn.refuse {
				refuse[r] += n
			}
			liqPrices += rn.liqPrices
			selfMatched += rn.selfMatched
		})
	}
	if t.Failed() || *perpDiffSeed >= 0 {
		return
	}
	// The streams must reach every perp rule, or the comparison proves
	// little: liquidations, trigger fires and cancels, fills, and the perp
	// refusals.
	for _, k := range []clob.EventKind{clob.EventFill, clob.EventLiquidation, clob.EventTriggerFired, clob.EventTriggerCancel, clob.EventCancel, clob.EventMarginCancel} {
		if kinds[k] == 0 {
			t.Errorf("no %s event in %d streams", kindName[k], seeds)
		}
	}
	for _, r := range []clob.Reason{clob.ReasonInsufficientMargin, clob.ReasonReduceOnlyNoPosition, clob.ReasonReduceOnlySpot,
		clob.ReasonTriggerSpot, clob.ReasonTriggerType, clob.ReasonUnknownTrigger, clob.OK} {
		if refuse[r] == 0 {
			t.Errorf("no admission answered %q in %d streams", r, seeds)
		}
	}
	if liqPrices == 0 {
		t.Errorf("no nonzero liquidation price in %d streams", seeds)
	}
	if selfMatched == 0 {
		t.Errorf("no self-match (an owner's buy against its own sell) in %d streams", seeds)
	}
	t.Logf("events %v; reasons %v; %d nonzero liquidation prices compared; %d self-matched chunks", kinds, refuse, liqPrices, selfMatched)
}

// TestPerpDifferential: the fast engine against the reference.
func TestPerpDifferential(t *testing.T) { runPerpDiff(t, false) }

// TestPerpDifferentialReference: the reference against itself, so its own
// invariants (and this harness) are checked on every stream even where the
// fast engine disagrees.
func TestPerpDifferentialReference(t *testing.T) { runPerpDiff(t, true) }

// FuzzPerpDifferential drives the stream from fuzz bytes:
// go test ./core/clob -run '^$' -fuzz FuzzPerpDifferential -fuzztime 60s
func FuzzPerpDifferential(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte("long and short, then the oracle falls thirty percent and a stop-loss fires"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &fuzzChooser{b: data}
		rn := newPerpRun(t, -1, c, false)
		rn.play(len(data), func() bool { return c.i < len(c.b) })
	})
}
