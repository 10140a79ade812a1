package core

import (
	"math"
	"strconv"

	"github.com/holiman/uint256"
)

// Test-venue controls with anvil's names (docs/anvil.md): anvil_setBalance,
// anvil_setNonce, and the offset evm_increaseTime and
// evm_setNextBlockTimestamp add to the node's clock. Each is an input like a
// base-fee change: logged, so a replay applies it at the same place, and
// part of the state (the snapshot, hence the state hash). None produces a
// record.
//
// Invariants they keep: conservation (a balance set is issued or taken
// back, as a deposit would be), Locked ≤ Cash, and a transaction hash is
// never admitted twice (a nonce only moves forward).

// SetBalance sets a's free native cash (cash not locked behind orders or
// pending transfers) to wei and clears its debt: eth_getBalance then
// answers wei for an account without perp positions. The difference is
// issued, or taken back, so the conservation invariant holds. Refused when
// the supply would leave the u256 range.
func (l *Ledger) SetBalance(a Address, wei *uint256.Int) Reject {
	var old Balance
	if b := l.balance(NativeToken, a); b != nil {
		old = *b
	}
	var cash, issued uint256.Int
	if v := l.issued[NativeToken]; v != nil {
		issued = *v
	}
	_, o1 := cash.AddOverflow(&old.Locked, wei)
	_, o2 := issued.AddOverflow(&issued, &cash)
	_, o3 := issued.AddOverflow(&issued, &old.Debt)
	if o1 || o2 || o3 {
		return controlReject("balance too large: the native supply would overflow 256 bits")
	}
	if issued.Lt(&old.Cash) { // only if open perp positions hold the supply
		return controlReject("balance cannot be taken back: the native supply would go negative")
	}
	issued.Sub(&issued, &old.Cash)
	l.seq++
	b := l.holding(NativeToken, a)
	b.Cash, b.Debt = cash, uint256.Int{}
	if l.issued[NativeToken] == nil {
		l.issued[NativeToken] = new(uint256.Int)
	}
	*l.issued[NativeToken] = issued
	return Reject{}
}

// SetNonce sets a's next nonce. A nonce below the current one is refused
// (unlike anvil, as hardhat does): it would let an already admitted
// transaction's hash be admitted again. So are a locked account (its
// recovery target names its newest nonce) and one whose newest transaction
// is not durable yet. Once the nonce moved, the account has no known newest
// transaction (Newest reports none) until it sends one.
func (l *Ledger) SetNonce(a Address, nonce uint64) Reject {
	acc := l.accounts[a]
	var cur uint64
	if acc != nil {
		cur = acc.Nonce
	}
	switch {
	case nonce == math.MaxUint64:
		// EIP-2681: no transaction may use the largest nonce, since the
		// account's nonce could not move past it (it wrapped to 0 here).
		return controlReject("nonce 18446744073709551615 is the largest: EIP-2681 leaves no transaction after it")
	case nonce < cur:
		return controlReject("nonce " + strconv.FormatUint(nonce, 10) + " is below the account's next nonce " +
			strconv.FormatUint(cur, 10) + ": a nonce only moves forward here")
	case acc != nil && acc.locked:
		return controlReject("the account is locked: recover it first")
	case acc != nil && acc.pendingSeq != 0:
		return controlReject("the account's newest transaction is not durable yet")
	}
	l.seq++
	if nonce != cur {
		acc = l.account(a)
		acc.Nonce, acc.newest = nonce, Hash{}
	}
	return Reject{}
}

// SetClockOffset sets the offset the node adds to its time source, in µs.
// The ledger only keeps it (the node reads time; the ledger sees it only as
// input stamps), so a restart, a snapshot and a replay resume it.
func (l *Ledger) SetClockOffset(us int64) Reject {
	l.seq++
	l.clockOffsetUs = us
	return Reject{}
}

// ClockOffset returns the clock offset in µs (SetClockOffset).
func (l *Ledger) ClockOffset() int64 { return l.clockOffsetUs }

func controlReject(detail string) Reject { return Reject{Code: RejectControl, Detail: detail} }
