package marketdata

import (
	"encoding/binary"
	"slices"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/binread"
	"github.com/ledgervenue/node/core/clob"
)

// The histories' part of the snapshot (doc.go draws it), after the
// accounts.

const (
	fillRowSize     = 8 + 8 + 32 + 32 + 3 + 7*u256Size
	backstopRowSize = 8 + 8 + 20 + 32 + 1 + 4*u256Size
	fillsFixedSize  = 20 + 4
)

// Flag bits of the histories' rows.
const (
	fillMaker       = 0x01
	fillHasOrder    = 0x02
	fillPerp        = 0x04
	fillPositionNeg = 0x08
	fillRealizedNeg = 0x10
	fillKnown       = 0x1f

	bsSizeNeg   = 0x01
	bsCashNeg   = 0x02
	bsEquityNeg = 0x04
	bsKnown     = 0x07
)

func (x *Index) historySize(fillOwners []clob.Address) int {
	size := 8 + 4 + 4 + x.backstop.len()*backstopRowSize
	for _, a := range fillOwners {
		size += fillsFixedSize + x.fills[a].len()*fillRowSize
	}
	return size
}

func (x *Index) fillOwners() []clob.Address {
	owners := make([]clob.Address, 0, len(x.fills))
	for a := range x.fills {
		owners = append(owners, a)
	}
	slices.SortFunc(owners, compareAddress)
	return owners
}

func (x *Index) appendHistory(dst []byte, fillOwners []clob.Address) []byte {
	dst = binary.BigEndian.AppendUint64(dst, x.seq)
	dst = appendCount(dst, len(fillOwners))
	for _, a := range fillOwners {
		r := x.fills[a]
		dst = append(dst, a[:]...)
		dst = appendCount(dst, r.len())
		for i := range r.len() {
			dst = r.at(i).appendSnapshot(dst)
		}
	}
	dst = appendCount(dst, x.backstop.len())
	for i := range x.backstop.len() {
		dst = x.backstop.at(i).appendSnapshot(dst)
	}
	return dst
}

func (f *FillRow) appendSnapshot(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, f.Seq)
	dst = appendI64(dst, f.TickUs)
	dst = append(dst, f.Book[:]...)
	dst = append(dst, f.OrderID[:]...)
	var flags byte
	for _, b := range [...]struct {
		on  bool
		bit byte
	}{{f.Maker, fillMaker}, {f.HasOrder, fillHasOrder}, {f.Perp, fillPerp}, {f.Position.Neg, fillPositionNeg}, {f.Realized.Neg, fillRealizedNeg}} {
		if b.on {
			flags |= b.bit
		}
	}
	dst = append(dst, byte(f.Side), flags, byte(f.Type))
	for _, v := range [...]*uint256.Int{&f.Size, &f.Base, &f.Quote, &f.Fee, &f.Price, &f.Position.Abs, &f.Realized.Abs} {
		dst = binread.AppendU256(dst, v)
	}
	return dst
}

func (t *BackstopTransfer) appendSnapshot(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, t.Seq)
	dst = appendI64(dst, t.TickUs)
	dst = append(dst, t.User[:]...)
	dst = append(dst, t.Book[:]...)
	var flags byte
	if t.Size.Neg {
		flags |= bsSizeNeg
	}
	if t.Cash.Neg {
		flags |= bsCashNeg
	}
	if t.Equity.Neg {
		flags |= bsEquityNeg
	}
	dst = append(dst, flags)
	for _, v := range [...]*uint256.Int{&t.Size.Abs, &t.Cash.Abs, &t.Mark, &t.Equity.Abs} {
		dst = binread.AppendU256(dst, v)
	}
	return dst
}

// loadHistory reads the histories and checks them as Load promises.
func (x *Index) loadHistory(d *decoder) {
	x.seq = d.U64()
	n := d.Count(fillsFixedSize + fillRowSize)
	var prev clob.Address
	for i := 0; i < n && d.Err == nil; i++ {
		var owner clob.Address
		copy(owner[:], d.Take(20))
		if i > 0 && compareAddress(prev, owner) >= 0 {
			d.Fail("fills %d: accounts not ascending by address", i)
		}
		prev = owner
		rows := d.Count(fillRowSize)
		switch {
		case d.Err != nil:
			return
		case rows == 0 || rows > FillsPerAccount:
			d.Fail("fills of %x: %d rows, want 1 to FillsPerAccount", owner, rows)
			return
		}
		r := &ring[FillRow]{buf: make([]FillRow, rows)}
		for j := range r.buf {
			f := &r.buf[j]
			x.loadFillRow(d, f)
			if d.Err == nil && j > 0 && r.buf[j-1].Seq >= f.Seq {
				d.Fail("fills of %x: rows not ascending", owner)
			}
		}
		x.fills[owner] = r
	}
	rows := d.Count(backstopRowSize)
	if d.Err == nil && rows > BackstopTransfersMax {
		d.Fail("%d backstop transfers, more than BackstopTransfersMax", rows)
	}
	if d.Err != nil || rows == 0 {
		return
	}
	x.backstop.buf = make([]BackstopTransfer, rows)
	for j := range x.backstop.buf {
		t := &x.backstop.buf[j]
		x.loadBackstopRow(d, t)
		if d.Err == nil && j > 0 && x.backstop.buf[j-1].Seq >= t.Seq {
			d.Fail("backstop transfers not ascending")
		}
	}
}

func (x *Index) loadFillRow(d *decoder, f *FillRow) {
	f.Seq = d.U64()
	f.TickUs = d.i64()
	copy(f.Book[:], d.Take(32))
	copy(f.OrderID[:], d.Take(32))
	side, flags, typ := d.U8(), d.U8(), d.U8()
	for _, v := range [...]*uint256.Int{&f.Size, &f.Base, &f.Quote, &f.Fee, &f.Price, &f.Position.Abs, &f.Realized.Abs} {
		d.U256(v)
	}
	f.Side, f.Type = clob.Side(side), clob.OrderType(typ)
	f.Maker, f.HasOrder, f.Perp = flags&fillMaker != 0, flags&fillHasOrder != 0, flags&fillPerp != 0
	f.Position.Neg, f.Realized.Neg = flags&fillPositionNeg != 0, flags&fillRealizedNeg != 0
	switch {
	case d.Err != nil:
	case flags&^fillKnown != 0 || f.Side > clob.Sell || f.Type > clob.Market:
		d.Fail("fill %d: unknown side, type or flags", f.Seq)
	case !f.HasOrder && (f.Type != 0 || !f.Size.IsZero()):
		d.Fail("fill %d: order fields without an order", f.Seq)
	case !f.Perp && (!f.Position.Abs.IsZero() || !f.Realized.Abs.IsZero()):
		d.Fail("fill %d: perp fields on a spot fill", f.Seq)
	case !canonicalSigned(&f.Position) || !canonicalSigned(&f.Realized):
		d.Fail("fill %d: negative zero", f.Seq)
	default:
		x.checkRow(d, f.Seq, f.TickUs, f.Book)
		if b := x.books[f.Book]; d.Err == nil && (b.cfg.Kind == clob.Perp) != f.Perp {
			d.Fail("fill %d: perp flag does not match the market", f.Seq)
		}
	}
}

func (x *Index) loadBackstopRow(d *decoder, t *BackstopTransfer) {
	t.Seq = d.U64()
	t.TickUs = d.i64()
	copy(t.User[:], d.Take(20))
	copy(t.Book[:], d.Take(32))
	flags := d.U8()
	for _, v := range [...]*uint256.Int{&t.Size.Abs, &t.Cash.Abs, &t.Mark, &t.Equity.Abs} {
		d.U256(v)
	}
	t.Size.Neg, t.Cash.Neg, t.Equity.Neg = flags&bsSizeNeg != 0, flags&bsCashNeg != 0, flags&bsEquityNeg != 0
	switch {
	case d.Err != nil:
	case flags&^bsKnown != 0:
		d.Fail("backstop transfer %d: unknown flags %#x", t.Seq, flags)
	case !canonicalSigned(&t.Size) || !canonicalSigned(&t.Cash) || !canonicalSigned(&t.Equity):
		d.Fail("backstop transfer %d: negative zero", t.Seq)
	default:
		x.checkRow(d, t.Seq, t.TickUs, t.Book)
	}
}

// checkRow checks what every history row shares: a sequence number the
// index has issued, a time within [0, now] and a known book.
func (x *Index) checkRow(d *decoder, seq uint64, tickUs int64, book clob.Hash) {
	switch {
	case seq == 0 || seq > x.seq:
		d.Fail("history row %d: sequence beyond the index's %d", seq, x.seq)
	case tickUs < 0 || tickUs > x.nowUs:
		d.Fail("history row %d: time %d outside [0, now %d]", seq, tickUs, x.nowUs)
	case x.books[book] == nil:
		d.Fail("history row %d: unknown book %x", seq, book)
	}
}

func canonicalSigned(s *clob.Signed) bool { return !s.Neg || !s.Abs.IsZero() }
