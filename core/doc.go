// Package core is the ledger state machine: accounts, nonces, balances and the
// rules that admit or reject a transaction.
//
// Model. The ledger is a pure function of its inputs. The sequencer (outside
// core) feeds it one Input at a time — a signed transaction, an observed
// bridge deposit, a base-fee change — in the order it writes them to the
// intent log; core applies each input completely or not at all and returns
// what happened (a TxRecord, or a Reject saying why nothing happened).
//
// Invariants:
//   - Determinism: the same inputs in the same order give the same state,
//     byte for byte (AppendSnapshot, StateHash). No clock, no goroutines, no
//     I/O; map iteration order never reaches an output (accounts and tokens
//     are sorted before encoding).
//   - Continuation: a ledger loaded from a snapshot (LoadSnapshot) gives the
//     same records, rejections and state hashes for the same inputs as the
//     ledger that wrote it, and its own snapshot is the bytes it was loaded
//     from.
//   - Conservation: Σ native (Cash − Debt) + fees burned + orderbook fees +
//     native withdrawn = genesis + native deposits + Σ cost of the open
//     perp positions, and for every other token Σ cash + fees + withdrawn
//     = issued, after every input (CheckSupply; docs/perps.md,
//     "Invariants"; docs/bridge.md §3).
//   - Debt: a native balance has Debt > 0 only with Cash = Locked (perp
//     losses, funding and fees first spend the free cash); credits and
//     unlocks pay debt first. Native spends (value, gas, orders, transfers)
//     take at most the withdrawable part (Withdrawable).
//   - A rejected input changes nothing.
//   - Gas: every transaction uses TxGas and burns TxGas × its effective
//     price, except a gas-exempt one (GasExempt: a withdrawal, a mint, an
//     orderbook delegated() envelope), which pays nothing and needs no
//     funds for gas.
//   - Mints (mint.go, docs/faucet.md): the Mint application credits and
//     issues at admission when Config.MintAllowed, at most
//     MintsPerAccountHourMax per recipient per hour of the admission
//     time; the hour's counters are in the snapshot.
//   - Withdrawals (withdraw.go, docs/bridge.md §2-§3): a withdraw to the
//     Bridge, or the orderbook's withdraw (the same call and rules, its
//     outcome keyed by WithdrawalID instead of the transaction hash), pays
//     no fee; admitted, it waits (at most
//     WithdrawalsPendingMax of them) for the first withdrawal batch, the
//     tick at the next multiple of clob.TransferIntervalUs, which runs
//     after that tick's auctions and gives every waiting withdrawal an
//     outcome (LastWithdrawals): burned into withdrawn, or refused with
//     nothing debited. Pending withdrawals and withdrawn are in the
//     snapshot.
//
// Prepared work (orderbook.go). What admitting an orderbook call needs of
// the transaction alone — decoding the calldata, recovering a delegated()
// certificate's signer (core/secp, the recovery the loops use for senders)
// and hashing the ids of the orders it creates — PrepareTx does ahead of
// the sequencer, on the node's event loops, and leaves in Tx.Pre. The
// ledger uses Pre only when it was prepared for this transaction (signer,
// nonce) and its own chain, and otherwise does the same work itself, as a
// replay of the log (which never carries Pre) does: the same pure functions
// on the same bytes, so the results are the same either way
// (TestPreparedEqualsInCore).
//
// Locks (recovery.go, docs/bridge.md §7). Each account keeps the hash of its
// newest transaction and a lock bit. A transaction that conflicts with the
// newest one while that is not yet durable is refused as an equivocation;
// the sequencer then applies an InputLockAccount (logged like any input, so
// a replay locks at the same place). A locked account's newest transaction
// is its recovery target, and nothing but a recover call to the Recovery
// application naming it is accepted from the account until one is.
//
// Controls (controls.go, docs/anvil.md). anvil_setBalance, anvil_setNonce
// and the clock offset of evm_increaseTime are inputs too: a balance set is
// issued or taken back (conservation holds), a nonce only moves forward, and
// the offset is state the node reads back after a restart.
//
// Snapshots. AppendSnapshot writes the whole state as canonical bytes
// (layout in snapshot.go, the orderbook's in core/clob/doc.go), so that
// the node can persist it at a tick boundary and, at start-up, load the
// newest snapshot with LoadSnapshot and replay only the log after it.
// LoadSnapshot treats its input as untrusted: corrupt or truncated bytes
// are an error, never a panic, and it checks the state it rebuilds from
// both sides (conservation, and locked amounts against the orderbook's
// reservations) before returning it.
//
// The one piece of state that is not part of the snapshot is the per-account
// "pending" mark: a transaction the sequencer applied but has not yet made
// durable. While it is set, the account's next transaction is refused with
// RejectPending. It is transient by nature (a replay starts with no pending
// transactions), so it is excluded from StateHash, and a loaded ledger
// starts with none.
//
// Limits: accounts and token balances live in maps that grow with use; the
// transaction and receipt index lives outside core (see net/node).
package core
