package clob

import (
	"github.com/holiman/uint256"
)

// Admission during a tick (docs/decisions.md, "Admission during a tick").
//
// A live tick runs in three steps: BeginTick (under the caller's lock),
// ClearConcurrent (without it: the leading spot books clear), and Tick,
// which finishes the tick under the lock again. Between BeginTick and the
// end of Tick the engine stages admissions (Admission.Staged): they are
// checked against the state as it was when the tick began (each book's
// last tick, live orders and pending intents, frozen in book.frz, plus
// what earlier staged admissions took), their reservations are locked in
// the caller's accounts at once, and their orders enter the books only
// when the tick has ended (JoinStaged), so the tick cannot fill them.
//
// Two goroutines then use the engine at once, and never the same memory:
//   - ClearConcurrent runs only spot books whose pending ring holds no
//     update (a dropped update's reconcile reads free cash), and writes
//     the accounts through a recorder (deferredAccounts) that Tick
//     replays into the real accounts in the same order: the clearing
//     never reads an account, so it sees nothing the admissions change;
//   - a staged admission reads the books' frozen facts, the markets'
//     configuration, the perp state (untouched until Tick) and the
//     accounts, and writes the accounts and the staging queue.
//
// Only envelopes of new orders on spot books are staged (Stageable): a
// cancel or an update reads the order the tick is filling, a perp order
// the margin the tick moves. The caller makes the others wait for the
// tick's end.
//
// A replay runs the same inputs in log order — the staged admissions,
// then the tick — through Admit (still Staged) and a plain Tick, which
// joins the staged orders when it ends: the engine's state and the
// sequence of account operations are the same as the live run's, so is
// the state hash. A staged run with no tick after it (the node stopped
// mid-tick) is joined before the next input that is not staged, or at the
// end of the next tick, whichever comes first — by the live node after a
// restart and by a replay alike.

// bookFacts is what a staged admission reads of its book instead of the
// book itself, frozen when staging began.
type bookFacts struct {
	lastTickUs    int64
	live, pending int
	staged        int // orders staged on this book since
}

// stagedOrder is a staged admission's new order, waiting for the tick's
// end to enter its book.
type stagedOrder struct {
	b                 *book
	id                Hash
	owner             Address
	side              Side
	typ               OrderType
	flags             uint8
	lots, steps       int64
	deadlineUs, ttlUs uint64
	landUs            int64
	seq, tag          uint64
	reserved          uint256.Int
}

// staging is the queue of staged orders; on while a tick runs live, or
// while a replay reads the staged admissions before their tick.
type staging struct {
	on     bool
	orders []stagedOrder
}

// concurrentTick is the tick BeginTick began.
type concurrentTick struct {
	begun  bool
	tickUs int64
	end    int // books[:end] clear in ClearConcurrent (those due)
	out    *TickResult
}

// Staging reports whether staged admissions wait to join their books: a
// snapshot must wait until they have.
func (e *Engine) Staging() bool { return e.stg.on }

// Stageable reports whether an envelope can be admitted while a tick
// clears: new orders on spot books only (an unknown book is refused by
// the checks, as ever).
func (e *Engine) Stageable(env *Envelope) bool {
	for i := range env.Intents {
		in := &env.Intents[i]
		if in.Kind != IntentSubmit {
			return false
		}
		if b := e.book(in.Book); b != nil && b.perp != nil {
			return false
		}
	}
	return true
}

// startStaging freezes what staged admissions read of each book. A
// staging already on (a replay's, or a restarted node's staged run) goes
// on: nothing changed the books since it began.
func (e *Engine) startStaging() {
	if e.stg.on {
		return
	}
	e.stg.on = true
	for _, b := range e.books {
		b.frz = bookFacts{lastTickUs: b.lastTickUs, live: b.live(), pending: b.pending.len()}
	}
}

// JoinStaged enters the staged orders into their books, in admission
// order, and ends staging. Tick calls it when it ends; the caller calls
// it before applying any input other than a staged admission or a tick.
func (e *Engine) JoinStaged() {
	if e.ct.begun {
		panic("BUG: JoinStaged during a tick")
	}
	for i := range e.stg.orders {
		o := &e.stg.orders[i]
		r := o.b.newOrder(&o.id, o.owner, o.side, o.typ, o.flags, o.lots, o.steps, o.deadlineUs, o.ttlUs, &o.reserved)
		o.b.pending.push(&pendingIntent{kind: IntentSubmit, ref: r, deadlineUs: o.deadlineUs, landUs: o.landUs, seq: o.seq, tag: o.tag})
	}
	clear(e.stg.orders) // drop the book pointers
	e.stg.orders = e.stg.orders[:0]
	for _, b := range e.books {
		b.frz.staged = 0
	}
	e.stg.on = false
}

// applyStaged carries out a validated staged envelope: every intent is a
// spot submit (Stageable). It cannot fail.
func (e *Engine) applyStaged(a *Admission, env *Envelope, acc Accounts) {
	seq := e.seq
	e.seq++
	for i := range env.Intents {
		in, p := &env.Intents[i], &e.adm.plans[i]
		acc.Lock(p.token, a.Owner, &p.amount)
		e.stg.orders = append(e.stg.orders, stagedOrder{
			b: p.b, id: e.adm.created[p.created].id, owner: a.Owner, side: in.Side, typ: in.Type, flags: in.Flags,
			lots: p.lots, steps: p.steps, deadlineUs: in.Deadline, ttlUs: in.TTL,
			landUs: p.b.u.landing(a.NowUs), seq: seq, tag: a.Tag, reserved: p.amount,
		})
		p.b.frz.staged++
	}
}

// lastTickOf is the book's last tick as an admission sees it.
func (e *Engine) lastTickOf(b *book) int64 {
	if e.stg.on {
		return b.frz.lastTickUs
	}
	return b.lastTickUs
}

// countsOf is the book's live orders and pending intents as an admission
// sees them: a staged order counts as both.
func (e *Engine) countsOf(b *book) (live, pending int) {
	if e.stg.on {
		return b.frz.live + b.frz.staged, b.frz.pending + b.frz.staged
	}
	return b.live(), b.pending.len()
}

// BeginTick begins the tick at tickUs: staging starts, out is reset, and
// the leading due spot books without pending updates are chosen for
// ClearConcurrent. Tick(tickUs, …, out) finishes it.
// REQUIRES: no tick begun; tickUs ≥ 0.
func (e *Engine) BeginTick(tickUs int64, out *TickResult) {
	if e.ct.begun || tickUs < 0 {
		panic("BUG: BeginTick during a tick, or at a negative time")
	}
	e.startStaging()
	e.resetTick(tickUs, out)
	end := 0
	for i, b := range e.books {
		if b.due(tickUs) && (b.perp != nil || b.updates > 0) {
			break
		}
		end = i + 1
	}
	e.ct = concurrentTick{begun: true, tickUs: tickUs, end: end, out: out}
	e.rec.ops = e.rec.ops[:0]
}

// ClearConcurrent clears the books BeginTick chose, recording what they
// do to the accounts. It may run while staged admissions do (Admit with
// Admission.Staged), but not with any other method.
// REQUIRES: BeginTick, and not yet Tick.
func (e *Engine) ClearConcurrent() {
	ct := &e.ct
	if !ct.begun {
		panic("BUG: ClearConcurrent without BeginTick")
	}
	for _, b := range e.books[:ct.end] {
		if b.due(ct.tickUs) {
			e.runBook(b, ct.tickUs, &e.rec, ct.out)
		}
	}
}

// resetTick empties out for the tick at tickUs.
func (e *Engine) resetTick(tickUs int64, out *TickResult) {
	out.TickUs = tickUs
	out.Books, out.Events, out.Landed = out.Books[:0], out.Events[:0], out.Landed[:0]
	e.tk.landed = e.tk.landed[:0]
}

// accountOp is one call ClearConcurrent made to the accounts.
type accountOp struct {
	kind         uint8
	token, owner Address
	amount       uint256.Int
}

const (
	opLock uint8 = iota
	opUnlock
	opSpendLocked
	opCredit
	opCollectFee
)

// deferredAccounts records a concurrent clearing's calls to the accounts,
// to replay them in order when the tick finishes. A spot book without
// pending updates only writes the accounts; a read would see them before
// the staged admissions the log puts ahead of the tick, so it is a bug.
type deferredAccounts struct {
	ops []accountOp
}

var _ Accounts = (*deferredAccounts)(nil)

func (d *deferredAccounts) add(kind uint8, token, owner Address, amount *uint256.Int) {
	d.ops = append(d.ops, accountOp{kind: kind, token: token, owner: owner, amount: *amount})
}

func (d *deferredAccounts) Lock(token, owner Address, amount *uint256.Int) {
	d.add(opLock, token, owner, amount)
}

func (d *deferredAccounts) Unlock(token, owner Address, amount *uint256.Int) {
	d.add(opUnlock, token, owner, amount)
}

func (d *deferredAccounts) SpendLocked(token, owner Address, amount *uint256.Int) {
	d.add(opSpendLocked, token, owner, amount)
}

func (d *deferredAccounts) Credit(token, owner Address, amount *uint256.Int) {
	d.add(opCredit, token, owner, amount)
}

func (d *deferredAccounts) CollectFee(token Address, amount *uint256.Int) {
	d.add(opCollectFee, token, Address{}, amount)
}

func (d *deferredAccounts) Available(Address, Address) uint256.Int {
	panic("BUG: a concurrent clearing read an account")
}

func (d *deferredAccounts) Debit(Address, Address, *uint256.Int) {
	panic("BUG: a concurrent clearing debited an account")
}

func (d *deferredAccounts) Holding(Address, Address) (cash, locked, debt uint256.Int) {
	panic("BUG: a concurrent clearing read an account")
}

// replay applies the recorded calls to acc, in order, and forgets them.
func (d *deferredAccounts) replay(acc Accounts) {
	for i := range d.ops {
		op := &d.ops[i]
		switch op.kind {
		case opLock:
			acc.Lock(op.token, op.owner, &op.amount)
		case opUnlock:
			acc.Unlock(op.token, op.owner, &op.amount)
		case opSpendLocked:
			acc.SpendLocked(op.token, op.owner, &op.amount)
		case opCredit:
			acc.Credit(op.token, op.owner, &op.amount)
		case opCollectFee:
			acc.CollectFee(op.token, &op.amount)
		}
	}
	d.ops = d.ops[:0]
}
