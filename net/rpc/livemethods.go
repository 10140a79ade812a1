package rpc

import (
	"math"
	"slices"
	"strconv"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/attest"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/node"
	"github.com/valyala/fastjson"
)

// Methods of the live network's JSON-RPC (doc/api-reference/json-rpc/
// openapi.yaml, prefix pod_) that report on the node itself, under the
// svc_ prefix: svc_status, svc_getPrecompiles, svc_getPrecompileInfo and
// svc_getValidatorStatus (docs/compat.md, "The live network's node
// methods"). Each answers from the node's state, never from a constant.

// precompile is an enshrined application as svc_getPrecompiles lists it:
// its address, its name, and its callable interface (the functions a
// client may call, human-readable, as svc_getPrecompileInfo answers it).
type precompile struct {
	addr  core.Address
	name  string
	iface string
}

// precompiles lists the enshrined applications in address order.
var precompiles = [...]precompile{
	{core.MintAddress, "Mint", "function mint(address to, (address token, uint256 amount)[] tokens, bool depositToClob)"},
	{core.BridgeAddress, "Bridge", "function withdraw(address token, address recipient, uint256 amount, uint128 deadline)"},
	{core.OrderbookAddress, "CLOB", "function submitOrder(bytes32 orderbookId, int256 size, uint256 price, uint8 orderType, uint128 deadline, uint128 ttl, uint8 flags); " +
		"function cancel(bytes32 orderbookId, bytes32 orderId, uint128 deadline); " +
		"function update(bytes32 orderbookId, bytes32 orderId, uint256 newSize, uint256 newPrice, address token, uint128 deadline); " +
		"function submitTrigger(bytes32 orderbookId, int256 size, uint256 limitPrice, uint256 triggerPrice, uint8 triggerType, uint8 grouping, uint128 deadline, uint128 ttl, bool reduceOnly, bool ioc); " +
		"function cancelTrigger(bytes32 orderbookId, bytes32 triggerId, uint128 deadline); " +
		"function updateTrigger(bytes32 orderbookId, bytes32 triggerId, int256 size, uint256 limitPrice, uint256 triggerPrice, uint128 deadline); " +
		"function transfer(address token, address to, uint256 amount, uint128 deadline); " +
		"function submitBatch(bytes[] inner); " +
		"function delegated(address master, uint64 validUntil, bytes signature, bytes inner); " +
		"function balanceOf(address token, address account) view returns (int256); " +
		"function withdrawableBalance(address token, address account) view returns (uint256)"},
	{core.RecoveryAddress, "Recovery", "function recover(bytes32 txHash, uint64 nonce)"},
}

var errNotPrecompile = jsonrpc.InvalidParams("address: not an enshrined precompile (svc_getPrecompiles lists them)")

// status answers svc_status: {read_only}, true while the committee's
// faults refuse every transaction.
func (c *call) status(dst []byte) []byte {
	dst = append(dst, `{"read_only":`...)
	dst = strconv.AppendBool(dst, c.s.node.ReadOnly())
	return append(dst, '}')
}

// getPrecompiles answers svc_getPrecompiles: [{address, name}].
func (c *call) getPrecompiles(dst []byte) []byte {
	dst = append(dst, '[')
	for i := range precompiles {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendPrecompile(append(dst, '{'), &precompiles[i])
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// getPrecompileInfo answers svc_getPrecompileInfo [address]:
// {address, name, interface}.
func (c *call) getPrecompileInfo(dst []byte) ([]byte, *jsonrpc.Error) {
	a, err := c.address(0)
	if err != nil {
		return dst, err
	}
	for i := range precompiles {
		if p := &precompiles[i]; p.addr == a {
			dst = appendPrecompile(append(dst, '{'), p)
			dst = jsonrpc.AppendString(append(dst, `,"interface":`...), p.iface)
			return append(dst, '}'), nil
		}
	}
	return dst, errNotPrecompile
}

func appendPrecompile(dst []byte, p *precompile) []byte {
	dst = jsonrpc.AppendData(append(dst, `"address":`...), p.addr[:])
	return jsonrpc.AppendString(append(dst, `,"name":`...), p.name)
}

// validatorStatus answers svc_getValidatorStatus. The node runs the whole
// simulated committee, not one validator of it: validator_index and
// validator_address are null, as on the live network's full nodes.
// append_log_sequence is the intent log's sequence (inputs applied),
// current_ppt the past-perfect time, last_executed_batch the newest auction
// tick (null before any) and next_solution_deadline the next one on the
// auction grid.
func (c *call) validatorStatus(dst []byte) []byte {
	n := c.s.node
	info := n.Committee()
	dst = append(dst, `{"validator_index":null,"validator_address":null,"append_log_sequence":`...)
	dst = strconv.AppendUint(dst, n.Seq(), 10)
	dst = strconv.AppendInt(append(dst, `,"current_ppt":`...), n.PastPerfectTime(), 10)
	if last := n.LastTickUs(); last > 0 {
		dst = strconv.AppendInt(append(dst, `,"last_executed_batch":`...), last, 10)
		dst = strconv.AppendInt(append(dst, `,"next_solution_deadline":`...), last+clob.TransferIntervalUs, 10)
	} else {
		dst = append(dst, `,"last_executed_batch":null,"next_solution_deadline":null`...)
	}
	dst = strconv.AppendInt(append(dst, `,"quorum":`...), int64(info.Quorum), 10)
	dst = strconv.AppendInt(append(dst, `,"committee_size":`...), int64(len(info.Members)), 10)
	return append(dst, '}')
}

// Bounds of the listings below (docs/limits.md).
const (
	// VoteBatchesMax and VoteBatchHashesMax bound one svc_getVoteBatches
	// answer: at most this many batches, and none after the one that
	// brings the transaction hashes to VoteBatchHashesMax (a batch holds
	// up to attest.MaxBatchLeaves); the client asks again from the next
	// sequence number.
	VoteBatchesMax     = 100
	VoteBatchHashesMax = 10_000
	// TxHashesMax bounds svc_getTransactions' hash list.
	TxHashesMax = 256
	// TxListScanMax bounds the history records one svc_listTransactions
	// looks at while filtering (by direction, and signed transactions
	// only): a sparse filter answers with what it found among them.
	TxListScanMax = 10 * node.ListLimitMax
)

var (
	errVoteSeqFrom  = jsonrpc.InvalidParams("from_sequence: want a non-negative integer or null")
	errVoteSeqTo    = jsonrpc.InvalidParams("to_sequence: want a non-negative integer or null")
	errVoteSeqOrder = jsonrpc.InvalidParams("to_sequence: below from_sequence")
	errVotesNonce   = jsonrpc.InvalidParams("nonce: want a non-negative integer")
	errTxHashes     = jsonrpc.InvalidParams("tx_hashes: want an array of 0x-prefixed 32-byte hashes")
	errTxHashesMax  = jsonrpc.InvalidParams("tx_hashes: at most " + strconv.Itoa(TxHashesMax) + " hashes")
	errTxFrom       = jsonrpc.InvalidParams("from_account: want a 0x-prefixed 20-byte hex address or null")
	errTxTo         = jsonrpc.InvalidParams("to_account: want a 0x-prefixed 20-byte hex address or null")
	errTxLimit      = jsonrpc.InvalidParams("limit: want an integer from 1 to " + strconv.Itoa(node.ListLimitMax) + " or null")
)

// optionalUint reads array param i as a non-negative integer (a JSON number
// or a hex quantity); absent or null is def.
func (c *call) optionalUint(i int, def uint64, bad *jsonrpc.Error) (uint64, *jsonrpc.Error) {
	v := c.req.Param(i)
	if v == nil || v.Type() == fastjson.TypeNull {
		return def, nil
	}
	n, err := jsonrpc.ParseQuantity(v)
	if err != nil {
		return 0, bad
	}
	return n, nil
}

// optionalAddress reads array param i as an address; absent or null is
// nil.
func (c *call) optionalAddress(i int, bad *jsonrpc.Error) (*core.Address, *jsonrpc.Error) {
	v := c.req.Param(i)
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil, nil
	}
	a, err := jsonrpc.ParseAddress(v)
	if err != nil {
		return nil, bad
	}
	return (*core.Address)(&a), nil
}

// voteBatches answers svc_getVoteBatches [from_sequence?, to_sequence?]:
// the committee's attestation batches with sequence numbers in [from, to]
// (both inclusive; null: from the first, up to the newest), oldest first,
// each {sequence_number, epoch, timestamp, root, digest, tx_hashes, votes:
// [{validator_index, validator_address, signature}]}: a vote is a
// validator's signature over the batch's digest, which covers every record
// in tx_hashes (docs/compat.md, "Votes").
func (c *call) voteBatches(dst []byte) ([]byte, *jsonrpc.Error) {
	from, err := c.optionalUint(0, 0, errVoteSeqFrom)
	if err != nil {
		return dst, err
	}
	to, err := c.optionalUint(1, math.MaxUint64, errVoteSeqTo)
	if err != nil {
		return dst, err
	}
	if to < from {
		return dst, errVoteSeqOrder
	}
	bs, rerr := c.s.node.VoteBatches(from, to, VoteBatchesMax, VoteBatchHashesMax)
	if rerr != nil {
		return dst, internalError(rerr)
	}
	members := c.s.node.Committee().Members
	dst = append(dst, '[')
	for i := range bs {
		b := &bs[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendUint(append(dst, `{"sequence_number":`...), b.Seq, 10)
		dst = strconv.AppendUint(append(dst, `,"epoch":`...), b.Epoch, 10)
		dst = strconv.AppendInt(append(dst, `,"timestamp":`...), b.TimeUs, 10)
		dst = jsonrpc.AppendData(append(dst, `,"root":`...), b.Root[:])
		digest := attest.Digest(b.Epoch, b.Seq, b.TimeUs, b.Root)
		dst = jsonrpc.AppendData(append(dst, `,"digest":`...), digest[:])
		dst = append(dst, `,"tx_hashes":[`...)
		for k := range b.Hashes {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = jsonrpc.AppendData(dst, b.Hashes[k][:])
		}
		dst = append(dst, `],"votes":[`...)
		for k := range b.Sigs {
			if k > 0 {
				dst = append(dst, ',')
			}
			s := &b.Sigs[k]
			dst = strconv.AppendInt(append(dst, `{"validator_index":`...), int64(slices.Index(members, s.Validator)), 10)
			dst = jsonrpc.AppendData(append(dst, `,"validator_address":`...), s.Validator[:])
			dst = jsonrpc.AppendData(append(dst, `,"signature":`...), s.Signature[:])
			dst = append(dst, '}')
		}
		dst = append(dst, "]}"...)
	}
	return append(dst, ']'), nil
}

// getVotes answers svc_getVotes [account, nonce]: the votes on the
// account's transaction at nonce while it is pending (applied, not yet
// attested), else null (never seen, or final), as txStatus reports them.
func (c *call) getVotes(dst []byte) ([]byte, *jsonrpc.Error) {
	a, err := c.address(0)
	if err != nil {
		return dst, err
	}
	v := c.req.Param(1)
	if v == nil {
		return dst, missingParam(1)
	}
	nonce, err := jsonrpc.ParseQuantity(v)
	if err != nil {
		return dst, errVotesNonce
	}
	n := c.s.node
	info := n.AccountInfo(a)
	r, pending := pendingNewest(n, &info)
	if !pending || info.Newest.Nonce != nonce {
		return append(dst, "null"...), nil
	}
	committee := n.Committee()
	return appendNonceVotes(dst, &committee, &r.Rec.Tx, pendingVoters(n, &r)), nil
}

// getTransactions answers svc_getTransactions [tx_hashes]: the transactions
// the node knows among them (durable, attested or not), in the order asked,
// in the node's transaction shape; an unknown hash is left out.
func (c *call) getTransactions(dst []byte) ([]byte, *jsonrpc.Error) {
	v := c.req.Param(0)
	if v == nil {
		return dst, missingParam(0)
	}
	hs, e := v.Array()
	switch {
	case e != nil:
		return dst, errTxHashes
	case len(hs) > TxHashesMax:
		return dst, errTxHashesMax
	}
	want := make([]core.Hash, len(hs))
	for i, h := range hs {
		var err *jsonrpc.Error
		if want[i], err = jsonrpc.ParseHash(h); err != nil {
			return dst, errTxHashes
		}
	}
	dst = append(dst, '[')
	first := true
	for _, h := range want {
		r, ok := c.s.node.Lookup(h)
		if !ok {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendTx(dst, &r, c.s.shape)
	}
	return append(dst, ']'), nil
}

// listTransactions answers svc_listTransactions [from_account?, to_account?,
// limit?]: the attested signed transactions (not deposits nor ticks) sent
// by from_account and to to_account (null: any), newest first, at most
// limit (default node.ListLimitDefault, at most node.ListLimitMax), among
// the newest TxListScanMax records of the history that could match (those
// of the account when one is named).
func (c *call) listTransactions(dst []byte) ([]byte, *jsonrpc.Error) {
	from, err := c.optionalAddress(0, errTxFrom)
	if err != nil {
		return dst, err
	}
	to, err := c.optionalAddress(1, errTxTo)
	if err != nil {
		return dst, err
	}
	limit, err := c.optionalUint(2, node.ListLimitDefault, errTxLimit)
	if err != nil || limit < 1 || limit > node.ListLimitMax {
		return dst, errTxLimit
	}
	q := node.ListQuery{Account: from, After: -1, NewestFirst: true, Limit: node.ListLimitMax}
	if from == nil {
		q.Account = to
	}
	dst = append(dst, '[')
	found := 0
	for scanned := 0; scanned < TxListScanMax && found < int(limit); {
		items, next, lerr := c.s.node.ListReceipts(&q)
		if lerr != nil {
			return dst, internalError(lerr)
		}
		scanned += len(items)
		for i := range items {
			tx := &items[i].Rec.Tx
			if items[i].Rec.Kind != core.RecordTx || from != nil && tx.From != *from || to != nil && (!tx.HasTo || tx.To != *to) {
				continue
			}
			if found > 0 {
				dst = append(dst, ',')
			}
			dst = appendTx(dst, &items[i], c.s.shape)
			if found++; found == int(limit) {
				break
			}
		}
		if next < 0 {
			break
		}
		q.After = next
	}
	return append(dst, ']'), nil
}
