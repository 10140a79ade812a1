package abi

import (
	"encoding/binary"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
)

// Function selectors: the first four bytes of keccak256 of the canonical
// signature. selectors_test.go recomputes every one of them.
const (
	selSubmitOrder           uint32 = 0x1e416275 // submitOrder(bytes32,int256,uint256,uint8,uint128,uint128,uint8)
	selSubmitOrderDeprecated uint32 = 0x435f7e71 // submitOrder(bytes32,int256,uint256,uint8,uint128,uint128,bool,bool)
	selCancel                uint32 = 0xf38e6f2f // cancel(bytes32,bytes32,uint128)
	selUpdate                uint32 = 0xca07e1f5 // update(bytes32,bytes32,uint256,uint256,address,uint128)
	selTransfer              uint32 = 0x5b3ca981 // transfer(address,address,uint256,uint128)
	selDeposit               uint32 = 0xb1b1588e // deposit(address,address,uint256,uint128): decoded as a transfer
	selSubmitBatch           uint32 = 0xda235f17 // submitBatch(bytes[])
	selDelegated             uint32 = 0xf744bc22 // delegated(address,uint64,bytes,bytes)
	selSubmitTrigger         uint32 = 0xec563caa // submitTrigger(bytes32,int256,uint256,uint256,uint8,uint8,uint128,uint128,bool,bool)
	selCancelTrigger         uint32 = 0xa28aff15 // cancelTrigger(bytes32,bytes32,uint128)
	selUpdateTrigger         uint32 = 0x14bc15e3 // updateTrigger(bytes32,bytes32,int256,uint256,uint256,uint128)
	// The Bridge's and the orderbook's withdraw: the ledger runs it as a
	// transaction of its own (core/withdraw.go); refused inside a batch or
	// delegation.
	selWithdraw uint32 = 0xa98b3cbd // withdraw(address,address,uint256,uint128)
)

const (
	selectorSize = 4
	wordSize     = 32

	// Argument words of the static calls (after the selector).
	submitOrderWords           = 7
	submitOrderDeprecatedWords = 8
	cancelWords                = 3
	updateWords                = 6
	transferWords              = 4
	submitTriggerWords         = 10
	cancelTriggerWords         = 3
	updateTriggerWords         = 6
	// Head words of the dynamic calls.
	submitBatchHeadWords = 1
	delegatedHeadWords   = 4

	// signatureSize is r ‖ s ‖ v.
	signatureSize = 65

	// int63Max bounds every microsecond timestamp and duration: the venue
	// keeps them in int64-safe uint64s.
	int63Max = 1<<63 - 1
)

// Decode decodes one orderbook transaction's calldata into env.
//
// signer is the transaction's recovered sender; it is the delegate a
// delegated() certificate must name. chainID is the EIP-712 domain's chainId.
//
// env.Intents is reused (truncated to [:0] and appended to), so a caller that
// keeps one Envelope per loop decodes every single-intent call without
// allocating. The envelope keeps no reference to data.
// On any Reason other than OK, env is reset (no intents, not delegated).
//
// Decode checks everything that can be decided from the calldata alone,
// including that a delegation certificate covers the envelope's deadline
// (validUntil ≥ deadline, ReasonDelegationExpired). Whether the certificate
// has run out against the clock (env.ValidUntil, microseconds) is the
// caller's check. Decode never panics.
func Decode(data []byte, chainID uint64, signer clob.Address, env *clob.Envelope) clob.Reason {
	env.Intents = env.Intents[:0]
	env.Delegated = false
	env.Master = clob.Address{}
	env.ValidUntil = 0
	env.HasIDs = false

	reason := decodeTop(data, chainID, signer, env)
	if reason != clob.OK {
		env.Intents = env.Intents[:0]
		env.Delegated = false
		env.Master = clob.Address{}
		env.ValidUntil = 0
	}
	return reason
}

func decodeTop(data []byte, chainID uint64, signer clob.Address, env *clob.Envelope) clob.Reason {
	if len(data) < selectorSize {
		return clob.ReasonMalformed
	}
	switch selectorOf(data) {
	case selSubmitBatch:
		return decodeBatch(data[selectorSize:], nil, env)
	case selDelegated:
		return decodeDelegated(data[selectorSize:], chainID, signer, env)
	default:
		env.Intents = append(env.Intents, clob.Intent{})
		return decodeIntent(data, &env.Intents[len(env.Intents)-1])
	}
}

func selectorOf(data []byte) uint32 {
	return binary.BigEndian.Uint32(data[:selectorSize])
}

// IsDelegated reports whether orderbook call data is a delegated()
// envelope, from its selector alone: the ledger exempts such a transaction
// from gas before decoding it (docs/decisions.md), and Decode refuses one
// that turns out malformed.
func IsDelegated(data []byte) bool {
	return len(data) >= selectorSize && selectorOf(data) == selDelegated
}

// decodeInner decodes a call inside submitBatch or delegated. A Bridge
// withdraw there gets its own reason: a withdrawal is its own transaction
// to the Bridge (docs/bridge.md §2). master is the delegation's master, nil
// outside delegated(): as on the live network, a delegated deposit's
// recipient is overridden to the master (after it was checked as an
// address), so a leaked delegate key cannot move the master's funds to
// anyone else through deposit.
func decodeInner(data []byte, master *clob.Address, in *clob.Intent) clob.Reason {
	if len(data) < selectorSize {
		return clob.ReasonMalformed
	}
	switch selectorOf(data) {
	case selWithdraw:
		return clob.ReasonWithdrawBatched
	case selDeposit:
		r := decodeIntent(data, in)
		if r == clob.OK && master != nil {
			in.To = *master
		}
		return r
	}
	return decodeIntent(data, in)
}

// decodeIntent decodes one single-intent call (selector included) into in.
// REQUIRES: in is zero.
func decodeIntent(data []byte, in *clob.Intent) clob.Reason {
	if len(data) < selectorSize {
		return clob.ReasonMalformed
	}
	args := data[selectorSize:]
	switch selectorOf(data) {
	case selSubmitOrder:
		return decodeSubmitOrder(args, in, false)
	case selSubmitOrderDeprecated:
		return decodeSubmitOrder(args, in, true)
	case selCancel:
		return decodeCancel(args, in)
	case selUpdate:
		return decodeUpdate(args, in)
	case selTransfer, selDeposit:
		// deposit(address token,address recipient,uint256 amount,uint128
		// deadline) has transfer's shape: on this venue the account's
		// balance is its orderbook balance, so a deposit is a transfer to
		// the recipient (a no-op move, checked, when it is the sender).
		return decodeTransfer(args, in)
	case selSubmitTrigger:
		return decodeSubmitTrigger(args, in)
	case selCancelTrigger:
		return decodeCancelTrigger(args, in)
	case selUpdateTrigger:
		return decodeUpdateTrigger(args, in)
	case selSubmitBatch:
		return clob.ReasonBatchNested
	case selDelegated:
		return clob.ReasonDelegationNested
	default:
		return clob.ReasonUnknownFunction
	}
}

// Static calls. Arguments are checked in argument order and the first
// failing one decides the Reason.

func decodeSubmitOrder(args []byte, in *clob.Intent, deprecated bool) clob.Reason {
	words := submitOrderWords
	if deprecated {
		words = submitOrderDeprecatedWords
	}
	if len(args) != words*wordSize {
		return clob.ReasonMalformed
	}
	in.Kind = clob.IntentSubmit
	copy(in.Book[:], word(args, 0))
	if r := readInt256(word(args, 1), &in.Side, &in.Size); r != clob.OK {
		return r
	}
	in.Price.SetBytes32(word(args, 2))
	orderType, r := readUint8(word(args, 3))
	if r != clob.OK {
		return r
	}
	if orderType > uint8(clob.Market) {
		return clob.ReasonOrderType
	}
	in.Type = clob.OrderType(orderType)
	if in.Deadline, r = readUint128Us(word(args, 4)); r != clob.OK {
		return r
	}
	if in.TTL, r = readUint128Us(word(args, 5)); r != clob.OK {
		return r
	}
	if !deprecated {
		in.Flags, r = readUint8(word(args, 6))
		return r
	}
	return readFlagBools(args, 6, in)
}

// readFlagBools reads the words i and i+1, bool reduceOnly and bool ioc,
// into in.Flags.
func readFlagBools(args []byte, i int, in *clob.Intent) clob.Reason {
	reduceOnly, r := readBool(word(args, i))
	if r != clob.OK {
		return r
	}
	ioc, r := readBool(word(args, i+1))
	if r != clob.OK {
		return r
	}
	if reduceOnly {
		in.Flags |= clob.FlagReduceOnly
	}
	if ioc {
		in.Flags |= clob.FlagIOC
	}
	return clob.OK
}

func decodeCancel(args []byte, in *clob.Intent) clob.Reason {
	if len(args) != cancelWords*wordSize {
		return clob.ReasonMalformed
	}
	in.Kind = clob.IntentCancel
	copy(in.Book[:], word(args, 0))
	copy(in.OrderID[:], word(args, 1))
	var r clob.Reason
	in.Deadline, r = readUint128Us(word(args, 2))
	return r
}

func decodeUpdate(args []byte, in *clob.Intent) clob.Reason {
	if len(args) != updateWords*wordSize {
		return clob.ReasonMalformed
	}
	in.Kind = clob.IntentUpdate
	copy(in.Book[:], word(args, 0))
	copy(in.OrderID[:], word(args, 1))
	in.Size.SetBytes32(word(args, 2))
	in.Price.SetBytes32(word(args, 3))
	if r := readAddress(word(args, 4), &in.Token); r != clob.OK {
		return r
	}
	var r clob.Reason
	in.Deadline, r = readUint128Us(word(args, 5))
	return r
}

func decodeTransfer(args []byte, in *clob.Intent) clob.Reason {
	if len(args) != transferWords*wordSize {
		return clob.ReasonMalformed
	}
	in.Kind = clob.IntentTransfer
	if r := readAddress(word(args, 0), &in.Token); r != clob.OK {
		return r
	}
	if r := readAddress(word(args, 1), &in.To); r != clob.OK {
		return r
	}
	in.Amount.SetBytes32(word(args, 2))
	var r clob.Reason
	in.Deadline, r = readUint128Us(word(args, 3))
	return r
}

func decodeSubmitTrigger(args []byte, in *clob.Intent) clob.Reason {
	if len(args) != submitTriggerWords*wordSize {
		return clob.ReasonMalformed
	}
	in.Kind = clob.IntentSubmitTrigger
	copy(in.Book[:], word(args, 0))
	if r := readInt256(word(args, 1), &in.Side, &in.Size); r != clob.OK {
		return r
	}
	in.Price.SetBytes32(word(args, 2))
	in.TriggerPrice.SetBytes32(word(args, 3))
	var r clob.Reason
	if in.TriggerType, r = readUint8(word(args, 4)); r != clob.OK {
		return r
	}
	if in.Grouping, r = readUint8(word(args, 5)); r != clob.OK {
		return r
	}
	if in.Deadline, r = readUint128Us(word(args, 6)); r != clob.OK {
		return r
	}
	if in.TTL, r = readUint128Us(word(args, 7)); r != clob.OK {
		return r
	}
	return readFlagBools(args, 8, in)
}

func decodeCancelTrigger(args []byte, in *clob.Intent) clob.Reason {
	if r := decodeCancel(args, in); r != clob.OK {
		return r
	}
	in.Kind = clob.IntentCancelTrigger
	return clob.OK
}

func decodeUpdateTrigger(args []byte, in *clob.Intent) clob.Reason {
	if len(args) != updateTriggerWords*wordSize {
		return clob.ReasonMalformed
	}
	in.Kind = clob.IntentUpdateTrigger
	copy(in.Book[:], word(args, 0))
	copy(in.OrderID[:], word(args, 1))
	if r := readInt256(word(args, 2), &in.Side, &in.Size); r != clob.OK {
		return r
	}
	in.Price.SetBytes32(word(args, 3))
	in.TriggerPrice.SetBytes32(word(args, 4))
	var r clob.Reason
	in.Deadline, r = readUint128Us(word(args, 5))
	return r
}

// Dynamic calls.

// decodeBatch decodes submitBatch's arguments (after the selector) and
// appends its intents to env.Intents.
//
// Checks, in order: the head and the array header are in bounds
// (ReasonMalformed); 1 ≤ count ≤ BatchIntentsMax (ReasonBatchSize); then
// element by element: in bounds and zero padded (ReasonMalformed), a
// supported single-intent call (its own Reason, ReasonBatchNested,
// ReasonDelegationNested), the first element's deadline
// (ReasonBatchDeadline).
//
// master is the delegation's master when the batch is delegated(), else nil
// (see decodeInner).
func decodeBatch(args []byte, master *clob.Address, env *clob.Envelope) clob.Reason {
	if len(args) < submitBatchHeadWords*wordSize {
		return clob.ReasonMalformed
	}
	arrayAt, ok := readOffset(word(args, 0), len(args))
	if !ok || len(args)-arrayAt < wordSize {
		return clob.ReasonMalformed
	}
	// The count is compared before it is bounded by the data: an absurd
	// count is a batch-size error whatever follows it.
	countWord := args[arrayAt : arrayAt+wordSize]
	if !highZero(countWord, wordSize-8) {
		return clob.ReasonBatchSize
	}
	count := binary.BigEndian.Uint64(countWord[wordSize-8:])
	if count == 0 || count > clob.BatchIntentsMax {
		return clob.ReasonBatchSize
	}
	// Element offsets are relative to the first byte after the count.
	elems := args[arrayAt+wordSize:]
	if uint64(len(elems)) < count*wordSize {
		return clob.ReasonMalformed
	}
	first := len(env.Intents)
	for i := 0; i < int(count); i++ {
		inner, r := readBytes(elems, word(elems, i))
		if r != clob.OK {
			return r
		}
		env.Intents = append(env.Intents, clob.Intent{})
		in := &env.Intents[len(env.Intents)-1]
		if r := decodeInner(inner, master, in); r != clob.OK {
			return r
		}
		if in.Deadline != env.Intents[first].Deadline {
			return clob.ReasonBatchDeadline
		}
	}
	return clob.OK
}

// decodeDelegated decodes delegated()'s arguments (after the selector).
//
// Checks, in order: the head words and both byte strings (ReasonMalformed);
// the inner call (its own Reason; ReasonDelegationNested for a nested
// delegated()); validUntil ≥ the envelope's deadline
// (ReasonDelegationExpired); the certificate (ReasonDelegationSignature).
// The signature is checked last because it is by far the most expensive.
func decodeDelegated(args []byte, chainID uint64, signer clob.Address, env *clob.Envelope) clob.Reason {
	if len(args) < delegatedHeadWords*wordSize {
		return clob.ReasonMalformed
	}
	var master clob.Address
	if r := readAddress(word(args, 0), &master); r != clob.OK {
		return r
	}
	validUntilWord := word(args, 1)
	if !highZero(validUntilWord, wordSize-8) {
		return clob.ReasonMalformed
	}
	validUntil := binary.BigEndian.Uint64(validUntilWord[wordSize-8:])
	sig, r := readBytes(args, word(args, 2))
	if r != clob.OK {
		return r
	}
	inner, r := readBytes(args, word(args, 3))
	if r != clob.OK {
		return r
	}
	if len(inner) < selectorSize {
		return clob.ReasonMalformed
	}
	switch selectorOf(inner) {
	case selDelegated:
		return clob.ReasonDelegationNested
	case selSubmitBatch:
		r = decodeBatch(inner[selectorSize:], &master, env)
	default:
		env.Intents = append(env.Intents, clob.Intent{})
		r = decodeInner(inner, &master, &env.Intents[len(env.Intents)-1])
	}
	if r != clob.OK {
		return r
	}
	// Invariant: every intent carries the same deadline (a single intent, or
	// a batch that passed its deadline check).
	if env.Intents[0].Deadline > validUntil {
		return clob.ReasonDelegationExpired
	}
	if !verifyDelegation(sig, chainID, signer, validUntil, master) {
		return clob.ReasonDelegationSignature
	}
	env.Delegated = true
	env.Master = master
	env.ValidUntil = validUntil
	return clob.OK
}

// Word readers.

// word returns the i-th 32-byte word of args.
// REQUIRES: len(args) ≥ (i+1)·32.
func word(args []byte, i int) []byte {
	return args[i*wordSize : (i+1)*wordSize : (i+1)*wordSize]
}

// highZero reports whether the first n bytes of w are zero.
func highZero(w []byte, n int) bool {
	for _, b := range w[:n] {
		if b != 0 {
			return false
		}
	}
	return true
}

func readUint8(w []byte) (uint8, clob.Reason) {
	if !highZero(w, wordSize-1) {
		return 0, clob.ReasonMalformed
	}
	return w[wordSize-1], clob.OK
}

func readBool(w []byte) (bool, clob.Reason) {
	v, r := readUint8(w)
	if r != clob.OK || v > 1 {
		return false, clob.ReasonMalformed
	}
	return v == 1, clob.OK
}

func readAddress(w []byte, dst *clob.Address) clob.Reason {
	if !highZero(w, wordSize-len(dst)) {
		return clob.ReasonMalformed
	}
	copy(dst[:], w[wordSize-len(dst):])
	return clob.OK
}

// readUint128Us reads a uint128 timestamp or duration in microseconds. Bits
// above 128 make the word malformed; a valid uint128 above 2^63-1 is out of
// the venue's range.
func readUint128Us(w []byte) (uint64, clob.Reason) {
	if !highZero(w, wordSize-16) {
		return 0, clob.ReasonMalformed
	}
	if !highZero(w, wordSize-8) {
		return 0, clob.ReasonValueRange
	}
	v := binary.BigEndian.Uint64(w[wordSize-8:])
	if v > int63Max {
		return 0, clob.ReasonValueRange
	}
	return v, clob.OK
}

// readInt256 splits a two's complement int256 into side and magnitude.
// -2^255 has no positive counterpart in int256 and is refused.
func readInt256(w []byte, side *clob.Side, magnitude *uint256.Int) clob.Reason {
	magnitude.SetBytes32(w)
	if w[0]&0x80 == 0 {
		*side = clob.Buy
		return clob.OK
	}
	magnitude.Neg(magnitude)
	if magnitude[3]&(1<<63) != 0 {
		// Only -2^255 negates to itself.
		return clob.ReasonValueRange
	}
	*side = clob.Sell
	return clob.OK
}

// readOffset reads an offset or length word that must not exceed limit.
func readOffset(w []byte, limit int) (int, bool) {
	if !highZero(w, wordSize-8) {
		return 0, false
	}
	v := binary.BigEndian.Uint64(w[wordSize-8:])
	if v > uint64(limit) {
		return 0, false
	}
	return int(v), true
}

// readBytes reads the `bytes` value whose offset (relative to base) is in
// offsetWord: a length word, then the bytes, zero padded to a whole word.
// Offsets need not be where a canonical encoder puts them, but the length
// word, the bytes and their padding must all lie inside base. The result
// aliases base.
func readBytes(base []byte, offsetWord []byte) ([]byte, clob.Reason) {
	at, ok := readOffset(offsetWord, len(base))
	if !ok || len(base)-at < wordSize {
		return nil, clob.ReasonMalformed
	}
	rest := base[at+wordSize:]
	n, ok := readOffset(base[at:at+wordSize], len(rest))
	if !ok {
		return nil, clob.ReasonMalformed
	}
	// Invariant: n ≤ len(rest), so the rounding cannot overflow.
	padded := (n + wordSize - 1) &^ (wordSize - 1)
	if padded > len(rest) {
		return nil, clob.ReasonMalformed
	}
	for _, b := range rest[n:padded] {
		if b != 0 {
			return nil, clob.ReasonMalformed
		}
	}
	return rest[:n:n], clob.OK
}
