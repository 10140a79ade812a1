package ethtx

import (
	"crypto/ecdsa"
	"errors"
	"math/big"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

var (
	curveN     = crypto.S256().Params().N
	curveHalfN = new(big.Int).Rsh(curveN, 1)
)

// testRand returns a seeded generator; the seed is printed if t fails and
// can be replayed with ETHTX_SEED.
func testRand(t testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ETHTX_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay with ETHTX_SEED=%d", seed)
		}
	})
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// refSender is the reference: go-ethereum with the transaction's own chain
// id (its ChainId, nil when zero).
func refSender(tx *types.Transaction) (common.Address, error) {
	var id *big.Int
	if tx.ChainId().Sign() != 0 {
		id = tx.ChainId()
	}
	return types.Sender(types.LatestSignerForChainID(id), tx)
}

// agree checks that Sender and the reference both fail or give the same
// address, and that both decoders agree on raw.
func agree(t *testing.T, what string, tx *types.Transaction) {
	t.Helper()
	got, err := Sender(tx)
	want, wantErr := refSender(tx)
	if (err == nil) != (wantErr == nil) || got != want {
		t.Fatalf("%s: Sender = %x, %v; go-ethereum = %x, %v (type %d, v=%v r=%x s=%x)",
			what, got, err, want, wantErr, tx.Type(), sigV(tx), sigR(tx), sigS(tx))
	}
	if err != nil && !errors.Is(err, ErrInvalidSignature) {
		t.Fatalf("%s: error %v is not ErrInvalidSignature", what, err)
	}
}

func sigV(tx *types.Transaction) *big.Int { v, _, _ := tx.RawSignatureValues(); return v }
func sigR(tx *types.Transaction) *big.Int { _, r, _ := tx.RawSignatureValues(); return r }
func sigS(tx *types.Transaction) *big.Int { _, _, s := tx.RawSignatureValues(); return s }

func randKey(rng *rand.Rand) *ecdsa.PrivateKey {
	for {
		var b [32]byte
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if k, err := crypto.ToECDSA(b[:]); err == nil {
			return k
		}
	}
}

func randBig(rng *rand.Rand, bitsMax int) *big.Int {
	n := rng.IntN(bitsMax + 1)
	b := make([]byte, (n+7)/8)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return new(big.Int).Rsh(new(big.Int).SetBytes(b), uint(len(b)*8-n))
}

func randUint(rng *rand.Rand) uint64 {
	switch rng.IntN(4) {
	case 0:
		return uint64(rng.IntN(0x81))
	case 1:
		return ^uint64(0) - uint64(rng.IntN(2))
	default:
		return rng.Uint64() >> rng.IntN(64)
	}
}

func randBytes(rng *rand.Rand) []byte {
	var n int
	switch rng.IntN(5) {
	case 0:
		n = rng.IntN(2)
	case 1:
		n = 54 + rng.IntN(4)
	case 2:
		n = 250 + rng.IntN(20)
	default:
		n = rng.IntN(600)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func randAddr(rng *rand.Rand) *common.Address {
	if rng.IntN(8) == 0 {
		return nil
	}
	var a common.Address
	for i := range a {
		a[i] = byte(rng.Uint32())
	}
	return &a
}

func randAccessList(rng *rand.Rand) types.AccessList {
	al := make(types.AccessList, rng.IntN(4))
	for i := range al {
		al[i].Address = *new(common.Address)
		if a := randAddr(rng); a != nil {
			al[i].Address = *a
		}
		al[i].StorageKeys = make([]common.Hash, rng.IntN(4))
		for j := range al[i].StorageKeys {
			al[i].StorageKeys[j][rng.IntN(32)] = byte(rng.Uint32())
		}
	}
	return al
}

// testChainIDs covers the node's chain, mainnet, and sizes that exercise
// every RLP integer width, including ids above 2^64.
var testChainIDs = []*big.Int{
	big.NewInt(0x50d), big.NewInt(1), big.NewInt(2), big.NewInt(127), big.NewInt(128),
	big.NewInt(1 << 40), new(big.Int).SetUint64(1<<63 + 5), new(big.Int).Lsh(big.NewInt(3), 70),
}

// randSignedTx returns a random transaction signed with a random key, and
// the signer that produced it.
func randSignedTx(t *testing.T, rng *rand.Rand) *types.Transaction {
	t.Helper()
	id := testChainIDs[rng.IntN(len(testChainIDs))]
	var inner types.TxData
	signer := types.LatestSignerForChainID(id)
	switch rng.IntN(4) {
	case 0:
		inner = &types.LegacyTx{Nonce: randUint(rng), GasPrice: randBig(rng, 300), Gas: randUint(rng),
			To: randAddr(rng), Value: randBig(rng, 300), Data: randBytes(rng)}
		signer = types.HomesteadSigner{}
	case 1:
		inner = &types.LegacyTx{Nonce: randUint(rng), GasPrice: randBig(rng, 300), Gas: randUint(rng),
			To: randAddr(rng), Value: randBig(rng, 300), Data: randBytes(rng)}
	case 2:
		inner = &types.AccessListTx{ChainID: id, Nonce: randUint(rng), GasPrice: randBig(rng, 256),
			Gas: randUint(rng), To: randAddr(rng), Value: randBig(rng, 256), Data: randBytes(rng),
			AccessList: randAccessList(rng)}
	default:
		inner = &types.DynamicFeeTx{ChainID: id, Nonce: randUint(rng), GasTipCap: randBig(rng, 256),
			GasFeeCap: randBig(rng, 256), Gas: randUint(rng), To: randAddr(rng), Value: randBig(rng, 256),
			Data: randBytes(rng), AccessList: randAccessList(rng)}
	}
	tx, err := types.SignTx(types.NewTx(inner), signer, randKey(rng))
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// withSig returns a copy of tx with the raw signature values replaced.
func withSig(tx *types.Transaction, v, r, s *big.Int) *types.Transaction {
	switch tx.Type() {
	case types.LegacyTxType:
		return types.NewTx(&types.LegacyTx{Nonce: tx.Nonce(), GasPrice: tx.GasPrice(), Gas: tx.Gas(),
			To: tx.To(), Value: tx.Value(), Data: tx.Data(), V: v, R: r, S: s})
	case types.AccessListTxType:
		return types.NewTx(&types.AccessListTx{ChainID: tx.ChainId(), Nonce: tx.Nonce(),
			GasPrice: tx.GasPrice(), Gas: tx.Gas(), To: tx.To(), Value: tx.Value(), Data: tx.Data(),
			AccessList: tx.AccessList(), V: v, R: r, S: s})
	default:
		return types.NewTx(&types.DynamicFeeTx{ChainID: tx.ChainId(), Nonce: tx.Nonce(),
			GasTipCap: tx.GasTipCap(), GasFeeCap: tx.GasFeeCap(), Gas: tx.Gas(), To: tx.To(),
			Value: tx.Value(), Data: tx.Data(), AccessList: tx.AccessList(), V: v, R: r, S: s})
	}
}

func senderCases(t *testing.T) int {
	if testing.Short() {
		return 300
	}
	return 2500
}

func TestSenderMatchesGoEthereum(t *testing.T) {
	rng := testRand(t)
	for i := range senderCases(t) {
		tx := randSignedTx(t, rng)
		raw, err := tx.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		dec, err := Decode(raw)
		if err != nil {
			t.Fatalf("case %d: Decode: %v", i, err)
		}
		want, err := refSender(tx)
		if err != nil {
			t.Fatalf("case %d: go-ethereum rejects its own signature: %v", i, err)
		}
		got, err := Sender(dec)
		if err != nil || got != want {
			t.Fatalf("case %d (type %d, chain %v): Sender = %x, %v; want %x", i, tx.Type(),
				tx.ChainId(), got, err, want)
		}
		if id := ChainID(dec); uint64OrMax(tx.ChainId()) != id {
			t.Fatalf("case %d: ChainID = %d, want %v", i, id, tx.ChainId())
		}
		checkMalformed(t, rng, tx)
		flipBit(t, rng, raw)
	}
}

// checkMalformed runs one random signature mutation against both sides.
func checkMalformed(t *testing.T, rng *rand.Rand, tx *types.Transaction) {
	t.Helper()
	v, r, s := tx.RawSignatureValues()
	one := big.NewInt(1)
	mutations := []struct {
		name    string
		v, r, s *big.Int
	}{
		{"high s", v, r, new(big.Int).Sub(curveN, s)},
		{"s = n/2+1", v, r, new(big.Int).Add(curveHalfN, one)},
		{"s = 0", v, r, new(big.Int)},
		{"r = 0", v, new(big.Int), s},
		{"r = n", v, curveN, s},
		{"r = n+1", v, new(big.Int).Add(curveN, one), s},
		{"s = n", v, r, curveN},
		{"r = 2^256-1", v, new(big.Int).Sub(new(big.Int).Lsh(one, 256), one), s},
		{"r = 1", v, one, s},
		{"s = 1", v, r, one},
		{"v+2", new(big.Int).Add(v, big.NewInt(2)), r, s},
		{"v-2", new(big.Int).Abs(new(big.Int).Sub(v, big.NewInt(2))), r, s},
		{"v = 0", new(big.Int), r, s},
		{"v = 1", one, r, s},
		{"v = 2", big.NewInt(2), r, s},
		{"v = 3", big.NewInt(3), r, s},
		{"v = 27", big.NewInt(27), r, s},
		{"v = 28", big.NewInt(28), r, s},
		{"v = 35", big.NewInt(35), r, s},
		{"v = 36", big.NewInt(36), r, s},
		{"v = 37", big.NewInt(37), r, s},
		{"v flipped parity", new(big.Int).Xor(v, one), r, s},
		{"v huge", new(big.Int).Lsh(one, 200), r, s},
		{"r not on curve", v, offCurveR(rng), s},
		{"r random", v, randBig(rng, 256), s},
		{"s random", v, r, randBig(rng, 256)},
	}
	m := mutations[rng.IntN(len(mutations))]
	agree(t, m.name, withSig(tx, m.v, m.r, m.s))
	agree(t, "infinity", infinitySig(t, rng, tx))
}

// offCurveR returns an r < n for which r^3+7 has no square root mod p, so
// no signature with this r can be recovered.
func offCurveR(rng *rand.Rand) *big.Int {
	p := crypto.S256().Params().P
	for {
		r := new(big.Int).Mod(randBig(rng, 256), curveN)
		y2 := new(big.Int).Exp(r, big.NewInt(3), p)
		y2.Add(y2, big.NewInt(7))
		if r.Sign() != 0 && big.Jacobi(y2.Mod(y2, p), p) == -1 {
			return r
		}
	}
}

// infinitySig signs tx so that the recovered key is the point at infinity:
// with R = kG and s = z/k, s*R - z*G = 0.
func infinitySig(t *testing.T, rng *rand.Rand, tx *types.Transaction) *types.Transaction {
	t.Helper()
	var id *big.Int
	if tx.ChainId().Sign() != 0 {
		id = tx.ChainId()
	}
	z := new(big.Int).SetBytes(types.LatestSignerForChainID(id).Hash(tx).Bytes())
	k := randKey(rng)
	rx, ry := k.PublicKey.X, k.PublicKey.Y
	s := new(big.Int).ModInverse(k.D, curveN)
	s.Mul(s, z).Mod(s, curveN)
	parity := int64(ry.Bit(0))
	if s.Cmp(curveHalfN) > 0 {
		s.Sub(curveN, s)
		parity ^= 1
	}
	v, _, _ := tx.RawSignatureValues()
	switch {
	case tx.Type() != types.LegacyTxType:
		v = big.NewInt(parity)
	case tx.Protected():
		v = new(big.Int).Add(new(big.Int).Lsh(id, 1), big.NewInt(35+parity))
	default:
		v = big.NewInt(27 + parity)
	}
	return withSig(tx, v, new(big.Int).Mod(rx, curveN), s)
}

// flipBit flips one random bit of raw and compares decoding and recovery.
func flipBit(t *testing.T, rng *rand.Rand, raw []byte) {
	t.Helper()
	b := append([]byte(nil), raw...)
	i := rng.IntN(len(b) * 8)
	b[i/8] ^= 1 << (i % 8)
	compareRaw(t, b)
}

// compareRaw checks Decode against go-ethereum's UnmarshalBinary (with our
// type gate) and, when both decode, Sender against the reference.
func compareRaw(t *testing.T, raw []byte) {
	t.Helper()
	got, err := Decode(raw)
	var want types.Transaction
	wantErr := want.UnmarshalBinary(raw)
	if wantErr == nil && want.Type() != types.LegacyTxType &&
		want.Type() != types.AccessListTxType && want.Type() != types.DynamicFeeTxType {
		wantErr = ErrUnsupportedType
	}
	if wantErr == nil && len(raw) > RawSizeMax {
		wantErr = ErrOversized
	}
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("Decode(%x) error = %v, go-ethereum: %v", raw, err, wantErr)
	}
	if err != nil {
		return
	}
	if got.Hash() != want.Hash() {
		t.Fatalf("Decode(%x) hash %x, go-ethereum %x", raw, got.Hash(), want.Hash())
	}
	agree(t, "raw", got)
}

func TestChainID(t *testing.T) {
	f := func(tx *types.Transaction, want uint64) {
		t.Helper()
		if got := ChainID(tx); got != want {
			t.Fatalf("ChainID(type %d, v=%v) = %d, want %d", tx.Type(), sigV(tx), got, want)
		}
	}
	legacy := func(v *big.Int) *types.Transaction {
		return types.NewTx(&types.LegacyTx{V: v, R: big.NewInt(1), S: big.NewInt(1)})
	}
	f(legacy(big.NewInt(27)), 0)
	f(legacy(big.NewInt(28)), 0)
	f(legacy(big.NewInt(0)), 0)
	f(legacy(big.NewInt(34)), 0)
	f(legacy(big.NewInt(35)), 0)
	f(legacy(big.NewInt(37)), 1)
	f(legacy(big.NewInt(35+2*0x50d+1)), 0x50d)
	f(legacy(new(big.Int).SetUint64(^uint64(0))), (^uint64(0)-35)>>1)
	maxV := new(big.Int).Add(new(big.Int).Lsh(new(big.Int).SetUint64(^uint64(0)), 1), big.NewInt(36))
	f(legacy(maxV), ^uint64(0))
	f(legacy(new(big.Int).Add(maxV, big.NewInt(1))), ^uint64(0))
	f(types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(0x50d)}), 0x50d)
	f(types.NewTx(&types.AccessListTx{ChainID: big.NewInt(0)}), 0)
	f(types.NewTx(&types.AccessListTx{ChainID: new(big.Int).Lsh(big.NewInt(1), 64)}), ^uint64(0))
}

func TestSenderRejectsUnsupportedType(t *testing.T) {
	tx := types.NewTx(&types.BlobTx{})
	if _, err := Sender(tx); !errors.Is(err, ErrUnsupportedType) {
		t.Fatalf("Sender(blob tx) error = %v", err)
	}
}

// TestSenderAllocs locks Sender's own work (hashing, recovery) to zero
// allocations: all it may allocate are the copies returned by the
// types.Transaction accessors that signedFields calls.
func TestSenderAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	for name, raw := range fixtures(t) {
		tx, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		var scratch big.Int
		accessors := testing.AllocsPerRun(20, func() {
			var f sigFields
			if _, err := signedFields(&f, tx, &scratch); err != nil {
				t.Fatal(err)
			}
		})
		total := testing.AllocsPerRun(20, func() {
			if _, err := Sender(tx); err != nil {
				t.Fatal(err)
			}
		})
		if total != accessors {
			t.Fatalf("%s: Sender allocates %v times, its accessors %v", name, total, accessors)
		}
	}
}
