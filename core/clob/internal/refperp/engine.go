package refperp

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/internal/refbook"
)

// Rule constants of docs/perps.md.
const (
	// emaWindowUs is the mark premium's averaging window, and the longest
	// dt a tick accounts for (180 s).
	emaWindowUs = 180_000_000
	// unitsMax bounds a lot or step count, as on every book.
	unitsMax = 1 << 53
)

var (
	wad = big.NewInt(1_000_000_000_000_000_000)
	// fundingDen is 1e18 × the 8-hour window in µs.
	fundingDen = new(big.Int).Mul(wad, big.NewInt(clob.FundingWindowUs))
)

// market is a perp market's state beside its book.
type market struct {
	cfg    clob.MarketConfig
	q      *big.Int // unitQuote: wei of one lot at one half-step
	oracle int64    // steps
	mark   int64    // steps
	ema    int64    // premium EMA, half-steps
	frozen bool     // admin_setOraclePrice froze the walk
	ran    bool     // the market has had a perp tick
	lastUs int64    // time of its last perp tick
	rate   *big.Int // the last tick's funding rate (fraction of 1e18 per 8 h)
	index  *big.Int // cumulative funding, q per lot
}

// position is one (market, owner) position with its history since it
// opened.
type position struct {
	m        *market
	owner    clob.Address
	S        int64
	C        *big.Int // q, same sign as S
	realized *big.Int // wei, since opened, before fees
	funding  *big.Int // wei paid (+) or received (−) since opened
	openedUs int64
	entryIx  *big.Int // the market's index when it opened (q per lot)
}

type posKey struct {
	book  clob.Hash
	owner clob.Address
}

// Engine is the reference spot and perp engine: refbook for matching and
// spot money, this package for perp money and triggers. Not safe for
// concurrent use.
type Engine struct {
	*refbook.Engine
	limits  clob.Limits
	native  clob.Address // the perp markets' collateral (their quote)
	markets []*market    // perp markets, ascending id
	pos     map[posKey]*position
	debt    map[clob.Address]*big.Int
	// holders: every account that ever opened a position, in the order
	// it first opened one (it keeps its place after closing:
	// docs/perps.md, "Liquidation").
	holders  []clob.Address
	triggers []*trigger // stored, ascending id within a book not required
	// flat lists the positions a fill of the running tick left at size 0
	// (the flat sweep's candidates).
	flat  []posKey
	nowUs int64 // the running tick (fills record it)
	inner clob.Accounts
}

// NewEngine returns an engine with no markets.
func NewEngine(l clob.Limits) *Engine {
	e := &Engine{Engine: refbook.NewEngine(l), limits: l, pos: map[posKey]*position{}, debt: map[clob.Address]*big.Int{}}
	e.Engine.SetPerp(e)
	return e
}

// CreateMarket adds a spot or perp book.
func (e *Engine) CreateMarket(cfg *clob.MarketConfig) error {
	if cfg.Kind != clob.Perp {
		return e.Engine.CreateMarket(cfg)
	}
	c := *cfg
	cfg = &c
	p := &cfg.Perp
	// Zero rates take the defaults (docs/perps.md, "Admission of perp
	// orders", parameters).
	if p.InterestRate.IsZero() {
		p.InterestRate.SetUint64(1e14)
	}
	if p.MaxFundingRate.IsZero() {
		p.MaxFundingRate.SetUint64(32e16)
	}
	if p.MaxLeverage < 1 {
		return errors.New("cannot create perp market: max leverage must be ≥ 1")
	}
	if len(e.markets) > 0 && cfg.Quote != e.native {
		return errors.New("cannot create perp market: every perp market is margined in the one native token")
	}
	oracle, r := refbook.Units(&p.OraclePrice, &cfg.TickPrecision, clob.ReasonOraclePrice, clob.ReasonOraclePrice)
	if r != clob.OK {
		return fmt.Errorf("cannot create perp market: oracle price: %s", r)
	}
	if err := e.Engine.CreateMarket(cfg); err != nil {
		return err
	}
	q := new(big.Int).Mul(cfg.LotSize.ToBig(), cfg.TickPrecision.ToBig())
	q.Quo(q, new(big.Int).Mul(wad, big.NewInt(2)))
	m := &market{cfg: *cfg, q: q, oracle: oracle, mark: oracle, rate: new(big.Int), index: new(big.Int)}
	e.native = cfg.Quote
	i := 0
	for i < len(e.markets) && bytes.Compare(e.markets[i].cfg.ID[:], cfg.ID[:]) < 0 {
		i++
	}
	e.markets = append(e.markets[:i], append([]*market{m}, e.markets[i:]...)...)
	return nil
}

func (e *Engine) market(id clob.Hash) *market {
	for _, m := range e.markets {
		if m.cfg.ID == id {
			return m
		}
	}
	return nil
}

// SetOraclePrice sets a perp market's oracle price exactly and freezes its
// walk; the mark follows at the market's next tick.
func (e *Engine) SetOraclePrice(book clob.Hash, price *uint256.Int) clob.Reason {
	m := e.market(book)
	if m == nil {
		return clob.ReasonUnknownBook
	}
	steps, r := refbook.Units(price, &m.cfg.TickPrecision, clob.ReasonOraclePrice, clob.ReasonOraclePrice)
	if r != clob.OK {
		return clob.ReasonOraclePrice
	}
	m.oracle, m.frozen = steps, true
	return clob.OK
}

// Admit validates and applies an envelope atomically (refbook's staging,
// with native spends capped at the withdrawable amount).
func (e *Engine) Admit(a *clob.Admission, env *clob.Envelope, acc clob.Accounts) clob.Reason {
	e.inner = acc
	return e.Engine.Admit(a, env, &accounts{e: e, acc: acc})
}

// NextTickDue is refbook's, or the next grid point of a perp market, which
// ticks every interval whether or not its book has work: the first
// positive multiple of its interval after its last tick (0 before the
// first), or, after an idle stretch, the latest one ≤ nowUs.
func (e *Engine) NextTickDue(nowUs int64) (int64, bool) {
	best, ok := e.Engine.NextTickDue(nowUs)
	for _, m := range e.markets {
		iv := m.cfg.IntervalUs
		t := max(m.lastUs+iv, nowUs/iv*iv)
		if t <= nowUs && (!ok || t < best) {
			best, ok = t, true
		}
	}
	return best, ok
}

// Tick runs refbook's tick (books, then transfers), then the perp part:
// every perp market on the grid gets its oracle, mark and funding; then the
// liquidation pass; then the triggers.
func (e *Engine) Tick(tickUs int64, acc clob.Accounts, out *clob.TickResult) {
	e.inner, e.nowUs, e.flat = acc, tickUs, nil
	w := &accounts{e: e, acc: acc}
	e.Engine.Tick(tickUs, w, out)
	late := len(out.Events)
	var ticked []*market
	for _, m := range e.markets {
		if tickUs%m.cfg.IntervalUs == 0 && tickUs > m.lastUs {
			e.marketTick(m, tickUs, out)
			ticked = append(ticked, m)
		}
	}
	e.liquidate(w, out)
	e.fireTriggers(ticked, tickUs, w, out)
	e.regroup(out, late)
}

// regroup puts the late events (Events[late:], everything after refbook's
// tick: liquidations, the flat sweep, triggers) into their books' ranges:
// each book's range is its matching events, then its late events in the
// order they were emitted; a book with late events that did not run gets an
// idle BookTick. Books ascending by id. After the last range: the events of
// no range (the transfers), then the trigger firings, which stay out of
// every range (the fired order enters its book, with EventPlaced, in the
// tick it lands in). (reading) docs/auction.md, "Events": every event of a
// book but a trigger's firing lies in its book's range.
func (e *Engine) regroup(out *clob.TickResult, late int) {
	if len(out.Events) == late {
		return
	}
	events := append([]clob.Event(nil), out.Events...)
	books := append([]clob.BookTick(nil), out.Books...)
	ranged := make([]bool, late)
	var ids []clob.Hash
	has := map[clob.Hash]bool{}
	for _, bt := range books {
		ids, has[bt.Book] = append(ids, bt.Book), true
		for i := bt.FirstEvent; i < bt.EndEvent; i++ {
			ranged[i] = true
		}
	}
	for _, ev := range events[late:] {
		if ev.Kind != clob.EventTriggerFired && !has[ev.Book] {
			ids, has[ev.Book] = append(ids, ev.Book), true
		}
	}
	slices.SortFunc(ids, func(x, y clob.Hash) int { return bytes.Compare(x[:], y[:]) })
	out.Events, out.Books = out.Events[:0], out.Books[:0]
	for _, id := range ids {
		var bt clob.BookTick
		found := false
		for _, b := range books {
			if b.Book == id {
				bt, found = b, true
			}
		}
		if !found {
			bt = e.Engine.IdleBookTick(id)
		}
		first := len(out.Events)
		if found {
			out.Events = append(out.Events, events[bt.FirstEvent:bt.EndEvent]...)
		}
		for _, ev := range events[late:] {
			if ev.Kind != clob.EventTriggerFired && ev.Book == id {
				out.Events = append(out.Events, ev)
			}
		}
		bt.FirstEvent, bt.EndEvent = first, len(out.Events)
		out.Books = append(out.Books, bt)
	}
	for i, ev := range events[:late] {
		if !ranged[i] {
			out.Events = append(out.Events, ev)
		}
	}
	for _, ev := range events[late:] {
		if ev.Kind == clob.EventTriggerFired {
			out.Events = append(out.Events, ev)
		}
	}
}

// ---- money ----

func (e *Engine) debtOf(owner clob.Address) *big.Int {
	d := e.debt[owner]
	if d == nil {
		d = new(big.Int)
		e.debt[owner] = d
	}
	return d
}

// free is the owner's native cash minus locked.
func (e *Engine) free(owner clob.Address) *big.Int {
	av := e.inner.Available(e.native, owner)
	return av.ToBig()
}

// spendFree takes x ≤ free cash out of the ledger (a loss paid).
func (e *Engine) spendFree(owner clob.Address, x *big.Int) {
	if x.Sign() == 0 {
		return
	}
	u, over := uint256.FromBig(x)
	if over {
		panic("BUG: amount overflows")
	}
	e.inner.Lock(e.native, owner, u)
	e.inner.SpendLocked(e.native, owner, u)
}

// change moves a signed wei amount into (out of, if negative) the owner's
// native cash: a loss spends free cash first and the rest becomes debt; a
// gain pays debt back first (docs/perps.md, "Accounts").
func (e *Engine) change(owner clob.Address, amount *big.Int) {
	d := e.debtOf(owner)
	switch amount.Sign() {
	case -1:
		loss := new(big.Int).Neg(amount)
		x := minBig(loss, e.free(owner))
		e.spendFree(owner, x)
		d.Add(d, loss.Sub(loss, x))
	case 1:
		x := minBig(amount, d)
		d.Sub(d, x)
		rest := new(big.Int).Sub(amount, x)
		if rest.Sign() > 0 {
			u, _ := uint256.FromBig(rest)
			e.inner.Credit(e.native, owner, u)
		}
	}
}

// repay pays debt from free cash: after an unlock, so that Debt > 0 ⇒
// Cash = Locked keeps holding. (reading) The doc states the invariant but
// not this step.
func (e *Engine) repay(owner clob.Address) {
	d := e.debt[owner]
	if d == nil || d.Sign() == 0 {
		return
	}
	x := minBig(d, e.free(owner))
	e.spendFree(owner, x)
	d.Sub(d, x)
}

// cashMinusDebt is the owner's native Cash − Debt (Cash includes locked).
func (e *Engine) cashMinusDebt(owner clob.Address) *big.Int {
	c := e.free(owner)
	c.Add(c, e.locked(owner))
	if d := e.debt[owner]; d != nil {
		c.Sub(c, d)
	}
	return c
}

// locked is the owner's native locked amount, read through the ledger
// (cash − available needs cash, which Accounts does not expose: the
// reference keeps the reservations itself).
func (e *Engine) locked(owner clob.Address) *big.Int {
	l := e.Engine.Locked(e.native, owner)
	return l.ToBig()
}

// accounts wraps the ledger for refbook: native spends are capped at the
// withdrawable amount, and an unlock of native cash pays debt first.
type accounts struct {
	e   *Engine
	acc clob.Accounts
}

func (a *accounts) Available(token, owner clob.Address) uint256.Int {
	av := a.acc.Available(token, owner)
	if token != a.e.native || len(a.e.markets) == 0 {
		return av
	}
	w := a.e.withdrawable(owner, nil)
	if w.Cmp(av.ToBig()) < 0 {
		u, _ := uint256.FromBig(w)
		return *u
	}
	return av
}

func (a *accounts) Lock(token, owner clob.Address, x *uint256.Int) { a.acc.Lock(token, owner, x) }
func (a *accounts) Unlock(token, owner clob.Address, x *uint256.Int) {
	a.acc.Unlock(token, owner, x)
	if token == a.e.native {
		a.e.repay(owner)
	}
}
func (a *accounts) SpendLocked(token, owner clob.Address, x *uint256.Int) {
	a.acc.SpendLocked(token, owner, x)
}
func (a *accounts) Credit(token, owner clob.Address, x *uint256.Int) {
	if token != a.e.native {
		a.acc.Credit(token, owner, x)
		return
	}
	a.e.change(owner, x.ToBig()) // a credit pays debt first
}
func (a *accounts) CollectFee(token clob.Address, x *uint256.Int) { a.acc.CollectFee(token, x) }

// Debit is a loss: only native cash carries debt.
func (a *accounts) Debit(token, owner clob.Address, x *uint256.Int) {
	if token != a.e.native {
		panic("BUG: debit of a non-native token")
	}
	a.e.change(owner, new(big.Int).Neg(x.ToBig()))
}

// Holding reads the inner ledger's cash and locked and the reference's own
// debt.
func (a *accounts) Holding(token, owner clob.Address) (cash, locked, debt uint256.Int) {
	cash, locked, _ = a.acc.Holding(token, owner)
	if d := a.e.debt[owner]; token == a.e.native && d != nil {
		debt = toU(d)
	}
	return cash, locked, debt
}

func minBig(x, y *big.Int) *big.Int {
	if x.Cmp(y) < 0 {
		return new(big.Int).Set(x)
	}
	return new(big.Int).Set(y)
}

// ceilDiv is ⌈x / y⌉ for x ≥ 0, y > 0.
func ceilDiv(x, y *big.Int) *big.Int {
	z := new(big.Int).Add(x, y)
	z.Sub(z, big.NewInt(1))
	return z.Quo(z, y)
}

// floorDiv is ⌊x / y⌋ for y > 0 (Go's Div is Euclidean: floor for y > 0).
func floorDiv(x, y *big.Int) *big.Int { return new(big.Int).Div(x, y) }

func toSigned(x *big.Int) clob.Signed {
	var s clob.Signed
	s.Neg = x.Sign() < 0
	u, over := uint256.FromBig(new(big.Int).Abs(x))
	if over {
		panic("BUG: amount overflows")
	}
	s.Abs = *u
	return s
}

func toU(x *big.Int) uint256.Int {
	if x.Sign() < 0 {
		panic("BUG: negative amount")
	}
	u, over := uint256.FromBig(x)
	if over {
		panic("BUG: amount overflows")
	}
	return *u
}

func bi(n int64) *big.Int { return big.NewInt(n) }

// CheckInvariants reports the first broken perp invariant: Σ S = 0 per
// market, C has the sign of S, holders lists every account with an open
// position once, and (for the owners named) Debt > 0 ⇒ Cash = Locked.
func (e *Engine) CheckInvariants(acc clob.Accounts, owners ...clob.Address) error {
	e.inner = acc
	if err := e.Engine.CheckInvariants(); err != nil {
		return err
	}
	for _, m := range e.markets {
		var sum int64
		for _, owner := range e.holders {
			if p := e.pos[posKey{m.cfg.ID, owner}]; p != nil {
				sum += p.S
				if p.S == 0 || int(sign(p.S)) != p.C.Sign() && p.C.Sign() != 0 {
					return fmt.Errorf("market %x: position of %x is (%d, %s)", m.cfg.ID[:2], owner[:2], p.S, p.C)
				}
			}
		}
		if sum != 0 {
			return fmt.Errorf("market %x: Σ S = %d", m.cfg.ID[:2], sum)
		}
	}
	held := 0
	for i, owner := range e.holders {
		if slices.Contains(e.holders[:i], owner) {
			return fmt.Errorf("account %x listed twice", owner[:2])
		}
		held += len(e.positionsOf(owner))
	}
	if held != len(e.pos) {
		return fmt.Errorf("%d positions, %d reachable from the holders list", len(e.pos), held)
	}
	for _, owner := range owners {
		if d := e.debt[owner]; d != nil && d.Sign() > 0 && e.free(owner).Sign() > 0 {
			return fmt.Errorf("account %x has debt %s and free cash %s", owner[:2], d, e.free(owner))
		}
	}
	return nil
}
