// Package subs is the subscription hub: it turns each auction tick, each
// attested receipt and each past-perfect time into eth_subscription
// notifications for every eth_subscribe type of the spec, plus newHeads.
// It knows neither the transport nor the node: inputs are plain data
// (tickrec.Tick, Receipt), outputs go through the Conn interface, so it is
// deterministic and tested without sockets.
//
// # Model
//
//		node ──PublishTick / PublishReceipts / PublishPastPerfectTime──▶ rings (ringMu, O(1) per item)
//		                                                                    │ wake (chan, cap 1)
//		transport ──Subscribe → write response → Activate──▶ hub (mu) ◀── pump goroutine (Start) or Pump()
//		                                                       │ Conn.Send(head, body, tail): never blocks
//		                                                       ▼
//		                                                  connection's bounded outbound buffer
//
//	  - Publishers only append to rings under ringMu: the tick ring (the
//	    replay buffer, Config.ReplayTicks ticks), the receipts ring
//	    (ReceiptsRingSize) and the newest past-perfect time; they also record
//	    each tick's market, position and trigger entries as the latest
//	    state (the snapshot source of svc_markets, svc_positions and
//	    svc_triggers). They never wait for the fan-out nor for a
//	    subscriber. Subscribe and removal keep the count of svc_positions
//	    subscriptions per account under watchMu and publish the accounts
//	    as an immutable list (WatchedPositions: the node reads it under
//	    its own lock with one atomic load, no lock of the hub's).
//	  - The fan-out (Pump, on the hub goroutine after Start) walks the rings
//	    from its cursors and delivers each item to the live subscriptions it
//	    matches. Subscriptions are indexed per channel by account, else by
//	    orderbook, else "all", so a tick costs work proportional to the
//	    subscriptions it may match, not to every subscription.
//	  - Encode once: each payload is encoded at most once per tick and book
//	    and variant (orderbook depth; the account filter of svc_orders,
//	    svc_orders_v2, svc_withdrawals, svc_transfers), memoized in the
//	    tick's record and shared by every subscriber and by later replays.
//	    Only the envelope head (`{"jsonrpc":"2.0","method":"eth_subscription",
//	    "params":{"subscription":"0x…","result":`, built once per
//	    subscription) differs; the tail is `}}`.
//	  - Ownership: a published tickrec.Tick or Receipt belongs to the hub and is
//	    read for as long as it is in its ring. Payloads, heads and close
//	    messages are immutable once passed to Conn: the hub never reuses
//	    them, so the transport may queue references instead of copying.
//
// # Lifecycle of a subscription
//
// Subscribe validates the parameters (errors are -32602 with data naming
// the field; limits are -32005), checks since against the replay buffer,
// registers the subscription inert and returns its id ("0x" + hex
// counter, unique per hub). The transport writes the response, then calls
// Activate: only then is anything sent, so the response always precedes
// the first notification. Activate replays (delta channels with since:
// buffered ticks whose deadline is > since, up to the newest tick fanned
// out; the fan-out sends the following ones live: no gap, no duplicate,
// ticks that arrived between Subscribe and Activate included), or sends
// the snapshot (state channels: it covers every tick published so far, so
// the fan-out skips those the snapshot took before it reached them), then
// makes the subscription live.
// Unsubscribe and DropConn remove silently. A server-initiated close sends
// one close notification (Conn.SendClose) and removes the subscription;
// Unsubscribe of its id then answers false (the id no longer exists, as
// after eth_unsubscribe). Other subscriptions of the connection continue.
//
// # Channels
//
//   - svc_orderbook (delta): per book that ran, the ob_getOrderbook object
//     (obwire.AppendOrderbook) cut to depth.
//   - svc_orders (delta): per book, the array of OrderUpdate of the
//     subscription's events (type new/invalid with the ob_getOrders order
//     fields, fill, expired, canceled, modified); nothing when empty.
//   - svc_orders_v2 (delta): per book, one OrdersFrameV2 (see
//     appendOrdersV2): orders created in the tick each once, events with
//     exactly one of o/id, accts/a omitted for a one-account subscription,
//     fills with b/q and running totals tb/tq/tf, st "filled" on the fill
//     that finishes, totals on every terminal event. Resume by (since,
//     since_book): books ≤ since_book of the tick at since are skipped.
//   - svc_candles (delta): per book that traded,
//     {orderbook, timestamp_us, timestamp, price, volume, quote_volume}.
//   - svc_withdrawals, svc_transfers (delta): per tick, the array of
//     matching outcomes; nothing when none matches.
//   - svc_markets (state): the entries of the subscribed markets first,
//     ascending id, then each entry a tick publishes: the ob_getMarkets
//     entry with "orderbook" added in front. The node publishes a market's
//     entry every tick its book runs, and a perp market's every tick the
//     market runs (every auction interval, so marks stream on a quiet node)
//     with its oracle_price, mark_price, funding_rate, funding_index,
//     funding_last_updated and open_interest.
//   - svc_positions (state): {account, data: ob_getPositions} first, then
//     each time a tick touches the account: a fill, cancel, transfer,
//     liquidation (the backstop account too) or trigger event of it; and,
//     for an account with an svc_positions subscription (WatchedPositions)
//     and an open perp position, each tick that moved the mark or the
//     funding index of one of its positions' markets. Only watched accounts
//     are looked at for mark moves, so the node's cost per tick grows with
//     the subscriptions, not with the accounts holding positions.
//   - svc_triggers (state): {account, ob_getTriggers page members} first
//     (the newest published, else Config.Triggers), then the account's
//     stored triggers after each tick that changed them: a trigger intent
//     of the account landed (submit, update, cancel) or one of its
//     triggers fired or was cancelled (group, liquidation, ttl).
//   - logs, svc_accountReceipts, svc_confirmedReceipts (live): the log or
//     receipt, encoded by its ReceiptBody only when a subscriber is to get
//     it, and once however many do (a node nobody subscribes to encodes no
//     receipt); the receipt channels' since replays the retained receipts
//     with a later attestation time.
//   - svc_pastPerfectTime: the newest past-perfect time as a hex quantity,
//     whenever it advances and is ≥ the subscribed timestamp (immediately on
//     Activate when already reached).
//   - newHeads: a header per tick, decodable as go-ethereum's types.Header,
//     and one per idle slot (PublishIdleSlot: an auction slot the wall clock
//     reached with no tick due), so heads move on an idle node too. Idle
//     slots are not in the replay buffer and reach no other channel.
//
// # Server-initiated close
//
//		{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x…",
//		 "error":{"code":C,"message":M,"data":{"resumable":B,"resume_since":T,"resume_since_book":"0x…","missed":N}}}}
//
//	  - -32022 when Conn.Send refuses a notification (its buffer is full).
//	  - -32020 when the fan-out is more than LagTicksMax ticks (ReceiptsLagMax
//	    receipts) behind the publishers: the backlog is dropped for every live
//	    subscription of those channels (missed = dropped ticks/receipts); the
//	    replay buffer still holds it, so resuming works.
//	  - -32021 from Close, after delivering what was published.
//	  - -32023 when a payload is empty or larger than NotificationSizeMax
//	    (resumable false).
//	  - -32024 from Reset, the node's state replaced (evm_revert,
//	    anvil_loadState): every subscription but newHeads and
//	    svc_pastPerfectTime, which go on (resumable false).
//
// The strategy lab causes the first two on demand (lab.go):
// DropSubscription and DropAccount close with -32022; Lag withholds a
// subscription's next N ticks (at most LagTicksLabMax) and closes it -32020
// with missed = N and resume_since where it stood when the lag began. Both
// go through closeSub, so the notification and counters are the hub's.
//
// resume_since is the newest tick (receipt time) the subscription has
// everything up to: for a live subscription the newest tick fully fanned
// out, during a replay the last tick replayed, else the original since
// (absent when none). resume_since_book (svc_orders_v2) is the last book
// delivered of a tick that was only partly delivered.
//
// # Restart
//
// The hub lives in memory; what survives a node restart is what the node
// hands back to a new hub with Preload: its newest ticks, kept as
// tickrec.AppendTick bytes (core/tickrec/codec.go draws the layout;
// canonical, versioned) and read back with tickrec.DecodeTick, oldest first, ending at the node's last
// tick (Config.FloorUs), each chained to the one before by ParentHash.
//
//   - Survives: the replay buffer. A delta channel's since (and since_book)
//     from before the restart replays exactly the notifications a hub that
//     never stopped would send, byte for byte, within the preloaded range;
//     below its floor (the tick before the newest ReplayTicks given, else 0
//     when the first given is the ledger's first tick, else the first
//     given) it gets -32602 as before. The svc_markets, svc_positions and
//     svc_triggers snapshots use the preloaded ticks' entries, as they would the
//     published ones. The node's next tick must chain on the newest
//     preloaded one (newHeads then shows it as parentHash); if its
//     ParentHash does not, the hub drops what it preloaded (floor back to
//     Config.FloorUs, state entries gone).
//   - Survives when the node hands it back with PreloadReceipts: the
//     receipts ring, from the node's history. A receipt channel's since
//     replays the receipts attested after it; below the floor the node
//     gives (the newest receipt it did not hand back) it gets -32602.
//   - Does not survive: subscriptions (clients subscribe again; ids start
//     over at 0x1), the past-perfect time and idle slots (the node
//     publishes fresh ones), and the encoded payloads (re-encoded on
//     demand, to the same bytes).
//
// # Limits
//
// Subscriptions: SubsPerConnMax (128) per connection,
// Config.SubsPerAddrMax (SubsPerAddrMaxDefault, 1024) over all connections
// from one Conn.RemoteIP, SubsMax (65536) per hub. Subscribe beyond one
// answers -32005 "limit exceeded: too many subscriptions on this connection
// (max 128)" (… from this address (max 1024), … on this node (max 65536)).
// An unsubscribe or a dropped connection gives its subscriptions back.
//
// Parameters (-32602 with data naming the limit): BiddersMax (64),
// BooksFilterMax (64), and for a log filter LogAddressesMax (64), TopicsMax
// (4) and TopicAlternativesMax (16): "address: too many addresses (max
// 64)", "topics: too many topic positions (max 4)", "topics: too many topic
// alternatives (max 16)". ParseLogAddresses and ParseLogTopics decode the
// filter for eth_getLogs too, so the two have one set of bounds.
//
// Memory: ReplayTicks (default 1024, at most 16384 ticks),
// ReceiptsRingSize (16384), LagTicksMax (64), ReceiptsLagMax (4096),
// NotificationSizeMax (16 MiB), PositionsKeptMax and TriggersKeptMax
// (65536 accounts each).
//
// Input: a tick whose time is not after the previous one's (a wall clock
// that stepped back) is skipped, and PublishTick returns an error wrapping
// ErrTickOrder for the caller to log; the hub never panics on its input.
//
// # Decisions where the spec is silent
//
//   - `book` of an OrdersFrameV2 is the orderbook id, which is also its
//     position in the tick (books run in ascending id order); since_book is
//     an orderbook id, as on the live network.
//   - v2 numbers follow the live network's frames: amounts decimal strings
//     (sz signed), batch/n/end integers; `end` is tick + ttl, omitted
//     without ttl. Event kinds: placed → new, fill, cancel, expire,
//     update → modify (px, sz when the node gives the Modification).
//     Engine removals are cancels with totals, as the openapi's cancel:
//     a post-only refusal carries st "post_only_refused" (the one engine
//     removal that does, "today only post_only_refused"), and comes after
//     the tick's modify events (the engine's order: drain, then refusals);
//     a liquidation's margin cancel carries no st (the live SDK: "an
//     eviction that closes an order without a fill arrives as a plain
//     cancel"), though ob_getOrders then says margin_canceled. The only st
//     on a fill is "filled": the engine never evicts an order for margin
//     in the middle of its fills. svc_orders says "canceled" for both
//     (its OrderUpdate has no status for a removal). A self-match (an
//     account's buy against its own sell) is an ordinary pair of fills.
//   - Perp books: a v2 fill carries pa (the owner's position after it,
//     signed decimal), and the engine's perp events listed in the book's
//     range appear in v2 as k "liquidation" (sz the position taken over,
//     px the mark), "trigger_fired" (px the mark that fired it) and
//     "trigger_cancel" (the v2 kinds are open). A svc_orders fill carries
//     position_before and position_after (before and after this fill);
//     its OrderUpdate union is closed, so it leaves the perp-only events
//     out.
//   - svc_orders, svc_candles, svc_markets and svc_positions use hex
//     quantities, as the ob_ methods they mirror.
//   - svc_orders and svc_orders_v2 send one notification per book per
//     tick; an empty one is never sent.
//   - No parameter is ignored where it would widen the stream: a key a
//     channel does not take (unknown, misspelt, another channel's) is
//     refused with -32602 naming the channel's parameters (takes,
//     checkKeys). The one exception is the spec's: orderbook_ids (alias
//     clob_ids) is accepted and ignored, whatever its value, by
//     svc_positions, svc_triggers, svc_withdrawals and svc_transfers.
//   - The live network's aliases: orderbook_ids = clob_ids on every
//     channel taking it; bidder = account on every channel taking an
//     account (svc_orders, svc_orders_v2, svc_positions, svc_triggers,
//     svc_withdrawals, svc_transfers: the SDK subscribes svc_orders_v2
//     with {account}); svc_pastPerfectTime's timestamp = since. Giving
//     both names of one parameter is refused, even with equal values.
//   - bidders is rejected (not ignored) outside svc_orders_v2, and must
//     name 1 to 64 distinct accounts; bidder (or account) with bidders is
//     refused. depth is svc_orderbook's, since_book svc_orders_v2's; since
//     is taken by every channel but logs and newHeads; newHeads takes no
//     parameters (absent, null or {}).
//   - svc_orders_v2 lists in orders every order created in the batch,
//     the orders fired triggers become included (kind "triggered", with
//     trigger and grouping, the trigger's id and n, and a zero tx: the
//     order is the engine's, as the openapi's tx_hash is "zero for
//     engine-generated orders"): the market index knows them from the tick
//     that fired them, so the frame of the batch they land in lists them
//     and its events name them by o. svc_orders' "new" carries the same
//     Order as ob_getOrders (kind, zero tx_hash, trigger_type, grouping;
//     reduce_only and ioc on perp books). Trigger types and groupings are
//     named once, in codec/obwire (TriggerTypeName, GroupingName,
//     AppendGrouping); the stored tick refuses any value but the two the
//     engine takes (marketdata.ValidTriggerType, ValidGrouping) and a
//     triggered order with a transaction hash.
//   - A since in the future is accepted: ticks up to it are skipped.
//     since_book needs since, and the tick at since must still be retained.
//   - svc_pastPerfectTime also accepts {"timestamp": T} or {"since": T}.
//   - logs: fromBlock/toBlock compare Log.BlockNumber; the tags latest,
//     pending, safe and finalized mean no bound. minimum_attestations is
//     accepted as an alias of minAttestations.
package subs
