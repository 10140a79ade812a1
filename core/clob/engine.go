package clob

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"sync"

	"github.com/ethereum/go-ethereum/crypto/keccak"
	"github.com/holiman/uint256"
)

// Engine limits.
const (
	// OrdersMaxLimit bounds Limits.OrdersMax: slots are uint32, and so is
	// the id index's mask (its table has < 4 × OrdersMax entries).
	OrdersMaxLimit = 1 << 30
	// PendingMaxLimit bounds Limits.PendingMax.
	PendingMaxLimit = 1 << 24
	// DefaultOrdersMax and DefaultPendingMax replace zero Limits fields.
	DefaultOrdersMax  = 1 << 12
	DefaultPendingMax = 1 << 10
	// MarketsMax bounds the number of books.
	MarketsMax = 1 << 10
)

// keccakState is a keccak256 sponge that can be read without allocating.
type keccakState interface {
	hash.Hash
	Read([]byte) (int, error)
}

// Engine holds every orderbook of the venue. Not safe for concurrent use.
type Engine struct {
	limits Limits
	// Invariant: books is sorted by id, ascending.
	books          []*book
	transfers      ring[pendingTransfer]
	transferLastUs int64
	seq            uint64 // envelopes admitted so far
	idh            keccakHasher
	adm            admitScratch
	tk             tickScratch
	tmp            [5]uint256.Int // ledger call arguments must not escape from the stack
	pp             perpEngine
	// Admission during a tick (stage.go).
	stg staging
	ct  concurrentTick
	rec deferredAccounts
}

// NewEngine returns an engine with no markets. Zero Limits fields take
// DefaultOrdersMax and DefaultPendingMax.
// REQUIRES: 0 < OrdersMax ≤ OrdersMaxLimit; PendingMax a power of two
// ≤ PendingMaxLimit.
func NewEngine(l Limits) *Engine {
	if l.OrdersMax == 0 {
		l.OrdersMax = DefaultOrdersMax
	}
	if l.PendingMax == 0 {
		l.PendingMax = DefaultPendingMax
	}
	if l.OrdersMax < 0 || l.OrdersMax > OrdersMaxLimit {
		panic(fmt.Sprintf("BUG: OrdersMax %d outside 1..%d", l.OrdersMax, OrdersMaxLimit))
	}
	if l.PendingMax < 0 || l.PendingMax > PendingMaxLimit || l.PendingMax&(l.PendingMax-1) != 0 {
		panic(fmt.Sprintf("BUG: PendingMax %d is not a power of two ≤ %d", l.PendingMax, PendingMaxLimit))
	}
	e := &Engine{
		limits:    l,
		transfers: newRing[pendingTransfer](l.PendingMax),
		idh:       keccakHasher{h: keccak.NewLegacyKeccak256().(keccakState)},
		pp:        perpEngine{ix: make(map[Address]int32)},
	}
	e.tk.init(&l)
	return e
}

// CreateMarket adds a book (cold path: errors are values with context).
func (e *Engine) CreateMarket(cfg *MarketConfig) error {
	u, err := marketUnits(cfg)
	if err != nil {
		return fmt.Errorf("cannot create market %x: %w", cfg.ID[:], err)
	}
	c := *cfg
	if c.Kind == Perp {
		if c.Perp, err = perpParams(cfg, &u); err != nil {
			return fmt.Errorf("cannot create market %x: %w", cfg.ID[:], err)
		}
	}
	cfg = &c
	i, found := e.findBook(cfg.ID)
	if found {
		return fmt.Errorf("cannot create market %x: id already exists", cfg.ID[:])
	}
	if len(e.books) >= MarketsMax {
		return fmt.Errorf("cannot create market %x: already %d markets", cfg.ID[:], MarketsMax)
	}
	b := newBook(cfg, &u, &e.limits)
	e.books = append(e.books, nil)
	copy(e.books[i+1:], e.books[i:])
	e.books[i] = b
	e.pp.listBooks(e.books)
	return nil
}

// marketUnits validates a market's numbers and derives its units.
func marketUnits(cfg *MarketConfig) (units, error) {
	u := units{lot: cfg.LotSize, tick: cfg.TickPrecision, makerFee: cfg.MakerFee, takerFee: cfg.TakerFee,
		base: cfg.Base, quote: cfg.Quote, intervalUs: cfg.IntervalUs}
	switch {
	case cfg.Kind != Spot && cfg.Kind != Perp:
		return u, errors.New("unknown market kind")
	case cfg.IntervalUs <= 0:
		return u, fmt.Errorf("auction interval %dµs is not positive", cfg.IntervalUs)
	case cfg.LotSize.IsZero() || cfg.TickPrecision.IsZero():
		return u, errors.New("lot size and tick precision must be positive")
	case cfg.LotSize.BitLen() > unitQuoteMaxBits:
		return u, fmt.Errorf("lot size exceeds 2^%d", unitQuoteMaxBits)
	case !cfg.MakerFee.Lt(wad) || !cfg.TakerFee.Lt(wad):
		return u, errors.New("fees must be below 1e18")
	case cfg.Kind == Perp && cfg.Quote != NativeToken:
		return u, errors.New("a perp market's quote must be the native token")
	}
	u.lotDiv, u.tickDiv, u.ivDiv = newDivisor(cfg.LotSize[0]), newDivisor(cfg.TickPrecision[0]), newDivisor(uint64(cfg.IntervalUs))
	var prod, den, rem uint256.Int
	if _, overflow := prod.MulOverflow(&cfg.LotSize, &cfg.TickPrecision); overflow {
		return u, errors.New("lot size × tick precision overflows 256 bits")
	}
	den.Lsh(wad, 1)
	u.unitQuote.DivMod(&prod, &den, &rem)
	if !rem.IsZero() || u.unitQuote.IsZero() {
		return u, fmt.Errorf("unitQuote = lot × tick / 2e18 = %s / 2e18 is not a whole number ≥ 1", prod.Dec())
	}
	if u.unitQuote.BitLen() > unitQuoteMaxBits {
		return u, fmt.Errorf("unitQuote exceeds 2^%d", unitQuoteMaxBits)
	}
	u.feeMaxRate = cfg.MakerFee
	if cfg.TakerFee.Gt(&cfg.MakerFee) {
		u.feeMaxRate = cfg.TakerFee
	}
	return u, nil
}

// findBook returns the index of the book id, or where it would go.
func (e *Engine) findBook(id Hash) (int, bool) {
	lo, hi := 0, len(e.books)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(e.books[m].cfg.ID[:], id[:]) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(e.books) && e.books[lo].cfg.ID == id
}

func (e *Engine) book(id Hash) *book {
	if i, ok := e.findBook(id); ok {
		return e.books[i]
	}
	return nil
}

// Market returns the book's configuration (read-only).
func (e *Engine) Market(id Hash) (*MarketConfig, bool) {
	if b := e.book(id); b != nil {
		return &b.cfg, true
	}
	return nil, false
}

// AppendMarkets appends every book id, ascending.
func (e *Engine) AppendMarkets(dst []Hash) []Hash {
	for _, b := range e.books {
		dst = append(dst, b.cfg.ID)
	}
	return dst
}

// AppendLevels appends up to depth aggregated levels of one side, best first
// (depth ≤ 0: all). Between ticks the levels hold resting orders only.
func (e *Engine) AppendLevels(dst []Level, book Hash, side Side, depth int) []Level {
	b := e.book(book)
	if b == nil || side > Sell {
		return dst
	}
	lv := b.sides[side]
	for i := len(lv) - 1; i >= 0 && (depth <= 0 || len(lv)-1-i < depth); i-- {
		var l Level
		b.u.priceWei(&l.Price, 2*lv[i].priceSteps)
		lv[i].vol.wei(&l.Volume, &b.u)
		l.Orders = int(lv[i].count)
		dst = append(dst, l)
	}
	return dst
}

// Order returns a live order.
func (e *Engine) Order(id Hash) (OrderInfo, bool) {
	for _, b := range e.books {
		if s := b.index.find(&id, b.ords); s != 0 {
			return b.orderInfo(s), true
		}
	}
	return OrderInfo{}, false
}

func (b *book) orderInfo(s uint32) OrderInfo {
	n, o := &b.nodes[s], &b.ords[s]
	info := OrderInfo{
		ID: o.id, Book: b.cfg.ID, Owner: o.owner, Side: n.side, Type: n.typ, Flags: n.flags,
		Size: o.sizeBase, FilledBase: o.filledBase, FilledQuote: o.filledQuote, Fee: o.fee,
		Pending: n.state == statePending, AdmitTickUs: o.admitTickUs, ExpiresUs: o.expiresUs,
		DeadlineUs: int64(o.deadlineUs),
	}
	b.u.priceWei(&info.Price, 2*n.priceSteps)
	b.u.baseOf(&info.Remaining, n.remLots)
	return info
}

// LastPrice returns the book's last clearing price.
func (e *Engine) LastPrice(book Hash) (uint256.Int, bool) {
	var p uint256.Int
	b := e.book(book)
	if b == nil || !b.hasPrice {
		return p, false
	}
	b.u.priceWei(&p, b.priceHalf)
	return p, true
}

// OrderID is keccak256(abi.encode(signer, uint64 nonce, uint32 sequence)).
func OrderID(signer Address, nonce uint64, seq uint32) Hash {
	h := keccakHasher{h: keccak.NewLegacyKeccak256().(keccakState)}
	var out Hash
	h.orderID(&out, signer, nonce, seq)
	return out
}

// keccakHasher computes order ids with a sponge and input buffer of its
// own: the sponge is an interface, so buffers on the stack would escape
// and admission would allocate.
type keccakHasher struct {
	h  keccakState
	in [96]byte
}

// hasherPool serves PrepareIDs, which runs on many event loops at once.
var hasherPool = sync.Pool{New: func() any { return &keccakHasher{h: keccak.NewLegacyKeccak256().(keccakState)} }}

// orderID sets out to keccak256(abi.encode(signer, nonce, seq)).
func (k *keccakHasher) orderID(out *Hash, signer Address, nonce uint64, seq uint32) {
	k.in = [96]byte{}
	copy(k.in[12:32], signer[:])
	binary.BigEndian.PutUint64(k.in[56:64], nonce)
	binary.BigEndian.PutUint32(k.in[92:96], seq)
	k.h.Reset()
	k.h.Write(k.in[:])
	k.h.Read(out[:])
}
