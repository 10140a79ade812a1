package node

import "github.com/ledgervenue/node/core"

// Account locks and recovery (docs/bridge.md §7). The ledger decides: it
// reports a transaction that conflicts with the sender's newest, not yet
// durable transaction as core.RejectEquivocation. The sequencer then
// applies and logs a core.InputLockAccount for the sender, in the same
// critical section, and answers the transaction with core.RejectLocked (999)
// at once; the lock is durable with the next group commit, before any later
// input of the account. admin_lockAccount applies the same input.
//
// Finality for svc_getAccountInfo and svc_getLastFinalizedNonce is
// attestation: finalized maps each account to its newest attested
// transaction, fed by the attester and by the replay of attested records.
// An account missing from it (its last attested transaction came before the
// snapshot start-up loaded) falls back on the ledger's newest transaction,
// which is then attested unless it was in flight at the restart.

// LockAccount locks a with its newest transaction as the recovery target
// (admin_lockAccount) and returns the target; done runs once the lock is
// durable. An account without a transaction cannot be locked
// (core.RejectNoTransaction).
func (n *Node) LockAccount(a core.Address, done func(error)) (core.TxRef, core.Reject, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	rej, err := n.submitLocked(&core.Input{Kind: core.InputLockAccount, To: a}, func(_ *Entry, err error) { done(err) })
	if err != nil || !rej.OK() {
		return core.TxRef{}, rej, err
	}
	target, _ := n.ledger.RecoveryTarget(a)
	return target, rej, nil
}

// equivocated locks from, whose transaction equivocated on target, and
// returns the answer for that transaction.
// REQUIRES: n.mu held.
func (n *Node) equivocated(from core.Address, target core.TxRef) (core.Reject, error) {
	if _, err := n.submitLocked(&core.Input{Kind: core.InputLockAccount, To: from}, func(*Entry, error) {}); err != nil {
		return core.Reject{}, err
	}
	return core.Reject{Code: core.RejectLocked, Target: target}, nil
}

// AccountInfo is an account's nonces as svc_getAccountInfo reports them.
type AccountInfo struct {
	// Finalized is the newest attested transaction; HasFinalized is false
	// when there is none.
	Finalized    core.TxRef
	HasFinalized bool
	// Expected is the nonce the account's next transaction must carry.
	Expected uint64
	// Newest is the account's newest applied transaction (HasNewest: it
	// has one), attested or not; Locked: the account is locked, Newest
	// being its recovery target.
	Newest    core.TxRef
	HasNewest bool
	Locked    bool
}

// Pending reports whether the account's newest transaction is applied and
// not yet attested, as of the reading.
func (i *AccountInfo) Pending() bool {
	return i.HasNewest && (!i.HasFinalized || i.Finalized.Nonce < i.Newest.Nonce)
}

// finalize records rec, just attested, as its sender's newest finalized
// transaction.
// REQUIRES: n.mu held for writing.
func (n *Node) finalize(rec *core.TxRecord) {
	if rec.Kind == core.RecordTx {
		a := rec.Tx.From
		n.rviews.finalized.put(a[0], a, core.TxRef{Hash: rec.Tx.Hash, Nonce: rec.Tx.Nonce})
	}
}
