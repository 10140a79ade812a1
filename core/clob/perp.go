package clob

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/holiman/uint256"
)

// Perpetual markets (docs/perps.md): positions, cross margin in the native
// token, and the reads. The tick's part (oracle, mark, funding,
// liquidation) is in perp_tick.go, the snapshot's in perp_snapshot.go.
//
// Money inside is counted in q = unitQuote wei of the position's market,
// signed amounts as two's complement uint256 (|values| stay far below
// 2^255), and converted to wei at the Accounts boundary.

// Perp market limits.
const (
	// RateMax bounds every rate and fraction of PerpParams (1e18 = 100 %).
	RateMax = 1_000_000_000_000_000_000
	// WalkBpsMax bounds PerpParams.WalkBps (a walk step of the whole price).
	WalkBpsMax = 10_000
	// perpDtMaxUs caps the dt of the mark EMA and of funding (180 s).
	perpDtMaxUs = 180_000_000
	// markWindowUs is the mark premium's EMA window (180 s).
	markWindowUs = 180_000_000
	// Defaults for zero PerpParams rates (docs/perps.md, "Funding").
	defaultInterestRate   = 100_000_000_000_000     // 0.01 % per 8 h
	defaultMaxFundingRate = 320_000_000_000_000_000 // 4 % per hour
)

// position is one account's exposure to one perp market: its position and
// the remaining lots of its live non-reduce-only orders (the record lives
// while any of the three is non-zero). The hot half: what the tick's scan
// reads.
type position struct {
	acct     int32       // index into perpEngine.accts
	size     int64       // S, lots, long positive
	bid, ask int64       // B, A: lots of live non-reduce-only buy and sell orders
	cost     uint256.Int // C, q, same sign as size, zero when size is
}

// positionCold is the rest of a position, for reads and the snapshot.
type positionCold struct {
	realized uint256.Int // q, since the position was opened
	// funding is what the position paid (positive) from its opening to
	// its last change of size, at index ixAt; since then it pays
	// size·(index − ixAt), so the tick's scan writes nothing here.
	funding, ixAt uint256.Int
	entryIx       uint256.Int // the market's funding index when opened
	openedUs      int64
}

// opened resets record i's cold half for a position opened now.
func (pb *perpBook) opened(i int, tickUs int64) {
	pb.cold[i] = positionCold{ixAt: pb.index, entryIx: pb.index, openedUs: tickUs}
}

// fundingOf sets dst to what record i's position paid in funding since
// it was opened (q).
func (pb *perpBook) fundingOf(dst *uint256.Int, i int) {
	c := &pb.cold[i]
	var n, d uint256.Int // dst may be &c.funding
	d.Sub(&pb.index, &c.ixAt)
	mulI64(&n, pb.pos[i].size, 1)
	d.Mul(&d, &n)
	dst.Add(&c.funding, &d)
}

// perpAccount is an account that ever had a perp order or position.
type perpAccount struct {
	owner  Address
	open   int32 // positions with size ≠ 0
	listed bool  // in perpEngine.order
	roUsed int64 // the reduce-only clip: lots of this book's allowance taken
}

// perpEngine is the engine's perp state beside the books.
type perpEngine struct {
	accts []perpAccount
	ix    map[Address]int32 // owner → index in accts (looked up, never iterated)
	// order lists the accounts in the order they first opened a position:
	// what liquidation walks and AppendPerpAccounts reports.
	order []int32
	books []*book  // the perp books, ascending id
	slots []uint32 // cancelOwned's scratch
	sum   accountSums
	t     [4]uint256.Int
	lq    [4]uint256.Int // liquidation
	neg   uint256.Int
	// The tick's scan of one account: Σ (U − MM) and minus the funding
	// it pays (wei, two's complement).
	margin, fund uint256.Int
}

// perpBook is a perp market's state beside its book.
type perpBook struct {
	lev                                      uint64
	interest, maxRate, maxPremium, markClamp int64 // fractions of 1e18
	walkBps                                  int64
	seed                                     uint64
	oracle, mark                             int64 // steps
	ema                                      int64 // half-steps
	started, frozen                          bool
	// A gap of the oracle's feed (MoveOracle): no walk before the first
	// tick at or after gapUntil (µs, 0 = none), which moves it by gapBps.
	gapUntil, gapBps int64
	lastUs           int64 // the last tick that moved oracle and mark
	tradedUs         int64 // the last tick the book traded (not in the snapshot: read in the same tick)
	rate             int64 // the last funding rate, per 8 h, of 1e18
	f                int64 // this tick's funding per lot, q
	reduceOnly       int   // live reduce-only orders: the clip runs only when > 0
	bound            int   // live orders of Asset triggers: the flat sweep scans only when > 0
	index            uint256.Int
	// flat lists the accounts a fill of the running tick left with size 0
	// (an account may appear twice), for the flat sweep; empty between ticks.
	flat []int32
	// pos and cold are dense (swap-removed); posOf[acct] is the index+1 of
	// the account's record, 0 if none.
	pos   []position
	cold  []positionCold
	posOf []int32
}

// perpParams validates a perp market's parameters and fills the defaults.
func perpParams(cfg *MarketConfig, u *units) (PerpParams, error) {
	p := cfg.Perp
	rateMax := uint256.NewInt(RateMax)
	if p.InterestRate.IsZero() {
		p.InterestRate.SetUint64(defaultInterestRate)
	}
	if p.MaxFundingRate.IsZero() {
		p.MaxFundingRate.SetUint64(defaultMaxFundingRate)
	}
	var steps, rem uint256.Int
	steps.DivMod(&p.OraclePrice, &u.tick, &rem)
	switch {
	case p.MaxLeverage < 1:
		return p, errors.New("max leverage must be at least 1")
	case p.InterestRate.Gt(rateMax) || p.MaxFundingRate.Gt(rateMax) || p.MaxPremium.Gt(rateMax) || p.MarkClamp.Gt(rateMax):
		return p, errors.New("perp rates must be at most 1e18")
	case p.WalkBps > WalkBpsMax:
		return p, fmt.Errorf("oracle walk %d bps exceeds %d", p.WalkBps, WalkBpsMax)
	case steps.IsZero() || !rem.IsZero() || !steps.IsUint64() || steps.Uint64() > unitsMax:
		return p, errors.New("oracle price must be a positive multiple of the tick precision, at most 2^53 steps")
	}
	return p, nil
}

// newPerpBook returns the state of a perp market whose parameters
// perpParams accepted.
func newPerpBook(cfg *MarketConfig, u *units) *perpBook {
	p := &cfg.Perp
	var steps uint256.Int
	steps.Div(&p.OraclePrice, &u.tick)
	return &perpBook{
		lev: uint64(p.MaxLeverage), interest: int64(p.InterestRate.Uint64()), maxRate: int64(p.MaxFundingRate.Uint64()),
		maxPremium: int64(p.MaxPremium.Uint64()), markClamp: int64(p.MarkClamp.Uint64()),
		walkBps: int64(p.WalkBps), seed: p.WalkSeed,
		oracle: int64(steps.Uint64()), mark: int64(steps.Uint64()),
	}
}

// find returns the index of the account's record, -1 if none.
func (pb *perpBook) find(acct int32) int {
	if int(acct) < len(pb.posOf) {
		return int(pb.posOf[acct]) - 1
	}
	return -1
}

// slot returns the index of the account's record, creating it.
func (pb *perpBook) slot(acct int32) int {
	if i := pb.find(acct); i >= 0 {
		return i
	}
	for int(acct) >= len(pb.posOf) {
		pb.posOf = append(pb.posOf, 0)
	}
	pb.pos = append(pb.pos, position{acct: acct})
	pb.cold = append(pb.cold, positionCold{})
	pb.posOf[acct] = int32(len(pb.pos))
	return len(pb.pos) - 1
}

// tidy drops record i if it holds nothing (swap-remove).
func (pb *perpBook) tidy(i int) {
	p := &pb.pos[i]
	if p.size != 0 || p.bid != 0 || p.ask != 0 {
		return
	}
	pb.posOf[p.acct] = 0
	last := len(pb.pos) - 1
	if i != last {
		pb.pos[i], pb.cold[i] = pb.pos[last], pb.cold[last]
		pb.posOf[pb.pos[i].acct] = int32(i + 1)
	}
	pb.pos, pb.cold = pb.pos[:last], pb.cold[:last]
}

// sizeOf returns the account's position in pb, 0 if none.
func (pb *perpBook) sizeOf(acct int32) int64 {
	if i := pb.find(acct); i >= 0 {
		return pb.pos[i].size
	}
	return 0
}

// acctOf returns the owner's account index, -1 if it has none.
func (pe *perpEngine) acctOf(owner Address) int32 {
	if i, ok := pe.ix[owner]; ok {
		return i
	}
	return -1
}

// listed reports whether owner ever opened a position.
func (pe *perpEngine) listed(owner Address) bool {
	a := pe.acctOf(owner)
	return a >= 0 && pe.accts[a].listed
}

// acctFor returns the owner's account index, creating the account.
func (pe *perpEngine) acctFor(owner Address) int32 {
	if i, ok := pe.ix[owner]; ok {
		return i
	}
	i := int32(len(pe.accts))
	pe.accts = append(pe.accts, perpAccount{owner: owner})
	pe.ix[owner] = i
	return i
}

// resized counts a position going from before to after lots.
func (pe *perpEngine) resized(acct int32, before, after int64) {
	a := &pe.accts[acct]
	switch {
	case before == 0 && after != 0:
		a.open++
		if !a.listed {
			a.listed = true
			pe.order = append(pe.order, acct)
		}
	case before != 0 && after == 0:
		a.open--
	}
}

// applyFill books a fill of delta lots (+ bought) at h half-steps on record
// i (docs/perps.md, "Fills"); realized is set to the PnL it realizes (q).
func (pb *perpBook) applyFill(i int, delta, h, tickUs int64, realized *uint256.Int, t *[4]uint256.Int) {
	p, c := &pb.pos[i], &pb.cold[i]
	realized.Clear()
	s := p.size
	if s != 0 {
		pb.fundingOf(&c.funding, i)
		c.ixAt = pb.index
	}
	if s == 0 || (s > 0) == (delta > 0) {
		if s == 0 {
			pb.opened(i, tickUs)
		}
		mulI64(&t[0], delta, h)
		p.cost.Add(&p.cost, &t[0])
		p.size += delta
		return
	}
	r := min(abs64(delta), abs64(s))
	t[0].SetUint64(uint64(r))
	t[0].Mul(&p.cost, &t[0])
	t[1].SetUint64(uint64(abs64(s)))
	t[2].SDiv(&t[0], &t[1]) // Cr, truncated toward zero
	mulI64(realized, sign64(s)*r, h)
	realized.Sub(realized, &t[2])
	p.cost.Sub(&p.cost, &t[2])
	p.size += sign64(delta) * r
	c.realized.Add(&c.realized, realized)
	if rest := delta - sign64(delta)*r; rest != 0 {
		p.size = rest
		mulI64(&p.cost, rest, h)
		pb.opened(i, tickUs)
	}
}

// expose adds lots (negative: removes) of the non-reduce-only order at
// slot s to its owner's B or A. Every change of a perp order's remaining
// size goes through it (admission, fills, updates, removal).
func (e *Engine) expose(b *book, s uint32, lots int64) {
	n := &b.nodes[s]
	if b.perp == nil || n.flags&FlagReduceOnly != 0 || lots == 0 {
		return
	}
	pb := b.perp
	i := pb.slot(e.pp.acctFor(b.ords[s].owner))
	if n.side == Buy {
		pb.pos[i].bid += lots
	} else {
		pb.pos[i].ask += lots
	}
	pb.tidy(i)
}

// exposedLots is what the order at slot s counts in B or A (unless it is
// reduce-only): the size its last admitted update sets while one is
// pending, else its remaining size.
func (b *book) exposedLots(s uint32) int64 {
	if o := &b.ords[s]; o.pendingUpdates > 0 {
		return o.projLots
	}
	return b.nodes[s].remLots
}

// countLive counts the order at slot s going live (+1) or leaving its book
// (−1) in its perp book's tallies: reduce-only orders and orders fired by
// Asset triggers.
func (b *book) countLive(s uint32, d int) {
	if b.perp == nil {
		return
	}
	if b.nodes[s].flags&FlagReduceOnly != 0 {
		b.perp.reduceOnly += d
	}
	if b.ords[s].assetBound {
		b.perp.bound += d
	}
}

// perpOrderLive books a perp order that just became live (admitted, or
// loaded): its lots in B or A, or its count as reduce-only, and its count
// as an Asset trigger's order. Every way an
// order enters a perp book (a fired trigger too) must call it once; discard
// undoes it.
func (e *Engine) perpOrderLive(b *book, s uint32) {
	e.expose(b, s, b.exposedLots(s))
	b.countLive(s, 1)
}

// perpFill settles one side of a chunk on a perp book: the owner's
// position takes the fill, the PnL it realizes and its fee move through
// the native cash.
func (e *Engine) perpFill(b *book, s uint32, li int32, lots, h int64, base, cost *uint256.Int, tickUs int64, acc Accounts, out *TickResult) {
	n, o := &b.nodes[s], &b.ords[s]
	pb, t := b.perp, &e.pp.t
	rate, maker := b.rate(n, tickUs)
	e.expose(b, s, -lots)
	acct := e.pp.acctFor(o.owner)
	i := pb.slot(acct)
	delta := lots
	if n.side == Sell {
		delta = -lots
	}
	before := pb.pos[i].size
	realized, wei, fee := &e.tmp[2], &e.tmp[3], &e.tmp[4]
	pb.applyFill(i, delta, h, tickUs, realized, t)
	after := pb.pos[i].size
	e.pp.resized(acct, before, after)
	if after == 0 {
		pb.flat = append(pb.flat, acct)
	}
	pb.tidy(i)
	wei.Mul(realized, &b.u.unitQuote)
	e.moveCash(acc, o.owner, wei)
	feeOf(fee, cost, rate)
	if !fee.IsZero() {
		acc.Debit(NativeToken, o.owner, fee)
		acc.CollectFee(NativeToken, fee)
	}
	b.filled(s, li, lots, base, cost, fee, maker, out)
	ev := &out.Events[len(out.Events)-1]
	ev.Realized = signedOf(wei)
	b.u.baseOf(&t[0], abs64(after))
	ev.Position = Signed{Neg: after < 0, Abs: t[0]}
}

// moveCash credits (positive) or debits (negative) a signed wei amount of
// native cash.
func (e *Engine) moveCash(acc Accounts, owner Address, wei *uint256.Int) {
	switch wei.Sign() {
	case 1:
		acc.Credit(NativeToken, owner, wei)
	case -1:
		m := &e.pp.neg // a ledger argument must not escape from the stack
		m.Neg(wei)
		acc.Debit(NativeToken, owner, m)
	}
}

// accountSums is an account's cross-margin state (wei; net, u, realized
// signed).
type accountSums struct {
	net, locked, u, realized, notional, im, mm, imo uint256.Int
	positions                                       int
	grew                                            bool // the candidate order raised IMo
	tooBig                                          bool // the candidate's worst case exceeds unitsMax lots
}

// sumAccount computes owner's sums at the current marks, with env added
// to B and A, and a candidate order of lots (may be negative: an update
// that shrinks) on side of book cb, into s (engine scratch on the write
// path, a reader's own local on the read path).
func (e *Engine) sumAccount(s *accountSums, owner Address, env []bookUse, cb *book, side Side, lots int64, acc Accounts) *accountSums {
	var t [1]uint256.Int
	*s = accountSums{}
	cash, locked, debt := acc.Holding(NativeToken, owner)
	s.net.Sub(&cash, &debt)
	s.locked = locked
	acct := e.pp.acctOf(owner)
	for _, b := range e.pp.books {
		pb := b.perp
		var sz, bid, ask int64
		i := -1
		if acct >= 0 {
			i = pb.find(acct)
		}
		if i >= 0 {
			p := &pb.pos[i]
			sz, bid, ask = p.size, p.bid, p.ask
			if sz != 0 {
				s.positions++
				mulI64(&t[0], sz, 2*pb.mark)
				t[0].Sub(&t[0], &p.cost)
				t[0].Mul(&t[0], &b.u.unitQuote)
				s.u.Add(&s.u, &t[0])
				t[0].Mul(&pb.cold[i].realized, &b.u.unitQuote)
				s.realized.Add(&s.realized, &t[0])
				mulCeilDiv(&t[0], uint64(2*pb.mark), uint64(abs64(sz)), 1)
				t[0].Mul(&t[0], &b.u.unitQuote)
				s.notional.Add(&s.notional, &t[0])
				mulCeilDiv(&t[0], uint64(2*pb.mark), uint64(abs64(sz)), pb.lev)
				t[0].Mul(&t[0], &b.u.unitQuote)
				s.im.Add(&s.im, &t[0])
				mulCeilDiv(&t[0], uint64(pb.mark), uint64(abs64(sz)), pb.lev)
				t[0].Mul(&t[0], &b.u.unitQuote)
				s.mm.Add(&s.mm, &t[0])
			}
		}
		for _, u := range env {
			if u.b == b {
				bid, ask = bid+u.bid, ask+u.ask
			}
		}
		w := worst(sz, bid, ask)
		if b == cb {
			if side == Buy {
				bid += lots
			} else {
				ask += lots
			}
			w2 := worst(sz, bid, ask)
			s.grew = w2 > w
			s.tooBig = w2 > unitsMax
			w = w2
		}
		mulCeilDiv(&t[0], uint64(2*pb.mark), uint64(w), pb.lev)
		t[0].Mul(&t[0], &b.u.unitQuote)
		s.imo.Add(&s.imo, &t[0])
	}
	return s
}

// free sets dst to Cash − Debt − Locked + ΣU − IMo (signed).
func (s *accountSums) free(dst *uint256.Int) {
	dst.Sub(&s.net, &s.locked)
	dst.Add(dst, &s.u)
	dst.Sub(dst, &s.imo)
}

// worst is W = max(|S + B|, |S − A|).
func worst(s, bid, ask int64) int64 { return max(abs64(s+bid), abs64(s-ask)) }

// marginCheck decides whether owner may add an order of lots on side to
// perp book b (docs/perps.md, "Admission of perp orders"); a REDUCE_ONLY
// order comes back cut to the position. Triggers call it when they fire.
func (e *Engine) marginCheck(owner Address, b *book, side Side, lots int64, flags uint8, acc Accounts) (int64, Reason) {
	return e.perpAdmit(owner, b, side, lots, flags, false, acc)
}

// perpAdmit is marginCheck; inside Admit (inEnv) it counts what the
// envelope's earlier intents add to B and A and lock of native, and records
// this order's lots.
func (e *Engine) perpAdmit(owner Address, b *book, side Side, lots int64, flags uint8, inEnv bool, acc Accounts) (int64, Reason) {
	if flags&FlagReduceOnly != 0 {
		sz := int64(0)
		if a := e.pp.acctOf(owner); a >= 0 {
			sz = b.perp.sizeOf(a)
		}
		if side == Sell && sz <= 0 || side == Buy && sz >= 0 {
			return 0, ReasonReduceOnlyNoPosition
		}
		return min(lots, abs64(sz)), OK
	}
	var env []bookUse
	if inEnv {
		env = e.adm.uses[:e.adm.nUses]
	}
	s := e.sumAccount(&e.pp.sum, owner, env, b, side, lots, acc)
	if s.tooBig {
		return 0, ReasonValueRange
	}
	if s.grew {
		free := &e.pp.t[1]
		s.free(free)
		if inEnv {
			e.subEnvLocks(free)
		}
		if free.Sign() < 0 {
			return 0, ReasonInsufficientMargin
		}
	}
	if inEnv {
		if u := e.useOf(b); side == Buy {
			u.bid += lots
		} else {
			u.ask += lots
		}
	}
	return lots, OK
}

// subEnvLocks takes what the envelope locks of native, net of what it
// releases, off free.
func (e *Engine) subEnvLocks(free *uint256.Int) {
	s := &e.adm
	for i := range s.nFunds {
		if f := &s.funds[i]; f.token == NativeToken {
			free.Sub(free, &f.lock)
			free.Add(free, &f.unlock)
		}
	}
}

// nativeFree is what the envelope may still spend of native: max(0,
// Cash − Debt − Locked + ΣU − IMo) with its perp orders counted.
func (e *Engine) nativeFree(owner Address, acc Accounts) uint256.Int {
	s := e.sumAccount(&e.pp.sum, owner, e.adm.uses[:e.adm.nUses], nil, Buy, 0, acc)
	var v uint256.Int
	if s.free(&v); v.Sign() < 0 {
		v.Clear()
	}
	return v
}

// Margin returns the account's cross-margin summary.
// Readers call it concurrently (under the node's read lock): it writes
// nothing but its own locals.
func (e *Engine) Margin(owner Address, acc Accounts) MarginInfo {
	var sums accountSums
	s := e.sumAccount(&sums, owner, nil, nil, Buy, 0, acc)
	m := MarginInfo{Owner: owner, Cash: signedOf(&s.net), Unrealized: signedOf(&s.u), Realized: signedOf(&s.realized),
		Notional: s.notional, InitialMargin: s.im, Maintenance: s.mm, OrderMargin: s.imo, Positions: s.positions}
	var v uint256.Int
	v.Add(&s.net, &s.u)
	m.Equity = signedOf(&v)
	if s.free(&v); v.Sign() > 0 {
		m.Withdrawable = v
	}
	return m
}

// AppendPositions appends the owner's open perp positions, books ascending.
// Liquidation is left 0: it needs the account's cash (LiquidationPrices).
func (e *Engine) AppendPositions(dst []PositionInfo, owner Address) []PositionInfo {
	acct := e.pp.acctOf(owner)
	if acct < 0 {
		return dst
	}
	for _, b := range e.pp.books {
		pb := b.perp
		i := pb.find(acct)
		if i < 0 || pb.pos[i].size == 0 {
			continue
		}
		p, c, u := &pb.pos[i], &pb.cold[i], &b.u
		sz := abs64(p.size)
		info := PositionInfo{Book: b.cfg.ID, Owner: owner, OpenedTickUs: c.openedUs}
		var v uint256.Int
		u.baseOf(&v, sz)
		info.Size = Signed{Neg: p.size < 0, Abs: v}
		v.Mul(&p.cost, &u.unitQuote)
		info.Cost = signedOf(&v)
		info.EntryPrice.Abs(&p.cost)
		info.EntryPrice.Mul(&info.EntryPrice, &u.tick)
		info.EntryPrice.Div(&info.EntryPrice, v.SetUint64(uint64(2*sz)))
		info.Mark.SetUint64(uint64(pb.mark))
		info.Mark.Mul(&info.Mark, &u.tick)
		u.quoteOf(&info.Notional, sz, 2*pb.mark)
		mulI64(&v, p.size, 2*pb.mark)
		v.Sub(&v, &p.cost)
		v.Mul(&v, &u.unitQuote)
		info.Unrealized = signedOf(&v)
		v.Mul(&c.realized, &u.unitQuote)
		info.Realized = signedOf(&v)
		pb.fundingOf(&v, i)
		v.Mul(&v, &u.unitQuote)
		info.Funding = signedOf(&v)
		mulCeilDiv(&info.InitialMargin, uint64(2*pb.mark), uint64(sz), pb.lev)
		info.InitialMargin.Mul(&info.InitialMargin, &u.unitQuote)
		mulCeilDiv(&info.Maintenance, uint64(pb.mark), uint64(sz), pb.lev)
		info.Maintenance.Mul(&info.Maintenance, &u.unitQuote)
		info.EntryFundingIx = pb.indexWei(&c.entryIx, u)
		dst = append(dst, info)
	}
	return dst
}

// LiquidationPrices sets the Liquidation of each of ps, one owner's
// positions as AppendPositions returned them: the mark at which the
// account's equity would meet its maintenance, the other marks fixed
// (without the per-position rounding up of MM); 0 if no positive mark.
func (e *Engine) LiquidationPrices(ps []PositionInfo, acc Accounts) {
	if len(ps) == 0 {
		return
	}
	var sums accountSums // a reader: no engine scratch (see Margin)
	s := e.sumAccount(&sums, ps[0].Owner, nil, nil, Buy, 0, acc)
	var eq, num, den, v uint256.Int
	eq.Add(&s.net, &s.u)
	for k := range ps {
		p := &ps[k]
		b := e.book(p.Book)
		pb, u := b.perp, &b.u
		// num = MMo − E + 2·S·P·q (long) or E − MMo + 2·|S|·P·q (short),
		// with MMo the maintenance of the other positions, all in wei.
		num.Sub(&s.mm, &p.Maintenance)
		num.Sub(&num, &eq)
		if p.Size.Neg {
			num.Neg(&num)
		}
		num.Add(&num, &p.Notional) // 2·|S|·P·q
		if num.Sign() <= 0 {
			p.Liquidation.Clear()
			continue
		}
		// P' = L·num / ((2L ∓ 1)·|S|·q) steps; wei = × tick.
		den.SetUint64(2*pb.lev - 1)
		if p.Size.Neg {
			den.SetUint64(2*pb.lev + 1)
		}
		v.Div(&p.Size.Abs, &u.lot)
		den.Mul(&den, &v)
		den.Mul(&den, &u.unitQuote)
		num.Mul(&num, v.SetUint64(pb.lev))
		num.Mul(&num, &u.tick)
		p.Liquidation.Div(&num, &den)
	}
}

// indexWei converts a funding index (q per lot) to quote wei per whole
// base unit (1e18 base wei).
func (pb *perpBook) indexWei(ix *uint256.Int, u *units) Signed {
	s := signedOf(ix)
	s.Abs.Mul(&s.Abs, &u.unitQuote)
	s.Abs.Mul(&s.Abs, wad)
	s.Abs.Div(&s.Abs, &u.lot)
	s.Neg = s.Neg && !s.Abs.IsZero()
	return s
}

// PerpMarket returns a perp market's dynamic state.
func (e *Engine) PerpMarket(book Hash) (PerpInfo, bool) {
	b := e.book(book)
	if b == nil || b.perp == nil {
		return PerpInfo{}, false
	}
	pb := b.perp
	info := PerpInfo{Book: book, FundingIndex: pb.indexWei(&pb.index, &b.u), WalkFrozen: pb.frozen}
	info.Oracle.SetUint64(uint64(pb.oracle))
	info.Oracle.Mul(&info.Oracle, &b.u.tick)
	info.Mark.SetUint64(uint64(pb.mark))
	info.Mark.Mul(&info.Mark, &b.u.tick)
	info.FundingRate.Neg = pb.rate < 0
	info.FundingRate.Abs.SetUint64(uint64(abs64(pb.rate)))
	if pb.started {
		info.FundingLastUs = pb.lastUs
	}
	// open interest: Σ 2·P·|S| q over both sides, the notional at the mark
	var oi, m uint256.Int
	for i := range pb.pos {
		m.SetUint64(uint64(abs64(pb.pos[i].size)))
		oi.Add(&oi, &m)
	}
	m.SetUint64(2 * uint64(pb.mark))
	oi.Mul(&oi, &m)
	info.OpenInterest.Mul(&oi, &b.u.unitQuote)
	return info, true
}

// AppendPerpAccounts appends every account with an open position (the
// backstop included), in the order they first opened one.
func (e *Engine) AppendPerpAccounts(dst []Address) []Address {
	for _, a := range e.pp.order {
		if e.pp.accts[a].open > 0 {
			dst = append(dst, e.pp.accts[a].owner)
		}
	}
	return dst
}

// SetOraclePrice sets a perp market's oracle price and freezes its walk;
// the mark follows at the market's next tick.
func (e *Engine) SetOraclePrice(book Hash, price *uint256.Int) Reason {
	b := e.book(book)
	if b == nil || b.perp == nil {
		return ReasonUnknownBook
	}
	steps, r := b.u.toSteps(price, ReasonOraclePrice, ReasonOraclePrice)
	if r != OK {
		return ReasonOraclePrice
	}
	b.perp.oracle, b.perp.frozen = steps, true
	b.perp.gapUntil, b.perp.gapBps = 0, 0 // an exact price ends a gap too
	return OK
}

// OracleMoveBpsMax bounds MoveOracle's move: half the price either way.
const OracleMoveBpsMax = 5_000

// MoveOracle moves a perp market's oracle by bps basis points of itself
// (at least one step), the strategy lab's jump and gap (docs/lab.md). With
// untilUs = 0 it moves now, and the walk goes on from the new price (or
// stays frozen). Otherwise the feed gaps: the oracle holds, without walking,
// until the first tick at or after untilUs, which moves it by bps instead
// of walking; a later gap replaces this one, admin_setOraclePrice ends it.
func (e *Engine) MoveOracle(book Hash, bps int32, untilUs int64) Reason {
	b := e.book(book)
	if b == nil || b.perp == nil {
		return ReasonUnknownBook
	}
	if bps == 0 || bps < -OracleMoveBpsMax || bps > OracleMoveBpsMax || untilUs < 0 {
		return ReasonOracleMove
	}
	if untilUs == 0 {
		b.perp.move(int64(bps))
		return OK
	}
	b.perp.gapUntil, b.perp.gapBps = untilUs, int64(bps)
	return OK
}

// PerpCost is Σ cost over every open position, quote wei: the ledger's
// supply check subtracts it (docs/perps.md, "Invariants").
func (e *Engine) PerpCost() Signed {
	var sum, v uint256.Int
	for _, b := range e.pp.books {
		for i := range b.perp.pos {
			v.Mul(&b.perp.pos[i].cost, &b.u.unitQuote)
			sum.Add(&sum, &v)
		}
	}
	return signedOf(&sum)
}

// signedOf converts a two's complement amount.
func signedOf(v *uint256.Int) Signed {
	if v.Sign() < 0 {
		var m uint256.Int
		return Signed{Neg: true, Abs: *m.Neg(v)}
	}
	return Signed{Abs: *v}
}

// mulI64 sets z to a·b (two's complement).
func mulI64(z *uint256.Int, a, b int64) {
	hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
	*z = uint256.Int{lo, hi, 0, 0}
	if (a < 0) != (b < 0) {
		z.Neg(z)
	}
}

// mulCeilDiv sets z to ceil(a·b / d).
// REQUIRES: d > 0.
func mulCeilDiv(z *uint256.Int, a, b, d uint64) {
	hi, lo := bits.Mul64(a, b)
	qhi, rhi := hi/d, hi%d
	qlo, r := bits.Div64(rhi, lo, d)
	*z = uint256.Int{qlo, qhi, 0, 0}
	if r != 0 {
		z.AddUint64(z, 1)
	}
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func sign64(v int64) int64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// listBooks rebuilds the list of perp books from the engine's books.
func (pe *perpEngine) listBooks(books []*book) {
	pe.books = pe.books[:0]
	for _, b := range books {
		if b.perp != nil {
			pe.books = append(pe.books, b)
		}
	}
}
