// Package rpc is the JSON-RPC 2.0 dispatcher: it turns parsed requests into
// calls on the node and appends their answers, in the spec's shapes, to the
// connection's response buffer.
//
// Dispatch is a switch over the method name (no reflection). Each method
// appends only its result value; Serve wraps it in the response envelope or
// replaces it with the error object.
//
// Three execution paths, chosen per HTTP request or WebSocket message:
//   - reads run on the event loop and answer at once (eth_chainId and
//     eth_getBalance allocate nothing in steady state);
//   - a single eth_sendRawTransaction (or svc_sendRawTransaction, which
//     waits for the attestation and answers the validators' votes,
//     sendsync.go) decodes and recovers its signer on the
//     event loop (recovery is the expensive part, and the loops run in
//     parallel), applies it through the sequencer, and answers once the
//     transaction is durable — or attested, when the optional timeout asks
//     to wait for confirmation — from the node's writer: a deferred HTTP
//     response, or WSConn.Send. No goroutine waits for it;
//   - any other request containing a write (a batch with transactions,
//     authorized admin writes) is copied and queued for one of a fixed set
//     of worker goroutines (workers.go), which waits for each write in
//     turn. Over HTTP the connection's later requests wait behind it, so
//     answers never reorder; over WebSocket answers may reorder.
//
// The bridge's REST surface (rest.go, docs/bridge.md §5) shares the port:
// every request to a path under /v1/, and every GET or HEAD, is REST,
// hand-routed and answered on the event loop from the node's disk reads;
// POST elsewhere is JSON-RPC. GET and HEAD on /ui and under /ui/ are the
// web view's embedded files (package ui).
//
// Admin methods (admin_*) need "Authorization: Bearer <token>"; without it
// they answer -32600 at once, on the event loop: they never take a worker. The
// anvil-compatible controls (anvil.go, docs/anvil.md: evm_*, anvil_* and
// their hardhat_ aliases) need it too, and are refused the same way,
// except under Config.Dev.
//
// Under --dev (Config.Dev) the dev accounts sign for the client
// (devsign.go, docs/signing.md): eth_accounts lists them;
// eth_sendTransaction fills, signs and submits through
// eth_sendRawTransaction's path; eth_signTransaction, eth_sign,
// personal_sign and eth_signTypedData_v4 sign. Outside --dev they answer
// -32000 and eth_accounts is [].
//
// # Limits
//
// Every bound has a Config field (0: its default) or a constant; the
// answer beyond it names the bound and its value:
//
//   - Config.Workers (DefaultWorkers, 64) worker goroutines, and per node
//     Config.QueueMax (DefaultQueueMax, 4096) requests with writes queued
//     for them and Config.QueueBytesMax (DefaultQueueBytesMax, 8 MiB) of
//     such requests queued or running. Beyond either a request is answered
//     at once, never queued: HTTP status 503 with one -32005 error per
//     request ("limit exceeded: too many requests with writes queued on
//     this node (max 4096)", "… too many bytes of requests with writes
//     queued on this node (max 8388608)"), or that -32005 over WebSocket.
//     HTTP needs no bound per connection (so no 429): a connection's
//     requests are served one at a time.
//   - The admission stage (admit.go) holds at most Config.QueueMax lone
//     eth_sendRawTransactions and Config.QueueBytesMax bytes of their
//     calldata, counted apart from the workers' queue: beyond either the
//     send is answered at once, -32005 "limit exceeded: too many
//     transactions awaiting admission queued on this node (max 4096)".
//   - Config.WSInFlightMax (DefaultWSInFlightMax, 64) messages of one
//     WebSocket connection whose answer is owed later (queued, on a worker,
//     or a lone eth_sendRawTransaction waiting for durability): -32005
//     "limit exceeded: too many requests in flight on this connection (max
//     64)". A slot is freed when its answer is handed to the connection;
//     the jobs still queued for a closed connection are dropped, not run.
//   - Config.ResponseBytesMax (DefaultResponseBytesMax, 25 MB, as
//     go-ethereum's batch response limit) for the answer to one request or
//     batch: the call whose answer would cross it, and every later call of
//     the batch (without running), answers -32600 "response too large (max
//     25000000 bytes)"; earlier answers stand, and so does a write's answer
//     (see runAll).
//   - eth_feeHistory: blockCount clamped to FeeHistoryBlocksMax (1024);
//     rewardPercentiles at most RewardPercentilesMax (100) numbers, each in
//     [0, 100] and non-decreasing, else -32602 with data naming the rule.
//   - eth_getLogs: the filter is decoded by the logs subscription's parser
//     (subs.ParseLogAddresses, subs.ParseLogTopics), so it has the same
//     bounds: 64 addresses, 4 topic positions of 16 alternatives each
//     (-32602 naming them). The query reads the history on disk without
//     the node's lock (node.Node.Logs: only the range of places is read
//     under it), looks at no more than node.LogScanMax (2 000 000) logs in
//     its time range (-32602 beyond) and answers at most LogsMax (10 000).
//     The eth_getLogs calls of one request or batch share one budget of
//     Config.LogScanMax logs (2 000 000 by default): a batch of 1000 calls
//     scans no more than one call may, and the call that would pass what
//     is left gets -32602 saying to narrow the ranges or split the batch.
//   - The perp reads: ob_getTriggers pages hold at most
//     marketdata.TriggersLimitMax (200) triggers, ob_getRankedPositions pages
//     at most marketdata.RankedLimitMax (100) accounts (larger limits are
//     clamped), ob_getOraclePrices and ob_getFundingRates one row per perp
//     market (clob.MarketsMax bounds the markets); admin_createMarket's
//     oracle_walk_bps is at most OracleWalkBpsMax (10 000), else -32602.
//   - svc_sendRawTransaction waits SyncSendTimeoutDefault (10 s) for the
//     attestation, at most SyncSendTimeoutMax (60 s); the committee-fault
//     controls and svc_getProcessedDeposits are bounded by the node
//     (node.BlacklistMax, node.FaultReasonMax, node.ProcessedDepositsScanMax).
//   - eth_signTypedData_v4's typed data: TypedDataBytesMax (64 KiB) of
//     JSON, TypedDataFieldsMax (256) fields in its types,
//     TypedDataObjectsMax (1024) objects in its message (-32602 beyond);
//     eth_sendTransaction's call data ethtx.RawSizeMax (128 KiB).
//   - The REST withdrawal listings return ListLimitDefault (500) rows, at
//     most ListLimitMax (1000) with `limit` (400 beyond).
//   - The REST market-data reads (docs/rest.md, rest_clob.go) clamp their
//     limits: CandlesRESTLimitMax (500) candles, and the ob_ methods' page
//     bounds of core/marketdata for orders, triggers, the leaderboard and
//     backstop transfers.
//   - The lab's delivery faults (lab_delivery.go, lab_latency.go,
//     docs/lab.md): LatencyRulesMax (64) latency rules (-32005 beyond),
//     LatencyMsMax (60 000 ms) per figure and draw (-32602 beyond),
//     TiesPerConnMax (16) accounts tied to a connection; held messages are
//     bounded by the transport (server.DelayedTotalMax, the outbound bound).
//   - Batch length and nesting depth are the codec's (jsonrpc.BatchLimit,
//     jsonrpc.DepthMax), subscriptions the hub's (net/subs); request body,
//     WebSocket message and outbound bytes the transport's (net/server).
package rpc
