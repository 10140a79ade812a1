// Package scenario plays a repeatable market against a ledgerd node: a file
// names an oracle path and seeded oracle walks, the built-in bots' spec and
// seed, and lab_ controls on a timeline; ledgerd --dev --scenario FILE plays it (docs/lab.md,
// "Scenarios"), so two versions of a user's strategy meet the same market.
//
// # Model
//
// The player owns time. The node runs on a manual clock that only the
// player moves, one step (the greatest common divisor of the markets'
// auction intervals) at a time. Each step, at the time t of the tick that
// just ran: (1) the oracle points due, the walks due, then the timeline
// events due, in file order; (2) the bots' actions for [t, t+step) (bench/bots Lockstep),
// sequentially in bot order, each waited for until admitted; (3) pace ×
// step of wall time for the user's strategy; (4) admin_advanceTime to the
// next tick, answered once that tick is durable.
//
// Like the bots, the player is a client of the node over loopback JSON-RPC
// (the admin token, go-ethereum's rpc client): every event is a call by
// name, so the file needs no change when a lab_ control is added.
//
// # Invariants
//
//   - Repeatable: with the same file, a fresh data directory, the clock
//     starting at StartUs and no outside client, every input reaches the
//     node in the same order at the same node time, so the final
//     admin_stateHash and every bot account's fills are the same. An outside
//     client's inputs land where its wall-clock timing puts them.
//   - Bounded: a file is at most FileBytesMax bytes, TimelineMax oracle
//     points and events, WalksMax walks, DurationMax of node time; the player is one
//     goroutine and 1 + bots connections.
//   - Strict: Parse refuses an unknown key, a bad value, an out-of-bounds
//     one, a timeline out of time order and a method outside the timeline's
//     list, naming the field and the index.
package scenario
