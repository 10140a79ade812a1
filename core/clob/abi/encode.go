package abi

import (
	"encoding/binary"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
)

// Encoders append the canonical ABI encoding of a call (selector included) to
// dst and return the extended slice, exactly what abi.Pack of the Solidity
// signature produces. They are for clients and tests; the node only decodes.

var zeroWord [wordSize]byte

// AppendSubmitOrder appends submitOrder(bytes32,int256,uint256,uint8,uint128,uint128,uint8)
// for a submit intent: size is +Size for Buy, -Size for Sell.
// REQUIRES: the signed size fits int256.
func AppendSubmitOrder(dst []byte, in *clob.Intent) []byte {
	dst = appendSelector(dst, selSubmitOrder)
	dst = appendSubmitHead(dst, in)
	return appendUint64(dst, uint64(in.Flags))
}

// AppendSubmitOrderDeprecated appends the deprecated
// submitOrder(bytes32,int256,uint256,uint8,uint128,uint128,bool reduceOnly,bool ioc).
// REQUIRES: the signed size fits int256; in.Flags ⊆ REDUCE_ONLY|IOC.
func AppendSubmitOrderDeprecated(dst []byte, in *clob.Intent) []byte {
	if in.Flags&^(clob.FlagReduceOnly|clob.FlagIOC) != 0 {
		panic("BUG: abi: the deprecated submitOrder carries only REDUCE_ONLY and IOC")
	}
	dst = appendSelector(dst, selSubmitOrderDeprecated)
	dst = appendSubmitHead(dst, in)
	dst = appendBool(dst, in.Flags&clob.FlagReduceOnly != 0)
	return appendBool(dst, in.Flags&clob.FlagIOC != 0)
}

// appendSubmitHead appends the six arguments both submitOrder forms share.
func appendSubmitHead(dst []byte, in *clob.Intent) []byte {
	dst = append(dst, in.Book[:]...)
	dst = appendInt256(dst, in.Side, &in.Size)
	dst = appendUint256(dst, &in.Price)
	dst = appendUint64(dst, uint64(in.Type))
	dst = appendUint64(dst, in.Deadline)
	return appendUint64(dst, in.TTL)
}

// AppendCancel appends cancel(bytes32 orderbookId,bytes32 orderId,uint128 deadline).
func AppendCancel(dst []byte, in *clob.Intent) []byte {
	dst = appendSelector(dst, selCancel)
	dst = append(dst, in.Book[:]...)
	dst = append(dst, in.OrderID[:]...)
	return appendUint64(dst, in.Deadline)
}

// AppendUpdate appends update(bytes32 orderbookId,bytes32 orderId,uint256 newSize,
// uint256 newPrice,address token,uint128 deadline).
func AppendUpdate(dst []byte, in *clob.Intent) []byte {
	dst = appendSelector(dst, selUpdate)
	dst = append(dst, in.Book[:]...)
	dst = append(dst, in.OrderID[:]...)
	dst = appendUint256(dst, &in.Size)
	dst = appendUint256(dst, &in.Price)
	dst = appendAddress(dst, in.Token)
	return appendUint64(dst, in.Deadline)
}

// AppendTransfer appends transfer(address token,address to,uint256 amount,uint128 deadline).
func AppendTransfer(dst []byte, in *clob.Intent) []byte {
	dst = appendSelector(dst, selTransfer)
	dst = appendAddress(dst, in.Token)
	dst = appendAddress(dst, in.To)
	dst = appendUint256(dst, &in.Amount)
	return appendUint64(dst, in.Deadline)
}

// AppendSubmitTrigger appends submitTrigger(bytes32 orderbookId,int256 size,
// uint256 limitPrice,uint256 triggerPrice,uint8 triggerType,uint8 grouping,
// uint128 deadline,uint128 ttl,bool reduceOnly,bool ioc).
// REQUIRES: the signed size fits int256; in.Flags ⊆ REDUCE_ONLY|IOC.
func AppendSubmitTrigger(dst []byte, in *clob.Intent) []byte {
	if in.Flags&^(clob.FlagReduceOnly|clob.FlagIOC) != 0 {
		panic("BUG: abi: submitTrigger carries only REDUCE_ONLY and IOC")
	}
	dst = appendSelector(dst, selSubmitTrigger)
	dst = append(dst, in.Book[:]...)
	dst = appendInt256(dst, in.Side, &in.Size)
	dst = appendUint256(dst, &in.Price)
	dst = appendUint256(dst, &in.TriggerPrice)
	dst = appendUint64(dst, uint64(in.TriggerType))
	dst = appendUint64(dst, uint64(in.Grouping))
	dst = appendUint64(dst, in.Deadline)
	dst = appendUint64(dst, in.TTL)
	dst = appendBool(dst, in.Flags&clob.FlagReduceOnly != 0)
	return appendBool(dst, in.Flags&clob.FlagIOC != 0)
}

// AppendCancelTrigger appends cancelTrigger(bytes32 orderbookId,bytes32
// triggerId,uint128 deadline).
func AppendCancelTrigger(dst []byte, in *clob.Intent) []byte {
	dst = appendSelector(dst, selCancelTrigger)
	dst = append(dst, in.Book[:]...)
	dst = append(dst, in.OrderID[:]...)
	return appendUint64(dst, in.Deadline)
}

// AppendUpdateTrigger appends updateTrigger(bytes32 orderbookId,bytes32
// triggerId,int256 size,uint256 limitPrice,uint256 triggerPrice,uint128 deadline).
// REQUIRES: the signed size fits int256.
func AppendUpdateTrigger(dst []byte, in *clob.Intent) []byte {
	dst = appendSelector(dst, selUpdateTrigger)
	dst = append(dst, in.Book[:]...)
	dst = append(dst, in.OrderID[:]...)
	dst = appendInt256(dst, in.Side, &in.Size)
	dst = appendUint256(dst, &in.Price)
	dst = appendUint256(dst, &in.TriggerPrice)
	return appendUint64(dst, in.Deadline)
}

// AppendDeposit appends deposit(address token,address recipient,uint256
// amount,uint128 deadline) from a transfer intent (in.To is the recipient):
// the call decodes to the same intent, outside delegated().
func AppendDeposit(dst []byte, in *clob.Intent) []byte {
	dst = appendSelector(dst, selDeposit)
	dst = appendAddress(dst, in.Token)
	dst = appendAddress(dst, in.To)
	dst = appendUint256(dst, &in.Amount)
	return appendUint64(dst, in.Deadline)
}

// AppendIntent appends the call for in.Kind (the current submitOrder form for
// submits).
// REQUIRES: in.Kind is one of the IntentKind constants.
func AppendIntent(dst []byte, in *clob.Intent) []byte {
	switch in.Kind {
	case clob.IntentSubmit:
		return AppendSubmitOrder(dst, in)
	case clob.IntentCancel:
		return AppendCancel(dst, in)
	case clob.IntentUpdate:
		return AppendUpdate(dst, in)
	case clob.IntentTransfer:
		return AppendTransfer(dst, in)
	case clob.IntentSubmitTrigger:
		return AppendSubmitTrigger(dst, in)
	case clob.IntentCancelTrigger:
		return AppendCancelTrigger(dst, in)
	case clob.IntentUpdateTrigger:
		return AppendUpdateTrigger(dst, in)
	default:
		panic("BUG: abi: unknown intent kind")
	}
}

// AppendSubmitBatch appends submitBatch(bytes[] inner), each inner element
// the full calldata of one call. The layout is the canonical one (see
// doc.go). Decode refuses fewer than 1 or more than BatchIntentsMax inner
// calls; the encoder does not, so tests can build such batches.
func AppendSubmitBatch(dst []byte, inner [][]byte) []byte {
	dst = appendSelector(dst, selSubmitBatch)
	dst = appendUint64(dst, wordSize) // the array starts right after the head
	dst = appendUint64(dst, uint64(len(inner)))
	// Element offsets count from the first byte after the count word.
	at := uint64(len(inner) * wordSize)
	for _, b := range inner {
		dst = appendUint64(dst, at)
		at += wordSize + paddedSize(len(b))
	}
	for _, b := range inner {
		dst = appendBytes(dst, b)
	}
	return dst
}

// AppendDelegated appends delegated(address master,uint64 validUntil,bytes
// signature,bytes inner): inner is the full calldata of the wrapped call,
// signature the master's r ‖ s ‖ v over DelegationDigest, validUntil in
// microseconds.
func AppendDelegated(dst []byte, master clob.Address, validUntil uint64, signature, inner []byte) []byte {
	dst = appendSelector(dst, selDelegated)
	dst = appendAddress(dst, master)
	dst = appendUint64(dst, validUntil)
	sigAt := uint64(delegatedHeadWords * wordSize)
	dst = appendUint64(dst, sigAt)
	dst = appendUint64(dst, sigAt+wordSize+paddedSize(len(signature)))
	dst = appendBytes(dst, signature)
	return appendBytes(dst, inner)
}

func paddedSize(n int) uint64 {
	return uint64(n+wordSize-1) &^ (wordSize - 1)
}

func appendSelector(dst []byte, sel uint32) []byte {
	return binary.BigEndian.AppendUint32(dst, sel)
}

func appendUint64(dst []byte, v uint64) []byte {
	dst = append(dst, zeroWord[:wordSize-8]...)
	return binary.BigEndian.AppendUint64(dst, v)
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return appendUint64(dst, 1)
	}
	return appendUint64(dst, 0)
}

func appendAddress(dst []byte, a clob.Address) []byte {
	dst = append(dst, zeroWord[:wordSize-len(a)]...)
	return append(dst, a[:]...)
}

func appendUint256(dst []byte, v *uint256.Int) []byte {
	w := v.Bytes32()
	return append(dst, w[:]...)
}

// appendInt256 appends +magnitude (Buy) or -magnitude (Sell) in two's
// complement.
func appendInt256(dst []byte, side clob.Side, magnitude *uint256.Int) []byte {
	signBit := magnitude[3]&(1<<63) != 0
	if side != clob.Sell {
		if signBit {
			panic("BUG: abi: buy size does not fit int256")
		}
		return appendUint256(dst, magnitude)
	}
	var neg uint256.Int
	neg.Neg(magnitude)
	if !magnitude.IsZero() && neg[3]&(1<<63) == 0 {
		panic("BUG: abi: sell size does not fit int256")
	}
	return appendUint256(dst, &neg)
}

// appendBytes appends the tail of a `bytes` value: its length, then the
// bytes zero padded to a whole word.
func appendBytes(dst []byte, b []byte) []byte {
	dst = appendUint64(dst, uint64(len(b)))
	dst = append(dst, b...)
	return append(dst, zeroWord[:paddedSize(len(b))-uint64(len(b))]...)
}
