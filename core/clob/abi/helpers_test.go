package abi

import (
	"crypto/ecdsa"
	"math/rand/v2"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
)

const testChainID = 0x50d

var (
	// testSigner is the transaction signer: the delegate in delegated tests.
	testSigner = clob.Address{0xde, 0x1e, 0x9a, 0x7e}
	testMaster = mustKey("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	testOther  = mustKey("8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f")
)

func mustKey(hexKey string) *ecdsa.PrivateKey {
	k, err := crypto.HexToECDSA(hexKey)
	if err != nil {
		panic(err)
	}
	return k
}

func keyAddress(k *ecdsa.PrivateKey) clob.Address {
	return clob.Address(crypto.PubkeyToAddress(k.PublicKey))
}

// signDelegation signs the certificate with go-ethereum's crypto.Sign
// (v ∈ {0, 1}).
func signDelegation(t testing.TB, key *ecdsa.PrivateKey, chainID uint64, delegate clob.Address, validUntil uint64) []byte {
	t.Helper()
	digest := DelegationDigest(chainID, delegate, validUntil)
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// Intents that decode.

func sampleSubmit(deadline uint64) clob.Intent {
	in := clob.Intent{
		Kind:     clob.IntentSubmit,
		Book:     clob.Hash{31: 7},
		Side:     clob.Sell,
		Type:     clob.Limit,
		Flags:    clob.FlagIOC,
		Deadline: deadline,
		TTL:      60_000_000,
	}
	in.Size.SetUint64(5e18)
	in.Price.Mul(uint256.NewInt(140), uint256.NewInt(1e18))
	return in
}

func sampleCancel(deadline uint64) clob.Intent {
	return clob.Intent{
		Kind:     clob.IntentCancel,
		Book:     clob.Hash{31: 7},
		OrderID:  clob.Hash{0: 0xab, 31: 0xcd},
		Deadline: deadline,
	}
}

func sampleUpdate(deadline uint64) clob.Intent {
	in := clob.Intent{
		Kind:     clob.IntentUpdate,
		Book:     clob.Hash{31: 7},
		OrderID:  clob.Hash{0: 0x12},
		Token:    clob.Address{19: 0x33},
		Deadline: deadline,
	}
	in.Size.SetUint64(3e18)
	in.Price.Mul(uint256.NewInt(150), uint256.NewInt(1e18))
	return in
}

func sampleTransfer(deadline uint64) clob.Intent {
	in := clob.Intent{
		Kind:     clob.IntentTransfer,
		Token:    clob.Address{19: 0x44},
		To:       clob.Address{0: 0x55, 19: 0x66},
		Deadline: deadline,
	}
	in.Amount.SetUint64(1e18)
	return in
}

func sampleSubmitTrigger(deadline uint64) clob.Intent {
	in := clob.Intent{
		Kind:        clob.IntentSubmitTrigger,
		Book:        clob.Hash{31: 8},
		Side:        clob.Sell,
		Flags:       clob.FlagReduceOnly,
		Deadline:    deadline,
		TTL:         3_600_000_000,
		TriggerType: clob.TriggerStopLoss,
		Grouping:    1,
	}
	in.Size.SetUint64(2e18)
	in.TriggerPrice.Mul(uint256.NewInt(2900), uint256.NewInt(1e18))
	return in
}

func sampleCancelTrigger(deadline uint64) clob.Intent {
	return clob.Intent{
		Kind:     clob.IntentCancelTrigger,
		Book:     clob.Hash{31: 8},
		OrderID:  clob.Hash{0: 0x77, 31: 0x01},
		Deadline: deadline,
	}
}

func sampleUpdateTrigger(deadline uint64) clob.Intent {
	in := clob.Intent{
		Kind:     clob.IntentUpdateTrigger,
		Book:     clob.Hash{31: 8},
		OrderID:  clob.Hash{0: 0x77, 31: 0x01},
		Side:     clob.Buy,
		Deadline: deadline,
	}
	in.Size.SetUint64(1e18)
	in.Price.Mul(uint256.NewInt(3100), uint256.NewInt(1e18))
	in.TriggerPrice.Mul(uint256.NewInt(3050), uint256.NewInt(1e18))
	return in
}

const sampleDeadline = 1_700_000_000_500_000

// randomIntent returns an intent Decode accepts, drawn from rng.
func randomIntent(rng *rand.Rand, deadline uint64) clob.Intent {
	in := clob.Intent{Kind: clob.IntentKind(1 + rng.IntN(int(clob.IntentUpdateTrigger))), Deadline: deadline}
	switch in.Kind {
	case clob.IntentSubmit:
		in.Book = randomHash(rng)
		randomSize(rng, &in)
		in.Price = randomUint256(rng)
		in.Type = clob.OrderType(rng.IntN(2))
		in.Flags = uint8(rng.Uint32())
		in.TTL = rng.Uint64() >> 1
	case clob.IntentCancel:
		in.Book = randomHash(rng)
		in.OrderID = randomHash(rng)
	case clob.IntentUpdate:
		in.Book = randomHash(rng)
		in.OrderID = randomHash(rng)
		in.Size = randomUint256(rng)
		in.Price = randomUint256(rng)
		in.Token = randomAddress(rng)
	case clob.IntentTransfer:
		in.Token = randomAddress(rng)
		in.To = randomAddress(rng)
		in.Amount = randomUint256(rng)
	case clob.IntentSubmitTrigger:
		in.Book = randomHash(rng)
		randomSize(rng, &in)
		in.Price = randomUint256(rng)
		in.TriggerPrice = randomUint256(rng)
		in.TriggerType, in.Grouping = uint8(rng.Uint32()), uint8(rng.Uint32())
		in.TTL = rng.Uint64() >> 1
		in.Flags = uint8(rng.IntN(4)) // REDUCE_ONLY, IOC: the two bools
	case clob.IntentCancelTrigger:
		in.Book = randomHash(rng)
		in.OrderID = randomHash(rng)
	case clob.IntentUpdateTrigger:
		in.Book = randomHash(rng)
		in.OrderID = randomHash(rng)
		randomSize(rng, &in)
		in.Price = randomUint256(rng)
		in.TriggerPrice = randomUint256(rng)
	}
	return in
}

// randomSize sets a signed size that fits int256 (zero is a buy).
func randomSize(rng *rand.Rand, in *clob.Intent) {
	in.Size = randomUint256(rng)
	in.Size[3] &^= 1 << 63
	if !in.Size.IsZero() && rng.IntN(2) == 0 {
		in.Side = clob.Sell
	}
}

// randomUint256 favours small values and word boundaries.
func randomUint256(rng *rand.Rand) uint256.Int {
	var v uint256.Int
	switch rng.IntN(4) {
	case 0:
		v.SetUint64(rng.Uint64N(1_000_000) * 1e12)
	case 1:
		v.SetAllOne()
		v.Rsh(&v, uint(rng.IntN(256)))
	default:
		for i := range v {
			v[i] = rng.Uint64()
		}
	}
	return v
}

func randomHash(rng *rand.Rand) (h clob.Hash) {
	for i := range h {
		h[i] = byte(rng.Uint32())
	}
	return h
}

func randomAddress(rng *rand.Rand) (a clob.Address) {
	for i := range a {
		a[i] = byte(rng.Uint32())
	}
	return a
}

// appendIntents appends the calls of intents as the inner list of a batch.
func innerCalls(intents []clob.Intent) [][]byte {
	inner := make([][]byte, len(intents))
	for i := range intents {
		inner[i] = AppendIntent(nil, &intents[i])
	}
	return inner
}

// reencode encodes a decoded envelope again: one intent as a single call,
// more as a batch, wrapped in delegated() with the signature taken from the
// original calldata.
func reencode(t testing.TB, env *clob.Envelope, original []byte) []byte {
	t.Helper()
	var call []byte
	if len(env.Intents) == 1 {
		call = AppendIntent(nil, &env.Intents[0])
	} else {
		call = AppendSubmitBatch(nil, innerCalls(env.Intents))
	}
	if !env.Delegated {
		return call
	}
	args := original[selectorSize:]
	sig, r := readBytes(args, word(args, 2))
	if r != clob.OK {
		t.Fatalf("delegated envelope whose signature does not decode: %v", r)
	}
	return AppendDelegated(nil, env.Master, env.ValidUntil, sig, call)
}

func equalEnvelopes(a, b *clob.Envelope) bool {
	if a.Delegated != b.Delegated || a.Master != b.Master || a.ValidUntil != b.ValidUntil {
		return false
	}
	if len(a.Intents) != len(b.Intents) {
		return false
	}
	for i := range a.Intents {
		if a.Intents[i] != b.Intents[i] {
			return false
		}
	}
	return true
}

func isReset(env *clob.Envelope) bool {
	return len(env.Intents) == 0 && !env.Delegated && env.Master == clob.Address{} && env.ValidUntil == 0
}

// sampleCalls returns valid calldata of every shape, keyed by name.
func sampleCalls(t testing.TB) []namedCall {
	t.Helper()
	submit := sampleSubmit(sampleDeadline)
	cancel := sampleCancel(sampleDeadline)
	update := sampleUpdate(sampleDeadline)
	transfer := sampleTransfer(sampleDeadline)
	legacy := submit
	legacy.Flags = clob.FlagReduceOnly | clob.FlagIOC
	trig := sampleSubmitTrigger(sampleDeadline)
	cancelTrig := sampleCancelTrigger(sampleDeadline)
	updateTrig := sampleUpdateTrigger(sampleDeadline)
	mixed := []clob.Intent{submit, cancel, update, transfer, trig, cancelTrig, updateTrig}
	full := make([]clob.Intent, clob.BatchIntentsMax)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range full {
		full[i] = randomIntent(rng, sampleDeadline)
	}
	master := keyAddress(testMaster)
	validUntil := uint64(sampleDeadline + 7*24*3600*1_000_000)
	sig := signDelegation(t, testMaster, testChainID, testSigner, validUntil)
	batch := AppendSubmitBatch(nil, innerCalls(mixed))
	return []namedCall{
		{"submitOrder", AppendSubmitOrder(nil, &submit)},
		{"submitOrderDeprecated", AppendSubmitOrderDeprecated(nil, &legacy)},
		{"cancel", AppendCancel(nil, &cancel)},
		{"update", AppendUpdate(nil, &update)},
		{"transfer", AppendTransfer(nil, &transfer)},
		{"deposit", AppendDeposit(nil, &transfer)},
		{"submitTrigger", AppendSubmitTrigger(nil, &trig)},
		{"cancelTrigger", AppendCancelTrigger(nil, &cancelTrig)},
		{"updateTrigger", AppendUpdateTrigger(nil, &updateTrig)},
		{"delegatedTrigger", AppendDelegated(nil, master, validUntil, sig, AppendSubmitTrigger(nil, &trig))},
		{"batch1", AppendSubmitBatch(nil, innerCalls(mixed[:1]))},
		{"batch4", batch},
		{"batch64", AppendSubmitBatch(nil, innerCalls(full))},
		{"delegatedSubmit", AppendDelegated(nil, master, validUntil, sig, AppendSubmitOrder(nil, &submit))},
		{"delegatedBatch", AppendDelegated(nil, master, validUntil, sig, batch)},
	}
}

type namedCall struct {
	name string
	data []byte
}
