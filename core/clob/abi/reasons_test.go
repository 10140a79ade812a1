package abi

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
)

// withWord returns a copy of calldata whose i-th argument word is w.
func withWord(data []byte, i int, w [wordSize]byte) []byte {
	out := bytes.Clone(data)
	copy(out[selectorSize+i*wordSize:], w[:])
	return out
}

func u64Word(v uint64) (w [wordSize]byte) {
	binary.BigEndian.PutUint64(w[wordSize-8:], v)
	return w
}

// bitWord has only bit n (0 = least significant) set.
func bitWord(n uint) [wordSize]byte {
	var v uint256.Int
	v.Lsh(uint256.NewInt(1), n)
	return v.Bytes32()
}

func selectorCall(signature string, argWords int) []byte {
	data := crypto.Keccak256([]byte(signature))[:selectorSize]
	return append(data, make([]byte, argWords*wordSize)...)
}

// TestDecodeReasons provokes every decoder Reason.
func TestDecodeReasons(t *testing.T) {
	f := func(name string, data []byte, want clob.Reason) {
		t.Helper()
		env := clob.Envelope{Intents: make([]clob.Intent, 3, 8), Delegated: true, ValidUntil: 9}
		got := Decode(data, testChainID, testSigner, &env)
		if got != want {
			t.Errorf("%s: Decode = %q, want %q", name, got, want)
		}
		if want != clob.OK && !isReset(&env) {
			t.Errorf("%s: envelope not reset on failure: %+v", name, env)
		}
	}
	const d = sampleDeadline
	submit := sampleSubmit(d)
	submitCall := AppendSubmitOrder(nil, &submit)
	legacyCall := AppendSubmitOrderDeprecated(nil, &submit)
	cancel := sampleCancel(d)
	cancelCall := AppendCancel(nil, &cancel)
	update := sampleUpdate(d)
	updateCall := AppendUpdate(nil, &update)
	transfer := sampleTransfer(d)
	transferCall := AppendTransfer(nil, &transfer)
	depositCall := AppendDeposit(nil, &transfer)
	unknownCall := selectorCall("deposit(address,uint256)", 2)
	trig := sampleSubmitTrigger(d)
	trigCall := AppendSubmitTrigger(nil, &trig)
	cancelTrig := sampleCancelTrigger(d)
	cancelTrigCall := AppendCancelTrigger(nil, &cancelTrig)
	updateTrig := sampleUpdateTrigger(d)
	updateTrigCall := AppendUpdateTrigger(nil, &updateTrig)

	f("submitOrder", submitCall, clob.OK)
	f("deprecated", legacyCall, clob.OK)
	f("cancel", cancelCall, clob.OK)
	f("update", updateCall, clob.OK)
	f("transfer", transferCall, clob.OK)
	f("deposit", depositCall, clob.OK)
	f("deposit zero", selectorCall("deposit(address,address,uint256,uint128)", 4), clob.OK) // the engine's refusal
	f("deposit short", depositCall[:len(depositCall)-1], clob.ReasonMalformed)
	f("deposit recipient high byte", withWord(depositCall, 1, bitWord(160)), clob.ReasonMalformed)
	f("deposit deadline 2^63", withWord(depositCall, 3, bitWord(63)), clob.ReasonValueRange)
	f("submitTrigger", trigCall, clob.OK)
	f("cancelTrigger", cancelTrigCall, clob.OK)
	f("updateTrigger", updateTrigCall, clob.OK)
	// The trigger type is the engine's to refuse, like the flags.
	f("trigger type 9", withWord(trigCall, 4, u64Word(9)), clob.OK)

	// ReasonUnknownFunction.
	f("withdraw", selectorCall("withdraw(address,address,uint256,uint128)", 4), clob.ReasonUnknownFunction)
	f("deposit(address,uint256)", unknownCall, clob.ReasonUnknownFunction)
	f("balanceOf", selectorCall("balanceOf(address,address)", 2), clob.ReasonUnknownFunction)
	f("selector only", []byte{0xde, 0xad, 0xbe, 0xef}, clob.ReasonUnknownFunction)

	// ReasonMalformed: lengths.
	f("empty", nil, clob.ReasonMalformed)
	f("3 bytes", submitCall[:3], clob.ReasonMalformed)
	f("submitOrder short", submitCall[:len(submitCall)-1], clob.ReasonMalformed)
	f("submitOrder long", append(bytes.Clone(submitCall), 0), clob.ReasonMalformed)
	f("submitOrder with deprecated length", append(bytes.Clone(submitCall), make([]byte, 32)...), clob.ReasonMalformed)
	f("deprecated with current length", legacyCall[:len(legacyCall)-32], clob.ReasonMalformed)
	f("cancel long", append(bytes.Clone(cancelCall), make([]byte, 32)...), clob.ReasonMalformed)
	f("update short", updateCall[:len(updateCall)-32], clob.ReasonMalformed)
	f("transfer short", transferCall[:len(transferCall)-1], clob.ReasonMalformed)
	f("submitTrigger short", trigCall[:len(trigCall)-32], clob.ReasonMalformed)
	f("cancelTrigger long", append(bytes.Clone(cancelTrigCall), make([]byte, 32)...), clob.ReasonMalformed)
	f("updateTrigger short", updateTrigCall[:len(updateTrigCall)-1], clob.ReasonMalformed)
	// ReasonMalformed: high bytes of narrow types.
	f("orderType high byte", withWord(submitCall, 3, bitWord(8)), clob.ReasonMalformed)
	f("flags high byte", withWord(submitCall, 6, bitWord(255)), clob.ReasonMalformed)
	f("deadline above uint128", withWord(submitCall, 4, bitWord(128)), clob.ReasonMalformed)
	f("ttl above uint128", withWord(submitCall, 5, bitWord(200)), clob.ReasonMalformed)
	f("cancel deadline above uint128", withWord(cancelCall, 2, bitWord(255)), clob.ReasonMalformed)
	f("bool 2", withWord(legacyCall, 6, u64Word(2)), clob.ReasonMalformed)
	f("bool high byte", withWord(legacyCall, 7, bitWord(9)), clob.ReasonMalformed)
	f("update token high byte", withWord(updateCall, 4, bitWord(160)), clob.ReasonMalformed)
	f("transfer token high byte", withWord(transferCall, 0, bitWord(255)), clob.ReasonMalformed)
	f("transfer to high byte", withWord(transferCall, 1, bitWord(170)), clob.ReasonMalformed)
	f("trigger type high byte", withWord(trigCall, 4, bitWord(8)), clob.ReasonMalformed)
	f("grouping high byte", withWord(trigCall, 5, bitWord(200)), clob.ReasonMalformed)
	f("trigger deadline above uint128", withWord(trigCall, 6, bitWord(128)), clob.ReasonMalformed)
	f("trigger ttl above uint128", withWord(trigCall, 7, bitWord(255)), clob.ReasonMalformed)
	f("reduceOnly 2", withWord(trigCall, 8, u64Word(2)), clob.ReasonMalformed)
	f("ioc high byte", withWord(trigCall, 9, bitWord(100)), clob.ReasonMalformed)
	f("cancelTrigger deadline above uint128", withWord(cancelTrigCall, 2, bitWord(130)), clob.ReasonMalformed)
	f("updateTrigger deadline above uint128", withWord(updateTrigCall, 5, bitWord(129)), clob.ReasonMalformed)

	// ReasonOrderType.
	f("orderType 2", withWord(submitCall, 3, u64Word(2)), clob.ReasonOrderType)
	f("orderType 255", withWord(legacyCall, 3, u64Word(255)), clob.ReasonOrderType)
	f("orderType 1", withWord(submitCall, 3, u64Word(1)), clob.OK)

	// ReasonValueRange.
	f("size min int256", withWord(submitCall, 1, bitWord(255)), clob.ReasonValueRange)
	f("size -1", withWord(submitCall, 1, allOnes()), clob.OK)
	f("size -2^255+1", withWord(submitCall, 1, [32]byte{0: 0x80, 31: 0x01}), clob.OK)
	f("deadline 2^63", withWord(submitCall, 4, bitWord(63)), clob.ReasonValueRange)
	f("deadline 2^127", withWord(submitCall, 4, bitWord(127)), clob.ReasonValueRange)
	f("deadline 2^63-1", withWord(submitCall, 4, u64Word(int63Max)), clob.OK)
	f("ttl 2^64", withWord(submitCall, 5, bitWord(64)), clob.ReasonValueRange)
	f("cancel deadline 2^63", withWord(cancelCall, 2, bitWord(63)), clob.ReasonValueRange)
	f("update deadline 2^100", withWord(updateCall, 5, bitWord(100)), clob.ReasonValueRange)
	f("transfer deadline 2^63", withWord(transferCall, 3, bitWord(63)), clob.ReasonValueRange)
	f("trigger size min int256", withWord(trigCall, 1, bitWord(255)), clob.ReasonValueRange)
	f("trigger deadline 2^63", withWord(trigCall, 6, bitWord(63)), clob.ReasonValueRange)
	f("trigger ttl 2^64", withWord(trigCall, 7, bitWord(64)), clob.ReasonValueRange)
	f("cancelTrigger deadline 2^63", withWord(cancelTrigCall, 2, bitWord(63)), clob.ReasonValueRange)
	f("updateTrigger size min int256", withWord(updateTrigCall, 2, bitWord(255)), clob.ReasonValueRange)
	f("updateTrigger deadline 2^64", withWord(updateTrigCall, 5, bitWord(64)), clob.ReasonValueRange)

	batchReasons(t, f, submitCall, cancelCall, depositCall, unknownCall)
	delegatedReasons(t, f, submitCall, cancelCall, depositCall, unknownCall)

	// ReasonWithdrawBatched: a Bridge withdraw inside a batch or a
	// delegation (on its own it is just not an orderbook function, above).
	withdraw := selectorCall("withdraw(address,address,uint256,uint128)", 4)
	f("withdraw in batch", AppendSubmitBatch(nil, [][]byte{submitCall, withdraw}), clob.ReasonWithdrawBatched)
	f("withdraw selector only in batch", AppendSubmitBatch(nil, [][]byte{withdraw[:4]}), clob.ReasonWithdrawBatched)
	sig := signDelegation(t, testMaster, testChainID, testSigner, sampleDeadline)
	f("delegated withdraw", AppendDelegated(nil, keyAddress(testMaster), sampleDeadline, sig, withdraw), clob.ReasonWithdrawBatched)
	f("delegated batch with withdraw", AppendDelegated(nil, keyAddress(testMaster), sampleDeadline, sig,
		AppendSubmitBatch(nil, [][]byte{withdraw})), clob.ReasonWithdrawBatched)
}

func allOnes() (w [wordSize]byte) {
	for i := range w {
		w[i] = 0xff
	}
	return w
}

func batchReasons(t *testing.T, f func(string, []byte, clob.Reason), submitCall, cancelCall, depositCall, unknownCall []byte) {
	t.Helper()
	one := [][]byte{submitCall}
	ok := AppendSubmitBatch(nil, [][]byte{submitCall, cancelCall})
	f("batch", ok, clob.OK)

	// ReasonBatchSize.
	f("batch of 0", AppendSubmitBatch(nil, nil), clob.ReasonBatchSize)
	f("batch of 65", AppendSubmitBatch(nil, repeat(cancelCall, clob.BatchIntentsMax+1)), clob.ReasonBatchSize)
	f("batch of 64", AppendSubmitBatch(nil, repeat(cancelCall, clob.BatchIntentsMax)), clob.OK)
	f("batch count 2^200", withWord(ok, 1, bitWord(200)), clob.ReasonBatchSize)
	f("batch count 2^64-1", withWord(ok, 1, u64Word(1<<64-1)), clob.ReasonBatchSize)

	// ReasonBatchNested.
	f("batch in batch", AppendSubmitBatch(nil, [][]byte{submitCall, AppendSubmitBatch(nil, one)}), clob.ReasonBatchNested)

	// ReasonDelegationNested.
	sig := signDelegation(t, testMaster, testChainID, testSigner, sampleDeadline)
	delegated := AppendDelegated(nil, keyAddress(testMaster), sampleDeadline, sig, submitCall)
	f("delegated in batch", AppendSubmitBatch(nil, [][]byte{delegated}), clob.ReasonDelegationNested)

	// ReasonBatchDeadline.
	later := sampleCancel(sampleDeadline + 500_000)
	f("two deadlines", AppendSubmitBatch(nil, [][]byte{submitCall, AppendCancel(nil, &later)}), clob.ReasonBatchDeadline)

	// Inner calls' own reasons.
	f("deposit in batch", AppendSubmitBatch(nil, [][]byte{submitCall, depositCall}), clob.OK)
	f("unknown function in batch", AppendSubmitBatch(nil, [][]byte{submitCall, unknownCall}), clob.ReasonUnknownFunction)
	f("orderType in batch", AppendSubmitBatch(nil, [][]byte{withWord(submitCall, 3, u64Word(7))}), clob.ReasonOrderType)
	f("range in batch", AppendSubmitBatch(nil, [][]byte{withWord(submitCall, 4, bitWord(63))}), clob.ReasonValueRange)
	f("short inner", AppendSubmitBatch(nil, [][]byte{submitCall[:len(submitCall)-1]}), clob.ReasonMalformed)
	f("inner of 3 bytes", AppendSubmitBatch(nil, [][]byte{submitCall[:3]}), clob.ReasonMalformed)
	f("empty inner", AppendSubmitBatch(nil, [][]byte{{}}), clob.ReasonMalformed)

	// ReasonMalformed: layout. Canonical words: 0 array offset, 1 count,
	// 2.. element offsets, then each element's length and bytes.
	f("no head", ok[:selectorSize], clob.ReasonMalformed)
	f("array offset past end", withWord(ok, 0, u64Word(uint64(len(ok)))), clob.ReasonMalformed)
	f("array offset 2^64", withWord(ok, 0, bitWord(64)), clob.ReasonMalformed)
	f("count past offsets", withWord(AppendSubmitBatch(nil, one), 1, u64Word(40)), clob.ReasonMalformed)
	f("element offset past end", withWord(ok, 2, u64Word(1<<20)), clob.ReasonMalformed)
	f("element offset 2^255", withWord(ok, 3, bitWord(255)), clob.ReasonMalformed)
	f("element length 2^64-1", withWord(ok, 4, u64Word(1<<64-1)), clob.ReasonMalformed)
	f("element length past end", withWord(ok, 4, u64Word(uint64(len(ok)))), clob.ReasonMalformed)
	f("element length 2^128", withWord(ok, 4, bitWord(128)), clob.ReasonMalformed)
	padded := AppendSubmitBatch(nil, [][]byte{cancelCall})
	// cancel's 100 bytes take 128: padding at the end of the calldata.
	bad := bytes.Clone(padded)
	bad[len(bad)-1] = 1
	f("nonzero padding", bad, clob.ReasonMalformed)
	f("missing padding", padded[:len(padded)-1], clob.ReasonMalformed)
	f("trailing bytes", append(bytes.Clone(padded), make([]byte, 32)...), clob.OK)
	// Non-canonical but in bounds: both offsets name the same element.
	alias := withWord(ok, 3, u64Word(2*wordSize))
	f("aliased elements", alias, clob.OK)
}

func delegatedReasons(t *testing.T, f func(string, []byte, clob.Reason), submitCall, cancelCall, depositCall, unknownCall []byte) {
	t.Helper()
	master := keyAddress(testMaster)
	const validUntil = sampleDeadline + 3_600_000_000
	sig := signDelegation(t, testMaster, testChainID, testSigner, validUntil)
	batch := AppendSubmitBatch(nil, [][]byte{submitCall, cancelCall})
	ok := AppendDelegated(nil, master, validUntil, sig, submitCall)
	f("delegated", ok, clob.OK)
	f("delegated batch", AppendDelegated(nil, master, validUntil, sig, batch), clob.OK)

	// ReasonDelegationNested.
	f("delegated in delegated", AppendDelegated(nil, master, validUntil, sig, ok), clob.ReasonDelegationNested)
	f("delegated in batch in delegated", AppendDelegated(nil, master, validUntil, sig,
		AppendSubmitBatch(nil, [][]byte{submitCall, ok})), clob.ReasonDelegationNested)

	// Inner reasons pass through.
	f("delegated deposit", AppendDelegated(nil, master, validUntil, sig, depositCall), clob.OK)
	f("delegated unknown function", AppendDelegated(nil, master, validUntil, sig, unknownCall), clob.ReasonUnknownFunction)
	f("delegated empty batch", AppendDelegated(nil, master, validUntil, sig, AppendSubmitBatch(nil, nil)), clob.ReasonBatchSize)
	f("delegated batch in batch", AppendDelegated(nil, master, validUntil, sig,
		AppendSubmitBatch(nil, [][]byte{batch})), clob.ReasonBatchNested)
	f("delegated empty inner", AppendDelegated(nil, master, validUntil, sig, nil), clob.ReasonMalformed)

	// ReasonDelegationExpired: the certificate must cover the deadline.
	early := signDelegation(t, testMaster, testChainID, testSigner, sampleDeadline-1)
	f("validUntil < deadline", AppendDelegated(nil, master, sampleDeadline-1, early, submitCall), clob.ReasonDelegationExpired)
	f("validUntil < batch deadline", AppendDelegated(nil, master, sampleDeadline-1, early, batch), clob.ReasonDelegationExpired)
	exact := signDelegation(t, testMaster, testChainID, testSigner, sampleDeadline)
	f("validUntil = deadline", AppendDelegated(nil, master, sampleDeadline, exact, submitCall), clob.OK)

	// ReasonDelegationSignature.
	other := keyAddress(testOther)
	f("wrong master", AppendDelegated(nil, other, validUntil, sig, submitCall), clob.ReasonDelegationSignature)
	f("other key", AppendDelegated(nil, master, validUntil,
		signDelegation(t, testOther, testChainID, testSigner, validUntil), submitCall), clob.ReasonDelegationSignature)
	f("other delegate", AppendDelegated(nil, master, validUntil,
		signDelegation(t, testMaster, testChainID, clob.Address{1}, validUntil), submitCall), clob.ReasonDelegationSignature)
	f("other chain", AppendDelegated(nil, master, validUntil,
		signDelegation(t, testMaster, 1, testSigner, validUntil), submitCall), clob.ReasonDelegationSignature)
	f("other validUntil", AppendDelegated(nil, master, validUntil+1, sig, submitCall), clob.ReasonDelegationSignature)
	f("signature 64 bytes", AppendDelegated(nil, master, validUntil, sig[:64], submitCall), clob.ReasonDelegationSignature)
	f("signature 66 bytes", AppendDelegated(nil, master, validUntil, append(bytes.Clone(sig), 0), submitCall), clob.ReasonDelegationSignature)
	f("signature empty", AppendDelegated(nil, master, validUntil, nil, submitCall), clob.ReasonDelegationSignature)
	f("v 27", AppendDelegated(nil, master, validUntil, withV(sig, sig[64]+27), submitCall), clob.OK)
	f("v 2", AppendDelegated(nil, master, validUntil, withV(sig, 2), submitCall), clob.ReasonDelegationSignature)
	f("v 29", AppendDelegated(nil, master, validUntil, withV(sig, 29), submitCall), clob.ReasonDelegationSignature)
	f("v flipped", AppendDelegated(nil, master, validUntil, withV(sig, sig[64]^1), submitCall), clob.ReasonDelegationSignature)
	f("high s", AppendDelegated(nil, master, validUntil, highS(sig), submitCall), clob.ReasonDelegationSignature)
	zeroR := bytes.Clone(sig)
	clear(zeroR[:32])
	f("r 0", AppendDelegated(nil, master, validUntil, zeroR, submitCall), clob.ReasonDelegationSignature)
	zeroS := bytes.Clone(sig)
	clear(zeroS[32:64])
	f("s 0", AppendDelegated(nil, master, validUntil, zeroS, submitCall), clob.ReasonDelegationSignature)
	bigR := bytes.Clone(sig)
	n := secp256k1N.Bytes32()
	copy(bigR[:32], n[:])
	f("r = n", AppendDelegated(nil, master, validUntil, bigR, submitCall), clob.ReasonDelegationSignature)
	garbage := bytes.Repeat([]byte{0x11}, 65)
	f("garbage signature", AppendDelegated(nil, master, validUntil, garbage, submitCall), clob.ReasonDelegationSignature)

	// ReasonMalformed: head and layout. Words: 0 master, 1 validUntil,
	// 2 signature offset, 3 inner offset.
	f("delegated no head", ok[:selectorSize+3*wordSize], clob.ReasonMalformed)
	f("master high byte", withWord(ok, 0, bitWord(200)), clob.ReasonMalformed)
	f("validUntil above uint64", withWord(ok, 1, bitWord(64)), clob.ReasonMalformed)
	f("signature offset past end", withWord(ok, 2, u64Word(uint64(len(ok)))), clob.ReasonMalformed)
	f("inner offset past end", withWord(ok, 3, u64Word(1<<40)), clob.ReasonMalformed)
	f("signature length 2^64-1", withWord(ok, 4, u64Word(1<<64-1)), clob.ReasonMalformed)
	badPad := bytes.Clone(ok)
	badPad[selectorSize+5*wordSize+65] = 1 // right after v
	f("signature padding", badPad, clob.ReasonMalformed)
	f("delegated truncated", ok[:len(ok)-1], clob.ReasonMalformed)
}

func repeat(call []byte, n int) [][]byte {
	inner := make([][]byte, n)
	for i := range inner {
		inner[i] = call
	}
	return inner
}

func withV(sig []byte, v byte) []byte {
	out := bytes.Clone(sig)
	out[64] = v
	return out
}

// highS returns the malleated twin (r, n-s, v^1) of sig: a valid ECDSA
// signature of the same digest by the same key, refused under EIP-2.
func highS(sig []byte) []byte {
	out := bytes.Clone(sig)
	var s uint256.Int
	s.SetBytes32(sig[32:64])
	s.Sub(secp256k1N, &s)
	w := s.Bytes32()
	copy(out[32:64], w[:])
	out[64] ^= 1
	return out
}

// TestHighSTwinIsValidECDSA makes sure the high-s case above is refused for
// being high-s, not for being a wrong signature.
func TestHighSTwinIsValidECDSA(t *testing.T) {
	digest := DelegationDigest(testChainID, testSigner, 5)
	sig := signDelegation(t, testMaster, testChainID, testSigner, 5)
	pub, err := crypto.Ecrecover(digest[:], highS(sig))
	if err != nil {
		t.Fatal(err)
	}
	if got := clob.Address(crypto.Keccak256(pub[1:])[12:]); got != keyAddress(testMaster) {
		t.Fatalf("twin recovers %x", got)
	}
	if verifyDelegation(highS(sig), testChainID, testSigner, 5, keyAddress(testMaster)) {
		t.Fatal("high-s twin accepted")
	}
}

// TestBatchSizeLimit pins BatchIntentsMax's boundary.
func TestBatchSizeLimit(t *testing.T) {
	cancel := sampleCancel(sampleDeadline)
	call := AppendCancel(nil, &cancel)
	var env clob.Envelope
	for n := 0; n <= clob.BatchIntentsMax+2; n++ {
		want := clob.OK
		if n == 0 || n > clob.BatchIntentsMax {
			want = clob.ReasonBatchSize
		}
		if got := Decode(AppendSubmitBatch(nil, repeat(call, n)), testChainID, testSigner, &env); got != want {
			t.Fatalf("batch of %d: %q, want %q", n, got, want)
		}
		if want == clob.OK && len(env.Intents) != n {
			t.Fatalf("batch of %d: %d intents", n, len(env.Intents))
		}
	}
}
