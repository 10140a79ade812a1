package ethtx

import (
	"bytes"
	"errors"
	"math/big"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/ledgervenue/node/core/secp"
)

// ErrInvalidSignature reports a signature that go-ethereum's types.Sender
// with types.LatestSignerForChainID(ChainID(tx)) would reject.
var ErrInvalidSignature = errors.New("ethtx: invalid signature")

// halfN is floor(n/2) for the secp256k1 group order n, big-endian: s above
// it is the malleable twin of a valid signature (EIP-2).
var halfN = [32]byte{
	0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4, 0x50, 0x1d, 0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0,
}

// hasherPool holds per-call scratch (Keccak state and buffers). Sender runs
// on many event loops at once, so a pool rather than per-loop state.
var hasherPool = sync.Pool{New: func() any { return &hasher{k: crypto.NewKeccakState()} }}

// Sender recovers the address that signed tx, using the chain id the
// transaction itself carries (see ChainID), so that a caller can report a
// wrong chain id before, and independently of, signature errors.
//
// It accepts exactly what go-ethereum's types.Sender accepts with
// types.LatestSignerForChainID(id), where id is nil for ChainID(tx) = 0:
// homestead rules (r, s in [1, n-1], s <= n/2), v = 27/28 or 35+2*id+{0,1}
// with id >= 1 for legacy transactions, yParity 0/1 and chain id >= 1 for
// types 1 and 2. Everything else is ErrInvalidSignature; types other than
// legacy, 1 and 2 are ErrUnsupportedType. Unlike types.Sender it does not
// cache the result in tx. Safe for concurrent use.
func Sender(tx *types.Transaction) (common.Address, error) {
	h := hasherPool.Get().(*hasher)
	defer hasherPool.Put(h)
	var f sigFields
	recid, err := signedFields(&f, tx, &h.chainID)
	if err != nil {
		return common.Address{}, err
	}
	_, r, s := tx.RawSignatureValues()
	if !scalarBytes(&h.r, r) || !scalarBytes(&h.s, s) || bytes.Compare(h.s[:], halfN[:]) > 0 {
		return common.Address{}, ErrInvalidSignature
	}
	h.encodeSigHash(&f)
	if !secp.Recover(&h.pub, &h.digest, &h.r, &h.s, recid) {
		return common.Address{}, ErrInvalidSignature
	}
	h.reset()
	h.k.Write(h.pub[:])
	h.k.Read(h.digest[:])
	var addr common.Address
	copy(addr[:], h.digest[12:])
	return addr, nil
}

// signedFields fills f with the signed fields of tx and returns the
// recovery id. scratch holds a legacy chain id derived from v.
func signedFields(f *sigFields, tx *types.Transaction, scratch *big.Int) (byte, error) {
	v, _, _ := tx.RawSignatureValues()
	var recid byte
	switch f.typ = tx.Type(); f.typ {
	case types.LegacyTxType:
		var ok bool
		if recid, f.chainID, ok = legacyV(v, scratch); !ok {
			return 0, ErrInvalidSignature
		}
		f.price = tx.GasPrice()
	case types.AccessListTxType, types.DynamicFeeTxType:
		if f.chainID = tx.ChainId(); f.chainID.Sign() <= 0 {
			// LatestSignerForChainID(nil) is the homestead signer, which
			// rejects typed transactions.
			return 0, ErrInvalidSignature
		}
		if !v.IsUint64() || v.Uint64() > 1 {
			return 0, ErrInvalidSignature
		}
		recid = byte(v.Uint64())
		f.price = tx.GasPrice()
		if f.typ == types.DynamicFeeTxType {
			f.price, f.feeCap = tx.GasTipCap(), tx.GasFeeCap()
		}
		f.access = tx.AccessList()
	default:
		return 0, ErrUnsupportedType
	}
	f.nonce, f.gas, f.to, f.value, f.data = tx.Nonce(), tx.Gas(), tx.To(), tx.Value(), tx.Data()
	// Decode never yields negative values; RLP cannot encode them.
	if f.price.Sign() < 0 || f.value.Sign() < 0 || (f.feeCap != nil && f.feeCap.Sign() < 0) {
		return 0, ErrInvalidSignature
	}
	return recid, nil
}

// legacyV splits a legacy v into the recovery id and the chain id (nil for
// unprotected v = 27/28). EIP-155 needs chain id >= 1, i.e. v >= 37: with
// chain id 0 the reference signer is homestead's, which rejects v = 35/36.
func legacyV(v, scratch *big.Int) (recid byte, chainID *big.Int, ok bool) {
	if v.IsUint64() {
		switch w := v.Uint64(); {
		case w == 27 || w == 28:
			return byte(w - 27), nil, true
		case w >= 37:
			return byte((w - 35) & 1), scratch.SetUint64((w - 35) >> 1), true
		}
		return 0, nil, false
	}
	if v.Sign() < 0 {
		return 0, nil, false
	}
	scratch.Sub(v, big35)
	recid = byte(scratch.Bit(0))
	return recid, scratch.Rsh(scratch, 1), true
}

// scalarBytes writes x as 32 big-endian bytes; false if x < 0 or x >= 2^256.
// Range checks against the group order happen in secp.Recover.
func scalarBytes(dst *[32]byte, x *big.Int) bool {
	if x.Sign() < 0 || x.BitLen() > 256 {
		return false
	}
	x.FillBytes(dst[:])
	return true
}
