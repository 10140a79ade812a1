// Package hostile runs misbehaving clients against the real ledgerd binary,
// next to a well-behaved one, and checks that every resource an attacker
// can make the node hold is bounded (docs/limits.md lists the bounds).
//
// Model. One node (`ledgerd --dev` with short request deadlines) serves the
// whole suite. A well-behaved client (go-ethereum's ethclient over HTTP from
// 127.0.0.1) reads and sends transfers throughout; the suite first measures
// it on the idle node, then runs each attack for one phase beside it. Every
// attacker connects from another loopback address (127.0.0.2, 127.0.0.3),
// as a second machine would, so per-address limits meet the attacker and
// not the good client. Each attack asserts:
//
//   - the documented answer: an error code and message, an HTTP status, or
//     the connection closed by the node;
//   - the node's peak RSS during the phase stays under RSSCeiling;
//   - the good client's p99 latency during the phase stays under the
//     scale's bound (500 ms in the short form, 1 s at full scale, where
//     hundreds of attacking connections share the node's two cores), and
//     none of its calls fails;
//   - after the attack the node serves a read and a transfer at once.
//
// The test's log has one line per phase (peak RSS, good client's p50/p99,
// what the attacker got); BENCHMARKS.md's "Hostile clients" table is that
// output at full scale.
//
// Scale. `make test` runs the short form (fewer connections, 3 s phases).
// HOSTILE_FULL=1 runs the figures: 2 000 slow-header connections,
// 500 pipelining clients, a million fee-history percentiles, a 100 000
// address log filter, a 100 000-call batch, JSON nested 100 000 deep,
// 10 000 WebSocket write calls, with 10 s phases.
//
// Safety: the node listens on 127.0.0.1 and every attacker dials a
// loopback address; every loop is bounded in count and by its phase's
// deadline, and the suite stops by itself.
package hostile
