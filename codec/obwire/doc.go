// Package obwire holds the wire shapes of the orderbook read methods (ob_*,
// and the ob_ pages svc_ subscriptions send): the JSON encoders of the
// answers core/marketdata computes (Append*) and the decoders of those
// methods' parameters (Parse*). What each field means, and the decisions
// where the live openapi is silent, are core/marketdata's package doc.
//
// Invariants:
//   - Encoders append one JSON value to dst and return the extended slice;
//     none uses reflection or encoding/json. uint256 amounts are hex
//     quantities ("0x0" for zero) unless the openapi shows a decimal string
//     (order sizes, book level keys, signed amounts). The same data gives
//     the same bytes.
//   - Decoders take one positional parameter (nil when absent) and refuse
//     with a -32602 jsonrpc error whose data names the field; the errors
//     are preallocated, except the one naming an unknown member. What they
//     accept is within the index's bounds (marketdata's *LimitMax).
//   - Like the core it reads, the package keeps no state, reads no clock
//     and does no I/O; it imports codec/jsonrpc and core, never net/.
package obwire
