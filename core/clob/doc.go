// Package clob is the venue's batch-auction engine: one book per market,
// each clearing all of its crossing orders at one price per tick. The rule
// book is docs/auction.md; this package implements it literally, and a
// differential test (differential_test.go) runs it event by event against
// the naive reference engine in internal/refbook.
//
// # Model
//
// The engine is a pure function of its inputs: Admit (an envelope of
// intents stamped with the sequencer's time), Tick (a tick time) and
// CreateMarket. It keeps no money: every lock, spend and credit goes through
// the caller's Accounts, so the ledger's own conservation check covers the
// books. No clock, goroutines, I/O or randomness; no map iteration.
//
// Admit validates the whole envelope first — each intent against the state
// left by the ones before it, tracking the orders the envelope creates, the
// projected reservation of each order it updates, its running locks and
// releases per token, and its use of each book's capacity — and only then
// applies it, so an envelope is admitted whole or not at all. Applied
// intents go onto their book's pending ring (transfers onto the engine's
// transfer ring) in admission order; an order is live, and reserves its
// funds, from admission.
//
// A book's tick drains its pending ring, expires orders whose ttl ran out,
// matches, and cancels what is left of IOC and market orders. Matching is a
// walk of the two sides in queue priority that records (bid, ask, lots)
// chunks without changing the book; the clearing price is derived from the
// walk, POST_ONLY orders that would trade are refused and the walk repeats
// without them, and only then are the chunks settled.
//
// # Data layout
//
// Each book is a shard sized by Limits: an arena of up to OrdersMax+1
// order slots (arenaCapMin of them allocated at CreateMarket, the rest by
// append as live orders first need them) split into a hot half (node:
// queue links, remaining lots, price, flags — what the walk touches) and a
// cold half (order: id, owner, money; one and five cache lines, the lines
// updates alone use last), addressed by uint32 index with 0 as
// nil and a generation per slot (orderRef packs both, so a handle to a freed
// slot is detected); a free list; an open-addressing id index of 8-byte
// entries (index.go); a pending ring of PendingMax; an expiry queue
// (expiry.go) of (ExpiresUs, handle) entries — a FIFO for the usual pushes
// in ExpiresUs order, a min-heap for the others — from which an order
// that leaves early is removed lazily (its handle goes stale; the queue
// is compacted when the stale entries outnumber the live orders), and
// whose orders of one ExpiresUs are sorted by id when they expire; and
// per side a slice of price levels sorted with the best price last, so
// that the levels that change most (near the best price) are cheap to
// insert and remove, each level a FIFO of orders linked through the arena.
// The engine owns the scratch buffers the tick reuses (chunks, the sort of
// new orders — an LSD radix sort of the ids' first 8 bytes once there are
// radixSortMin of them, which also sorts the orders that expire together
// —, landed envelopes).
// In steady state, once the arena has reached the book's high-water mark of
// live orders, nothing allocates (alloc_test.go). A large book's slots,
// index lines and the tick's event buffer are mostly out of cache when
// touched, so the loops that know their next orders ahead (admission's
// next free slot, the drain, the settlement of chunks, the removal of
// filled orders) prefetch them a few orders in advance (prefetch_amd64.s;
// a no-op elsewhere). Prefetching changes no result.
//
// Queue priority: new orders (and re-queued updates) are appended to their
// level at the end of the drain in ascending id order, behind every order
// from an earlier tick; market orders are put at the front of the level of
// their cap, also by id. They are removed in the same tick, so levels hold
// limit orders only between ticks.
//
// Numbers: sizes are int64 lots and prices int64 steps, each at most 2^53;
// clearing prices are half-steps. Quote amounts are lots × half-steps ×
// unitQuote, computed exactly in uint256 at the edges (units.go). Level
// volumes are 128-bit sums of lots.
//
// # Invariants
//
//   - Invariant: for every (token, owner), the ledger's locked amount equals
//     the reservations of the owner's live orders plus its pending
//     transfers. An order's reservation is what it reserved minus what its
//     fills consumed, released when it leaves the book. An admitted update
//     moves the reservation to its target at once; the drain of an order's
//     last pending update reconciles it with the order as it actually is
//     (a no-op unless an update was dropped as late).
//   - Invariant: levels are never empty; a side's levels are strictly
//     sorted, best last; a level's count and volume equal the sum over its
//     queue. Between ticks no order is in state new.
//   - Invariant: every live order is in the id index; every resting order
//     with an expiry has one entry in the expiry queue, with its
//     ExpiresUs; between ticks the queue's earliest entry is live.
//   - Every fill of a tick in one book is at the one clearing price, which
//     lies within every filled order's own limit or cap.
//   - Determinism: the same inputs give the same events and the same
//     AppendSnapshot bytes; an engine loaded from those bytes (LoadEngine)
//     gives the same events and snapshots for the same inputs from then on.
//
// Order ids are keccak256(abi.encode(signer, nonce, index in the
// envelope)). Admit hashes them itself unless the envelope was prepared
// for the admission's signer and nonce (PrepareIDs, which the node runs on
// its event loops before the sequencer): then it takes Intent.ID as given.
// OrderIDOf gives the same id either way, so a replay that never prepares
// builds the same books.
//
// Order ids must be unique: the engine panics ("BUG: ...") if an admission
// would create an id that is live, i.e. when a (signer, nonce) is admitted
// twice. The id index trusts ids to be uniform (they are keccak outputs).
//
// # Perpetual markets
//
// A perp book (docs/perps.md is its rule book) matches exactly as a spot
// book, but its orders reserve nothing and its fills move positions, not
// tokens: realized PnL, fees, funding and liquidation penalties go through
// the native cash with Accounts.Credit and Accounts.Debit (a debit beyond
// the free cash becomes debt). Admission replaces the reservation with the
// margin check; native spends anywhere are limited to the withdrawable part.
//
// State (perp.go): per perp book a dense array of records, one per
// (account, book) with a position or live non-reduce-only orders (size S
// lots, cost C q, and B, A: the remaining lots of its buy and sell orders),
// split into a hot half (what the tick's scan reads) and a cold half
// (realized PnL, funding, opening), swap-removed when empty and found
// through posOf[account]; an account table (index, never iterated as a
// map) and the list of accounts in the order they first opened a position,
// which is what liquidation walks. Money inside is in q = unitQuote wei,
// signed values as two's complement uint256, converted at the Accounts
// boundary; the scan works in 128-bit integers.
//
// Every tick a perp book runs (every interval): drain, expire, clip
// reduce-only orders, match; then perpTick moves its oracle (walk), mark
// and funding index, and scans every listed account once: funding paid,
// equity − maintenance, liquidation to the backstop.
//
//   - Invariant: Σ S = 0 per perp book; B and A equal the remaining lots of
//     the account's live non-reduce-only orders (pending or resting); a
//     record exists iff S, B or A is non-zero; an account's open count is
//     its number of records with S ≠ 0.
//   - Invariant: Σ over accounts of (Cash − Debt) − Σ C·q = issued − fees
//     (the ledger's CheckSupply, with PerpCost).
//   - After a tick's scan, no account but the backstop has an open position
//     with equity below maintenance, or negative Cash − Debt without one.
//   - Sizes: admission keeps |S + B| and |S − A| ≤ 2^53 lots, so S, B and A
//     fit int64; the backstop's position is the sum of what it took over.
//
// # Triggers
//
// A perp book also stores take-profit / stop-loss triggers (trigger.go,
// docs/perps.md "Triggers"): an arena addressed by orderRef like the
// orders', bounded by OrdersMax, with a hot part per slot (state, trigger
// price, direction, expiry: what the tick scans, sequentially), the live
// triggers sorted by id (the order ids, keccak(signer, nonce, sequence))
// and the Asset-grouped ones sorted by (owner, id). Trigger intents wait in
// the pending ring; at the end of each tick every perp book that ran first
// sweeps the owners a fill of the tick left flat (the book's flat list:
// the resting orders their Asset triggers fired, then those triggers, are
// cancelled), then scans its triggers, cancels the expired ones and fires
// those whose condition holds at its mark, each set in id order; a fired
// trigger becomes an order (created by the same newOrder as a submit,
// keeping the trigger's id, asset-bound if the trigger was Asset-grouped)
// pushed onto the pending ring as intentFired: it lands in the book's next
// tick and adds no envelope to Landed.
//
//   - Invariant: a book's id index holds exactly its live (pending or
//     stored) triggers, its Asset index exactly the Asset-grouped ones, and
//     each hot part mirrors its slot; each pending trigger is named by a
//     submitTrigger in the pending ring; the perp book's bound count is its
//     number of live asset-bound orders; the flat list is empty between
//     ticks.
//
// # Decisions the rule book leaves open
//
//   - Ticks drain every pending intent of a due book, including any admitted
//     after the tick's time (the rule book says "drain the pending ring";
//     this also means an update's admission-time lock change always meets
//     the order before its next match).
//   - Landed lists an envelope in every tick that drains one of its intents;
//     an envelope whose intents land on books with different schedules is
//     listed in each of those ticks (once per tick).
//   - POST_ONLY refusals are emitted in the walk's allocation order (bid
//     before ask in each chunk), before the fills; IOC and market
//     remainders are cancelled in the order they entered the book.
//   - A fill emits the buyer's event, then the seller's.
//   - Owners play no part in matching: an owner's buy may fill against its
//     own sell (no self-trade prevention: the live network names none;
//     docs/auction.md, "Self-matching").
//   - A liquidation removes its account's orders with EventMarginCancel
//     (the openapi's margin_canceled), every other removal but an expiry
//     and a post-only refusal is EventCancel.
//   - A re-queued update keeps its AdmitTickUs and ExpiresUs.
//   - A market order with POST_ONLY (and no IOC) is refused as "cannot be
//     POST_ONLY" before the IOC requirement is checked.
//   - If a dropped (late) shrinking update's released funds are no longer
//     available when its lock must be restored, the order is cancelled.
//   - Transfers are dropped silently (no event) when late.
//   - Every event of a book but EventTriggerFired lies in its book's
//     range, late ones (liquidation pass, flat sweep, triggers) after the
//     book's own (groupLate); a book that did not run but lost orders or
//     triggers to a liquidation gets an idle BookTick. Transfers and then
//     the firings follow the last range.
//   - A book counts as having executed a tick only when it ran (had work).
//   - Wire prices of half-steps (BookTick.Price, LastPrice) are
//     floor(halfSteps × tick / 2): inexact only for a midpoint on a market
//     whose tick precision is odd. Quote amounts are always exact.
//
// # Limits
//
// OrdersMax live orders and PendingMax pending intents per book
// ("orderbook is full"; the transfer ring also has PendingMax entries);
// OrdersMax live triggers per perp book ("too many triggers on this
// orderbook");
// OrdersMaxLimit, PendingMaxLimit and MarketsMax bound the configuration;
// BatchIntentsMax intents per envelope; sizes and prices ≤ 2^53 lots and
// steps ("value out of range"); lot size and unitQuote ≤ 2^128 (checked at
// CreateMarket) so that every amount fits 256 bits.
//
// # Snapshot layout
//
// AppendSnapshot writes canonical bytes: books by id, levels best first,
// orders in queue order, pending intents in admission order; never arena
// slots or map order. Integers are big-endian; amounts are 32-byte uint256.
// It is taken between ticks, so every live order is either resting (in a
// level) or pending (in its submit, in the pending ring); a cancel or update
// names its target by id, zero once the target has left the book.
//
// LoadEngine reads the bytes back. The Limits are not in them; everything
// the snapshot does not hold is rebuilt: arena slots (handed out 1, 2, ...
// in snapshot order), generations, the free list, the id index, level links
// and volumes, and the expiry queue (from the resting orders' expiresUs;
// it yields orders in (expiresUs, id) order whatever its layout). The
// scratch buffers are empty between ticks. LoadEngine refuses
// whatever AppendSnapshot could not have written from a state between ticks
// as far as the engine relies on it (see its doc), so what loads re-encodes
// to the same bytes. Money is checked by the ledger (VisitLocks).
//
//	engine:   | "CLOB2" | seq u64 | transferLastUs u64 | nBooks u32 | book* | nTransfers u32 | transfer* |
//	book:     | id 32 | kind u8 | base 20 | quote 20 | intervalUs u64 |
//	          | tick 32 | lot 32 | makerFee 32 | takerFee 32 |
//	          | (len u32 | bytes) × name, baseSymbol, quoteSymbol |
//	          | lastTickUs u64 | hasPrice u8 | priceHalfSteps u64 |
//	          | bids: nLevels u32 | level* | asks: nLevels u32 | level* |
//	          | nPending u32 | pending* |
//	level:    | priceSteps u64 | nOrders u32 | order* |
//	order:    | id 32 | owner 20 | side u8 | type u8 | flags u8 | state u8 (1 pending, 3 resting) |
//	          | assetBound u8 (1: fired by an Asset-grouped trigger; perp books only) |
//	          | priceSteps u64 | remLots u64 | queueTickUs u64 | admitTickUs u64 | expiresUs u64 |
//	          | deadlineUs u64 | ttlUs u64 | pendingUpdates u32 |
//	          | reserved 32 | settled 32 (zero unless pendingUpdates > 0) | size 32 |
//	          | filledBase 32 | filledQuote 32 | fee 32 |
//	pending:  | kind u8 | seq u64 | tag u64 | deadlineUs u64 | landUs u64 | body |
//	          body: submit, and a fired trigger's order (kind 8): order;
//	                cancel: target id 32 (zero if gone);
//	                update: target id 32 | newLots u64 | newSteps u64 | reserve 32;
//	                submitTrigger: live u8 | trigger (if live);
//	                cancelTrigger: target id 32 (zero if gone);
//	                updateTrigger: target id 32 | signed lots u64 | limitSteps u64 | triggerSteps u64
//	transfer: | owner 20 | token 20 | to 20 | amount 32 | deadlineUs u64 | landUs u64 | seq u64 | tag u64 |
//
// After the transfers, when the engine has a perp book, the perp section
// (layout in perp_snapshot.go): each perp book's parameters and oracle,
// mark and funding state; the accounts in the order they first opened a
// position; each perp book's open positions in that order. B, A and the
// records of accounts with orders only are rebuilt from the live orders.
//
//	then per perp book, ascending id, its stored triggers:
//	triggers: | n u32 | trigger* (ascending id) |
//	trigger:  | id 32 | owner 20 | signer 20 | nonce u64 | side u8 | type u8 | grouping u8 | flags u8 |
//	          (type 0 take-profit, 1 stop-loss; grouping 0 None, 1 Asset: the live ABI's enums)
//	          | lots u64 | limitSteps u64 | triggerSteps u64 | deadlineUs u64 | ttlUs u64 |
//	          | admitTickUs u64 | expiresUs u64 |
package clob
