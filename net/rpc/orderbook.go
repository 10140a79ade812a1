package rpc

import (
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/codec/obwire"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/valyala/fastjson"
)

// orderbookRead answers the ob_ methods; none of them waits for a tick's
// auction. ob_getOrderbook reads the book the node published after the
// newest tick (node.Orderbook); the markets, oracle prices, funding rates,
// orders, candles, fills and backstop transfers read the market index
// under its own lock (node.ReadIndex; the index copies the perp markets'
// state after each input that moves it, marketdata.Index.SyncPerp); the
// positions, triggers and ranked positions read the node's account views
// (node.Positions, node.Triggers, node.ByPnL), each account as of one
// applied input.
func (c *call) orderbookRead(dst []byte) ([]byte, *jsonrpc.Error) {
	var err *jsonrpc.Error
	if string(c.req.Method) == "ob_getOrderbook" {
		return c.getOrderbook(dst)
	}
	if isIndexRead(c.req.Method) {
		c.s.node.ReadIndex(func(x *marketdata.Index) {
			switch string(c.req.Method) {
			case "ob_getMarkets":
				dst = obwire.AppendMarkets(dst, x.Markets(nil))
			case "ob_getOraclePrices":
				dst, err = c.getPerpMarkets(dst, x, obwire.AppendOraclePrices)
			case "ob_getFundingRates":
				dst, err = c.getPerpMarkets(dst, x, obwire.AppendFundingRates)
			case "ob_getOrders":
				dst, err = c.getOrders(dst, x)
			case "ob_getCandles":
				dst, err = c.getCandles(dst, x)
			case "ob_getFills":
				dst, err = c.getFills(dst, x)
			case "ob_getBackstopTransfers":
				dst, err = c.getBackstopTransfers(dst, x)
			}
		})
		return dst, err
	}
	switch string(c.req.Method) {
	case "ob_getPositions":
		return c.getPositions(dst)
	case "ob_getTriggers":
		return c.getTriggers(dst)
	}
	return c.getRankedPositions(dst)
}

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

// isIndexRead reports whether method m answers from the market index
// alone (node.ReadIndex), which a tick's downstream stage locks while the
// index takes the tick's step: a body holding one runs on a worker while
// the index is busy (needsWorker), so that the wait never holds up an
// event loop and the other connections it serves.
func isIndexRead(m []byte) bool {
	switch string(m) {
	case "ob_getMarkets", "ob_getOraclePrices", "ob_getFundingRates",
		"ob_getOrders", "ob_getCandles", "ob_getFills", "ob_getBackstopTransfers":
		return true
	}
	return false
}

// readsIndex reports whether reqs hold a valid call that takes the market
// index's lock: an index read (isIndexRead), ob_getPositions, whose spot
// and perp positions node.Positions reads from the index, or
// svc_getAccountDiagnostics, which looks for the account's pending orders
// there.
func readsIndex(reqs []jsonrpc.Request) bool {
	for i := range reqs {
		if reqs[i].Invalid != nil {
			continue
		}
		switch m := reqs[i].Method; {
		case isIndexRead(m), string(m) == "ob_getPositions", string(m) == "svc_getAccountDiagnostics":
			return true
		}
	}
	return false
}

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

func (c *call) getPositions(dst []byte) ([]byte, *jsonrpc.Error) {
	owner, err := c.address(0)
	if err != nil {
		return dst, err
	}
	d := c.s.node.Positions(clob.Address(owner))
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
