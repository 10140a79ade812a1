package core

import "encoding/binary"

// Account lock and recovery (docs/bridge.md §7). An account is open or
// locked. It locks through an InputLockAccount: the sequencer logs one when
// the ledger reports an equivocation (RejectEquivocation) and for
// admin_lockAccount. While locked, every transaction from it except a
// recovery is refused with RejectLocked; an accepted recovery opens it
// again.
//
// The recovery target is the account's newest transaction when it locked.
// No other transaction of the account can be accepted while it is locked,
// so the target is always the newest transaction (its hash, and the nonce
// just below the account's next one): a lock is one bit per account.

// TxRef names a transaction of an account: its hash and its nonce.
type TxRef struct {
	Hash  Hash
	Nonce uint64
}

// Recovery application reasons (RejectApp with App RecoveryAddress, in
// Detail), in the order they are checked.
const (
	RecoveryNotLocked   = "account is not locked"
	RecoveryMalformed   = "malformed call, want recover(bytes32,uint64)"
	RecoveryValue       = "value must be zero"
	RecoveryWrongTarget = "not the recovery target"
)

// recoverSelector is keccak256("recover(bytes32,uint64)")[:4].
var recoverSelector = Selector("recover(bytes32,uint64)")

// recoverCallLen is the length of recover's call data: the selector and two
// ABI words.
const recoverCallLen = 4 + 32 + 32

// Newest returns the account's newest transaction; false if it never sent
// one, or none since anvil_setNonce moved its nonce (controls.go).
func (l *Ledger) Newest(a Address) (TxRef, bool) {
	acc := l.accounts[a]
	if acc == nil || acc.Nonce == 0 || acc.newest == (Hash{}) {
		return TxRef{}, false
	}
	return TxRef{Hash: acc.newest, Nonce: acc.Nonce - 1}, true
}

// RecoveryTarget returns the recovery target of a locked account; false if
// the account is open.
func (l *Ledger) RecoveryTarget(a Address) (TxRef, bool) {
	if acc := l.accounts[a]; acc == nil || !acc.locked {
		return TxRef{}, false
	}
	return l.Newest(a)
}

// LockAccount locks a, with its newest transaction as the recovery target
// (InputLockAccount). Locking a locked account changes nothing; an account
// without a transaction has no target and cannot be locked.
func (l *Ledger) LockAccount(a Address) Reject {
	if _, ok := l.Newest(a); !ok {
		return Reject{Code: RejectNoTransaction}
	}
	l.seq++
	l.accounts[a].locked = true
	return Reject{}
}

// checkLock refuses a transaction from a locked account unless it calls the
// Recovery application, and reports an equivocation: a transaction at the
// nonce of the account's newest transaction, with another hash, while that
// one is not yet durable (the window in which validators could have split
// between the two). Once the newest transaction is durable a conflicting
// one is only a past nonce.
func (l *Ledger) checkLock(acc *Account, tx *Tx) Reject {
	switch {
	case acc == nil:
		return Reject{}
	case acc.locked && tx.To != RecoveryAddress:
		return Reject{Code: RejectLocked, Target: TxRef{Hash: acc.newest, Nonce: acc.Nonce - 1}}
	case acc.pendingSeq != 0 && tx.Nonce+1 == acc.Nonce && tx.Hash != acc.newest:
		return Reject{Code: RejectEquivocation, Target: TxRef{Hash: acc.newest, Nonce: acc.Nonce - 1}}
	}
	return Reject{}
}

// checkRecovery runs the Recovery application's checks on a call to
// recover(bytes32 txHash, uint64 nonce), after the protocol's.
func (l *Ledger) checkRecovery(tx *Tx) Reject {
	acc := l.accounts[tx.From]
	if acc == nil || !acc.locked {
		return recoveryReject(RecoveryNotLocked)
	}
	d := tx.Data
	// The uint64 argument's word must be zero above its low 8 bytes.
	if len(d) != recoverCallLen || [4]byte(d[:4]) != recoverSelector || !allZero(d[36:60]) {
		return recoveryReject(RecoveryMalformed)
	}
	if !tx.Value.IsZero() {
		return recoveryReject(RecoveryValue)
	}
	if Hash(d[4:36]) != acc.newest || binary.BigEndian.Uint64(d[60:]) != acc.Nonce-1 {
		return recoveryReject(RecoveryWrongTarget)
	}
	return Reject{}
}

func recoveryReject(reason string) Reject {
	return Reject{Code: RejectApp, App: RecoveryAddress, Detail: reason}
}

// allZero reports whether every byte of b is zero (the padding of an ABI
// word).
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// appendLock appends an account's newest transaction hash and lock bit
// (snapshot.go).
func appendLock(dst []byte, acc *Account) []byte {
	dst = append(dst, acc.newest[:]...)
	if acc.locked {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// lock reads what appendLock wrote, refusing a lock bit other than 0 or 1
// and a newest transaction or a lock on an account without transactions.
func (r *snapReader) lock(acc *Account) {
	copy(acc.newest[:], r.Take(len(acc.newest)))
	switch b := r.U8(); {
	case b > 1:
		r.Fail("lock bit %d", b)
	case acc.Nonce == 0 && (b != 0 || acc.newest != Hash{}):
		r.Fail("a transaction or a lock on an account with nonce 0")
	default:
		acc.locked = b == 1
	}
}
