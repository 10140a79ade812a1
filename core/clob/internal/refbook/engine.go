package refbook

import (
	"bytes"
	"errors"
	"fmt"
	"sort"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
)

// unitsMax bounds a lot or step count (docs/auction.md "Units").
const unitsMax = 1 << 53

var one18 = uint256.NewInt(1_000_000_000_000_000_000)

// order is one live order (pending its first tick, or resting), or a dead
// one still referenced by a pending intent (live == false).
type order struct {
	id    clob.Hash
	bk    *book
	owner clob.Address
	side  clob.Side
	typ   clob.OrderType
	flags uint8
	ttl   uint64
	bound bool // fired by an Asset-grouped trigger (perp books)

	priceSteps int64 // limit, or a market order's cap / floor
	remLots    int64 // remaining size
	sizeLots   int64 // remaining + filled
	filledLots int64
	filledQuote,
	fee uint256.Int
	// reserved is what this order holds locked in Accounts: every Lock made
	// for it minus every SpendLocked/Unlock made for it.
	reserved uint256.Int
	// pendingUpdates counts admitted updates not yet drained; settled is
	// what the order must hold once the last of them drains: what it held
	// before the first one, then the reservation of each applied one.
	pendingUpdates int
	settled        uint256.Int

	live     bool
	pending  bool   // admitted, not yet drained into its book
	admitSeq uint64 // engine-wide sequence of the intent that created it
	admitTickUs,
	expiresUs,
	deadlineUs int64
	// entryTickUs is the tick the order last entered its queue: the tick it
	// was placed in, or the tick an update re-queued it in.
	entryTickUs int64
}

func (o *order) isBuy() bool      { return o.side == clob.Buy }
func (o *order) isMarket() bool   { return o.typ == clob.Market }
func (o *order) isIOC() bool      { return o.flags&clob.FlagIOC != 0 || o.typ == clob.Market }
func (o *order) postOnly() bool   { return o.flags&clob.FlagPostOnly != 0 }
func (o *order) halfSteps() int64 { return 2 * o.priceSteps }

// backing is the token an order's reservation is held in.
func (b *book) backing(side clob.Side) clob.Address {
	if side == clob.Buy {
		return b.cfg.Quote
	}
	return b.cfg.Base
}

// intent is one admitted intent waiting for its tick.
type intent struct {
	kind     clob.IntentKind
	envSeq   uint64 // admission sequence of its envelope
	tag      uint64
	admitUs  int64
	deadline uint64
	ord      *order // submit: the order; cancel/update: the target
	injected bool   // submit: a fired trigger's order, in no envelope
	ext      any    // trigger intents: the perp layer's payload

	// update
	newLots, newSteps int64
	lockUp, lockDown  uint256.Int // the reservation change made at admission

	// transfer
	owner, token, to clob.Address
	amount           uint256.Int
}

type book struct {
	cfg       clob.MarketConfig
	unitQuote uint256.Int // quote wei of one lot at one half-step
	feeMax    uint256.Int // max(maker, taker)
	orders    []*order    // live orders in creation order (compacted each tick)
	live      int         // Invariant: number of o.live in orders
	pending   []*intent

	ran        bool
	lastTickUs int64
	hasPrice   bool
	priceHalf  int64 // last clearing price in half-steps
}

func (b *book) compact() {
	keep := b.orders[:0]
	for _, o := range b.orders {
		if o.live {
			keep = append(keep, o)
		}
	}
	for i := len(keep); i < len(b.orders); i++ {
		b.orders[i] = nil
	}
	b.orders = keep
}

// Engine is the reference engine. Not safe for concurrent use.
type Engine struct {
	limits    clob.Limits
	books     []*book // ascending id
	byID      map[clob.Hash]*order
	transfers []*intent

	transfersRan        bool
	transfersLastTickUs int64

	envSeq    uint64
	intentSeq uint64

	perp Perp // perp books' money and triggers (nil: spot only)
}

// NewEngine returns an engine with no markets.
func NewEngine(l clob.Limits) *Engine {
	return &Engine{limits: l, byID: make(map[clob.Hash]*order)}
}

func less(a, b clob.Hash) bool { return bytes.Compare(a[:], b[:]) < 0 }

func (e *Engine) book(id clob.Hash) *book {
	for _, b := range e.books {
		if b.cfg.ID == id {
			return b
		}
	}
	return nil
}

// CreateMarket adds a book.
func (e *Engine) CreateMarket(cfg *clob.MarketConfig) error {
	if e.book(cfg.ID) != nil {
		return fmt.Errorf("cannot create market %x: it exists", cfg.ID)
	}
	if cfg.IntervalUs <= 0 {
		return fmt.Errorf("cannot create market %x: auction interval %d is not positive", cfg.ID, cfg.IntervalUs)
	}
	if cfg.LotSize.IsZero() || cfg.TickPrecision.IsZero() {
		return fmt.Errorf("cannot create market %x: lot size and tick precision must be positive", cfg.ID)
	}
	var prod uint256.Int
	if _, over := prod.MulOverflow(&cfg.LotSize, &cfg.TickPrecision); over {
		return fmt.Errorf("cannot create market %x: lot size × tick precision overflows", cfg.ID)
	}
	var twoE18, u, rem uint256.Int
	twoE18.Mul(one18, uint256.NewInt(2))
	u.DivMod(&prod, &twoE18, &rem)
	if !rem.IsZero() || u.IsZero() {
		return errors.New("cannot create market: lot_size × tick_precision / 2e18 must be a whole number ≥ 1")
	}
	if !cfg.MakerFee.Lt(one18) || !cfg.TakerFee.Lt(one18) {
		return fmt.Errorf("cannot create market %x: fees must be < 1e18", cfg.ID)
	}
	b := &book{cfg: *cfg, unitQuote: u}
	b.feeMax = cfg.MakerFee
	if cfg.TakerFee.Gt(&cfg.MakerFee) {
		b.feeMax = cfg.TakerFee
	}
	e.books = append(e.books, b)
	sort.Slice(e.books, func(i, j int) bool { return less(e.books[i].cfg.ID, e.books[j].cfg.ID) })
	return nil
}

// Market returns the book's configuration (read-only).
func (e *Engine) Market(id clob.Hash) (*clob.MarketConfig, bool) {
	b := e.book(id)
	if b == nil {
		return nil, false
	}
	return &b.cfg, true
}

// AppendMarkets appends every book id, ascending.
func (e *Engine) AppendMarkets(dst []clob.Hash) []clob.Hash {
	for _, b := range e.books {
		dst = append(dst, b.cfg.ID)
	}
	return dst
}

// OrderID is keccak256(abi.encode(address signer, uint64 nonce, uint32 sequence)).
func OrderID(signer clob.Address, nonce uint64, seq uint32) clob.Hash {
	var buf [96]byte
	copy(buf[12:32], signer[:])
	for i := 0; i < 8; i++ {
		buf[63-i] = byte(nonce >> (8 * i))
	}
	for i := 0; i < 4; i++ {
		buf[95-i] = byte(seq >> (8 * i))
	}
	var h clob.Hash
	copy(h[:], crypto.Keccak256(buf[:]))
	return h
}

// AppendLevels appends up to depth aggregated levels of one side's resting
// orders (pending ones are not in the book yet), best first (depth ≤ 0: all).
func (e *Engine) AppendLevels(dst []clob.Level, id clob.Hash, side clob.Side, depth int) []clob.Level {
	b := e.book(id)
	if b == nil {
		return dst
	}
	var rest []*order
	for _, o := range b.orders {
		if o.live && !o.pending && o.side == side {
			rest = append(rest, o)
		}
	}
	sort.Slice(rest, func(i, j int) bool {
		if side == clob.Buy {
			return rest[i].priceSteps > rest[j].priceSteps
		}
		return rest[i].priceSteps < rest[j].priceSteps
	})
	levels := 0
	for i := 0; i < len(rest); {
		if depth > 0 && levels == depth {
			break
		}
		j := i
		var lots int64
		for j < len(rest) && rest[j].priceSteps == rest[i].priceSteps {
			lots += rest[j].remLots
			j++
		}
		var lv clob.Level
		lv.Price = mul(steps(rest[i].priceSteps), &b.cfg.TickPrecision)
		lv.Volume = mul(steps(lots), &b.cfg.LotSize)
		lv.Orders = j - i
		dst = append(dst, lv)
		levels++
		i = j
	}
	return dst
}

// Order returns a live order.
func (e *Engine) Order(id clob.Hash) (clob.OrderInfo, bool) {
	o, ok := e.byID[id]
	if !ok || !o.live {
		return clob.OrderInfo{}, false
	}
	b := o.bk
	info := clob.OrderInfo{
		ID: o.id, Book: b.cfg.ID, Owner: o.owner, Side: o.side, Type: o.typ, Flags: o.flags,
		Price:       mul(steps(o.priceSteps), &b.cfg.TickPrecision),
		Size:        mul(steps(o.sizeLots), &b.cfg.LotSize),
		Remaining:   mul(steps(o.remLots), &b.cfg.LotSize),
		FilledBase:  mul(steps(o.filledLots), &b.cfg.LotSize),
		FilledQuote: o.filledQuote,
		Fee:         o.fee,
		Pending:     o.pending,
		AdmitTickUs: o.admitTickUs, ExpiresUs: o.expiresUs, DeadlineUs: o.deadlineUs,
	}
	return info, true
}

// LastPrice returns the book's last clearing price.
func (e *Engine) LastPrice(id clob.Hash) (uint256.Int, bool) {
	b := e.book(id)
	if b == nil || !b.hasPrice {
		return uint256.Int{}, false
	}
	return b.priceWei(b.priceHalf), true
}

func (b *book) priceWei(half int64) uint256.Int {
	var p, two uint256.Int
	p = mul(steps(half), &b.cfg.TickPrecision)
	two.SetUint64(2)
	p.Div(&p, &two)
	return p
}

// Locked is what the engine holds locked for owner in token: the
// reservations of its live orders plus its pending transfers. The
// differential test checks it against the ledger's locked balance.
func (e *Engine) Locked(token, owner clob.Address) uint256.Int {
	var sum uint256.Int
	for _, b := range e.books {
		for _, o := range b.orders {
			if o.live && o.owner == owner && b.backing(o.side) == token {
				sum = add(&sum, &o.reserved)
			}
		}
	}
	for _, t := range e.transfers {
		if t.owner == owner && t.token == token {
			sum = add(&sum, &t.amount)
		}
	}
	return sum
}

// CheckInvariants reports the first broken per-order invariant: remaining
// and filled sizes are non-negative and add up to the order's size, the
// filled base never exceeds the size, and a buy's reservation covers the
// worst case of its remainder.
func (e *Engine) CheckInvariants() error {
	for _, b := range e.books {
		// an admitted update already holds the reservation of its new size
		// and price; the order takes them at its tick
		after := map[*order]*intent{}
		for _, it := range b.pending {
			if it.kind == clob.IntentUpdate {
				after[it.ord] = it
			}
		}
		for _, o := range b.orders {
			if !o.live {
				continue
			}
			lots, priceSteps := o.remLots, o.priceSteps
			if it := after[o]; it != nil {
				lots, priceSteps = it.newLots, it.newSteps
			}
			if o.remLots <= 0 || o.filledLots < 0 || o.filledLots+o.remLots != o.sizeLots {
				return fmt.Errorf("order %x: remaining %d filled %d size %d", o.id, o.remLots, o.filledLots, o.sizeLots)
			}
			need := b.reservation(o.side, lots, priceSteps)
			if o.reserved.Lt(&need) {
				return fmt.Errorf("order %x: reserved %s < needed %s", o.id, o.reserved.Dec(), need.Dec())
			}
		}
	}
	return nil
}
