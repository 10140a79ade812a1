package obwire

import (
	"bytes"
	"strconv"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/valyala/fastjson"
)

var (
	errTriggersQuery  = jsonrpc.InvalidParams("triggers query: want an object")
	errTriggersBook   = jsonrpc.InvalidParams("orderbook_id: want 0x followed by 64 hex digits")
	errTriggersLimit  = jsonrpc.InvalidParams("limit: want an integer of at least 1")
	errTriggersCursor = jsonrpc.InvalidParams(`cursor: want "{orderbook_id}:{order_id}" as returned in next_cursor`)
	errRankedLimit    = jsonrpc.InvalidParams("limit: want an integer of at least 1, or null")
	errRankedOffset   = jsonrpc.InvalidParams("offset: want a non-negative integer, or null")
	errRankedAddress  = jsonrpc.InvalidParams("address: want 0x followed by 40 hex digits, or null")
)

// ParseTriggersQuery decodes ob_getTriggers' optional query object; the
// limit is clamped to [1, TriggersLimitMax] and defaults to the maximum.
func ParseTriggersQuery(v *fastjson.Value) (marketdata.TriggersQuery, *jsonrpc.Error) {
	q := marketdata.TriggersQuery{Limit: marketdata.TriggersLimitMax}
	if ok, err := queryObject(v, errTriggersQuery, "triggers query", triggersMembers); !ok {
		return q, err
	}
	if f := v.Get("orderbook_id"); !absent(f) {
		var err *jsonrpc.Error
		if q.Book, err = ParseOrderbookID(f); err != nil {
			return q, errTriggersBook
		}
		q.HasBook = true
	}
	if f := v.Get("limit"); !absent(f) {
		n, err := jsonrpc.ParseQuantity(f)
		if err != nil || n < 1 {
			return q, errTriggersLimit
		}
		q.Limit = int(min(n, marketdata.TriggersLimitMax))
	}
	if f := v.Get("cursor"); !absent(f) {
		s, err := f.StringBytes()
		if err != nil || !parseTriggerCursor(&q.Cursor, s) {
			return q, errTriggersCursor
		}
		q.HasCursor = true
	}
	return q, nil
}

// ParseTriggerCursor decodes a trigger cursor's wire text
// "{orderbook_id}:{order_id}" (AppendTriggerCursor), 0x before each id or
// not.
func ParseTriggerCursor(s []byte) (marketdata.TriggerCursor, bool) {
	var c marketdata.TriggerCursor
	ok := parseTriggerCursor(&c, s)
	return c, ok
}

func parseTriggerCursor(c *marketdata.TriggerCursor, s []byte) bool {
	i := bytes.IndexByte(s, ':')
	return i >= 0 && parseHash32(&c.Book, s[:i]) && parseHash32(&c.ID, s[i+1:])
}

// ParseRankedQuery decodes ob_getRankedPositions' three optional positional
// parameters; null counts as absent.
func ParseRankedQuery(limit, offset, account *fastjson.Value) (marketdata.RankedQuery, *jsonrpc.Error) {
	q := marketdata.RankedQuery{Limit: marketdata.RankedLimitDefault}
	if !absent(limit) {
		n, err := jsonrpc.ParseQuantity(limit)
		if err != nil || n < 1 {
			return q, errRankedLimit
		}
		q.Limit = int(min(n, marketdata.RankedLimitMax))
	}
	if !absent(offset) {
		n, err := jsonrpc.ParseQuantity(offset)
		if err != nil {
			return q, errRankedOffset
		}
		q.Offset = int(min(n, 1<<40))
	}
	if !absent(account) {
		a, err := jsonrpc.ParseAddress(account)
		if err != nil {
			return q, errRankedAddress
		}
		q.Account, q.HasAccount = clob.Address(a), true
	}
	return q, nil
}

// AppendRanked appends the ob_getRankedPositions object.
func AppendRanked(dst []byte, p *marketdata.RankedPage) []byte {
	return appendRanked(dst, p, RPC)
}

func appendRanked(dst []byte, p *marketdata.RankedPage, w Dialect) []byte {
	dst = append(dst, `{"ranked":[`...)
	for i := range p.Ranked {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendRankedAccount(dst, &p.Ranked[i], false, w)
	}
	dst = append(dst, `],"total":`...)
	dst = strconv.AppendInt(dst, int64(p.Total), 10)
	dst = append(dst, `,"queried":`...)
	if p.HasQueried {
		dst = appendRankedAccount(dst, &p.Queried, true, w)
	} else {
		dst = append(dst, "null"...)
	}
	return append(dst, '}')
}

func appendRankedAccount(dst []byte, r *marketdata.RankedAccount, withRank bool, w Dialect) []byte {
	dst = append(dst, `{"account":`...)
	dst = jsonrpc.AppendData(dst, r.Account[:])
	if withRank {
		dst = append(dst, `,"rank":`...)
		dst = strconv.AppendInt(dst, int64(r.Rank), 10)
	}
	dst = append(dst, `,"positions":`...)
	if w == REST {
		dst = AppendPositionsREST(dst, &r.Positions)
	} else {
		dst = AppendPositions(dst, &r.Positions)
	}
	return append(dst, '}')
}

// AppendTriggers appends the ob_getTriggers object.
func AppendTriggers(dst []byte, p *marketdata.TriggersPage) []byte {
	return appendTriggers(dst, p, RPC)
}

func appendTriggers(dst []byte, p *marketdata.TriggersPage, w Dialect) []byte {
	dst = append(dst, `{"triggers":[`...)
	for i := range p.Triggers {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendTrigger(dst, &p.Triggers[i], w)
	}
	dst = append(dst, `],"total_count":`...)
	dst = strconv.AppendInt(dst, int64(p.Total), 10)
	dst = append(dst, `,"next_cursor":`...)
	if !p.HasNext {
		return append(dst, "null}"...)
	}
	dst = append(dst, '"')
	dst = AppendTriggerCursor(dst, &p.Next)
	return append(dst, `"}`...)
}

// AppendTriggerCursor appends the cursor's wire text (unquoted):
// "{orderbook_id}:{order_id}", each 0x and 64 lowercase hex digits.
func AppendTriggerCursor(dst []byte, c *marketdata.TriggerCursor) []byte {
	dst = appendHex32(dst, &c.Book)
	dst = append(dst, ':')
	return appendHex32(dst, &c.ID)
}

func appendHex32(dst []byte, h *clob.Hash) []byte {
	dst = append(dst, "0x"...)
	for _, b := range h {
		dst = append(dst, hexDigits[b>>4], hexDigits[b&0xf])
	}
	return dst
}

// AppendOraclePrices appends the ob_getOraclePrices array.
func AppendOraclePrices(dst []byte, ps []clob.PerpInfo) []byte {
	return appendPerpRows(dst, ps, func(dst []byte, p *clob.PerpInfo) []byte {
		dst = appendU256Field(dst, `,"oracle_price":`, &p.Oracle)
		return appendU256Field(dst, `,"mark_price":`, &p.Mark)
	})
}

// AppendFundingRates appends the ob_getFundingRates array.
func AppendFundingRates(dst []byte, ps []clob.PerpInfo) []byte {
	return appendPerpRows(dst, ps, func(dst []byte, p *clob.PerpInfo) []byte {
		dst = append(dst, `,"funding_rate":`...)
		dst = appendSigned(dst, &p.FundingRate)
		dst = append(dst, `,"funding_index":`...)
		dst = appendSigned(dst, &p.FundingIndex)
		dst = appendU256Field(dst, `,"mark_price":`, &p.Mark)
		return appendU256Field(dst, `,"oracle_price":`, &p.Oracle)
	})
}

// appendPerpRows appends an array of one object per market: its
// orderbook_id, the fields fields appends, and as_of.
func appendPerpRows(dst []byte, ps []clob.PerpInfo, fields func([]byte, *clob.PerpInfo) []byte) []byte {
	dst = append(dst, '[')
	for i := range ps {
		p := &ps[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"orderbook_id":`...)
		dst = jsonrpc.AppendData(dst, p.Book[:])
		dst = fields(dst, p)
		dst = append(dst, `,"as_of":`...)
		dst = strconv.AppendInt(dst, p.FundingLastUs, 10)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendMarketPerp appends a market's perp fields, from max_leverage on:
// the live state of a perp market, nulls (and leverage 1) otherwise.
func appendMarketPerp(dst []byte, m *marketdata.Market) []byte {
	if !m.HasPerp {
		dst = append(dst, `,"max_leverage":1,"oracle_price":null,"mark_price":null,"funding_rate":null,`...)
		return append(dst, `"funding_index":null,"funding_last_updated":null,"open_interest":null`...)
	}
	p := &m.Perp
	dst = append(dst, `,"max_leverage":`...)
	dst = strconv.AppendUint(dst, uint64(m.MaxLeverage), 10)
	dst = appendU256Field(dst, `,"oracle_price":`, &p.Oracle)
	dst = appendU256Field(dst, `,"mark_price":`, &p.Mark)
	dst = appendFunding(dst, p, `,"funding_last_updated":`)
	return appendU256Field(dst, `,"open_interest":`, &p.OpenInterest)
}

// appendOrderbookPerp appends an orderbook snapshot's perp fields.
func appendOrderbookPerp(dst []byte, s *marketdata.Snapshot, w Dialect) []byte {
	if !s.HasPerp {
		return append(dst, `,"oracle_price":null,"funding_rate":null,"funding_index":null,"funding_last_updated":null`...)
	}
	dst = w.field(dst, `,"oracle_price":`, &s.Perp.Oracle)
	return appendFunding(dst, &s.Perp, `,"funding_last_updated":`)
}

// appendFunding appends funding_rate, funding_index and, under lastKey,
// the time of the last accrual (null before the first).
func appendFunding(dst []byte, p *clob.PerpInfo, lastKey string) []byte {
	dst = append(dst, `,"funding_rate":`...)
	dst = appendSigned(dst, &p.FundingRate)
	dst = append(dst, `,"funding_index":`...)
	dst = appendSigned(dst, &p.FundingIndex)
	dst = append(dst, lastKey...)
	return appendOptionalUs(dst, p.FundingLastUs)
}

// appendOptionalUs appends a time in µs, or null for 0 (not yet, or never).
func appendOptionalUs(dst []byte, us int64) []byte {
	if us <= 0 {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, us, 10)
}

// appendPerpPosition appends one PerpPosition object.
func appendPerpPosition(dst []byte, p *marketdata.PerpPosition, w Dialect) []byte {
	dst = append(dst, `{"kind":"perp","orderbook_id":`...)
	dst = jsonrpc.AppendData(dst, p.Book[:])
	dst = append(dst, `,"base_symbol":`...)
	dst = jsonrpc.AppendString(dst, p.BaseSymbol)
	dst = append(dst, `,"quote_symbol":`...)
	dst = jsonrpc.AppendString(dst, p.QuoteSymbol)
	if p.Size.Neg {
		dst = append(dst, `,"side":"short","size":`...)
	} else {
		dst = append(dst, `,"side":"long","size":`...)
	}
	dst = appendSigned(dst, &p.Size)
	dst = w.field(dst, `,"notional":`, &p.Notional)
	dst = w.field(dst, `,"entry_price":`, &p.EntryPrice)
	dst = w.field(dst, `,"mark_price":`, &p.Mark)
	dst = w.field(dst, `,"margin":`, &p.InitialMargin)
	var leverage uint256.Int
	if !p.InitialMargin.IsZero() {
		leverage.MulDivOverflow(&p.Notional, wad, &p.InitialMargin)
	}
	dst = w.field(dst, `,"leverage":`, &leverage)
	dst = append(dst, `,"funding_accrued":`...)
	dst = appendSigned(dst, &p.Funding)
	dst = append(dst, `,"entry_funding":`...)
	dst = appendSigned(dst, &p.EntryFundingIx)
	dst = w.field(dst, `,"liquidation_price":`, &p.Liquidation)
	dst = append(dst, `,"unrealized_pnl":`...)
	dst = appendSigned(dst, &p.Unrealized)
	dst = append(dst, `,"realized_pnl":`...)
	dst = appendSigned(dst, &p.Realized)
	return append(dst, `,"stop_loss":null,"take_profit":null}`...)
}

// appendAccountTotals appends the account fields of a positions object
// after its positions array.
func appendAccountTotals(dst []byte, d *marketdata.PositionsData, w Dialect) []byte {
	if !d.HasMargin {
		dst = append(dst, `,"total_unrealized_pnl":null,"total_realized_pnl":null,"perps_equity":null,`...)
		return append(dst, `"account_value":null,"cash":null,"withdrawable_cash":null,"net_deposits":null`...)
	}
	m := &d.Margin
	dst = append(dst, `,"total_unrealized_pnl":`...)
	dst = appendSigned(dst, &m.Unrealized)
	dst = append(dst, `,"total_realized_pnl":`...)
	dst = appendSigned(dst, &m.Realized)
	dst = append(dst, `,"perps_equity":`...)
	dst = appendSigned(dst, &m.Equity)
	value := m.Equity
	for i := range d.Spot {
		if s := &d.Spot[i]; s.HasMark {
			var v uint256.Int
			if _, overflow := v.MulDivOverflow(&s.Balance, &s.MarkPrice, wad); !overflow {
				addUnsigned(&value, &v)
			}
		}
	}
	dst = append(dst, `,"account_value":`...)
	dst = appendSigned(dst, &value)
	dst = append(dst, `,"cash":`...)
	dst = appendSigned(dst, &m.Cash)
	dst = w.field(dst, `,"withdrawable_cash":`, &m.Withdrawable)
	return append(dst, `,"net_deposits":null`...)
}

// addUnsigned adds v ≥ 0 to s (saturating at 2^256 − 1 in magnitude).
func addUnsigned(s *clob.Signed, v *uint256.Int) {
	switch {
	case !s.Neg:
		if _, overflow := s.Abs.AddOverflow(&s.Abs, v); overflow {
			s.Abs.SetAllOne()
		}
	case s.Abs.Gt(v):
		s.Abs.Sub(&s.Abs, v)
	default:
		s.Abs.Sub(v, &s.Abs)
		s.Neg = false
	}
}

// appendSigned appends a signed amount as a quoted decimal string, "-" for
// negatives (the openapi's signed int256 form).
func appendSigned(dst []byte, s *clob.Signed) []byte {
	return AppendSignedDecimal(dst, &s.Abs, s.Neg)
}

// appendTrigger appends one trigger, the openapi TriggerOrderResponse:
// size signed (sells negative), trigger_type "take_profit" or "stop_loss"
// and grouping "none" or "asset" (the openapi's TriggerType and
// TriggerGrouping; the engine holds no other values), tx_hash null when the
// node no longer knows it, end the ttl expiry or null.
func appendTrigger(dst []byte, t *marketdata.Trigger, w Dialect) []byte {
	in := &t.Info
	dst = append(dst, `{"orderbook_id":`...)
	dst = jsonrpc.AppendData(dst, in.Book[:])
	dst = append(dst, `,"order_id":`...)
	dst = jsonrpc.AppendData(dst, in.ID[:])
	dst = append(dst, `,"tx_hash":`...)
	if t.HasTx {
		dst = jsonrpc.AppendData(dst, t.TxHash[:])
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"bidder":`...)
	dst = jsonrpc.AppendData(dst, in.Owner[:])
	dst = append(dst, `,"nonce":`...)
	dst = strconv.AppendUint(dst, in.Nonce, 10)
	dst = append(dst, `,"size":`...)
	dst = AppendSignedDecimal(dst, &in.Size, in.Side == clob.Sell)
	dst = w.field(dst, `,"limit_price":`, &in.LimitPrice)
	dst = w.field(dst, `,"trigger_price":`, &in.TriggerPrice)
	dst = append(dst, `,"trigger_type":"`...)
	dst = append(dst, TriggerTypeName(in.TriggerType)...)
	dst = append(dst, `","grouping":"`...)
	dst = append(dst, GroupingName(in.Grouping)...)
	dst = strconv.AppendBool(append(dst, `","reduce_only":`...), in.Flags&clob.FlagReduceOnly != 0)
	dst = strconv.AppendBool(append(dst, `,"ioc":`...), in.Flags&clob.FlagIOC != 0)
	dst = append(dst, `,"deadline":`...)
	dst = strconv.AppendInt(dst, in.DeadlineUs, 10)
	dst = append(dst, `,"end":`...)
	return append(appendOptionalUs(dst, in.ExpiresUs), '}')
}
