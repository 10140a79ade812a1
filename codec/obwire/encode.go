package obwire

import (
	"strconv"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
)

// JSON encoders of the ob_ results. Each appends one JSON value to dst and
// returns the extended slice; none uses reflection or encoding/json. uint256
// amounts are hex quantities ("0x0" for zero) unless the openapi shows a
// decimal string (order sizes, book level keys).

// AppendMarkets appends the ob_getMarkets array.
func AppendMarkets(dst []byte, ms []marketdata.Market) []byte {
	dst = append(dst, '[')
	for i := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendMarket(dst, &ms[i])
	}
	return append(dst, ']')
}

func appendMarket(dst []byte, m *marketdata.Market) []byte {
	c := m.Config
	dst = appendMarketIdentity(dst, c)
	dst = append(dst, `,"market_type":`...)
	dst = appendMarketType(dst, c.Kind)
	dst = appendU256Field(dst, `,"last_clearing_price":`, &m.LastPrice)
	dst = append(dst, `,"auction_interval":`...)
	dst = strconv.AppendInt(dst, c.IntervalUs, 10)
	dst = appendU256Field(dst, `,"volume_24h":`, &m.Volume24h)
	dst = appendU256Field(dst, `,"high_24h":`, &m.High24h)
	dst = appendU256Field(dst, `,"low_24h":`, &m.Low24h)
	dst = append(dst, `,"price_change_24h":`...)
	dst = strconv.AppendInt(dst, m.Change24hBps, 10)
	dst = appendU256Field(dst, `,"maker_fee":`, &c.MakerFee)
	dst = appendU256Field(dst, `,"taker_fee":`, &c.TakerFee)
	dst = appendU256Field(dst, `,"tick_precision":`, &c.TickPrecision)
	dst = appendU256Field(dst, `,"lot_size":`, &c.LotSize)
	return append(appendMarketPerp(dst, m), '}')
}

// appendMarketIdentity opens a market object with its members from id to
// quote_token_name, shared by ob_getMarkets and GET /v1/clob/markets.
func appendMarketIdentity(dst []byte, c *clob.MarketConfig) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonrpc.AppendData(dst, c.ID[:])
	dst = append(dst, `,"name":`...)
	dst = jsonrpc.AppendString(dst, c.Name)
	dst = append(dst, `,"base_token_address":`...)
	dst = jsonrpc.AppendData(dst, c.Base[:])
	dst = append(dst, `,"quote_token_address":`...)
	dst = jsonrpc.AppendData(dst, c.Quote[:])
	dst = append(dst, `,"base_token_symbol":`...)
	dst = jsonrpc.AppendString(dst, c.BaseSymbol)
	dst = append(dst, `,"quote_token_symbol":`...)
	dst = jsonrpc.AppendString(dst, c.QuoteSymbol)
	// The configuration carries no token names: the symbols stand in.
	dst = append(dst, `,"base_token_name":`...)
	dst = jsonrpc.AppendString(dst, c.BaseSymbol)
	dst = append(dst, `,"quote_token_name":`...)
	return jsonrpc.AppendString(dst, c.QuoteSymbol)
}

func appendMarketType(dst []byte, k clob.MarketKind) []byte {
	if k == clob.Perp {
		return append(dst, `"perpetual"`...)
	}
	return append(dst, `"spot"`...)
}

// AppendOrderbook appends the ob_getOrderbook object. Levels are keyed by
// their price as a decimal string, buys best (highest) first and sells best
// (lowest) first, as the openapi example writes them.
func AppendOrderbook(dst []byte, s *marketdata.Snapshot) []byte {
	return appendOrderbook(dst, s, RPC)
}

func appendOrderbook(dst []byte, s *marketdata.Snapshot, w Dialect) []byte {
	dst = append(dst, `{"orderbook_id":`...)
	dst = jsonrpc.AppendData(dst, s.Book[:])
	dst = append(dst, `,"buys":`...)
	dst = appendLevels(dst, s.Buys, w)
	dst = append(dst, `,"sells":`...)
	dst = appendLevels(dst, s.Sells, w)
	dst = w.field(dst, `,"clearing_price":`, &s.ClearingPrice)
	dst = w.field(dst, `,"grouping_precision":`, &s.GroupingPrice)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, s.TimestampUs, 10)
	dst = append(dst, `,"new_orders_count":`...)
	dst = strconv.AppendInt(dst, int64(s.NewOrdersCount), 10)
	dst = append(dst, `,"buys_count":`...)
	dst = strconv.AppendInt(dst, int64(s.BuysCount), 10)
	dst = append(dst, `,"sells_count":`...)
	dst = strconv.AppendInt(dst, int64(s.SellsCount), 10)
	return append(appendOrderbookPerp(dst, s, w), '}')
}

func appendLevels(dst []byte, levels []clob.Level, w Dialect) []byte {
	dst = append(dst, '{')
	for i := range levels {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = jsonrpc.AppendDecimalU256(dst, &levels[i].Price)
		dst = w.field(dst, `":{"volume":`, &levels[i].Volume)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// AppendOrders appends the ob_getOrders object: orders, total_count (only
// when the query asked with_total) and next_cursor (null on the last page).
func AppendOrders(dst []byte, p *marketdata.OrdersPage) []byte {
	return append(appendOrdersPage(dst, p, RPC), '}')
}

// appendOrdersPage opens an orders page object with orders, total_count
// (only when the query asked with_total) and next_cursor.
func appendOrdersPage(dst []byte, p *marketdata.OrdersPage, w Dialect) []byte {
	dst = append(dst, `{"orders":[`...)
	for i, o := range p.Orders {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendOrder(dst, o, p.WithFills, w)
	}
	dst = append(dst, ']')
	if p.WithTotal {
		dst = append(dst, `,"total_count":`...)
		dst = strconv.AppendInt(dst, int64(p.Total), 10)
	}
	dst = append(dst, `,"next_cursor":`...)
	if !p.HasNext {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = AppendCursor(dst, &p.Next)
	return append(dst, '"')
}

// AppendCursor appends the cursor's wire text (unquoted):
// "{ts}:{nonce}:{order_id_hex}", the id as 64 lowercase hex digits without 0x.
func AppendCursor(dst []byte, c *marketdata.Cursor) []byte {
	dst = strconv.AppendInt(dst, c.TsUs, 10)
	dst = append(dst, ':')
	dst = strconv.AppendUint(dst, c.Nonce, 10)
	dst = append(dst, ':')
	for _, b := range c.ID {
		dst = append(dst, hexDigits[b>>4], hexDigits[b&0xf])
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// AppendOrder appends one Order object. fills is [] unless withFills.
func AppendOrder(dst []byte, o *marketdata.Order, withFills bool) []byte {
	return appendOrder(dst, o, withFills, RPC)
}

func appendOrder(dst []byte, o *marketdata.Order, withFills bool, w Dialect) []byte {
	m := &o.Meta
	dst = append(dst, `{"orderbook_id":`...)
	dst = jsonrpc.AppendData(dst, m.Book[:])
	dst = append(dst, `,"market_type":`...)
	dst = appendMarketType(dst, o.MarketKind)
	dst = append(dst, `,"kind":"`...)
	dst = append(dst, m.Kind.String()...)
	dst = append(dst, `","order_id":`...)
	dst = jsonrpc.AppendData(dst, m.ID[:])
	dst = append(dst, `,"tx_hash":`...)
	dst = jsonrpc.AppendData(dst, m.TxHash[:])
	dst = append(dst, `,"bidder":`...)
	dst = jsonrpc.AppendData(dst, m.Owner[:])
	dst = append(dst, `,"nonce":`...)
	dst = strconv.AppendUint(dst, m.Nonce, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, m.AdmittedUs, 10)
	if m.Type == clob.Market {
		dst = append(dst, `,"order_type":"market","status":"`...)
	} else {
		dst = append(dst, `,"order_type":"limit","status":"`...)
	}
	dst = append(dst, o.Status.String()...)
	dst = append(dst, `","side":`...)
	dst = appendSide(dst, m.Side)
	dst = w.field(dst, `,"price":`, &o.Price)
	dst = append(dst, `,"initial_size":"`...)
	if m.Side == clob.Sell && !m.Size.IsZero() {
		dst = append(dst, '-')
	}
	dst = jsonrpc.AppendDecimalU256(dst, &m.Size)
	dst = append(dst, '"')
	return appendOrderTail(dst, o, withFills, w)
}

func appendOrderTail(dst []byte, o *marketdata.Order, withFills bool, w Dialect) []byte {
	m := &o.Meta
	dst = w.field(dst, `,"filled_base_amount":`, &o.FilledBase)
	dst = w.field(dst, `,"filled_quote_amount":`, &o.FilledQuote)
	dst = w.field(dst, `,"fee":`, &o.Fee)
	dst = append(dst, `,"deadline":`...)
	dst = strconv.AppendInt(dst, m.DeadlineUs, 10)
	dst = append(dst, `,"end":`...)
	dst = appendOptionalUs(dst, o.EndUs)
	if w == REST { // the tick the order entered its book (the live indexer's order history)
		dst = append(dst, `,"included_batch":`...)
		dst = appendOptionalUs(dst, o.EnteredUs)
	}
	var effective uint256.Int
	effectivePrice(&effective, &o.FilledQuote, &o.FilledBase)
	dst = w.field(dst, `,"effective_price":`, &effective)
	dst = append(dst, `,"fills":[`...)
	if withFills {
		for i := range o.Fills {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendFill(dst, &o.Fills[i], w)
		}
	}
	dst = append(dst, ']')
	if o.MarketKind == clob.Perp {
		// The openapi Order: perp-only booleans, present on every perp
		// order and omitted on spot ones.
		dst = strconv.AppendBool(append(dst, `,"reduce_only":`...), m.Flags&clob.FlagReduceOnly != 0)
		dst = strconv.AppendBool(append(dst, `,"ioc":`...), m.Flags&clob.FlagIOC != 0)
	}
	dst = append(dst, `,"direction":`...)
	dst = appendSide(dst, m.Side)
	if m.Flags&clob.FlagPostOnly != 0 {
		dst = append(dst, `,"post_only":true`...) // both kinds; omitted when false
	}
	if m.Kind == marketdata.KindTriggered {
		dst = append(dst, `,"trigger_type":"`...)
		dst = append(dst, TriggerTypeName(m.TriggerType)...)
		dst = append(dst, '"')
		dst = AppendGrouping(dst, m.Grouping)
	}
	return append(dst, '}')
}

// TriggerTypeName is the wire name of a trigger type (the openapi
// TriggerType): "take_profit" or "stop_loss".
// REQUIRES: marketdata.ValidTriggerType(t).
func TriggerTypeName(t uint8) string {
	if t == clob.TriggerTakeProfit {
		return "take_profit"
	}
	return "stop_loss"
}

// GroupingName is the wire name of a trigger grouping (the openapi
// TriggerGrouping): "none" or "asset". Every encoder names a grouping
// through it: ob_getTriggers always, an order (ob_getOrders, svc_orders,
// svc_orders_v2) through AppendGrouping.
// REQUIRES: marketdata.ValidGrouping(g).
func GroupingName(g uint8) string {
	if g == clob.GroupingAsset {
		return "asset"
	}
	return "none"
}

// AppendGrouping appends an order's `,"grouping":"<GroupingName>"`, or
// nothing for the default "none": the openapi Order omits it then.
func AppendGrouping(dst []byte, grouping uint8) []byte {
	if grouping == clob.GroupingNone {
		return dst
	}
	dst = append(dst, `,"grouping":"`...)
	dst = append(dst, GroupingName(grouping)...)
	return append(dst, '"')
}

func appendFill(dst []byte, f *marketdata.Fill, w Dialect) []byte {
	dst = w.field(dst, `{"base_amount":`, &f.Base)
	dst = w.field(dst, `,"quote_amount":`, &f.Quote)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, f.TickUs, 10)
	dst = w.field(dst, `,"price":`, &f.Price)
	return append(dst, '}')
}

func appendSide(dst []byte, s clob.Side) []byte {
	if s == clob.Sell {
		return append(dst, `"sell"`...)
	}
	return append(dst, `"buy"`...)
}

var wad = uint256.NewInt(1_000_000_000_000_000_000)

// effectivePrice sets z to quote × 1e18 / base, rounded down; zero when
// nothing filled.
func effectivePrice(z, quote, base *uint256.Int) {
	if _, overflow := z.MulDivOverflow(quote, wad, base); overflow {
		z.SetAllOne()
	}
}

// AppendCandles appends the ob_getCandles array.
func AppendCandles(dst []byte, cs []marketdata.Candle) []byte {
	dst = append(dst, '[')
	for i := range cs {
		c := &cs[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendCandle(dst, c, RPC), '}')
	}
	return append(dst, ']')
}

// appendCandle opens a candle object with its members from timestamp to
// volume.
func appendCandle(dst []byte, c *marketdata.Candle, w Dialect) []byte {
	dst = append(dst, `{"timestamp":`...)
	dst = strconv.AppendInt(dst, c.StartUs, 10)
	dst = w.field(dst, `,"open":`, &c.Open)
	dst = w.field(dst, `,"close":`, &c.Close)
	dst = w.field(dst, `,"high":`, &c.High)
	dst = w.field(dst, `,"low":`, &c.Low)
	return w.field(dst, `,"volume":`, &c.Volume)
}

// AppendPositions appends the ob_getPositions object: spot holdings, then
// perp positions, then the account totals (null without a margin summary).
// The index sees neither deposits nor withdrawals, so a spot holding's cost
// basis and PnL, and net_deposits, are null rather than guessed.
func AppendPositions(dst []byte, d *marketdata.PositionsData) []byte {
	dst = append(dst, `{"positions":[`...)
	for i := range d.Spot {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendSpotHolding(append(dst, `{"kind":"spot",`...), &d.Spot[i], RPC)
	}
	for i := range d.Perps {
		if i > 0 || len(d.Spot) > 0 {
			dst = append(dst, ',')
		}
		dst = appendPerpPosition(dst, &d.Perps[i], RPC)
	}
	dst = append(dst, ']')
	return append(appendAccountTotals(dst, d, RPC), '}')
}

// appendSpotHolding appends a spot holding's members from orderbook_id on
// and closes its object (the caller opened it).
func appendSpotHolding(dst []byte, p *marketdata.Position, w Dialect) []byte {
	dst = append(dst, `"orderbook_id":`...)
	dst = jsonrpc.AppendData(dst, p.Book[:])
	dst = append(dst, `,"base_symbol":`...)
	dst = jsonrpc.AppendString(dst, p.BaseSymbol)
	dst = append(dst, `,"quote_symbol":`...)
	dst = jsonrpc.AppendString(dst, p.QuoteSymbol)
	dst = w.field(dst, `,"balance":`, &p.Balance)
	dst = w.field(dst, `,"free_balance":`, &p.Free)
	dst = w.field(dst, `,"locked_balance":`, &p.Locked)
	dst = append(dst, `,"cost_basis":null,"mark_price":`...)
	if p.HasMark {
		dst = w.appendU256(dst, &p.MarkPrice)
	} else {
		dst = append(dst, "null"...)
	}
	return append(dst, `,"unrealized_pnl":null,"realized_pnl":null}`...)
}

func appendU256Field(dst []byte, key string, v *uint256.Int) []byte {
	return RPC.field(dst, key, v)
}
