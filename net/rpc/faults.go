package rpc

import (
	"errors"
	"strconv"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
	"github.com/valyala/fastjson"
)

// CodeRejected is the spec's -32003: at least f + 1 validators rejected the
// transaction.
const CodeRejected = -32003

var (
	errBlacklistObj = jsonrpc.InvalidParams("admin_blacklist needs an object {address} or {tx_hash}, with remove: true to take it off")
	errFaultsObj    = jsonrpc.InvalidParams("admin_setValidatorFaults needs an object {reject, reason, silent} ({} clears the faults)")
)

// submitError maps a write the node refused to the spec's error: the
// committee's verdicts, else a node fault (-32603), whose data says why (a
// follower's: where to send writes; under compat its message too).
func submitError(err error, compat bool) *jsonrpc.Error {
	var rejected *node.RejectedError
	var notLeader *node.NotLeaderError
	switch {
	case errors.Is(err, node.ErrBlacklisted):
		return validationError(node.ErrBlacklisted.Error())
	case errors.As(err, &rejected):
		return &jsonrpc.Error{Code: CodeRejected, Message: rejected.Error(), Data: appendRejections(nil, rejected.Reasons)}
	case errors.As(err, &notLeader) && compat:
		// viem shows an internal error's message, not its data: under
		// --compat the message says where to send (docs/scaling.md).
		e := internalError(err)
		e.Message = err.Error()
		return e
	}
	return internalError(err)
}

// appendRejections appends [{"error": reason}, …], one per validator.
func appendRejections(dst []byte, reasons []string) []byte {
	dst = append(dst, '[')
	for i, r := range reasons {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonrpc.AppendString(append(dst, `{"error":`...), r)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// adminFaults runs admin_blacklist and admin_setValidatorFaults
// (docs/bridge.md §8). Neither is logged: they change the simulated
// committee, not the ledger, and answer true at once.
func (c *call) adminFaults(dst []byte) ([]byte, *jsonrpc.Error) {
	obj := c.req.Param(0)
	if string(c.req.Method) == "admin_blacklist" {
		if obj == nil || obj.Type() != fastjson.TypeObject {
			return dst, errBlacklistObj
		}
		var addr *core.Address
		var hash *core.Hash
		if v := obj.Get("address"); v != nil {
			a, err := jsonrpc.ParseAddress(v)
			if err != nil {
				return dst, err
			}
			addr = (*core.Address)(&a)
		}
		if v := obj.Get("tx_hash"); v != nil {
			h, err := jsonrpc.ParseHash(v)
			if err != nil {
				return dst, err
			}
			hash = (*core.Hash)(&h)
		}
		remove := false
		if v := obj.Get("remove"); v != nil {
			b, err := v.Bool()
			if err != nil {
				return dst, jsonrpc.InvalidParams("remove must be a boolean")
			}
			remove = b
		}
		if err := c.s.node.Blacklist(addr, hash, remove); err != nil {
			return dst, jsonrpc.InvalidParams(err.Error())
		}
		return append(dst, "true"...), nil
	}
	if obj == nil || obj.Type() != fastjson.TypeObject {
		return dst, errFaultsObj
	}
	var f node.Faults
	for _, p := range []struct {
		key string
		dst *int
	}{{"reject", &f.Reject}, {"silent", &f.Silent}} {
		if v := obj.Get(p.key); v != nil {
			x, err := v.Int()
			if err != nil {
				return dst, jsonrpc.InvalidParams(strconv.Quote(p.key) + " must be an integer")
			}
			*p.dst = x
		}
	}
	if v := obj.Get("reason"); v != nil {
		b, err := v.StringBytes()
		if err != nil {
			return dst, jsonrpc.InvalidParams(`"reason" must be a string`)
		}
		f.Reason = string(b)
	}
	if err := c.s.node.SetValidatorFaults(f); err != nil {
		return dst, jsonrpc.InvalidParams(err.Error())
	}
	return append(dst, "true"...), nil
}
