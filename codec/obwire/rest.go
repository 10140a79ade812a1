package obwire

import (
	"strconv"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
)

// The REST reads under /v1/clob/ (docs/rest.md) answer the same data as the
// ob_ methods in the live network's indexer shapes (its SDK's wire.ts):
// unsigned amounts as decimal strings rather than hex quantities, times in
// µs, and a few members of their own (included_batch on an order,
// solution_now on a page). The encoders the two share take the Dialect.

// Dialect selects how a shared encoder writes: RPC is the ob_ methods'
// (hex quantities), REST the /v1/clob/ reads' (decimal strings, and the
// REST-only members).
type Dialect uint8

const (
	RPC Dialect = iota
	REST
)

// appendU256 appends an unsigned amount: a hex quantity (RPC) or a quoted
// decimal string (REST).
func (w Dialect) appendU256(dst []byte, v *uint256.Int) []byte {
	if w == REST {
		return AppendSignedDecimal(dst, v, false)
	}
	return jsonrpc.AppendQuantityU256(dst, v)
}

// field appends key (`,"name":`) and the amount v.
func (w Dialect) field(dst []byte, key string, v *uint256.Int) []byte {
	return w.appendU256(append(dst, key...), v)
}

// AppendMarketsREST appends GET /v1/clob/markets: every market's static
// configuration (the live WireMarketStatic), market_type "spot" or "perp".
func AppendMarketsREST(dst []byte, ms []marketdata.Market) []byte {
	dst = append(dst, '[')
	for i := range ms {
		m := &ms[i]
		c := m.Config
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendMarketIdentity(dst, c)
		if c.Kind == clob.Perp {
			dst = append(dst, `,"market_type":"perp"`...)
		} else {
			dst = append(dst, `,"market_type":"spot"`...)
		}
		dst = append(dst, `,"auction_interval_us":`...)
		dst = strconv.AppendInt(dst, c.IntervalUs, 10)
		dst = REST.field(dst, `,"maker_fee":`, &c.MakerFee)
		dst = REST.field(dst, `,"taker_fee":`, &c.TakerFee)
		dst = REST.field(dst, `,"tick_precision":`, &c.TickPrecision)
		dst = REST.field(dst, `,"lot_size":`, &c.LotSize)
		// A spot market: leverage 1 and no funding window (0).
		leverage, windowUs := uint64(1), int64(0)
		if m.HasPerp {
			leverage, windowUs = uint64(m.MaxLeverage), clob.FundingWindowUs
		}
		dst = append(dst, `,"max_leverage":`...)
		dst = strconv.AppendUint(dst, leverage, 10)
		dst = append(dst, `,"funding_window_us":`...)
		dst = strconv.AppendInt(dst, windowUs, 10)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// AppendMarketStatsREST appends GET /v1/clob/markets/stats:
// {solution_now, markets}, each market's dynamics (the live
// WireMarketDynamics), the perp members null on a spot market.
func AppendMarketStatsREST(dst []byte, ms []marketdata.Market, solutionNowUs int64) []byte {
	dst = append(dst, `{"solution_now":`...)
	dst = strconv.AppendInt(dst, solutionNowUs, 10)
	dst = append(dst, `,"markets":[`...)
	for i := range ms {
		m := &ms[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"orderbook_id":`...)
		dst = jsonrpc.AppendData(dst, m.Config.ID[:])
		dst = REST.field(dst, `,"last_clearing_price":`, &m.LastPrice)
		dst = REST.field(dst, `,"volume_24h":`, &m.Volume24h)
		dst = REST.field(dst, `,"high_24h":`, &m.High24h)
		dst = REST.field(dst, `,"low_24h":`, &m.Low24h)
		dst = append(dst, `,"price_change_24h":`...)
		dst = strconv.AppendInt(dst, m.Change24hBps, 10)
		if !m.HasPerp {
			dst = append(dst, `,"oracle_price":null,"mark_price":null,"funding_rate":null,"funding_index":null,`...)
			dst = append(dst, `"funding_last_updated_us":null,"open_interest":null}`...)
			continue
		}
		p := &m.Perp
		dst = REST.field(dst, `,"oracle_price":`, &p.Oracle)
		dst = REST.field(dst, `,"mark_price":`, &p.Mark)
		dst = appendFunding(dst, p, `,"funding_last_updated_us":`)
		dst = REST.field(dst, `,"open_interest":`, &p.OpenInterest)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// AppendCandlesREST appends GET /v1/clob/candles/{id}: {candles (newest
// first), resolution, range (the oldest and newest returned buckets'
// starts, null without candles), solution_now_us}. quote_volume is null:
// the index keeps base volume only (docs/rest.md).
func AppendCandlesREST(dst []byte, cs []marketdata.Candle, r marketdata.Resolution, solutionNowUs int64) []byte {
	dst = append(dst, `{"candles":[`...)
	for i := range cs {
		c := &cs[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendCandle(dst, c, REST), `,"quote_volume":null}`...)
	}
	dst = append(dst, `],"resolution":"`...)
	dst = append(dst, r.String()...)
	dst = append(dst, `","range":`...)
	if len(cs) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, `{"from_us":`...)
		dst = strconv.AppendInt(dst, cs[len(cs)-1].StartUs, 10)
		dst = append(dst, `,"to_us":`...)
		dst = strconv.AppendInt(dst, cs[0].StartUs, 10)
		dst = append(dst, '}')
	}
	dst = append(dst, `,"solution_now_us":`...)
	dst = strconv.AppendInt(dst, solutionNowUs, 10)
	return append(dst, '}')
}

// AppendOrdersREST appends GET /v1/clob/orders/{account}: {orders (newest
// first, with their fills), next_cursor, total_count, solution_now}.
// REQUIRES: p.WithTotal.
func AppendOrdersREST(dst []byte, p *marketdata.OrdersPage, solutionNowUs int64) []byte {
	dst = appendOrdersPage(dst, p, REST)
	dst = append(dst, `,"solution_now":`...)
	dst = strconv.AppendInt(dst, solutionNowUs, 10)
	return append(dst, '}')
}

// AppendOrderbookREST appends GET /v1/clob/orderbook/{id}: the
// ob_getOrderbook object with decimal amounts.
func AppendOrderbookREST(dst []byte, s *marketdata.Snapshot) []byte {
	return appendOrderbook(dst, s, REST)
}

// AppendPositionsREST appends GET /v1/clob/positions/{account}: the perp
// positions and the account totals (the spot holdings are
// /v1/clob/balances'), decimal amounts.
func AppendPositionsREST(dst []byte, d *marketdata.PositionsData) []byte {
	dst = append(dst, `{"positions":[`...)
	for i := range d.Perps {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendPerpPosition(dst, &d.Perps[i], REST)
	}
	dst = append(dst, ']')
	return append(appendAccountTotals(dst, d, REST), '}')
}

// AppendBalancesREST appends GET /v1/clob/balances/{account}: the spot
// holdings, the native cash (signed), the withdrawable cash and
// net_deposits (null: the index sees no deposits).
func AppendBalancesREST(dst []byte, d *marketdata.PositionsData) []byte {
	dst = append(dst, `{"balances":[`...)
	for i := range d.Spot {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendSpotHolding(append(dst, '{'), &d.Spot[i], REST)
	}
	dst = append(dst, `],"cash":`...)
	if !d.HasMargin {
		return append(dst, `null,"withdrawable_cash":null,"net_deposits":null}`...)
	}
	dst = appendSigned(dst, &d.Margin.Cash)
	dst = REST.field(dst, `,"withdrawable_cash":`, &d.Margin.Withdrawable)
	return append(dst, `,"net_deposits":null}`...)
}

// AppendTriggersREST appends GET /v1/clob/triggers/{account}: the
// ob_getTriggers object with decimal amounts.
func AppendTriggersREST(dst []byte, p *marketdata.TriggersPage) []byte {
	return appendTriggers(dst, p, REST)
}

// AppendLeaderboardREST appends GET /v1/clob/leaderboard: {ranked, total,
// queried}, each account with its REST positions object.
func AppendLeaderboardREST(dst []byte, p *marketdata.RankedPage) []byte {
	return appendRanked(dst, p, REST)
}

// AppendBackstopREST appends GET /v1/clob/backstop-transfers/{account}:
// {backstop_transfers (newest first), total_count, solution_now}, each
// transfer the live WireBackstopTransfer (size, cash and equity signed).
func AppendBackstopREST(dst []byte, p *marketdata.BackstopPage, solutionNowUs int64) []byte {
	dst = append(dst, `{"backstop_transfers":[`...)
	for i, t := range p.Transfers {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"orderbook_id":`...)
		dst = jsonrpc.AppendData(dst, t.Book[:])
		dst = append(dst, `,"size":`...)
		dst = appendSigned(dst, &t.Size)
		dst = append(dst, `,"cash":`...)
		dst = appendSigned(dst, &t.Cash)
		dst = REST.field(dst, `,"mark_price":`, &t.Mark)
		dst = append(dst, `,"equity":`...)
		dst = appendSigned(dst, &t.Equity)
		dst = append(dst, `,"timestamp_us":`...)
		dst = strconv.AppendInt(dst, t.TickUs, 10)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"total_count":`...)
	dst = strconv.AppendInt(dst, int64(p.Total), 10)
	dst = append(dst, `,"solution_now":`...)
	dst = strconv.AppendInt(dst, solutionNowUs, 10)
	return append(dst, '}')
}
