package tickrec

import (
	"encoding/binary"
	"fmt"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/binread"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
)

// The tick codec: the canonical bytes of a Tick, for keeping the replay
// buffer on disk across a restart (subs.Hub.Preload). Every field of Tick and of
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
//	u256 = len:u8 (0..32) ‖ len big-endian bytes, the first non-zero (zero is the lone byte 0):
//	       binread.AppendU256Compact
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

// Version starts every encoded tick; bump it whenever the layout
// changes: DecodeTick refuses any other.
const Version = 3

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

// Check verifies what the hub relies on to read a tick without
// panicking: one BookUpdate per BookTick, event ranges inside Events, a
// Config behind every market.
func Check(t *Tick) error {
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
	if err := Check(t); err != nil {
		panic("BUG: tickrec.AppendTick: " + err.Error())
	}
	dst = append(dst, Version)
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

func appendTrigger(dst []byte, t *marketdata.Trigger) []byte {
	in := &t.Info
	dst = append(dst, in.ID[:]...)
	dst = append(dst, in.Book[:]...)
	dst = append(dst, in.Owner[:]...)
	dst = append(dst, in.Signer[:]...)
	dst = binary.AppendUvarint(dst, in.Nonce)
	dst = append(dst, byte(in.Side))
	dst = binread.AppendU256Compact(dst, &in.Size)
	dst = binread.AppendU256Compact(dst, &in.LimitPrice)
	dst = binread.AppendU256Compact(dst, &in.TriggerPrice)
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
	return binread.AppendU256Compact(appendFlag(dst, v.Neg && !v.Abs.IsZero()), &v.Abs)
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
	dst = binread.AppendU256Compact(dst, &e.Base)
	dst = binread.AppendU256Compact(dst, &e.Quote)
	dst = binread.AppendU256Compact(dst, &e.Fee)
	dst = binread.AppendU256Compact(dst, &e.TotalBase)
	dst = binread.AppendU256Compact(dst, &e.TotalQuote)
	dst = binread.AppendU256Compact(dst, &e.TotalFee)
	if flags&evToken != 0 {
		dst = append(dst, e.Token[:]...)
	}
	if flags&evTo != 0 {
		dst = append(dst, e.To[:]...)
	}
	dst = binread.AppendU256Compact(dst, &e.Amount)
	if perp {
		dst = appendS256(dst, &e.Position)
		dst = appendS256(dst, &e.Realized)
		dst = binread.AppendU256Compact(dst, &e.Price)
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
	dst = binread.AppendU256Compact(dst, &bt.Price)
	dst = binread.AppendU256Compact(dst, &bt.VolumeBase)
	dst = binread.AppendU256Compact(dst, &bt.VolumeQuote)
	dst = binary.AppendVarint(dst, int64(bt.NewOrders))
	dst = binary.AppendUvarint(dst, uint64(bt.FirstEvent))
	dst = binary.AppendUvarint(dst, uint64(bt.EndEvent))
	dst = append(dst, byte(bu.Kind))
	s := &bu.Snapshot
	dst = append(dst, s.Book[:]...)
	dst = appendLevels(dst, s.Buys)
	dst = appendLevels(dst, s.Sells)
	dst = binread.AppendU256Compact(dst, &s.ClearingPrice)
	dst = binread.AppendU256Compact(dst, &s.GroupingPrice)
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
		dst = binread.AppendU256Compact(dst, &m.Price)
		dst = binread.AppendU256Compact(dst, &m.Size)
	}
	return dst
}

func appendLevels(dst []byte, ls []clob.Level) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ls)))
	for i := range ls {
		dst = binread.AppendU256Compact(dst, &ls[i].Price)
		dst = binread.AppendU256Compact(dst, &ls[i].Volume)
		dst = binary.AppendVarint(dst, int64(ls[i].Orders))
	}
	return dst
}

func appendMetas(dst []byte, ms []marketdata.OrderMeta) []byte {
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
		if m.Kind == marketdata.KindTriggered {
			flags |= metaTriggered
		}
		dst = append(dst, flags)
		if flags&metaSigner != 0 {
			dst = append(dst, m.Signer[:]...)
		}
		dst = append(dst, m.TxHash[:]...)
		dst = binary.AppendUvarint(dst, m.Nonce)
		dst = append(dst, byte(m.Side), byte(m.Type), m.Flags)
		dst = binread.AppendU256Compact(dst, &m.Price)
		dst = binread.AppendU256Compact(dst, &m.Size)
		dst = binary.AppendVarint(dst, m.DeadlineUs)
		dst = binary.AppendVarint(dst, m.TTLUs)
		dst = binary.AppendVarint(dst, m.AdmittedUs)
		if flags&metaTriggered != 0 {
			dst = append(dst, m.TriggerType, m.Grouping)
		}
	}
	return dst
}

func appendMarket(dst []byte, m *marketdata.Market) []byte {
	c := m.Config
	dst = append(dst, c.ID[:]...)
	dst = appendStr(dst, c.Name)
	dst = appendStr(dst, c.BaseSymbol)
	dst = appendStr(dst, c.QuoteSymbol)
	dst = append(dst, byte(c.Kind))
	dst = append(dst, c.Base[:]...)
	dst = append(dst, c.Quote[:]...)
	dst = binary.AppendVarint(dst, c.IntervalUs)
	dst = binread.AppendU256Compact(dst, &c.TickPrecision)
	dst = binread.AppendU256Compact(dst, &c.LotSize)
	dst = binread.AppendU256Compact(dst, &c.MakerFee)
	dst = binread.AppendU256Compact(dst, &c.TakerFee)
	dst = binread.AppendU256Compact(dst, &m.LastPrice)
	dst = appendFlag(dst, m.HasPrice)
	dst = binread.AppendU256Compact(dst, &m.Volume24h)
	dst = binread.AppendU256Compact(dst, &m.High24h)
	dst = binread.AppendU256Compact(dst, &m.Low24h)
	dst = binary.AppendVarint(dst, m.Change24hBps)
	if c.Kind != clob.Perp {
		return dst
	}
	pp := &c.Perp
	dst = binary.AppendUvarint(dst, uint64(pp.MaxLeverage))
	for _, v := range [...]*uint256.Int{&pp.InterestRate, &pp.MaxFundingRate, &pp.MaxPremium, &pp.MarkClamp, &pp.OraclePrice} {
		dst = binread.AppendU256Compact(dst, v)
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
	dst = binread.AppendU256Compact(dst, &s.Oracle)
	dst = binread.AppendU256Compact(dst, &s.Mark)
	dst = appendS256(dst, &s.FundingRate)
	dst = appendS256(dst, &s.FundingIndex)
	dst = binary.AppendVarint(dst, s.FundingLastUs)
	dst = binread.AppendU256Compact(dst, &s.OpenInterest)
	return appendFlag(dst, s.WalkFrozen)
}

func appendPerpPosition(dst []byte, p *marketdata.PerpPosition) []byte {
	dst = append(dst, p.Book[:]...)
	dst = append(dst, p.Owner[:]...)
	dst = appendStr(dst, p.BaseSymbol)
	dst = appendStr(dst, p.QuoteSymbol)
	dst = appendS256(dst, &p.Size)
	dst = appendS256(dst, &p.Cost)
	dst = binread.AppendU256Compact(dst, &p.EntryPrice)
	dst = binread.AppendU256Compact(dst, &p.Mark)
	dst = binread.AppendU256Compact(dst, &p.Notional)
	dst = appendS256(dst, &p.Unrealized)
	dst = appendS256(dst, &p.Realized)
	dst = appendS256(dst, &p.Funding)
	dst = binread.AppendU256Compact(dst, &p.InitialMargin)
	dst = binread.AppendU256Compact(dst, &p.Maintenance)
	dst = binread.AppendU256Compact(dst, &p.Liquidation)
	dst = binary.AppendVarint(dst, p.OpenedTickUs)
	return appendS256(dst, &p.EntryFundingIx)
}

func appendMargin(dst []byte, m *clob.MarginInfo) []byte {
	dst = append(dst, m.Owner[:]...)
	for _, v := range [...]*clob.Signed{&m.Cash, &m.Equity, &m.Unrealized, &m.Realized} {
		dst = appendS256(dst, v)
	}
	for _, v := range [...]*uint256.Int{&m.Notional, &m.InitialMargin, &m.Maintenance, &m.OrderMargin, &m.Withdrawable} {
		dst = binread.AppendU256Compact(dst, v)
	}
	return binary.AppendVarint(dst, int64(m.Positions))
}

func appendPosition(dst []byte, p *marketdata.Position) []byte {
	dst = append(dst, p.Book[:]...)
	dst = appendStr(dst, p.BaseSymbol)
	dst = appendStr(dst, p.QuoteSymbol)
	dst = appendFlag(dst, p.HasMark)
	dst = binread.AppendU256Compact(dst, &p.Balance)
	dst = binread.AppendU256Compact(dst, &p.Free)
	dst = binread.AppendU256Compact(dst, &p.Locked)
	return binread.AppendU256Compact(dst, &p.MarkPrice)
}

func appendFlag(dst []byte, b bool) []byte {
	if b {
		return append(dst, hasOne)
	}
	return append(dst, 0)
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
	d := tickDecoder{binread.Reader{B: b}}
	t := d.tick()
	if d.Err == nil && d.Left() != 0 {
		d.Fail("%d trailing bytes", d.Left())
	}
	if d.Err != nil {
		return nil, fmt.Errorf("cannot decode tick: %w", d.Err)
	}
	if err := Check(t); err != nil {
		return nil, fmt.Errorf("cannot decode tick: %w", err)
	}
	return t, nil
}

// tickDecoder reads a tick front to back on binread's sticky-error reader
// (every read after the first error returns zero and counts return 0, so
// loops end and callers check Err once), adding the varints, strings and
// enums of the layout above. The reader advances an offset rather than
// reslicing its input: storing a slice costs a GC write barrier, where the
// profile of a reslicing version spent a quarter of its time.
type tickDecoder struct{ binread.Reader }

// flags reads a flags byte, refusing bits outside known.
func (d *tickDecoder) flags(known byte) byte {
	f := d.U8()
	if f&^known != 0 {
		d.Fail("flags %#x outside %#x", f, known)
		return 0
	}
	return f
}

// enum reads a byte, refusing a value above maxValue.
func (d *tickDecoder) enum(what string, maxValue byte) byte {
	v := d.U8()
	if v > maxValue {
		d.Fail("%s %d above %d", what, v, maxValue)
		return 0
	}
	return v
}

// oneOf reads a byte, refusing a value valid does not take: a trigger
// type (marketdata.ValidTriggerType) or grouping (marketdata.ValidGrouping), the
// two values of each the engine takes.
func (d *tickDecoder) oneOf(what string, valid func(uint8) bool) uint8 {
	v := d.U8()
	if !valid(v) {
		d.Fail("unknown %s %d", what, v)
		return 0
	}
	return v
}

func (d *tickDecoder) hash(h *clob.Hash) {
	if b := d.Take(len(h)); b != nil {
		copy(h[:], b)
	}
}

func (d *tickDecoder) addr(a *clob.Address) {
	if b := d.Take(len(a)); b != nil {
		copy(a[:], b)
	}
}

// uv reads a shortest-form unsigned LEB128.
func (d *tickDecoder) uv() uint64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.B[d.Off:])
	switch {
	case n == 0:
		d.Fail("truncated varint")
		return 0
	case n < 0:
		d.Fail("varint overflows 64 bits")
		return 0
	case n > 1 && d.B[d.Off+n-1] == 0:
		d.Fail("varint not in shortest form")
		return 0
	}
	d.Off += n
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
		d.Fail("%d does not fit an int", v)
		return 0
	}
	return int(v)
}

// index reads a uv that fits a non-negative int.
func (d *tickDecoder) index() int {
	v := d.uv()
	if v > uint64(int(^uint(0)>>1)) {
		d.Fail("%d does not fit an int", v)
		return 0
	}
	return int(v)
}

// count reads a record count, refusing one the remaining bytes cannot
// hold at minSize bytes a record: no allocation is sized beyond the input.
func (d *tickDecoder) count(minSize int) int {
	n := d.uv()
	if n > uint64(d.Left()/minSize) {
		d.Fail("count %d exceeds what the %d bytes left can hold", n, d.Left())
		return 0
	}
	return int(n)
}

// bytes reads a str into fresh memory (nil when empty).
func (d *tickDecoder) bytes() []byte {
	n := d.uv()
	if n > uint64(d.Left()) {
		d.Fail("truncated string: %d bytes wanted, %d left", n, d.Left())
		return nil
	}
	if n == 0 {
		return nil
	}
	return append([]byte(nil), d.Take(int(n))...)
}

func (d *tickDecoder) str() string {
	n := d.uv()
	if n > uint64(d.Left()) {
		d.Fail("truncated string: %d bytes wanted, %d left", n, d.Left())
		return ""
	}
	return string(d.Take(int(n)))
}

func (d *tickDecoder) tick() *Tick {
	if v := d.U8(); d.Err == nil && v != Version {
		d.Fail("version %d, want %d", v, Version)
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
		t.Markets = make([]marketdata.Market, n)
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

func (d *tickDecoder) trigger(t *marketdata.Trigger) {
	in := &t.Info
	d.hash(&in.ID)
	d.hash(&in.Book)
	d.addr(&in.Owner)
	d.addr(&in.Signer)
	in.Nonce = d.uv()
	in.Side = clob.Side(d.enum("side", byte(clob.Sell)))
	d.U256Compact(&in.Size)
	d.U256Compact(&in.LimitPrice)
	d.U256Compact(&in.TriggerPrice)
	in.TriggerType = d.oneOf("trigger type", marketdata.ValidTriggerType)
	in.Grouping = d.oneOf("trigger grouping", marketdata.ValidGrouping)
	in.Flags = d.flags(clob.FlagsKnown)
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
	d.U256Compact(&v.Abs)
	d.present(v.Neg && v.Abs.IsZero(), "negative zero")
}

func (d *tickDecoder) event(e *clob.Event) {
	kind := d.U8()
	if d.Err == nil && (kind < byte(clob.EventPlaced) || kind > byte(clob.EventMarginCancel)) {
		d.Fail("event kind %d", kind)
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
	d.U256Compact(&e.Base)
	d.U256Compact(&e.Quote)
	d.U256Compact(&e.Fee)
	d.U256Compact(&e.TotalBase)
	d.U256Compact(&e.TotalQuote)
	d.U256Compact(&e.TotalFee)
	if flags&evToken != 0 {
		d.addr(&e.Token)
		d.present(e.Token == clob.Address{}, "event token")
	}
	if flags&evTo != 0 {
		d.addr(&e.To)
		d.present(e.To == clob.Address{}, "event recipient")
	}
	d.U256Compact(&e.Amount)
	if flags&evPerp != 0 {
		d.s256(&e.Position)
		d.s256(&e.Realized)
		d.U256Compact(&e.Price)
		d.present(e.Position.Abs.IsZero() && e.Realized.Abs.IsZero() && e.Price.IsZero(), "event perp fields")
	}
}

// present refuses a field flagged present whose value is zero: AppendTick
// leaves zero fields out.
func (d *tickDecoder) present(zero bool, what string) {
	if zero && d.Err == nil {
		d.Fail("%s flagged present but zero", what)
	}
}

func (d *tickDecoder) book(bt *clob.BookTick, bu *BookUpdate) {
	d.hash(&bt.Book)
	flags := d.flags(btKnown)
	bt.HasPrice, bt.Traded = flags&btHasPrice != 0, flags&btTraded != 0
	d.U256Compact(&bt.Price)
	d.U256Compact(&bt.VolumeBase)
	d.U256Compact(&bt.VolumeQuote)
	bt.NewOrders = d.int()
	bt.FirstEvent = d.index()
	bt.EndEvent = d.index()
	bu.Kind = clob.MarketKind(d.enum("market kind", byte(clob.Perp)))
	s := &bu.Snapshot
	d.hash(&s.Book)
	s.Buys = d.levels()
	s.Sells = d.levels()
	d.U256Compact(&s.ClearingPrice)
	d.U256Compact(&s.GroupingPrice)
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
			d.U256Compact(&m.Price)
			d.U256Compact(&m.Size)
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
		d.U256Compact(&ls[i].Price)
		d.U256Compact(&ls[i].Volume)
		ls[i].Orders = d.int()
	}
	return ls
}

func (d *tickDecoder) metas() []marketdata.OrderMeta {
	n := d.count(metaSizeMin)
	if n == 0 {
		return nil
	}
	ms := make([]marketdata.OrderMeta, n)
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
		m.Flags = d.flags(clob.FlagsKnown)
		d.U256Compact(&m.Price)
		d.U256Compact(&m.Size)
		m.DeadlineUs = d.vi()
		m.TTLUs = d.vi()
		m.AdmittedUs = d.vi()
		if flags&metaTriggered != 0 {
			m.Kind = marketdata.KindTriggered
			m.TriggerType = d.oneOf("trigger type", marketdata.ValidTriggerType)
			m.Grouping = d.oneOf("trigger grouping", marketdata.ValidGrouping)
			if m.TxHash != (clob.Hash{}) && d.Err == nil {
				d.Fail("triggered order %x with a transaction hash", m.ID) // marketdata.AdmittedTrigger drops it
			}
		}
	}
	return ms
}

func (d *tickDecoder) market(m *marketdata.Market) {
	c := m.Config
	d.hash(&c.ID)
	c.Name = d.str()
	c.BaseSymbol = d.str()
	c.QuoteSymbol = d.str()
	c.Kind = clob.MarketKind(d.enum("market kind", byte(clob.Perp)))
	d.addr(&c.Base)
	d.addr(&c.Quote)
	c.IntervalUs = d.vi()
	d.U256Compact(&c.TickPrecision)
	d.U256Compact(&c.LotSize)
	d.U256Compact(&c.MakerFee)
	d.U256Compact(&c.TakerFee)
	d.U256Compact(&m.LastPrice)
	m.HasPrice = d.flags(hasOne) != 0
	d.U256Compact(&m.Volume24h)
	d.U256Compact(&m.High24h)
	d.U256Compact(&m.Low24h)
	m.Change24hBps = d.vi()
	if c.Kind != clob.Perp {
		return
	}
	pp := &c.Perp
	lev := d.uv()
	if lev > uint64(^uint32(0)) {
		d.Fail("max leverage %d above 32 bits", lev)
	}
	pp.MaxLeverage = uint32(lev)
	for _, v := range [...]*uint256.Int{&pp.InterestRate, &pp.MaxFundingRate, &pp.MaxPremium, &pp.MarkClamp, &pp.OraclePrice} {
		d.U256Compact(v)
	}
	bps := d.uv()
	if bps > uint64(^uint32(0)) {
		d.Fail("walk bps %d above 32 bits", bps)
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
	d.U256Compact(&s.Oracle)
	d.U256Compact(&s.Mark)
	d.s256(&s.FundingRate)
	d.s256(&s.FundingIndex)
	s.FundingLastUs = d.vi()
	d.U256Compact(&s.OpenInterest)
	s.WalkFrozen = d.flags(hasOne) != 0
}

func (d *tickDecoder) perpPosition(p *marketdata.PerpPosition) {
	d.hash(&p.Book)
	d.addr(&p.Owner)
	p.BaseSymbol = d.str()
	p.QuoteSymbol = d.str()
	d.s256(&p.Size)
	d.s256(&p.Cost)
	d.U256Compact(&p.EntryPrice)
	d.U256Compact(&p.Mark)
	d.U256Compact(&p.Notional)
	d.s256(&p.Unrealized)
	d.s256(&p.Realized)
	d.s256(&p.Funding)
	d.U256Compact(&p.InitialMargin)
	d.U256Compact(&p.Maintenance)
	d.U256Compact(&p.Liquidation)
	p.OpenedTickUs = d.vi()
	d.s256(&p.EntryFundingIx)
}

func (d *tickDecoder) margin(m *clob.MarginInfo) {
	d.addr(&m.Owner)
	for _, v := range [...]*clob.Signed{&m.Cash, &m.Equity, &m.Unrealized, &m.Realized} {
		d.s256(v)
	}
	for _, v := range [...]*uint256.Int{&m.Notional, &m.InitialMargin, &m.Maintenance, &m.OrderMargin, &m.Withdrawable} {
		d.U256Compact(v)
	}
	m.Positions = d.int()
}

func (d *tickDecoder) position(p *marketdata.Position) {
	d.hash(&p.Book)
	p.BaseSymbol = d.str()
	p.QuoteSymbol = d.str()
	p.HasMark = d.flags(hasOne) != 0
	d.U256Compact(&p.Balance)
	d.U256Compact(&p.Free)
	d.U256Compact(&p.Locked)
	d.U256Compact(&p.MarkPrice)
}
