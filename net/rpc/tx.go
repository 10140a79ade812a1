package rpc

import (
	"bytes"
	"math/big"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/ethtx"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/server"
)

// SendTimeoutMaxMs caps eth_sendRawTransaction's optional wait for
// confirmation.
const SendTimeoutMaxMs = 60_000

var errFieldOverflow = jsonrpc.InvalidParams("invalid raw transaction: a field exceeds 256 bits")

// sendRawTransaction decodes and recovers the transaction here, on the
// caller's goroutine (an event loop: recovery runs in parallel across
// loops), then hands it to the sequencer. On a worker it waits for
// durability in place; on an event loop (a lone call, over HTTP or
// WebSocket) it answers later, from the node's writer, and holds nothing
// meanwhile.
func (c *call) sendRawTransaction(dst []byte) ([]byte, *jsonrpc.Error) {
	ctx, perr := c.rawTx()
	if perr != nil {
		return dst, perr
	}
	var timeoutMs uint64
	if p := c.req.Param(1); p != nil {
		if timeoutMs, perr = jsonrpc.ParseQuantity(p); perr != nil {
			return dst, perr
		}
		timeoutMs = min(timeoutMs, SendTimeoutMaxMs)
	}
	return c.send(dst, &ctx, time.Duration(timeoutMs)*time.Millisecond, false)
}

// rawTx decodes param 0, a signed raw transaction, recovers its sender and
// prepares what the ledger needs of an orderbook call (toCoreTx); with the
// rate limits on, it charges the transaction (limitTx).
func (c *call) rawTx() (core.Tx, *jsonrpc.Error) {
	v := c.req.Param(0)
	if v == nil {
		return core.Tx{}, missingParam(0)
	}
	raw, perr := jsonrpc.ParseData(c.sc.buf[:0], v)
	c.sc.buf = raw[:0]
	if perr != nil {
		return core.Tx{}, perr
	}
	tx, err := ethtx.Decode(raw)
	if err != nil {
		return core.Tx{}, jsonrpc.InvalidParams("invalid raw transaction: " + err.Error())
	}
	from, err := ethtx.Sender(tx)
	if err != nil {
		return core.Tx{}, jsonrpc.InvalidParams("invalid raw transaction: " + err.Error())
	}
	c.tieSender(core.Address(from)) // lab_delivery.go
	ct, perr := toCoreTx(tx, core.Address(from))
	if perr == nil && c.rl != nil { // rate limits: charged once the signer and the calls are known
		perr = c.limitTx(&ct)
	}
	return ct, perr
}

// send submits tx and answers once it is durable, or with a timeout once it
// is attested (or the timeout passed). sync is svc_sendRawTransaction's
// answer (sendsync.go) instead of the hash.
func (c *call) send(dst []byte, tx *core.Tx, timeout time.Duration, sync bool) ([]byte, *jsonrpc.Error) {
	if c.worker {
		return c.sendBlocking(dst, tx, timeout, sync)
	}
	r := new(reply)
	c.owe(&r.owed)
	c.sendDeferred(r, tx, timeout, sync)
	return dst, errDeferred
}

// sendBlocking submits and waits in place (on a worker).
func (c *call) sendBlocking(dst []byte, tx *core.Tx, timeout time.Duration, sync bool) ([]byte, *jsonrpc.Error) {
	durable := make(chan error, 1)
	var dissent []string
	rej, err := c.s.node.SubmitTxVotes(tx, &dissent, func(_ *node.Entry, err error) { durable <- err })
	if err == nil {
		if !rej.OK() {
			return dst, rejectError(&rej, tx, c.s.cfg.Compat)
		}
		err = <-durable
	}
	if err != nil {
		return dst, submitError(err, c.s.cfg.Compat)
	}
	attested := false
	if timeout > 0 {
		done := make(chan struct{})
		c.s.node.OnAttested(tx.Hash, func() { close(done) })
		select {
		case <-done:
			attested = true
		case <-time.After(timeout):
		}
	}
	return appendSendResult(dst, c.s.node, tx.Hash, attested || timeout == 0, sync, dissent), nil
}

// owed is the answer a call on an event loop gives later, exactly once,
// through d (HTTP) or ws (WebSocket): a lone send's (reply) or a wait's
// (pptWaiter).
type owed struct {
	d    *server.Deferred
	ws   *server.WSConn
	id   []byte // copied: the request buffer is gone by the time we answer
	done atomic.Bool
	errs *atomic.Uint64 // the method's error count (stats.go)
}

// owe makes o the answer of the call, which returns errDeferred: over
// WebSocket, ServeWS keeps the connection's in-flight slot until o is
// answered.
// REQUIRES: the call runs on an event loop (not c.worker), alone.
func (c *call) owe(o *owed) {
	if c.w != nil {
		o.d = c.w.Defer()
	} else {
		c.sc.deferred = true
		o.ws = c.ws
	}
	o.errs = &c.counts().errors
	if c.req.ID != nil {
		o.id = bytes.Clone(c.req.ID)
	}
}

// reply answers a deferred send.
type reply struct {
	owed
	node    *node.Node
	hash    core.Hash
	timeout time.Duration
	sync    bool
	dissent []string // the validators that rejected it, fewer than f + 1
}

// sendDeferred hands tx to the admission stage (admit.go), which submits
// it and answers through r (owed by the call); the event loop goes on at
// once.
func (c *call) sendDeferred(r *reply, tx *core.Tx, timeout time.Duration, sync bool) {
	r.node, r.hash, r.timeout, r.sync = c.s.node, tx.Hash, timeout, sync
	if err := c.s.admit(r, tx); err != nil {
		r.fail(err)
	}
}

// durable runs on the node's writer once the transaction is on disk.
func (r *reply) durable(_ *node.Entry, err error) {
	switch {
	case err != nil:
		r.fail(internalError(err))
	case r.timeout == 0:
		r.answer(true)
	default:
		r.node.OnAttested(r.hash, func() { r.answer(true) })
		time.AfterFunc(r.timeout, func() { r.answer(false) })
	}
}

// answer sends the result: the transaction was attested (or no wait was
// asked for), or the wait timed out.
func (r *reply) answer(attested bool) {
	r.resolve(func(dst []byte) []byte { return appendSendResult(dst, r.node, r.hash, attested, r.sync, r.dissent) })
}

// resolve answers with the result appendResult appends, unless o was
// answered already.
func (o *owed) resolve(appendResult func(dst []byte) []byte) {
	if !o.done.CompareAndSwap(false, true) {
		return
	}
	if o.id == nil { // a notification: executed, not answered
		o.complete(nil)
		return
	}
	body := jsonrpc.AppendResultPrefix(make([]byte, 0, 128), o.id)
	o.complete(jsonrpc.AppendResultSuffix(appendResult(body)))
}

// appendSendResult appends a send's result: for eth_sendRawTransaction the
// hash, or the zero hash when the wait timed out (the spec's "not yet
// available"); for svc_sendRawTransaction the votes (sendsync.go).
func appendSendResult(dst []byte, n *node.Node, h core.Hash, attested, sync bool, dissent []string) []byte {
	if sync {
		return appendVotes(dst, n, h, dissent)
	}
	if !attested {
		h = core.Hash{}
	}
	return jsonrpc.AppendData(dst, h[:])
}

// fail answers with e, unless o was answered already.
func (o *owed) fail(e *jsonrpc.Error) {
	if !o.done.CompareAndSwap(false, true) {
		return
	}
	o.errs.Add(1)
	if o.id == nil {
		o.complete(nil)
		return
	}
	o.complete(jsonrpc.AppendError(nil, o.id, e))
}

// complete hands the answer (nil: none) to the transport.
func (o *owed) complete(body []byte) {
	if o.d != nil {
		o.d.Complete(200, body)
		return
	}
	wsOwed(o.ws, body)
}

// toCoreTx converts a decoded transaction to the ledger's input form.
func toCoreTx(tx *types.Transaction, from core.Address) (core.Tx, *jsonrpc.Error) {
	ct := core.Tx{
		Hash:    core.Hash(tx.Hash()),
		Type:    tx.Type(),
		ChainID: ethtx.ChainID(tx),
		Nonce:   tx.Nonce(),
		From:    from,
		Gas:     tx.Gas(),
		Data:    bytes.Clone(tx.Data()),
	}
	if to := tx.To(); to != nil {
		ct.To, ct.HasTo = core.Address(*to), true
	}
	v, r, s := tx.RawSignatureValues()
	for _, f := range []struct {
		dst *uint256.Int
		src *big.Int
	}{{&ct.Value, tx.Value()}, {&ct.GasTipCap, tx.GasTipCap()}, {&ct.GasFeeCap, tx.GasFeeCap()}, {&ct.V, v}, {&ct.R, r}, {&ct.S, s}} {
		if f.dst.SetFromBig(f.src) {
			return ct, errFieldOverflow
		}
	}
	for _, t := range tx.AccessList() {
		at := core.AccessTuple{Address: core.Address(t.Address)}
		for _, k := range t.StorageKeys {
			at.StorageKeys = append(at.StorageKeys, core.Hash(k))
		}
		ct.AccessList = append(ct.AccessList, at)
	}
	// An orderbook call is decoded here too, its delegation certificate
	// recovered and its order ids hashed: on the caller's goroutine, in
	// parallel, rather than under the sequencer's lock (core.PrepareTx).
	core.PrepareTx(&ct)
	return ct, nil
}
