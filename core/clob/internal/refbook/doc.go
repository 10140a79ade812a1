// Package refbook is the naive reference implementation of the batch
// auction in docs/auction.md. It exists only to be run beside the fast
// engine (core/clob) by the differential test, so it favours being
// obviously correct over being fast:
//
//   - orders live in plain slices; every tick re-collects and re-sorts the
//     whole book, and re-runs the walk from scratch after every POST_ONLY
//     refusal;
//   - every amount is a uint256 computed from the doc's formulas with
//     overflow checks that panic ("BUG: ...") instead of wrapping;
//   - admission applies an envelope intent by intent to the engine state and
//     rolls back on the first refusal; money is moved only on success.
//
// Its results (Admit reasons, TickResult, Accounts calls' net effect, book
// levels, last prices) must equal the fast engine's. Where the doc is silent
// this package picks the reading written down next to the code, tagged
// "(reading)", so a disagreement can be traced to the sentence it hinges on.
//
// Perp books (docs/perps.md) match here too, but their money is not this
// package's: an installed Perp (internal/refperp) decides a perp order's
// admission (margin, REDUCE_ONLY cut; nothing is locked), settles every perp
// fill, is asked for positions when reduce-only orders are clipped before
// the walk, and validates and runs trigger intents, whose payloads ride in
// the pending ring. Inject and CancelOrdersOf let it add a fired trigger's
// order and cancel a liquidated account's orders.
//
// Limits: not tuned for memory; Limits.OrdersMax and PendingMax are enforced
// as admission checks only. Order ids are looked up through a map that is
// never iterated, so map order never reaches an output.
package refbook
