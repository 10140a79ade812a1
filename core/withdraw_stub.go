package core

// Stub of the withdrawal execution (helper A replaces this file with
// core/withdraw.go).

// DefaultWithdrawalsPerBatchMax is Config.WithdrawalsPerBatchMax when zero.
const DefaultWithdrawalsPerBatchMax = 4096

// LastWithdrawals returns the outcomes of the withdrawals the latest Tick
// executed, in admission order: valid until the next input.
func (l *Ledger) LastWithdrawals() []WithdrawalOutcome { return nil }
