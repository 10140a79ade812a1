package refperp

import (
	"bytes"
	"math/big"
	"slices"
	"sort"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
)

// Fill applies a fill of delta lots (+ buyer) at half half-steps to owner's
// position, realizes PnL into cash, then takes the fee (docs/perps.md,
// "Fills").
func (e *Engine) Fill(book clob.Hash, owner clob.Address, delta, half int64, fee *uint256.Int, acc clob.Accounts) (pos, realized clob.Signed) {
	m := e.market(book)
	r := e.applyFill(m, owner, delta, half)
	if !fee.IsZero() {
		e.change(owner, new(big.Int).Neg(fee.ToBig()))
		acc.CollectFee(m.cfg.Quote, fee)
	}
	after := e.Position(book, owner)
	if after == 0 {
		e.flat = append(e.flat, posKey{book, owner}) // for the flat sweep
	}
	size := new(big.Int).Mul(bi(after), m.cfg.LotSize.ToBig())
	return toSigned(size), toSigned(r)
}

// applyFill is the fill rule on (S, C) without fees; it returns the
// realized PnL in wei, already moved into cash. A flip closes the
// position and opens a new one: its realized PnL, funding, opening time
// and entry index start afresh.
func (e *Engine) applyFill(m *market, owner clob.Address, delta, half int64) *big.Int {
	k := posKey{m.cfg.ID, owner}
	p := e.pos[k]
	if p == nil {
		p = e.open(m, owner)
	}
	realized := new(big.Int)
	if p.S == 0 || sign(p.S) == sign(delta) {
		p.C.Add(p.C, new(big.Int).Mul(bi(delta), bi(half)))
		p.S += delta
		return realized
	}
	r := min(abs(delta), abs(p.S))
	cr := new(big.Int).Mul(p.C, bi(r))
	cr.Quo(cr, bi(abs(p.S))) // Quo truncates toward zero
	rq := new(big.Int).Mul(bi(sign(p.S)*r), bi(half))
	rq.Sub(rq, cr)
	p.C.Sub(p.C, cr)
	p.S += sign(delta) * r
	realized = m.wei(rq)
	p.realized.Add(p.realized, realized)
	e.change(owner, realized)
	if rest := delta - sign(delta)*r; rest != 0 {
		e.close(p)
		p = e.open(m, owner)
		p.S = rest
		p.C.Mul(bi(rest), bi(half))
	} else if p.S == 0 {
		e.close(p)
	}
	return realized
}

// open starts an empty position record (it becomes open with its first
// lots).
func (e *Engine) open(m *market, owner clob.Address) *position {
	p := &position{m: m, owner: owner, C: new(big.Int), realized: new(big.Int), funding: new(big.Int),
		openedUs: e.nowUs, entryIx: new(big.Int).Set(m.index)}
	if !slices.Contains(e.holders, owner) {
		e.holders = append(e.holders, owner)
	}
	e.pos[posKey{m.cfg.ID, owner}] = p
	return p
}

// close drops a position whose size is zero.
func (e *Engine) close(p *position) {
	if p.S != 0 || p.C.Sign() != 0 {
		panic("BUG: closing an open position")
	}
	delete(e.pos, posKey{p.m.cfg.ID, p.owner})
}

// splitmix64 is the standard one-step SplitMix64 output for state x.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// marketTick is a perp market's oracle, mark and funding for one tick
// (docs/perps.md, "Oracle", "Mark", "Funding").
func (e *Engine) marketTick(m *market, tickUs int64, out *clob.TickResult) {
	pp := &m.cfg.Perp
	// dt is 0 on the market's first tick: no funding accrues
	// for the time before the market existed.
	var dt int64
	if m.ran {
		dt = min(tickUs-m.lastUs, emaWindowUs)
	}
	if !m.frozen && pp.WalkBps > 0 {
		x := splitmix64(pp.WalkSeed ^ uint64(tickUs))
		d := max(1, m.oracle*int64(pp.WalkBps)/10000)
		if x&1 == 1 {
			m.oracle += d
		} else {
			m.oracle = max(1, m.oracle-d)
		}
	}
	P := m.oracle
	bid, ask, hasBid, hasAsk := e.Engine.Top(m.cfg.ID)
	if !m.ran {
		m.ema, m.mark = 0, P
	} else {
		var book int64
		has := false
		for _, bt := range out.Books {
			if bt.Book == m.cfg.ID && bt.Traded {
				book, has = e.lastHalf(m), true
			}
		}
		if !has && hasBid && hasAsk {
			book, has = bid+ask, true
		}
		if has {
			gap := book - 2*P
			step := new(big.Int).Mul(bi(gap-m.ema), bi(dt))
			step.Quo(step, bi(emaWindowUs))
			m.ema += step.Int64()
		}
		capx := new(big.Int).Mul(bi(2*P), pp.MaxPremium.ToBig())
		c := floorDiv(capx, wad).Int64()
		m.ema = max(-c, min(c, m.ema))
		mk := floorDiv(bi(2*P+m.ema), bi(2)).Int64()
		if !pp.MarkClamp.IsZero() { // markClamp = 0: no clamp
			lim := new(big.Int).Mul(bi(m.mark), pp.MarkClamp.ToBig())
			l := max(1, floorDiv(lim, wad).Int64())
			mk = max(m.mark-l, min(m.mark+l, mk))
		}
		m.mark = max(1, mk)
	}
	// funding
	rate := new(big.Int).Set(pp.InterestRate.ToBig())
	if hasBid && bid > P {
		x := new(big.Int).Mul(bi(bid-P), wad)
		rate.Add(rate, floorDiv(x, bi(P)))
	}
	if hasAsk && ask < P {
		x := new(big.Int).Mul(bi(P-ask), wad)
		rate.Sub(rate, floorDiv(x, bi(P)))
	}
	capr := pp.MaxFundingRate.ToBig()
	if rate.Cmp(capr) > 0 {
		rate.Set(capr)
	}
	if neg := new(big.Int).Neg(capr); rate.Cmp(neg) < 0 {
		rate.Set(neg)
	}
	m.rate = rate
	f := new(big.Int).Mul(rate, bi(2*P))
	f.Mul(f, bi(dt))
	f.Quo(f, fundingDen)
	m.index.Add(m.index, f)
	if f.Sign() != 0 {
		for _, owner := range e.holders {
			p := e.pos[posKey{m.cfg.ID, owner}]
			if p == nil {
				continue
			}
			pay := m.wei(new(big.Int).Mul(bi(p.S), f))
			p.funding.Add(p.funding, pay)
			e.change(owner, new(big.Int).Neg(pay))
		}
	}
	m.ran, m.lastUs = true, tickUs
}

func (e *Engine) lastHalf(m *market) int64 {
	h, ok := e.Engine.LastHalf(m.cfg.ID)
	if !ok {
		panic("BUG: a book traded without a price")
	}
	return h
}

// liquidate is the liquidation pass (docs/perps.md, "Liquidation").
func (e *Engine) liquidate(acc clob.Accounts, out *clob.TickResult) {
	list := append([]clob.Address(nil), e.holders...)
	for _, owner := range list {
		if owner == clob.BackstopAddress || len(e.positionsOf(owner)) == 0 {
			continue // a flat account in debt: step 5
		}
		eq := e.equity(owner)
		_, _, mm := e.sums(owner)
		if eq.Cmp(mm) >= 0 {
			continue
		}
		e.Engine.CancelOrdersOf(owner, acc, out)
		e.cancelTriggersOf(owner, out)
		penalty := new(big.Int)
		if eq.Sign() > 0 {
			penalty = minBig(eq, ceilDiv(mm, bi(2)))
		}
		for i, p := range e.positionsOf(owner) {
			m := p.m
			P := m.mark
			S := p.S
			r := new(big.Int).Mul(bi(2*P), bi(S))
			r.Sub(r, p.C)
			rw := m.wei(r)
			p.realized.Add(p.realized, rw)
			e.change(owner, rw)
			p.S, p.C = 0, new(big.Int)
			e.close(p)
			e.applyFill(m, clob.BackstopAddress, S, 2*P)
			lot, tick := m.cfg.LotSize.ToBig(), m.cfg.TickPrecision.ToBig()
			side := clob.Buy
			if S < 0 {
				side = clob.Sell
			}
			out.Events = append(out.Events, clob.Event{
				Kind: clob.EventLiquidation, Book: m.cfg.ID, Owner: owner, Side: side,
				Base:     toU(new(big.Int).Mul(bi(abs(S)), lot)),
				Quote:    toU(m.wei(new(big.Int).Mul(bi(abs(S)), bi(2*P)))),
				Price:    toU(new(big.Int).Mul(bi(P), tick)),
				Amount:   toU(first(i, penalty)), // the first event carries the penalty
				Position: toSigned(new(big.Int).Mul(bi(S), lot)),
				Realized: toSigned(rw),
			})
		}
		e.change(owner, new(big.Int).Neg(penalty))
		e.change(clob.BackstopAddress, penalty)
		e.badDebt(owner)
	}
	// (reading, docs/perps.md "Liquidation" step 5) an account that a fill
	// left with no position and Cash − Debt < 0 has its debt paid by the
	// backstop too, accounts ascending.
	var debtors []clob.Address
	for owner, d := range e.debt { // collected, then sorted
		if d.Sign() > 0 && owner != clob.BackstopAddress && len(e.positionsOf(owner)) == 0 {
			debtors = append(debtors, owner)
		}
	}
	sort.Slice(debtors, func(i, j int) bool { return bytes.Compare(debtors[i][:], debtors[j][:]) < 0 })
	for _, owner := range debtors {
		e.badDebt(owner)
	}
}

// badDebt is liquidation step 4: if the account's Cash − Debt is negative,
// its debt is cleared and the backstop's cash falls by the same amount.
func (e *Engine) badDebt(owner clob.Address) {
	if e.cashMinusDebt(owner).Sign() >= 0 {
		return
	}
	d := e.debt[owner]
	bad := new(big.Int).Neg(d)
	d.SetInt64(0)
	e.change(clob.BackstopAddress, bad)
}

// first is x for the first item (i = 0), else 0.
func first(i int, x *big.Int) *big.Int {
	if i == 0 {
		return x
	}
	return new(big.Int)
}
