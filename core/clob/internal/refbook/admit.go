package refbook

import (
	"math/big"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
)

// lockOp is a Lock or Unlock that an envelope will make if it is admitted.
type lockOp struct {
	token, owner clob.Address
	amount       uint256.Int
	unlock       bool
}

type reservedUndo struct {
	o              *order
	old, settled   uint256.Int
	pendingUpdates int
}

// stage is one envelope being admitted: the engine state is changed intent
// by intent (so each intent sees the ones before it), the money moves are
// only recorded, and rollback undoes the state changes if an intent fails.
type stage struct {
	e          *Engine
	acc        clob.Accounts
	a          *clob.Admission
	envSeq     uint64
	ops        []lockOp
	created    []*order
	reserved   []reservedUndo
	pendingLen []int // per book, before the envelope
	transfers  int
}

// Admit validates and applies an envelope atomically: every intent or none.
func (e *Engine) Admit(a *clob.Admission, env *clob.Envelope, acc clob.Accounts) clob.Reason {
	s := &stage{e: e, acc: acc, a: a, envSeq: e.envSeq + 1, transfers: len(e.transfers)}
	for _, b := range e.books {
		s.pendingLen = append(s.pendingLen, len(b.pending))
	}
	for i := range env.Intents {
		if r := s.admit(&env.Intents[i], uint32(i)); r != clob.OK {
			s.rollback()
			return r
		}
	}
	e.envSeq = s.envSeq
	for i := range s.ops {
		op := &s.ops[i]
		if op.unlock {
			acc.Unlock(op.token, op.owner, &op.amount)
		} else {
			acc.Lock(op.token, op.owner, &op.amount)
		}
	}
	return clob.OK
}

func (s *stage) rollback() {
	e := s.e
	for i, b := range e.books {
		for j := s.pendingLen[i]; j < len(b.pending); j++ {
			b.pending[j] = nil
		}
		b.pending = b.pending[:s.pendingLen[i]]
	}
	for j := s.transfers; j < len(e.transfers); j++ {
		e.transfers[j] = nil
	}
	e.transfers = e.transfers[:s.transfers]
	for i := len(s.reserved) - 1; i >= 0; i-- {
		u := &s.reserved[i]
		u.o.reserved, u.o.settled, u.o.pendingUpdates = u.old, u.settled, u.pendingUpdates
	}
	for _, o := range s.created {
		o.live = false
		o.bk.live--
		delete(e.byID, o.id)
	}
	for _, b := range e.books {
		b.compact()
	}
}

// available reports whether amount fits in the owner's available cash as
// the envelope's earlier intents left it.
func (s *stage) available(token, owner clob.Address, amount *uint256.Int) bool {
	have := s.acc.Available(token, owner)
	need := *amount
	for i := range s.ops {
		op := &s.ops[i]
		if op.token != token || op.owner != owner {
			continue
		}
		if op.unlock {
			have = add(&have, &op.amount)
		} else {
			need = add(&need, &op.amount)
		}
	}
	return !have.Lt(&need)
}

func (s *stage) lock(token, owner clob.Address, amount *uint256.Int, unlock bool) {
	if amount.IsZero() {
		return
	}
	s.ops = append(s.ops, lockOp{token: token, owner: owner, amount: *amount, unlock: unlock})
}

func landing(nowUs, intervalUs int64) int64 { return (nowUs/intervalUs + 1) * intervalUs }

// checkDeadline is admission check 2.
func checkDeadline(deadline uint64, intervalUs int64, ran bool, lastTickUs, nowUs int64) clob.Reason {
	if deadline%uint64(intervalUs) != 0 {
		return clob.ReasonDeadlineAlign
	}
	if ran && deadline <= uint64(lastTickUs) {
		return clob.ReasonDeadlinePast
	}
	if deadline < uint64(landing(nowUs, intervalUs)) {
		return clob.ReasonDeadlinePast
	}
	if deadline > uint64(nowUs)+clob.DeadlineAheadMaxUs {
		return clob.ReasonDeadlineFar
	}
	return clob.OK
}

func (s *stage) admit(in *clob.Intent, seq uint32) clob.Reason {
	e := s.e
	if in.Kind == clob.IntentTransfer {
		r := checkDeadline(in.Deadline, clob.TransferIntervalUs, e.transfersRan, e.transfersLastTickUs, s.a.NowUs)
		if r != clob.OK {
			return r
		}
		return s.transfer(in)
	}
	trigger := in.Kind >= clob.IntentSubmitTrigger && in.Kind <= clob.IntentUpdateTrigger
	if in.Kind != clob.IntentSubmit && in.Kind != clob.IntentCancel && in.Kind != clob.IntentUpdate && !trigger {
		return clob.ReasonUnknownFunction
	}
	b := e.book(in.Book)
	if b == nil {
		return clob.ReasonUnknownBook
	}
	if trigger && (b.cfg.Kind != clob.Perp || e.perp == nil) {
		return clob.ReasonTriggerSpot // every trigger intent, before the deadline (docs/perps.md)
	}
	if r := checkDeadline(in.Deadline, b.cfg.IntervalUs, b.ran, b.lastTickUs, s.a.NowUs); r != clob.OK {
		return r
	}
	if trigger {
		return s.trigger(b, in, seq)
	}
	switch in.Kind {
	case clob.IntentSubmit:
		return s.submit(b, in, seq)
	case clob.IntentCancel:
		return s.cancel(b, in)
	default:
		return s.update(b, in)
	}
}

func (s *stage) newIntent(kind clob.IntentKind, in *clob.Intent) *intent {
	s.e.intentSeq++
	return &intent{kind: kind, envSeq: s.envSeq, tag: s.a.Tag, admitUs: s.a.NowUs, deadline: in.Deadline}
}

func (s *stage) submit(b *book, in *clob.Intent, seq uint32) clob.Reason {
	f := in.Flags
	if f&^(clob.FlagReduceOnly|clob.FlagIOC|clob.FlagPostOnly) != 0 {
		return clob.ReasonFlagsUnknown
	}
	ioc, po := f&clob.FlagIOC != 0, f&clob.FlagPostOnly != 0
	if ioc && po {
		return clob.ReasonIOCPostOnly
	}
	switch in.Type {
	case clob.Limit:
	case clob.Market:
		if po {
			return clob.ReasonMarketPostOnly
		}
		if !ioc {
			return clob.ReasonMarketNotIOC
		}
	default:
		return clob.ReasonOrderType
	}
	if f&clob.FlagReduceOnly != 0 && b.cfg.Kind == clob.Spot {
		return clob.ReasonReduceOnlySpot
	}
	if in.Side != clob.Buy && in.Side != clob.Sell {
		return clob.ReasonMalformed
	}
	lots, r := Units(&in.Size, &b.cfg.LotSize, clob.ReasonSizeZero, clob.ReasonSizeLot)
	if r != clob.OK {
		return r
	}
	priceSteps, r := Units(&in.Price, &b.cfg.TickPrecision, clob.ReasonPriceZero, clob.ReasonPriceStep)
	if r != clob.OK {
		return r
	}
	token := b.backing(in.Side)
	if b.cfg.Kind == clob.Perp {
		if lots, r = s.perpOrder(b, in.Side, lots, f, 0); r != clob.OK {
			return r
		}
	}
	res := b.reservation(in.Side, lots, priceSteps)
	if !s.available(token, s.a.Owner, &res) {
		return clob.ReasonInsufficientBalance
	}
	if b.live+1 > s.e.limits.OrdersMax || len(b.pending)+1 > s.e.limits.PendingMax {
		return clob.ReasonBookFull
	}
	id := OrderID(s.a.Signer, s.a.Nonce, seq)
	if _, dup := s.e.byID[id]; dup {
		panic("BUG: order id admitted twice (signer and nonce reused)")
	}
	it := s.newIntent(clob.IntentSubmit, in)
	o := &order{
		id: id, bk: b, owner: s.a.Owner, side: in.Side, typ: in.Type, flags: f, ttl: in.TTL,
		priceSteps: priceSteps, remLots: lots, sizeLots: lots, reserved: res,
		live: true, pending: true, admitSeq: s.e.intentSeq, deadlineUs: int64(in.Deadline),
	}
	it.ord = o
	s.e.byID[id] = o
	b.orders = append(b.orders, o)
	b.live++
	b.pending = append(b.pending, it)
	s.created = append(s.created, o)
	s.lock(token, s.a.Owner, &res, false)
	return clob.OK
}

// target is check 4's common part for cancel and update.
func (s *stage) target(b *book, in *clob.Intent) (*order, clob.Reason) {
	o, ok := s.e.byID[in.OrderID]
	if !ok || !o.live || o.bk != b {
		return nil, clob.ReasonUnknownOrder
	}
	if o.owner != s.a.Owner {
		return nil, clob.ReasonNotOwner
	}
	return o, clob.OK
}

func (s *stage) cancel(b *book, in *clob.Intent) clob.Reason {
	o, r := s.target(b, in)
	if r != clob.OK {
		return r
	}
	if len(b.pending)+1 > s.e.limits.PendingMax {
		return clob.ReasonBookFull
	}
	it := s.newIntent(clob.IntentCancel, in)
	it.ord = o
	b.pending = append(b.pending, it)
	return clob.OK
}

func (s *stage) update(b *book, in *clob.Intent) clob.Reason {
	o, r := s.target(b, in)
	if r != clob.OK {
		return r
	}
	lots, r := Units(&in.Size, &b.cfg.LotSize, clob.ReasonSizeZero, clob.ReasonSizeLot)
	if r != clob.OK {
		return r
	}
	priceSteps, r := Units(&in.Price, &b.cfg.TickPrecision, clob.ReasonPriceZero, clob.ReasonPriceStep)
	if r != clob.OK {
		return r
	}
	// (reading) update's token argument is informational: the order's own
	// side decides what backs it.
	token := b.backing(o.side)
	// (reading) "a larger one locks the difference": larger than what the
	// order holds now, which after fills may exceed reservation(remaining)
	// by the fee rounding left over from its earlier chunks.
	if b.cfg.Kind == clob.Perp {
		if lots, r = s.perpOrder(b, o.side, lots, o.flags, b.exposureLots(o)); r != clob.OK {
			return r
		}
	}
	res := b.reservation(o.side, lots, priceSteps)
	var up, down uint256.Int
	if res.Gt(&o.reserved) {
		up = sub(&res, &o.reserved)
		if !s.available(token, s.a.Owner, &up) {
			return clob.ReasonInsufficientBalance
		}
	} else {
		down = sub(&o.reserved, &res)
	}
	if len(b.pending)+1 > s.e.limits.PendingMax {
		return clob.ReasonBookFull
	}
	it := s.newIntent(clob.IntentUpdate, in)
	it.ord = o
	it.newLots, it.newSteps = lots, priceSteps
	it.lockUp, it.lockDown = up, down
	s.reserved = append(s.reserved, reservedUndo{o: o, old: o.reserved, settled: o.settled, pendingUpdates: o.pendingUpdates})
	if o.pendingUpdates == 0 {
		o.settled = o.reserved
	}
	o.pendingUpdates++
	o.reserved = res
	b.pending = append(b.pending, it)
	s.lock(token, s.a.Owner, &up, false)
	s.lock(token, s.a.Owner, &down, true)
	return clob.OK
}

func (s *stage) transfer(in *clob.Intent) clob.Reason {
	if in.Amount.IsZero() {
		return clob.ReasonTransferZero
	}
	if !s.available(in.Token, s.a.Owner, &in.Amount) {
		return clob.ReasonInsufficientBalance
	}
	if len(s.e.transfers)+1 > s.e.limits.PendingMax {
		return clob.ReasonBookFull
	}
	it := s.newIntent(clob.IntentTransfer, in)
	it.owner, it.token, it.to, it.amount = s.a.Owner, in.Token, in.To, in.Amount
	s.e.transfers = append(s.e.transfers, it)
	s.lock(in.Token, s.a.Owner, &in.Amount, false)
	return clob.OK
}

// stagedLock is what the envelope's earlier intents lock (minus unlock) in
// token for owner.
func (s *stage) stagedLock(token, owner clob.Address) *big.Int {
	z := new(big.Int)
	for i := range s.ops {
		op := &s.ops[i]
		if op.token != token || op.owner != owner {
			continue
		}
		if op.unlock {
			z.Sub(z, op.amount.ToBig())
		} else {
			z.Add(z, op.amount.ToBig())
		}
	}
	return z
}

// perpOrder is the perp layer's admission check of an order (or update).
func (s *stage) perpOrder(b *book, side clob.Side, lots int64, flags uint8, replaced int64) (int64, clob.Reason) {
	if s.e.perp == nil {
		return 0, clob.ReasonMalformed
	}
	return s.e.perp.AdmitOrder(s.a.Owner, b.cfg.ID, side, lots, flags, replaced, s.stagedLock(b.cfg.Quote, s.a.Owner))
}

// trigger admits a trigger intent: the perp layer validates it, the pending
// ring carries its payload to the book's tick.
func (s *stage) trigger(b *book, in *clob.Intent, seq uint32) clob.Reason {
	payload, r := s.e.perp.AdmitTrigger(s.a, in, seq, b.cfg.ID)
	if r != clob.OK {
		return r
	}
	if len(b.pending)+1 > s.e.limits.PendingMax {
		return clob.ReasonBookFull
	}
	it := s.newIntent(in.Kind, in)
	it.ext = payload
	b.pending = append(b.pending, it)
	return clob.OK
}
