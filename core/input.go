package core

import "github.com/holiman/uint256"

// InputKind says which kind of input an Input carries.
type InputKind uint8

const (
	// InputTx is a signed transaction (Input.Tx).
	InputTx InputKind = iota + 1
	// InputDeposit is a deposit observed on the bridged chain.
	InputDeposit
	// InputSetBaseFee changes the base fee (a test-venue control).
	InputSetBaseFee
)

// Input is one entry of the sequencer's log: everything that changes the
// ledger is an Input, so replaying the log rebuilds the state.
type Input struct {
	Kind InputKind
	Tx   Tx // InputTx
	// InputDeposit: the deposit's id, token, recipient and amount.
	DepositID Hash
	Token     Address
	To        Address
	Amount    uint256.Int
	// InputSetBaseFee: the new base fee.
	BaseFee uint256.Int
}

// Apply applies one input. Transactions may be rejected (rec nil, rej set);
// deposits and base-fee changes always apply. A base-fee change produces no
// record.
func (l *Ledger) Apply(in *Input) (rec *TxRecord, rej Reject) {
	switch in.Kind {
	case InputTx:
		return l.ApplyTx(&in.Tx)
	case InputDeposit:
		return l.Deposit(in.DepositID, in.Token, in.To, &in.Amount), Reject{}
	case InputSetBaseFee:
		l.SetBaseFee(&in.BaseFee)
		return nil, Reject{}
	}
	panic("BUG: unknown input kind")
}
