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
//	+---------+---------+-----+----------+-------------+---------+----------+
//	| "LSNAP2"| chainID | seq | baseFee  | feesBurned  | nAccts  | accounts |
//	|  6 B    |  u64    | u64 | 32 B     | 32 B        | u32     |   ...    |
//	+---------+---------+-----+----------+-------------+---------+----------+
//	| issued: tokenAmounts | obFees: tokenAmounts | engine (clob.Engine.AppendSnapshot) |
//	+----------------------+----------------------+-------------------------------------+
//	account:      | address 20 B | nonce u64 | native balance | nTokens u32 | (token 20 B | balance)* |
//	balance:      | cash 32 B | locked 32 B |
//	tokenAmounts: | n u32 | (token 20 B | amount 32 B)* |
//
// The pending marks are not part of it (see the package doc).
const snapshotMagic = "LSNAP2"

// AppendSnapshot appends the canonical encoding of the state to dst.
func (l *Ledger) AppendSnapshot(dst []byte) []byte {
	dst = append(dst, snapshotMagic...)
	dst = binary.BigEndian.AppendUint64(dst, l.chainID)
	dst = binary.BigEndian.AppendUint64(dst, l.seq)
	dst = appendU256(dst, &l.baseFee)
	dst = appendU256(dst, &l.feesBurned)
	addrs := sortedKeys(l.accounts)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(addrs)))
	for _, a := range addrs {
		acc := l.accounts[a]
		dst = append(dst, a[:]...)
		dst = binary.BigEndian.AppendUint64(dst, acc.Nonce)
		dst = appendBalance(dst, &acc.Native)
		tokens := sortedKeys(acc.tokens)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(tokens)))
		for _, t := range tokens {
			dst = append(dst, t[:]...)
			dst = appendBalance(dst, acc.tokens[t])
		}
	}
	dst = appendTokenAmounts(dst, l.issued)
	dst = appendTokenAmounts(dst, l.obFees)
	return l.engine.AppendSnapshot(dst)
}

func appendBalance(dst []byte, b *Balance) []byte {
	return appendU256(appendU256(dst, &b.Cash), &b.Locked)
}

func appendTokenAmounts(dst []byte, m map[Address]*uint256.Int) []byte {
	tokens := sortedKeys(m)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(tokens)))
	for _, t := range tokens {
		dst = append(dst, t[:]...)
		dst = appendU256(dst, m[t])
	}
	return dst
}

// StateHash is keccak256 of the snapshot: equal hashes mean equal states.
func (l *Ledger) StateHash() Hash { return Keccak256Hash(l.AppendSnapshot(nil)) }

// CheckSupply verifies the conservation invariant for every token: cash
// (locked included) plus fees taken equals everything ever issued (genesis
// and deposits), and no account has more locked than cash.
func (l *Ledger) CheckSupply() bool {
	sums := make(map[Address]*uint256.Int, len(l.issued))
	for _, acc := range l.accounts { // order-independent sums
		if acc.Native.Cash.Lt(&acc.Native.Locked) {
			return false
		}
		addTo(sums, NativeToken, &acc.Native.Cash)
		for t, b := range acc.tokens {
			if b.Cash.Lt(&b.Locked) {
				return false
			}
			addTo(sums, t, &b.Cash)
		}
	}
	addTo(sums, NativeToken, &l.feesBurned)
	for t, f := range l.obFees {
		addTo(sums, t, f)
	}
	return equalAmounts(sums, l.issued) && equalAmounts(l.issued, sums)
}

// equalAmounts reports whether every non-zero amount of a equals b's.
func equalAmounts(a, b map[Address]*uint256.Int) bool {
	for t, v := range a {
		if w := b[t]; !v.IsZero() && (w == nil || !v.Eq(w)) {
			return false
		}
	}
	return true
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
