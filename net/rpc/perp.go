package rpc

import (
	"math"
	"strconv"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/codec/obwire"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/net/node"
	"github.com/valyala/fastjson"
)

// The perpetual markets on the wire (docs/perps.md): the admin controls
// (perp parameters of admin_createMarket, admin_setOraclePrice) and the perp
// reads (ob_getTriggers, ob_getOraclePrices, ob_getFundingRates,
// ob_getRankedPositions).

// Defaults of admin_createMarket's perp parameters (docs/perps.md).
var (
	defaultInterestRate   = *uint256.NewInt(1e14) // 0.01 % per 8 h
	defaultMaxFundingRate = *uint256.NewInt(32e16)
	defaultMaxPremium     = *uint256.NewInt(5e15) // 0.5 % of the oracle
	defaultMarkClamp      = *uint256.NewInt(1e16) // 1 % of the last mark per tick
)

// OracleWalkBpsMax bounds oracle_walk_bps: a step of the whole price.
const OracleWalkBpsMax = 10_000

var (
	errMarketType   = jsonrpc.InvalidParams(`market_type: want "spot" or "perpetual"`)
	errMaxLeverage  = jsonrpc.InvalidParams("max_leverage: want an integer from 1 to 4294967295")
	errOraclePrice  = jsonrpc.InvalidParams("oracle_price: required for a perpetual market, a positive amount of wei")
	errWalkBps      = jsonrpc.InvalidParams("oracle_walk_bps: want an integer from 0 to " + strconv.Itoa(OracleWalkBpsMax))
	errWalkSeed     = jsonrpc.InvalidParams("oracle_seed: want a 64-bit unsigned integer")
	errPerpQuote    = jsonrpc.InvalidParams("quote: a perpetual market's collateral is the native token")
	errSetOracleObj = jsonrpc.InvalidParams("admin_setOraclePrice needs an object {orderbook_id, price}")
	errSetOracleID  = jsonrpc.InvalidParams("orderbook_id: want 0x followed by 64 hex digits")
	errSetOracleWei = jsonrpc.InvalidParams("price: want an amount of wei (0x quantity or integer)")
)

// perpOnlyKeys are the parameters only a perpetual market takes.
var perpOnlyKeys = [...]string{"max_leverage", "interest_rate", "max_funding_rate", "max_premium", "mark_clamp",
	"oracle_price", "oracle_walk_bps", "oracle_seed"}

// perpParams reads market_type and, for a perpetual market, its parameters
// into m: max_leverage (required), oracle_price (required, wei),
// interest_rate, max_funding_rate, max_premium, mark_clamp (fractions of
// 1e18), oracle_walk_bps, oracle_seed. A spot market naming one is refused,
// so a typo in market_type does not silently create a spot market.
func perpParams(obj *fastjson.Value, m *clob.MarketConfig) *jsonrpc.Error {
	m.Kind = clob.Spot
	if v := obj.Get("market_type"); v != nil {
		switch string(v.GetStringBytes()) {
		case "spot":
		case "perpetual":
			m.Kind = clob.Perp
		default:
			return errMarketType
		}
	}
	if m.Kind == clob.Spot {
		for _, k := range perpOnlyKeys {
			if obj.Get(k) != nil {
				return jsonrpc.InvalidParams(k + `: only for market_type "perpetual"`)
			}
		}
		return nil
	}
	if m.Quote != clob.Address(core.NativeToken) {
		return errPerpQuote
	}
	p := &m.Perp
	lev, err := jsonrpc.ParseQuantity(obj.Get("max_leverage"))
	if err != nil || lev < 1 || lev > math.MaxUint32 {
		return errMaxLeverage
	}
	p.MaxLeverage = uint32(lev)
	if p.OraclePrice, err = jsonrpc.ParseU256(obj.Get("oracle_price")); err != nil || p.OraclePrice.IsZero() {
		return errOraclePrice
	}
	for _, f := range [...]struct {
		key string
		dst *uint256.Int
		def *uint256.Int
	}{{"interest_rate", &p.InterestRate, &defaultInterestRate}, {"max_funding_rate", &p.MaxFundingRate, &defaultMaxFundingRate},
		{"max_premium", &p.MaxPremium, &defaultMaxPremium}, {"mark_clamp", &p.MarkClamp, &defaultMarkClamp}} {
		*f.dst = *f.def
		if v := obj.Get(f.key); v != nil {
			if *f.dst, err = jsonrpc.ParseU256(v); err != nil {
				return jsonrpc.InvalidParams(f.key + ": want a fraction of 1e18 (0x quantity or integer)")
			}
		}
	}
	if v := obj.Get("oracle_walk_bps"); v != nil {
		bps, err := jsonrpc.ParseQuantity(v)
		if err != nil || bps > OracleWalkBpsMax {
			return errWalkBps
		}
		p.WalkBps = uint32(bps)
	}
	if v := obj.Get("oracle_seed"); v != nil {
		if p.WalkSeed, err = jsonrpc.ParseQuantity(v); err != nil {
			return errWalkSeed
		}
	}
	return nil
}

// adminSetOraclePrice sets a perp market's oracle price from {orderbook_id,
// price} and freezes its walk; it answers true once the setting is durable.
// The orderbook's refusals (unknown or spot book, a price that is zero or
// off the tick grid) answer -32602 "CLOB validation failed: <reason>".
func (c *call) adminSetOraclePrice(dst []byte) ([]byte, *jsonrpc.Error) {
	obj := c.req.Param(0)
	if obj == nil || obj.Type() != fastjson.TypeObject {
		return dst, errSetOracleObj
	}
	id, err := jsonrpc.ParseHash(obj.Get("orderbook_id"))
	if err != nil {
		return dst, errSetOracleID
	}
	price, err := jsonrpc.ParseU256(obj.Get("price"))
	if err != nil {
		return dst, errSetOracleWei
	}
	done := make(chan error, 1)
	if serr := c.s.node.SetOraclePrice(clob.Hash(id), &price, func(err error) { done <- err }); serr != nil {
		if node.IsOracleRefused(serr) {
			return dst, jsonrpc.InvalidParams(serr.Error())
		}
		return dst, internalError(serr)
	}
	if err := waitDurable(done); err != nil {
		return dst, err
	}
	return append(dst, "true"...), nil
}

var errNotPerp = jsonrpc.InvalidParams("orderbook_id: not a perpetual market")

// getPerpMarkets answers ob_getOraclePrices and ob_getFundingRates
// [orderbook_id?]: every perp market, or the one named.
func (c *call) getPerpMarkets(dst []byte, x *marketdata.Index, appendAll func([]byte, []clob.PerpInfo) []byte) ([]byte, *jsonrpc.Error) {
	p := c.req.Param(0)
	if p == nil || p.Type() == fastjson.TypeNull {
		return appendAll(dst, x.PerpMarkets(nil)), nil
	}
	id, err := obwire.ParseOrderbookID(p)
	if err != nil {
		return dst, err
	}
	info, known, ok := x.PerpMarket(id)
	switch {
	case !known:
		return dst, errUnknownOrderbook
	case !ok:
		return dst, errNotPerp
	}
	return appendAll(dst, []clob.PerpInfo{info}), nil
}

// getTriggers answers ob_getTriggers [account, {orderbook_id?, limit?,
// cursor?}].
func (c *call) getTriggers(dst []byte) ([]byte, *jsonrpc.Error) {
	owner, err := c.address(0)
	if err != nil {
		return dst, err
	}
	q, err := obwire.ParseTriggersQuery(c.req.Param(1))
	if err != nil {
		return dst, err
	}
	page := marketdata.PageTriggers(nil, c.s.node.Triggers(clob.Address(owner)), &q)
	return obwire.AppendTriggers(dst, &page), nil
}

// getRankedPositions answers ob_getRankedPositions [limit?, offset?,
// address?]: the accounts with open perp positions, best net PnL first
// (node.Node.ByPnL, the live network's order), each with its positions
// object.
func (c *call) getRankedPositions(dst []byte) ([]byte, *jsonrpc.Error) {
	q, err := obwire.ParseRankedQuery(c.req.Param(0), c.req.Param(1), c.req.Param(2))
	if err != nil {
		return dst, err
	}
	page := rankedPage(c.s.node, c.s.node.ByPnL(), &q)
	return obwire.AppendRanked(dst, &page), nil
}
