package core

import (
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// SKELETON (helper A replaces this file): the ledger's perp reads.

// Withdrawable is what withdrawableBalance(token, a) and, for the native
// token, eth_getBalance report (docs/perps.md, "Accounts").
func (l *Ledger) Withdrawable(token, a Address) uint256.Int {
	b := l.Balance(token, a)
	return b.Available()
}

// BalanceOf is what balanceOf(token, a) reports: cash minus debt (signed).
func (l *Ledger) BalanceOf(token, a Address) clob.Signed {
	b := l.Balance(token, a)
	return clob.Signed{Abs: b.Cash}
}

// Margin is the account's cross-margin summary.
func (l *Ledger) Margin(a Address) clob.MarginInfo {
	return l.engine.Margin(clob.Address(a), (*ledgerAccounts)(l))
}
