package rpc

import (
	"github.com/ledgervenue/node/net/node"
	"strconv"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/valyala/fastjson"
)

// ClientVersion is what web3_clientVersion reports.
const ClientVersion = "ledgerd/0.1.0"

// errDeferred tells run that the method answers later through a deferred
// response; it is never written.
var errDeferred = &jsonrpc.Error{Code: jsonrpc.CodeInternal, Message: "deferred"}

var (
	errUnauthorized = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request",
		Data: []byte(`"admin methods require the header Authorization: Bearer <admin token>"`)}
	errNoSubscriptions = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found",
		Data: []byte(`"subscriptions need a WebSocket connection"`)}
)

// dispatch appends the result value of the call's method.
func (c *call) dispatch(dst []byte) ([]byte, *jsonrpc.Error) {
	n := c.s.node
	switch string(c.req.Method) {
	case "eth_chainId":
		return jsonrpc.AppendQuantity(dst, n.ChainID()), nil
	case "eth_networkId", "net_version":
		return strconv.AppendQuote(dst, strconv.FormatUint(n.ChainID(), 10)), nil
	case "eth_blockNumber":
		return jsonrpc.AppendQuantity(dst, c.headNumber()), nil
	case "eth_gasPrice":
		fee := n.BaseFee()
		return jsonrpc.AppendQuantityU256(dst, &fee), nil
	case "eth_maxPriorityFeePerGas":
		// No block producer collects tips: the venue needs none.
		return append(dst, `"0x0"`...), nil
	case "eth_feeHistory":
		return c.feeHistory(dst)
	case "eth_getBalance":
		return c.getBalance(dst)
	case "eth_getTransactionCount":
		a, err := c.address(0)
		if err != nil {
			return dst, err
		}
		return jsonrpc.AppendQuantity(dst, n.Nonce(a)), nil
	case "eth_getTransactionByHash":
		return c.getTransaction(dst)
	case "eth_getTransactionReceipt":
		return c.getReceipt(dst)
	case "eth_sendRawTransaction":
		return c.sendRawTransaction(dst)
	case "svc_sendRawTransaction":
		return c.syncSendRawTransaction(dst)
	case "svc_getTxStatus":
		return c.txStatus(dst)
	case "svc_getProcessedDeposits":
		return c.processedDeposits(dst)
	case "eth_call":
		return c.ethCall(dst)
	case "eth_estimateGas":
		return c.estimateGas(dst)
	case "eth_getLogs":
		return c.getLogs(dst)
	case "eth_getBlockByHash":
		return c.blockByHash(dst)
	case "eth_getBlockByNumber":
		return c.blockByNumber(dst)
	case "eth_getCode":
		return c.getCode(dst)
	case "eth_syncing":
		return append(dst, "false"...), nil
	case "net_listening":
		return append(dst, "true"...), nil
	case "eth_accounts":
		return c.accounts(dst), nil
	case "eth_sendTransaction", "eth_signTransaction", "eth_sign", "personal_sign", "eth_signTypedData_v4":
		return c.devSign(dst)
	case "web3_clientVersion":
		return jsonrpc.AppendString(dst, ClientVersion), nil
	case "eth_subscribe":
		return c.subscribe(dst)
	case "eth_unsubscribe":
		return c.unsubscribe(dst)
	case "svc_getCommittee":
		return c.getCommittee(dst), nil
	case "svc_getBridgeClaimProof":
		return c.bridgeClaimProof(dst)
	case "svc_metrics":
		return c.metrics(dst), nil
	case "svc_pastPerfectTime":
		return c.pastPerfectTime(dst)
	case "svc_status": // livemethods.go
		return c.status(dst), nil
	case "svc_getPrecompiles":
		return c.getPrecompiles(dst), nil
	case "svc_getPrecompileInfo":
		return c.getPrecompileInfo(dst)
	case "svc_getValidatorStatus":
		return c.validatorStatus(dst), nil
	case "svc_getVoteBatches":
		return c.voteBatches(dst)
	case "svc_getVotes":
		return c.getVotes(dst)
	case "svc_getTransactions":
		return c.getTransactions(dst)
	case "svc_listTransactions":
		return c.listTransactions(dst)
	case "svc_waitPastPerfectTime": // pptwait.go
		return c.waitPastPerfectTime(dst)
	case "svc_getValidatorAccountStatus": // livestatus.go
		return c.validatorAccountStatus(dst)
	case "svc_getAccountDiagnostics":
		return c.accountDiagnostics(dst)
	case "svc_getSolverState":
		return c.solverState(dst), nil
	case "svc_listAccountReceipts":
		return c.listReceipts(dst, true)
	case "svc_listConfirmedReceipts":
		return c.listReceipts(dst, false)
	case "svc_getRecoveryTargetTx", "svc_getAccountInfo", "svc_getLastFinalizedNonce":
		return c.accountRead(dst)
	case "ob_getMarkets", "ob_getOrderbook", "ob_getOrders", "ob_getCandles", "ob_getPositions",
		"ob_getTriggers", "ob_getOraclePrices", "ob_getFundingRates", "ob_getRankedPositions",
		"ob_getFills", "ob_getBackstopTransfers":
		return c.orderbookRead(dst)
	case "admin_deposit", "admin_setBaseFee", "admin_advanceTime", "admin_createMarket", "admin_setOraclePrice",
		"admin_stateHash", "admin_snapshot", "admin_lockAccount":
		if !c.admin {
			return dst, errUnauthorized
		}
		return c.adminCall(dst)
	case "admin_blacklist", "admin_setValidatorFaults":
		if !c.admin {
			return dst, errUnauthorized
		}
		return c.adminFaults(dst)
	case "admin_promote":
		if !c.admin {
			return dst, errUnauthorized
		}
		return c.promote(dst)
	case "admin_startBots", "admin_stopBots", "admin_bots":
		if !c.admin {
			return dst, errUnauthorized
		}
		return c.adminBots(dst)
	}
	if isStateControl(c.req.Method) { // statectl.go
		if !c.controlAllowed() {
			return dst, errUnauthorized
		}
		return c.stateControl(dst)
	}
	if isLab(c.req.Method) { // lab.go
		if !c.controlAllowed() {
			return dst, errUnauthorized
		}
		return c.labCall(dst)
	}
	if isControl(c.req.Method) { // anvil.go
		if !c.controlAllowed() {
			return dst, errUnauthorized
		}
		return c.anvilCall(dst)
	}
	if isNoEVMMethod(string(c.req.Method)) {
		return dst, errNoEVM
	}
	return dst, jsonrpc.ErrMethodNotFound
}

func (c *call) getBalance(dst []byte) ([]byte, *jsonrpc.Error) {
	a, err := c.address(0)
	if err != nil {
		return dst, err
	}
	// The block identifier is accepted and ignored: answers are for now.
	// The withdrawable balance (the spec): cash not locked behind orders,
	// and with perp positions equity minus their initial margin.
	w := c.s.node.Withdrawable(core.NativeToken, a)
	return jsonrpc.AppendQuantityU256(dst, &w), nil
}

// address parses array param i as an address.
func (c *call) address(i int) (core.Address, *jsonrpc.Error) {
	v := c.req.Param(i)
	if v == nil {
		return core.Address{}, missingParam(i)
	}
	a, err := jsonrpc.ParseAddress(v)
	return core.Address(a), err
}

// hash parses array param i as a 32-byte hash.
func (c *call) hash(i int) (core.Hash, *jsonrpc.Error) {
	v := c.req.Param(i)
	if v == nil {
		return core.Hash{}, missingParam(i)
	}
	h, err := jsonrpc.ParseHash(v)
	return core.Hash(h), err
}

var missingParams = [...]*jsonrpc.Error{
	jsonrpc.InvalidParams("missing value for required argument 0"),
	jsonrpc.InvalidParams("missing value for required argument 1"),
	jsonrpc.InvalidParams("missing value for required argument 2"),
}

func missingParam(i int) *jsonrpc.Error {
	if i < len(missingParams) {
		return missingParams[i]
	}
	return jsonrpc.InvalidParams("missing value for required argument " + strconv.Itoa(i))
}

func (c *call) estimateGas(dst []byte) ([]byte, *jsonrpc.Error) {
	obj := c.req.Param(0)
	if obj == nil || obj.Type() != fastjson.TypeObject {
		return dst, jsonrpc.InvalidParams("eth_estimateGas needs a call object")
	}
	// The spec: the transaction's own gas if it names one, else 21000.
	if g := obj.Get("gas"); g != nil {
		gas, err := jsonrpc.ParseQuantity(g)
		if err != nil {
			return dst, err
		}
		return jsonrpc.AppendQuantity(dst, gas), nil
	}
	return jsonrpc.AppendQuantity(dst, core.TxGas), nil
}

// Bounds of eth_feeHistory, as go-ethereum's: with both at their maximum
// the answer is about 600 KB.
const (
	// FeeHistoryBlocksMax clamps blockCount (a larger one answers this many).
	FeeHistoryBlocksMax = 1024
	// RewardPercentilesMax bounds rewardPercentiles; more is refused.
	RewardPercentilesMax = 100
)

var (
	errPercentiles      = jsonrpc.InvalidParams("rewardPercentiles: want an array of numbers")
	errPercentilesCount = jsonrpc.InvalidParams("rewardPercentiles: too many percentiles (max " + strconv.Itoa(RewardPercentilesMax) + ")")
	errPercentileRange  = jsonrpc.InvalidParams("rewardPercentiles: each must be in [0, 100]")
	errPercentileOrder  = jsonrpc.InvalidParams("rewardPercentiles: must be non-decreasing")
)

func (c *call) feeHistory(dst []byte) ([]byte, *jsonrpc.Error) {
	v := c.req.Param(0)
	if v == nil {
		return dst, missingParam(0)
	}
	count, err := jsonrpc.ParseQuantity(v)
	if err != nil {
		return dst, err
	}
	count = min(count, FeeHistoryBlocksMax)
	newest, err := c.blockNumberParam(1)
	if err != nil {
		return dst, err
	}
	percentiles, err := rewardPercentiles(c.req.Param(2))
	if err != nil {
		return dst, err
	}
	fee := c.s.node.BaseFee()
	dst = append(dst, `{"oldestBlock":`...)
	dst = jsonrpc.AppendQuantity(dst, newest+1-min(count, newest+1))
	dst = append(dst, `,"baseFeePerGas":[`...)
	for i := uint64(0); i <= count; i++ { // one more than count: the next block's fee
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonrpc.AppendQuantityU256(dst, &fee)
	}
	dst = append(dst, `],"gasUsedRatio":[`...)
	for i := uint64(0); i < count; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '0')
	}
	dst = append(dst, ']')
	if percentiles > 0 {
		dst = append(dst, `,"reward":[`...)
		for i := uint64(0); i < count; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '[')
			for j := range percentiles {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, `"0x0"`...)
			}
			dst = append(dst, ']')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), nil
}

// rewardPercentiles checks eth_feeHistory's rewardPercentiles (absent or
// null: none) as go-ethereum does, and returns how many there are: at most
// RewardPercentilesMax numbers, each in [0, 100], non-decreasing. Each one
// costs a reward entry per block, so the count is what bounds the answer.
func rewardPercentiles(v *fastjson.Value) (int, *jsonrpc.Error) {
	if v == nil || v.Type() == fastjson.TypeNull {
		return 0, nil
	}
	ps, e := v.Array()
	if e != nil {
		return 0, errPercentiles
	}
	if len(ps) > RewardPercentilesMax {
		return 0, errPercentilesCount
	}
	last := 0.0
	for _, p := range ps {
		f, e := p.Float64()
		switch {
		case e != nil:
			return 0, errPercentiles
		case f < 0 || f > 100:
			return 0, errPercentileRange
		case f < last:
			return 0, errPercentileOrder
		}
		last = f
	}
	return len(ps), nil
}

// blockNumberParam reads param i as a block number or tag; absent or a tag
// other than earliest means the current block number.
func (c *call) blockNumberParam(i int) (uint64, *jsonrpc.Error) {
	v := c.req.Param(i)
	if v == nil {
		return c.headNumber(), nil
	}
	switch string(v.GetStringBytes()) {
	case "earliest":
		return 0, nil
	case "latest", "pending", "safe", "finalized":
		return c.headNumber(), nil
	}
	return jsonrpc.ParseQuantity(v)
}

// headNumber is the latest block number: past-perfect time (the spec), or
// its slot in compat mode.
func (c *call) headNumber() uint64 {
	return blockNumberAt(c.s.node.PastPerfectTime(), c.s.cfg.Compat)
}

func (c *call) getCommittee(dst []byte) []byte {
	info := c.s.node.Committee()
	dst = append(dst, `{"quorum_size":`...)
	dst = strconv.AppendInt(dst, int64(info.Quorum), 10)
	dst = append(dst, `,"replicas":[`...)
	for i, m := range info.Members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonrpc.AppendData(dst, m[:])
	}
	return append(dst, "]}"...)
}

func (c *call) metrics(dst []byte) []byte {
	m := c.s.node.Metrics()
	dst = append(dst, `{"gas_price":`...)
	dst = append(dst, m.GasPrice.Dec()...) // u128 on the wire: a JSON integer
	dst = append(dst, `,"validator_uptime":`...)
	dst = strconv.AppendFloat(dst, m.ValidatorUptime, 'f', -1, 64)
	dst = append(dst, `,"latency":`...)
	dst = strconv.AppendFloat(dst, m.LatencyMs, 'f', -1, 64)
	dst = append(dst, `,"throughput":`...)
	dst = strconv.AppendFloat(dst, m.Throughput, 'f', -1, 64)
	if r := c.s.cfg.Replication; r != nil {
		dst = appendReplication(append(dst, `,"replication":`...), r.Status())
	}
	dst = c.s.appendRateMetrics(append(dst, `,"rate_limits":`...))
	dst = c.s.appendLabMetrics(append(dst, `,"lab":`...)) // lab.go
	return append(dst, '}')
}

// appendReplication appends a replicated node's role, leader and lag
// (docs/scaling.md).
func appendReplication(dst []byte, st node.ReplicationStatus) []byte {
	dst = jsonrpc.AppendString(append(dst, `{"role":`...), st.Role)
	dst = jsonrpc.AppendString(append(dst, `,"leader":`...), st.Leader)
	dst = strconv.AppendUint(append(dst, `,"stream_seq":`...), st.StreamSeq, 10)
	dst = strconv.AppendInt(append(dst, `,"lag_inputs":`...), st.LagInputs, 10)
	dst = strconv.AppendInt(append(dst, `,"lag_ms":`...), st.LagMs, 10)
	dst = strconv.AppendFloat(append(dst, `,"lag_p50_ms":`...), st.LagP50Ms, 'f', 3, 64)
	dst = strconv.AppendFloat(append(dst, `,"lag_p99_ms":`...), st.LagP99Ms, 'f', 3, 64)
	return append(dst, '}')
}

// enshrinedCode is eth_getCode's answer for the address of an enshrined
// application: one INVALID opcode. The applications are not EVM code, but
// the address does hold one, and clients refuse to call an address without
// code (go-ethereum's bind estimates gas only for an address with code,
// else ErrNoCode). Every other address has no code: the ledger runs none.
const enshrinedCode = `"0xfe"`

func (c *call) getCode(dst []byte) ([]byte, *jsonrpc.Error) {
	a, err := c.address(0)
	if err != nil {
		return dst, err
	}
	if a == core.OrderbookAddress || a == core.BridgeAddress || a == core.RecoveryAddress || a == core.MintAddress {
		return append(dst, enshrinedCode...), nil
	}
	return append(dst, `"0x"`...), nil
}

// pastPerfectTime answers svc_pastPerfectTime: the past-perfect time in µs
// as a decimal string, the form the live network's Rust SDK parses. Its one
// optional parameter, an address (the SDK passes the contract it waits on),
// is checked and otherwise ignored: this node has one past-perfect time for
// every address.
func (c *call) pastPerfectTime(dst []byte) ([]byte, *jsonrpc.Error) {
	if v := c.req.Param(0); v != nil && v.Type() != fastjson.TypeNull {
		if _, err := c.address(0); err != nil {
			return dst, err
		}
	}
	dst = append(dst, '"')
	dst = strconv.AppendInt(dst, c.s.node.PastPerfectTime(), 10)
	return append(dst, '"'), nil
}

// controlAllowed reports whether the call may use the anvil-compatible
// controls (evm_*, anvil_*): always under --dev, as in anvil, else only
// with the admin token.
func (c *call) controlAllowed() bool { return c.admin || c.s.cfg.Dev }
