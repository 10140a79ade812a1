package clob

import (
	"encoding/binary"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/binread"
)

// The perp section of the engine snapshot, after the transfers and only
// when the engine has a perp market:
//
//	per perp book, ascending id: | params | oracle, mark, ema u64 | started u8 | flags u8 |
//	                             | (gapUntil u64 | gapBps i64, when flags has gapFlag) |
//	                             | lastUs, rate u64 | index 32 B |
//	flags: frozenFlag | gapFlag (a book without a gap writes what the byte
//	held before gaps existed: frozen as 0 or 1)
//	| nAccounts u32 | owner 20 B * |      (the accounts in the order they first opened a position)
//	per perp book, ascending id: | n u32 | (account u32 | size u64 | cost, realized, funding, ixAt, entryIx 32 B | openedUs u64)* |
//	params: | maxLeverage u32 | interest, maxFunding, maxPremium, markClamp, oraclePrice 32 B | walkBps u32 | seed u64 |
//
// Positions come in account order; B and A, and the records of accounts
// that only have orders, are rebuilt from the live orders.

// The perp book's flags byte.
const (
	frozenFlag = 1 << iota
	gapFlag
)

func (e *Engine) appendPerp(dst []byte) []byte {
	if len(e.pp.books) == 0 {
		return dst
	}
	for _, b := range e.pp.books {
		p, pb := &b.cfg.Perp, b.perp
		dst = binary.BigEndian.AppendUint32(dst, p.MaxLeverage)
		for _, v := range [...]*uint256.Int{&p.InterestRate, &p.MaxFundingRate, &p.MaxPremium, &p.MarkClamp, &p.OraclePrice} {
			dst = binread.AppendU256(dst, v)
		}
		dst = binary.BigEndian.AppendUint32(dst, p.WalkBps)
		dst = binary.BigEndian.AppendUint64(dst, p.WalkSeed)
		for _, v := range [...]int64{pb.oracle, pb.mark, pb.ema} {
			dst = binary.BigEndian.AppendUint64(dst, uint64(v))
		}
		dst = appendBool(dst, pb.started)
		flags := byte(0)
		if pb.frozen {
			flags |= frozenFlag
		}
		if pb.gapUntil != 0 {
			flags |= gapFlag
		}
		dst = append(dst, flags)
		if pb.gapUntil != 0 {
			dst = binary.BigEndian.AppendUint64(dst, uint64(pb.gapUntil))
			dst = binary.BigEndian.AppendUint64(dst, uint64(pb.gapBps))
		}
		dst = binary.BigEndian.AppendUint64(dst, uint64(pb.lastUs))
		dst = binary.BigEndian.AppendUint64(dst, uint64(pb.rate))
		dst = binread.AppendU256(dst, &pb.index)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(e.pp.order)))
	for _, a := range e.pp.order {
		dst = append(dst, e.pp.accts[a].owner[:]...)
	}
	for _, b := range e.pp.books {
		pb := b.perp
		n := 0
		for _, a := range e.pp.order {
			if i := pb.find(a); i >= 0 && pb.pos[i].size != 0 {
				n++
			}
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(n))
		for k, a := range e.pp.order {
			i := pb.find(a)
			if i < 0 || pb.pos[i].size == 0 {
				continue
			}
			p, c := &pb.pos[i], &pb.cold[i]
			dst = binary.BigEndian.AppendUint32(dst, uint32(k))
			dst = binary.BigEndian.AppendUint64(dst, uint64(p.size))
			for _, v := range [...]*uint256.Int{&p.cost, &c.realized, &c.funding, &c.ixAt, &c.entryIx} {
				dst = binread.AppendU256(dst, v)
			}
			dst = binary.BigEndian.AppendUint64(dst, uint64(c.openedUs))
		}
	}
	return dst
}

// perpAccountSize is the encoded size of a listed account (bounds the
// count by the bytes left).
const perpAccountSize = 20

func (e *Engine) loadPerp(r *snapReader) {
	if r.Err != nil {
		return
	}
	if e.pp.listBooks(e.books); len(e.pp.books) == 0 {
		return
	}
	for _, b := range e.pp.books {
		p := &b.cfg.Perp
		p.MaxLeverage = r.U32()
		for _, v := range [...]*uint256.Int{&p.InterestRate, &p.MaxFundingRate, &p.MaxPremium, &p.MarkClamp, &p.OraclePrice} {
			r.U256(v)
		}
		p.WalkBps, p.WalkSeed = r.U32(), r.U64()
		if r.Err != nil {
			return
		}
		if params, err := perpParams(&b.cfg, &b.u); err != nil || params != *p {
			r.Fail("perp market %x: parameters %+v (%v)", b.cfg.ID, *p, err)
			return
		}
		pb := newPerpBook(&b.cfg, &b.u)
		b.perp = pb
		pb.oracle, pb.mark, pb.ema = int64(r.U64()), int64(r.U64()), int64(r.U64())
		pb.started = r.boolean()
		flags := r.U8()
		pb.frozen = flags&frozenFlag != 0
		if flags&gapFlag != 0 {
			pb.gapUntil, pb.gapBps = int64(r.U64()), int64(r.U64())
		}
		if r.Err == nil && (flags&^(frozenFlag|gapFlag) != 0 || flags&gapFlag != 0 &&
			(pb.gapUntil <= 0 || pb.gapBps == 0 || abs64(pb.gapBps) > OracleMoveBpsMax)) {
			r.Fail("perp market %x: oracle flags %#x, gap until %d by %d bps", b.cfg.ID, flags, pb.gapUntil, pb.gapBps)
		}
		pb.lastUs = r.tickUs("perp", b.cfg.IntervalUs)
		pb.rate = int64(r.U64())
		r.U256(&pb.index)
		if r.Err == nil && (pb.oracle < 1 || pb.oracle > unitsMax || pb.mark < 1 || pb.mark > unitsMax ||
			abs64(pb.ema) > 2*unitsMax || abs64(pb.rate) > RateMax || !pb.started && (pb.lastUs != 0 || pb.ema != 0) ||
			pb.lastUs > b.lastTickUs) {
			r.Fail("perp market %x: oracle %d, mark %d, ema %d, rate %d, last tick %d", b.cfg.ID, pb.oracle, pb.mark, pb.ema, pb.rate, pb.lastUs)
		}
	}
	n := r.Count(perpAccountSize)
	for i := 0; i < n && r.Err == nil; i++ {
		owner := r.addr()
		if e.pp.acctOf(owner) >= 0 {
			r.Fail("perp account %x listed twice", owner)
		}
		a := e.pp.acctFor(owner)
		e.pp.accts[a].listed = true
		e.pp.order = append(e.pp.order, a)
	}
	for _, b := range e.pp.books {
		e.loadPositions(r, b, n)
	}
	// B and A from the live orders (an order with pending updates counts
	// the last one's size); a reduce-only order's owner opened a position
	// when it was admitted, so it is listed.
	for _, b := range e.pp.books {
		for i := 0; i < b.pending.len(); i++ {
			if p := b.pending.at(i); p.kind == IntentUpdate {
				if s := b.deref(p.ref); s != 0 {
					b.ords[s].projLots = p.newLots
				}
			}
		}
		for s := 1; s <= b.live() && r.Err == nil; s++ {
			e.perpOrderLive(b, uint32(s))
			if o := &b.ords[s]; b.nodes[s].flags&FlagReduceOnly != 0 && !e.pp.listed(o.owner) {
				r.Fail("reduce-only order %x of %x, which never opened a position", o.id, o.owner)
			}
		}
	}
}

// loadPositions reads one perp book's positions.
func (e *Engine) loadPositions(r *snapReader, b *book, nAccts int) {
	pb := b.perp
	n := r.count("positions", nAccts)
	last, sum := -1, int64(0)
	for range n {
		k := int(r.U32())
		size := int64(r.U64())
		var c positionCold
		var cost uint256.Int
		for _, v := range [...]*uint256.Int{&cost, &c.realized, &c.funding, &c.ixAt, &c.entryIx} {
			r.U256(v)
		}
		c.openedUs = int64(r.U64())
		if r.Err != nil {
			return
		}
		if k <= last || k >= nAccts || size == 0 || (size < 0) != (cost.Sign() < 0) {
			r.Fail("perp market %x: position of account %d (%d lots)", b.cfg.ID, k, size)
			return
		}
		last = k
		a := e.pp.order[k]
		i := pb.slot(a)
		pb.pos[i].size, pb.pos[i].cost, pb.cold[i] = size, cost, c
		e.pp.accts[a].open++
		sum += size
	}
	if r.Err == nil && sum != 0 {
		r.Fail("perp market %x: positions sum to %d lots", b.cfg.ID, sum)
	}
}
