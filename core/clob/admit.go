package clob

import "github.com/holiman/uint256"

// pendingTransfer is an admitted transfer waiting for its tick.
type pendingTransfer struct {
	owner, token, to Address
	amount           uint256.Int
	deadlineUs       uint64
	landUs           int64
	seq, tag         uint64
}

// plan is what validation decided for one intent; apply carries it out.
type plan struct {
	b          *book
	target     orderRef // cancel, update: an order admitted before this envelope
	created    int      // index into admitScratch.created: a submit's own order, or a target the envelope created; -1 = none
	lots       int64
	steps      int64
	side       Side
	neg        bool        // update: amount is released, not locked
	token      Address     // what amount locks
	amount     uint256.Int // submit: reservation; update: |delta|; transfer: amount
	newReserve uint256.Int // update: the new reservation
}

// createdOrder is an order the envelope itself creates.
type createdOrder struct {
	id       Hash
	b        *book
	side     Side
	flags    uint8
	lots     int64
	ref      orderRef    // set by apply
	reserved uint256.Int // projected reservation
}

// overlay is the projected reservation of an older order the envelope updates.
type overlay struct {
	b        *book
	ref      orderRef
	reserved uint256.Int
	lots     int64 // projected remaining lots (perp margin)
}

// funds tracks what the envelope locks and releases of one token.
type funds struct {
	token        Address
	avail        uint256.Int
	lock, unlock uint256.Int
}

// bookUse counts what the envelope adds to one book: orders and pending
// intents, and on a perp book the lots its orders add to B and A.
type bookUse struct {
	b               *book
	orders, pending int
	bid, ask        int64
}

// admitScratch is the per-envelope validation state: at most one entry of
// each kind per intent, so fixed arrays of BatchIntentsMax suffice.
type admitScratch struct {
	plans     [BatchIntentsMax]plan
	created   [BatchIntentsMax]createdOrder
	overlays  [BatchIntentsMax]overlay
	funds     [BatchIntentsMax]funds
	uses      [BatchIntentsMax]bookUse
	nCreated  int
	nOverlays int
	nFunds    int
	nUses     int
	transfers int
	prepared  bool // the envelope's IDs are this admission's (PrepareIDs)
	trig      triggerScratch
	tmp       uint256.Int
}

// Admit validates and applies an envelope atomically: every intent or none.
// REQUIRES: a.NowUs ≥ 0 and never decreases; (Signer, Nonce) is never
// admitted twice (order ids must be unique).
func (e *Engine) Admit(a *Admission, env *Envelope, acc Accounts) Reason {
	if a.NowUs < 0 {
		panic("BUG: negative admission time")
	}
	if len(env.Intents) == 0 || len(env.Intents) > BatchIntentsMax {
		return ReasonBatchSize
	}
	if a.Staged {
		if !e.Stageable(env) {
			panic("BUG: a staged admission of an envelope that is not Stageable")
		}
		e.startStaging()
	} else if e.stg.on {
		panic("BUG: an admission that is not staged while the engine stages")
	}
	s := &e.adm
	s.nCreated, s.nOverlays, s.nFunds, s.nUses, s.transfers, s.trig.n = 0, 0, 0, 0, 0, 0
	s.prepared = env.preparedFor(a.Signer, a.Nonce)
	if s.prepared && !a.Staged { // a staged admission must not read the index a tick writes
		// A new order's id probes a random line of its book's index:
		// fetch it while the intents are checked.
		for i := range env.Intents {
			if in := &env.Intents[i]; in.Kind == IntentSubmit {
				if b := e.book(in.Book); b != nil {
					b.index.prefetch(&in.ID)
				}
			}
		}
	}
	for i := range env.Intents {
		if r := e.check(a, &env.Intents[i], i, acc); r != OK {
			return r
		}
	}
	if a.Staged {
		e.applyStaged(a, env, acc)
	} else {
		e.apply(a, env, acc)
	}
	return OK
}

// check validates intent i against the state left by intents 0..i-1 and
// records its plan.
func (e *Engine) check(a *Admission, in *Intent, i int, acc Accounts) Reason {
	p := &e.adm.plans[i]
	*p = plan{created: -1}
	if in.Kind == IntentTransfer {
		return e.checkTransfer(a, in, p, acc)
	}
	if in.Kind >= IntentSubmitTrigger && in.Kind <= IntentUpdateTrigger {
		return e.checkTrigger(a, in, i, p, acc)
	}
	if in.Kind < IntentSubmit || in.Kind > IntentUpdate {
		return ReasonMalformed
	}
	b := e.book(in.Book)
	if b == nil {
		return ReasonUnknownBook
	}
	p.b = b
	if r := checkDeadline(in.Deadline, a.NowUs, &b.u.ivDiv, e.lastTickOf(b)); r != OK {
		return r
	}
	var r Reason
	switch in.Kind {
	case IntentSubmit:
		r = e.checkSubmit(a, in, i, p, acc)
	case IntentCancel:
		r = e.checkTarget(a, in, p)
	case IntentUpdate:
		if r = e.checkTarget(a, in, p); r == OK {
			r = e.checkUpdate(a, in, p, acc)
		}
	}
	if r != OK {
		return r
	}
	return e.checkCapacity(b, in.Kind == IntentSubmit)
}

// checkDeadline applies admission rule 2 for a grid of interval whose last
// executed tick is lastUs.
func checkDeadline(d uint64, nowUs int64, interval *divisor, lastUs int64) Reason {
	q, rem := interval.divRem(0, d)
	nq, _ := interval.divRem(0, uint64(nowUs))
	switch {
	case rem != 0:
		return ReasonDeadlineAlign
	case d <= uint64(lastUs) || q <= nq: // d < landing(nowUs), d being aligned
		return ReasonDeadlinePast
	case d-uint64(nowUs) > DeadlineAheadMaxUs:
		return ReasonDeadlineFar
	}
	return OK
}

// checkCapacity applies rule 6: OrdersMax live orders, PendingMax pending
// intents per book, counting what the envelope already added.
func (e *Engine) checkCapacity(b *book, newOrder bool) Reason {
	u := e.useOf(b)
	live, pending := e.countsOf(b)
	if newOrder && live+u.orders >= b.ordersMax {
		return ReasonBookFull
	}
	if pending+u.pending >= len(b.pending.buf) {
		return ReasonBookFull
	}
	if newOrder {
		u.orders++
	}
	u.pending++
	return OK
}

// useOf returns the envelope's use of book b, creating it.
func (e *Engine) useOf(b *book) *bookUse {
	s := &e.adm
	for i := range s.nUses {
		if s.uses[i].b == b {
			return &s.uses[i]
		}
	}
	u := &s.uses[s.nUses]
	*u = bookUse{b: b}
	s.nUses++
	return u
}

func (e *Engine) checkSubmit(a *Admission, in *Intent, i int, p *plan, acc Accounts) Reason {
	b := p.b
	switch {
	case in.Type != Limit && in.Type != Market:
		return ReasonOrderType
	case in.Side > Sell:
		return ReasonMalformed
	case in.Flags&^flagsKnown != 0:
		return ReasonFlagsUnknown
	case in.Flags&(FlagIOC|FlagPostOnly) == FlagIOC|FlagPostOnly:
		return ReasonIOCPostOnly
	case in.Type == Market && in.Flags&FlagPostOnly != 0:
		return ReasonMarketPostOnly
	case in.Type == Market && in.Flags&FlagIOC == 0:
		return ReasonMarketNotIOC
	case in.Flags&FlagReduceOnly != 0 && b.cfg.Kind == Spot:
		return ReasonReduceOnlySpot
	}
	var r Reason
	if p.lots, r = b.u.toLots(&in.Size, ReasonSizeZero, ReasonSizeLot); r != OK {
		return r
	}
	if p.steps, r = b.u.toSteps(&in.Price, ReasonPriceZero, ReasonPriceStep); r != OK {
		return r
	}
	p.side, p.token = in.Side, b.u.backing(in.Side)
	if b.perp != nil {
		// A perp order reserves nothing: the margin check stands for it.
		if p.lots, r = e.perpAdmit(a.Owner, b, in.Side, p.lots, in.Flags, true, acc); r != OK {
			return r
		}
	} else {
		b.u.reserve(&p.amount, &e.adm.tmp, in.Side, p.lots, p.steps)
		if r = e.need(a, p.token, &p.amount, acc); r != OK {
			return r
		}
	}
	c := &e.adm.created[e.adm.nCreated]
	*c = createdOrder{b: b, side: in.Side, flags: in.Flags, lots: p.lots, reserved: p.amount}
	e.newID(&c.id, a, in, i) // newOrder's index insert panics if it is live
	p.created = e.adm.nCreated
	e.adm.nCreated++
	return OK
}

// newID sets id to the id of the order or trigger intent i creates: the
// envelope's prepared one, else hashed here.
func (e *Engine) newID(id *Hash, a *Admission, in *Intent, i int) {
	if e.adm.prepared {
		*id = in.ID
		return
	}
	e.idh.orderID(id, a.Signer, a.Nonce, uint32(i))
}

// checkTarget applies rule 4's liveness and ownership checks.
func (e *Engine) checkTarget(a *Admission, in *Intent, p *plan) Reason {
	s := &e.adm
	for i := range s.nCreated {
		if s.created[i].id == in.OrderID {
			if s.created[i].b != p.b {
				return ReasonUnknownOrder
			}
			p.created, p.side = i, s.created[i].side
			return OK
		}
	}
	slot := p.b.index.find(&in.OrderID, p.b.ords)
	if slot == 0 {
		return ReasonUnknownOrder
	}
	r := makeRef(slot, p.b.nodes[slot].gen)
	if p.b.ords[r.slot()].owner != a.Owner {
		return ReasonNotOwner
	}
	p.target, p.side = r, p.b.nodes[r.slot()].side
	return OK
}

// checkUpdate applies the rest of rule 4 to an update whose target
// checkTarget found.
func (e *Engine) checkUpdate(a *Admission, in *Intent, p *plan, acc Accounts) Reason {
	b := p.b
	var r Reason
	if p.lots, r = b.u.toLots(&in.Size, ReasonSizeZero, ReasonSizeLot); r != OK {
		return r
	}
	if p.steps, r = b.u.toSteps(&in.Price, ReasonPriceZero, ReasonPriceStep); r != OK {
		return r
	}
	// The resting order's side decides the token; update's token argument
	// is informational (the live rule: the SDK passes the quote token for
	// any order).
	p.token = b.u.backing(p.side)
	if b.perp != nil {
		return e.checkPerpUpdate(a, p, acc)
	}
	b.u.reserve(&p.newReserve, &e.adm.tmp, p.side, p.lots, p.steps)
	cur, _ := e.projected(p)
	if p.newReserve.Lt(cur) {
		p.neg = true
		p.amount.Sub(cur, &p.newReserve)
		e.release(a, p.token, &p.amount, acc)
	} else {
		p.amount.Sub(&p.newReserve, cur)
		if r = e.need(a, p.token, &p.amount, acc); r != OK {
			return r
		}
	}
	*cur = p.newReserve
	return OK
}

// projected returns the reservation and the remaining lots the update's
// target holds after the envelope's earlier intents; writing through them
// records the update's.
func (e *Engine) projected(p *plan) (*uint256.Int, *int64) {
	s := &e.adm
	if p.created >= 0 {
		c := &s.created[p.created]
		return &c.reserved, &c.lots
	}
	for i := range s.nOverlays {
		if o := &s.overlays[i]; o.b == p.b && o.ref == p.target {
			return &o.reserved, &o.lots
		}
	}
	o := &s.overlays[s.nOverlays]
	s.nOverlays++
	sl := p.target.slot()
	*o = overlay{b: p.b, ref: p.target, reserved: p.b.ords[sl].reserved, lots: p.b.exposedLots(sl)}
	return &o.reserved, &o.lots
}

// fundsFor returns the envelope's running totals for token.
func (e *Engine) fundsFor(a *Admission, token Address, acc Accounts) *funds {
	s := &e.adm
	for i := range s.nFunds {
		if s.funds[i].token == token {
			return &s.funds[i]
		}
	}
	f := &s.funds[s.nFunds]
	s.nFunds++
	*f = funds{token: token, avail: acc.Available(token, a.Owner)}
	return f
}

// need adds amount to what the envelope locks of token, refusing it when
// the owner's available cash (plus what earlier intents released) is short.
// Native spends are limited to min(free cash, withdrawable) (docs/perps.md).
func (e *Engine) need(a *Admission, token Address, amount *uint256.Int, acc Accounts) Reason {
	f := e.fundsFor(a, token, acc)
	if token == NativeToken && len(e.pp.books) > 0 {
		// at most the free cash: unrealized profit backs margin, not spends
		f.avail = e.nativeFree(a.Owner, acc)
		if av := acc.Available(token, a.Owner); av.Lt(&f.avail) {
			f.avail = av
		}
	}
	if _, overflow := f.lock.AddOverflow(&f.lock, amount); overflow {
		return ReasonInsufficientBalance
	}
	var have uint256.Int
	if _, overflow := have.AddOverflow(&f.avail, &f.unlock); !overflow && f.lock.Gt(&have) {
		return ReasonInsufficientBalance
	}
	return OK
}

// release records that an intent frees amount of token.
func (e *Engine) release(a *Admission, token Address, amount *uint256.Int, acc Accounts) {
	f := e.fundsFor(a, token, acc)
	f.unlock.Add(&f.unlock, amount)
}

// checkTransfer applies rules 2, 5 and 6 to a transfer.
func (e *Engine) checkTransfer(a *Admission, in *Intent, p *plan, acc Accounts) Reason {
	if r := checkDeadline(in.Deadline, a.NowUs, &transferDiv, e.transferLastUs); r != OK {
		return r
	}
	if in.Amount.IsZero() {
		return ReasonTransferZero
	}
	p.token, p.amount = in.Token, in.Amount
	if r := e.need(a, p.token, &p.amount, acc); r != OK {
		return r
	}
	if e.transfers.len()+e.adm.transfers >= len(e.transfers.buf) {
		return ReasonBookFull
	}
	e.adm.transfers++
	return OK
}

// apply carries out the plans of a validated envelope. It cannot fail.
func (e *Engine) apply(a *Admission, env *Envelope, acc Accounts) {
	seq := e.seq
	e.seq++
	for i := range env.Intents {
		in, p := &env.Intents[i], &e.adm.plans[i]
		if in.Kind == IntentTransfer {
			e.transfers.push(&pendingTransfer{owner: a.Owner, token: in.Token, to: in.To, amount: in.Amount,
				deadlineUs: in.Deadline, landUs: landing(a.NowUs, TransferIntervalUs), seq: seq, tag: a.Tag})
			acc.Lock(in.Token, a.Owner, &e.transfers.at(e.transfers.len()-1).amount)
			continue
		}
		b := p.b
		q := pendingIntent{kind: in.Kind, deadlineUs: in.Deadline, landUs: b.u.landing(a.NowUs), seq: seq, tag: a.Tag}
		switch in.Kind {
		case IntentSubmitTrigger, IntentCancelTrigger, IntentUpdateTrigger:
			e.applyTrigger(a, in, p, &q, acc)
		case IntentSubmit:
			q.ref = e.applySubmit(a, in, p, acc)
		case IntentCancel:
			q.ref = e.targetRef(p)
		case IntentUpdate:
			q.ref = e.targetRef(p)
			q.newLots, q.newSteps, q.reserve = p.lots, p.steps, p.newReserve
			e.applyUpdate(a, q.ref.slot(), p, acc)
			b.updates++
		}
		b.pending.push(&q)
	}
}

func (e *Engine) targetRef(p *plan) orderRef {
	if p.created >= 0 {
		return e.adm.created[p.created].ref
	}
	return p.target
}

// applySubmit creates a pending order and locks its reservation.
func (e *Engine) applySubmit(a *Admission, in *Intent, p *plan, acc Accounts) orderRef {
	c := &e.adm.created[p.created]
	c.ref = p.b.newOrder(&c.id, a.Owner, in.Side, in.Type, in.Flags, p.lots, p.steps, in.Deadline, in.TTL, &p.amount)
	if p.b.perp != nil {
		e.perpOrderLive(p.b, c.ref.slot())
	} else {
		acc.Lock(p.token, a.Owner, &p.b.ords[c.ref.slot()].reserved)
	}
	return c.ref
}

// newOrder allocates a pending order in b, indexed by id. The caller
// locks its reservation (spot) or calls perpOrderLive (perp).
// REQUIRES: live() < OrdersMax; id is not live.
func (b *book) newOrder(id *Hash, owner Address, side Side, typ OrderType, flags uint8, lots, steps int64,
	deadlineUs, ttlUs uint64, reserved *uint256.Int) orderRef {
	r := b.alloc()
	s := r.slot()
	n, o := &b.nodes[s], &b.ords[s]
	n.state, n.side, n.typ, n.flags = statePending, side, typ, flags
	n.remLots, n.priceSteps = lots, steps
	o.id, o.owner, o.reserved = *id, owner, *reserved
	b.u.baseOf(&o.sizeBase, lots) // a reduce-only order's is the cut size
	o.deadlineUs, o.ttlUs = deadlineUs, ttlUs
	b.index.insert(id, s, b.ords)
	return r
}

// applyUpdate moves the order's reservation to the update's target at
// admission, remembering the order's actual reservation for the drain.
func (e *Engine) applyUpdate(a *Admission, s uint32, p *plan, acc Accounts) {
	o := &p.b.ords[s]
	if o.pendingUpdates == 0 {
		o.settled = o.reserved
	}
	exposed := p.b.exposedLots(s)
	o.pendingUpdates++
	o.projLots = p.lots
	e.expose(p.b, s, p.lots-exposed)
	o.reserved = p.newReserve
	if p.amount.IsZero() {
		return
	}
	if p.neg {
		acc.Unlock(p.token, a.Owner, &p.amount)
	} else {
		acc.Lock(p.token, a.Owner, &p.amount)
	}
}

// checkPerpUpdate applies the margin check to an update of a perp order:
// its change of size is checked as an order of that many lots (a shrink
// never raises IMo). A reduce-only order needs no margin; its new size is
// cut to the position as a submit's is.
func (e *Engine) checkPerpUpdate(a *Admission, p *plan, acc Accounts) Reason {
	var flags uint8
	if p.created >= 0 {
		flags = e.adm.created[p.created].flags
	} else {
		flags = p.b.nodes[p.target.slot()].flags
	}
	if flags&FlagReduceOnly != 0 {
		var r Reason
		p.lots, r = e.perpAdmit(a.Owner, p.b, p.side, p.lots, flags, true, acc)
		return r
	}
	_, cur := e.projected(p)
	if _, r := e.perpAdmit(a.Owner, p.b, p.side, p.lots-*cur, 0, true, acc); r != OK {
		return r
	}
	*cur = p.lots
	return OK
}
