package abi

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	gethabi "github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
)

// orderbookABI is OrderbookJSON as go-ethereum's ABI parser reads it: the
// one interface definition clients, these tests and json_test.go share.
var orderbookABI = func() gethabi.ABI {
	a, err := gethabi.JSON(strings.NewReader(OrderbookJSON))
	if err != nil {
		panic(err)
	}
	return a
}()

// gethPack packs the call whose canonical signature is sig with go-ethereum.
func gethPack(t testing.TB, sig string, args ...any) []byte {
	t.Helper()
	for name, m := range orderbookABI.Methods {
		if m.Sig == sig {
			data, err := orderbookABI.Pack(name, args...)
			if err != nil {
				t.Fatalf("geth pack %s: %v", sig, err)
			}
			return data
		}
	}
	t.Fatalf("no method %s", sig)
	return nil
}

func big256(v *uint256.Int) *big.Int { return v.ToBig() }

func bigU64(v uint64) *big.Int { return new(big.Int).SetUint64(v) }

func signedSize(in *clob.Intent) *big.Int {
	b := in.Size.ToBig()
	if in.Side == clob.Sell {
		b.Neg(b)
	}
	return b
}

// gethPackIntent packs in with go-ethereum; deprecated picks the bool,bool
// submitOrder form.
func gethPackIntent(t testing.TB, in *clob.Intent, deprecated bool) []byte {
	t.Helper()
	switch in.Kind {
	case clob.IntentSubmit:
		if deprecated {
			return gethPack(t, "submitOrder(bytes32,int256,uint256,uint8,uint128,uint128,bool,bool)",
				[32]byte(in.Book), signedSize(in), big256(&in.Price), uint8(in.Type), bigU64(in.Deadline),
				bigU64(in.TTL), in.Flags&clob.FlagReduceOnly != 0, in.Flags&clob.FlagIOC != 0)
		}
		return gethPack(t, "submitOrder(bytes32,int256,uint256,uint8,uint128,uint128,uint8)",
			[32]byte(in.Book), signedSize(in), big256(&in.Price), uint8(in.Type), bigU64(in.Deadline),
			bigU64(in.TTL), in.Flags)
	case clob.IntentCancel:
		return gethPack(t, "cancel(bytes32,bytes32,uint128)",
			[32]byte(in.Book), [32]byte(in.OrderID), bigU64(in.Deadline))
	case clob.IntentUpdate:
		return gethPack(t, "update(bytes32,bytes32,uint256,uint256,address,uint128)",
			[32]byte(in.Book), [32]byte(in.OrderID), big256(&in.Size), big256(&in.Price),
			common.Address(in.Token), bigU64(in.Deadline))
	case clob.IntentTransfer:
		return gethPack(t, "transfer(address,address,uint256,uint128)",
			common.Address(in.Token), common.Address(in.To), big256(&in.Amount), bigU64(in.Deadline))
	case clob.IntentSubmitTrigger:
		return gethPack(t, "submitTrigger(bytes32,int256,uint256,uint256,uint8,uint8,uint128,uint128,bool,bool)",
			[32]byte(in.Book), signedSize(in), big256(&in.Price), big256(&in.TriggerPrice), in.TriggerType, in.Grouping,
			bigU64(in.Deadline), bigU64(in.TTL), in.Flags&clob.FlagReduceOnly != 0, in.Flags&clob.FlagIOC != 0)
	case clob.IntentCancelTrigger:
		return gethPack(t, "cancelTrigger(bytes32,bytes32,uint128)",
			[32]byte(in.Book), [32]byte(in.OrderID), bigU64(in.Deadline))
	case clob.IntentUpdateTrigger:
		return gethPack(t, "updateTrigger(bytes32,bytes32,int256,uint256,uint256,uint128)",
			[32]byte(in.Book), [32]byte(in.OrderID), signedSize(in), big256(&in.Price), big256(&in.TriggerPrice),
			bigU64(in.Deadline))
	}
	t.Fatalf("kind %d", in.Kind)
	return nil
}

func newRand(t testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, 0x50d))
}

// checkDecode decodes data and compares with want; it also checks that the
// encoding our encoders produce for want equals data.
func checkDecode(t *testing.T, data []byte, want *clob.Envelope, ours []byte) {
	t.Helper()
	var env clob.Envelope
	if r := Decode(data, testChainID, testSigner, &env); r != clob.OK {
		t.Fatalf("Decode(%x) = %q", data, r)
	}
	if !equalEnvelopes(&env, want) {
		t.Fatalf("Decode(%x):\n got %+v\nwant %+v", data, env, *want)
	}
	if !bytes.Equal(ours, data) {
		t.Fatalf("our encoding differs from abi.Pack:\n ours %x\n geth %x", ours, data)
	}
}

func TestDifferentialSingle(t *testing.T) {
	rng := newRand(t)
	for range 4000 {
		in := randomIntent(rng, rng.Uint64()>>1)
		data := gethPackIntent(t, &in, false)
		checkDecode(t, data, &clob.Envelope{Intents: []clob.Intent{in}}, AppendIntent(nil, &in))
	}
}

func TestDifferentialDeprecatedSubmit(t *testing.T) {
	rng := newRand(t)
	for range 1000 {
		in := randomIntent(rng, rng.Uint64()>>1)
		if in.Kind != clob.IntentSubmit {
			continue
		}
		in.Flags &= clob.FlagReduceOnly | clob.FlagIOC
		data := gethPackIntent(t, &in, true)
		checkDecode(t, data, &clob.Envelope{Intents: []clob.Intent{in}}, AppendSubmitOrderDeprecated(nil, &in))
	}
}

// TestDifferentialExtremes packs the edge values of every field.
func TestDifferentialExtremes(t *testing.T) {
	var maxInt255, max256 uint256.Int
	max256.SetAllOne()
	maxInt255.Rsh(&max256, 1)
	f := func(side clob.Side, size *uint256.Int, deadline, ttl uint64) {
		t.Helper()
		in := sampleSubmit(deadline)
		in.Side, in.Size, in.TTL, in.Price = side, *size, ttl, max256
		data := gethPackIntent(t, &in, false)
		checkDecode(t, data, &clob.Envelope{Intents: []clob.Intent{in}}, AppendSubmitOrder(nil, &in))
	}
	f(clob.Buy, &maxInt255, int63Max, int63Max)
	f(clob.Sell, &maxInt255, 0, 0)
	f(clob.Sell, uint256.NewInt(1), 1, 1)
	f(clob.Buy, uint256.NewInt(0), 0, 0)
}

func randomBatch(rng *rand.Rand, n int) []clob.Intent {
	deadline := rng.Uint64() >> 1
	intents := make([]clob.Intent, n)
	for i := range intents {
		intents[i] = randomIntent(rng, deadline)
	}
	return intents
}

func gethPackBatch(t testing.TB, intents []clob.Intent, deprecated bool) ([]byte, [][]byte) {
	inner := make([][]byte, len(intents))
	for i := range intents {
		inner[i] = gethPackIntent(t, &intents[i], deprecated && intents[i].Kind == clob.IntentSubmit)
	}
	return gethPack(t, "submitBatch(bytes[])", inner), inner
}

func TestDifferentialBatch(t *testing.T) {
	rng := newRand(t)
	for _, n := range []int{1, 2, 3, 17, clob.BatchIntentsMax - 1, clob.BatchIntentsMax} {
		for range 20 {
			intents := randomBatch(rng, n)
			data, inner := gethPackBatch(t, intents, false)
			checkDecode(t, data, &clob.Envelope{Intents: intents}, AppendSubmitBatch(nil, inner))
			checkDecode(t, data, &clob.Envelope{Intents: intents}, AppendSubmitBatch(nil, innerCalls(intents)))
		}
	}
}

// TestDifferentialBatchDeprecated puts deprecated submitOrders in a batch.
func TestDifferentialBatchDeprecated(t *testing.T) {
	rng := newRand(t)
	intents := randomBatch(rng, clob.BatchIntentsMax)
	for i := range intents {
		intents[i].Flags &= clob.FlagReduceOnly | clob.FlagIOC
	}
	data, inner := gethPackBatch(t, intents, true)
	checkDecode(t, data, &clob.Envelope{Intents: intents}, AppendSubmitBatch(nil, inner))
}

func TestDifferentialDelegated(t *testing.T) {
	rng := newRand(t)
	master := keyAddress(testMaster)
	for _, n := range []int{1, 1, 5, clob.BatchIntentsMax} {
		intents := randomBatch(rng, n)
		validUntil := intents[0].Deadline + rng.Uint64N(1<<40)
		sig := signDelegation(t, testMaster, testChainID, testSigner, validUntil)
		var inner []byte
		if n == 1 && rng.IntN(2) == 0 {
			inner = gethPackIntent(t, &intents[0], false)
		} else {
			inner, _ = gethPackBatch(t, intents, false)
		}
		want := &clob.Envelope{Intents: intents, Delegated: true, Master: master, ValidUntil: validUntil}
		for _, v := range []byte{0, 27} {
			s := bytes.Clone(sig)
			s[64] += v
			data := gethPack(t, "delegated(address,uint64,bytes,bytes)", common.Address(master), validUntil, s, inner)
			checkDecode(t, data, want, AppendDelegated(nil, master, validUntil, s, inner))
		}
	}
}

// TestDelegationDigestEIP712 checks DelegationDigest against go-ethereum's
// EIP-712 implementation, and against a fixed vector.
func TestDelegationDigestEIP712(t *testing.T) {
	f := func(chainID uint64, delegate clob.Address, validUntil uint64) {
		t.Helper()
		td := apitypes.TypedData{
			Types: apitypes.Types{
				"EIP712Domain": {
					{Name: "name", Type: "string"},
					{Name: "version", Type: "string"},
					{Name: "chainId", Type: "uint256"},
				},
				"DelegationAuth": {
					{Name: "delegate", Type: "address"},
					{Name: "validUntil", Type: "uint64"},
				},
			},
			PrimaryType: "DelegationAuth",
			Domain: apitypes.TypedDataDomain{
				Name:    "pod delegation",
				Version: "1",
				ChainId: (*math.HexOrDecimal256)(new(big.Int).SetUint64(chainID)),
			},
			Message: apitypes.TypedDataMessage{
				"delegate":   common.Address(delegate).Hex(),
				"validUntil": fmt.Sprint(validUntil),
			},
		}
		want, _, err := apitypes.TypedDataAndHash(td)
		if err != nil {
			t.Fatal(err)
		}
		got := DelegationDigest(chainID, delegate, validUntil)
		if !bytes.Equal(got[:], want) {
			t.Fatalf("DelegationDigest(%d, %x, %d) = %x, EIP-712 %x", chainID, delegate, validUntil, got, want)
		}
	}
	rng := newRand(t)
	f(testChainID, testSigner, 0)
	f(testChainID, testSigner, 1<<64-1)
	f(1, clob.Address{}, 1_700_000_000_000_000)
	f(1<<64-1, clob.Address{0xff, 19: 0xff}, 42)
	for range 100 {
		f(rng.Uint64(), randomAddress(rng), rng.Uint64())
	}
	// A fixed vector pins the digest across go-ethereum upgrades.
	got := DelegationDigest(testChainID, clob.Address{19: 1}, 1_000_000)
	if h := hex.EncodeToString(got[:]); h != delegationDigestVector {
		t.Fatalf("vector: %s", h)
	}
}

// TestDelegationRecoversMaster signs over our digest with crypto.Sign and
// checks the certificate verifies for the master only.
func TestDelegationRecoversMaster(t *testing.T) {
	sig := signDelegation(t, testMaster, testChainID, testSigner, 99)
	if !verifyDelegation(sig, testChainID, testSigner, 99, keyAddress(testMaster)) {
		t.Fatal("master's certificate refused")
	}
	if verifyDelegation(sig, testChainID, testSigner, 99, keyAddress(testOther)) {
		t.Fatal("certificate accepted for another master")
	}
}

const delegationDigestVector = "11b549e863f77d8609e7bf9bec07fec2189407f130d20f05f6c5e25da2b050ca"
