package core

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/holiman/uint256"
)

// Snapshot layout (all integers big-endian; accounts sorted by address,
// tokens by token address, so the bytes depend only on the state):
//
//	+---------+---------+-----+----------+-------------+---------------+---------+----------+
//	| "LSNAP1"| chainID | seq | baseFee  | feesBurned  | nativeIssued  | nAccts  | accounts |
//	|  6 B    |  u64    | u64 | 32 B     | 32 B        | 32 B          | u32     |   ...    |
//	+---------+---------+-----+----------+-------------+---------------+---------+----------+
//	account: | address 20 B | nonce u64 | native 32 B | nTokens u32 | (token 20 B | amount 32 B)* |
//
// The pending marks are not part of it (see the package doc).
const snapshotMagic = "LSNAP1"

// AppendSnapshot appends the canonical encoding of the state to dst.
func (l *Ledger) AppendSnapshot(dst []byte) []byte {
	dst = append(dst, snapshotMagic...)
	dst = binary.BigEndian.AppendUint64(dst, l.chainID)
	dst = binary.BigEndian.AppendUint64(dst, l.seq)
	dst = appendU256(dst, &l.baseFee)
	dst = appendU256(dst, &l.feesBurned)
	dst = appendU256(dst, &l.nativeIssued)
	addrs := sortedKeys(l.accounts)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(addrs)))
	for _, a := range addrs {
		acc := l.accounts[a]
		dst = append(dst, a[:]...)
		dst = binary.BigEndian.AppendUint64(dst, acc.Nonce)
		dst = appendU256(dst, &acc.Native)
		tokens := sortedKeys(acc.tokens)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(tokens)))
		for _, t := range tokens {
			dst = append(dst, t[:]...)
			dst = appendU256(dst, acc.tokens[t])
		}
	}
	return dst
}

// StateHash is keccak256 of the snapshot: equal hashes mean equal states.
func (l *Ledger) StateHash() Hash { return Keccak256Hash(l.AppendSnapshot(nil)) }

// CheckSupply verifies the conservation invariant: native balances plus
// burned fees equal everything ever issued (genesis and deposits).
func (l *Ledger) CheckSupply() bool {
	var sum uint256.Int
	for _, acc := range l.accounts { // order-independent sum
		sum.Add(&sum, &acc.Native)
	}
	sum.Add(&sum, &l.feesBurned)
	return sum.Eq(&l.nativeIssued)
}

func appendU256(dst []byte, v *uint256.Int) []byte {
	b := v.Bytes32()
	return append(dst, b[:]...)
}

func sortedKeys[V any](m map[Address]V) []Address {
	keys := make([]Address, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Address) int { return bytes.Compare(a[:], b[:]) })
	return keys
}
