package clob

import (
	"encoding/binary"

	"github.com/holiman/uint256"
)

// snapshotMagic starts an engine snapshot; the layout is in doc.go.
const snapshotMagic = "CLOB1"

// AppendSnapshot appends the canonical encoding of the engine's state: the
// bytes depend only on the state (books by id, levels best first, orders in
// queue order, pending intents in admission order), never on arena slots or
// map order.
// REQUIRES: not called from inside Tick (between ticks no order is "new").
func (e *Engine) AppendSnapshot(dst []byte) []byte {
	dst = append(dst, snapshotMagic...)
	dst = binary.BigEndian.AppendUint64(dst, e.seq)
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.transferLastUs))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(e.books)))
	for _, b := range e.books {
		dst = b.appendSnapshot(dst)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(e.transfers.len()))
	for i := range e.transfers.len() {
		t := e.transfers.at(i)
		dst = append(dst, t.owner[:]...)
		dst = append(dst, t.token[:]...)
		dst = append(dst, t.to[:]...)
		dst = appendU256(dst, &t.amount)
		dst = binary.BigEndian.AppendUint64(dst, t.deadlineUs)
		dst = binary.BigEndian.AppendUint64(dst, uint64(t.landUs))
		dst = binary.BigEndian.AppendUint64(dst, t.seq)
		dst = binary.BigEndian.AppendUint64(dst, t.tag)
	}
	return dst
}

func (b *book) appendSnapshot(dst []byte) []byte {
	c := &b.cfg
	dst = append(dst, c.ID[:]...)
	dst = append(dst, byte(c.Kind))
	dst = append(dst, c.Base[:]...)
	dst = append(dst, c.Quote[:]...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.IntervalUs))
	for _, v := range [...]*uint256.Int{&c.TickPrecision, &c.LotSize, &c.MakerFee, &c.TakerFee} {
		dst = appendU256(dst, v)
	}
	for _, s := range [...]string{c.Name, c.BaseSymbol, c.QuoteSymbol} {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
		dst = append(dst, s...)
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.lastTickUs))
	dst = appendBool(dst, b.hasPrice)
	dst = binary.BigEndian.AppendUint64(dst, uint64(b.priceHalf))
	for _, side := range [2]Side{Buy, Sell} {
		lv := b.sides[side]
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(lv)))
		for i := len(lv) - 1; i >= 0; i-- {
			dst = binary.BigEndian.AppendUint64(dst, uint64(lv[i].priceSteps))
			dst = binary.BigEndian.AppendUint32(dst, uint32(lv[i].count))
			for s := lv[i].head; s != 0; s = b.nodes[s].next {
				dst = b.appendOrder(dst, s)
			}
		}
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(b.pending.len()))
	for i := range b.pending.len() {
		dst = b.appendPending(dst, b.pending.at(i))
	}
	return dst
}

func (b *book) appendPending(dst []byte, p *pendingIntent) []byte {
	dst = append(dst, byte(p.kind))
	dst = binary.BigEndian.AppendUint64(dst, p.seq)
	dst = binary.BigEndian.AppendUint64(dst, p.tag)
	dst = binary.BigEndian.AppendUint64(dst, p.deadlineUs)
	dst = binary.BigEndian.AppendUint64(dst, uint64(p.landUs))
	s := b.deref(p.ref)
	switch {
	case p.kind == IntentSubmit:
		return b.appendOrder(dst, s)
	case s == 0:
		var zero Hash
		dst = append(dst, zero[:]...)
	default:
		dst = append(dst, b.ords[s].id[:]...)
	}
	if p.kind == IntentUpdate {
		dst = binary.BigEndian.AppendUint64(dst, uint64(p.newLots))
		dst = binary.BigEndian.AppendUint64(dst, uint64(p.newSteps))
		dst = appendU256(dst, &p.reserve)
	}
	return dst
}

func (b *book) appendOrder(dst []byte, s uint32) []byte {
	n, o := &b.nodes[s], &b.ords[s]
	dst = append(dst, o.id[:]...)
	dst = append(dst, o.owner[:]...)
	dst = append(dst, byte(n.side), byte(n.typ), n.flags, n.state)
	for _, v := range [...]int64{n.priceSteps, n.remLots, n.queueTick, o.admitTickUs, o.expiresUs} {
		dst = binary.BigEndian.AppendUint64(dst, uint64(v))
	}
	dst = binary.BigEndian.AppendUint64(dst, o.deadlineUs)
	dst = binary.BigEndian.AppendUint64(dst, o.ttlUs)
	dst = binary.BigEndian.AppendUint32(dst, o.pendingUpdates)
	var settled uint256.Int // meaningful only while updates are pending
	if o.pendingUpdates > 0 {
		settled = o.settled
	}
	for _, v := range [...]*uint256.Int{&o.reserved, &settled, &o.sizeBase, &o.filledBase, &o.filledQuote, &o.fee} {
		dst = appendU256(dst, v)
	}
	return dst
}

func appendU256(dst []byte, v *uint256.Int) []byte {
	b := v.Bytes32()
	return append(dst, b[:]...)
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}
