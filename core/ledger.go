package core

import (
	"github.com/holiman/uint256"
)

// Gas rules. The ledger has no EVM: a transaction's gas is its intrinsic gas,
// priced like Ethereum's so that wallets' estimates hold.
const (
	TxGas                     = 21000
	TxDataZeroGas             = 4
	TxDataNonZeroGas          = 16
	TxAccessListAddressGas    = 2400
	TxAccessListStorageKeyGas = 1900
	// TxGasLimitMax bounds the gas a single transaction may name.
	TxGasLimitMax = 30_000_000
)

// Config is the ledger's genesis configuration.
type Config struct {
	ChainID uint64
	BaseFee uint256.Int
}

// Account is one account's state.
type Account struct {
	Nonce  uint64
	Native uint256.Int
	// tokens holds non-native token balances; never iterated unsorted.
	tokens map[Address]*uint256.Int
	// pendingSeq is the Seq of an applied, not yet durable transaction, 0 if
	// none. Transient: not part of the snapshot.
	pendingSeq uint64
}

// Ledger is the state machine. It is not safe for concurrent use: the
// sequencer owns it.
type Ledger struct {
	chainID  uint64
	baseFee  uint256.Int
	accounts map[Address]*Account
	// seq counts applied inputs; a TxRecord carries its input's seq.
	seq uint64
	// feesBurned accumulates all gas fees (the venue has no block producer
	// to pay them to).
	feesBurned uint256.Int
	// nativeIssued is genesis plus native deposits: the right-hand side of
	// the conservation invariant.
	nativeIssued uint256.Int
}

// NewLedger returns an empty ledger.
func NewLedger(cfg Config) *Ledger {
	return &Ledger{chainID: cfg.ChainID, baseFee: cfg.BaseFee, accounts: make(map[Address]*Account)}
}

// ChainID returns the chain id transactions must be signed for.
func (l *Ledger) ChainID() uint64 { return l.chainID }

// BaseFee returns the current base fee per gas, in wei.
func (l *Ledger) BaseFee() uint256.Int { return l.baseFee }

// Seq returns the number of inputs applied so far.
func (l *Ledger) Seq() uint64 { return l.seq }

// FeesBurned returns the total of all gas fees charged.
func (l *Ledger) FeesBurned() uint256.Int { return l.feesBurned }

// Nonce returns the account's next expected nonce.
func (l *Ledger) Nonce(a Address) uint64 {
	if acc := l.accounts[a]; acc != nil {
		return acc.Nonce
	}
	return 0
}

// Balance returns the account's balance of token (NativeToken for the native
// collateral); zero for unknown accounts and tokens.
func (l *Ledger) Balance(token, a Address) uint256.Int {
	acc := l.accounts[a]
	if acc == nil {
		return uint256.Int{}
	}
	if token == NativeToken {
		return acc.Native
	}
	if b := acc.tokens[token]; b != nil {
		return *b
	}
	return uint256.Int{}
}

func (l *Ledger) account(a Address) *Account {
	acc := l.accounts[a]
	if acc == nil {
		acc = &Account{}
		l.accounts[a] = acc
	}
	return acc
}

// Genesis credits amount of token to a, outside any transaction.
// REQUIRES: called before any other input (it is not logged).
func (l *Ledger) Genesis(token, a Address, amount *uint256.Int) {
	if l.seq != 0 {
		panic("BUG: Genesis after the first input")
	}
	l.credit(token, a, amount)
}

func (l *Ledger) credit(token, a Address, amount *uint256.Int) {
	acc := l.account(a)
	if token == NativeToken {
		acc.Native.Add(&acc.Native, amount)
		l.nativeIssued.Add(&l.nativeIssued, amount)
		return
	}
	if acc.tokens == nil {
		acc.tokens = make(map[Address]*uint256.Int)
	}
	b := acc.tokens[token]
	if b == nil {
		b = new(uint256.Int)
		acc.tokens[token] = b
	}
	b.Add(b, amount)
}

// SetBaseFee changes the base fee for transactions applied from now on.
func (l *Ledger) SetBaseFee(fee *uint256.Int) {
	l.seq++
	l.baseFee = *fee
}

// depositTopic is keccak256("Deposit(address,address,uint256)").
var depositTopic = Keccak256Hash([]byte("Deposit(address,address,uint256)"))

// DepositTopic returns the topic of the log a deposit emits.
func DepositTopic() Hash { return depositTopic }

// Deposit credits a deposit observed on the bridged chain. id identifies the
// deposit (the bridged chain's event); the record is keyed by it. The Bridge
// address emits Deposit(token indexed, to indexed, amount).
func (l *Ledger) Deposit(id Hash, token, to Address, amount *uint256.Int) *TxRecord {
	l.seq++
	l.credit(token, to, amount)
	rec := &TxRecord{Kind: RecordDeposit, Seq: l.seq, Status: 1}
	rec.Tx.Hash = id
	rec.Tx.From = BridgeAddress
	rec.Tx.To = to
	rec.Tx.HasTo = true
	rec.Tx.Value = *amount
	var tokenTopic, toTopic Hash
	copy(tokenTopic[12:], token[:])
	copy(toTopic[12:], to[:])
	amt := amount.Bytes32()
	rec.Logs = []Log{{Address: BridgeAddress, Topics: []Hash{depositTopic, tokenTopic, toTopic}, Data: amt[:]}}
	return rec
}

// IntrinsicGas is the gas a transaction uses: the ledger runs no code.
func IntrinsicGas(tx *Tx) uint64 {
	gas := uint64(TxGas)
	for _, b := range tx.Data {
		if b == 0 {
			gas += TxDataZeroGas
		} else {
			gas += TxDataNonZeroGas
		}
	}
	for _, t := range tx.AccessList {
		gas += TxAccessListAddressGas + uint64(len(t.StorageKeys))*TxAccessListStorageKeyGas
	}
	return gas
}
