package clob

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/holiman/uint256"
)

// Admission during a tick (stage.go): a live tick (BeginTick, then
// ClearConcurrent on another goroutine while staged admissions run, then
// Tick) must leave the engine, the accounts and the TickResult exactly as
// a replay of the same log does (the staged admissions, then a plain
// Tick), and every staged admission must get the same answer in both.

// The books of the staging tests, in id order: two spot books (the
// concurrent prefix), the perp book, and a spot book after it. On the
// whole seconds the perp book is due: the prefix ends before it and Tick
// clears the last spot book. On the half seconds only the 0.5 s books are
// due: the prefix reaches past the perp book, and ClearConcurrent clears
// every book that runs.
var (
	stSpot1 = Hash{0x01}       // tBase/tQuote, 1 s
	stSpot2 = Hash{0x01, 0x01} // stBase2/native: a buy's funds go through nativeFree, 0.5 s
	stPerp  = Hash{0x02}       // perp, native, 1 s, its oracle walks
	stSpot3 = Hash{0x05}       // tBase/tQuote, 0.5 s
	stBase2 = Address{0xBB}
	stNoBk  = Hash{0x09} // no such book
)

// stBooks lists the books with their intervals.
var stBooks = []struct {
	id   Hash
	iv   int64
	perp bool
}{{stSpot1, 1_000_000, false}, {stSpot2, 500_000, false}, {stPerp, 1_000_000, true}, {stSpot3, 500_000, false}}

var stSpots = []Hash{stSpot1, stSpot2, stSpot3}

// stageSide is one engine of the comparison with its own ledger.
type stageSide struct {
	name string
	e    *Engine
	acc  *testAccounts
	out  TickResult
}

func newStageSide(t testing.TB, name string, l Limits, owners []Address) *stageSide {
	s := &stageSide{name: name, e: NewEngine(l), acc: newTestAccounts()}
	s.acc.engine = s.e
	m1 := testMarket(stSpot1, 1_000_000)
	m2 := testMarket(stSpot2, 500_000)
	m2.Base, m2.Quote = stBase2, NativeToken
	p := perpMarket(stPerp, 10, 100)
	p.Perp.MarkClamp = *uint256.NewInt(1e18)
	p.Perp.WalkBps, p.Perp.WalkSeed = 400, 7 // a wild oracle: some liquidations
	m3 := testMarket(stSpot3, 500_000)
	for _, m := range []*MarketConfig{&m3, &p, &m1, &m2} { // any order: books sort by id
		if err := s.e.CreateMarket(m); err != nil {
			t.Fatal(err)
		}
	}
	ids := s.e.AppendMarkets(nil)
	for i := range stBooks {
		if ids[i] != stBooks[i].id {
			t.Fatalf("book %d is %x, want %x", i, ids[i][:2], stBooks[i].id[:2])
		}
	}
	for i, o := range owners {
		k := uint64(i + 1)
		if i == len(owners)-1 {
			k = 0 // a poor owner: most of its orders are refused
		}
		base := lotsWei(int64(5 + 400*k))
		quote := new(uint256.Int).Mul(uint256.NewInt(1_000+60_000*k), uint256.NewInt(1e12))
		native := new(uint256.Int).Mul(uint256.NewInt(2_000+200_000*k), q12)
		s.acc.fund(tBase, o, &base)
		s.acc.fund(stBase2, o, &base)
		s.acc.fund(tQuote, o, quote)
		s.acc.fund(NativeToken, o, native)
	}
	return s
}

// stageKnown is an order or trigger some admission created.
type stageKnown struct {
	book    Hash
	id      Hash
	trigger bool
}

// stageGen draws the envelopes of TestStagedLiveEqualsReplay.
type stageGen struct {
	r      *rand.Rand
	now    int64
	nonce  uint64
	owners []Address
	known  []stageKnown
}

func (g *stageGen) chance(pct int) bool { return g.r.IntN(100) < pct }

// admission returns the context of the next transaction, at g.now.
func (g *stageGen) admission(staged bool) Admission {
	o := g.owners[g.r.IntN(len(g.owners))]
	signer := o
	if g.chance(10) { // a delegate signs: ids key on it
		signer[19] = 0xDE
	}
	a := Admission{Signer: signer, Owner: o, Nonce: g.nonce, NowUs: g.now, Tag: 1_000_000 + g.nonce, Staged: staged}
	g.nonce++
	return a
}

// deadline draws a deadline on the grid of iv for an intent admitted now:
// mostly its landing tick, sometimes a later one, sometimes a bad one.
func (g *stageGen) deadline(iv int64) uint64 {
	d := landing(g.now, iv)
	switch g.r.IntN(40) {
	case 0:
		return uint64(d + 1) // not aligned
	case 1:
		return uint64(d - iv) // already executed (or at least not ahead of now)
	case 2:
		return uint64(d + DeadlineAheadMaxUs + iv) // too far
	case 3, 4, 5, 6:
		return uint64(d + iv*int64(1+g.r.IntN(2)))
	}
	return uint64(d)
}

// submit draws a new order on book, mostly valid.
func (g *stageGen) submit(book Hash, perp bool, dl uint64) Intent {
	lots, steps := int64(1+g.r.IntN(20)), int64(90+g.r.IntN(21))
	in := Intent{Kind: IntentSubmit, Book: book, Side: Side(g.r.IntN(2)), Size: lotsWei(lots), Price: stepsWei(steps),
		Type: Limit, Deadline: dl}
	switch g.r.IntN(20) {
	case 0, 1:
		in.Type, in.Flags = Market, FlagIOC
	case 2, 3:
		in.Flags = FlagIOC
	case 4, 5, 6:
		in.Flags = FlagPostOnly
	case 7:
		if perp {
			in.Flags = FlagReduceOnly
		}
	}
	switch g.r.IntN(50) {
	case 0:
		in.Size = uint256.Int{} // size zero
	case 1:
		in.Price[0]++ // not a multiple of the tick
	case 2, 3, 4:
		in.Size = lotsWei(int64(3_000_000 + g.r.IntN(1000))) // more than anyone has
	case 5:
		in.Flags |= 0x40 // unknown flag
	case 6:
		in.Flags = FlagIOC | FlagPostOnly
	case 7:
		in.Type, in.Flags = Market, 0 // a market order must be IOC
	case 8:
		in.Flags |= FlagReduceOnly // refused on a spot book
	}
	if g.chance(25) {
		in.TTL = uint64(1 + g.r.IntN(3_000_000))
	}
	return in
}

// pickBook draws one of the books (rarely one that does not exist).
func (g *stageGen) pickBook(spotOnly bool) (Hash, int64, bool) {
	if g.chance(2) {
		return stNoBk, 1_000_000, false
	}
	if spotOnly {
		b := stSpots[g.r.IntN(len(stSpots))]
		for _, x := range stBooks {
			if x.id == b {
				return b, x.iv, false
			}
		}
	}
	x := stBooks[g.r.IntN(len(stBooks))]
	return x.id, x.iv, x.perp
}

// submits draws an envelope of 1 to 3 new orders; a batch shares one
// deadline on the 1 s grid, which every book's grid contains.
func (g *stageGen) submits(spotOnly bool) *Envelope {
	n := 1
	if g.chance(25) {
		n = 2 + g.r.IntN(2)
	}
	env := &Envelope{}
	var dl uint64
	for i := range n {
		b, iv, perp := g.pickBook(spotOnly)
		if i == 0 {
			if n > 1 {
				iv = 1_000_000
			}
			dl = g.deadline(iv)
		}
		env.Intents = append(env.Intents, g.submit(b, perp, dl))
	}
	return env
}

// target picks a known order (or trigger): mostly a live one of owner,
// else any, alive or not.
func (g *stageGen) target(trigger bool, o Address, live func(Hash) (Address, bool)) (stageKnown, bool) {
	var mine []stageKnown
	if !trigger && g.chance(75) {
		for _, k := range g.known {
			if ow, ok := live(k.id); ok && !k.trigger && ow == o {
				mine = append(mine, k)
			}
		}
		if len(mine) > 0 {
			return mine[g.r.IntN(len(mine))], true
		}
	}
	for range 8 {
		if len(g.known) == 0 {
			break
		}
		k := g.known[g.r.IntN(len(g.known))]
		if k.trigger == trigger {
			return k, true
		}
	}
	return stageKnown{}, false
}

func ivOf(book Hash) int64 {
	for _, x := range stBooks {
		if x.id == book {
			return x.iv
		}
	}
	return 1_000_000
}

// ordinary draws an envelope admitted between ticks: submits, cancels,
// updates, transfers, triggers.
func (g *stageGen) ordinary(o Address, live func(Hash) (Address, bool)) *Envelope {
	x := g.r.IntN(100)
	switch {
	case x < 18:
		if k, ok := g.target(false, o, live); ok {
			return &Envelope{Intents: []Intent{{Kind: IntentCancel, Book: k.book, OrderID: k.id, Deadline: g.deadline(ivOf(k.book))}}}
		}
	case x < 30:
		if k, ok := g.target(false, o, live); ok {
			return &Envelope{Intents: []Intent{{Kind: IntentUpdate, Book: k.book, OrderID: k.id, Token: tQuote,
				Size: lotsWei(int64(1 + g.r.IntN(20))), Price: stepsWei(int64(90 + g.r.IntN(21))), Deadline: g.deadline(ivOf(k.book))}}}
		}
	case x < 34:
		token := tQuote
		if g.chance(50) {
			token = NativeToken
		}
		amt := new(uint256.Int).Mul(uint256.NewInt(uint64(g.r.IntN(3000))), q12)
		return &Envelope{Intents: []Intent{{Kind: IntentTransfer, Token: token, To: g.owners[g.r.IntN(len(g.owners))],
			Amount: *amt, Deadline: uint64(landing(g.now, TransferIntervalUs))}}}
	case x < 39:
		limit := int64(0)
		if g.chance(60) {
			limit = int64(90 + g.r.IntN(21))
		}
		return &Envelope{Intents: []Intent{{Kind: IntentSubmitTrigger, Book: stPerp, Side: Side(g.r.IntN(2)),
			Size: lotsWei(int64(1 + g.r.IntN(5))), Price: stepsWei(limit), TriggerPrice: stepsWei(int64(92 + g.r.IntN(17))),
			TriggerType: uint8(g.r.IntN(2)), Grouping: uint8(g.r.IntN(2)), Flags: FlagReduceOnly * uint8(g.r.IntN(2)),
			Deadline: g.deadline(1_000_000)}}}
	case x < 42:
		if k, ok := g.target(true, o, live); ok {
			return &Envelope{Intents: []Intent{{Kind: IntentCancelTrigger, Book: k.book, OrderID: k.id, Deadline: g.deadline(1_000_000)}}}
		}
	}
	return g.submits(false)
}

// staged draws an envelope offered while a tick runs: mostly new orders
// on spot books, sometimes one that is not Stageable (a perp order or a
// cancel in it), which must wait for the tick's end.
func (g *stageGen) staged(o Address, live func(Hash) (Address, bool)) *Envelope {
	env := g.submits(true)
	switch g.r.IntN(25) {
	case 0:
		env.Intents = append(env.Intents, g.submit(stPerp, true, env.Intents[0].Deadline))
	case 1:
		if k, ok := g.target(false, o, live); ok {
			env.Intents = append(env.Intents, Intent{Kind: IntentCancel, Book: k.book, OrderID: k.id, Deadline: env.Intents[0].Deadline})
		}
	}
	return env
}

// prepare sometimes computes the envelope's ids ahead (PrepareIDs), as
// the node's event loops do; sometimes for another nonce (then ignored).
func (g *stageGen) prepare(env *Envelope, a *Admission) {
	switch g.r.IntN(10) {
	case 0, 1, 2:
		PrepareIDs(env, a.Signer, a.Nonce)
	case 3:
		PrepareIDs(env, a.Signer, a.Nonce+1)
	}
}

// learn records the orders and triggers an admitted envelope created.
func (g *stageGen) learn(env *Envelope, a *Admission) {
	for i := range env.Intents {
		in := &env.Intents[i]
		if in.Kind == IntentSubmit || in.Kind == IntentSubmitTrigger {
			g.known = append(g.known, stageKnown{book: in.Book, id: env.OrderIDOf(i, a.Signer, a.Nonce), trigger: in.Kind == IntentSubmitTrigger})
		}
	}
	if len(g.known) > 400 {
		g.known = slices.Delete(g.known, 0, 200)
	}
}

// stageRun is one seeded stream: engine A runs ticks live, engine B
// replays them.
type stageRun struct {
	t         *testing.T
	g         *stageGen
	a, b      *stageSide
	round     int
	log       []string
	reasons   map[Reason]int
	staged    int // staged admissions in all
	stagedOK  int
	deferred  int            // envelopes that were not Stageable
	conc      int            // books cleared by ClearConcurrent
	concFills int            // their fills
	kinds     map[string]int // the events of A's ticks, by kind
}

func (rn *stageRun) fatalf(format string, args ...any) {
	rn.t.Helper()
	tail := rn.log
	if len(tail) > 40 {
		tail = tail[len(tail)-40:]
	}
	rn.t.Fatalf("round %d: %s\nlast steps:\n  %s", rn.round, fmt.Sprintf(format, args...), strings.Join(tail, "\n  "))
}

func (rn *stageRun) logf(format string, args ...any) {
	rn.log = append(rn.log, fmt.Sprintf(format, args...))
	if len(rn.log) > 400 {
		rn.log = slices.Delete(rn.log, 0, 200)
	}
}

// live reports whether an order is live in A (A and B agree) and its
// owner. Not during a tick.
func (rn *stageRun) live(id Hash) (Address, bool) {
	info, ok := rn.a.e.Order(id)
	return info.Owner, ok
}

// admitBoth admits env on both engines, non-staged, and compares.
func (rn *stageRun) admitBoth(a *Admission, env *Envelope) Reason {
	rn.t.Helper()
	ra := rn.a.e.Admit(a, env, rn.a.acc)
	rb := rn.b.e.Admit(a, env, rn.b.acc)
	rn.logf("admit %s at %d: %v", fmtStageEnv(env), a.NowUs, ra)
	if ra != rb {
		rn.fatalf("Admit: A %v, B %v", ra, rb)
	}
	rn.reasons[ra]++
	if ra == OK {
		rn.g.learn(env, a)
	}
	return ra
}

// ordinaryAdmissions admits a few envelopes between ticks.
func (rn *stageRun) ordinaryAdmissions(n int) {
	g := rn.g
	for range n {
		g.now += int64(g.r.IntN(60_000))
		a := g.admission(false)
		env := g.ordinary(a.Owner, rn.live)
		g.prepare(env, &a)
		rn.admitBoth(&a, env)
	}
}

// stagedEnv is an envelope offered while a tick runs.
type stagedEnv struct {
	a   Admission
	env *Envelope
}

// drawStaged draws k staged envelopes, admitted from g.now on.
func (rn *stageRun) drawStaged(k int) []stagedEnv {
	g := rn.g
	s := make([]stagedEnv, k)
	for i := range s {
		g.now += int64(g.r.IntN(40_000))
		s[i].a = g.admission(true)
		s[i].env = g.staged(s[i].a.Owner, rn.live)
		g.prepare(s[i].env, &s[i].a)
	}
	return s
}

// admitStaged admits the Stageable envelopes of s into e, staged; it
// returns their reasons (-1: not Stageable) and the others.
func admitStaged(e *Engine, acc Accounts, s []stagedEnv) (reasons []int, wait []stagedEnv) {
	for i := range s {
		if !e.Stageable(s[i].env) {
			reasons = append(reasons, -1)
			wait = append(wait, s[i])
			continue
		}
		reasons = append(reasons, int(e.Admit(&s[i].a, s[i].env, acc)))
	}
	return reasons, wait
}

// afterStaged compares the reasons of the staged admissions and learns
// their orders.
func (rn *stageRun) afterStaged(s []stagedEnv, ra, rb []int) {
	rn.t.Helper()
	for i := range s {
		rn.logf("staged %s at %d: A %v B %v", fmtStageEnv(s[i].env), s[i].a.NowUs, stageReason(ra[i]), stageReason(rb[i]))
	}
	if !slices.Equal(ra, rb) {
		rn.fatalf("staged reasons: A %v, B %v", ra, rb)
	}
	for i := range s {
		if ra[i] < 0 {
			rn.deferred++
			continue
		}
		rn.staged++
		rn.reasons[Reason(ra[i])]++
		if ra[i] == int(OK) {
			rn.stagedOK++
			rn.g.learn(s[i].env, &s[i].a)
		}
	}
}

func stageReason(r int) string {
	if r < 0 {
		return "not stageable"
	}
	return Reason(r).String()
}

// tickRound runs one tick: live on A, replayed on B.
func (rn *stageRun) tickRound() {
	rn.t.Helper()
	g := rn.g
	T := landing(g.now, 500_000)
	if g.chance(10) {
		T += 500_000 // a skipped grid point: intents past their deadline drop
	}
	// Sometimes the previous tick's staged admissions were logged but not
	// the tick (the node stopped mid-tick): both engines stage them before
	// this tick, A then begins its tick with staging already on.
	var pre []stagedEnv
	if g.chance(8) {
		pre = rn.drawStaged(1 + g.r.IntN(3))
		for i := range pre {
			pre[i].a.NowUs = min(pre[i].a.NowUs, T-1)
		}
		g.now = max(g.now, T-1)
		ra, waitA := admitStaged(rn.a.e, rn.a.acc, pre)
		rb, _ := admitStaged(rn.b.e, rn.b.acc, pre)
		rn.afterStaged(pre, ra, rb)
		for _, w := range waitA { // the caller joins them before a non-staged input
			rn.logf("join, then admit the unstageable")
			rn.a.e.JoinStaged()
			rn.b.e.JoinStaged()
			w.a.Staged = false
			rn.admitBoth(&w.a, w.env)
		}
	}
	prices := limitsAt(rn.a.e, T)
	g.now = max(g.now, T) + int64(g.r.IntN(50_000))
	k := g.r.IntN(7)
	if g.chance(8) {
		k = 10 + g.r.IntN(20) // a burst: books fill up
	}
	s := rn.drawStaged(k)
	rn.logf("tick %d with %d staged", T, k)

	// A: live.
	A := rn.a
	A.e.BeginTick(T, &A.out)
	if !A.e.Staging() {
		rn.fatalf("not staging after BeginTick")
	}
	prefix := A.e.books[:A.e.ct.end]
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		A.e.ClearConcurrent()
	}()
	ra, waitA := admitStaged(A.e, A.acc, s)
	wg.Wait()
	for _, bt := range A.out.Books { // so far, the books ClearConcurrent ran
		rn.conc++
		if !slices.ContainsFunc(prefix, func(b *book) bool { return b.cfg.ID == bt.Book }) {
			rn.fatalf("ClearConcurrent ran book %x, not in the prefix", bt.Book[:2])
		}
		for _, ev := range A.out.Events[bt.FirstEvent:bt.EndEvent] {
			if ev.Kind == EventFill {
				rn.concFills++
			}
		}
	}
	A.e.Tick(T, A.acc, &A.out)

	// B: the replay of the log.
	B := rn.b
	rb, waitB := admitStaged(B.e, B.acc, s)
	if len(s) > 0 && len(waitB) < len(s) && !B.e.Staging() {
		rn.fatalf("a staged admission did not start staging")
	}
	B.e.Tick(T, B.acc, &B.out)

	rn.afterStaged(s, ra, rb)
	if A.e.Staging() || B.e.Staging() {
		rn.fatalf("still staging after Tick: A %v, B %v", A.e.Staging(), B.e.Staging())
	}
	if d := diffTickResults(&A.out, &B.out); d != "" {
		rn.fatalf("TickResult differs: %s", d)
	}
	for _, sd := range []*stageSide{A, B} {
		if err := checkTick(sd.e, &sd.out, prices); err != nil {
			rn.fatalf("%s: tick %d: %v", sd.name, T, err)
		}
		if err := checkPerp(sd.e, sd.acc); err != nil && !perpUpdatesPending(sd.e) {
			rn.fatalf("%s: tick %d: %v", sd.name, T, err)
		}
		if err := checkTriggers(sd.e); err != nil {
			rn.fatalf("%s: tick %d: %v", sd.name, T, err)
		}
	}
	rn.logf("tick %d: %d events, %d books, landed %d", T, len(A.out.Events), len(A.out.Books), len(A.out.Landed))
	for i := range A.out.Events {
		k := A.out.Events[i].Kind
		name := kindText[k]
		if name == "" {
			name = fmt.Sprint("kind", int(k))
		}
		rn.kinds[name]++
	}
	// The envelopes that could not be staged waited for the tick's end.
	if len(waitA) != len(waitB) {
		rn.fatalf("not stageable: A %d, B %d", len(waitA), len(waitB))
	}
	for _, w := range waitA {
		w.a.Staged, w.a.NowUs = false, g.now
		rn.admitBoth(&w.a, w.env)
	}
}

// joinRound stages admissions with no tick after them, then both engines
// join them (JoinStaged) before a non-staged admission, as the node does
// after a restart in the middle of a tick.
func (rn *stageRun) joinRound() {
	rn.t.Helper()
	s := rn.drawStaged(1 + rn.g.r.IntN(5))
	ra, waitA := admitStaged(rn.a.e, rn.a.acc, s)
	rb, waitB := admitStaged(rn.b.e, rn.b.acc, s)
	rn.afterStaged(s, ra, rb)
	staging := len(waitA) < len(s) // every Stageable admission starts staging, refused or not
	if rn.a.e.Staging() != staging || rn.b.e.Staging() != staging {
		rn.fatalf("staging: A %v, B %v, want %v", rn.a.e.Staging(), rn.b.e.Staging(), staging)
	}
	rn.logf("join")
	rn.a.e.JoinStaged()
	rn.b.e.JoinStaged()
	if rn.a.e.Staging() || rn.b.e.Staging() {
		rn.fatalf("still staging after JoinStaged")
	}
	if len(waitA) != len(waitB) {
		rn.fatalf("not stageable: A %d, B %d", len(waitA), len(waitB))
	}
	for _, w := range waitA {
		w.a.Staged, w.a.NowUs = false, rn.g.now
		rn.admitBoth(&w.a, w.env)
	}
	rn.ordinaryAdmissions(1)
}

// compare checks that A and B agree on everything, and the invariants.
func (rn *stageRun) compare() {
	rn.t.Helper()
	A, B := rn.a, rn.b
	for _, sd := range []*stageSide{A, B} {
		if err := sd.acc.check(); err != nil {
			rn.fatalf("%s: %v", sd.name, err)
		}
		if err := checkEngine(sd.e, sd.acc); err != nil {
			rn.fatalf("%s: %v", sd.name, err)
		}
	}
	if d := diffTestAccounts(A.acc, B.acc); d != "" {
		rn.fatalf("accounts differ: %s", d)
	}
	sa, sb := A.e.AppendSnapshot(nil), B.e.AppendSnapshot(nil)
	if !bytes.Equal(sa, sb) {
		i := 0
		for i < len(sa) && i < len(sb) && sa[i] == sb[i] {
			i++
		}
		rn.fatalf("snapshots differ at byte %d of %d/%d", i, len(sa), len(sb))
	}
}

func TestStagedLiveEqualsReplay(t *testing.T) {
	const seeds, rounds = 4, 250
	total := map[Reason]int{}
	kinds := map[string]int{}
	var staged, stagedOK, deferred, conc, concFills int
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0x57A6E))
			owners := []Address{owner("s1"), owner("s2"), owner("s3"), owner("s4")}
			l := Limits{OrdersMax: 24 + r.IntN(60), PendingMax: 16 << r.IntN(2)}
			rn := &stageRun{t: t, g: &stageGen{r: r, now: 100, owners: owners},
				a: newStageSide(t, "A (live)", l, owners), b: newStageSide(t, "B (replay)", l, owners),
				reasons: total, kinds: kinds}
			for rn.round = range rounds {
				rn.ordinaryAdmissions(r.IntN(7))
				if r.IntN(12) == 0 {
					rn.joinRound()
				} else {
					rn.tickRound()
				}
				rn.compare()
			}
			// Ticks with staged admissions only.
			for range 20 {
				rn.tickRound()
				rn.compare()
			}
			staged += rn.staged
			stagedOK += rn.stagedOK
			deferred += rn.deferred
			conc += rn.conc
			concFills += rn.concFills
		})
	}
	t.Logf("staged admissions %d (%d admitted), not stageable %d; books cleared concurrently %d (%d fills); reasons %v; events %v",
		staged, stagedOK, deferred, conc, concFills, total, kinds)
	if !t.Failed() && (stagedOK < 500 || total[ReasonBookFull] == 0 || total[ReasonInsufficientBalance] == 0 ||
		total[ReasonDeadlinePast] == 0 || conc < 300 || concFills < 300) {
		t.Fatalf("the stream is too tame: staged %d, conc %d, reasons %v", stagedOK, conc, total)
	}
}

// TestStagedThenJoinedEqualsUnstaged: with no tick in between, admissions
// staged and then joined leave the engine as the same admissions not
// staged do (the frozen facts are the book's own, and a staged order
// counts as a live order and a pending intent).
func TestStagedThenJoinedEqualsUnstaged(t *testing.T) {
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 0x10A))
		owners := []Address{owner("s1"), owner("s2"), owner("s3"), owner("s4")}
		l := Limits{OrdersMax: 8 + r.IntN(20), PendingMax: 16}
		rn := &stageRun{t: t, g: &stageGen{r: r, now: 100, owners: owners},
			a: newStageSide(t, "A (staged)", l, owners), b: newStageSide(t, "B (not staged)", l, owners),
			reasons: map[Reason]int{}, kinds: map[string]int{}}
		for rn.round = range 80 {
			rn.ordinaryAdmissions(r.IntN(4))
			s := rn.drawStaged(r.IntN(8))
			var ra, rb []int
			for i := range s {
				if !rn.a.e.Stageable(s[i].env) {
					continue
				}
				ra = append(ra, int(rn.a.e.Admit(&s[i].a, s[i].env, rn.a.acc)))
				u := s[i].a
				u.Staged = false
				rb = append(rb, int(rn.b.e.Admit(&u, s[i].env, rn.b.acc)))
				rn.logf("%s: A %v, B %v", fmtStageEnv(s[i].env), stageReason(ra[len(ra)-1]), stageReason(rb[len(rb)-1]))
				if ra[len(ra)-1] == int(OK) {
					rn.g.learn(s[i].env, &s[i].a)
				}
			}
			if !slices.Equal(ra, rb) {
				rn.fatalf("reasons: staged %v, not staged %v", ra, rb)
			}
			rn.a.e.JoinStaged()
			rn.compare()
			if r.IntN(3) == 0 {
				T := landing(rn.g.now, 500_000)
				rn.a.e.Tick(T, rn.a.acc, &rn.a.out)
				rn.b.e.Tick(T, rn.b.acc, &rn.b.out)
				rn.g.now = T + int64(r.IntN(100_000))
				if d := diffTickResults(&rn.a.out, &rn.b.out); d != "" {
					rn.fatalf("TickResult differs: %s", d)
				}
				rn.compare()
			}
		}
	}
}

// perpUpdatesPending reports whether a perp order has an update pending:
// its B or A then holds the update's size (exposedLots), which checkPerp
// does not expect (it runs after ticks that ran the perp books; a tick on
// a half second does not).
func perpUpdatesPending(e *Engine) bool {
	for _, b := range e.pp.books {
		for s := 1; s < len(b.nodes); s++ {
			if b.nodes[s].state != stateFree && b.ords[s].pendingUpdates > 0 {
				return true
			}
		}
	}
	return false
}

// diffTickResults describes the first difference between two tick
// results, "" if none.
func diffTickResults(a, b *TickResult) string {
	if a.TickUs != b.TickUs {
		return fmt.Sprintf("TickUs %d vs %d", a.TickUs, b.TickUs)
	}
	if len(a.Books) != len(b.Books) {
		return fmt.Sprintf("%d books vs %d", len(a.Books), len(b.Books))
	}
	for i := range a.Books {
		if a.Books[i] != b.Books[i] {
			return fmt.Sprintf("book %d: %+v vs %+v", i, a.Books[i], b.Books[i])
		}
	}
	if len(a.Events) != len(b.Events) {
		return fmt.Sprintf("%d events vs %d", len(a.Events), len(b.Events))
	}
	for i := range a.Events {
		if a.Events[i] != b.Events[i] {
			return fmt.Sprintf("event %d: %+v vs %+v", i, a.Events[i], b.Events[i])
		}
	}
	if !slices.Equal(a.Landed, b.Landed) {
		return fmt.Sprintf("landed %v vs %v", a.Landed, b.Landed)
	}
	return ""
}

// diffTestAccounts describes the first difference between two ledgers
// (a balance never touched equals a zero one), "" if none.
func diffTestAccounts(a, b *testAccounts) string {
	keys := map[[40]byte]bool{}
	for k := range a.bal {
		keys[k] = true
	}
	for k := range b.bal {
		keys[k] = true
	}
	zero := &testBalance{}
	for k := range keys {
		x, y := a.bal[k], b.bal[k]
		if x == nil {
			x = zero
		}
		if y == nil {
			y = zero
		}
		if *x != *y {
			return fmt.Sprintf("%x/%x: cash %s locked %s debt %s vs cash %s locked %s debt %s", k[:2], k[20:22],
				x.cash.Dec(), x.locked.Dec(), x.debt.Dec(), y.cash.Dec(), y.locked.Dec(), y.debt.Dec())
		}
	}
	tokens := map[Address]bool{}
	for k := range a.fees {
		tokens[k] = true
	}
	for k := range b.fees {
		tokens[k] = true
	}
	for tok := range tokens {
		var x, y uint256.Int
		if v := a.fees[tok]; v != nil {
			x = *v
		}
		if v := b.fees[tok]; v != nil {
			y = *v
		}
		if x != y {
			return fmt.Sprintf("fees %x: %s vs %s", tok[:2], x.Dec(), y.Dec())
		}
	}
	if a.problem != b.problem {
		return fmt.Sprintf("problems %q vs %q", a.problem, b.problem)
	}
	return ""
}

func fmtStageEnv(env *Envelope) string {
	var parts []string
	for i := range env.Intents {
		in := &env.Intents[i]
		var lots, steps uint256.Int
		lots.Div(&in.Size, e15)
		steps.Div(&in.Price, uint256.NewInt(2e15))
		parts = append(parts, fmt.Sprintf("k%d b%x s%d %s@%s t%d f%x dl%d ttl%d", in.Kind, in.Book[:2], in.Side, lots.Dec(), steps.Dec(),
			in.Type, in.Flags, in.Deadline, in.TTL))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// stagedAdmit admits intents for who as a staged admission (during a
// tick), naming the orders it creates. It checks nothing: the books and
// the ledger disagree until the tick ends.
func (h *harness) stagedAdmit(who string, names []string, in ...Intent) Reason {
	h.t.Helper()
	a := Admission{Signer: owner(who), Owner: owner(who), Nonce: h.nonce, NowUs: h.nowUs, Tag: h.nonce, Staged: true}
	h.nonce++
	r := h.e.Admit(&a, &Envelope{Intents: in}, h.acc)
	for i := range in {
		if r == OK && i < len(names) {
			id := OrderID(a.Signer, a.Nonce, uint32(i))
			h.names[id] = names[i]
			h.ids[names[i]] = id
		}
	}
	return r
}

// liveTick runs the tick at T as the live node does: BeginTick, then
// ClearConcurrent on another goroutine while during runs (staged
// admissions), then between (after the clearing, before Tick), then Tick.
// It checks the invariants after Tick and returns the events.
func (h *harness) liveTick(T int64, during, between func()) []string {
	h.t.Helper()
	prices := limitsAt(h.e, T)
	h.e.BeginTick(T, &h.out)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.e.ClearConcurrent()
	}()
	if during != nil {
		during()
	}
	<-done
	if between != nil {
		between()
	}
	h.e.Tick(T, h.acc, &h.out)
	if h.e.Staging() {
		h.t.Fatalf("tick %d: still staging", T)
	}
	h.checkTicked(T, prices)
	return h.format()
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		if recover() == nil {
			t.Fatalf("%s did not panic", what)
		}
	}()
	f()
}

// TestStagedOrdersWaitForTheirTick: an order staged during a tick locks
// its funds at once but enters its book only when the tick has ended: it
// cannot trade in that tick, even crossing, and is placed in the next.
// Staged admissions see the books as the tick found them, plus the orders
// staged before them.
func TestStagedOrdersWaitForTheirTick(t *testing.T) {
	h := newHarness(t, Limits{})
	for _, n := range []string{"a", "b"} {
		h.fund(n, 100, 100_000)
	}
	reserve := func(side Side, lots, steps int64) uint256.Int {
		var v, tmp uint256.Int
		h.e.book(tBookID).u.reserve(&v, &tmp, side, lots, steps)
		return v
	}
	cReserve := reserve(Buy, 3, 101)
	{ // c can pay for one order of 3@101, not two
		c := owner("c")
		h.owners[c] = "c"
		h.acc.fund(tQuote, c, new(uint256.Int).Add(&cReserve, uint256.NewInt(1)))
	}
	if r := h.admit("a", []string{"a"}, h.limit(Sell, 5, 100, 0)); r != OK {
		t.Fatal(r)
	}
	h.expectEvents(h.tick(), "placed a") // at 1 s
	if r := h.admit("b", []string{"b"}, h.limit(Buy, 2, 100, 0)); r != OK {
		t.Fatal(r)
	}
	aQuote, _, _ := h.acc.Holding(tQuote, owner("a"))
	h.nowUs = 2_000_050 // the node's clock while the tick at 2 s runs
	got := h.liveTick(2_000_000, func() {
		before := h.acc.Available(tQuote, owner("c"))
		if r := h.stagedAdmit("c", []string{"c"}, h.limit(Buy, 3, 101, 0)); r != OK { // crosses a
			t.Errorf("staged c: %v", r)
		}
		after := h.acc.Available(tQuote, owner("c"))
		var drop uint256.Int
		drop.Sub(&before, &after)
		if !drop.Eq(&cReserve) {
			t.Errorf("c's available fell by %s right after its staged admission, want its reservation %s", drop.Dec(), cReserve.Dec())
		}
		// The lock counts for the next staged admission.
		if r := h.stagedAdmit("c", []string{"c2"}, h.limit(Buy, 3, 101, 0)); r != ReasonInsufficientBalance {
			t.Errorf("c's second staged order: %v, want %v", r, ReasonInsufficientBalance)
		}
		// A deadline at the tick that is running is past.
		in := h.limit(Buy, 1, 100, 0)
		in.Deadline = 2_000_000
		if r := h.stagedAdmit("b", nil, in); r != ReasonDeadlinePast {
			t.Errorf("staged order with a deadline at the running tick: %v, want %v", r, ReasonDeadlinePast)
		}
	}, func() {
		// The clearing has run; its account moves wait for Tick.
		if !h.e.Staging() {
			t.Error("not staging during the tick")
		}
		if q, _, _ := h.acc.Holding(tQuote, owner("a")); !q.Eq(&aQuote) {
			t.Errorf("a's quote cash moved to %s before Tick (was %s)", q.Dec(), aQuote.Dec())
		}
		if _, ok := h.e.Order(h.id("c")); ok {
			t.Error("the staged order c is in its book before the tick ends")
		}
		mustPanic(t, "a non-staged admission during the tick", func() {
			a := Admission{Signer: owner("b"), Owner: owner("b"), Nonce: 999, NowUs: h.nowUs}
			h.e.Admit(&a, &Envelope{Intents: []Intent{h.limit(Buy, 1, 100, 0)}}, h.acc)
		})
		mustPanic(t, "JoinStaged during the tick", h.e.JoinStaged)
		mustPanic(t, "a snapshot during the tick", func() { h.e.AppendSnapshot(nil) })
	})
	if t.Failed() {
		t.FailNow()
	}
	h.expectEvents(got, "placed b", "fill b 2@100 T", "fill a 2@100 maker")
	if q, _, _ := h.acc.Holding(tQuote, owner("a")); q.Eq(&aQuote) {
		t.Fatal("a's fill was not credited by Tick")
	}
	info, ok := h.e.Order(h.id("c"))
	if !ok || !info.Pending {
		t.Fatalf("c after the tick: live %v, pending %v; want a pending order", ok, info.Pending)
	}
	if bids, asks := h.levels(Buy), h.levels(Sell); bids != "" || asks != "3@100/1" {
		t.Fatalf("levels after the tick: bids %q asks %q", bids, asks)
	}
	if T, ok := h.e.NextTickDue(3_000_000); !ok || T != 3_000_000 {
		t.Fatalf("next tick due %d %v, want 3000000", T, ok)
	}
	h.expectEvents(h.tick(3_000_000), "placed c", "fill c 3@100.5 T", "fill a 3@100.5 maker T")
	if _, locked, _ := h.acc.Holding(tQuote, owner("c")); !locked.IsZero() {
		t.Fatalf("c still locks %s", locked.Dec())
	}

	t.Run("capacity", func(t *testing.T) {
		h := newHarness(t, Limits{OrdersMax: 4, PendingMax: 8})
		for _, n := range []string{"a", "b", "c"} {
			h.fund(n, 100, 100_000)
		}
		h.admit("a", []string{"a"}, h.limit(Sell, 5, 100, 0))
		h.tick()
		h.admit("b", []string{"b"}, h.limit(Buy, 5, 100, 0)) // fills a fully in the tick at 2 s
		h.nowUs = 2_000_010
		// The tick began with 2 live orders (a resting, b pending); it will
		// leave none, but the staged admissions count the 2.
		h.liveTick(2_000_000, func() {
			if r := h.stagedAdmit("c", []string{"c1", "c2"}, h.limit(Buy, 1, 90, 0), h.limit(Buy, 1, 90, 0)); r != OK {
				t.Errorf("c1, c2: %v", r)
			}
			if r := h.stagedAdmit("c", []string{"c3"}, h.limit(Buy, 1, 90, 0)); r != ReasonBookFull {
				t.Errorf("c3: %v, want %v (2 live + 2 staged)", r, ReasonBookFull)
			}
		}, nil)
		if t.Failed() {
			t.FailNow()
		}
		if r := h.admit("c", []string{"c3"}, h.limit(Buy, 1, 90, 0)); r != OK {
			t.Fatalf("c3 after the tick: %v (a and b are gone, c1 and c2 are live)", r)
		}
		if r := h.admit("c", []string{"c4"}, h.limit(Buy, 1, 90, 0)); r != OK {
			t.Fatalf("c4: %v", r)
		}
		if r := h.admit("c", nil, h.limit(Buy, 1, 90, 0)); r != ReasonBookFull {
			t.Fatalf("a fifth order: %v, want %v", r, ReasonBookFull)
		}
		h.expectEvents(h.tick(), "placed c1", "placed c2", "placed c3", "placed c4")
	})

	t.Run("pending", func(t *testing.T) {
		h := newHarness(t, Limits{OrdersMax: 64, PendingMax: 4})
		for _, n := range []string{"a", "b"} {
			h.fund(n, 100, 100_000)
		}
		h.admit("a", []string{"a"}, h.limit(Sell, 1, 100, 0))
		h.admit("a", []string{"a2"}, h.limit(Sell, 1, 100, 0))
		h.nowUs = 1_000_010
		h.liveTick(1_000_000, func() {
			for i, want := range []Reason{OK, OK, ReasonBookFull} { // 2 pending + 2 staged fill the ring
				if r := h.stagedAdmit("b", []string{fmt.Sprint("b", i)}, h.limit(Buy, 1, 90, 0)); r != want {
					t.Errorf("staged b%d: %v, want %v", i, r, want)
				}
			}
		}, nil)
		if t.Failed() {
			t.FailNow()
		}
		h.expectEvents(h.tick(), "placed b0", "placed b1")
	})
}

// TestStageableEnvelopes: only new orders on spot books are staged.
func TestStageableEnvelopes(t *testing.T) {
	h := newTrigHarness(t, Limits{})
	h.fund("a", 100, 100_000)
	h.fundPerp("a")
	h.admit("a", []string{"rest"}, h.limit(Sell, 1, 120, 0))
	h.admit("a", []string{"trig"}, h.trigger(Sell, 1, 0, 90, TriggerStopLoss, GroupingNone))
	h.tick()
	spot := h.limit(Buy, 1, 100, 0)
	ioc := h.limit(Buy, 1, 100, FlagIOC)
	mkt := ioc
	mkt.Type = Market
	bad := h.limit(Buy, 0, 100, 0) // size zero: Stageable, refused by the checks
	unknown := spot
	unknown.Book = Hash{0x77}
	perp := h.perpOrder(tPerpID, Buy, 1, 100, 0)
	cancel := Intent{Kind: IntentCancel, Book: tBookID, OrderID: h.id("rest"), Deadline: h.deadline()}
	update := Intent{Kind: IntentUpdate, Book: tBookID, OrderID: h.id("rest"), Size: lotsWei(2), Price: stepsWei(120), Deadline: h.deadline()}
	transfer := Intent{Kind: IntentTransfer, Token: tQuote, To: owner("b"), Amount: *uint256.NewInt(1e12),
		Deadline: uint64(landing(h.nowUs, TransferIntervalUs))}
	trig := h.trigger(Buy, 1, 0, 110, TriggerTakeProfit, GroupingNone)
	cancelTrig := Intent{Kind: IntentCancelTrigger, Book: tPerpID, OrderID: h.id("trig"), Deadline: h.deadline()}
	updateTrig := h.trigger(Sell, 2, 0, 91, TriggerStopLoss, GroupingNone)
	updateTrig.Kind, updateTrig.OrderID = IntentUpdateTrigger, h.id("trig")
	cases := []struct {
		name string
		in   []Intent
		want bool
	}{
		{"spot submit", []Intent{spot}, true},
		{"spot IOC", []Intent{ioc}, true},
		{"spot market", []Intent{mkt}, true},
		{"invalid spot submit", []Intent{bad}, true},
		{"submit on an unknown book", []Intent{unknown}, true},
		{"batch of spot submits", []Intent{spot, ioc, mkt, h.limit(Sell, 2, 130, FlagPostOnly)}, true},
		{"cancel", []Intent{cancel}, false},
		{"update", []Intent{update}, false},
		{"transfer", []Intent{transfer}, false},
		{"perp submit", []Intent{perp}, false},
		{"submit trigger", []Intent{trig}, false},
		{"cancel trigger", []Intent{cancelTrig}, false},
		{"update trigger", []Intent{updateTrig}, false},
		{"spot submits and a cancel", []Intent{spot, ioc, cancel}, false},
		{"spot submit and a perp submit", []Intent{spot, perp}, false},
		{"spot submit and a transfer", []Intent{transfer, spot}, false},
		{"spot submit and a trigger", []Intent{spot, trig}, false},
		{"unknown kind", []Intent{{Kind: 99, Book: tBookID}}, false},
	}
	for _, c := range cases {
		env := &Envelope{Intents: c.in}
		if got := h.e.Stageable(env); got != c.want {
			t.Errorf("%s: Stageable %v, want %v", c.name, got, c.want)
		}
		if !c.want {
			mustPanic(t, "a staged admission of "+c.name, func() {
				a := Admission{Signer: owner("a"), Owner: owner("a"), Nonce: 1000, NowUs: h.nowUs, Staged: true}
				h.e.Admit(&a, env, h.acc)
			})
			if h.e.Staging() {
				t.Fatalf("%s: a refused staged admission started staging", c.name)
			}
		}
	}
	// The Stageable ones are admitted staged, and answered as ever.
	for i, c := range cases {
		if !c.want {
			continue
		}
		a := Admission{Signer: owner("a"), Owner: owner("a"), Nonce: uint64(2000 + i), NowUs: h.nowUs, Staged: true}
		r := h.e.Admit(&a, &Envelope{Intents: c.in}, h.acc)
		want := OK
		switch c.name {
		case "invalid spot submit":
			want = ReasonSizeZero
		case "submit on an unknown book":
			want = ReasonUnknownBook
		}
		if r != want {
			t.Errorf("staged %s: %v, want %v", c.name, r, want)
		}
	}
	if !h.e.Staging() {
		t.Fatal("staged admissions did not start staging")
	}
	h.e.JoinStaged()
	if err := checkEngine(h.e, h.acc); err != nil {
		t.Fatal(err)
	}
	if r := h.admit("a", nil, cancel); r != OK { // after JoinStaged, any input
		t.Fatalf("cancel after JoinStaged: %v", r)
	}
	h.tick()
}
