package rpc

import (
	"strconv"
	"time"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/node"
	"github.com/valyala/fastjson"
)

// AdminWaitMax bounds how long an admin write waits for durability.
const AdminWaitMax = 30 * time.Second

var errNotManual = jsonrpc.InvalidParams("admin_advanceTime needs a node started with --clock manual")

// adminCall runs an authorized admin_* method. Writes run on the blocking
// path (see Serve), so they may wait here.
func (c *call) adminCall(dst []byte) ([]byte, *jsonrpc.Error) {
	switch string(c.req.Method) {
	case "admin_deposit":
		return c.adminDeposit(dst)
	case "admin_setBaseFee":
		v := c.req.Param(0)
		if v == nil {
			return dst, missingParam(0)
		}
		fee, err := jsonrpc.ParseU256(v)
		if err != nil {
			return dst, err
		}
		// anvil_setNextBlockBaseFeePerGas's control, answering true.
		if err := c.onceDurable(func(done func(error)) error { return c.s.node.SetBaseFee(&fee, done) }); err != nil {
			return dst, err
		}
		return append(dst, "true"...), nil
	}
	switch string(c.req.Method) {
	case "admin_createMarket":
		return c.adminCreateMarket(dst)
	case "admin_setOraclePrice":
		return c.adminSetOraclePrice(dst)
	case "admin_lockAccount":
		return c.adminLockAccount(dst)
	case "admin_stateHash":
		// {seq, hash}: the inputs applied and the state hash after them,
		// to compare a node's state with a replay of its log.
		seq, h := c.s.node.StateAt()
		return node.AppendStateHash(dst, seq, h), nil
	case "admin_snapshot":
		// Takes a snapshot now and answers {seq} once it is on disk.
		if err := c.s.node.Snapshot(); err != nil {
			return dst, internalError(err)
		}
		st := c.s.node.SnapshotStats()
		return append(jsonrpc.AppendQuantity(append(dst, `{"seq":`...), st.Seq), '}'), nil
	}
	// admin_advanceTime
	if c.s.cfg.Manual == nil {
		return dst, errNotManual
	}
	v := c.req.Param(0)
	if v == nil {
		return dst, missingParam(0)
	}
	delta, err := jsonrpc.ParseQuantity(v)
	if err != nil {
		return dst, err
	}
	if delta > node.TimeJumpMaxUs {
		return dst, jsonrpc.InvalidParams("time step too large")
	}
	now := c.s.cfg.Manual.Advance(int64(delta))
	// The auction ticks the new time makes due run now, and the answer
	// waits until they are durable: a client that reads after it sees them.
	durable, rerr := c.s.node.RunDueTicks()
	if rerr != nil {
		return dst, internalError(rerr)
	}
	if durable != nil {
		if err := waitDurable(durable); err != nil {
			return dst, err
		}
	}
	return jsonrpc.AppendQuantity(dst, uint64(now)), nil
}

// adminDeposit credits {token, to, amount[, tx_hash]} as a deposit observed
// on the bridged chain; it answers {"tx_hash": ...}, the deposit's id.
func (c *call) adminDeposit(dst []byte) ([]byte, *jsonrpc.Error) {
	obj := c.req.Param(0)
	if obj == nil || obj.Type() != fastjson.TypeObject {
		return dst, jsonrpc.InvalidParams("admin_deposit needs an object {token, to, amount}")
	}
	token, err := requiredAddress(obj, "token")
	if err != nil {
		return dst, err
	}
	to, err := requiredAddress(obj, "to")
	if err != nil {
		return dst, err
	}
	amount, err := parseAmount(obj.Get("amount"))
	if err != nil {
		return dst, err
	}
	var id [32]byte
	if v := obj.Get("tx_hash"); v != nil {
		if id, err = jsonrpc.ParseHash(v); err != nil {
			return dst, err
		}
	}
	done := make(chan error, 1)
	var rec *core.TxRecord
	derr := c.s.node.Deposit(id, token, to, &amount, func(e *node.Entry, err error) {
		if e != nil {
			rec = e.Rec
		}
		done <- err
	})
	if derr != nil {
		return dst, jsonrpc.InvalidParams(derr.Error())
	}
	if err := waitDurable(done); err != nil {
		return dst, err
	}
	dst = append(dst, `{"tx_hash":`...)
	dst = jsonrpc.AppendData(dst, rec.Tx.Hash[:])
	return append(dst, '}'), nil
}

func requiredAddress(obj *fastjson.Value, key string) (core.Address, *jsonrpc.Error) {
	v := obj.Get(key)
	if v == nil {
		return core.Address{}, jsonrpc.InvalidParams("missing " + strconv.Quote(key))
	}
	a, err := jsonrpc.ParseAddress(v)
	return a, err
}

func waitDurable(done <-chan error) *jsonrpc.Error {
	select {
	case err := <-done:
		if err != nil {
			return internalError(err)
		}
		return nil
	case <-time.After(AdminWaitMax):
		return internalError(errDurabilityTimeout)
	}
}

// adminCreateMarket adds a market from {name, base, quote?, base_symbol?,
// quote_symbol?, id?, auction_interval?, tick_precision, lot_size,
// maker_fee?, taker_fee?, market_type?} and, for market_type "perpetual",
// the perp parameters (perpParams), and answers {"id": ...}. The id
// defaults to keccak256(name), the quote to the native token, the interval
// to 500 000 µs, the fees to 0 and the type to "spot".
func (c *call) adminCreateMarket(dst []byte) ([]byte, *jsonrpc.Error) {
	obj := c.req.Param(0)
	if obj == nil || obj.Type() != fastjson.TypeObject {
		return dst, jsonrpc.InvalidParams("admin_createMarket needs an object {name, base, tick_precision, lot_size, ...}")
	}
	var m clob.MarketConfig
	var err *jsonrpc.Error
	if m.Name, err = stringParam(obj, "name", true); err != nil {
		return dst, err
	}
	if m.BaseSymbol, err = stringParam(obj, "base_symbol", false); err != nil {
		return dst, err
	}
	if m.QuoteSymbol, err = stringParam(obj, "quote_symbol", false); err != nil {
		return dst, err
	}
	base, err := requiredAddress(obj, "base")
	if err != nil {
		return dst, err
	}
	m.Base, m.Quote = clob.Address(base), clob.Address(core.NativeToken)
	if v := obj.Get("quote"); v != nil {
		q, err := jsonrpc.ParseAddress(v)
		if err != nil {
			return dst, err
		}
		m.Quote = clob.Address(q)
	}
	m.ID = clob.Hash(core.Keccak256Hash([]byte(m.Name)))
	if v := obj.Get("id"); v != nil {
		id, err := jsonrpc.ParseHash(v)
		if err != nil {
			return dst, err
		}
		m.ID = clob.Hash(id)
	}
	m.IntervalUs = clob.TransferIntervalUs
	if v := obj.Get("auction_interval"); v != nil {
		iv, err := jsonrpc.ParseQuantity(v)
		if err != nil || iv == 0 || iv > 1<<40 {
			return dst, jsonrpc.InvalidParams("auction_interval must be a positive number of microseconds")
		}
		m.IntervalUs = int64(iv)
	}
	for _, f := range [...]struct {
		key      string
		dst      *uint256.Int
		required bool
	}{{"tick_precision", &m.TickPrecision, true}, {"lot_size", &m.LotSize, true}, {"maker_fee", &m.MakerFee, false}, {"taker_fee", &m.TakerFee, false}} {
		v := obj.Get(f.key)
		if v == nil && f.required {
			return dst, jsonrpc.InvalidParams("missing " + strconv.Quote(f.key))
		}
		if v != nil {
			if *f.dst, err = jsonrpc.ParseU256(v); err != nil {
				return dst, err
			}
		}
	}
	if err := perpParams(obj, &m); err != nil {
		return dst, err
	}
	done := make(chan error, 1)
	if cerr := c.s.node.CreateMarket(&m, func(err error) { done <- err }); cerr != nil {
		return dst, jsonrpc.InvalidParams(cerr.Error())
	}
	if err := waitDurable(done); err != nil {
		return dst, err
	}
	dst = append(dst, `{"id":`...)
	dst = jsonrpc.AppendData(dst, m.ID[:])
	return append(dst, '}'), nil
}

// marketNameBytesMax bounds a market's name and symbols.
const marketNameBytesMax = 64

// stringParam reads obj[key] as a string of 1 to marketNameBytesMax bytes;
// an absent optional one is "".
func stringParam(obj *fastjson.Value, key string, required bool) (string, *jsonrpc.Error) {
	v := obj.Get(key)
	if v == nil && !required {
		return "", nil
	}
	var b []byte
	if v != nil && v.Type() == fastjson.TypeString {
		b, _ = v.StringBytes()
	}
	if len(b) == 0 || len(b) > marketNameBytesMax {
		return "", jsonrpc.InvalidParams(strconv.Quote(key) + " must be a string of 1 to 64 bytes")
	}
	return string(b), nil
}
