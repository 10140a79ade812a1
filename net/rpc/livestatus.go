package rpc

import (
	"encoding/hex"
	"slices"
	"strconv"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/attest"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/net/node"
)

// The live network's account and solver diagnostics (openapi.yaml's
// pod_getValidatorAccountStatus, pod_getAccountDiagnostics and
// pod_getSolverState) under the svc_ prefix, answered from the node's
// account views, its committee and its newest auction tick
// (docs/compat.md, "Account and solver diagnostics").

// PendingNoncesMax bounds svc_getValidatorAccountStatus' pending_nonces:
// the newest this many nonces of the window, as the openapi caps it.
const PendingNoncesMax = 256

var (
	errStatusValidator = jsonrpc.InvalidParams("validator: want a 0x-prefixed 20-byte hex address")
	errStatusAccount   = jsonrpc.InvalidParams("account: want a 0x-prefixed 20-byte hex address")
)

// addressParam reads array param i as an address; bad names it when it is
// not one.
func (c *call) addressParam(i int, bad *jsonrpc.Error) (core.Address, *jsonrpc.Error) {
	a, err := c.optionalAddress(i, bad)
	switch {
	case err != nil:
		return core.Address{}, err
	case a == nil:
		return core.Address{}, missingParam(i)
	}
	return *a, nil
}

// pendingNewest returns the receipt of the account's newest transaction
// while it is pending (applied, not yet attested); false when it has none
// or it is attested.
func pendingNewest(n *node.Node, info *node.AccountInfo) (node.Receipt, bool) {
	if !info.Pending() {
		return node.Receipt{}, false
	}
	r, _ := n.Lookup(info.Newest.Hash)
	return r, r.Rec != nil && !r.Attested // attested since the reading
}

// accountWindow is an account's pending window as the live validators see
// it: the nonces [nextFinalized, info.Expected) are applied and not yet
// final. The node attests in apply order and names only the newest
// transaction while it is pending, so the window holds at most that one
// (tx, pending), with its voters.
type accountWindow struct {
	info          node.AccountInfo
	nextFinalized uint64
	pending       bool
	tx            core.TxRef
	voters        []int
}

func readAccountWindow(n *node.Node, a core.Address) accountWindow {
	w := accountWindow{info: n.AccountInfo(a)}
	w.nextFinalized = w.info.Expected
	if r, ok := pendingNewest(n, &w.info); ok {
		w.pending, w.tx, w.voters = true, w.info.Newest, pendingVoters(n, &r)
		w.nextFinalized = w.tx.Nonce
	}
	return w
}

// voted reports whether member i voted for the pending transaction.
func (w *accountWindow) voted(i int) bool { return w.pending && slices.Contains(w.voters, i) }

// appendVote appends the live ValidatorVoteKind of member i at nonce: tx
// with its hash, or not_seen (the simulated validators never vote BOT).
func (w *accountWindow) appendVote(dst []byte, i int, nonce uint64) []byte {
	if !w.voted(i) || nonce != w.tx.Nonce {
		return append(dst, `{"kind":"not_seen"}`...)
	}
	dst = jsonrpc.AppendData(append(dst, `{"kind":"tx","tx_hash":`...), w.tx.Hash[:])
	return append(dst, '}')
}

// appendMember appends validator_index and validator_address of member i,
// an object's first fields.
func appendMember(dst []byte, info *attest.Info, i int) []byte {
	dst = strconv.AppendInt(append(dst, `"validator_index":`...), int64(i), 10)
	return jsonrpc.AppendData(append(dst, `,"validator_address":`...), info.Members[i][:])
}

// validatorAccountStatus answers svc_getValidatorAccountStatus [validator,
// account]: how the validator voted at each of the account's pending
// nonces, {validator_index, validator_address, account,
// account_next_finalized_nonce, account_expected_nonce, quorum,
// pending_nonces: [{nonce, vote}]}; null for a validator outside the
// committee.
func (c *call) validatorAccountStatus(dst []byte) ([]byte, *jsonrpc.Error) {
	v, err := c.addressParam(0, errStatusValidator)
	if err != nil {
		return dst, err
	}
	a, err := c.addressParam(1, errStatusAccount)
	if err != nil {
		return dst, err
	}
	n := c.s.node
	committee := n.Committee()
	i := slices.Index(committee.Members, [20]byte(v))
	if i < 0 {
		return append(dst, "null"...), nil
	}
	w := readAccountWindow(n, a)
	dst = appendMember(append(dst, '{'), &committee, i)
	dst = jsonrpc.AppendData(append(dst, `,"account":`...), a[:])
	dst = strconv.AppendUint(append(dst, `,"account_next_finalized_nonce":`...), w.nextFinalized, 10)
	dst = strconv.AppendUint(append(dst, `,"account_expected_nonce":`...), w.info.Expected, 10)
	dst = strconv.AppendInt(append(dst, `,"quorum":`...), int64(committee.Quorum), 10)
	dst = append(dst, `,"pending_nonces":[`...)
	from := w.nextFinalized
	if w.info.Expected-from > PendingNoncesMax {
		from = w.info.Expected - PendingNoncesMax // the oldest are left out
	}
	for k := from; k < w.info.Expected; k++ {
		if k > from {
			dst = append(dst, ',')
		}
		dst = strconv.AppendUint(append(dst, `{"nonce":`...), k, 10)
		dst = w.appendVote(append(dst, `,"vote":`...), i, k)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...), nil
}

// accountDiagnostics answers svc_getAccountDiagnostics [account]: the
// account's nonces, lock and recovery target, each validator's vote on its
// pending window, and whether it has an order waiting for the next auction
// tick. Nothing equivocates here: the sequencer admits one transaction per
// nonce and locks an account that sends a conflicting one.
func (c *call) accountDiagnostics(dst []byte) ([]byte, *jsonrpc.Error) {
	a, err := c.addressParam(0, errStatusAccount)
	if err != nil {
		return dst, err
	}
	n := c.s.node
	committee := n.Committee()
	w := readAccountWindow(n, a)
	var last core.Hash // zero while the account has no final transaction
	if w.info.HasFinalized {
		last = w.info.Finalized.Hash
	}
	dst = jsonrpc.AppendData(append(dst, `{"account":`...), a[:])
	dst = strconv.AppendUint(append(dst, `,"next_finalized_nonce":`...), w.nextFinalized, 10)
	dst = strconv.AppendUint(append(dst, `,"expected_nonce":`...), w.info.Expected, 10)
	dst = jsonrpc.AppendData(append(dst, `,"last_finalized_tx":`...), last[:])
	dst = strconv.AppendBool(append(dst, `,"is_locked":`...), w.info.Locked)
	dst = strconv.AppendInt(append(dst, `,"quorum":`...), int64(committee.Quorum), 10)
	dst = append(dst, `,"validators":[`...)
	for i := range committee.Members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendMember(append(dst, '{'), &committee, i)
		if w.voted(i) {
			dst = strconv.AppendUint(append(dst, `,"highest_attested_nonce":`...), w.tx.Nonce, 10)
		} else {
			dst = append(dst, `,"highest_attested_nonce":null`...)
		}
		dst = w.appendVote(append(dst, `,"current_vote":`...), i, w.info.Expected-1)
		dst = append(dst, `,"equivocating":false}`...)
	}
	dst = strconv.AppendBool(append(dst, `],"needs_recovery":`...), w.info.Locked)
	if w.info.Locked {
		dst = appendTargetTx(append(dst, `,"recovery_target":`...), w.info.Newest)
	} else {
		dst = append(dst, `,"recovery_target":null`...)
	}
	dst = strconv.AppendBool(append(dst, `,"has_clob_order_pending_solution":`...), c.hasPendingOrder(a))
	return append(dst, `,"equivocating":false}`...), nil
}

// hasPendingOrder reports whether a owns an order admitted and not yet
// drained by an auction tick (ob_getOrders' status pending; a delegated
// order counts for its master, its owner), from the market index
// (marketdata.Index.HasPending bounds the walk).
func (c *call) hasPendingOrder(a core.Address) bool {
	var found bool
	c.s.node.ReadIndex(func(x *marketdata.Index) { found = x.HasPending(clob.Address(a)) })
	return found
}

// solverState answers svc_getSolverState: {solver_address, solver_pub_key,
// next_finalized_nonce, last_executed_batch, last_generated_batch,
// next_solution_votes}. The node is its own solver: its auction ticks are
// records sent by the orderbook address, applied as the sequencer runs
// them (generated and executed at once: both batches are the newest tick),
// and voted on by the committee until attested: next_solution_votes maps
// the newest tick's hash to its voters while it is pending, and is empty
// once it is final. The node holds no key of the orderbook address; the
// public key is that of committee member 0, whose signature is on every
// batch the committee signs with all its members.
func (c *call) solverState(dst []byte) []byte {
	n := c.s.node
	w := readAccountWindow(n, core.OrderbookAddress)
	dst = jsonrpc.AppendData(append(dst, `{"solver_address":`...), core.OrderbookAddress[:])
	dst = hex.AppendEncode(append(dst, `,"solver_pub_key":"`...), n.ValidatorKey(0))
	dst = strconv.AppendUint(append(dst, `","next_finalized_nonce":`...), w.nextFinalized, 10)
	t, ok := n.LastTick()
	if !ok {
		return append(dst, `,"last_executed_batch":null,"last_generated_batch":null,"next_solution_votes":{}}`...)
	}
	batch := func(dst []byte) []byte {
		dst = strconv.AppendInt(append(dst, `{"deadline":`...), t.Us, 10)
		dst = jsonrpc.AppendData(append(dst, `,"tx_hash":`...), t.Hash[:])
		return append(dst, '}')
	}
	dst = batch(append(dst, `,"last_executed_batch":`...))
	dst = batch(append(dst, `,"last_generated_batch":`...))
	dst = append(dst, `,"next_solution_votes":{`...)
	if r, _ := n.Lookup(t.Hash); r.Rec != nil && !r.Attested {
		dst = jsonrpc.AppendData(dst, t.Hash[:])
		dst = append(dst, `:[`...)
		for k, i := range pendingVoters(n, &r) {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(i), 10)
		}
		dst = append(dst, ']')
	}
	return append(dst, "}}"...)
}
