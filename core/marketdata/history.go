package marketdata

import (
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// Fills and backstop transfers history (ob_getFills,
// ob_getBackstopTransfers): append-only rows numbered by one index-wide
// sequence, so "newest first" is "sequence descending" and a cursor
// "{ts}:{seq}" names one row exactly.

const (
	// FillsPerAccount bounds the fill rows kept per account; past it the
	// oldest row is forgotten.
	FillsPerAccount = 2048
	// BackstopTransfersMax bounds the backstop transfers kept (all
	// accounts together); past it the oldest is forgotten.
	BackstopTransfersMax = 16384
	// FillsLimitMax bounds one ob_getFills page (the live network's 500),
	// also the default.
	FillsLimitMax = 500
	// BackstopLimitMax bounds one ob_getBackstopTransfers page (the
	// openapi clamps to [1, 200]); BackstopLimitDefault is the default.
	BackstopLimitMax     = 200
	BackstopLimitDefault = 50
)

// FillRow is one fill event of one account's order.
type FillRow struct {
	Seq     uint64 // index-wide, increasing in event order
	TickUs  int64
	Book    clob.Hash
	OrderID clob.Hash
	Side    clob.Side
	Maker   bool
	// HasOrder: the index knew the order (Type and Size are its admitted
	// type and size); orders of fired triggers are not admitted here.
	HasOrder bool
	Type     clob.OrderType
	Size     uint256.Int
	Base     uint256.Int
	Quote    uint256.Int
	Fee      uint256.Int
	Price    uint256.Int // the tick's clearing price
	// Perp markets: the position after the fill and the PnL it realized.
	Perp     bool
	Position clob.Signed
	Realized clob.Signed
}

// BackstopTransfer is one position taken over by the backstop
// (clob.EventLiquidation).
type BackstopTransfer struct {
	Seq    uint64
	TickUs int64
	User   clob.Address
	Book   clob.Hash
	Size   clob.Signed // the position taken over, base wei
	Cash   clob.Signed // the PnL the account realized at the mark
	Mark   uint256.Int
	Equity clob.Signed // the account's equity right after the tick (EquityFunc)
}

// EquityFunc reads an account's equity after the tick being indexed (the
// ledger's Margin(a).Equity); the node sets it with SetEquity.
type EquityFunc func(owner clob.Address) clob.Signed

// SetEquity sets where backstop transfers read the account's equity; nil
// records zero.
func (x *Index) SetEquity(f EquityFunc) { x.equity = f }

// ring is a bounded FIFO of rows, oldest first.
type ring[T any] struct {
	buf   []T
	start int
}

func (r *ring[T]) len() int    { return len(r.buf) }
func (r *ring[T]) at(i int) *T { return &r.buf[(r.start+i)%len(r.buf)] }

// push appends v, dropping the oldest row once max are held.
func (r *ring[T]) push(v T, max int) {
	if len(r.buf) < max {
		r.buf = append(r.buf, v)
		return
	}
	r.buf[r.start] = v
	r.start = (r.start + 1) % len(r.buf)
}

// search returns the number of rows whose sequence is below seq (rows are
// ascending by sequence).
func (r *ring[T]) search(seq uint64, seqOf func(*T) uint64) int {
	lo, hi := 0, r.len()
	for lo < hi {
		m := (lo + hi) / 2
		if seqOf(r.at(m)) < seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// recordFill adds a fill event of book to its owner's history, at the
// tick's clearing price.
// o is the event's order, nil when the index does not know it.
func (x *Index) recordFill(e *clob.Event, o *Order, tickUs int64, book clob.Hash, price *uint256.Int, kind clob.MarketKind) {
	x.seq++
	row := FillRow{
		Seq: x.seq, TickUs: tickUs, Book: book, OrderID: e.OrderID, Side: e.Side, Maker: e.Maker,
		Base: e.Base, Quote: e.Quote, Fee: e.Fee, Price: *price,
		Perp: kind == clob.Perp, Position: e.Position, Realized: e.Realized,
	}
	if o != nil {
		row.HasOrder, row.Type, row.Size = true, o.Meta.Type, o.Meta.Size
	}
	r := x.fills[e.Owner]
	if r == nil {
		r = &ring[FillRow]{}
		x.fills[e.Owner] = r
	}
	r.push(row, FillsPerAccount)
}

// recordBackstop adds a liquidation event to the backstop history.
func (x *Index) recordBackstop(e *clob.Event, tickUs int64) {
	if x.books[e.Book] == nil {
		return // not a market of this index: Load would refuse the row
	}
	x.seq++
	t := BackstopTransfer{
		Seq: x.seq, TickUs: tickUs, User: e.Owner, Book: e.Book,
		Size: e.Position, Cash: e.Realized, Mark: e.Price,
	}
	if x.equity != nil {
		t.Equity = x.equity(e.Owner)
	}
	x.backstop.push(t, BackstopTransfersMax)
}

// SeqCursor is a position in a newest-first history: "{ts}:{seq}".
type SeqCursor struct {
	TsUs int64
	Seq  uint64
}

// FillsQuery is the decoded ob_getFills query.
type FillsQuery struct {
	Book      clob.Hash
	HasBook   bool
	FromUs    int64 // inclusive
	ToUs      int64 // exclusive
	Limit     int   // 1..FillsLimitMax
	Cursor    SeqCursor
	HasCursor bool // page strictly after (older than) Cursor
}

// FillsPage is one ob_getFills answer; rows point into the index (valid
// until the next Tick).
type FillsPage struct {
	Fills   []*FillRow // newest first
	Next    SeqCursor
	HasNext bool
}

// Fills returns one page of the owner's fills, newest first.
func (x *Index) Fills(owner clob.Address, q *FillsQuery) FillsPage {
	var p FillsPage
	r := x.fills[owner]
	if r == nil {
		return p
	}
	end := r.len()
	if q.HasCursor {
		end = r.search(q.Cursor.Seq, func(f *FillRow) uint64 { return f.Seq })
	}
	for i := end - 1; i >= 0; i-- {
		f := r.at(i)
		if f.TickUs < q.FromUs {
			break // rows are in time order
		}
		if f.TickUs >= q.ToUs || q.HasBook && f.Book != q.Book {
			continue
		}
		if len(p.Fills) == q.Limit {
			last := p.Fills[len(p.Fills)-1]
			p.Next, p.HasNext = SeqCursor{TsUs: last.TickUs, Seq: last.Seq}, true
			break
		}
		p.Fills = append(p.Fills, f)
	}
	return p
}

// MarketTokens returns the base and quote tokens of a market of the index;
// ok is false for an unknown one. ob_getFills names each row's tokens
// through it.
func (x *Index) MarketTokens(book clob.Hash) (base, quote clob.Address, ok bool) {
	b := x.books[book]
	if b == nil {
		return base, quote, false
	}
	return b.cfg.Base, b.cfg.Quote, true
}

// BackstopQuery is the decoded ob_getBackstopTransfers query.
type BackstopQuery struct {
	User      clob.Address
	HasUser   bool
	Book      clob.Hash
	HasBook   bool
	Limit     int
	Cursor    SeqCursor
	HasCursor bool
}

// BackstopPage is one ob_getBackstopTransfers answer.
type BackstopPage struct {
	Transfers []*BackstopTransfer // newest first
	Total     int                 // matching rows, before pagination
	Next      SeqCursor
	HasNext   bool
}

// BackstopTransfers returns one page of the backstop transfers, newest
// first. It scans the whole (bounded) history for the total.
func (x *Index) BackstopTransfers(q *BackstopQuery) BackstopPage {
	var p BackstopPage
	r := &x.backstop
	end := r.len()
	if q.HasCursor {
		end = r.search(q.Cursor.Seq, func(t *BackstopTransfer) uint64 { return t.Seq })
	}
	for i := r.len() - 1; i >= 0; i-- {
		t := r.at(i)
		if q.HasUser && t.User != q.User || q.HasBook && t.Book != q.Book {
			continue
		}
		p.Total++
		if i >= end {
			continue
		}
		switch {
		case len(p.Transfers) < q.Limit:
			p.Transfers = append(p.Transfers, t)
		case !p.HasNext:
			last := p.Transfers[len(p.Transfers)-1]
			p.Next, p.HasNext = SeqCursor{TsUs: last.TickUs, Seq: last.Seq}, true
		}
	}
	return p
}

// PositionBefore is the position before a fill of base on side that left
// it at after: after minus what the fill traded (+base for a buy, −base
// for a sell).
func PositionBefore(side clob.Side, base *uint256.Int, after clob.Signed) clob.Signed {
	d := clob.Signed{Abs: *base, Neg: side == clob.Buy} // subtract a buy: add its negation
	if d.Abs.IsZero() {
		d.Neg = false
	}
	return addSigned(after, d)
}

// addSigned returns a + b.
func addSigned(a, b clob.Signed) clob.Signed {
	var s clob.Signed
	switch {
	case a.Neg == b.Neg:
		s.Abs.Add(&a.Abs, &b.Abs)
		s.Neg = a.Neg
	case a.Abs.Lt(&b.Abs):
		s.Abs.Sub(&b.Abs, &a.Abs)
		s.Neg = b.Neg
	default:
		s.Abs.Sub(&a.Abs, &b.Abs)
		s.Neg = a.Neg
	}
	if s.Abs.IsZero() {
		s.Neg = false
	}
	return s
}
