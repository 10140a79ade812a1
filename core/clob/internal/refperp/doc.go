// Package refperp is the naive reference implementation of the perpetual
// markets in docs/perps.md: positions, cross margin in the native token,
// oracle walk, mark, funding, liquidation to the backstop, REDUCE_ONLY and
// triggers. It exists only to be run beside the fast engine (core/clob) by
// the perp differential test, so it favours being obviously correct over
// being fast:
//
//   - matching is internal/refbook's, which defers to this package (the
//     refbook.Perp hooks) for a perp order's admission, for every perp fill
//     and for trigger intents;
//   - money is math/big, computed from the doc's formulas as written, and
//     every margin figure is recomputed from scratch whenever it is needed;
//   - state is plain slices searched linearly; maps are only looked up,
//     never iterated, so no map order reaches an output.
//
// State it adds to refbook's: per (perp book, owner) a position (S lots, C
// q, and its bookkeeping since it opened), per owner a native debt, per
// perp market the oracle, mark, premium EMA and funding index, the stored
// triggers, and the list of accounts that ever opened a position, in the
// order they first opened one (the liquidation order). Invariants (checked by CheckInvariants): Σ S = 0 per
// market; Debt > 0 ⇒ Cash = Locked; C has the sign of S and is zero with it.
//
// Every rule it follows is docs/perps.md's; the few places where the code
// had to choose what the doc leaves open are tagged "(reading)", so a
// disagreement with the fast engine can be traced to the sentence it
// hinges on (and the doc then gains the rule).
package refperp
