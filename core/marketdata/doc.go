// Package marketdata is the market-data read model: the index of orders,
// statuses, candles, fill and backstop histories and book snapshots that
// the node feeds from each admitted order and each engine tick, and the
// answers of the ob_ read methods as data (their JSON and the decoding of
// their parameters are codec/obwire's). It lives beside core because it
// is, like core, a pure function of its inputs: no clock (its "now" is the
// latest tick it was given), no goroutines, no I/O, and no import from the
// repository outside core. core/lint_test.go holds it to that.
// The same inputs in the same order give the same index and the same
// snapshot bytes, which is what lets the node restore it from a snapshot
// plus the intent log.
//
// It serves the ob_ JSON-RPC read methods: ob_getMarkets, ob_getOrderbook,
// ob_getOrders, ob_getCandles, ob_getPositions, ob_getFills and
// ob_getBackstopTransfers, and the perp reads ob_getTriggers (whose page
// svc_triggers also sends), ob_getOraclePrices, ob_getFundingRates and
// ob_getRankedPositions. Result shapes follow the live network's openapi
// (pod-sdk doc/api-reference/json-rpc/openapi.yaml); decisions where it is
// silent are listed below.
//
// # Model
//
// The node feeds one Index, under its own lock: the Index is not safe for
// concurrent use. It is deterministic: it reads no clock, and its "now" is
// the latest tick time it was given (NowUs).
//
//   - AddMarket registers a market (clob.MarketConfig).
//   - Admitted records every order an admitted transaction creates
//     (OrderMeta: id, book, owner, signer, tx hash, nonce, side, type, flags,
//     price, size, deadline, ttl, admission time). Status "pending".
//   - Tick applies a clob.TickResult: per book, the events in
//     Events[FirstEvent:EndEvent] move orders through the statuses
//     placed → "active"; fill → totals from the event's running totals, and
//     "filled" on the terminal fill; cancel → "canceled" (owner cancels and
//     IOC/market remainders alike); margin cancel (the owner's
//     liquidation removed it) → "margin_canceled"; expire → "expired" (ttl,
//     or a deadline missed before the order's tick); post-only refusal →
//     "post_only_refused"; update → the new price and expiry read from
//     Live (the engine) when New was given one. A terminal status
//     never changes again. The book's clearing price, last tick time and
//     new-order count come from its BookTick; a tick that traded
//     (BookTick.Traded) folds its clearing price and base volume into the
//     candles of every resolution. An event moves the resting counts of its
//     order's own book (Meta.Book). After its events each book that ran
//     is sampled (samples.go) when its state changed. Every fill event also becomes a row of
//     its owner's fills history, and every liquidation event (wherever the
//     engine lists it) a backstop transfer, with the account's equity read
//     from the EquityFunc set by SetEquity. One index-wide sequence numbers
//     the rows of both histories in event order.
//   - AppendSnapshot writes the whole index as canonical bytes, Load reads
//     them back (layout below): the node snapshots at tick boundaries and,
//     at start-up, loads the newest snapshot and replays only the intent
//     log after it.
//
// # Queries
//
// Each query returns data; codec/obwire's Append function of the same name
// encodes it as JSON, appending to a buffer (no reflection, no
// encoding/json), and its Parse functions decode the parameters. uint256 amounts are hex
// quantities ("0x0" for zero) except where the openapi shows decimal strings:
// order initial_size (signed, "-" for sells) and book level keys.
//
//   - Markets / AppendMarkets (ob_getMarkets): every market ascending by id,
//     with the openapi Market fields. A spot market has max_leverage 1 and
//     the perp fields null; a perp market's max_leverage, oracle_price,
//     mark_price, funding_rate, funding_index (signed decimal strings),
//     funding_last_updated and open_interest are read from the engine
//     (Live) when asked, not kept: the index holds no perp state, and the
//     perp parameters come from the engine's copy of the configuration
//     (the index snapshot does not carry them).
//     MarketsAt is the same as of a past time (the REST stats' to): the
//     24h figures and last price from the kept 1m candles, the perp state
//     the newest.
//   - Orderbook / AppendOrderbook (ob_getOrderbook): the caller passes the
//     engine's aggregated levels (clob.Engine.AppendLevels, best first); the
//     index adds clearing_price, grouping_precision (the tick precision:
//     levels are exact prices), timestamp (the book's last tick, 0 before
//     its first), new_orders_count (orders created in that tick), and
//     buys_count/sells_count (resting orders per side, whatever the depth).
//     Levels are keyed by decimal price strings, buys highest first and
//     sells lowest first, as the openapi example. A perp book adds
//     oracle_price and its funding fields from the engine; a spot one has
//     them null.
//   - Orders / AppendOrders (ob_getOrders): one account's orders, terminal
//     ones included, newest first by (admission time µs, nonce, order id).
//     next_cursor is "{ts}:{nonce}:{order_id_hex}" of the page's last order
//     (64 hex digits, no 0x; 0x is accepted on input) and is null when no
//     further order matches; the next page holds the orders strictly after
//     it, so pages neither skip nor repeat. total_count is present only when
//     the query set with_total. Filters: orderbook_id, or clob_ids (alias
//     orderbook_ids: the live guide's {clob_ids: [id]}) a list of books,
//     and status; the filter applies after the cursor, so pages stay exact
//     under it.
//   - Candles / AppendCandles (ob_getCandles): OHLCV of one market, newest
//     first, for candles whose start lies in [from_ts, to_ts]. The query is
//     the openapi's [id, {resolution, from_ts, to_ts?, limit?}] or, as an
//     alias answering the same, the live guide's positional [id,
//     startTimestamp, endTimestamp, interval] (obwire.ParseCandlesParams).
//   - Positions, PerpPositions / AppendPositions (ob_getPositions): the
//     account's holding of each market's base token, from a Balances
//     function the caller passes (the ledger's cash and locked), then its
//     open perp positions (which the caller reads from the ledger, with their
//     liquidation prices), then the account totals from
//     the ledger's margin summary the caller passes in PositionsData
//     (docs/perps.md, "Reads"); without one the totals are null.
//   - PageTriggers / AppendTriggers (ob_getTriggers): one page of the
//     triggers the caller read from the engine, by (orderbook id, trigger
//     id); next_cursor is "{orderbook_id}:{order_id}" (0x hex each) of the
//     page's last trigger, null on the last page; total_count counts the
//     book filter before pagination.
//   - PerpMarkets, PerpMarket / AppendOraclePrices, AppendFundingRates
//     (ob_getOraclePrices, ob_getFundingRates): every perp market ascending
//     by id, or one.
//   - AppendRanked (ob_getRankedPositions): the caller ranks the accounts
//     (net/node, best net PnL first) and passes a page of them
//     with their positions, the total and the queried account's rank.
//   - Fills / AppendFills (ob_getFills): one account's fill rows, newest
//     first; filters orderbook_id, from_ts (inclusive), to_ts (exclusive);
//     next_cursor "{ts}:{seq}" (the page's last row) or null, the next page
//     holding the rows strictly older than it.
//   - BackstopTransfers / AppendBackstopTransfers (ob_getBackstopTransfers):
//     the liquidations taken over by the backstop, newest first, of one
//     account or all; total_count counts the matching rows; cursor as
//     fills.
//   - ReportInput, Report / obwire.AppendReport (lab_strategyReport,
//     docs/lab.md "The strategy report"): one account's PnL over a window
//     split into spread capture, fees, funding and inventory, with
//     markouts, fill ratio, time at the top and a series, from its fills
//     history and the book samples (samples.go); ReportInput copies under
//     the caller's lock, Report computes without it.
//
// # Limits
//
//   - TerminalOrdersPerAccount (1024) terminal orders per account: past it
//     the oldest terminal order, by (admission time, nonce, order id), is
//     forgotten: it leaves ob_getOrders and its total_count, and the id map
//     (later events naming it are ignored). Live orders (pending, active)
//     are never dropped; the engine's OrdersMax and PendingMax per book
//     bound them. Which orders are forgotten depends only on the inputs.
//   - Armed triggers: one meta per trigger the engine holds (pending or
//     stored); a fired or cancel event removes it, and the engine bounds
//     the triggers per book.
//   - OrderFillsMax (64) per-tick fill rows per order, oldest dropped; the
//     order's cumulative amounts stay exact.
//   - CandleBucketsMax (1500) buckets per market and resolution, oldest
//     dropped: 25 h of 1m candles, 125 h of 5m, ..., 1500 days of 1d.
//   - OrdersLimitMax (200) orders per page (larger limits are clamped; the
//     default is OrdersLimitDefault, 50); OrdersBooksMax (64) ids in an
//     ob_getOrders clob_ids list (more is refused); CandlesLimitMax (1500)
//     candles per answer, also the default when the query names no limit.
//   - TriggersLimitMax (200) triggers per ob_getTriggers page, also the
//     default (the openapi's clamp); the engine bounds the triggers per
//     book. RankedLimitMax (100) accounts per ob_getRankedPositions page
//     (default RankedLimitDefault, 20), each with at most one spot holding
//     and one perp position per market; larger limits are clamped.
//   - FillsPerAccount (2048) fill rows per account and BackstopTransfersMax
//     (16384) backstop transfers in all: past them the oldest row is
//     forgotten (a cursor older than every kept row gives an empty page).
//     FillsLimitMax (500, also the default) rows per ob_getFills page,
//     BackstopLimitMax (200; default BackstopLimitDefault, 50) per
//     ob_getBackstopTransfers page; larger limits are clamped.
//   - SamplesPerBook (16384) book samples per book (samples.go: the
//     strategy report's reference, funding index and top-of-book owners,
//     at most TopOwnersMax (16) a side), one per tick at most and only
//     when the book changed; past it the oldest is forgotten.
//
// Nothing else grows with the orders or ticks processed: an account's
// memory is its live orders plus at most TerminalOrdersPerAccount terminal
// ones of at most OrderFillsMax fill rows each, plus at most
// FillsPerAccount history rows; a market's is its six candle rings and
// its samples; the
// backstop history is at most BackstopTransfersMax rows. The number of accounts and markets is bounded by the
// ledger, not here.
//
// # Decisions where the openapi is silent
//
//   - Finite order history: ob_getOrders lists an account's live orders and
//     its newest TerminalOrdersPerAccount terminal ones, not every order it
//     ever placed. A node runs for months and bots place orders every tick,
//     so keeping all history would grow without bound; the live network's
//     indexer keeps finite history too. Older orders stay in the intent log
//     and the receipts, not here.
//   - Order timestamps: every order carries "timestamp", its admission time
//     (µs), the ts of its cursor (not in the openapi Order schema). "end" is
//     the ttl expiry (the tick it entered its book plus ttl) and null when
//     the order has no ttl or is still pending. "fills" is [] unless the
//     query set with_fills; a fill row sums one order's fills of one tick, at
//     that tick's clearing price. "fee" is the order's accumulated fee in the
//     quote token (the live network says "always zero"; ours charges fees).
//     "price" is the current limit price (an update changes it);
//     "initial_size" stays the admitted size. effective_price is
//     filled_quote × 1e18 / filled_base, rounded down, "0x0" before any fill.
//     reduce_only and ioc, as the openapi Order says ("perp only ...
//     omitted for spot orders"), are booleans present on every perp order,
//     false included, and absent on spot ones; post_only, "reported on both
//     ... omitted when false", appears only when true; direction is the
//     side.
//   - Order kinds: "user_signed", or "triggered" for the order a fired
//     trigger became. The index arms every admitted trigger
//     (AdmittedTrigger) and, when its fired event comes, records its order
//     like an admitted one: the trigger's id, owner, signer and nonce, a
//     zero tx_hash (the openapi: "Zero for engine-generated orders
//     (liquidations, fired-trigger synthetics)"; AdmittedTrigger drops the
//     trigger's transaction, which ob_getTriggers still names, and Load
//     refuses a triggered order or armed trigger with one), its timestamp
//     the tick that fired it, its terms the engine's (a market trigger's
//     price is its slippage cap), plus trigger_type and grouping (named by
//     obwire.TriggerTypeName and GroupingName, the names ob_getTriggers writes;
//     grouping omitted for the default "none", as the openapi says). The
//     engine makes no other order on its own: a liquidation moves the
//     position to the backstop at the mark (docs/perps.md), with no order,
//     so "liquidation" is never produced.
//   - Statuses: pending, active, filled, expired, canceled,
//     margin_canceled and post_only_refused are produced; invalid is
//     accepted as a filter and matches nothing (refused intents never
//     create orders). margin_canceled is the openapi's "the engine removed
//     the order because the owner's margin capacity was exhausted": every
//     order of an account the liquidation pass closes, on any book, spot
//     ones included (docs/perps.md, "Liquidation", step 1). An index
//     snapshot from before it holds such orders as canceled and loads as
//     it was. Self-matches are not a status: an account's buy may trade
//     with its own sell, as any two orders (docs/auction.md).
//   - Candles: a bucket exists only if some tick inside it traded. Empty
//     buckets are omitted, never filled with a flat candle: no trade is
//     invented. The bucket still forming is returned too. Open/close are the
//     first/last traded tick's clearing price, high/low the extremes, volume
//     the summed base volume. to_ts defaults to no upper bound (there is no
//     clock). Resolutions: the openapi enum 1m, 5m, 15m, 1h, 4h, 1d; buckets
//     are aligned to multiples of their width since the Unix epoch (UTC days).
//   - 24h statistics: from the 1m buckets overlapping (now − 24 h, now], now
//     being the latest tick time seen by the index (any book), so stats roll
//     off even while a market is idle. volume_24h is base volume; high/low
//     are "0x0" without trades in the window. price_change_24h is in basis
//     points: (last clearing price − open of the window's oldest traded
//     bucket) × 10000 / that open, truncated toward zero, 0 without trades
//     in the window (an integer as the schema says; an absolute wei change
//     would not fit int64).
//   - last_clearing_price and clearing_price are "0x0" until the book first
//     clears. base_token_name/quote_token_name repeat the symbols (the market
//     configuration has no names). Addresses are lowercase hex.
//   - Positions: one SpotHolding per market whose base token the account
//     holds (cash or locked non-zero): balance = cash, locked_balance =
//     locked, free_balance = cash − locked; mark_price is the last clearing
//     price (null before the first). The index sees no deposits or
//     withdrawals, so a holding's cost_basis, unrealized_pnl and
//     realized_pnl, and net_deposits, are null rather than guessed. Two
//     markets sharing a base token each report it (and account_value counts
//     it in each). Perp positions and the totals follow docs/perps.md,
//     "Reads"; a perp position's stop_loss and take_profit are null (the
//     triggers are listed by ob_getTriggers).
//   - Fills: one row per fill event (not summed per tick, unlike an order's
//     "fills"). The openapi FillResponse fields, with fee this fill's fee
//     (the openapi says the order's accumulated fee, "always zero"),
//     order_type and initial_size null when the index did not know the
//     order (one it forgot, or a trigger armed before the node kept
//     armed triggers),
//     plus side and maker, and on perp markets position_before,
//     position_after and realized_pnl (signed decimal strings). from_ts is
//     optional (the openapi requires it; 0 when absent); next_cursor is
//     ours (the openapi pages by time only).
//   - Backstop transfers: the openapi BackstopTransferResponse. size is the
//     position taken over, cash the PnL the account realized at the mark,
//     equity the account's equity after the tick that liquidated it (after
//     the penalty and the bad-debt cover), read from the ledger. The first
//     parameter, the account, may be null or left out (every account's);
//     the openapi requires it.
//   - Parameters: JSON null counts as absent; integers may be JSON integers
//     or 0x quantities. No parameter silently widens a filter: a query
//     object member the method does not take (misspelt, another method's,
//     unknown), or one given twice, is refused with -32602 whose data
//     names it and lists the members taken: every member the live openapi
//     documents (OrdersQuery, CandlesQuery, TriggersQuery, FillsQuery,
//     BackstopTransfersQuery) plus ours (ob_getOrders' clob_ids and
//     orderbook_ids, ob_getFills' cursor). clob_ids and orderbook_ids are
//     one parameter under two names (giving both is refused) and exclude
//     orderbook_id; an empty list means every book, as the spec's
//     orderbook_ids of the subscriptions. ob_getCandles' positional
//     interval is a resolution name or its width in whole seconds (60 ..
//     86400), anything else refused; endTimestamp null is unbounded; a
//     parameter beyond either form is refused. depth must be ≥ 1 when
//     given; a query limit must be ≥ 1 (larger than the maximum is
//     clamped); to_ts < from_ts is an error.
//
// # Snapshot layout
//
// AppendSnapshot writes everything the index holds as canonical bytes: the
// same state gives the same bytes, never depending on map order, pointers
// or ring positions. Books ascend by id, accounts by address, an account's
// orders by (admission time, nonce, order id); candles go oldest first.
// Integers are big-endian (i64: two's complement), amounts 32-byte uint256,
// booleans one byte (0 or 1), strings a u32 length and their bytes.
//
//	index:   | "OBIX4" | nowUs i64 | nBooks u32 | book* | nAccounts u32 | account* |
//	         | nArmed u32 | armed* | history | samples |
//	book:    | id 32 | kind u8 | base 20 | quote 20 | intervalUs i64 |
//	         | tick 32 | lot 32 | makerFee 32 | takerFee 32 |
//	         | (len u32 | bytes) × name, baseSymbol, quoteSymbol |
//	         | ran u8 | lastTickUs i64 | newOrders i64 | hasPrice u8 | price 32 |
//	         | (nCandles u32 | candle*) × 1m, 5m, 15m, 1h, 4h, 1d |
//	candle:  | startUs i64 | open 32 | high 32 | low 32 | close 32 | volume 32 |
//	account: | owner 20 | nOrders u32 | order* |
//	order:   | meta | marketKind u8 | status u8 |
//	         | price 32 | filledBase 32 | filledQuote 32 | fee 32 | enteredUs i64 | endUs i64 |
//	         | nFills u32 | fill* |
//	meta:    | id 32 | book 32 | signer 20 | txHash 32 | nonce u64 |
//	         | side u8 | type u8 | flags u8 | kind u8 | triggerType u8 | grouping u8 |
//	         | admittedPrice 32 | size 32 | deadlineUs i64 | ttlUs i64 | admittedUs i64 |
//	armed:   | owner 20 | meta |
//	         kind: 0 user_signed, 1 triggered; triggerType and grouping are 0 on a
//	         user_signed order; armed triggers ascend by id and are of kind triggered
//	fill:    | tickUs i64 | base 32 | quote 32 | price 32 |
//	history: | seq u64 | nFillAccounts u32 | (owner 20 | nRows u32 | fillRow*)* |
//	         | nBackstop u32 | backstopRow* |
//	fillRow: | seq u64 | tickUs i64 | book 32 | orderID 32 | side u8 | flags u8 | type u8 |
//	         | size 32 | base 32 | quote 32 | fee 32 | price 32 | position 32 | realized 32 |
//	         flags: 0x01 maker, 0x02 hasOrder, 0x04 perp, 0x08 position negative,
//	         0x10 realized negative
//	backstopRow: | seq u64 | tickUs i64 | user 20 | book 32 | flags u8 |
//	         | size 32 | cash 32 | mark 32 | equity 32 |
//	         flags: 0x01 size negative, 0x02 cash negative, 0x04 equity negative
//	samples: | nBooks u32 | (book 32 | nSamples u32 | sample*)* |
//	sample:  | tickUs i64 | ref2 32 | fundingNeg u8 | funding 32 |
//	         | nBid u8 | owner 20 × nBid | nAsk u8 | owner 20 × nAsk |
//	         books with samples only, ascending by id; samples ascending by
//	         time, 1 to SamplesPerBook; owners ascending, at most TopOwnersMax
//
// History rows ascend by seq; fill accounts by address, each with 1 to
// FillsPerAccount rows.
//
// An order's owner is not written: it is its account's address. Neither
// are the books' resting counts (buys_count, sells_count), the accounts'
// terminal counts and the order id map, which Load derives from the
// orders, nor the 24h statistics, computed from the 1m candles and nowUs
// as at run time.
//
// Load is the inverse, for bytes read from disk: it never panics and
// refuses with an error whatever AppendSnapshot cannot have written (bad
// magic, short or trailing bytes, counts beyond the remaining bytes or the
// limits, unknown enums (a trigger type or grouping other than the two the
// engine takes), booleans other than 0/1, unsorted or repeated
// keys, an order of an unknown book, non-canonical fields such as a price
// on a book that never cleared, candles off their bucket boundaries or
// after nowUs, history rows with a sequence the index never issued, a time
// outside [0, now], an unknown book, a perp flag that does not match the
// market, or a negative zero). So whatever it accepts re-encodes to the same bytes
// (FuzzLoad checks it). The snapshot carries no checksum of its own: the
// node stores it zstd-compressed (persist.Snapshot), whose frame checksum
// catches a damaged value before Load sees it.
package marketdata
