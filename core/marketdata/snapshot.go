package marketdata

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/binread"
	"github.com/ledgervenue/node/core/clob"
)

// snapshotMagic starts an index snapshot; the layout is in doc.go. Bump the
// digit whenever the layout changes: Load refuses any other magic.
const snapshotMagic = "OBIX4"

// Encoded sizes of the snapshot's records (doc.go draws them). The fixed
// parts let Load refuse a count that the remaining bytes cannot hold before
// it allocates anything for it.
const (
	u256Size         = 32
	candleSize       = 8 + 5*u256Size
	fillSize         = 8 + 3*u256Size
	bookFixedSize    = 32 + 1 + 20 + 20 + 8 + 4*u256Size + 3*4 + 1 + 8 + 8 + 1 + u256Size + int(resolutionCount)*4
	accountFixedSize = 20 + 4
	metaSize         = 32 + 32 + 20 + 32 + 8 + 6 + 2*u256Size + 3*8
	orderFixedSize   = metaSize + 2 + 4*u256Size + 2*8 + 4
	armedSize        = 20 + metaSize
)

// AppendSnapshot appends the canonical encoding of everything the index
// holds: the bytes depend only on the state, never on map order, pointers
// or ring positions (books ascending by id, accounts ascending by address,
// each account's orders ascending by (admission time, nonce, order id),
// candles oldest first). Load is its inverse.
//
// It only reads the index, so it may run beside the queries under a read
// lock. It allocates the sorted owner list and, when dst is short, grows dst
// once to the exact size.
func (x *Index) AppendSnapshot(dst []byte) []byte {
	owners := make([]clob.Address, 0, len(x.accounts))
	for owner := range x.accounts {
		owners = append(owners, owner)
	}
	slices.SortFunc(owners, compareAddress)
	fillOwners := x.fillOwners()
	size := x.snapshotSize(owners) + x.historySize(fillOwners) + x.samplesSize()
	dst = slices.Grow(dst, size)
	start := len(dst)
	dst = append(dst, snapshotMagic...)
	dst = appendI64(dst, x.nowUs)
	dst = appendCount(dst, len(x.bookIDs))
	for _, id := range x.bookIDs {
		dst = x.books[id].appendSnapshot(dst)
	}
	dst = appendCount(dst, len(owners))
	for _, owner := range owners {
		a := x.accounts[owner]
		dst = append(dst, owner[:]...)
		dst = appendCount(dst, len(a.orders))
		for _, o := range a.orders {
			dst = o.appendSnapshot(dst)
		}
	}
	dst = x.appendArmed(dst)
	dst = x.appendHistory(dst, fillOwners)
	dst = x.appendSamples(dst)
	if len(dst)-start != size {
		panic("BUG: marketdata: snapshot size miscounted")
	}
	return dst
}

// snapshotSize is the exact length of the snapshot AppendSnapshot writes.
func (x *Index) snapshotSize(owners []clob.Address) int {
	size := len(snapshotMagic) + 8 + 4 + 4 + 4 + len(x.armed)*armedSize
	for _, id := range x.bookIDs {
		b := x.books[id]
		size += bookFixedSize + len(b.cfg.Name) + len(b.cfg.BaseSymbol) + len(b.cfg.QuoteSymbol)
		for r := range b.candles {
			size += b.candles[r].len() * candleSize
		}
	}
	for _, owner := range owners {
		a := x.accounts[owner]
		size += accountFixedSize + len(a.orders)*orderFixedSize
		for _, o := range a.orders {
			size += len(o.Fills) * fillSize
		}
	}
	return size
}

func (b *book) appendSnapshot(dst []byte) []byte {
	c := &b.cfg
	dst = append(dst, c.ID[:]...)
	dst = append(dst, byte(c.Kind))
	dst = append(dst, c.Base[:]...)
	dst = append(dst, c.Quote[:]...)
	dst = appendI64(dst, c.IntervalUs)
	for _, v := range [...]*uint256.Int{&c.TickPrecision, &c.LotSize, &c.MakerFee, &c.TakerFee} {
		dst = binread.AppendU256(dst, v)
	}
	for _, s := range [...]string{c.Name, c.BaseSymbol, c.QuoteSymbol} {
		dst = appendCount(dst, len(s))
		dst = append(dst, s...)
	}
	dst = appendBool(dst, b.ran)
	dst = appendI64(dst, b.lastTickUs)
	dst = appendI64(dst, int64(b.newOrders))
	dst = appendBool(dst, b.hasPrice)
	dst = binread.AppendU256(dst, &b.price)
	for r := range b.candles {
		ring := &b.candles[r]
		dst = appendCount(dst, ring.len())
		for i := range ring.len() {
			c := ring.at(i)
			dst = appendI64(dst, c.StartUs)
			for _, v := range [...]*uint256.Int{&c.Open, &c.High, &c.Low, &c.Close, &c.Volume} {
				dst = binread.AppendU256(dst, v)
			}
		}
	}
	return dst
}

// appendSnapshot writes an order without its owner (its account's address
// precedes it).
func (o *Order) appendSnapshot(dst []byte) []byte {
	dst = appendMeta(dst, &o.Meta)
	dst = append(dst, byte(o.MarketKind), byte(o.Status))
	for _, v := range [...]*uint256.Int{&o.Price, &o.FilledBase, &o.FilledQuote, &o.Fee} {
		dst = binread.AppendU256(dst, v)
	}
	dst = appendI64(dst, o.EnteredUs)
	dst = appendI64(dst, o.EndUs)
	dst = appendCount(dst, len(o.Fills))
	for i := range o.Fills {
		f := &o.Fills[i]
		dst = appendI64(dst, f.TickUs)
		dst = binread.AppendU256(dst, &f.Base)
		dst = binread.AppendU256(dst, &f.Quote)
		dst = binread.AppendU256(dst, &f.Price)
	}
	return dst
}

// appendMeta writes an order's meta without its owner.
func appendMeta(dst []byte, m *OrderMeta) []byte {
	dst = append(dst, m.ID[:]...)
	dst = append(dst, m.Book[:]...)
	dst = append(dst, m.Signer[:]...)
	dst = append(dst, m.TxHash[:]...)
	dst = binary.BigEndian.AppendUint64(dst, m.Nonce)
	dst = append(dst, byte(m.Side), byte(m.Type), m.Flags, byte(m.Kind), m.TriggerType, m.Grouping)
	dst = binread.AppendU256(dst, &m.Price)
	dst = binread.AppendU256(dst, &m.Size)
	dst = appendI64(dst, m.DeadlineUs)
	dst = appendI64(dst, m.TTLUs)
	return appendI64(dst, m.AdmittedUs)
}

// appendArmed writes the armed triggers, ascending by id.
func (x *Index) appendArmed(dst []byte) []byte {
	ids := make([]clob.Hash, 0, len(x.armed))
	for id := range x.armed {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, compareHash)
	dst = appendCount(dst, len(ids))
	for _, id := range ids {
		m := x.armed[id]
		dst = append(dst, m.Owner[:]...)
		dst = appendMeta(dst, &m)
	}
	return dst
}

func appendI64(dst []byte, v int64) []byte { return binary.BigEndian.AppendUint64(dst, uint64(v)) }

func appendCount(dst []byte, n int) []byte {
	if n < 0 || uint64(n) > 1<<32-1 {
		panic("BUG: marketdata: snapshot count out of range")
	}
	return binary.BigEndian.AppendUint32(dst, uint32(n))
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// Load rebuilds an index from AppendSnapshot's bytes; live is as for New.
// The snapshot comes from disk and may be corrupt: Load never panics on it
// and refuses, with an error, anything AppendSnapshot cannot have written:
// a wrong magic, short or trailing bytes, a count the bytes cannot hold,
// unknown enum values, booleans other than 0 and 1, unsorted or duplicate
// books, accounts or orders, an order of an unknown book, more than
// TerminalOrdersPerAccount terminal orders in an account, more than
// OrderFillsMax fills in an order, more than CandleBucketsMax buckets in a
// ring, misaligned or unsorted buckets, times after the index's now,
// trigger fields on a user-signed order, and armed triggers out of id
// order, of a spot or unknown book, or also listed as orders.
// Whatever it accepts re-encodes to the same bytes.
//
// The books' resting counts, the accounts' terminal counts and the id map
// are not stored: Load derives them from the orders.
func Load(live Live, snap []byte) (*Index, error) {
	d := decoder{binread.Reader{B: snap}}
	if magic := d.Take(len(snapshotMagic)); string(magic) != snapshotMagic {
		return nil, errors.New("marketdata: cannot load snapshot: not an index snapshot (bad magic)")
	}
	x := New(live)
	x.nowUs = d.i64()
	if d.Err == nil && x.nowUs < 0 {
		d.Fail("now %d is negative", x.nowUs)
	}
	nBooks := d.Count(bookFixedSize)
	for i := 0; i < nBooks && d.Err == nil; i++ {
		x.loadBook(&d, i)
	}
	nAccounts := d.Count(accountFixedSize + orderFixedSize)
	var prevOwner clob.Address
	for i := 0; i < nAccounts && d.Err == nil; i++ {
		var owner clob.Address
		copy(owner[:], d.Take(20))
		if i > 0 && compareAddress(prevOwner, owner) >= 0 {
			d.Fail("account %d: accounts not ascending by address", i)
		}
		prevOwner = owner
		x.loadAccount(&d, owner)
	}
	if d.Err == nil {
		x.loadArmed(&d)
	}
	if d.Err == nil {
		x.loadHistory(&d)
	}
	if d.Err == nil {
		x.loadSamples(&d)
	}
	if d.Err == nil && d.Left() > 0 {
		d.Fail("%d trailing bytes", d.Left())
	}
	if d.Err != nil {
		return nil, fmt.Errorf("marketdata: cannot load snapshot: %w", d.Err)
	}
	return x, nil
}

// loadBook reads the i-th book and registers it.
func (x *Index) loadBook(d *decoder, i int) {
	b := &book{}
	c := &b.cfg
	copy(c.ID[:], d.Take(32))
	c.Kind = clob.MarketKind(d.U8())
	copy(c.Base[:], d.Take(20))
	copy(c.Quote[:], d.Take(20))
	c.IntervalUs = d.i64()
	for _, v := range [...]*uint256.Int{&c.TickPrecision, &c.LotSize, &c.MakerFee, &c.TakerFee} {
		d.U256(v)
	}
	for _, s := range [...]*string{&c.Name, &c.BaseSymbol, &c.QuoteSymbol} {
		*s = string(d.Take(d.Count(1)))
	}
	b.ran = d.bool()
	b.lastTickUs = d.i64()
	newOrders := d.i64()
	b.newOrders = int(newOrders)
	b.hasPrice = d.bool()
	d.U256(&b.price)
	switch {
	case d.Err != nil:
		return
	case i > 0 && compareHash(x.bookIDs[i-1], c.ID) >= 0:
		d.Fail("book %d: books not ascending by id", i)
	case c.Kind > clob.Perp:
		d.Fail("book %d: unknown market kind %d", i, c.Kind)
	case int64(b.newOrders) != newOrders:
		d.Fail("book %d: new orders count %d out of range", i, newOrders)
	case !b.ran && (b.lastTickUs != 0 || b.newOrders != 0):
		d.Fail("book %d: tick fields set on a book that never ran", i)
	case b.lastTickUs > x.nowUs:
		d.Fail("book %d: last tick %d after now %d", i, b.lastTickUs, x.nowUs)
	case !b.hasPrice && !b.price.IsZero():
		d.Fail("book %d: price set on a book that never cleared", i)
	}
	for r := range b.candles {
		x.loadCandles(d, i, Resolution(r), &b.candles[r])
	}
	if d.Err != nil {
		return
	}
	x.books[c.ID] = b
	x.bookIDs = append(x.bookIDs, c.ID)
}

// loadCandles reads one ring, oldest bucket first.
func (x *Index) loadCandles(d *decoder, i int, r Resolution, ring *candleRing) {
	n := d.Count(candleSize)
	if d.Err == nil && n > CandleBucketsMax {
		d.Fail("book %d: %d %s candles, more than CandleBucketsMax", i, n, r)
	}
	if d.Err != nil || n == 0 {
		return
	}
	ring.buf = make([]Candle, n)
	for j := range ring.buf {
		c := &ring.buf[j]
		c.StartUs = d.i64()
		for _, v := range [...]*uint256.Int{&c.Open, &c.High, &c.Low, &c.Close, &c.Volume} {
			d.U256(v)
		}
		switch {
		case d.Err != nil:
			return
		case c.StartUs < 0 || c.StartUs%r.Us() != 0:
			d.Fail("book %d: %s candle %d starts at %d, not a bucket boundary", i, r, j, c.StartUs)
		case j > 0 && ring.buf[j-1].StartUs >= c.StartUs:
			d.Fail("book %d: %s candles not ascending", i, r)
		case c.StartUs > x.nowUs:
			d.Fail("book %d: %s candle starts at %d, after now %d", i, r, c.StartUs, x.nowUs)
		}
	}
}

// loadAccount reads one account's orders and registers them.
func (x *Index) loadAccount(d *decoder, owner clob.Address) {
	n := d.Count(orderFixedSize)
	if d.Err == nil && n == 0 {
		d.Fail("account %x: no orders", owner)
	}
	if d.Err != nil {
		return
	}
	a := &account{orders: make([]*Order, 0, n)}
	x.accounts[owner] = a
	for j := 0; j < n && d.Err == nil; j++ {
		o := &Order{}
		o.Meta.Owner = owner
		loadOrder(d, o)
		if d.Err != nil {
			return
		}
		b := x.books[o.Meta.Book]
		switch _, dup := x.orders[o.Meta.ID]; {
		case b == nil:
			d.Fail("order %x: unknown book %x", o.Meta.ID, o.Meta.Book)
		case dup:
			d.Fail("order %x: listed twice", o.Meta.ID)
		case j > 0 && compareOrders(a.orders[j-1], o) >= 0:
			d.Fail("account %x: orders not ascending by (time, nonce, id)", owner)
		}
		if d.Err != nil {
			return
		}
		x.orders[o.Meta.ID] = o
		a.orders = append(a.orders, o)
		switch {
		case o.Status == StatusActive:
			b.activeCount[o.Meta.Side]++
		case o.Status.Terminal():
			a.terminalCount++
		}
	}
	if a.terminalCount > TerminalOrdersPerAccount {
		d.Fail("account %x: %d terminal orders, more than TerminalOrdersPerAccount", owner, a.terminalCount)
	}
}

// loadOrder reads one order (its owner is the account's) and checks its
// enums and fills.
func loadOrder(d *decoder, o *Order) {
	m := &o.Meta
	loadMeta(d, m)
	o.MarketKind, o.Status = clob.MarketKind(d.U8()), Status(d.U8())
	for _, v := range [...]*uint256.Int{&o.Price, &o.FilledBase, &o.FilledQuote, &o.Fee} {
		d.U256(v)
	}
	o.EnteredUs, o.EndUs = d.i64(), d.i64()
	nFills := d.Count(fillSize)
	switch {
	case d.Err != nil:
		return
	case o.MarketKind > clob.Perp:
		d.Fail("order %x: unknown market kind %d", m.ID, o.MarketKind)
	case m.Kind == KindTriggered && o.MarketKind != clob.Perp:
		d.Fail("order %x: a triggered order on a spot market", m.ID)
	case !o.Status.stored():
		d.Fail("order %x: status %d is never stored", m.ID, o.Status)
	case nFills > OrderFillsMax:
		d.Fail("order %x: %d fills, more than OrderFillsMax", m.ID, nFills)
	}
	if d.Err != nil || nFills == 0 {
		return
	}
	o.Fills = make([]Fill, nFills)
	for i := range o.Fills {
		f := &o.Fills[i]
		f.TickUs = d.i64()
		d.U256(&f.Base)
		d.U256(&f.Quote)
		d.U256(&f.Price)
	}
}

// loadMeta reads an order's meta (its owner is the caller's) and checks
// its enums: trigger fields are set on a triggered order only, and a
// triggered order has no transaction hash (AdmittedTrigger).
func loadMeta(d *decoder, m *OrderMeta) {
	copy(m.ID[:], d.Take(32))
	copy(m.Book[:], d.Take(32))
	copy(m.Signer[:], d.Take(20))
	copy(m.TxHash[:], d.Take(32))
	m.Nonce = d.U64()
	m.Side, m.Type, m.Flags = clob.Side(d.U8()), clob.OrderType(d.U8()), d.U8()
	m.Kind, m.TriggerType, m.Grouping = OrderKind(d.U8()), d.U8(), d.U8()
	d.U256(&m.Price)
	d.U256(&m.Size)
	m.DeadlineUs, m.TTLUs, m.AdmittedUs = d.i64(), d.i64(), d.i64()
	switch {
	case d.Err != nil:
	case m.Side > clob.Sell:
		d.Fail("order %x: unknown side %d", m.ID, m.Side)
	case m.Type > clob.Market:
		d.Fail("order %x: unknown order type %d", m.ID, m.Type)
	case m.Flags&^clob.FlagsKnown != 0:
		d.Fail("order %x: unknown flags %#x", m.ID, m.Flags)
	case m.Kind >= kindCount:
		d.Fail("order %x: unknown kind %d", m.ID, m.Kind)
	case m.Kind == KindUserSigned && (m.TriggerType != 0 || m.Grouping != 0):
		d.Fail("order %x: trigger fields on a user-signed order", m.ID)
	case !ValidTriggerType(m.TriggerType):
		d.Fail("order %x: unknown trigger type %d", m.ID, m.TriggerType)
	case !ValidGrouping(m.Grouping):
		d.Fail("order %x: unknown grouping %d", m.ID, m.Grouping)
	case m.Kind == KindTriggered && m.TxHash != (clob.Hash{}):
		d.Fail("order %x: a triggered order with a transaction hash", m.ID)
	}
}

// loadArmed reads the armed triggers: ascending by id, each of a known
// perp book, of kind triggered, and not also an order.
func (x *Index) loadArmed(d *decoder) {
	n := d.Count(armedSize)
	var prev clob.Hash
	for i := 0; i < n && d.Err == nil; i++ {
		var m OrderMeta
		copy(m.Owner[:], d.Take(20))
		loadMeta(d, &m)
		if d.Err != nil {
			return
		}
		b := x.books[m.Book]
		_, isOrder := x.orders[m.ID]
		switch {
		case i > 0 && compareHash(prev, m.ID) >= 0:
			d.Fail("armed trigger %d: not ascending by id", i)
		case b == nil || b.cfg.Kind != clob.Perp:
			d.Fail("armed trigger %x: not of a perp book", m.ID)
		case m.Kind != KindTriggered:
			d.Fail("armed trigger %x: kind %d", m.ID, m.Kind)
		case isOrder:
			d.Fail("armed trigger %x: also an order", m.ID)
		}
		prev = m.ID
		x.armed[m.ID] = m
	}
}

// stored reports whether the index ever gives an order this status.
func (s Status) stored() bool {
	switch s {
	case StatusPending, StatusActive, StatusFilled, StatusExpired, StatusCanceled, StatusMarginCanceled, StatusPostOnlyRefused:
		return true
	}
	return false
}

// decoder reads a snapshot front to back (binread: its first error sticks,
// so callers check Err once per record).
type decoder struct{ binread.Reader }

func (d *decoder) i64() int64 { return int64(d.U64()) }

func (d *decoder) bool() bool {
	switch v := d.U8(); v {
	case 0:
		return false
	case 1:
		return true
	default:
		d.Fail("boolean byte %d", v)
		return false
	}
}

func compareAddress(a, b clob.Address) int { return bytes.Compare(a[:], b[:]) }
