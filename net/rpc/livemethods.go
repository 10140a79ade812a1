package rpc

import (
	"strconv"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
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
