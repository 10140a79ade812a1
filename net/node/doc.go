// Package node runs the ledger as a service: the sequencer, the group-commit
// writer and the attesting committee, plus the read views the RPC layer
// serves from.
//
// Pipeline (one arrow = one goroutine boundary):
//
//	event loops ──Submit──▶ sequencer (under mu: core.Ledger.Apply, index)
//	                            │ admit queue (apply order)
//	                            ▼
//	                        writer: persist.Log.Append (one fsync per group)
//	                            │ marks durable, settles the sender, answers
//	                            ▼ attest queue
//	                        attester: committee signs a Merkle root per group
//	                            │ receipts become visible, waiters wake
//
// Groups form by themselves: each stage takes everything that queued up while
// it was busy, so one fsync and one set of signatures cover more inputs as
// the load grows, and an idle node answers at once.
//
// Invariants:
//   - The queues hold inputs in the order the ledger applied them, so the log
//     order is the apply order and a replay rebuilds the same state.
//   - Nothing is acknowledged before it is durable: Submit's callback runs
//     after the group's Append returned.
//   - A receipt is visible only once attested; a transaction is visible only
//     once durable.
//
// Limits: MaxInflight inputs may wait for durability or attestation at once;
// beyond it Submit refuses with ErrOverloaded rather than queue without bound.
// The transaction index and the log list live in memory and grow with use;
// attestations are not persisted: after a restart the replayed receipts are
// attested again at start-up time.
package node
