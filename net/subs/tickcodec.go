package subs

import (
	"encoding/binary"
	"fmt"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/obindex"
)

// The tick codec: the canonical bytes of a Tick, for keeping the replay
// buffer on disk across a restart (Hub.Preload). Every field of Tick and of
// what it references is encoded, whether or not a channel reads it today,
// so a decoded tick is the published one (reflect.DeepEqual, up to nil
// versus empty slices) and every notification made from it is the same.
//
//	tick       = version:u8 (= 3)  tickUs:vi  hash:32  parentHash:32  resultTickUs:vi
//	             nEvents:uv event*  nLanded:uv landed:uv*  nBooks:uv book*
//	             nMarkets:uv market*  nAccounts:uv accountPositions*  nWithdrawals:uv withdrawal*
//	             nAccounts:uv accountTriggers*
//	event      = kind:u8  side:u8  flags:u8  [book:32]  orderID:32  owner:20
//	             base quote fee totalBase totalQuote totalFee:u256  [token:20]  [to:20]  amount:u256
//	             [position realized:s256  price:u256]
//	             flags: 0x01 terminal, 0x02 maker, 0x04 book, 0x08 token, 0x10 to present (non-zero),
//	             0x20 perp fields present (one of them non-zero)
//	book       = id:32  flags:u8 (0x01 hasPrice, 0x02 traded)  price volumeBase volumeQuote:u256
//	             newOrders:vi  firstEvent:uv  endEvent:uv  kind:u8  snapshot
//	             nCreated:uv meta*  nTouched:uv meta*  nModified:uv modification*
//	snapshot   = book:32  nBuys:uv level*  nSells:uv level*  clearingPrice groupingPrice:u256
//	             timestampUs:vi  newOrdersCount:vi  buysCount:vi  sellsCount:vi
//	             flags:u8 (0x01 perp state present)  [perpState]
//	level      = price volume:u256  orders:vi
//	meta       = id:32  book:32  owner:20  flags:u8 (0x01 signer present: it differs from owner,
//	             0x02 triggered: a fired trigger's order, whose txHash is zero)
//	             [signer:20]  txHash:32  nonce:uv  side:u8  type:u8  orderFlags:u8
//	             price size:u256  deadlineUs ttlUs admittedUs:vi  [triggerType:u8  grouping:u8]
//	modification = orderID:32  price size:u256
//	market     = id:32  name baseSymbol quoteSymbol:str  kind:u8  base:20  quote:20  intervalUs:vi
//	             tickPrecision lotSize makerFee takerFee:u256
//	             lastPrice:u256  flags:u8 (0x01 hasPrice)  volume24h high24h low24h:u256  change24hBps:vi
//	             [perpParams  flags:u8 (0x01 perp state present)  [perpState]]   (perp markets only)
//	perpParams = maxLeverage:uv  interestRate maxFundingRate maxPremium markClamp oraclePrice:u256
//	             walkBps:uv  walkSeed:uv
//	perpState  = oracle mark:u256  fundingRate fundingIndex:s256  fundingLastUs:vi
//	             openInterest:u256  walkFrozen:u8   (its book is the market's id)
//	accountPositions = account:20  nPositions:uv position*  nPerps:uv perpPosition*
//	             flags:u8 (0x01 margin present)  [margin]
//	position   = book:32  baseSymbol quoteSymbol:str  flags:u8 (0x01 hasMark)
//	             balance free locked markPrice:u256
//	perpPosition = book:32  owner:20  baseSymbol quoteSymbol:str  size cost:s256
//	             entryPrice mark notional:u256  unrealized realized funding:s256
//	             initialMargin maintenance liquidation:u256  openedTickUs:vi  entryFundingIx:s256
//	margin     = owner:20  cash equity unrealized realized:s256  notional initialMargin
//	             maintenance orderMargin withdrawable:u256  positions:vi
//	withdrawal = account:20  json:str
//	accountTriggers = account:20  nTriggers:uv trigger*
//	trigger    = id:32  book:32  owner:20  signer:20  nonce:uv  side:u8  size limitPrice triggerPrice:u256
//	             triggerType:u8  grouping:u8  flags:u8  deadlineUs admitTickUs expiresUs:vi
//	             hasTx:u8  [txHash:32]
//
//	uv   = unsigned LEB128 (binary.AppendUvarint), shortest form
//	vi   = zig-zag signed LEB128 (binary.AppendVarint), shortest form
//	u256 = len:u8 (0..32) ‖ len big-endian bytes, the first non-zero (zero is the lone byte 0)
//	str  = len:uv ‖ bytes
//	s256 = neg:u8 (0 or 1; 1 only when the magnitude is not zero) ‖ magnitude:u256
//
// Canonical: one value has one encoding, and DecodeTick refuses every other
// (longer varints, leading zero bytes, a present field that is zero, unknown
// flag bits or enum values, trailing bytes), so DecodeTick then AppendTick
// gives back the input byte for byte. Amounts are variable length because
// they are mostly far below 2^256: a fill's amounts take 9 to 11 bytes
// instead of 32, and an event of a real tick about 115 bytes instead of 350. No
// checksum: the store that keeps the bytes owns integrity.

// tickCodecVersion starts every encoded tick; bump it whenever the layout
// changes: DecodeTick refuses any other.
const tickCodecVersion = 3

// Flag bits of the encoding (see the layout above).
const (
	evTerminal = 0x01
	evMaker    = 0x02
	evBook     = 0x04
	evToken    = 0x08
	evTo       = 0x10
	evPerp     = 0x20
	evKnown    = evTerminal | evMaker | evBook | evToken | evTo | evPerp

	btHasPrice = 0x01
	btTraded   = 0x02
	btKnown    = btHasPrice | btTraded

	metaSigner    = 0x01
	metaTriggered = 0x02
	hasOne        = 0x01 // market hasPrice, position hasMark

	orderFlagsKnown = clob.FlagReduceOnly | clob.FlagIOC | clob.FlagPostOnly
)

// Smallest encodings of the repeated records: a count is refused when the
// remaining bytes cannot hold that many, before anything is allocated for it.
const (
	eventSizeMin    = 3 + 32 + 20 + 7
	bookSizeMin     = 32 + 1 + 3 + 3 + 1 + snapshotSizeMin + 3
	snapshotSizeMin = 32 + 2 + 2 + 4
	levelSizeMin    = 3
	metaSizeMin     = 32 + 32 + 20 + 1 + 32 + 1 + 3 + 2 + 3
	modSizeMin      = 32 + 2
	marketSizeMin   = 32 + 3 + 1 + 20 + 20 + 1 + 4 + 1 + 1 + 3 + 1
	accountSizeMin  = 20 + 1
	positionSizeMin = 32 + 2 + 1 + 4
	// perpPositionSizeMin: ids, two empty strings, 13 amounts of ≥ 1 byte
	// and a varint.
	perpPositionSizeMin = 32 + 20 + 2 + 13 + 1
	withdrawSizeMin     = 20 + 1
	triggerSizeMin      = 32 + 32 + 20 + 20 + 1 + 1 + 3 + 3 + 3 + 1
)

// checkTick verifies what the hub relies on to read a tick without
// panicking: one BookUpdate per BookTick, event ranges inside Events, a
// Config behind every market.
func checkTick(t *Tick) error {
	if len(t.Books) != len(t.Result.Books) {
		return fmt.Errorf("%d book updates for %d books", len(t.Books), len(t.Result.Books))
	}
	for i := range t.Result.Books {
		bt := &t.Result.Books[i]
		if bt.FirstEvent < 0 || bt.FirstEvent > bt.EndEvent || bt.EndEvent > len(t.Result.Events) {
			return fmt.Errorf("book %d: events [%d, %d) outside the tick's %d", i, bt.FirstEvent, bt.EndEvent, len(t.Result.Events))
		}
	}
	for i := range t.Markets {
		m := &t.Markets[i]
		switch {
		case m.Config == nil:
			return fmt.Errorf("market %d has no Config", i)
		case m.Config.Kind != clob.Perp && (m.HasPerp || m.Config.Perp != clob.PerpParams{}):
			return fmt.Errorf("market %d: perp fields on a spot market", i)
		case m.HasPerp && m.Perp.Book != m.Config.ID:
			return fmt.Errorf("market %d: perp state of another book", i)
		}
	}
	for i := range t.Triggers {
		for _, tr := range t.Triggers[i].Triggers {
			if !tr.HasTx && tr.TxHash != (clob.Hash{}) {
				return fmt.Errorf("account %d: a trigger's tx hash without HasTx", i)
			}
		}
	}
	return nil
}

// AppendTick appends the canonical encoding of t (layout above) to dst and
// returns the extended slice. It only reads t. It allocates only when dst
// is short.
//
// REQUIRES: t is a tick PublishTick accepts: len(t.Books) ==
// len(t.Result.Books), every book's events inside t.Result.Events, every
// market's Config set.
func AppendTick(dst []byte, t *Tick) []byte {
	if err := checkTick(t); err != nil {
		panic("BUG: subs.AppendTick: " + err.Error())
	}
	dst = append(dst, tickCodecVersion)
	dst = binary.AppendVarint(dst, t.TickUs)
	dst = append(dst, t.Hash[:]...)
	dst = append(dst, t.ParentHash[:]...)
	r := &t.Result
	dst = binary.AppendVarint(dst, r.TickUs)
	dst = binary.AppendUvarint(dst, uint64(len(r.Events)))
	for i := range r.Events {
		dst = appendEvent(dst, &r.Events[i])
	}
	dst = binary.AppendUvarint(dst, uint64(len(r.Landed)))
	for _, tag := range r.Landed {
		dst = binary.AppendUvarint(dst, tag)
	}
	dst = binary.AppendUvarint(dst, uint64(len(r.Books)))
	for i := range r.Books {
		dst = appendBook(dst, &r.Books[i], &t.Books[i])
	}
	dst = binary.AppendUvarint(dst, uint64(len(t.Markets)))
	for i := range t.Markets {
		dst = appendMarket(dst, &t.Markets[i])
	}
	dst = binary.AppendUvarint(dst, uint64(len(t.Positions)))
	for i := range t.Positions {
		p := &t.Positions[i]
		dst = append(dst, p.Account[:]...)
		dst = appendList(dst, p.Data.Spot, appendPosition)
		dst = appendList(dst, p.Data.Perps, appendPerpPosition)
		dst = appendFlag(dst, p.Data.HasMargin)
		if p.Data.HasMargin {
			dst = appendMargin(dst, &p.Data.Margin)
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(t.Withdrawals)))
	for i := range t.Withdrawals {
		w := &t.Withdrawals[i]
		dst = append(dst, w.Account[:]...)
		dst = appendStr(dst, w.JSON)
	}
	dst = binary.AppendUvarint(dst, uint64(len(t.Triggers)))
	for i := range t.Triggers {
		a := &t.Triggers[i]
		dst = append(dst, a.Account[:]...)
		dst = appendList(dst, a.Triggers, appendTrigger)
	}
	return dst
}

// appendList appends the count of items, then each with item (decodeList
// reads it back).
func appendList[T any](dst []byte, items []T, item func([]byte, *T) []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(items)))
	for i := range items {
		dst = item(dst, &items[i])
	}
	return dst
}

func appendTrigger(dst []byte, t *obindex.Trigger) []byte {
	in := &t.Info
	dst = append(dst, in.ID[:]...)
	dst = append(dst, in.Book[:]...)
	dst = append(dst, in.Owner[:]...)
	dst = append(dst, in.Signer[:]...)
	dst = binary.AppendUvarint(dst, in.Nonce)
	dst = append(dst, byte(in.Side))
	dst = appendU256(dst, &in.Size)
	dst = appendU256(dst, &in.LimitPrice)
	dst = appendU256(dst, &in.TriggerPrice)
	dst = append(dst, in.TriggerType, in.Grouping, in.Flags)
	dst = binary.AppendVarint(dst, in.DeadlineUs)
	dst = binary.AppendVarint(dst, in.AdmitTickUs)
	dst = binary.AppendVarint(dst, in.ExpiresUs)
	dst = appendFlag(dst, t.HasTx)
	if t.HasTx {
		dst = append(dst, t.TxHash[:]...)
	}
	return dst
}

// appendS256 appends a signed amount: its sign byte, then its magnitude.
func appendS256(dst []byte, v *clob.Signed) []byte {
	return appendU256(appendFlag(dst, v.Neg && !v.Abs.IsZero()), &v.Abs)
}

func appendEvent(dst []byte, e *clob.Event) []byte {
	var flags byte
	if e.Terminal {
		flags |= evTerminal
	}
	if e.Maker {
		flags |= evMaker
	}
	if e.Book != (clob.Hash{}) {
		flags |= evBook
	}
	if e.Token != (clob.Address{}) {
		flags |= evToken
	}
	if e.To != (clob.Address{}) {
		flags |= evTo
	}
	perp := !e.Position.Abs.IsZero() || !e.Realized.Abs.IsZero() || !e.Price.IsZero()
	if perp {
		flags |= evPerp
	}
	dst = append(dst, byte(e.Kind), byte(e.Side), flags)
	if flags&evBook != 0 {
		dst = append(dst, e.Book[:]...)
	}
	dst = append(dst, e.OrderID[:]...)
	dst = append(dst, e.Owner[:]...)
	dst = appendU256(dst, &e.Base)
	dst = appendU256(dst, &e.Quote)
	dst = appendU256(dst, &e.Fee)
	dst = appendU256(dst, &e.TotalBase)
	dst = appendU256(dst, &e.TotalQuote)
	dst = appendU256(dst, &e.TotalFee)
	if flags&evToken != 0 {
		dst = append(dst, e.Token[:]...)
	}
	if flags&evTo != 0 {
		dst = append(dst, e.To[:]...)
	}
	dst = appendU256(dst, &e.Amount)
	if perp {
		dst = appendS256(dst, &e.Position)
		dst = appendS256(dst, &e.Realized)
		dst = appendU256(dst, &e.Price)
	}
	return dst
}

func appendBook(dst []byte, bt *clob.BookTick, bu *BookUpdate) []byte {
	dst = append(dst, bt.Book[:]...)
	var flags byte
	if bt.HasPrice {
		flags |= btHasPrice
	}
	if bt.Traded {
		flags |= btTraded
	}
	dst = append(dst, flags)
	dst = appendU256(dst, &bt.Price)
	dst = appendU256(dst, &bt.VolumeBase)
	dst = appendU256(dst, &bt.VolumeQuote)
	dst = binary.AppendVarint(dst, int64(bt.NewOrders))
	dst = binary.AppendUvarint(dst, uint64(bt.FirstEvent))
	dst = binary.AppendUvarint(dst, uint64(bt.EndEvent))
	dst = append(dst, byte(bu.Kind))
	s := &bu.Snapshot
	dst = append(dst, s.Book[:]...)
	dst = appendLevels(dst, s.Buys)
	dst = appendLevels(dst, s.Sells)
	dst = appendU256(dst, &s.ClearingPrice)
	dst = appendU256(dst, &s.GroupingPrice)
	dst = binary.AppendVarint(dst, s.TimestampUs)
	dst = binary.AppendVarint(dst, int64(s.NewOrdersCount))
	dst = binary.AppendVarint(dst, int64(s.BuysCount))
	dst = binary.AppendVarint(dst, int64(s.SellsCount))
	dst = appendFlag(dst, s.HasPerp)
	if s.HasPerp {
		dst = appendPerpState(dst, &s.Perp)
	}
	dst = appendMetas(dst, bu.Created)
	dst = appendMetas(dst, bu.Touched)
	dst = binary.AppendUvarint(dst, uint64(len(bu.Modified)))
	for i := range bu.Modified {
		m := &bu.Modified[i]
		dst = append(dst, m.OrderID[:]...)
		dst = appendU256(dst, &m.Price)
		dst = appendU256(dst, &m.Size)
	}
	return dst
}

func appendLevels(dst []byte, ls []clob.Level) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ls)))
	for i := range ls {
		dst = appendU256(dst, &ls[i].Price)
		dst = appendU256(dst, &ls[i].Volume)
		dst = binary.AppendVarint(dst, int64(ls[i].Orders))
	}
	return dst
}

func appendMetas(dst []byte, ms []obindex.OrderMeta) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ms)))
	for i := range ms {
		m := &ms[i]
		dst = append(dst, m.ID[:]...)
		dst = append(dst, m.Book[:]...)
		dst = append(dst, m.Owner[:]...)
		var flags byte
		if m.Signer != m.Owner {
			flags |= metaSigner
		}
		if m.Kind == obindex.KindTriggered {
			flags |= metaTriggered
		}
		dst = append(dst, flags)
		if flags&metaSigner != 0 {
			dst = append(dst, m.Signer[:]...)
		}
		dst = append(dst, m.TxHash[:]...)
		dst = binary.AppendUvarint(dst, m.Nonce)
		dst = append(dst, byte(m.Side), byte(m.Type), m.Flags)
		dst = appendU256(dst, &m.Price)
		dst = appendU256(dst, &m.Size)
		dst = binary.AppendVarint(dst, m.DeadlineUs)
		dst = binary.AppendVarint(dst, m.TTLUs)
		dst = binary.AppendVarint(dst, m.AdmittedUs)
		if flags&metaTriggered != 0 {
			dst = append(dst, m.TriggerType, m.Grouping)
		}
	}
	return dst
}

func appendMarket(dst []byte, m *obindex.Market) []byte {
	c := m.Config
	dst = append(dst, c.ID[:]...)
	dst = appendStr(dst, c.Name)
	dst = appendStr(dst, c.BaseSymbol)
	dst = appendStr(dst, c.QuoteSymbol)
	dst = append(dst, byte(c.Kind))
	dst = append(dst, c.Base[:]...)
	dst = append(dst, c.Quote[:]...)
	dst = binary.AppendVarint(dst, c.IntervalUs)
	dst = appendU256(dst, &c.TickPrecision)
	dst = appendU256(dst, &c.LotSize)
	dst = appendU256(dst, &c.MakerFee)
	dst = appendU256(dst, &c.TakerFee)
	dst = appendU256(dst, &m.LastPrice)
	dst = appendFlag(dst, m.HasPrice)
	dst = appendU256(dst, &m.Volume24h)
	dst = appendU256(dst, &m.High24h)
	dst = appendU256(dst, &m.Low24h)
	dst = binary.AppendVarint(dst, m.Change24hBps)
	if c.Kind != clob.Perp {
		return dst
	}
	pp := &c.Perp
	dst = binary.AppendUvarint(dst, uint64(pp.MaxLeverage))
	for _, v := range [...]*uint256.Int{&pp.InterestRate, &pp.MaxFundingRate, &pp.MaxPremium, &pp.MarkClamp, &pp.OraclePrice} {
		dst = appendU256(dst, v)
	}
	dst = binary.AppendUvarint(dst, uint64(pp.WalkBps))
	dst = binary.AppendUvarint(dst, pp.WalkSeed)
	dst = appendFlag(dst, m.HasPerp)
	if !m.HasPerp {
		return dst
	}
	return appendPerpState(dst, &m.Perp)
}

// appendPerpState appends a perp market's state but its book (the market's
// or the snapshot's id).
func appendPerpState(dst []byte, s *clob.PerpInfo) []byte {
	dst = appendU256(dst, &s.Oracle)
	dst = appendU256(dst, &s.Mark)
	dst = appendS256(dst, &s.FundingRate)
	dst = appendS256(dst, &s.FundingIndex)
	dst = binary.AppendVarint(dst, s.FundingLastUs)
	dst = appendU256(dst, &s.OpenInterest)
	return appendFlag(dst, s.WalkFrozen)
}

func appendPerpPosition(dst []byte, p *obindex.PerpPosition) []byte {
	dst = append(dst, p.Book[:]...)
	dst = append(dst, p.Owner[:]...)
	dst = appendStr(dst, p.BaseSymbol)
	dst = appendStr(dst, p.QuoteSymbol)
	dst = appendS256(dst, &p.Size)
	dst = appendS256(dst, &p.Cost)
	dst = appendU256(dst, &p.EntryPrice)
	dst = appendU256(dst, &p.Mark)
	dst = appendU256(dst, &p.Notional)
	dst = appendS256(dst, &p.Unrealized)
	dst = appendS256(dst, &p.Realized)
	dst = appendS256(dst, &p.Funding)
	dst = appendU256(dst, &p.InitialMargin)
	dst = appendU256(dst, &p.Maintenance)
	dst = appendU256(dst, &p.Liquidation)
	dst = binary.AppendVarint(dst, p.OpenedTickUs)
	return appendS256(dst, &p.EntryFundingIx)
}

func appendMargin(dst []byte, m *clob.MarginInfo) []byte {
	dst = append(dst, m.Owner[:]...)
	for _, v := range [...]*clob.Signed{&m.Cash, &m.Equity, &m.Unrealized, &m.Realized} {
		dst = appendS256(dst, v)
	}
	for _, v := range [...]*uint256.Int{&m.Notional, &m.InitialMargin, &m.Maintenance, &m.OrderMargin, &m.Withdrawable} {
		dst = appendU256(dst, v)
	}
	return binary.AppendVarint(dst, int64(m.Positions))
}

func appendPosition(dst []byte, p *obindex.Position) []byte {
	dst = append(dst, p.Book[:]...)
	dst = appendStr(dst, p.BaseSymbol)
	dst = appendStr(dst, p.QuoteSymbol)
	dst = appendFlag(dst, p.HasMark)
	dst = appendU256(dst, &p.Balance)
	dst = appendU256(dst, &p.Free)
	dst = appendU256(dst, &p.Locked)
	return appendU256(dst, &p.MarkPrice)
}

func appendFlag(dst []byte, b bool) []byte {
	if b {
		return append(dst, hasOne)
	}
	return append(dst, 0)
}

// appendU256 appends v's big-endian bytes without leading zeros, after
// their count.
func appendU256(dst []byte, v *uint256.Int) []byte {
	n := (v.BitLen() + 7) / 8
	b := v.Bytes32()
	dst = append(dst, byte(n))
	return append(dst, b[32-n:]...)
}

func appendStr[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// DecodeTick decodes what AppendTick made. It refuses (with an error, never
// a panic) anything AppendTick cannot have made, so a tick it returns
// satisfies AppendTick's REQUIRES and re-encodes to b exactly. The tick
// shares no memory with b (b may be reused at once), and each market gets
// its own Config, which nothing else references.
func DecodeTick(b []byte) (*Tick, error) {
	d := tickDecoder{buf: b}
	t := d.tick()
	if d.err == nil && d.left() != 0 {
		d.fail("%d trailing bytes", d.left())
	}
	if d.err != nil {
		return nil, fmt.Errorf("cannot decode tick: %w", d.err)
	}
	if err := checkTick(t); err != nil {
		return nil, fmt.Errorf("cannot decode tick: %w", err)
	}
	return t, nil
}

// tickDecoder reads a tick front to back. Its first error sticks: every
// later read returns zero values and counts return 0, so loops end and
// callers check err once. It advances an offset rather than reslicing buf:
// storing a slice through d costs a GC write barrier, where the profile of
// the reslicing version spent a quarter of its time.
type tickDecoder struct {
	buf []byte // the whole input
	off int    // the first unread byte
	err error
}

func (d *tickDecoder) left() int { return len(d.buf) - d.off }

func (d *tickDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("at byte %d: %s", d.off, fmt.Sprintf(format, args...))
	}
}

// take returns the next n bytes, or nil once the input is short.
func (d *tickDecoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > d.left() {
		d.fail("truncated: %d bytes wanted, %d left", n, d.left())
		return nil
	}
	b := d.buf[d.off : d.off+n : d.off+n]
	d.off += n
	return b
}

func (d *tickDecoder) u8() byte {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

// flags reads a flags byte, refusing bits outside known.
func (d *tickDecoder) flags(known byte) byte {
	f := d.u8()
	if f&^known != 0 {
		d.fail("flags %#x outside %#x", f, known)
		return 0
	}
	return f
}

// enum reads a byte, refusing a value above maxValue.
func (d *tickDecoder) enum(what string, maxValue byte) byte {
	v := d.u8()
	if v > maxValue {
		d.fail("%s %d above %d", what, v, maxValue)
		return 0
	}
	return v
}

// oneOf reads a byte, refusing a value valid does not take: a trigger
// type (obindex.ValidTriggerType) or grouping (obindex.ValidGrouping), the
// two values of each the engine takes.
func (d *tickDecoder) oneOf(what string, valid func(uint8) bool) uint8 {
	v := d.u8()
	if !valid(v) {
		d.fail("unknown %s %d", what, v)
		return 0
	}
	return v
}

func (d *tickDecoder) hash(h *clob.Hash) {
	if b := d.take(len(h)); b != nil {
		copy(h[:], b)
	}
}

func (d *tickDecoder) addr(a *clob.Address) {
	if b := d.take(len(a)); b != nil {
		copy(a[:], b)
	}
}

// uv reads a shortest-form unsigned LEB128.
func (d *tickDecoder) uv() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf[d.off:])
	switch {
	case n == 0:
		d.fail("truncated varint")
		return 0
	case n < 0:
		d.fail("varint overflows 64 bits")
		return 0
	case n > 1 && d.buf[d.off+n-1] == 0:
		d.fail("varint not in shortest form")
		return 0
	}
	d.off += n
	return v
}

// vi reads a shortest-form zig-zag signed LEB128.
func (d *tickDecoder) vi() int64 {
	u := d.uv()
	return int64(u>>1) ^ -int64(u&1)
}

// int reads a vi that fits an int.
func (d *tickDecoder) int() int {
	v := d.vi()
	if int64(int(v)) != v {
		d.fail("%d does not fit an int", v)
		return 0
	}
	return int(v)
}

// index reads a uv that fits a non-negative int.
func (d *tickDecoder) index() int {
	v := d.uv()
	if v > uint64(int(^uint(0)>>1)) {
		d.fail("%d does not fit an int", v)
		return 0
	}
	return int(v)
}

// count reads a record count, refusing one the remaining bytes cannot
// hold at minSize bytes a record: no allocation is sized beyond the input.
func (d *tickDecoder) count(minSize int) int {
	n := d.uv()
	if n > uint64(d.left()/minSize) {
		d.fail("count %d exceeds what the %d bytes left can hold", n, d.left())
		return 0
	}
	return int(n)
}

func (d *tickDecoder) u256(v *uint256.Int) {
	n := int(d.u8())
	if n > 32 {
		d.fail("u256 of %d bytes", n)
		return
	}
	b := d.take(n)
	if n > 0 && b != nil && b[0] == 0 {
		d.fail("u256 with a leading zero byte")
		return
	}
	v.SetBytes(b)
}

// bytes reads a str into fresh memory (nil when empty).
func (d *tickDecoder) bytes() []byte {
	n := d.uv()
	if n > uint64(d.left()) {
		d.fail("truncated string: %d bytes wanted, %d left", n, d.left())
		return nil
	}
	if n == 0 {
		return nil
	}
	return append([]byte(nil), d.take(int(n))...)
}

func (d *tickDecoder) str() string {
	n := d.uv()
	if n > uint64(d.left()) {
		d.fail("truncated string: %d bytes wanted, %d left", n, d.left())
		return ""
	}
	return string(d.take(int(n)))
}

func (d *tickDecoder) tick() *Tick {
	if v := d.u8(); d.err == nil && v != tickCodecVersion {
		d.fail("version %d, want %d", v, tickCodecVersion)
	}
	t := &Tick{TickUs: d.vi()}
	d.hash(&t.Hash)
	d.hash(&t.ParentHash)
	r := &t.Result
	r.TickUs = d.vi()
	if n := d.count(eventSizeMin); n > 0 {
		r.Events = make([]clob.Event, n)
		for i := range r.Events {
			d.event(&r.Events[i])
		}
	}
	if n := d.count(1); n > 0 {
		r.Landed = make([]uint64, n)
		for i := range r.Landed {
			r.Landed[i] = d.uv()
		}
	}
	if n := d.count(bookSizeMin); n > 0 {
		r.Books = make([]clob.BookTick, n)
		t.Books = make([]BookUpdate, n)
		for i := range r.Books {
			d.book(&r.Books[i], &t.Books[i])
		}
	}
	if n := d.count(marketSizeMin); n > 0 {
		t.Markets = make([]obindex.Market, n)
		cfgs := make([]clob.MarketConfig, n)
		for i := range t.Markets {
			t.Markets[i].Config = &cfgs[i]
			d.market(&t.Markets[i])
		}
	}
	if n := d.count(accountSizeMin); n > 0 {
		t.Positions = make([]AccountPositions, n)
		for i := range t.Positions {
			p := &t.Positions[i]
			d.addr(&p.Account)
			p.Data.Spot = decodeList(d, positionSizeMin, d.position)
			p.Data.Perps = decodeList(d, perpPositionSizeMin, d.perpPosition)
			if p.Data.HasMargin = d.flags(hasOne) != 0; p.Data.HasMargin {
				d.margin(&p.Data.Margin)
			}
		}
	}
	if n := d.count(withdrawSizeMin); n > 0 {
		t.Withdrawals = make([]Withdrawal, n)
		for i := range t.Withdrawals {
			d.addr(&t.Withdrawals[i].Account)
			t.Withdrawals[i].JSON = d.bytes()
		}
	}
	if n := d.count(accountSizeMin); n > 0 {
		t.Triggers = make([]AccountTriggers, n)
		for i := range t.Triggers {
			a := &t.Triggers[i]
			d.addr(&a.Account)
			a.Triggers = decodeList(d, triggerSizeMin, d.trigger)
		}
	}
	return t
}

// decodeList reads a count of records of at least minSize bytes, then
// each with item (nil when none).
func decodeList[T any](d *tickDecoder, minSize int, item func(*T)) []T {
	n := d.count(minSize)
	if n == 0 {
		return nil
	}
	out := make([]T, n)
	for i := range out {
		item(&out[i])
	}
	return out
}

func (d *tickDecoder) trigger(t *obindex.Trigger) {
	in := &t.Info
	d.hash(&in.ID)
	d.hash(&in.Book)
	d.addr(&in.Owner)
	d.addr(&in.Signer)
	in.Nonce = d.uv()
	in.Side = clob.Side(d.enum("side", byte(clob.Sell)))
	d.u256(&in.Size)
	d.u256(&in.LimitPrice)
	d.u256(&in.TriggerPrice)
	in.TriggerType = d.oneOf("trigger type", obindex.ValidTriggerType)
	in.Grouping = d.oneOf("trigger grouping", obindex.ValidGrouping)
	in.Flags = d.flags(orderFlagsKnown)
	in.DeadlineUs = d.vi()
	in.AdmitTickUs = d.vi()
	in.ExpiresUs = d.vi()
	if t.HasTx = d.flags(hasOne) != 0; t.HasTx {
		d.hash(&t.TxHash)
	}
}

// s256 reads a signed amount, refusing a negative zero.
func (d *tickDecoder) s256(v *clob.Signed) {
	v.Neg = d.flags(hasOne) != 0
	d.u256(&v.Abs)
	d.present(v.Neg && v.Abs.IsZero(), "negative zero")
}

func (d *tickDecoder) event(e *clob.Event) {
	kind := d.u8()
	if d.err == nil && (kind < byte(clob.EventPlaced) || kind > byte(clob.EventTriggerCancel)) {
		d.fail("event kind %d", kind)
	}
	e.Kind = clob.EventKind(kind)
	e.Side = clob.Side(d.enum("side", byte(clob.Sell)))
	flags := d.flags(evKnown)
	e.Terminal, e.Maker = flags&evTerminal != 0, flags&evMaker != 0
	if flags&evBook != 0 {
		d.hash(&e.Book)
		d.present(e.Book == clob.Hash{}, "event book")
	}
	d.hash(&e.OrderID)
	d.addr(&e.Owner)
	d.u256(&e.Base)
	d.u256(&e.Quote)
	d.u256(&e.Fee)
	d.u256(&e.TotalBase)
	d.u256(&e.TotalQuote)
	d.u256(&e.TotalFee)
	if flags&evToken != 0 {
		d.addr(&e.Token)
		d.present(e.Token == clob.Address{}, "event token")
	}
	if flags&evTo != 0 {
		d.addr(&e.To)
		d.present(e.To == clob.Address{}, "event recipient")
	}
	d.u256(&e.Amount)
	if flags&evPerp != 0 {
		d.s256(&e.Position)
		d.s256(&e.Realized)
		d.u256(&e.Price)
		d.present(e.Position.Abs.IsZero() && e.Realized.Abs.IsZero() && e.Price.IsZero(), "event perp fields")
	}
}

// present refuses a field flagged present whose value is zero: AppendTick
// leaves zero fields out.
func (d *tickDecoder) present(zero bool, what string) {
	if zero && d.err == nil {
		d.fail("%s flagged present but zero", what)
	}
}

func (d *tickDecoder) book(bt *clob.BookTick, bu *BookUpdate) {
	d.hash(&bt.Book)
	flags := d.flags(btKnown)
	bt.HasPrice, bt.Traded = flags&btHasPrice != 0, flags&btTraded != 0
	d.u256(&bt.Price)
	d.u256(&bt.VolumeBase)
	d.u256(&bt.VolumeQuote)
	bt.NewOrders = d.int()
	bt.FirstEvent = d.index()
	bt.EndEvent = d.index()
	bu.Kind = clob.MarketKind(d.enum("market kind", byte(clob.Perp)))
	s := &bu.Snapshot
	d.hash(&s.Book)
	s.Buys = d.levels()
	s.Sells = d.levels()
	d.u256(&s.ClearingPrice)
	d.u256(&s.GroupingPrice)
	s.TimestampUs = d.vi()
	s.NewOrdersCount = d.int()
	s.BuysCount = d.int()
	s.SellsCount = d.int()
	if s.HasPerp = d.flags(hasOne) != 0; s.HasPerp {
		s.Perp.Book = s.Book
		d.perpState(&s.Perp)
	}
	bu.Created = d.metas()
	bu.Touched = d.metas()
	if n := d.count(modSizeMin); n > 0 {
		bu.Modified = make([]Modification, n)
		for i := range bu.Modified {
			m := &bu.Modified[i]
			d.hash(&m.OrderID)
			d.u256(&m.Price)
			d.u256(&m.Size)
		}
	}
}

func (d *tickDecoder) levels() []clob.Level {
	n := d.count(levelSizeMin)
	if n == 0 {
		return nil
	}
	ls := make([]clob.Level, n)
	for i := range ls {
		d.u256(&ls[i].Price)
		d.u256(&ls[i].Volume)
		ls[i].Orders = d.int()
	}
	return ls
}

func (d *tickDecoder) metas() []obindex.OrderMeta {
	n := d.count(metaSizeMin)
	if n == 0 {
		return nil
	}
	ms := make([]obindex.OrderMeta, n)
	for i := range ms {
		m := &ms[i]
		d.hash(&m.ID)
		d.hash(&m.Book)
		d.addr(&m.Owner)
		flags := d.flags(metaSigner | metaTriggered)
		if flags&metaSigner != 0 {
			d.addr(&m.Signer)
			d.present(m.Signer == m.Owner, "signer equal to owner")
		} else {
			m.Signer = m.Owner
		}
		d.hash(&m.TxHash)
		m.Nonce = d.uv()
		m.Side = clob.Side(d.enum("side", byte(clob.Sell)))
		m.Type = clob.OrderType(d.enum("order type", byte(clob.Market)))
		m.Flags = d.flags(orderFlagsKnown)
		d.u256(&m.Price)
		d.u256(&m.Size)
		m.DeadlineUs = d.vi()
		m.TTLUs = d.vi()
		m.AdmittedUs = d.vi()
		if flags&metaTriggered != 0 {
			m.Kind = obindex.KindTriggered
			m.TriggerType = d.oneOf("trigger type", obindex.ValidTriggerType)
			m.Grouping = d.oneOf("trigger grouping", obindex.ValidGrouping)
			if m.TxHash != (clob.Hash{}) && d.err == nil {
				d.fail("triggered order %x with a transaction hash", m.ID) // obindex.AdmittedTrigger drops it
			}
		}
	}
	return ms
}

func (d *tickDecoder) market(m *obindex.Market) {
	c := m.Config
	d.hash(&c.ID)
	c.Name = d.str()
	c.BaseSymbol = d.str()
	c.QuoteSymbol = d.str()
	c.Kind = clob.MarketKind(d.enum("market kind", byte(clob.Perp)))
	d.addr(&c.Base)
	d.addr(&c.Quote)
	c.IntervalUs = d.vi()
	d.u256(&c.TickPrecision)
	d.u256(&c.LotSize)
	d.u256(&c.MakerFee)
	d.u256(&c.TakerFee)
	d.u256(&m.LastPrice)
	m.HasPrice = d.flags(hasOne) != 0
	d.u256(&m.Volume24h)
	d.u256(&m.High24h)
	d.u256(&m.Low24h)
	m.Change24hBps = d.vi()
	if c.Kind != clob.Perp {
		return
	}
	pp := &c.Perp
	lev := d.uv()
	if lev > uint64(^uint32(0)) {
		d.fail("max leverage %d above 32 bits", lev)
	}
	pp.MaxLeverage = uint32(lev)
	for _, v := range [...]*uint256.Int{&pp.InterestRate, &pp.MaxFundingRate, &pp.MaxPremium, &pp.MarkClamp, &pp.OraclePrice} {
		d.u256(v)
	}
	bps := d.uv()
	if bps > uint64(^uint32(0)) {
		d.fail("walk bps %d above 32 bits", bps)
	}
	pp.WalkBps = uint32(bps)
	pp.WalkSeed = d.uv()
	if d.flags(hasOne) == 0 {
		return
	}
	m.Perp, m.MaxLeverage, m.HasPerp = clob.PerpInfo{Book: c.ID}, c.Perp.MaxLeverage, true
	d.perpState(&m.Perp)
}

func (d *tickDecoder) perpState(s *clob.PerpInfo) {
	d.u256(&s.Oracle)
	d.u256(&s.Mark)
	d.s256(&s.FundingRate)
	d.s256(&s.FundingIndex)
	s.FundingLastUs = d.vi()
	d.u256(&s.OpenInterest)
	s.WalkFrozen = d.flags(hasOne) != 0
}

func (d *tickDecoder) perpPosition(p *obindex.PerpPosition) {
	d.hash(&p.Book)
	d.addr(&p.Owner)
	p.BaseSymbol = d.str()
	p.QuoteSymbol = d.str()
	d.s256(&p.Size)
	d.s256(&p.Cost)
	d.u256(&p.EntryPrice)
	d.u256(&p.Mark)
	d.u256(&p.Notional)
	d.s256(&p.Unrealized)
	d.s256(&p.Realized)
	d.s256(&p.Funding)
	d.u256(&p.InitialMargin)
	d.u256(&p.Maintenance)
	d.u256(&p.Liquidation)
	p.OpenedTickUs = d.vi()
	d.s256(&p.EntryFundingIx)
}

func (d *tickDecoder) margin(m *clob.MarginInfo) {
	d.addr(&m.Owner)
	for _, v := range [...]*clob.Signed{&m.Cash, &m.Equity, &m.Unrealized, &m.Realized} {
		d.s256(v)
	}
	for _, v := range [...]*uint256.Int{&m.Notional, &m.InitialMargin, &m.Maintenance, &m.OrderMargin, &m.Withdrawable} {
		d.u256(v)
	}
	m.Positions = d.int()
}

func (d *tickDecoder) position(p *obindex.Position) {
	d.hash(&p.Book)
	p.BaseSymbol = d.str()
	p.QuoteSymbol = d.str()
	p.HasMark = d.flags(hasOne) != 0
	d.u256(&p.Balance)
	d.u256(&p.Free)
	d.u256(&p.Locked)
	d.u256(&p.MarkPrice)
}
