package refperp

import (
	"math/big"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
)

// Per-position figures (docs/perps.md, "Accounts"), in q of its market.

func (p *position) unrealized() *big.Int { // 2·P·S − C
	u := new(big.Int).Mul(bi(2*p.m.mark), bi(p.S))
	return u.Sub(u, p.C)
}

func (p *position) notional() *big.Int { // 2·P·|S|
	return new(big.Int).Mul(bi(2*p.m.mark), bi(abs(p.S)))
}

func (m *market) lev() *big.Int { return bi(int64(m.cfg.Perp.MaxLeverage)) }

func (p *position) im() *big.Int { return ceilDiv(p.notional(), p.m.lev()) }

func (p *position) mm() *big.Int {
	return ceilDiv(p.notional(), new(big.Int).Mul(bi(2), p.m.lev()))
}

func (m *market) wei(x *big.Int) *big.Int { return new(big.Int).Mul(x, m.q) }

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func sign(x int64) int64 {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// positionsOf lists owner's open positions, markets ascending.
func (e *Engine) positionsOf(owner clob.Address) []*position {
	var out []*position
	for _, m := range e.markets {
		if p := e.pos[posKey{m.cfg.ID, owner}]; p != nil {
			out = append(out, p)
		}
	}
	return out
}

// sums is an account's Σ U, Σ IM and Σ MM over its positions, in wei.
func (e *Engine) sums(owner clob.Address) (u, im, mm *big.Int) {
	u, im, mm = new(big.Int), new(big.Int), new(big.Int)
	for _, p := range e.positionsOf(owner) {
		u.Add(u, p.m.wei(p.unrealized()))
		im.Add(im, p.m.wei(p.im()))
		mm.Add(mm, p.m.wei(p.mm()))
	}
	return u, im, mm
}

// exposure is an extra order counted in the worst-case exposure: lots on
// side of book, replacing replaced lots the account already counts there.
type exposure struct {
	book           clob.Hash
	side           clob.Side
	lots, replaced int64
}

// imo is the initial margin of the account's worst-case exposure, wei:
// Σ over perp markets of ceil(2·P·W / maxLeverage)·q, W = max(|S + B|, |S − A|).
func (e *Engine) imo(owner clob.Address, extra *exposure) *big.Int {
	sum := new(big.Int)
	for _, m := range e.markets {
		var s int64
		if p := e.pos[posKey{m.cfg.ID, owner}]; p != nil {
			s = p.S
		}
		b, a := e.Engine.OpenLots(m.cfg.ID, owner)
		if extra != nil && extra.book == m.cfg.ID {
			if extra.side == clob.Buy {
				b += extra.lots - extra.replaced
			} else {
				a += extra.lots - extra.replaced
			}
		}
		w := max(abs(s+b), abs(s-a))
		x := new(big.Int).Mul(bi(2*m.mark), bi(w))
		sum.Add(sum, m.wei(ceilDiv(x, m.lev())))
	}
	return sum
}

// headroom is Cash − Debt − Locked + Σ U − IMo (wei, signed), with the
// envelope's staged native locks taken off the ledger's free cash.
func (e *Engine) headroom(owner clob.Address, extra *exposure, stagedLock *big.Int) *big.Int {
	h := e.free(owner)
	if stagedLock != nil {
		h.Sub(h, stagedLock)
	}
	if d := e.debt[owner]; d != nil {
		h.Sub(h, d)
	}
	u, _, _ := e.sums(owner)
	h.Add(h, u)
	return h.Sub(h, e.imo(owner, extra))
}

// withdrawable is max(0, headroom).
func (e *Engine) withdrawable(owner clob.Address, stagedLock *big.Int) *big.Int {
	h := e.headroom(owner, nil, stagedLock)
	if h.Sign() < 0 {
		h.SetInt64(0)
	}
	return h
}

// equity is Cash − Debt + Σ U (wei).
func (e *Engine) equity(owner clob.Address) *big.Int {
	u, _, _ := e.sums(owner)
	return u.Add(u, e.cashMinusDebt(owner))
}

// AdmitOrder is the perp admission check (docs/perps.md, "Admission of
// perp orders", steps 2 and 3).
func (e *Engine) AdmitOrder(owner clob.Address, book clob.Hash, side clob.Side, lots int64, flags uint8, replaced int64, stagedLock *big.Int) (int64, clob.Reason) {
	if flags&clob.FlagReduceOnly != 0 {
		// an update of a REDUCE_ONLY order is cut the same way
		s := e.Position(book, owner)
		switch {
		case side == clob.Sell && s > 0:
			return min(lots, s), clob.OK
		case side == clob.Buy && s < 0:
			return min(lots, -s), clob.OK
		}
		return 0, clob.ReasonReduceOnlyNoPosition
	}
	x := &exposure{book: book, side: side, lots: lots, replaced: replaced}
	if e.imo(owner, x).Cmp(e.imo(owner, nil)) <= 0 {
		return lots, clob.OK
	}
	if e.headroom(owner, x, stagedLock).Sign() >= 0 {
		return lots, clob.OK
	}
	return 0, clob.ReasonInsufficientMargin
}

// Position is owner's size in lots on a perp book.
func (e *Engine) Position(book clob.Hash, owner clob.Address) int64 {
	if p := e.pos[posKey{book, owner}]; p != nil {
		return p.S
	}
	return 0
}

// Margin returns the account's cross-margin summary.
func (e *Engine) Margin(owner clob.Address, acc clob.Accounts) clob.MarginInfo {
	e.inner = acc
	u, im, mm := e.sums(owner)
	info := clob.MarginInfo{Owner: owner, Unrealized: toSigned(u), InitialMargin: toU(im), Maintenance: toU(mm)}
	cash := e.cashMinusDebt(owner)
	info.Cash = toSigned(cash)
	info.Equity = toSigned(new(big.Int).Add(cash, u))
	realized, notional := new(big.Int), new(big.Int)
	for _, p := range e.positionsOf(owner) {
		realized.Add(realized, p.realized)
		notional.Add(notional, p.m.wei(p.notional()))
		info.Positions++
	}
	info.Realized, info.Notional = toSigned(realized), toU(notional)
	info.OrderMargin = toU(e.imo(owner, nil))
	info.Withdrawable = toU(e.withdrawable(owner, nil))
	return info
}

// Debt is the owner's native debt (wei).
func (e *Engine) Debt(owner clob.Address) uint256.Int {
	if d := e.debt[owner]; d != nil {
		return toU(d)
	}
	return uint256.Int{}
}

// AppendPositions appends the owner's open positions, books ascending;
// Liquidation is left 0 (LiquidationPrices fills it), as in core/clob.
func (e *Engine) AppendPositions(dst []clob.PositionInfo, owner clob.Address) []clob.PositionInfo {
	for _, p := range e.positionsOf(owner) {
		m := p.m
		lot, tick := m.cfg.LotSize.ToBig(), m.cfg.TickPrecision.ToBig()
		size := new(big.Int).Mul(bi(p.S), lot)
		cost := m.wei(p.C)
		entry := new(big.Int).Mul(new(big.Int).Abs(cost), wad)
		entry.Quo(entry, new(big.Int).Abs(size))
		dst = append(dst, clob.PositionInfo{
			Book: m.cfg.ID, Owner: owner,
			Size: toSigned(size), Cost: toSigned(cost), EntryPrice: toU(entry),
			Mark:           toU(new(big.Int).Mul(bi(m.mark), tick)),
			Notional:       toU(m.wei(p.notional())),
			Unrealized:     toSigned(m.wei(p.unrealized())),
			Realized:       toSigned(p.realized),
			Funding:        toSigned(p.funding),
			InitialMargin:  toU(m.wei(p.im())),
			Maintenance:    toU(m.wei(p.mm())),
			OpenedTickUs:   p.openedUs,
			EntryFundingIx: toSigned(m.indexWei(p.entryIx)),
		})
	}
	return dst
}

// indexWei converts a funding index (q per lot) to quote wei per whole base
// unit (1e18 base wei), truncated toward zero (docs/perps.md, "Funding").
func (m *market) indexWei(ix *big.Int) *big.Int {
	x := new(big.Int).Mul(m.wei(ix), wad)
	return x.Quo(x, m.cfg.LotSize.ToBig())
}

// PerpMarket returns a perp market's dynamic state.
func (e *Engine) PerpMarket(book clob.Hash) (clob.PerpInfo, bool) {
	m := e.market(book)
	if m == nil {
		return clob.PerpInfo{}, false
	}
	tick := m.cfg.TickPrecision.ToBig()
	oi := new(big.Int) // Σ 2·P·|S| q: the notional of every open position
	for _, owner := range e.holders {
		if p := e.pos[posKey{book, owner}]; p != nil {
			oi.Add(oi, m.wei(p.notional()))
		}
	}
	info := clob.PerpInfo{
		Book:         book,
		Oracle:       toU(new(big.Int).Mul(bi(m.oracle), tick)),
		Mark:         toU(new(big.Int).Mul(bi(m.mark), tick)),
		FundingRate:  toSigned(m.rate),
		FundingIndex: toSigned(m.indexWei(m.index)),
		OpenInterest: toU(oi),
		WalkFrozen:   m.frozen,
	}
	if m.ran {
		info.FundingLastUs = m.lastUs
	}
	return info, true
}

// AppendPerpAccounts appends every account with an open position, in the
// order they first opened one.
func (e *Engine) AppendPerpAccounts(dst []clob.Address) []clob.Address {
	for _, owner := range e.holders {
		if len(e.positionsOf(owner)) > 0 {
			dst = append(dst, owner)
		}
	}
	return dst
}

// PerpCost is Σ C over every open position, wei.
func (e *Engine) PerpCost() clob.Signed {
	sum := new(big.Int)
	for _, owner := range e.holders {
		for _, p := range e.positionsOf(owner) {
			sum.Add(sum, p.m.wei(p.C))
		}
	}
	return toSigned(sum)
}

// LiquidationPrices sets the Liquidation of each of ps (one owner's
// positions, as AppendPositions returned them): the mark P' at which the
// account's equity would meet its maintenance, the other marks fixed and
// MM taken without its rounding up (docs/perps.md, "Reads"). For a long,
// E + 2·S·(P' − P)·q = MMo + P'·S·q/L gives
// P' = L·(MMo − E + 2·S·P·q) / ((2L − 1)·S·q); for a short
// P' = L·(E − MMo + 2·|S|·P·q) / ((2L + 1)·|S|·q); wei = floor(P'·tick);
// 0 when the numerator is not positive.
func (e *Engine) LiquidationPrices(ps []clob.PositionInfo, acc clob.Accounts) {
	if len(ps) == 0 {
		return
	}
	owner := ps[0].Owner
	e.inner = acc
	eq := e.equity(owner)
	_, _, mm := e.sums(owner)
	for k := range ps {
		p := e.pos[posKey{ps[k].Book, owner}]
		m := p.m
		num := new(big.Int).Sub(mm, m.wei(p.mm()))
		num.Sub(num, eq)
		if p.S < 0 {
			num.Neg(num)
		}
		num.Add(num, m.wei(p.notional()))
		if num.Sign() <= 0 {
			ps[k].Liquidation = uint256.Int{}
			continue
		}
		l := m.lev()
		den := new(big.Int).Mul(bi(2), l)
		den.Add(den, bi(-sign(p.S)))
		den.Mul(den, bi(abs(p.S)))
		den.Mul(den, m.q)
		num.Mul(num, l)
		num.Mul(num, m.cfg.TickPrecision.ToBig())
		ps[k].Liquidation = toU(num.Quo(num, den))
	}
}
