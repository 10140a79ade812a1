package rpc

import "sync/atomic"

// Counters for the Prometheus metrics (net/metrics, docs/metrics.md): the
// requests and error answers per method and transport, and the open
// WebSocket connections. Counting a request is two atomic adds in a fixed
// array, indexed by a binary search over the method names: no map, no
// label lookup, no allocation.

// methodNames are the methods dispatch knows, sorted (a test checks them
// against dispatch's switch). Anything else counts as "other".
var methodNames = [...]string{
	"admin_advanceTime", "admin_blacklist", "admin_bots", "admin_createMarket", "admin_deposit", "admin_lockAccount",
	"admin_promote", "admin_setBaseFee", "admin_setOraclePrice", "admin_setValidatorFaults", "admin_snapshot", "admin_startBots",
	"admin_stateHash", "admin_stopBots",
	"eth_accounts", "eth_blockNumber", "eth_call", "eth_chainId", "eth_estimateGas", "eth_feeHistory",
	"eth_gasPrice", "eth_getBalance", "eth_getBlockByHash", "eth_getBlockByNumber", "eth_getCode",
	"eth_getLogs", "eth_getTransactionByHash", "eth_getTransactionCount", "eth_getTransactionReceipt",
	"eth_maxPriorityFeePerGas", "eth_networkId", "eth_sendRawTransaction",
	"eth_sendTransaction", "eth_sign", "eth_signTransaction", "eth_signTypedData_v4",
	"eth_subscribe", "eth_syncing",
	"eth_unsubscribe", "net_listening", "net_version",
	"ob_getBackstopTransfers", "ob_getCandles", "ob_getFills", "ob_getFundingRates", "ob_getMarkets",
	"ob_getOraclePrices", "ob_getOrderbook", "ob_getOrders", "ob_getPositions", "ob_getRankedPositions",
	"ob_getTriggers",
	"personal_sign",
	"svc_getAccountDiagnostics", "svc_getAccountInfo", "svc_getBridgeClaimProof", "svc_getCommittee",
	"svc_getLastFinalizedNonce", "svc_getPrecompileInfo", "svc_getPrecompiles", "svc_getProcessedDeposits",
	"svc_getRecoveryTargetTx", "svc_getSolverState", "svc_getTransactions", "svc_getTxStatus",
	"svc_getValidatorAccountStatus", "svc_getValidatorStatus", "svc_getVoteBatches", "svc_getVotes",
	"svc_listAccountReceipts", "svc_listConfirmedReceipts", "svc_listTransactions", "svc_metrics",
	"svc_pastPerfectTime", "svc_sendRawTransaction", "svc_status", "svc_waitPastPerfectTime",
	"web3_clientVersion",
}

// methodOther is the counters' index for unknown methods, invalid requests
// and bodies that do not parse.
const methodOther = len(methodNames)

// Transports, the counters' second index.
const (
	transportHTTP = iota
	transportWS
	transports
)

var transportNames = [transports]string{transportHTTP: "http", transportWS: "ws"}

// methodIndex returns m's index in methodNames, or methodOther.
func methodIndex(m []byte) int {
	lo, hi := 0, len(methodNames)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if string(m) > methodNames[mid] {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(methodNames) && string(m) == methodNames[lo] {
		return lo
	}
	return methodOther
}

type callCounts struct{ requests, errors atomic.Uint64 }

// rpcStats are the dispatcher's counters.
type rpcStats struct {
	calls   [methodOther + 1][transports]callCounts
	wsConns atomic.Int64 // between WSOpen and WSClosed
}

// counts returns the counters of method (nil: a body that did not parse)
// over WebSocket or HTTP.
func (st *rpcStats) counts(method []byte, ws bool) *callCounts {
	t := transportHTTP
	if ws {
		t = transportWS
	}
	return &st.calls[methodIndex(method)][t]
}

// count counts one request, and whether it was answered with an error.
func (st *rpcStats) count(method []byte, ws, failed bool) {
	c := st.counts(method, ws)
	c.requests.Add(1)
	if failed {
		c.errors.Add(1)
	}
}

// counts returns the call's counters. A deferred answer (a lone send)
// counts its error when it fails (reply.fail).
func (c *call) counts() *callCounts { return c.s.stats.counts(c.req.Method, c.ws != nil) }

// count counts the call, answered with an error or not.
func (c *call) count(failed bool) { c.s.stats.count(c.req.Method, c.ws != nil, failed) }

// EachMethod calls fn with the request and error counts of every method
// (and "other") on every transport ("http", "ws").
func (s *Service) EachMethod(fn func(method, transport string, requests, errors uint64)) {
	for m := range s.stats.calls {
		name := "other"
		if m < methodOther {
			name = methodNames[m]
		}
		for t := range s.stats.calls[m] {
			c := &s.stats.calls[m][t]
			fn(name, transportNames[t], c.requests.Load(), c.errors.Load())
		}
	}
}

// QueueDepth returns the requests with writes queued for a worker, and the
// bytes of those queued or running (bounded by QueueMax, QueueBytesMax).
func (s *Service) QueueDepth() (jobs, bytes int64) { return s.jobsQ.items.Load(), s.jobsQ.bytes.Load() }

// WSConns returns the open WebSocket connections.
func (s *Service) WSConns() int64 { return s.stats.wsConns.Load() }
