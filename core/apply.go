package core

import (
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob/abi"
)

// Keccak256Hash hashes data with keccak256.
func Keccak256Hash(data ...[]byte) Hash { return Hash(crypto.Keccak256Hash(data...)) }

// Selector is a function's ABI selector: the first four bytes of the
// keccak256 of its signature, e.g. "recover(bytes32,uint64)".
func Selector(sig string) [4]byte {
	h := Keccak256Hash([]byte(sig))
	return [4]byte(h[:4])
}

// ApplyTx validates tx against the current state and, if it passes, applies
// it completely: value and fee move, the nonce advances and the sender is
// marked pending until Settle; an orderbook call is admitted by the engine
// and a withdrawal queued for its batch (timeUs is the sequencer's
// admission time). A gas-exempt transaction (GasExempt) pays no fee. On
// rejection nothing changes and rec is nil.
//
// Checks run in the spec's order: chain id, past nonce, future nonce,
// pending transaction, balance, base fee; then the ledger's own gas rules
// and, last, application-level reverts for enshrined addresses. A locked
// account and an equivocation (recovery.go) are refused right after the
// chain id: whatever its nonce, nothing but a recovery passes a lock.
func (l *Ledger) ApplyTx(tx *Tx, timeUs int64) (rec *TxRecord, rej Reject) {
	return l.applyTx(tx, timeUs, false)
}

// applyTx is ApplyTx for a transaction that may be staged (Input.Staged).
func (l *Ledger) applyTx(tx *Tx, timeUs int64, staged bool) (rec *TxRecord, rej Reject) {
	if rej = l.validate(tx); !rej.OK() {
		return nil, rej
	}
	if staged && (isWithdraw(tx) || tx.To == MintAddress) {
		// A withdrawal would land in the tick that clears; a mint credits
		// tokens the clearing's books may be settling.
		return nil, Reject{Code: RejectWaitTick}
	}
	switch {
	case isWithdraw(tx):
		return l.applyWithdraw(tx, timeUs)
	case tx.To == MintAddress:
		return l.applyMint(tx, timeUs)
	}
	l.seq++
	_, existed := l.accounts[tx.From]
	acc := l.account(tx.From)
	var price, fee uint256.Int
	if !GasExempt(tx) {
		price = l.effectiveGasPrice(tx)
		fee.Mul(uint256.NewInt(TxGas), &price)
	}
	acc.Native.Cash.Sub(&acc.Native.Cash, &fee)
	var logs []Log
	if tx.To == OrderbookAddress {
		// The gas is paid first so the orderbook sees what is left to lock.
		if logs, rej = l.admitOrderbook(tx, timeUs, staged); !rej.OK() {
			acc.Native.Cash.Add(&acc.Native.Cash, &fee)
			if !existed { // a fee-free sender's account appeared only now
				delete(l.accounts, tx.From)
			}
			l.seq--
			return nil, rej
		}
	}
	acc.Native.Cash.Sub(&acc.Native.Cash, &tx.Value)
	l.accept(acc, tx)
	to := &l.account(tx.To).Native
	to.Cash.Add(&to.Cash, &tx.Value)
	l.feesBurned.Add(&l.feesBurned, &fee)
	rec = &TxRecord{Kind: RecordTx, Seq: l.seq, Tx: *tx, Status: 1, GasUsed: TxGas, EffectiveGasPrice: price, Logs: logs}
	rec.Tx.Pre = nil // served and kept for long: not the envelope the loop prepared
	return rec, rej
}

// accept spends tx's nonce: tx is the account's newest transaction, pending
// until durable. Only a recovery passes validate from a locked account, so
// accepting opens it.
func (l *Ledger) accept(acc *Account, tx *Tx) {
	acc.Nonce++
	acc.pendingSeq = l.seq
	acc.newest, acc.locked = tx.Hash, false
}

// Settle marks the transaction of rec durable: its sender may send again.
func (l *Ledger) Settle(rec *TxRecord) {
	if rec.Kind != RecordTx {
		return
	}
	if acc := l.accounts[rec.Tx.From]; acc != nil && acc.pendingSeq == rec.Seq {
		acc.pendingSeq = 0
	}
}

func (l *Ledger) validate(tx *Tx) Reject {
	if tx.ChainID != l.chainID {
		return Reject{Code: RejectChainID, Have: tx.ChainID, Want: l.chainID}
	}
	acc := l.accounts[tx.From]
	if rej := l.checkLock(acc, tx); !rej.OK() {
		return rej
	}
	var nonce uint64
	if acc != nil {
		nonce = acc.Nonce
	}
	switch {
	case tx.Nonce < nonce:
		return Reject{Code: RejectPastNonce, Have: tx.Nonce, Want: nonce}
	case tx.Nonce > nonce:
		return Reject{Code: RejectFutureNonce, Have: tx.Nonce, Want: nonce}
	case acc != nil && acc.pendingSeq != 0:
		return Reject{Code: RejectPending}
	}
	if !l.covers(acc, tx) {
		return Reject{Code: RejectInsufficientBalance}
	}
	if tx.GasFeeCap.Lt(&l.baseFee) {
		return Reject{Code: RejectUnderpriced, Fee: tx.GasFeeCap, BaseFee: l.baseFee}
	}
	return l.validateGas(tx)
}

func (l *Ledger) validateGas(tx *Tx) Reject {
	if tx.GasTipCap.Gt(&tx.GasFeeCap) {
		return Reject{Code: RejectTipAboveFeeCap}
	}
	if tx.Gas > TxGasLimitMax {
		return Reject{Code: RejectGasLimit, Have: tx.Gas, Want: TxGasLimitMax}
	}
	if !tx.HasTo {
		return Reject{Code: RejectContractCreation}
	}
	if tx.To == RecoveryAddress {
		return l.checkRecovery(tx)
	}
	return Reject{}
}

// covers reports whether acc's available native cash can pay value + gas ×
// fee cap, the most the transaction can cost (Ethereum's rule, so wallets'
// expectations hold). Only the withdrawable part of the cash can pay: not
// what is locked behind orders, nor the margin perp positions and orders
// need (docs/perps.md). A gas
// limit below TxGas cannot pay for the gas the transaction uses either: the
// spec has no reason of its own for that, and this is the one that says
// what is wrong, that the transaction cannot be paid for. For a gas-exempt
// transaction only its value counts.
func (l *Ledger) covers(acc *Account, tx *Tx) bool {
	gasFree := GasExempt(tx)
	if tx.Gas < TxGas && !gasFree {
		return false
	}
	if acc == nil {
		return tx.Value.IsZero() && (gasFree || tx.Gas == 0 || tx.GasFeeCap.IsZero())
	}
	var cost uint256.Int
	if !gasFree {
		if _, overflow := cost.MulOverflow(uint256.NewInt(tx.Gas), &tx.GasFeeCap); overflow {
			return false
		}
	}
	if _, overflow := cost.AddOverflow(&cost, &tx.Value); overflow {
		return false
	}
	avail := l.spendable(NativeToken, tx.From)
	return !avail.Lt(&cost)
}

// GasExempt reports whether tx pays no gas, so that its balance check holds
// none back: a withdrawal, to the Bridge or through the orderbook
// (docs/bridge.md §2, §2a: MAX is the whole withdrawable balance), a mint
// (docs/faucet.md: its signer is a throwaway key) and an orderbook
// delegated() envelope, whose delegate key needs no funds (the live
// network's rule, docs/decisions.md). All are read off the transaction
// alone, so every replay agrees. None is exempt from the base-fee check:
// "exempt" is about what is paid, not the fee cap a wallet names, and the
// live SDK names the base fee.
func GasExempt(tx *Tx) bool {
	return isWithdraw(tx) || tx.HasTo && (tx.To == MintAddress || tx.To == OrderbookAddress && abi.IsDelegated(tx.Data))
}

// effectiveGasPrice is min(fee cap, base fee + tip).
// REQUIRES: the fee cap is at least the base fee.
func (l *Ledger) effectiveGasPrice(tx *Tx) uint256.Int {
	var p uint256.Int
	if _, overflow := p.AddOverflow(&l.baseFee, &tx.GasTipCap); overflow || p.Gt(&tx.GasFeeCap) {
		return tx.GasFeeCap
	}
	return p
}
