package rpc

import (
	"strconv"
	"time"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/codec/obwire"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/node"
	"github.com/valyala/fastjson"
)

// The lab's market faults (docs/lab.md "Market faults"): skipped auctions
// and held ticks (net/node/lab.go: no input, the log holds the ticks that
// ran), oracle jumps and gaps (logged inputs, answered once durable).

var (
	errSkipObj   = jsonrpc.InvalidParams("lab_skipAuction needs an object {count} (1 to " + strconv.Itoa(node.SkipAuctionsMax) + ")")
	errHoldObj   = jsonrpc.InvalidParams("lab_holdTick needs an object {ms} (0 to " + strconv.Itoa(int(node.HoldTickMax.Milliseconds())) + ")")
	errMoveObj   = jsonrpc.InvalidParams("lab_moveOracle needs an object {market or orderbook_id, bps}")
	errGapObj    = jsonrpc.InvalidParams("lab_oracleGap needs an object {market or orderbook_id, seconds, bps}")
	errBps       = jsonrpc.InvalidParams("bps: want an integer from -" + strconv.Itoa(clob.OracleMoveBpsMax) + " to " + strconv.Itoa(clob.OracleMoveBpsMax) + ", not 0")
	errGapSecs   = jsonrpc.InvalidParams("seconds: want an integer from 1 to " + strconv.Itoa(int(node.OracleGapMax.Seconds())))
	errMarketRef = jsonrpc.InvalidParams("market: want a market name (ob_getMarkets) or orderbook_id")
)

// labObject returns param 0 when it is an object, else e.
func (c *call) labObject(e *jsonrpc.Error) (*fastjson.Value, *jsonrpc.Error) {
	obj := c.req.Param(0)
	if obj == nil || obj.Type() != fastjson.TypeObject {
		return nil, e
	}
	return obj, nil
}

// labInt reads obj[key] as an integer in [lo, hi], else e.
func labInt(obj *fastjson.Value, key string, lo, hi int64, e *jsonrpc.Error) (int64, *jsonrpc.Error) {
	v := obj.Get(key)
	if v == nil || v.Type() != fastjson.TypeNumber {
		return 0, e
	}
	x, err := v.Int64()
	if err != nil || x < lo || x > hi {
		return 0, e
	}
	return x, nil
}

func (c *call) labSkipAuction(dst []byte) ([]byte, *jsonrpc.Error) {
	obj, e := c.labObject(errSkipObj)
	if e != nil {
		return dst, e
	}
	count, e := labInt(obj, "count", 1, node.SkipAuctionsMax, errSkipObj)
	if e != nil {
		return dst, e
	}
	armed, err := c.s.node.SkipAuctions(int(count))
	if err != nil {
		return dst, jsonrpc.InvalidParams(err.Error() + " (max " + strconv.Itoa(node.SkipAuctionsMax) + ", " + strconv.Itoa(armed) + " armed)")
	}
	return jsonrpc.AppendQuantity(dst, uint64(armed)), nil
}

func (c *call) labHoldTick(dst []byte) ([]byte, *jsonrpc.Error) {
	obj, e := c.labObject(errHoldObj)
	if e != nil {
		return dst, e
	}
	ms, e := labInt(obj, "ms", 0, node.HoldTickMax.Milliseconds(), errHoldObj)
	if e != nil {
		return dst, e
	}
	c.s.node.HoldTick(time.Duration(ms) * time.Millisecond)
	return append(dst, "true"...), nil
}

// labMoveOracle runs lab_moveOracle (gap false) and lab_oracleGap.
func (c *call) labMoveOracle(dst []byte, gap bool) ([]byte, *jsonrpc.Error) {
	shape := errMoveObj
	if gap {
		shape = errGapObj
	}
	obj, e := c.labObject(shape)
	if e != nil {
		return dst, e
	}
	book, e := c.labMarket(obj)
	if e != nil {
		return dst, e
	}
	bps, e := labInt(obj, "bps", -clob.OracleMoveBpsMax, clob.OracleMoveBpsMax, errBps)
	if e != nil || bps == 0 {
		return dst, errBps
	}
	var d time.Duration
	if gap {
		secs, e := labInt(obj, "seconds", 1, int64(node.OracleGapMax.Seconds()), errGapSecs)
		if e != nil {
			return dst, e
		}
		d = time.Duration(secs) * time.Second
	}
	done := make(chan error, 1)
	if err := c.s.node.MoveOracle(book, int32(bps), d, func(err error) { done <- err }); err != nil {
		if node.IsOracleRefused(err) {
			return dst, jsonrpc.InvalidParams(err.Error())
		}
		return dst, submitError(err, c.s.cfg.Compat)
	}
	if err := waitDurable(done); err != nil {
		return dst, err
	}
	return append(dst, "true"...), nil
}

// labMarket resolves {market: name} or {orderbook_id}.
func (c *call) labMarket(obj *fastjson.Value) (clob.Hash, *jsonrpc.Error) {
	if v := obj.Get("orderbook_id"); v != nil {
		return obwire.ParseOrderbookID(v)
	}
	v := obj.Get("market")
	if v == nil || v.Type() != fastjson.TypeString {
		return clob.Hash{}, errMarketRef
	}
	name := string(v.GetStringBytes())
	for _, m := range c.s.node.Markets() {
		if m.Config.Name == name {
			return m.Config.ID, nil
		}
	}
	return clob.Hash{}, jsonrpc.InvalidParams("market: no market named " + strconv.Quote(name) + " (ob_getMarkets)")
}
