package clob

import (
	"bytes"
	"math"
	"math/bits"
	"slices"

	"github.com/holiman/uint256"
)

// fundingDen is 1e18 × the 8-hour window in µs: f = rate·2P·dt / fundingDen.
var fundingDen = new(uint256.Int).Mul(wad, uint256.NewInt(FundingWindowUs))

// perpTick runs the perp markets' part of a tick after matching: oracle,
// mark, funding, liquidation (docs/perps.md).
func (e *Engine) perpTick(tickUs int64, acc Accounts, out *TickResult) {
	ran := false
	for _, b := range e.pp.books {
		pb := b.perp
		pb.f = 0
		if b.lastTickUs != tickUs || pb.lastUs >= tickUs {
			continue
		}
		ran = true
		dt := int64(0)
		if pb.started {
			dt = min(tickUs-pb.lastUs, perpDtMaxUs)
		}
		pb.lastUs = tickUs
		switch {
		case pb.gapUntil != 0 && tickUs >= pb.gapUntil:
			pb.move(pb.gapBps) // the feed comes back, moved: instead of this tick's walk
			pb.gapUntil, pb.gapBps = 0, 0
		case pb.gapUntil != 0: // a stale feed: the oracle holds
		case !pb.frozen && pb.walkBps > 0:
			pb.walk(tickUs)
		}
		pb.markAt(b, tickUs, dt)
		pb.fund(b, dt)
		pb.started = true
	}
	if ran {
		e.perpScan(tickUs, acc, out)
	}
}

// walk moves the oracle one random step: a pure function of the seed and
// the tick time.
func (pb *perpBook) walk(tickUs int64) {
	if splitmix64(pb.seed^uint64(tickUs))&1 == 1 {
		pb.move(pb.walkBps)
	} else {
		pb.move(-pb.walkBps)
	}
}

// move moves the oracle by bps basis points of itself, at least one step,
// within [1, unitsMax]. REQUIRES: 0 < |bps| <= 10 000.
func (pb *perpBook) move(bps int64) {
	p, up := pb.oracle, bps > 0
	bps = max(bps, -bps)
	d := max(1, p/10_000*bps+p%10_000*bps/10_000)
	if up {
		pb.oracle = min(p+d, unitsMax)
	} else {
		pb.oracle = max(1, p-d)
	}
}

// splitmix64 is the first output of a SplitMix64 generator seeded with x.
func splitmix64(x uint64) uint64 {
	z := x + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// markAt updates the premium EMA and the mark (docs/perps.md, "Mark").
func (pb *perpBook) markAt(b *book, tickUs, dt int64) {
	o2 := 2 * pb.oracle
	if !pb.started {
		pb.ema, pb.mark = 0, pb.oracle
		return
	}
	book, ok := int64(0), false
	switch {
	case pb.tradedUs == tickUs:
		book, ok = b.priceHalf, true
	case len(b.sides[Buy]) > 0 && len(b.sides[Sell]) > 0:
		book, ok = b.sides[Buy][len(b.sides[Buy])-1].priceSteps+b.sides[Sell][len(b.sides[Sell])-1].priceSteps, true
	}
	if ok {
		pb.ema += mulDivTrunc(book-o2-pb.ema, uint64(dt), markWindowUs)
	}
	c := mulDivFloor(uint64(o2), uint64(pb.maxPremium), RateMax)
	pb.ema = min(max(pb.ema, -c), c)
	mark := (o2 + pb.ema) / 2
	if pb.markClamp > 0 {
		d := max(1, mulDivFloor(uint64(pb.mark), uint64(pb.markClamp), RateMax))
		mark = min(max(mark, pb.mark-d), pb.mark+d)
	}
	pb.mark = max(mark, 1)
}

// fund sets the funding rate and this tick's funding per lot, and moves
// the index (docs/perps.md, "Funding").
func (pb *perpBook) fund(b *book, dt int64) {
	p := pb.oracle
	var premium, discount int64
	if lv := b.sides[Buy]; len(lv) > 0 && lv[len(lv)-1].priceSteps > p {
		premium = min(mulDivFloor(uint64(lv[len(lv)-1].priceSteps-p), RateMax, uint64(p)), 4*RateMax)
	}
	if lv := b.sides[Sell]; len(lv) > 0 && lv[len(lv)-1].priceSteps < p {
		discount = min(mulDivFloor(uint64(p-lv[len(lv)-1].priceSteps), RateMax, uint64(p)), 4*RateMax)
	}
	pb.rate = min(max(pb.interest+premium-discount, -pb.maxRate), pb.maxRate)
	var v uint256.Int
	hi, lo := bits.Mul64(uint64(abs64(pb.rate)), uint64(2*p))
	v = uint256.Int{lo, hi, 0, 0}
	v.Mul(&v, uint256.NewInt(uint64(dt)))
	v.Div(&v, fundingDen)
	pb.f = int64(v.Uint64()) * sign64(pb.rate)
	var f uint256.Int
	mulI64(&f, pb.f, 1)
	pb.index.Add(&pb.index, &f)
}

// perpScan pays funding and liquidates every account below maintenance
// (docs/perps.md, "Liquidation"), walking the accounts in the order they
// first opened a position. The backstop's funding is paid first, from the
// positions it held before this tick's liquidations (funding moves commute:
// the order of credits and debits does not change the end balances).
func (e *Engine) perpScan(tickUs int64, acc Accounts, out *TickResult) {
	pe := &e.pp
	bs := pe.acctOf(BackstopAddress)
	if bs >= 0 {
		e.scanAccount(bs)
		e.moveCash(acc, BackstopAddress, &pe.fund)
	}
	for _, ai := range pe.order[:len(pe.order)] {
		if ai == bs {
			continue
		}
		e.scanAccount(ai)
		a := &pe.accts[ai]
		e.moveCash(acc, a.owner, &pe.fund)
		cash, _, debt := acc.Holding(NativeToken, a.owner)
		net := &pe.t[2]
		net.Sub(&cash, &debt)
		net.Add(net, &pe.margin)
		switch {
		case net.Sign() >= 0:
		case a.open == 0: // flat, in debt: only the backstop's cover (step 4)
			e.coverDebt(a.owner, acc)
		default:
			e.liquidate(ai, tickUs, acc, out)
		}
	}
}

// scanAccount sets pe.margin to Σ (U − MM) over the account's positions
// and pe.fund to minus the funding they pay this tick (wei). It works in
// 128-bit integers (|U − MM| < 2^110 q), the tick's hot loop.
func (e *Engine) scanAccount(ai int32) {
	pe := &e.pp
	pe.margin.Clear()
	pe.fund.Clear()
	for _, b := range pe.books {
		pb := b.perp
		i := pb.find(ai)
		if i < 0 || pb.pos[i].size == 0 {
			continue
		}
		p := &pb.pos[i]
		sc := scaler{q: &b.u.unitQuote, t: &pe.t[0]}
		sz, m, lev := uint64(abs64(p.size)), uint64(pb.mark), pb.lev
		hi, lo := bits.Mul64(2*m, sz) // 2·P·|S|
		if p.size < 0 {
			hi, lo = neg128(hi, lo)
		}
		var b0 uint64
		lo, b0 = bits.Sub64(lo, p.cost[0], 0) // − C
		hi, _ = bits.Sub64(hi, p.cost[1], b0)
		mhi, mlo := bits.Mul64(m, sz) // − ceil(P·|S| / lev)
		var r uint64
		if mhi == 0 {
			mlo, r = mlo/lev, mlo%lev
		} else {
			var qlo uint64
			qlo, r = bits.Div64(mhi%lev, mlo, lev)
			mhi, mlo = mhi/lev, qlo
		}
		if r != 0 {
			mlo, b0 = bits.Add64(mlo, 1, 0)
			mhi += b0
		}
		lo, b0 = bits.Sub64(lo, mlo, 0)
		hi, _ = bits.Sub64(hi, mhi, b0)
		sc.add(&pe.margin, hi, lo)
		if f := pb.f; f != 0 { // the position pays S·f
			hi, lo = bits.Mul64(sz, uint64(abs64(f)))
			if (p.size > 0) == (f > 0) {
				hi, lo = neg128(hi, lo)
			}
			sc.add(&pe.fund, hi, lo)
		}
	}
}

// liquidate closes an account below maintenance (docs/perps.md,
// "Liquidation"): its orders are margin-cancelled and its triggers
// cancelled, its positions go to the backstop at the mark, it pays the
// penalty, and the backstop covers what it still owes.
func (e *Engine) liquidate(ai int32, tickUs int64, acc Accounts, out *TickResult) {
	owner := e.pp.accts[ai].owner
	s := e.sumAccount(&e.pp.sum, owner, nil, nil, Buy, 0, acc)
	t, lq := &e.pp.t, &e.pp.lq
	realized, v, penalty := &lq[0], &lq[1], &lq[2]
	penalty.Add(&s.net, &s.u) // equity
	if penalty.Sign() < 0 {
		penalty.Clear()
	}
	half := &lq[3]
	half.AddUint64(&s.mm, 1)
	half.Rsh(half, 1)
	if half.Lt(penalty) {
		*penalty = *half
	}
	for _, b := range e.books {
		e.cancelOwned(b, owner, acc, out)
	}
	e.cancelTriggersOf(owner, out)
	bs := e.pp.acctFor(BackstopAddress)
	first := true
	for _, b := range e.pp.books {
		pb := b.perp
		i := pb.find(ai)
		if i < 0 || pb.pos[i].size == 0 {
			continue
		}
		sz, m := pb.pos[i].size, pb.mark
		mulI64(realized, sz, 2*m)
		realized.Sub(realized, &pb.pos[i].cost)
		pb.cold[i].realized.Add(&pb.cold[i].realized, realized)
		pb.pos[i].size = 0
		pb.pos[i].cost.Clear()
		e.pp.resized(ai, sz, 0)
		pb.tidy(i)
		v.Mul(realized, &b.u.unitQuote)
		e.moveCash(acc, owner, v)
		ev := Event{Kind: EventLiquidation, Book: b.cfg.ID, Owner: owner, Side: Buy, Realized: signedOf(v)}
		if sz < 0 {
			ev.Side = Sell
		}
		b.u.baseOf(&ev.Base, abs64(sz))
		ev.Position = Signed{Neg: sz < 0, Abs: ev.Base}
		ev.Price.SetUint64(uint64(m))
		ev.Price.Mul(&ev.Price, &b.u.tick)
		b.u.quoteOf(&ev.Quote, abs64(sz), 2*m)
		if first {
			ev.Amount, first = *penalty, false
		}
		out.Events = append(out.Events, ev)
		j := pb.slot(bs)
		before := pb.pos[j].size
		pb.applyFill(j, sz, 2*m, tickUs, realized, t)
		e.pp.resized(bs, before, pb.pos[j].size)
		pb.tidy(j)
		v.Mul(realized, &b.u.unitQuote)
		e.moveCash(acc, BackstopAddress, v)
	}
	if !penalty.IsZero() {
		acc.Debit(NativeToken, owner, penalty)
		acc.Credit(NativeToken, BackstopAddress, penalty)
	}
	e.coverDebt(owner, acc)
}

// coverDebt is liquidation step 4: the backstop pays what the owner's
// cash does not cover.
func (e *Engine) coverDebt(owner Address, acc Accounts) {
	if cash, _, debt := acc.Holding(NativeToken, owner); debt.Gt(&cash) {
		bad := &e.pp.lq[3]
		bad.Sub(&debt, &cash)
		acc.Credit(NativeToken, owner, bad)
		acc.Debit(NativeToken, BackstopAddress, bad)
	}
}

// cancelOwned removes every live order of owner in b, ascending id, as
// margin cancels (liquidation step 1). Cold path: it scans the arena.
func (e *Engine) cancelOwned(b *book, owner Address, acc Accounts, out *TickResult) {
	sl := e.pp.slots[:0]
	for s := 1; s < len(b.nodes); s++ {
		if b.nodes[s].state != stateFree && b.ords[s].owner == owner {
			sl = append(sl, uint32(s))
		}
	}
	slices.SortFunc(sl, func(x, y uint32) int { return bytes.Compare(b.ords[x].id[:], b.ords[y].id[:]) })
	for _, s := range sl {
		e.removeOrder(b, s, EventMarginCancel, acc, out)
	}
	e.pp.slots = sl[:0]
}

// clipReduceOnly cuts the book's reduce-only orders, per owner in walk
// order, to the reducing side of the owner's position at the start of the
// tick; an order cut to nothing is cancelled (docs/perps.md, "Fills").
func (e *Engine) clipReduceOnly(b *book, acc Accounts, out *TickResult) {
	pb := b.perp
	if pb.reduceOnly == 0 {
		return
	}
	for _, side := range [2]Side{Buy, Sell} {
		for c := b.first(side); c.slot != 0; {
			s := c.slot
			next := b.next(side, c)
			if n := &b.nodes[s]; n.flags&FlagReduceOnly != 0 {
				e.clipOne(b, pb, s, side, acc, out)
			}
			c = next
		}
	}
	// Reset the allowances this clip used (every account that used one
	// still has a reduce-only order in the book).
	for _, side := range [2]Side{Buy, Sell} {
		for c := b.first(side); c.slot != 0; c = b.next(side, c) {
			if s := c.slot; b.nodes[s].flags&FlagReduceOnly != 0 {
				e.pp.accts[e.pp.acctOf(b.ords[s].owner)].roUsed = 0
			}
		}
	}
}

// clipOne clips one reduce-only order against what is left of its owner's
// allowance.
func (e *Engine) clipOne(b *book, pb *perpBook, s uint32, side Side, acc Accounts, out *TickResult) {
	n := &b.nodes[s]
	a := e.pp.acctOf(b.ords[s].owner)
	var allow int64
	if a >= 0 {
		sz := pb.sizeOf(a)
		if side == Sell && sz > 0 || side == Buy && sz < 0 {
			allow = abs64(sz) - e.pp.accts[a].roUsed
		}
	}
	if allow <= 0 {
		e.removeOrder(b, s, EventCancel, acc, out)
		return
	}
	if n.remLots > allow {
		li, _ := b.findLevel(n.side, n.priceSteps)
		b.sides[n.side][li].vol.sub(n.remLots - allow)
		n.remLots = allow
		o := &b.ords[s]
		b.u.baseOf(&o.sizeBase, allow)
		o.sizeBase.Add(&o.sizeBase, &o.filledBase)
	}
	e.pp.accts[a].roUsed += n.remLots
}

// scaler adds 128-bit two's complement amounts of q to 256-bit sums of
// wei: with two 64-bit multiplications when q fits 64 bits.
type scaler struct {
	q *uint256.Int
	t *uint256.Int // scratch
}

func (s *scaler) add(sum *uint256.Int, hi, lo uint64) {
	neg := int64(hi) < 0
	if s.q[1]|s.q[2]|s.q[3] != 0 {
		*s.t = uint256.Int{lo, hi, 0, 0}
		if neg {
			s.t[2], s.t[3] = ^uint64(0), ^uint64(0)
		}
		s.t.Mul(s.t, s.q)
		sum.Add(sum, s.t)
		return
	}
	if neg {
		hi, lo = neg128(hi, lo)
	}
	h1, l1 := bits.Mul64(lo, s.q[0])
	h2, l2 := bits.Mul64(hi, s.q[0])
	r1, c := bits.Add64(h1, l2, 0)
	r2 := h2 + c
	var b uint64
	if neg {
		sum[0], b = bits.Sub64(sum[0], l1, 0)
		sum[1], b = bits.Sub64(sum[1], r1, b)
		sum[2], b = bits.Sub64(sum[2], r2, b)
		sum[3] -= b
		return
	}
	sum[0], b = bits.Add64(sum[0], l1, 0)
	sum[1], b = bits.Add64(sum[1], r1, b)
	sum[2], b = bits.Add64(sum[2], r2, b)
	sum[3] += b
}

// neg128 is the two's complement negation of (hi, lo).
func neg128(hi, lo uint64) (uint64, uint64) {
	lo, b := bits.Sub64(0, lo, 0)
	hi, _ = bits.Sub64(0, hi, b)
	return hi, lo
}

// mulDivTrunc is trunc(a·b / c).
// REQUIRES: b ≤ c, c > 0.
func mulDivTrunc(a int64, b, c uint64) int64 {
	return sign64(a) * mulDivFloor(uint64(abs64(a)), b, c)
}

// mulDivFloor is floor(a·b / c), saturated at MaxInt64.
// REQUIRES: c > 0.
func mulDivFloor(a, b, c uint64) int64 {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, c)
	return int64(min(q, math.MaxInt64))
}
