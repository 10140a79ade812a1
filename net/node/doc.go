// Package node runs the ledger as a service: the sequencer, the group-commit
// writer (three pipelined stages) and the attesting committee, plus the read views the RPC layer
// serves from.
//
// Pipeline (one arrow = one goroutine boundary):
//
//	event loops ──Submit──▶ sequencer (under mu: core.Ledger.Apply, index)
//	                            │ admit queue (apply order)
//	                            ▼
//	                        writer: takes a group, encodes its inputs
//	                            ▼ (pipeline.go: the next group is encoded
//	                        syncer: persist.Log.AppendInputs (one write and
//	                            │ one fdatasync per group, segment files);
//	                            │ marks durable, queues the senders' settling
//	                            │ for the sequencer (no lock taken), answers
//	                            │ transactions and deposits
//	                            ├──▶ storer: persist.Log.Store (Badger: batches,
//	                            │    history, tick links, stored ticks,
//	                            │    withdrawals, claims, snapshots); publishes
//	                            │    ticks, answers ticks, batches, claims
//	                            ▼ attest queue
//	                        attester: committee signs a Merkle root per group
//	                            │ (its signers: not the silent validators; it
//	                            │ waits while they are fewer than a quorum)
//	                            │ and has the storer store it; then receipts
//	                            │ become visible, waiters wake
//
// Only the sequencer holds mu: the writer, syncer, storer and attester
// take none of its locks (the storer and the attester read the publisher
// under pubMu, the attester moves records into the recent cache under
// recentMu and wakes waiters under waitMu), so a tick that holds the
// sequencer delays neither an acknowledgement nor a receipt of an input
// admitted before it (TestOnAttestedDuringTick).
//
// A tick holds mu only to begin and to finish (market.go, runTick): while
// its leading spot books clear, mu is free and ticking is set, and
// transactions are admitted staged (core/clob/stage.go: checked against
// the books as the tick began, joined to them when it ends, logged before
// it); anything else that needs the engine or the whole state waits on
// tickDone (lockSettled, submitLocked). TestAdmissionDuringTick. Once
// the tick is logged, its downstream stage (downstream.go: the market
// index's Tick, the tick's subscription record, the republished books)
// runs without mu too, in a staging window (core.Ledger.BeginStaging):
// transactions that change no book are admitted meanwhile, staged and
// logged as ordinary ones, the rest wait on tickDone. The record is
// queued for the store on its own once built (admission.body), and the
// tick answered once it is stored; until then the stored mark of derived
// rows stays before the tick, so that a restart builds the record again
// (storer, recordsDue). TestDownstreamEqualsInline.
//
//	storer ──stored withdrawal rows──▶ claimer: signs the pending claims
//	                                   (withdrawals.go) and stores the
//	                                   proofs through the writer
//
// Groups form by themselves: each stage takes everything that queued up while
// it was busy, so one fsync and one set of signatures cover more inputs as
// the load grows, and an idle node answers at once.
//
// Invariants:
//
//   - The queues hold inputs in the order the ledger applied them, so the log
//     order is the apply order and a replay rebuilds the same state.
//   - Nothing is acknowledged before it is durable: Submit's callback runs
//     after the group's AppendInputs returned (a tick's after its Store: a
//     reader asks for its links, stored tick and withdrawal rows next). What
//     Store writes of the inputs (links, stored ticks, withdrawal rows) a
//     restart writes again when a stop came between the two (Derived).
//   - A receipt is visible only once attested; a transaction is visible only
//     once durable.
//   - The attester's batch and its records' history rows are durable before
//     any of those receipts is served; a restart reads batches back and never
//     signs a record twice (sequence numbers continue).
//   - Time never goes backwards: admission stamps, attestation times, ticks,
//     idle slots and the past-perfect time all come from one monotonic clock
//     (clock.go), which holds its last time while the wall clock is behind
//     it and resumes at least where the restored state left off.
//   - Committee faults (faults.go: blacklist, rejecting and silent
//     validators) are test-venue controls outside the ledger and the log:
//     they refuse transactions before the ledger sees them, and hold the
//     attester while fewer than a quorum sign. A restart clears them; a
//     held batch's records are durable, so the restart attests them.
//   - svc_metrics (metrics.go) counts live traffic only: records replayed at
//     start-up and attested after it add to no throughput or latency.
//   - The Prometheus metrics' sources (stats.go: admissions by outcome,
//     tick, group commit and attestation histograms, queue depths) are
//     atomics and lock-free histograms written around core calls by the
//     node's goroutines; the core never sees them, and an admission counts
//     without allocating.
//   - Bridge withdrawals (withdrawals.go): a tick's outcome rows are stored
//     in the tick's group commit and published only once durable; a claim
//     is signed only over a durable row, with at least n − f signers, and
//     served only once its proof is durable. A restart signs what was left
//     pending.
//   - Perpetual markets (perp.go): admin_setOraclePrice is a logged input
//     like a market creation, so a replay sets the oracle at the same place;
//     positions and the ranking by PnL (ByPnL) read the ledger's
//     margin under the read lock; balances read the read views (below). The ranking is kept with the
//     ledger sequence it was computed at and is recomputed once that moves.
//   - anvil controls (controls.go): setBalance, setNonce and every time
//     jump are logged inputs applied under the sequencer lock; a jump moves
//     the clock's offset (ledger state, resumed at start-up), never back,
//     runs the ticks it makes due, and answers once the new time is
//     past-perfect.
//   - Account locks (recovery.go): the ledger reports an equivocation and
//     the sequencer turns it into a logged lock input under the same lock,
//     so a replay locks at the same place; the equivocating transaction
//     itself is refused (999) and never logged.
//   - Whole-state replacement (revert.go: evm_revert, anvil_loadState):
//     the pipeline stops (the admitted inputs become durable first), the
//     store is made to hold the state's keys, the RAM state is rebuilt
//     as at start-up and swapped in under the lock, the publisher ends
//     the subscriptions to the history, and the pipeline starts again; time goes back
//     with the state. Writes meanwhile are refused, reads answer from one
//     state or the other.
//   - Offline replay (replay.go, ledgerd replay): Replay applies a data
//     directory's log through the same apply path (afterApply, with each
//     tick's downstream stage in line)
//     on a Node without goroutines, reading the directory read-only; Open
//     stores the genesis it runs under so the replay starts from it.
//   - Followers (follow.go, docs/scaling.md): a node opened with Follow
//     applies the frames a leader made durable (ApplyFrames) under mu in
//     the leader's order, through the apply path a restart replays with,
//     and its attester attaches the leader's batches after checking their
//     leaves instead of signing; it never stamps, ticks, signs or claims,
//     and refuses writes (NotLeaderError) until Promote, after which it
//     signs from the next batch seq. AfterAppend lets a replicator hold
//     the syncer until a stream holds what is durable.
//
// Read views (readviews.go). The hot reads take no lock the sequencer, the
// ticker, the writer or the attester holds, so an event loop never waits
// for the pipeline (a tick held for seconds included: the read-stall test,
// net/rpc TestReadsDuringStalledTick):
//
//   - Who writes: the sequencer alone, under mu, right after the ledger
//     applied an input (afterApply → publishInput), and load / revert when
//     they rebuild the whole state (rebuildViews, then one swap of
//     Node.views with the state). A write is a new immutable value behind
//     an atomic pointer: an account's {nonce, native withdrawable, every
//     non-zero holding}, the base fee, and the ob_getOrderbook answer of
//     each book (copy-on-write map, republished for the books a tick ran,
//     a market creation, an oracle change). Which accounts an input changed
//     is derived per input kind (sender, recipient, delegating master,
//     deposit and control targets; a tick's event owners, transfer
//     recipients, withdrawers, the backstop), and after a perp tick or an
//     oracle change every account with a perp position or perp orders is
//     republished (its margin moves with the mark). TestReadViewsMatchLedger
//     checks all of it against the ledger after every input.
//   - Receipts: the entries index is a sharded map whose shard locks are
//     held for one map access only; an Entry's durable, batch, index and
//     tick are atomics, each set once by the pipeline and only moving
//     forward, so Lookup copies a state the entry was in.
//   - Who reads: Balance, Nonce, Withdrawable, BalanceOf, BaseFee,
//     Orderbook and Lookup (eth_getBalance, eth_getTransactionCount,
//     eth_call's balanceOf and withdrawableBalance, eth_gasPrice, blocks,
//     ob_getOrderbook, eth_getTransactionByHash and
//     eth_getTransactionReceipt); Positions, Triggers and ByPnL
//     (ob_getPositions, ob_getTriggers, ob_getRankedPositions, the
//     svc_positions and svc_triggers snapshots: an account's view also
//     carries its margin summary and open perp positions, the triggers
//     are a sharded map republished after each input that changes an
//     account's, and the ranking reads the views of the accounts with a
//     position, kept until one of them changes); AccountInfo and
//     RecoveryTarget (svc_getAccountInfo, svc_getLastFinalizedNonce,
//     svc_getRecoveryTargetTx: the view carries the newest transaction and
//     the lock, the attester's finalized transactions are a sharded map);
//     all on the event loops.
//   - What a reader gets: one account, one book or one receipt as of one
//     applied input (one answer never mixes two). Views are published
//     before the input's record is queued for the log, so a client that saw
//     a receipt (attested, hence applied and published earlier) sees its
//     effects, and a nonce read after an acknowledged write is at least that
//     write's. Two reads of one request may see two successive inputs. A
//     book is as of the newest tick (a book changes only at ticks: admitted
//     orders wait for theirs).
//   - Past-perfect time (PastPerfectTime: eth_blockNumber, "latest"
//     blocks, svc_pastPerfectTime) reads two atomics (pastPerfectView),
//     and the listings (eth_getLogs' and svc_ listings' recent receipts,
//     receiptsAt and placeRange) the cache of recent records under
//     recentMu, which the attester and a revert take inside mu for a push
//     or a swap, never for a tick.
//   - The index-only ob_* reads (markets, oracle prices, funding rates,
//     orders, candles, fills, backstop transfers: ReadIndex) take idxMu,
//     which the sequencer takes inside mu only while it changes the index
//     (an admitted order, an oracle setting, a market creation), and the
//     tick's downstream stage without mu for the index's own step of a
//     tick with its copy of the perp markets' state; never for the
//     auction. The RPC service runs such a read on a worker while the
//     index is busy (IndexBusy), so that its wait holds up no event loop.
//   - svc_metrics reads the metrics' buckets under their own mutex,
//     which the attester takes for one update.
//   - Still under mu's read lock, off the event loops' hot path: the
//     admin_ and evm_ controls, the bridge relayer's deposit check and
//     the Prometheus scrape's queue lengths.
//
// Memory: RAM holds the ledger, each account's newest attested transaction
// (recovery.go), the books, the market index (with its
// bounded fills and backstop histories), the perp publishing views
// (perpsubs.go: a tx hash per live trigger, the trigger intents not yet
// landed, a mark per perp market), a live tick's withdrawal outcomes until
// its group commit (the rows and the pending claims live on disk; the
// claimer reads at most ClaimSignMax at a time), the records in
// flight (MaxInflight bounds them: beyond it Submit refuses with
// ErrOverloaded rather than queue without bound) and the newest
// Config.CacheEntries attested records. Everything older is read from the
// history on disk (history.go), outside the sequencer's lock. Snapshots
// (snapshot.go) bound restart time: start-up loads the newest one and
// replays only the log after it. Retention (retain.go) bounds the disk.
package node
