// Package ethtx decodes raw signed Ethereum transactions and recovers their
// sender without cgo, for eth_sendRawTransaction.
//
// # Model
//
// Decode gates the EIP-2718 type byte and hands the bytes to go-ethereum's
// strict RLP decoder (types.Transaction.UnmarshalBinary), so what decodes
// here is exactly what decodes in go-ethereum, minus the types this node
// does not take (3, blob; 4, set code).
//
// ChainID reads the chain id the signature commits to, so the caller can
// reject a transaction for another chain with that chain's number before
// paying for recovery.
//
// Sender recomputes the signing hash with a streaming RLP encoder that
// feeds Keccak-256 directly (go-ethereum builds an []any and encodes it by
// reflection), checks the signature values by go-ethereum's homestead rules,
// and recovers the public key with core/secp, a variable-time secp256k1
// built for this one job. It accepts exactly what
// types.Sender(types.LatestSignerForChainID(id), tx) accepts, id being the
// transaction's own chain id (nil when 0); sender_test.go checks this on
// thousands of random and corrupted transactions against both go-ethereum
// back ends (decred without cgo, libsecp256k1 with cgo).
//
// On amd64 with BMI2 and ADX, recovery costs about a fifth of go-ethereum's
// cgo-free path and a third of gitlab.com/yawning/secp256k1-voi; see
// BENCHMARKS.md.
//
// # Wire formats
//
//	legacy (first byte >= 0xc0):
//	+---------------------------------------------------------------+
//	| rlp([nonce, gasPrice, gas, to, value, data, v, r, s])         |
//	+---------------------------------------------------------------+
//	  v = 27/28 (unprotected) or 35 + 2*chainID + yParity (EIP-155)
//
//	typed (EIP-2718, first byte = type):
//	+------+--------------------------------------------------------------+
//	| 0x01 | rlp([chainID, nonce, gasPrice, gas, to, value, data,         |
//	|      |      accessList, yParity, r, s])                  (EIP-2930) |
//	+------+--------------------------------------------------------------+
//	| 0x02 | rlp([chainID, nonce, tipCap, feeCap, gas, to, value, data,   |
//	|      |      accessList, yParity, r, s])                  (EIP-1559) |
//	+------+--------------------------------------------------------------+
//	  to is 0 or 20 bytes; accessList = [[address, [key32, ...]], ...]
//
//	signing hash = keccak256 of the same layout without v/yParity, r, s;
//	EIP-155 legacy appends [chainID, 0, 0] instead.
//
// # Limits
//
//   - RawSizeMax (128 KiB) bounds Decode's input, as go-ethereum's pool does.
//   - Chain ids above 2^64-1 are reported by ChainID as math.MaxUint64;
//     Sender still uses their exact value.
//   - Sender handles legacy, type 1 and type 2 transactions only.
//
// # Allocations
//
// Decode allocates what go-ethereum's decoder allocates (about 15-20
// objects). Sender's own work (hashing, recovery) allocates nothing: its
// scratch comes from a sync.Pool; the few allocations left are the copies
// that types.Transaction's accessors (GasPrice, Value, To, ...) return.
//
// All functions are safe for concurrent use.
package ethtx
