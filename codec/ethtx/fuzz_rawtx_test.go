package ethtx

import (
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/holiman/uint256"
)

// rawTxKinds are the layouts FuzzRawTxEveryType builds: every transaction
// type go-ethereum encodes, legacy in both signing forms.
const (
	kindLegacy = iota
	kindLegacyEIP155
	kindAccessList
	kindDynamicFee
	kindBlob
	kindSetCode
	rawTxKinds
)

// FuzzRawTxEveryType builds a signed transaction of every type go-ethereum
// knows (legacy unprotected and EIP-155, EIP-2930, EIP-1559, EIP-4844 blob,
// EIP-7702 set-code) from fuzzed fields, flips one bit of its encoding when
// flip > 0, and checks Decode and Sender against go-ethereum (compareRaw).
// Byte-level FuzzDecode seldom reaches well-formed encodings of the types
// the venue refuses, or the corners of those it takes (fees past 256 bits,
// access lists, chain ids past 64 bits): here every input is one. Unflipped,
// types 1 and 2 and legacy decode, blob and set-code transactions are
// ErrUnsupportedType.
func FuzzRawTxEveryType(f *testing.F) {
	for kind := range byte(rawTxKinds) {
		f.Add(kind, uint64(0x50d), uint64(1), uint64(21000), []byte{0x3b, 0x9a, 0xca, 0x00}, []byte{1}, []byte{0xaa}, []byte{}, uint8(2), uint32(0))
		f.Add(kind, uint64(1<<63), uint64(1<<64-1), uint64(0), make([]byte, 33), []byte{}, []byte{}, make([]byte, 68), uint8(0), uint32(9))
	}
	f.Fuzz(func(t *testing.T, kind byte, chainID, nonce, gas uint64, fee, value, to, data []byte, keys uint8, flip uint32) {
		kind %= rawTxKinds
		tx, signer := buildRawTx(kind, chainID, nonce, gas, fee, value, to, data, keys)
		signed, err := types.SignTx(tx, signer, testKey)
		if err != nil {
			return // go-ethereum cannot sign it (a chain id its signer refuses)
		}
		raw, err := signed.MarshalBinary()
		if err != nil {
			t.Fatalf("go-ethereum cannot encode what it signed: %v", err)
		}
		if flip > 0 {
			bit := (flip - 1) % uint32(len(raw)*8)
			raw[bit/8] ^= 1 << (bit % 8)
		}
		compareRaw(t, raw)
		if flip > 0 || len(raw) > RawSizeMax {
			return
		}
		_, err = Decode(raw)
		switch kind {
		case kindBlob, kindSetCode:
			if !errors.Is(err, ErrUnsupportedType) {
				t.Fatalf("type %d: Decode error %v, want ErrUnsupportedType", signed.Type(), err)
			}
		default:
			if err != nil {
				t.Fatalf("type %d: a well-formed transaction refused: %v", signed.Type(), err)
			}
		}
	})
}

// buildRawTx is a transaction of the given kind with the fuzzed fields and
// the signer that signs it. fee is a big-endian fee (past 256 bits for the
// big.Int layouts, truncated to 256 for the uint256 ones); an empty to is
// a contract creation where the type allows one; keys > 0 adds an access
// list entry with keys%8 storage keys.
func buildRawTx(kind byte, chainID, nonce, gas uint64, fee, value, to, data []byte, keys uint8) (*types.Transaction, types.Signer) {
	id := new(big.Int).SetUint64(chainID)
	bigFee := new(big.Int).SetBytes(fee)
	bigValue := new(big.Int).SetBytes(value)
	u256 := func(b []byte) *uint256.Int { return new(uint256.Int).SetBytes(b[max(0, len(b)-32):]) }
	var toPtr *common.Address
	if len(to) > 0 {
		a := common.BytesToAddress(to)
		toPtr = &a
	}
	var al types.AccessList
	if keys > 0 {
		al = types.AccessList{{Address: common.BytesToAddress(data), StorageKeys: make([]common.Hash, keys%8)}}
	}
	switch kind {
	case kindLegacy:
		return types.NewTx(&types.LegacyTx{Nonce: nonce, GasPrice: bigFee, Gas: gas, To: toPtr, Value: bigValue, Data: data}), types.HomesteadSigner{}
	case kindLegacyEIP155:
		return types.NewTx(&types.LegacyTx{Nonce: nonce, GasPrice: bigFee, Gas: gas, To: toPtr, Value: bigValue, Data: data}), types.NewEIP155Signer(id)
	case kindAccessList:
		return types.NewTx(&types.AccessListTx{ChainID: id, Nonce: nonce, GasPrice: bigFee, Gas: gas, To: toPtr, Value: bigValue,
			Data: data, AccessList: al}), types.LatestSignerForChainID(id)
	case kindDynamicFee:
		return types.NewTx(&types.DynamicFeeTx{ChainID: id, Nonce: nonce, GasTipCap: new(big.Int).Rsh(bigFee, 1), GasFeeCap: bigFee,
			Gas: gas, To: toPtr, Value: bigValue, Data: data, AccessList: al}), types.LatestSignerForChainID(id)
	case kindBlob:
		return types.NewTx(&types.BlobTx{ChainID: uint256.NewInt(chainID), Nonce: nonce, GasTipCap: u256(fee), GasFeeCap: u256(fee),
			Gas: gas, To: common.BytesToAddress(to), Value: u256(value), Data: data, AccessList: al, BlobFeeCap: u256(fee),
			BlobHashes: []common.Hash{{0x01}}}), types.LatestSignerForChainID(id)
	default:
		auth := types.SetCodeAuthorization{ChainID: *uint256.NewInt(chainID), Address: common.BytesToAddress(to), Nonce: nonce}
		return types.NewTx(&types.SetCodeTx{ChainID: uint256.NewInt(chainID), Nonce: nonce, GasTipCap: u256(fee), GasFeeCap: u256(fee),
			Gas: gas, To: common.BytesToAddress(to), Value: u256(value), Data: data, AccessList: al,
			AuthList: []types.SetCodeAuthorization{auth}}), types.LatestSignerForChainID(id)
	}
}
