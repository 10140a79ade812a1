package core

import (
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// Address is a 20-byte account or contract address.
type Address [20]byte

// Hash is a 32-byte keccak256 digest.
type Hash [32]byte

// Enshrined application addresses and the native token, fixed by the spec.
var (
	NativeToken      = Address(clob.NativeToken)
	BridgeAddress    = Address{0x50, 0xd0, 19: 0x01}
	OrderbookAddress = Address{0x50, 0xd0, 19: 0x02}
	RecoveryAddress  = Address{0x50, 0xd0, 19: 0x03}
)

// Transaction types accepted by the ledger (EIP-2718 type bytes).
const (
	TxTypeLegacy     uint8 = 0
	TxTypeAccessList uint8 = 1
	TxTypeDynamicFee uint8 = 2
)

// Tx is a decoded transaction whose signer has already been recovered. It is
// the sequencer's input; everything core needs is here, so replaying the log
// never re-runs signature recovery.
type Tx struct {
	Hash    Hash
	Type    uint8
	ChainID uint64 // 0 for an unprotected (pre-EIP-155) legacy transaction
	Nonce   uint64
	From    Address
	To      Address
	HasTo   bool // false: contract creation
	Value   uint256.Int
	Gas     uint64
	// GasTipCap and GasFeeCap are both the gas price for legacy transactions.
	GasTipCap uint256.Int
	GasFeeCap uint256.Int
	Data      []byte
	// AccessList costs nothing (the ledger has no EVM storage); it is kept
	// so the transaction can be served back unchanged.
	AccessList []AccessTuple
	V, R, S    uint256.Int
	// Pre is what PrepareTx derived from this transaction before the
	// sequencer, or nil. It is never logged: the ledger uses it only when
	// it was prepared for this very transaction and chain, and derives the
	// same itself otherwise (a replay), so it changes no result.
	Pre *Prepared
}

// AccessTuple is one EIP-2930 access list entry.
type AccessTuple struct {
	Address     Address
	StorageKeys []Hash
}

// Log is an event emitted by an applied input.
type Log struct {
	Address Address
	Topics  []Hash
	Data    []byte
}

// RecordKind tells what produced a TxRecord.
type RecordKind uint8

const (
	// RecordTx is a signed transaction.
	RecordTx RecordKind = iota + 1
	// RecordDeposit is a bridge deposit observed on the bridged chain; it has
	// no signature and is keyed by a hash derived from the deposit.
	RecordDeposit
	// RecordTick is an orderbook auction tick: its logs are the tick's
	// settlements, it is keyed by the tick hash and sent by the orderbook.
	RecordTick
)

// TxRecord is the outcome of one applied input: everything a receipt needs
// except the attestations, which the committee adds later.
type TxRecord struct {
	Kind              RecordKind
	Seq               uint64 // position in the ledger's input sequence (1-based)
	Tx                Tx     // for a deposit: Hash, From (the bridge), To (recipient), Value
	Status            uint8  // 1 success, 0 failure
	GasUsed           uint64
	EffectiveGasPrice uint256.Int
	Logs              []Log
	TickUs            int64 // RecordTick: the tick's time
}
