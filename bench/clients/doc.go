// Package clients is the client-compatibility matrix: it starts the real
// ledgerd binary and runs the same flow through three client libraries with
// their defaults (no hand-set gas, fees or nonces), ethers 6 and viem 2 from
// npm and go-ethereum, each against a node in the spec's shapes and one
// started with --compat. It has no code of its own, only tests and the
// client programs.
//
//	js/ethers-flow.mjs     the flow in ethers 6
//	js/viem-flow.mjs       the flow in viem 2
//	js/flow.mjs            what the two share: addresses, keys, the step protocol
//	gethflow/              the flow in go-ethereum
//	js/order-ethers.mjs    README.md's getting-started examples: from zero
//	js/order-viem.mjs      to a filled limit order
//	gethorder/
//	tour.sh                README.md's curl tour, with the answers it shows
//	js/devsign-ethers.mjs  the dev accounts signing for ethers' JsonRpcSigner
//	js/devsign-viem.mjs    and viem's JSON-RPC account (TestDevSigning,
//	js/devsign.mjs         docs/signing.md); what the two share
//	js/anvil-viem.mjs      viem's anvil test client against --dev (docs/anvil.md;
//	                       TestAnvilTestClient)
//	js/refusals.mjs        each -32000 refusal as ethers and viem classify it, against
//	                       --compat, the spec's shapes and anvil (TestRefusalClasses,
//	                       docs/compat.md)
//	js/guide-*.mjs         the live network's TypeScript guides (submit a batch order,
//	js/guide-steps.mjs     delegate a trading key, spot and perpetual orders, read
//	                       market data) with only the URL and prefix changed
//	                       (TestLiveGuides); what they share
//	js/live-day.mjs        a trader's day as the live network's own SDK makes it (its REST
//	                       reads, pod_ channels and write defaults, by hand: the SDK is not
//	                       on npm) against --compat --prefix pod (TestLiveSDKDay, docs/live.md)
//	js/package.json        exact ethers and viem versions; package-lock.json pins the rest
//
// # The flow
//
// Each flow program reads LEDGERD_HTTP and LEDGERD_WS and prints a line per
// step, `STEP <name> ok <milliseconds>` or `STEP <name> fail <message>`, in this order:
// chainId, balance, nonce, transfer (native value from dev account 1 to dev
// account 3 through the library's default send path; dev accounts 1..3 are
// net/node.DevKeys[0..2]), wait (the library's default wait for the
// receipt), getTransaction (not pending), receipt, logs (eth_getLogs finds
// the order's log), newHeads (a WebSocket head), svc_orderbook (a custom
// subscription through the library's public API) and order (a limit buy of
// 1 WETH at 2000 USD from dev account 1 meets a sell from dev account 2; the
// buyer's WETH balanceOf grows by 1). Every step runs whatever
// failed before it and has its own timeout; the program exits 0 unless it
// crashed. newHeads and svc_orderbook subscribe before the order step and
// are collected after it, because svc_orderbook speaks only when an auction
// tick runs, and ticks run only while orders are pending (newHeads also
// gets a header per idle slot).
//
// # Running
//
//	npm ci --prefix bench/clients/js                   # once; make test does it
//	go test -v -run 'TestClientMatrix|TestReadmeExamples' ./bench/clients
//
// TestClientMatrix starts one fresh node per library and mode (flows share
// no state), runs the flows one after the other and fails when a step fails
// under --compat: that every step works there is the acceptance criterion.
// Without node or js/node_modules the test fails, unless LEDGERD_SKIP_JS=1,
// which runs go-ethereum alone (and leaves the README table unchecked);
// -short skips it. A flow can be run by hand against `make run`:
//
//	LEDGERD_HTTP=http://127.0.0.1:8545 LEDGERD_WS=ws://127.0.0.1:8545 node bench/clients/js/viem-flow.mjs
//
// # The README table
//
// TestClientMatrix renders what worked as a Markdown table (a row per step,
// a column per library and mode, cells yes or no) and compares it with the
// text between the <!-- client-matrix:begin --> and <!-- client-matrix:end
// --> markers of README.md. When the node changes what works, the test fails
// and prints the new table; rerun with UPDATE_README=1 to write it between
// the markers, and review the diff:
//
//	UPDATE_README=1 go test -run TestClientMatrix ./bench/clients
//
// The markers themselves are never added by the test.
//
// TestReadmeExamples checks that every block of README.md that follows a
// <!-- example: PATH --> marker equals the file PATH byte for byte (so edit
// the file and copy it over), then runs each example against a fresh
// --compat node with LEDGERD_RPC set: a .mjs with node, a .sh with bash (its
// output must match the "# {…}" answers it shows), a main.go as its
// directory's Go program. Each must exit 0 within 60 s. A README.md without
// any example marker fails the test.
package clients
