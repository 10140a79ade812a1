package ethtx

import (
	"math/big"
	"math/bits"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// hashBufSize is the staging buffer for small RLP items; larger byte
// strings (calldata) go to the Keccak state without a copy.
const hashBufSize = 256

// sigFields are the signed fields of a transaction, in the order of the
// legacy layout; encodeSigHash reorders them per type.
type sigFields struct {
	typ     byte
	chainID *big.Int // nil: unprotected legacy, not part of the preimage
	nonce   uint64
	price   *big.Int // gas price, or the tip cap of a type 2 transaction
	feeCap  *big.Int // type 2 only
	gas     uint64
	to      *common.Address
	value   *big.Int
	data    []byte
	access  types.AccessList
}

// hasher streams RLP into Keccak-256. Its arrays live with it on the heap,
// so handing them to the Keccak state (an interface) allocates nothing.
type hasher struct {
	k       crypto.KeccakState
	n       int
	buf     [hashBufSize]byte
	digest  [32]byte
	pub     [64]byte
	r, s    [32]byte
	chainID big.Int // legacy chain id derived from v
}

func (h *hasher) reset() {
	h.k.Reset()
	h.n = 0
}

func (h *hasher) flush() {
	if h.n > 0 {
		h.k.Write(h.buf[:h.n])
		h.n = 0
	}
}

func (h *hasher) writeByte(b byte) {
	if h.n == len(h.buf) {
		h.flush()
	}
	h.buf[h.n] = b
	h.n++
}

func (h *hasher) write(p []byte) {
	if len(p) > len(h.buf)-h.n {
		h.flush()
		if len(p) > len(h.buf) {
			h.k.Write(p)
			return
		}
	}
	h.n += copy(h.buf[h.n:], p)
}

// sum finishes the hash into h.digest.
func (h *hasher) sum() {
	h.flush()
	h.k.Read(h.digest[:])
}

// encodeSigHash sets h.digest to the signing hash of f:
//
//	legacy:    keccak(rlp([nonce, gasPrice, gas, to, value, data]))
//	EIP-155:   keccak(rlp([nonce, gasPrice, gas, to, value, data, chainID, 0, 0]))
//	type 1:    keccak(0x01 || rlp([chainID, nonce, gasPrice, gas, to, value, data, accessList]))
//	type 2:    keccak(0x02 || rlp([chainID, nonce, tipCap, feeCap, gas, to, value, data, accessList]))
func (h *hasher) encodeSigHash(f *sigFields) {
	h.reset()
	shared := uintSize(f.nonce) + bigSize(f.price) + uintSize(f.gas) + addressSize(f.to) +
		bigSize(f.value) + bytesSize(f.data)
	if f.typ == types.LegacyTxType {
		size := shared
		if f.chainID != nil {
			size += bigSize(f.chainID) + 2
		}
		h.writeHeader(0xc0, size)
		h.writeCommon(f)
		if f.chainID != nil {
			h.writeBig(f.chainID)
			h.writeByte(0x80)
			h.writeByte(0x80)
		}
		h.sum()
		return
	}
	size := shared + bigSize(f.chainID) + accessListSize(f.access)
	if f.typ == types.DynamicFeeTxType {
		size += bigSize(f.feeCap)
	}
	h.writeByte(f.typ)
	h.writeHeader(0xc0, size)
	h.writeBig(f.chainID)
	h.writeCommon(f)
	h.writeAccessList(f.access)
	h.sum()
}

// writeCommon writes nonce .. data; the type 2 fee cap goes after the tip.
func (h *hasher) writeCommon(f *sigFields) {
	h.writeUint(f.nonce)
	h.writeBig(f.price)
	if f.typ == types.DynamicFeeTxType {
		h.writeBig(f.feeCap)
	}
	h.writeUint(f.gas)
	if f.to == nil {
		h.writeByte(0x80)
	} else {
		h.writeByte(0x80 + common.AddressLength)
		h.write(f.to[:])
	}
	h.writeBig(f.value)
	if len(f.data) == 1 && f.data[0] < 0x80 {
		h.writeByte(f.data[0])
		return
	}
	h.writeHeader(0x80, len(f.data))
	h.write(f.data)
}

// writeHeader writes an RLP string (base 0x80) or list (base 0xc0) header
// for a payload of size bytes.
func (h *hasher) writeHeader(base byte, size int) {
	if size <= 55 {
		h.writeByte(base + byte(size))
		return
	}
	n := byteLen(uint64(size))
	h.writeByte(base + 55 + byte(n))
	for i := n - 1; i >= 0; i-- {
		h.writeByte(byte(uint64(size) >> (8 * i)))
	}
}

func (h *hasher) writeUint(v uint64) {
	if v != 0 && v < 0x80 {
		h.writeByte(byte(v))
		return
	}
	n := byteLen(v)
	h.writeByte(0x80 + byte(n))
	for i := n - 1; i >= 0; i-- {
		h.writeByte(byte(v >> (8 * i)))
	}
}

// writeBig writes the magnitude of x (nil is 0). Sender rejects negative
// values before hashing.
func (h *hasher) writeBig(x *big.Int) {
	if x == nil || x.BitLen() <= 64 {
		var v uint64
		if x != nil {
			v = x.Uint64()
		}
		h.writeUint(v)
		return
	}
	n := (x.BitLen() + 7) / 8
	h.writeHeader(0x80, n)
	words := x.Bits()
	for i := n - 1; i >= 0; i-- {
		w := words[i/(bits.UintSize/8)]
		h.writeByte(byte(w >> (8 * (i % (bits.UintSize / 8)))))
	}
}

func (h *hasher) writeAccessList(al types.AccessList) {
	h.writeHeader(0xc0, accessListPayload(al))
	for i := range al {
		t := &al[i]
		keys := len(t.StorageKeys) * 33
		h.writeHeader(0xc0, 21+headerSize(keys)+keys)
		h.writeByte(0x80 + common.AddressLength)
		h.write(t.Address[:])
		h.writeHeader(0xc0, keys)
		for j := range t.StorageKeys {
			h.writeByte(0x80 + common.HashLength)
			h.write(t.StorageKeys[j][:])
		}
	}
}

// byteLen is the number of bytes of v without leading zeros.
func byteLen(v uint64) int { return (bits.Len64(v) + 7) / 8 }

// headerSize is the size of an RLP header for a payload of size bytes.
func headerSize(size int) int {
	if size <= 55 {
		return 1
	}
	return 1 + byteLen(uint64(size))
}

func uintSize(v uint64) int {
	if v < 0x80 {
		return 1
	}
	return 1 + byteLen(v)
}

func bigSize(x *big.Int) int {
	if x == nil || x.BitLen() <= 64 {
		var v uint64
		if x != nil {
			v = x.Uint64()
		}
		return uintSize(v)
	}
	n := (x.BitLen() + 7) / 8
	return headerSize(n) + n
}

func addressSize(a *common.Address) int {
	if a == nil {
		return 1
	}
	return 1 + common.AddressLength
}

func bytesSize(p []byte) int {
	if len(p) == 1 && p[0] < 0x80 {
		return 1
	}
	return headerSize(len(p)) + len(p)
}

func accessListPayload(al types.AccessList) int {
	size := 0
	for i := range al {
		keys := len(al[i].StorageKeys) * 33
		tuple := 21 + headerSize(keys) + keys
		size += headerSize(tuple) + tuple
	}
	return size
}

func accessListSize(al types.AccessList) int {
	size := accessListPayload(al)
	return headerSize(size) + size
}
