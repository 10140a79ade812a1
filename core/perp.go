package core

import (
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// The ledger's perp reads (docs/perps.md, "Accounts").

// Withdrawable is what withdrawableBalance(token, a) and, for the native
// token, eth_getBalance report: for native, max(0, Cash − Debt − Locked +
// Σ unrealized − IMo); for other tokens the cash not locked.
func (l *Ledger) Withdrawable(token, a Address) uint256.Int {
	if token == NativeToken {
		return l.Margin(a).Withdrawable
	}
	b := l.Balance(token, a)
	return b.Available()
}

// spendable is the most a spend (value, gas, a withdrawal) may take out
// of a's cash of token: the withdrawable part, and never more than the free
// cash (unrealized perp profit backs margin; it is not cash to move).
func (l *Ledger) spendable(token, a Address) uint256.Int {
	free := l.Balance(token, a)
	avail := free.Available()
	if w := l.Withdrawable(token, a); w.Lt(&avail) {
		return w
	}
	return avail
}

// BalanceOf is what balanceOf(token, a) reports: cash minus debt (signed).
func (l *Ledger) BalanceOf(token, a Address) clob.Signed {
	b := l.Balance(token, a)
	return b.Net()
}

// Positions appends a's open perp positions, books ascending, with their
// liquidation prices (which need the account's cash: the engine's
// AppendPositions leaves them 0).
func (l *Ledger) Positions(dst []clob.PositionInfo, a Address) []clob.PositionInfo {
	start := len(dst)
	dst = l.engine.AppendPositions(dst, clob.Address(a))
	l.engine.LiquidationPrices(dst[start:], (*ledgerAccounts)(l))
	return dst
}

// Margin is the account's cross-margin summary.
func (l *Ledger) Margin(a Address) clob.MarginInfo {
	return l.engine.Margin(clob.Address(a), (*ledgerAccounts)(l))
}
