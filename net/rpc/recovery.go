package rpc

import (
	"strconv"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/valyala/fastjson"
)

// Account locks and recovery on the wire (docs/bridge.md §7, §9).

// CodeAccountLocked is the spec's 999 for a transaction from a locked
// account.
const CodeAccountLocked = 999

// lockedError is 999 `Account locked` with data
// {recovery_target, recovery_target_nonce} (the nonce a JSON number).
func lockedError(t core.TxRef) *jsonrpc.Error {
	d := jsonrpc.AppendData([]byte(`{"recovery_target":`), t.Hash[:])
	d = strconv.AppendUint(append(d, `,"recovery_target_nonce":`...), t.Nonce, 10)
	return &jsonrpc.Error{Code: CodeAccountLocked, Message: "Account locked", Data: append(d, '}')}
}

// appendTargetTx appends the live API's TargetTx, {hash, nonce}, with the
// hash once more as txHash: the live recovery guide and its SDKs read
// {txHash, nonce}, so both kinds of client find it.
func appendTargetTx(dst []byte, t core.TxRef) []byte {
	dst = jsonrpc.AppendData(append(dst, `{"hash":`...), t.Hash[:])
	dst = jsonrpc.AppendData(append(dst, `,"txHash":`...), t.Hash[:])
	dst = strconv.AppendUint(append(dst, `,"nonce":`...), t.Nonce, 10)
	return append(dst, '}')
}

// accountRead answers svc_getRecoveryTargetTx, svc_getAccountInfo and
// svc_getLastFinalizedNonce, each [address]: the live API's shapes, null
// where it answers null (an open account, no finalized transaction).
func (c *call) accountRead(dst []byte) ([]byte, *jsonrpc.Error) {
	a, err := c.address(0)
	if err != nil {
		return dst, err
	}
	n := c.s.node
	if string(c.req.Method) == "svc_getRecoveryTargetTx" {
		t, locked := n.RecoveryTarget(a)
		if !locked {
			return append(dst, "null"...), nil
		}
		return appendTargetTx(dst, t), nil
	}
	info := n.AccountInfo(a)
	switch {
	case !info.HasFinalized:
		return append(dst, "null"...), nil
	case string(c.req.Method) == "svc_getLastFinalizedNonce":
		return strconv.AppendUint(dst, info.Finalized.Nonce, 10), nil
	}
	dst = strconv.AppendUint(append(dst, `{"next_finalized_nonce":`...), info.Finalized.Nonce+1, 10)
	dst = strconv.AppendUint(append(dst, `,"expected_nonce":`...), info.Expected, 10)
	dst = jsonrpc.AppendData(append(dst, `,"last_finalized_tx":`...), info.Finalized.Hash[:])
	return append(dst, '}'), nil
}

var errNothingToLock = jsonrpc.InvalidParams("the account has no transaction to be its recovery target: it cannot be locked")

// adminLockAccount locks {address} as an equivocation would and answers
// its recovery target ({hash, nonce}) once the lock is durable.
func (c *call) adminLockAccount(dst []byte) ([]byte, *jsonrpc.Error) {
	obj := c.req.Param(0)
	if obj == nil || obj.Type() != fastjson.TypeObject {
		return dst, jsonrpc.InvalidParams("admin_lockAccount needs an object {address}")
	}
	a, err := requiredAddress(obj, "address")
	if err != nil {
		return dst, err
	}
	done := make(chan error, 1)
	target, rej, serr := c.s.node.LockAccount(a, func(err error) { done <- err })
	switch {
	case serr != nil:
		return dst, internalError(serr)
	case !rej.OK():
		return dst, errNothingToLock
	}
	if err := waitDurable(done); err != nil {
		return dst, err
	}
	return appendTargetTx(dst, target), nil
}
