package ethtx

import (
	"errors"
	"math"
	"math/big"

	"github.com/ethereum/go-ethereum/core/types"
)

// RawSizeMax is the largest raw transaction Decode accepts, in bytes. It
// matches go-ethereum's transaction pool limit for non-blob transactions
// (4 slots of 32 KiB); larger payloads are rejected before any parsing.
const RawSizeMax = 128 << 10

var (
	// ErrMalformed reports input that is not exactly one well-formed
	// transaction: bad RLP, trailing bytes, empty input.
	ErrMalformed = errors.New("ethtx: malformed transaction")
	// ErrUnsupportedType reports an EIP-2718 type other than 1 and 2 (for
	// Decode), or a transaction of such a type (for Sender).
	ErrUnsupportedType = errors.New("ethtx: unsupported transaction type")
	// ErrOversized reports a raw transaction longer than RawSizeMax.
	ErrOversized = errors.New("ethtx: transaction larger than 128 KiB")
)

// malformedError wraps the decoder's cause; errors.Is(err, ErrMalformed)
// holds for it. It is built only on the failure path.
type malformedError struct{ cause error }

func (e *malformedError) Error() string        { return ErrMalformed.Error() + ": " + e.cause.Error() }
func (e *malformedError) Unwrap() error        { return e.cause }
func (e *malformedError) Is(target error) bool { return target == ErrMalformed }

// Decode parses a raw signed transaction: a typed EIP-2718 envelope of type
// 1 (EIP-2930) or 2 (EIP-1559), or a legacy RLP list. Other types give
// ErrUnsupportedType; bad RLP, trailing bytes or empty input give an error
// matching ErrMalformed; inputs over RawSizeMax give ErrOversized. It never
// panics. The signature is not checked: see Sender.
//
// The returned transaction does not alias raw.
func Decode(raw []byte) (*types.Transaction, error) {
	switch {
	case len(raw) == 0:
		return nil, ErrMalformed
	case len(raw) > RawSizeMax:
		return nil, ErrOversized
	case raw[0] <= 0x7f && raw[0] != types.AccessListTxType && raw[0] != types.DynamicFeeTxType:
		return nil, ErrUnsupportedType
	}
	// A first byte above 0x7f starts an RLP list (legacy); go-ethereum's
	// strict RLP decoder rejects non-canonical encodings and trailing data.
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(raw); err != nil {
		return nil, &malformedError{cause: err}
	}
	return tx, nil
}

// ChainID returns the chain id the transaction's signature is bound to:
// tx.ChainId() for typed transactions and EIP-155 legacy transactions
// (v = 35 + 2*id + recid), and 0 for unprotected legacy transactions
// (v = 27 or 28). Legacy v values that are neither also give 0; Sender
// rejects them. Ids above 2^64-1 are reported as math.MaxUint64: no chain
// uses them, so they can only mean "not this chain".
func ChainID(tx *types.Transaction) uint64 {
	if tx.Type() != types.LegacyTxType {
		return uint64OrMax(tx.ChainId())
	}
	v, _, _ := tx.RawSignatureValues()
	if v.IsUint64() {
		if w := v.Uint64(); w >= 35 {
			return (w - 35) >> 1
		}
		return 0
	}
	if v.Sign() < 0 {
		return 0
	}
	// v >= 2^64 (cold path).
	id := new(big.Int).Sub(v, big35)
	return uint64OrMax(id.Rsh(id, 1))
}

var big35 = big.NewInt(35)

func uint64OrMax(x *big.Int) uint64 {
	if x.IsUint64() {
		return x.Uint64()
	}
	return math.MaxUint64
}
