package ethtx

import (
	"bytes"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rlp"
)

var testKey, _ = crypto.HexToECDSA("b71c71a67e1177ad4e901695e1b4b9ee17ae16c6668d313eac2f96dbcda3f291")

// fixtures returns one signed raw transaction per supported layout.
func fixtures(t testing.TB) map[string][]byte {
	t.Helper()
	to := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	chain := big.NewInt(0x50d)
	al := types.AccessList{{Address: to, StorageKeys: []common.Hash{{1}, {2}}}}
	txs := map[string]struct {
		inner  types.TxData
		signer types.Signer
	}{
		"legacy unprotected": {&types.LegacyTx{Nonce: 1, GasPrice: big.NewInt(1e9), Gas: 21000, To: &to,
			Value: big.NewInt(1)}, types.HomesteadSigner{}},
		"legacy eip155": {&types.LegacyTx{Nonce: 2, GasPrice: big.NewInt(1e9), Gas: 21000, To: &to,
			Value: big.NewInt(1), Data: []byte{0xde, 0xad}}, types.NewEIP155Signer(chain)},
		"eip2930": {&types.AccessListTx{ChainID: chain, Nonce: 3, GasPrice: big.NewInt(1e9), Gas: 50000,
			To: &to, Data: make([]byte, 68), AccessList: al}, types.LatestSignerForChainID(chain)},
		"eip1559": {&types.DynamicFeeTx{ChainID: chain, Nonce: 4, GasTipCap: big.NewInt(1e9),
			GasFeeCap: big.NewInt(3e10), Gas: 21000, To: &to, Value: big.NewInt(1e18),
			Data: make([]byte, 68)}, types.LatestSignerForChainID(chain)},
		"eip1559 create": {&types.DynamicFeeTx{ChainID: chain, Nonce: 5, GasTipCap: big.NewInt(1),
			GasFeeCap: big.NewInt(2), Gas: 1e6, Data: bytes.Repeat([]byte{0x60}, 4096)},
			types.LatestSignerForChainID(chain)},
	}
	out := make(map[string][]byte, len(txs))
	for name, f := range txs {
		tx, err := types.SignTx(types.NewTx(f.inner), f.signer, testKey)
		if err != nil {
			t.Fatal(err)
		}
		if out[name], err = tx.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestDecode(t *testing.T) {
	f := func(name string, raw []byte, wantErr error) {
		t.Helper()
		tx, err := Decode(raw)
		if !errors.Is(err, wantErr) {
			t.Fatalf("%s: Decode error = %v, want %v", name, err, wantErr)
		}
		if err == nil {
			if back, _ := tx.MarshalBinary(); !bytes.Equal(back, raw) {
				t.Fatalf("%s: re-encoding differs", name)
			}
		}
	}
	for name, raw := range fixtures(t) {
		f(name, raw, nil)
		f(name+" + trailing byte", append(bytes.Clone(raw), 0x80), ErrMalformed)
		f(name+" truncated", raw[:len(raw)-1], ErrMalformed)
	}
	f("empty", nil, ErrMalformed)
	f("type 0 envelope", []byte{0x00, 0xc0}, ErrUnsupportedType)
	f("type 3 (blob)", []byte{0x03, 0xc0}, ErrUnsupportedType)
	f("type 4 (set code)", []byte{0x04, 0xc0}, ErrUnsupportedType)
	f("type 0x7f", []byte{0x7f}, ErrUnsupportedType)
	f("type 1 alone", []byte{0x01}, ErrMalformed)
	f("type 2 empty list", []byte{0x02, 0xc0}, ErrMalformed)
	f("rlp string", []byte{0x82, 0x01, 0x02}, ErrMalformed)
	f("empty list", []byte{0xc0}, ErrMalformed)
	f("oversized", make([]byte, RawSizeMax+1), ErrOversized)
}

// TestDecodeSizeLimit checks RawSizeMax on a valid transaction of exactly
// that size and one byte more.
func TestDecodeSizeLimit(t *testing.T) {
	build := func(dataSize int) []byte {
		tx, err := types.SignTx(types.NewTx(&types.DynamicFeeTx{ChainID: big.NewInt(1), Gas: 1,
			GasTipCap: big.NewInt(1), GasFeeCap: big.NewInt(1), Data: make([]byte, dataSize)}),
			types.LatestSignerForChainID(big.NewInt(1)), testKey)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := tx.MarshalBinary()
		return raw
	}
	over := len(build(RawSizeMax)) - RawSizeMax
	atLimit := build(RawSizeMax - over)
	if len(atLimit) != RawSizeMax {
		t.Fatalf("fixture is %d bytes, want %d", len(atLimit), RawSizeMax)
	}
	if _, err := Decode(atLimit); err != nil {
		t.Fatalf("Decode at RawSizeMax: %v", err)
	}
	if _, err := Decode(build(RawSizeMax - over + 1)); !errors.Is(err, ErrOversized) {
		t.Fatalf("Decode at RawSizeMax+1: %v, want ErrOversized", err)
	}
}

// TestDecodeSplit cuts every fixture at every byte offset: the prefix alone
// must be rejected (without panicking) and the two halves rejoined must
// decode to the same transaction.
func TestDecodeSplit(t *testing.T) {
	for name, raw := range fixtures(t) {
		want, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		for i := range len(raw) {
			if _, err := Decode(raw[:i]); err == nil {
				t.Fatalf("%s: prefix of %d bytes decoded", name, i)
			}
			joined := append(bytes.Clone(raw[:i]), raw[i:]...)
			got, err := Decode(joined)
			if err != nil || got.Hash() != want.Hash() {
				t.Fatalf("%s: split at %d: %v", name, i, err)
			}
		}
	}
}

func TestSenderFixtures(t *testing.T) {
	want := crypto.PubkeyToAddress(testKey.PublicKey)
	for name, raw := range fixtures(t) {
		tx, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Sender(tx); err != nil || got != want {
			t.Fatalf("%s: Sender = %x, %v; want %x", name, got, err, want)
		}
	}
}

// TestSigHash compares the streaming encoder with go-ethereum's signer
// hash on the RLP size boundaries: 1-byte strings below and above 0x80,
// 55/56-byte strings and lists, integers above 64 bits and above 55 bytes.
func TestSigHash(t *testing.T) {
	chain := big.NewInt(0x50d)
	to := common.Address{0xaa}
	long := new(big.Int).Lsh(big.NewInt(1), 500)
	var keys []common.Hash
	for i := range 40 {
		keys = append(keys, common.Hash{byte(i)})
	}
	datas := [][]byte{nil, {0x00}, {0x7f}, {0x80}, make([]byte, 55), make([]byte, 56), make([]byte, 300),
		make([]byte, 70000)}
	values := []*big.Int{new(big.Int), big.NewInt(0x7f), big.NewInt(0x80), new(big.Int).Lsh(big.NewInt(1), 64), long}
	for _, data := range datas {
		for _, value := range values {
			for _, inner := range []types.TxData{
				&types.LegacyTx{Nonce: 0x80, GasPrice: value, Gas: 1 << 63, To: &to, Value: value, Data: data},
				&types.AccessListTx{ChainID: chain, Nonce: 1, GasPrice: value, Value: value, Data: data,
					AccessList: types.AccessList{{Address: to, StorageKeys: keys[:1]}, {StorageKeys: keys}}},
				&types.DynamicFeeTx{ChainID: long, GasTipCap: value, GasFeeCap: value, To: &to,
					Value: value, Data: data},
			} {
				tx := types.NewTx(inner)
				for _, id := range []*big.Int{nil, chain, long} {
					if id == nil && tx.Type() != types.LegacyTxType {
						continue
					}
					checkSigHash(t, tx, id)
				}
			}
		}
	}
}

func checkSigHash(t *testing.T, tx *types.Transaction, id *big.Int) {
	t.Helper()
	var f sigFields
	var h hasher
	h.k = crypto.NewKeccakState()
	v, r, s := big.NewInt(27), big.NewInt(1), big.NewInt(1)
	if id != nil {
		v = new(big.Int).Add(new(big.Int).Lsh(id, 1), big.NewInt(35))
	}
	if tx.Type() != types.LegacyTxType {
		v = new(big.Int)
		id = tx.ChainId()
	}
	tx = withSig(tx, v, r, s)
	if _, err := signedFields(&f, tx, &h.chainID); err != nil {
		t.Fatal(err)
	}
	h.encodeSigHash(&f)
	want := types.LatestSignerForChainID(id).Hash(tx)
	if h.digest != want {
		t.Fatalf("sighash (type %d, chain %v, data %d bytes) = %x, want %x", tx.Type(), id, len(tx.Data()),
			h.digest, want)
	}
}

// FuzzDecode compares Decode and Sender with go-ethereum. The input comes
// in two halves that are concatenated, as a network read would split it.
func FuzzDecode(f *testing.F) {
	for _, raw := range fixtures(f) {
		f.Add(raw[:len(raw)/2], raw[len(raw)/2:])
	}
	f.Add([]byte{0x02}, []byte{0xc0})
	f.Add([]byte{0xf8, 0x01}, []byte{0x00})
	list, _ := rlp.EncodeToBytes([]any{uint(0), uint(0), uint(0), []byte{}, uint(0), []byte{}, uint(27), uint(1), uint(1)})
	f.Add(list, []byte(nil))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		compareRaw(t, append(bytes.Clone(a), b...))
	})
}

// TestDecodeDoesNotAlias checks the documented contract: the caller may
// reuse raw (a network buffer) once Decode returns.
func TestDecodeDoesNotAlias(t *testing.T) {
	for name, raw := range fixtures(t) {
		buf := bytes.Clone(raw)
		tx, err := Decode(buf)
		if err != nil {
			t.Fatal(err)
		}
		want := tx.Hash()
		data := bytes.Clone(tx.Data())
		clear(buf)
		if fresh, _ := Decode(raw); fresh.Hash() != want || !bytes.Equal(tx.Data(), data) {
			t.Fatalf("%s: transaction changed when the input buffer was cleared", name)
		}
		if got, err := Sender(tx); err != nil || got != crypto.PubkeyToAddress(testKey.PublicKey) {
			t.Fatalf("%s: Sender after clearing the input: %x, %v", name, got, err)
		}
	}
}
