package rpc

import (
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/attest"
	"github.com/ledgervenue/node/net/node"
	"github.com/valyala/fastjson"
)

// svc_sendRawTransaction's wait for the attestations (docs/bridge.md §9),
// in seconds, as the live network's: its second parameter, default
// SyncSendTimeoutDefault, clamped to SyncSendTimeoutMax.
const (
	SyncSendTimeoutDefault = 10 * time.Second
	SyncSendTimeoutMax     = 60 * time.Second
)

// syncSendRawTransaction answers svc_sendRawTransaction: the transaction is
// submitted as by eth_sendRawTransaction (same refusals), and the answer
// waits for its attestation, or the timeout, and reports the votes:
// {"tx_hash", "successes", "errors": [{"error"}, …]}.
func (c *call) syncSendRawTransaction(dst []byte) ([]byte, *jsonrpc.Error) {
	tx, perr := c.rawTx()
	if perr != nil {
		return dst, perr
	}
	timeout := SyncSendTimeoutDefault
	if p := c.req.Param(1); p != nil && p.Type() != fastjson.TypeNull {
		secs, err := jsonrpc.ParseQuantity(p)
		if err != nil {
			return dst, err
		}
		timeout = syncTimeout(secs)
	}
	return c.send(dst, &tx, timeout, true)
}

// syncTimeout is the wait a timeout_secs parameter asks for, clamped.
func syncTimeout(secs uint64) time.Duration {
	return time.Duration(min(secs, uint64(SyncSendTimeoutMax/time.Second))) * time.Second
}

// appendVotes appends svc_sendRawTransaction's result for h: successes are
// the signatures on its receipt from validators that did not reject it (0
// while it is not attested: the wait timed out); errors are the rejections
// of the minority that refused it (dissent), one per validator. The
// rejecting validators are the lowest-indexed members (node.Faults).
func appendVotes(dst []byte, n *node.Node, h core.Hash, dissent []string) []byte {
	successes := 0
	if r, _ := n.Lookup(h); r.Attested {
		rejecting := n.Committee().Members[:len(dissent)]
		for _, s := range r.Batch.Sigs {
			if !slices.Contains(rejecting, s.Validator) {
				successes++
			}
		}
	}
	dst = jsonrpc.AppendData(append(dst, `{"tx_hash":`...), h[:])
	dst = strconv.AppendInt(append(dst, `,"successes":`...), int64(successes), 10)
	dst = appendRejections(append(dst, `,"errors":`...), dissent)
	return append(dst, '}')
}

// txStatus answers svc_getTxStatus([tx_hash]) in the live network's
// shape: {"status":"not_found"}; "pending" (applied, not attested yet) with
// the votes so far: the validators that sign now, once the transaction is
// durable (they have seen it; the batch waits while they are fewer than a
// quorum); "finalized" (attested) with its outcome.
func (c *call) txStatus(dst []byte) ([]byte, *jsonrpc.Error) {
	h, err := c.hash(0)
	if err != nil {
		return dst, err
	}
	n := c.s.node
	r, _ := n.Lookup(h)
	if r.Rec == nil {
		return append(dst, `{"status":"not_found"}`...), nil
	}
	tx := &r.Rec.Tx
	head := func(dst []byte, status string) []byte {
		dst = append(append(append(dst, `{"status":"`...), status...), `","tx_hash":`...)
		dst = jsonrpc.AppendData(dst, h[:])
		dst = jsonrpc.AppendData(append(dst, `,"account":`...), tx.From[:])
		return strconv.AppendUint(append(dst, `,"nonce":`...), tx.Nonce, 10)
	}
	if r.Attested {
		dst = head(dst, "finalized")
		dst = strconv.AppendBool(append(dst, `,"success":`...), r.Rec.Status == 1)
		dst = strconv.AppendUint(append(dst, `,"gas_used":`...), r.Rec.GasUsed, 10)
		return append(dst, '}'), nil
	}
	info := n.Committee()
	dst = head(dst, "pending")
	// The node attests in apply order: the account's nonces below this
	// one are attested or ride in the same batch.
	dst = strconv.AppendUint(append(dst, `,"account_next_finalized_nonce":`...), tx.Nonce, 10)
	dst = strconv.AppendUint(append(dst, `,"account_expected_nonce":`...), n.Nonce(tx.From), 10)
	dst = strconv.AppendInt(append(dst, `,"quorum":`...), int64(info.Quorum), 10)
	dst = append(dst, `,"votes":`...)
	dst = appendNonceVotes(dst, &info, tx, pendingVoters(n, &r))
	return append(dst, '}'), nil
}

// pendingVoters are the committee indices of the validators that voted for
// r, pending: those that sign now, once it is durable (they have seen it;
// the batch waits while they are fewer than a quorum); none before.
func pendingVoters(n *node.Node, r *node.Receipt) []int {
	if !r.Durable {
		return nil
	}
	return n.SigningValidators()
}

// appendNonceVotes appends the live network's AccountNonceVotesResponse for
// tx, pending: {account, nonce, txs: [{tx_hash, voters: [{validator_index,
// validator_address}]}], bot_voters, total_tx_votes, quorum}. The sequencer
// admits one transaction per nonce, so txs has one entry; no validator
// votes BOT (bottom) here: the simulated ones vote for what it admitted.
func appendNonceVotes(dst []byte, info *attest.Info, tx *core.Tx, voters []int) []byte {
	dst = jsonrpc.AppendData(append(dst, `{"account":`...), tx.From[:])
	dst = strconv.AppendUint(append(dst, `,"nonce":`...), tx.Nonce, 10)
	dst = jsonrpc.AppendData(append(dst, `,"txs":[{"tx_hash":`...), tx.Hash[:])
	dst = append(dst, `,"voters":[`...)
	for k, i := range voters {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = appendVoter(dst, info, i)
	}
	dst = strconv.AppendInt(append(dst, `]}],"bot_voters":[],"total_tx_votes":`...), int64(len(voters)), 10)
	dst = strconv.AppendInt(append(dst, `,"quorum":`...), int64(info.Quorum), 10)
	return append(dst, '}')
}

// appendVoter appends the live network's VoterResponse of member i.
func appendVoter(dst []byte, info *attest.Info, i int) []byte {
	dst = strconv.AppendInt(append(dst, `{"validator_index":`...), int64(i), 10)
	dst = jsonrpc.AppendData(append(dst, `,"validator_address":`...), info.Members[i][:])
	return append(dst, '}')
}

// processedDeposits answers svc_getProcessedDeposits: {"watermark",
// "above_watermark"}, the live network's replay-protection set. Ids are
// 256-bit numbers: every id below watermark is processed (watermark is the
// lowest unprocessed id; 0 is never an id, so it counts as processed),
// above_watermark lists the processed ids above it, ascending. A bridged chain that numbers its deposits 1, 2, 3, … (ours does) keeps the
// list short; admin_deposit's derived ids all land in it.
func (c *call) processedDeposits(dst []byte) ([]byte, *jsonrpc.Error) {
	ids, err := c.s.node.ProcessedDeposits()
	switch {
	case errors.Is(err, node.ErrTooManyDeposits):
		return dst, jsonrpc.LimitExceeded("bridge records in the history", node.ProcessedDepositsScanMax)
	case err != nil:
		return dst, internalError(err)
	}
	w := uint256.NewInt(1) // 0 is no deposit id: a zero id asks the node to derive one
	for len(ids) > 0 && ids[0] == w.Bytes32() {
		w.AddUint64(w, 1)
		ids = ids[1:]
	}
	dst = jsonrpc.AppendQuantityU256(append(dst, `{"watermark":`...), w)
	dst = append(dst, `,"above_watermark":[`...)
	for i := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		var id uint256.Int
		id.SetBytes32(ids[i][:])
		dst = jsonrpc.AppendQuantityU256(dst, &id)
	}
	return append(dst, "]}"...), nil
}
