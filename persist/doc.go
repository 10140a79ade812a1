// Package persist keeps the node's durable state in Badger: the ordered log
// of every input the sequencer applied to the ledger.
//
// Model. The sequencer appends inputs in the order it applied them; Append
// writes a group of them in one synced Badger transaction, and only after it
// returns does the node acknowledge those inputs to clients. Replay feeds
// them back in order at start-up, which rebuilds the exact ledger state
// (core is deterministic).
//
// Keys and values:
//
//	key:   'i' | seq (u64, big-endian)          -- seq starts at 1, no gaps
//	value: kind (u8) | body
//
//	key:   "format"                             -- FormatVersion (u8), written
//	value: version                                 when the log is created
//
//	kind 1, transaction (all integers big-endian, u256 as 32 bytes; timeUs is
//	the sequencer's admission time, which the orderbook checks deadlines against):
//	+--------+------+------+---------+-------+------+-------+------+-------+-----+--------+--------+
//	| timeUs | hash | type | chainID | nonce | from | hasTo |  to  | value | gas | tipCap | feeCap |
//	|   8    | 32   |  1   |   8     |   8   |  20  |   1   |  20  |  32   |  8  |  32    |  32    |
//	+--------+------+------+---------+-------+------+-------+------+-------+-----+--------+--------+
//	| alAddrs | alKeys |  v  |  r  |  s  | dataLen |  data   |
//	|   4     |   4    | 32  | 32  | 32  |   4     | dataLen |
//	+---------+--------+-----+-----+-----+---------+---------+
//
//	kind 2, deposit:      | id 32 | token 20 | to 20 | amount 32 |
//	kind 3, base fee:     | fee 32 |
//	kind 4, auction tick: | tickUs 8 |
//	kind 5, new market:
//	+----+------+------+-------+------------+---------------+---------+----------+----------+
//	| id | kind | base | quote | intervalUs | tickPrecision | lotSize | makerFee | takerFee |
//	| 32 |  1   |  20  |  20   |     8      |      32       |   32    |    32    |    32    |
//	+----+------+------+-------+------------+---------------+---------+----------+----------+
//	| nameLen 1 | name | baseSymbolLen 1 | baseSymbol | quoteSymbolLen 1 | quoteSymbol |
//	+-----------+------+-----------------+------------+------------------+-------------+
//
//	key:   'b' | batch seq (u64, big-endian)    -- attestation batches, seq from 1,
//	value: (below)                                 no gaps (AppendBatch, Batches)
//	+-------+--------+------+--------+-------+-------------------------------------+
//	| epoch | timeUs | root | leaves | nSigs | nSigs × (validator 20 | sig r‖s‖v 65) |
//	|   8   |   8    |  32  |   4    |   2   |                                     |
//	+-------+--------+------+--------+-------+-------------------------------------+
//
// A batch covers the next `leaves` records after the previous batch's, in
// log order, counting the inputs that produce a record (all but base-fee
// changes and market creations): the order the attester signs them in.
//
// A value that does not decode exactly (wrong length, unknown kind) is
// corruption: Replay and Batches stop with an error rather than guess.
//
// Limits: MaxDataBytes bounds a transaction's calldata in a record.
// Snapshots and receipt indexes are not stored yet: a restart replays the
// whole log (and restores the stored batches over it).
package persist
