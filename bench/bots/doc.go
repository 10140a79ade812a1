// Package bots runs built-in counterparties against a ledgerd node: market
// makers that keep a two-sided ladder on each market and takers that cross
// the spread with IOC orders, so a dev venue has a moving book and candles
// without anyone writing them (ledgerd --dev --bots SPEC, make run, and the
// admin_startBots, admin_stopBots and admin_bots methods; docs/bots.md).
//
// # Model
//
// The bots are clients of the node, with no back door: each bot dials the
// node's listen address over loopback (go-ethereum's rpc client, WebSocket
// or HTTP, one connection per bot), funds its own account with the public
// admin_deposit (it knows the admin token), reads the book with
// ob_getOrderbook and its live orders with ob_getOrders, and sends signed
// EIP-1559 transactions to the orderbook (core/clob/abi calldata) with
// eth_sendRawTransaction. A Controller runs one session (a parsed Spec) at
// a time: a supervisor goroutine resolves the markets (ob_getMarkets),
// then one goroutine per bot.
// A Lockstep session has no goroutine: a scenario player (bench/scenario)
// that owns the node's manual clock calls Step once per auction interval,
// and the bots act in bot order, each transaction waited for.
//
// # Invariants
//
//   - Bounded: a session has at most BotsMax bots, so at most BotsMax + 1
//     goroutines and BotsMax connections; a quote round is one submitBatch
//     of at most 4 × LevelsMax = clob.BatchIntentsMax calls.
//   - Repeatable: every decision comes from the bot's PCG generator seeded
//     with (Spec.Seed, bot index), and keys derive from the seed, so a spec
//     decides the same orders given the same book answers; only the wall
//     clock's timing varies, and in lockstep not even that.
//   - Counted: each transaction sent ends in exactly one of acked (the node
//     answered a hash), refused (it answered an error) or errors (no
//     answer); stopping waits for the action in flight instead of
//     abandoning it, so once a session is stopped the counters add up.
//   - Never hot-looping: a failed action pauses the bot from BackoffMin,
//     doubling to BackoffMax, until one succeeds.
//   - Controller methods other than Close never wait for the network: the
//     admin methods call them on the node's event loops, which serve the
//     bots' own requests.
package bots
