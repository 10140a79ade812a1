package rpc

import (
	"strconv"
	"time"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
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
		done := make(chan error, 1)
		if err := c.s.node.SetBaseFee(&fee, func(err error) { done <- err }); err != nil {
			return dst, internalError(err)
		}
		if err := waitDurable(done); err != nil {
			return dst, err
		}
		return append(dst, "true"...), nil
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
	if delta > 1<<50 {
		return dst, jsonrpc.InvalidParams("time step too large")
	}
	return jsonrpc.AppendQuantity(dst, uint64(c.s.cfg.Manual.Advance(int64(delta)))), nil
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
