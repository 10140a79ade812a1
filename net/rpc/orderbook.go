package rpc

import (
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/codec/obwire"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/net/node"
	"github.com/valyala/fastjson"
)

// orderbookRead answers the ob_ methods. ob_getOrderbook reads the book
// the node published after the newest tick (node.Orderbook); the markets,
// oracle prices, funding rates, orders, candles, fills and backstop
// transfers read the market index under its own lock (node.ReadIndex; the
// index copies the perp markets' state after each input that moves it,
// marketdata.Index.SyncPerp): none of them waits for a tick's auction. The
// others combine the index with the engine's live state and the ledger's
// margins, under the node's read lock, so each answer reflects one
// consistent state.
func (c *call) orderbookRead(dst []byte) ([]byte, *jsonrpc.Error) {
	method := string(c.req.Method)
	if method == "ob_getOrderbook" {
		return c.getOrderbook(dst)
	}
	var err *jsonrpc.Error
	if read, ok := indexReads[method]; ok {
		c.s.node.ReadIndex(func(x *marketdata.Index) { dst, err = read(c, dst, x) })
		return dst, err
	}
	if read, ok := marketReads[method]; ok {
		c.s.node.ReadMarkets(func(v node.MarketView) { dst, err = read(c, dst, v) })
	}
	return dst, err
}

// indexReads are the ob_ methods the market index answers alone (under
// node.ReadIndex); marketReads those that also need the engine or the
// ledger (under node.ReadMarkets).
var (
	indexReads = map[string]func(*call, []byte, *marketdata.Index) ([]byte, *jsonrpc.Error){
		"ob_getMarkets": func(_ *call, dst []byte, x *marketdata.Index) ([]byte, *jsonrpc.Error) {
			return obwire.AppendMarkets(dst, x.Markets(nil)), nil
		},
		"ob_getOraclePrices": func(c *call, dst []byte, x *marketdata.Index) ([]byte, *jsonrpc.Error) {
			return c.getPerpMarkets(dst, x, obwire.AppendOraclePrices)
		},
		"ob_getFundingRates": func(c *call, dst []byte, x *marketdata.Index) ([]byte, *jsonrpc.Error) {
			return c.getPerpMarkets(dst, x, obwire.AppendFundingRates)
		},
		"ob_getOrders":            (*call).getOrders,
		"ob_getCandles":           (*call).getCandles,
		"ob_getFills":             (*call).getFills,
		"ob_getBackstopTransfers": (*call).getBackstopTransfers,
	}
	marketReads = map[string]func(*call, []byte, node.MarketView) ([]byte, *jsonrpc.Error){
		"ob_getPositions":       (*call).getPositions,
		"ob_getTriggers":        (*call).getTriggers,
		"ob_getRankedPositions": (*call).getRankedPositions,
	}
)

func (c *call) getOrderbook(dst []byte) ([]byte, *jsonrpc.Error) {
	id, err := c.orderbookID(0)
	if err != nil {
		return dst, err
	}
	depth, err := obwire.ParseDepth(c.req.Param(1))
	if err != nil {
		return dst, err
	}
	snap, ok := c.s.node.Orderbook(id, depth)
	if !ok {
		return dst, errUnknownOrderbook
	}
	return obwire.AppendOrderbook(dst, &snap), nil
}

var errUnknownOrderbook = jsonrpc.InvalidParams("unknown orderbook")

// orderbookID reads param i as an orderbook id.
func (c *call) orderbookID(i int) (clob.Hash, *jsonrpc.Error) {
	v := c.req.Param(i)
	if v == nil {
		return clob.Hash{}, missingParam(i)
	}
	return obwire.ParseOrderbookID(v)
}

func (c *call) getOrders(dst []byte, x *marketdata.Index) ([]byte, *jsonrpc.Error) {
	owner, err := c.address(0)
	if err != nil {
		return dst, err
	}
	q, err := obwire.ParseOrdersQuery(c.req.Param(1))
	if err != nil {
		return dst, err
	}
	page := x.Orders(nil, clob.Address(owner), &q)
	return obwire.AppendOrders(dst, &page), nil
}

func (c *call) getCandles(dst []byte, x *marketdata.Index) ([]byte, *jsonrpc.Error) {
	id, err := c.orderbookID(0)
	if err != nil {
		return dst, err
	}
	// Both the openapi's [id, query] and the live guide's positional
	// [id, startTimestamp, endTimestamp, interval]; orderbookID(0) saw
	// params[0].
	q, err := obwire.ParseCandlesParams(c.req.Params.GetArray()[1:])
	if err != nil {
		return dst, err
	}
	candles, ok := x.Candles(nil, id, &q)
	if !ok {
		return dst, errUnknownOrderbook
	}
	return obwire.AppendCandles(dst, candles), nil
}

func (c *call) getPositions(dst []byte, v node.MarketView) ([]byte, *jsonrpc.Error) {
	owner, err := c.address(0)
	if err != nil {
		return dst, err
	}
	d := v.Positions(clob.Address(owner))
	return obwire.AppendPositions(dst, &d), nil
}

func (c *call) getFills(dst []byte, x *marketdata.Index) ([]byte, *jsonrpc.Error) {
	owner, err := c.address(0)
	if err != nil {
		return dst, err
	}
	q, err := obwire.ParseFillsQuery(c.req.Param(1))
	if err != nil {
		return dst, err
	}
	page := x.Fills(clob.Address(owner), &q)
	return obwire.AppendFills(dst, x, &page), nil
}

// getBackstopTransfers answers [address, query] as the openapi writes it;
// a null address, or a query alone in first place, lists every account's.
func (c *call) getBackstopTransfers(dst []byte, x *marketdata.Index) ([]byte, *jsonrpc.Error) {
	qi := 1
	var user clob.Address
	hasUser := false
	switch p := c.req.Param(0); {
	case p == nil || p.Type() == fastjson.TypeNull:
	case p.Type() == fastjson.TypeObject:
		qi = 0
	default:
		a, err := c.address(0)
		if err != nil {
			return dst, err
		}
		user, hasUser = clob.Address(a), true
	}
	q, err := obwire.ParseBackstopQuery(c.req.Param(qi))
	if err != nil {
		return dst, err
	}
	q.User, q.HasUser = user, hasUser
	page := x.BackstopTransfers(&q)
	return obwire.AppendBackstopTransfers(dst, &page), nil
}
