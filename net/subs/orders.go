package subs

import (
	"slices"
	"strconv"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/codec/obwire"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
)

// The order channels' payloads of one book in one tick, for one account
// filter (accts sorted; empty = every account).

// accountFilter answers "does this owner belong to the subscription".
type accountFilter []clob.Address

func (f accountFilter) has(a clob.Address) bool {
	if len(f) == 0 {
		return true
	}
	_, ok := slices.BinarySearchFunc(f, a, compareAddress)
	return ok
}

// createdIndex returns the index of id in b.upd.Created, or -1.
func (b *bookRec) createdIndex(id clob.Hash) int {
	if b.created == nil {
		b.created = make(map[clob.Hash]int32, len(b.upd.Created))
		for i := range b.upd.Created {
			b.created[b.upd.Created[i].ID] = int32(i)
		}
	}
	if i, ok := b.created[id]; ok {
		return int(i)
	}
	return -1
}

func (b *bookRec) touched(id clob.Hash) *marketdata.OrderMeta {
	if i := b.createdIndex(id); i >= 0 {
		return &b.upd.Created[i]
	}
	for i := range b.upd.Touched {
		if b.upd.Touched[i].ID == id {
			return &b.upd.Touched[i]
		}
	}
	return nil
}

func (b *bookRec) modification(id clob.Hash) *tickrec.Modification {
	for i := range b.upd.Modified {
		if b.upd.Modified[i].OrderID == id {
			return &b.upd.Modified[i]
		}
	}
	return nil
}

// appendOrdersV2 appends one OrdersFrameV2, or nothing (dst unchanged) when
// no order or event of the book passes the filter:
//
//	{"book":"0x…","batch":T[,"accts":["0x…",…]],"orders":[entity…],"events":[event…]}
//	entity: {"id","tx"[,"a"],"n","px","sz"[,"end"][,"type":"market"][,"reduce_only":true][,"ioc":true][,"post_only":true]
//	         [,"kind":"triggered","trigger":"stop_loss"|"take_profit"[,"grouping":"asset"]]}
//	event:  {"k", "o"|"id"[,"a"], kind fields}
//
// Amounts are decimal strings (sz signed: "-" for sells), batch/n/end
// integers, as the live network's frames. accts and every a are left out
// when single (the subscription names exactly one account). A triggered
// order's tx is zero (engine-made: marketdata.AdmittedTrigger drops the
// trigger's transaction), its trigger and grouping are named by
// obwire.TriggerTypeName and obwire.AppendGrouping, as in ob_getOrders.
func (b *bookRec) appendOrdersV2(dst []byte, tickUs int64, f accountFilter, single bool, sc *scratch) []byte {
	sc.reset()
	for i := range b.upd.Created {
		m := &b.upd.Created[i]
		if f.has(m.Owner) {
			sc.orderSlot = append(sc.orderSlot, int32(len(sc.orders)))
			sc.orders = append(sc.orders, int32(i))
			sc.intern(m.Owner)
		} else {
			sc.orderSlot = append(sc.orderSlot, -1)
		}
	}
	for i := range b.events {
		e := &b.events[i]
		if e.Kind != clob.EventTransfer && f.has(e.Owner) {
			sc.events = append(sc.events, int32(i))
			sc.intern(e.Owner)
		}
	}
	if len(sc.orders) == 0 && len(sc.events) == 0 {
		return dst
	}
	dst = append(dst, `{"book":`...)
	dst = jsonrpc.AppendData(dst, b.id[:])
	dst = append(dst, `,"batch":`...)
	dst = strconv.AppendInt(dst, tickUs, 10)
	if !single {
		dst = append(dst, `,"accts":[`...)
		for i := range sc.accts {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonrpc.AppendData(dst, sc.accts[i][:])
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"orders":[`...)
	for i, ci := range sc.orders {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendEntityV2(dst, tickUs, &b.upd.Created[ci], sc, single)
	}
	dst = append(dst, `],"events":[`...)
	for i, ei := range sc.events {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = b.appendEventV2(dst, &b.events[ei], sc, single)
	}
	return append(dst, "]}"...)
}

func appendEntityV2(dst []byte, tickUs int64, m *marketdata.OrderMeta, sc *scratch, single bool) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonrpc.AppendData(dst, m.ID[:])
	dst = append(dst, `,"tx":`...)
	dst = jsonrpc.AppendData(dst, m.TxHash[:])
	if !single {
		dst = append(dst, `,"a":`...)
		dst = strconv.AppendInt(dst, int64(sc.acctIndex(m.Owner)), 10)
	}
	dst = append(dst, `,"n":`...)
	dst = strconv.AppendUint(dst, m.Nonce, 10)
	dst = append(dst, `,"px":`...)
	dst = appendDecimal(dst, &m.Price)
	dst = append(dst, `,"sz":`...)
	dst = obwire.AppendSignedDecimal(dst, &m.Size, m.Side == clob.Sell)
	if m.TTLUs > 0 {
		dst = append(dst, `,"end":`...)
		dst = strconv.AppendInt(dst, tickUs+m.TTLUs, 10)
	}
	if m.Type == clob.Market {
		dst = append(dst, `,"type":"market"`...)
	}
	if m.Flags&clob.FlagReduceOnly != 0 {
		dst = append(dst, `,"reduce_only":true`...)
	}
	if m.Flags&clob.FlagIOC != 0 {
		dst = append(dst, `,"ioc":true`...)
	}
	if m.Flags&clob.FlagPostOnly != 0 {
		dst = append(dst, `,"post_only":true`...)
	}
	if m.Kind != marketdata.KindUserSigned { // omitted means user-signed
		dst = append(dst, `,"kind":"`...)
		dst = append(dst, m.Kind.String()...)
		dst = append(dst, `","trigger":"`...)
		dst = append(dst, obwire.TriggerTypeName(m.TriggerType)...)
		dst = append(dst, '"')
		dst = obwire.AppendGrouping(dst, m.Grouping)
	}
	return append(dst, '}')
}

func eventKindV2(k clob.EventKind) string {
	switch k {
	case clob.EventPlaced:
		return "new"
	case clob.EventFill:
		return "fill"
	case clob.EventCancel, clob.EventPostOnlyRefused, clob.EventMarginCancel:
		return "cancel"
	case clob.EventExpire:
		return "expire"
	case clob.EventUpdate:
		return "modify"
	case clob.EventLiquidation:
		return "liquidation"
	case clob.EventTriggerFired:
		return "trigger_fired"
	case clob.EventTriggerCancel:
		return "trigger_cancel"
	}
	return "unknown"
}

// perpOnly reports the event kinds that only svc_orders_v2 carries (its
// event kinds are open; svc_orders' OrderUpdate union is not).
func perpOnly(k clob.EventKind) bool {
	return k == clob.EventLiquidation || k == clob.EventTriggerFired || k == clob.EventTriggerCancel
}

func (b *bookRec) appendEventV2(dst []byte, e *clob.Event, sc *scratch, single bool) []byte {
	dst = append(dst, `{"k":"`...)
	dst = append(dst, eventKindV2(e.Kind)...)
	dst = append(dst, '"')
	// Exactly one of o (created in this tick, listed in orders) or id.
	if ci := b.createdIndex(e.OrderID); ci >= 0 && sc.orderSlot[ci] >= 0 {
		dst = append(dst, `,"o":`...)
		dst = strconv.AppendInt(dst, int64(sc.orderSlot[ci]), 10)
	} else {
		dst = append(dst, `,"id":`...)
		dst = jsonrpc.AppendData(dst, e.OrderID[:])
	}
	if !single {
		dst = append(dst, `,"a":`...)
		dst = strconv.AppendInt(dst, int64(sc.acctIndex(e.Owner)), 10)
	}
	switch e.Kind {
	case clob.EventFill:
		dst = append(dst, `,"b":`...)
		dst = appendDecimal(dst, &e.Base)
		dst = append(dst, `,"q":`...)
		dst = appendDecimal(dst, &e.Quote)
		dst = appendTotalsV2(dst, e)
		if e.Terminal {
			dst = append(dst, `,"st":"filled"`...)
		}
		if b.upd.Kind == clob.Perp {
			dst = append(dst, `,"pa":`...)
			dst = obwire.AppendSignedDecimal(dst, &e.Position.Abs, e.Position.Neg)
		}
	case clob.EventLiquidation:
		dst = append(dst, `,"sz":`...)
		dst = obwire.AppendSignedDecimal(dst, &e.Position.Abs, e.Position.Neg)
		dst = append(dst, `,"px":`...)
		dst = appendDecimal(dst, &e.Price)
	case clob.EventTriggerFired:
		dst = append(dst, `,"px":`...)
		dst = appendDecimal(dst, &e.Price)
	case clob.EventCancel, clob.EventExpire, clob.EventMarginCancel:
		dst = appendTotalsV2(dst, e)
	case clob.EventPostOnlyRefused: // the one engine removal that carries st
		dst = appendTotalsV2(dst, e)
		dst = append(dst, `,"st":"post_only_refused"`...)
	case clob.EventUpdate:
		if m := b.modification(e.OrderID); m != nil {
			dst = append(dst, `,"px":`...)
			dst = appendDecimal(dst, &m.Price)
			dst = append(dst, `,"sz":`...)
			dst = appendDecimal(dst, &m.Size)
		}
	}
	return append(dst, '}')
}

func appendTotalsV2(dst []byte, e *clob.Event) []byte {
	dst = append(dst, `,"tb":`...)
	dst = appendDecimal(dst, &e.TotalBase)
	dst = append(dst, `,"tq":`...)
	dst = appendDecimal(dst, &e.TotalQuote)
	dst = append(dst, `,"tf":`...)
	return appendDecimal(dst, &e.TotalFee)
}

// appendOrdersV1 appends one svc_orders notification, the array of
// OrderUpdate of one book in one tick, or nothing when no event passes:
//
//	new:         {"type":"new",<ob_getOrders order fields>} ("invalid" is
//	             never sent: a refused intent creates no order)
//	fill:        {"type":"fill","orderbook_id","order_id"[,"tx_hash"],"bidder","status",
//	              "base_amount","quote_amount","filled_base_amount","filled_quote_amount",
//	              "effective_price","fee"}
//	expired / canceled: {"type":…,"order_id"} (canceled: every removal
//	             but an expiry, post-only refusals and margin cancels included:
//	             this variant has no status, as on the live network)
//	modified:    {"type":"modified","order_id","new_price","new_size"}
//
// Amounts are hex quantities, as ob_getOrders.
func (b *bookRec) appendOrdersV1(dst []byte, tickUs int64, f accountFilter) []byte {
	start := len(dst)
	dst = append(dst, '[')
	for i := range b.events {
		e := &b.events[i]
		if e.Kind == clob.EventTransfer || perpOnly(e.Kind) || !f.has(e.Owner) {
			continue
		}
		if len(dst) > start+1 {
			dst = append(dst, ',')
		}
		dst = b.appendUpdateV1(dst, tickUs, e)
	}
	if len(dst) == start+1 {
		return dst[:start]
	}
	return append(dst, ']')
}

func (b *bookRec) appendUpdateV1(dst []byte, tickUs int64, e *clob.Event) []byte {
	switch e.Kind {
	case clob.EventPlaced:
		return b.appendNewV1(dst, tickUs, e)
	case clob.EventFill:
		return b.appendFillV1(dst, e)
	case clob.EventUpdate:
		dst = append(dst, `{"type":"modified","order_id":`...)
		dst = jsonrpc.AppendData(dst, e.OrderID[:])
		if m := b.modification(e.OrderID); m != nil {
			dst = append(dst, `,"new_price":`...)
			dst = jsonrpc.AppendQuantityU256(dst, &m.Price)
			dst = append(dst, `,"new_size":`...)
			dst = jsonrpc.AppendQuantityU256(dst, &m.Size)
		}
		return append(dst, '}')
	case clob.EventExpire:
		dst = append(dst, `{"type":"expired","order_id":`...)
	default:
		dst = append(dst, `{"type":"canceled","order_id":`...)
	}
	dst = jsonrpc.AppendData(dst, e.OrderID[:])
	return append(dst, '}')
}

// appendNewV1 writes a "new" update: the type, then the ob_getOrders
// order object of the active order without its opening brace.
func (b *bookRec) appendNewV1(dst []byte, tickUs int64, e *clob.Event) []byte {
	dst = append(dst, `{"type":"new",`...)
	m := b.touched(e.OrderID)
	if m == nil {
		dst = append(dst, `"order_id":`...)
		dst = jsonrpc.AppendData(dst, e.OrderID[:])
		return append(dst, '}')
	}
	o := marketdata.Order{Meta: *m, MarketKind: b.upd.Kind, Status: marketdata.StatusActive, Price: m.Price}
	if m.TTLUs > 0 {
		o.EndUs = tickUs + m.TTLUs
	}
	at := len(dst)
	dst = obwire.AppendOrder(dst, &o, false)
	n := copy(dst[at:], dst[at+1:])
	return dst[:at+n]
}

func (b *bookRec) appendFillV1(dst []byte, e *clob.Event) []byte {
	dst = append(dst, `{"type":"fill","orderbook_id":`...)
	dst = jsonrpc.AppendData(dst, b.id[:])
	dst = append(dst, `,"order_id":`...)
	dst = jsonrpc.AppendData(dst, e.OrderID[:])
	if m := b.touched(e.OrderID); m != nil {
		dst = append(dst, `,"tx_hash":`...)
		dst = jsonrpc.AppendData(dst, m.TxHash[:])
	}
	dst = append(dst, `,"bidder":`...)
	dst = jsonrpc.AppendData(dst, e.Owner[:])
	if e.Terminal {
		dst = append(dst, `,"status":"filled"`...)
	} else {
		dst = append(dst, `,"status":"active"`...)
	}
	dst = append(dst, `,"base_amount":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &e.Base)
	dst = append(dst, `,"quote_amount":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &e.Quote)
	dst = append(dst, `,"filled_base_amount":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &e.TotalBase)
	dst = append(dst, `,"filled_quote_amount":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &e.TotalQuote)
	var p uint256.Int
	if _, overflow := p.MulDivOverflow(&e.TotalQuote, wad, &e.TotalBase); overflow {
		p.SetAllOne()
	}
	dst = append(dst, `,"effective_price":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &p)
	dst = append(dst, `,"fee":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &e.TotalFee)
	if b.upd.Kind == clob.Perp {
		before := marketdata.PositionBefore(e.Side, &e.Base, e.Position)
		dst = append(dst, `,"position_before":`...)
		dst = obwire.AppendSignedDecimal(dst, &before.Abs, before.Neg)
		dst = append(dst, `,"position_after":`...)
		dst = obwire.AppendSignedDecimal(dst, &e.Position.Abs, e.Position.Neg)
	}
	return append(dst, '}')
}

var wad = uint256.NewInt(1_000_000_000_000_000_000)

// scratch is the v2 encoder's working memory, reused across encodings
// (guarded by Hub.mu).
type scratch struct {
	orders    []int32 // indexes into Created of the listed orders
	orderSlot []int32 // per Created entry: its index in orders, or -1
	events    []int32
	accts     []clob.Address // owners in order of first appearance
}

func (sc *scratch) reset() {
	sc.orders, sc.orderSlot, sc.events, sc.accts = sc.orders[:0], sc.orderSlot[:0], sc.events[:0], sc.accts[:0]
}

func (sc *scratch) intern(a clob.Address) {
	if sc.acctIndex(a) < 0 {
		sc.accts = append(sc.accts, a)
	}
}

func (sc *scratch) acctIndex(a clob.Address) int {
	for i := range sc.accts {
		if sc.accts[i] == a {
			return i
		}
	}
	return -1
}
