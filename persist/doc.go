// Package persist keeps the node's durable state: the ordered log of every
// input the sequencer applied to the ledger (append-only segment files),
// and in Badger the attested history (records, their attestation batches
// and indexes) and state snapshots.
//
// Model. The sequencer appends inputs in the order it applied them;
// AppendInputs writes a group of them to the log's segment files with one
// write and one fdatasync (segments.go), and only after it returns does the
// node acknowledge those inputs to clients. What the committee signed
// (attestation batches, claim proofs) is written there too, as side
// records (sides.go), in the same write. Store then writes what goes with
// them to Badger in one transaction, without a sync: the attestation
// batches and their history, the tick links, withdrawal rows and claims,
// snapshots; and the published ticks to files of their own (ticks.go). Replay feeds the inputs back in order at
// start-up, which rebuilds the exact ledger state (core is deterministic);
// the rows derived from inputs after Derived (a crash between the two
// writes) are written again from that replay, and the side records after
// it stored again (Sides). Checkpoints (checkpoint.go) bound what a stop of
// the whole machine can take from Badger.
//
// Segment files (dir/log/<first seq, 16 hex digits>.seg):
//
//	segment: magic "LVSEGv1\n" 8 | first seq 8 | frames | zeros written
//	         ahead of them (a zero length ends the frames)
//	frame:   length 4 | crc32c(payload) 4 | payload: kind (u8) | body
//	         (kinds with the high bit set are side records: sides.go)
//
// Badger keys and values:
//
//	key:   "format"                             -- FormatVersion (u8), written
//	value: version                                 when the log is created
//
//	key:   "derived"                            -- the seq of the last input
//	value: seq 8                                   whose Group is stored
//
//	key:   "genesis"                            -- the node's genesis description
//	value: (the node's JSON; opaque here)          (at most GenesisBytesMax), written
//	                                               at each start: ledgerd replay
//	                                               starts from it (replay.go)
//
// Inputs (a frame's payload; in a backup, key 'i' | seq 8):
//
//	kind 1, transaction (integers big-endian; u256 is a length byte n, 0 to
//	32, then the value's n minimal big-endian bytes; timeUs is the
//	sequencer's admission time, which the orderbook checks deadlines against):
//	+--------+------+------+---------+-------+------+-------+------+-------+-----+--------+--------+
//	| timeUs | hash | type | chainID | nonce | from | hasTo |  to  | value | gas | tipCap | feeCap |
//	|   8    | 32   |  1   |   8     |   8   |  20  |   1   |  20  | u256  |  8  |  u256  |  u256  |
//	+--------+------+------+---------+-------+------+-------+------+-------+-----+--------+--------+
//	|  v   |  r   |  s   | dataLen |  data   | nTuples 4 | nTuples × (address 20 | nKeys 4 | keys 32 each) |
//	| u256 | u256 | u256 |   4     | dataLen |           |                                               |
//	+------+------+------+---------+---------+-----------+-----------------------------------------------+
//
//	kind 2, deposit:      | id 32 | token 20 | to 20 | amount u256 |
//	kind 3, base fee:     | fee u256 |
//	kind 4, auction tick: | tickUs 8 |
//	kind 5, new market:
//	+----+------+------+-------+------------+---------------+---------+----------+----------+
//	| id | kind | base | quote | intervalUs | tickPrecision | lotSize | makerFee | takerFee |
//	| 32 |  1   |  20  |  20   |     8      |     u256      |  u256   |   u256   |   u256   |
//	+----+------+------+-------+------------+---------------+---------+----------+----------+
//	| nameLen 1 | name | baseSymbolLen 1 | baseSymbol | quoteSymbolLen 1 | quoteSymbol |
//	+-----------+------+-----------------+------------+------------------+-------------+
//	kind 6, new perpetual market: kind 5's fields (market kind 1 = perpetual), then
//	+-------------+--------------+----------------+------------+-----------+-------------+---------+----------+
//	| maxLeverage | interestRate | maxFundingRate | maxPremium | markClamp | oraclePrice | walkBps | walkSeed |
//	|      4      |     u256     |      u256      |    u256    |   u256    |    u256     |    4    |    8     |
//	+-------------+--------------+----------------+------------+-----------+-------------+---------+----------+
//	kind 7, oracle price: | book 32 | price u256 |
//	kind 8, account lock: | account 20 |
//	kind 9, set balance:  | account 20 | native balance u256 |   (anvil_setBalance)
//	kind 10, set nonce:   | account 20 | next nonce 8 |          (anvil_setNonce)
//	kind 11, clock offset: | offsetUs 8 (two's complement) |    (evm_increaseTime,
//	                                                              evm_setNextBlockTimestamp)
//	kind 12, a transaction admitted while a tick cleared: kind 1's layout
//	kind 13, oracle move:  | book 32 | bps 4 (two's complement) | gap end µs 8 (0: now) |
//	                                                             (lab_moveOracle, lab_oracleGap)
//
//	key:   'b' | batch seq (u64, big-endian)    -- attestation batches, seq from 1,
//	value: (below)                                 no gaps (Store, Batches, Batch)
//	+-------+--------+------+------------+--------+-------+------------------------+---------------+
//	| epoch | timeUs | root | firstPlace | leaves | nSigs | nSigs × (validator 20 | | leaves × leaf |
//	|   8   |   8    |  32  |     8      |   4    |   2   |   sig r‖s‖v 65)        |      32       |
//	+-------+--------+------+------------+--------+-------+------------------------+---------------+
//
// A batch covers the records at places firstPlace … firstPlace+leaves-1. A
// record's place is its position in log order among the inputs that produce
// a record (all but base-fee changes, market creations, oracle prices and moves,
// account locks and the controls of kinds 9 to 11): the order the attester
// signs them in, and the order of the history listings. The leaves rebuild the Merkle tree (every receipt's
// proof) without the records.
//
// History, written with the batch that attests it (Store, in the same
// group commit), read without any lock of the node's:
//
//	'r' | place 8                 → batch seq 8 | leaf 4 | record, or 0x80 and
//	                                the record s2-compressed (block format;
//	                                when that saves an eighth or more)
//	'h' | tx hash 32              → place 8
//	'a' | address 20 | place 8    → (empty)      sender and recipient
//	'l' | place 8                 → nLogs uvarint | per log: address 20 |
//	                                nTopics 1 | topics (the record's logs, one
//	                                row; earlier builds wrote 'l' | place 8 |
//	                                log index 4 → one log's, still read and
//	                                pruned)
//	't' | batch time 8 | seq 8    → firstPlace 8 (time → place)
//	'k' | intent tx hash 32       → tick time 8 | tick hash 32
//	                                (written with the tick's input)
//	record: kind 1 | seq 8 | status 1 | gasUsed 8 | effectiveGasPrice u256 |
//	        tickUs 8 | nLogs 4 | logs | tx (as in kind 1 above, without timeUs)
//	log:    address 20 | nTopics 1 | topics | dataLen 4 | data
//
// Snapshots: 's' | seq 8 → zstd(the node's state after the first seq
// inputs; its layout is the node's). The frame's checksum catches damage.
//
// Published ticks (ticks.go): one file each, dir/ticks/<tick time µs,
// 16 hex digits>.tick = crc32c(the rest) 4 | the tick's subscription data
// (the node's tick codec; opaque here) compressed with s2 (block format),
// written (through a temporary name, renamed) before the Store's commit,
// without a sync: a checkpoint syncs those written since the last one. In
// Badger, 'p' | tick time 8 | chunk 2 → the chunk-th piece (at most 512
// KiB, chunks from 0 with no gap) of such a compressed body: how a backup
// carries the files and a restore stores them, and how an earlier build
// stored every tick; 'p' | tick time 8 → the data whole and uncompressed,
// from builds before that. All are read and deleted alike. Only the newest
// KeepTicks stay: Store deletes older ones.
//
// Bridge withdrawals (withdrawals.go): 'w' and a family byte. The rows and
// indexes are written with the tick's input that executed them; a claim
// with the group commit after the committee signed it, which also takes
// the row out of the pending set (in one write). Retention leaves them.
//
//	'w' 'r' | tick time 8 | position 4         → tx hash 32 | seq 8 | withdrawer 20 |
//	                                              to 20 | token 20 | amount u256 |
//	                                              errLen 1 | error | (withdrawal id 32)
//	'w' 'h' | tx hash 32                       → tick time 8 | position 4
//	'w' 'i' | withdrawal id 32                 → tick time 8 | position 4
//	'w' 'a' | withdrawer 20 | tick time 8 | position 4 → (empty)
//	'w' 'q' | tick time 8 | position 4         → (empty): executed, no claim yet
//	'w' 'c' | tx hash 32                       → claim hash 32 | proof
//
// A row's withdrawal id (docs/bridge.md, "Two paths") ends its value, and
// has an 'i' key, only when it is not the row's tx hash: a withdrawal
// through the orderbook. A Bridge withdrawal's id is its tx hash, and so is
// that of every row a build before the orderbook's withdraw wrote, which
// therefore reads as it did. A claim stays keyed by the tx hash (its
// aux_tx_suffix) whichever id found the row.
//
// A value that does not decode exactly (wrong length, unknown kind, a u256
// with a leading zero byte) is corruption: Replay and Batches stop with an
// error rather than guess.
//
// Limits: MaxDataBytes bounds a transaction's calldata in a record,
// MaxRecordLogs and MaxLogTopics a stored record's logs, SnapshotBytesMax a
// snapshot. PruneBefore and PruneLogBefore delete old history and log
// inputs (retention; the log by whole segments, each at most 64 MiB and one
// per run of the node); the newest batch always stays.
//
// Whole-store copies (backup.go): Backup streams every key and value of
// one read transaction, with the inputs up to its "derived" mark among
// them as 'i' keys; Restore makes the store and the log hold exactly a
// backup's pairs (writing the difference: the log keeps the prefix it
// shares with the backup), for the node's evm_snapshot, evm_revert
// and state dumps. The key "restoring" is set while a Restore writes and
// removed when it ends: Open refuses a store that still holds it.
//
// OpenReadOnly opens a log in Badger's read-only mode for ledgerd replay:
// it writes nothing in the directory and takes its lock shared, so it
// fails while a node holds the directory.
//
// Reads. Every value but a large snapshot lives in Badger's LSM tree (the
// value threshold is 1 MB), so no iterator prefetches values: Badger's
// prefetch starts a goroutine per item, which made a short eth_getLogs
// scan start hundreds of them for values the item already holds.
package persist
