package core

import (
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// InputKind says which kind of input an Input carries.
type InputKind uint8

const (
	// InputTx is a signed transaction (Input.Tx).
	InputTx InputKind = iota + 1
	// InputDeposit is a deposit observed on the bridged chain.
	InputDeposit
	// InputSetBaseFee changes the base fee (a test-venue control).
	InputSetBaseFee
	// InputTick runs the orderbook's auction tick at TimeUs.
	InputTick
	// InputCreateMarket adds an orderbook (a test-venue control).
	InputCreateMarket
	// InputSetOracle sets a perp market's oracle price (Book, Price) and
	// freezes its walk (a test-venue control).
	InputSetOracle
	// InputLockAccount locks the account To (an equivocation, or
	// admin_lockAccount): docs/bridge.md §7.
	InputLockAccount
	// InputSetBalance sets the free native cash of To to Amount
	// (anvil_setBalance: controls.go).
	InputSetBalance
	// InputSetNonce sets the next nonce of To to Nonce (anvil_setNonce).
	InputSetNonce
	// InputClockOffset sets the node's clock offset to TimeUs
	// (evm_increaseTime, evm_setNextBlockTimestamp).
	InputClockOffset
	// InputMoveOracle moves a perp market's oracle (Book) by Bps basis
	// points: now when TimeUs is 0, else after a gap of its feed that ends
	// at the first tick at or after TimeUs (the strategy lab: docs/lab.md).
	InputMoveOracle
)

// Input is one entry of the sequencer's log: everything that changes the
// ledger is an Input, so replaying the log rebuilds the state.
type Input struct {
	Kind InputKind
	Tx   Tx // InputTx
	// TimeUs is the sequencer's clock when it admitted an InputTx (the
	// orderbook checks deadlines against it), or the tick time of an
	// InputTick. Time reaches the ledger only this way.
	TimeUs int64
	// InputDeposit: the deposit's id, token, recipient and amount;
	// InputLockAccount: the account (To); InputSetBalance: the account and
	// its new balance; InputSetNonce: the account (To).
	DepositID Hash
	Token     Address
	To        Address
	Amount    uint256.Int
	// InputSetBaseFee: the new base fee.
	BaseFee uint256.Int
	// InputCreateMarket: the new market.
	Market clob.MarketConfig
	// InputSetOracle: the market and its new oracle price (wei).
	Book  clob.Hash
	Price uint256.Int
	// InputSetNonce: the account's new next nonce.
	Nonce uint64
	// InputMoveOracle: the move, in basis points of the oracle price.
	Bps int32
	// Staged: an InputTx the sequencer admitted while a tick cleared
	// (stage.go). A staged orderbook call's orders enter their books when
	// that tick ends.
	Staged bool
}

// Apply applies one input. Transactions, market creations, locks and the
// controls (controls.go) may be rejected (rec nil, rej set); deposits,
// base-fee changes and ticks always apply. Base-fee changes, market
// creations, oracle prices, locks and the controls produce no record.
func (l *Ledger) Apply(in *Input) (rec *TxRecord, rej Reject) {
	staged := in.Staged || l.window
	if staged && in.Kind != InputTx {
		panic("BUG: a staged input that is not a transaction")
	}
	if l.engine.Staging() && !staged && in.Kind != InputTick {
		l.engine.JoinStaged() // a staged run that no tick ended (stage.go)
	}
	switch in.Kind {
	case InputTx:
		return l.applyTx(&in.Tx, in.TimeUs, staged)
	case InputDeposit:
		return l.Deposit(in.DepositID, in.Token, in.To, &in.Amount), Reject{}
	case InputSetBaseFee:
		l.SetBaseFee(&in.BaseFee)
		return nil, Reject{}
	case InputTick:
		return l.Tick(in.TimeUs), Reject{}
	case InputCreateMarket:
		if err := l.CreateMarket(&in.Market); err != nil {
			return nil, Reject{Code: RejectMarket, Detail: err.Error()}
		}
		return nil, Reject{}
	case InputSetOracle:
		if r := l.engine.SetOraclePrice(in.Book, &in.Price); r != clob.OK {
			return nil, Reject{Code: RejectApp, App: OrderbookAddress, Reason: r}
		}
		l.seq++
		return nil, Reject{}
	case InputMoveOracle:
		if r := l.engine.MoveOracle(in.Book, in.Bps, in.TimeUs); r != clob.OK {
			return nil, Reject{Code: RejectApp, App: OrderbookAddress, Reason: r}
		}
		l.seq++
		return nil, Reject{}
	case InputLockAccount:
		return nil, l.LockAccount(in.To)
	case InputSetBalance:
		return nil, l.SetBalance(in.To, &in.Amount)
	case InputSetNonce:
		return nil, l.SetNonce(in.To, in.Nonce)
	case InputClockOffset:
		return nil, l.SetClockOffset(in.TimeUs)
	}
	panic("BUG: unknown input kind")
}
