package persist

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
)

func sampleInputs() []*core.Input {
	tx := core.Tx{Hash: core.Hash{1}, Type: core.TxTypeDynamicFee, ChainID: 0x50d, Nonce: 7, From: core.Address{2},
		To: core.Address{3}, HasTo: true, Value: *uint256.NewInt(99), Gas: 21000, GasTipCap: *uint256.NewInt(1),
		GasFeeCap: *uint256.NewInt(2), Data: []byte{0xde, 0xad},
		AccessList: []core.AccessTuple{{Address: core.Address{7}, StorageKeys: []core.Hash{{1}, {2}}}, {Address: core.Address{8}}}}
	tx.V.SetUint64(1)
	tx.R.SetAllOne()
	tx.S.SetUint64(12345)
	return []*core.Input{
		{Kind: core.InputTx, Tx: tx, TimeUs: 1_700_000_000_123_456},
		{Kind: core.InputTx, Tx: core.Tx{Hash: core.Hash{9}}},
		{Kind: core.InputTx, Tx: core.Tx{Hash: core.Hash{10}, Nonce: 3}, TimeUs: 1_700_000_000_600_001, Staged: true},
		{Kind: core.InputDeposit, DepositID: core.Hash{4}, Token: core.NativeToken, To: core.Address{5}, Amount: *uint256.NewInt(1e18)},
		{Kind: core.InputSetBaseFee, BaseFee: *uint256.NewInt(7e9)},
		{Kind: core.InputTick, TimeUs: 1_700_000_000_500_000},
		{Kind: core.InputCreateMarket, Market: clob.MarketConfig{
			ID: clob.Hash{1}, Name: "WETH/USD", BaseSymbol: "WETH", QuoteSymbol: "USD", Base: clob.Address{2},
			Quote: clob.Address(core.NativeToken), IntervalUs: 500_000, TickPrecision: *uint256.NewInt(1e16),
			LotSize: *uint256.NewInt(1e15), MakerFee: *uint256.NewInt(1e14), TakerFee: *uint256.NewInt(3e14)}},
		{Kind: core.InputCreateMarket, Market: perpMarket()},
		{Kind: core.InputSetOracle, Book: clob.Hash{3}, Price: *uint256.NewInt(1_000e16)},
		{Kind: core.InputLockAccount, To: core.Address{6, 19: 6}},
		{Kind: core.InputSetBalance, To: core.Address{7, 19: 7}, Amount: *uint256.NewInt(5e18)},
		{Kind: core.InputSetBalance, To: core.Address{7, 19: 8}},
		{Kind: core.InputSetNonce, To: core.Address{8, 19: 8}, Nonce: 1 << 40},
		{Kind: core.InputClockOffset, TimeUs: 86_400_000_000},
		{Kind: core.InputClockOffset, TimeUs: -3},
		{Kind: core.InputMoveOracle, Book: clob.Hash{3}, Bps: -300},
		{Kind: core.InputMoveOracle, Book: clob.Hash{3}, Bps: 200, TimeUs: 1_700_000_010_000_000},
	}
}

func perpMarket() clob.MarketConfig {
	return clob.MarketConfig{
		ID: clob.Hash{3}, Name: "ETH-PERP", BaseSymbol: "ETH", QuoteSymbol: "USD", Kind: clob.Perp, Base: clob.Address{4},
		Quote: clob.Address(core.NativeToken), IntervalUs: 500_000, TickPrecision: *uint256.NewInt(1e16),
		LotSize: *uint256.NewInt(1e15), TakerFee: *uint256.NewInt(3e14),
		Perp: clob.PerpParams{MaxLeverage: 20, InterestRate: *uint256.NewInt(1e14), MaxFundingRate: *uint256.NewInt(32e16),
			MaxPremium: *uint256.NewInt(5e15), MarkClamp: *uint256.NewInt(1e16), OraclePrice: *uint256.NewInt(3e18),
			WalkBps: 5, WalkSeed: 0xfeedface_01234567},
	}
}

// TestPerpRecordsKeepEveryField: a perp market's parameters and an oracle
// setting survive the log, and a spot record claiming a perp market is
// corrupt (perp parameters are never silently zero after a replay).
func TestPerpRecordsKeepEveryField(t *testing.T) {
	for _, in := range []*core.Input{{Kind: core.InputCreateMarket, Market: perpMarket()},
		{Kind: core.InputSetOracle, Book: clob.Hash{3}, Price: *uint256.NewInt(123e16)}} {
		got, err := DecodeRecord(AppendRecord(nil, in))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&got, in) {
			t.Fatalf("decoded %+v, want %+v", got, *in)
		}
	}
	m := perpMarket()
	enc := appendMarket([]byte{kindMarket}, &m)
	if _, err := DecodeRecord(enc); err == nil {
		t.Fatal("a perp market in a spot record decoded")
	}
	m.Kind = clob.Spot
	enc = appendPerpParams(appendMarket([]byte{kindPerpMarket}, &m), &m.Perp)
	if _, err := DecodeRecord(enc); err == nil {
		t.Fatal("a spot market in a perp record decoded")
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for i, in := range sampleInputs() {
		enc := AppendRecord(nil, in)
		got, err := DecodeRecord(enc)
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		if !bytes.Equal(AppendRecord(nil, &got), enc) {
			t.Fatalf("input %d: re-encoding differs", i)
		}
		// Every strict prefix and any extension is corruption, never a panic.
		for cut := 0; cut < len(enc); cut++ {
			if _, err := DecodeRecord(enc[:cut]); err == nil {
				t.Fatalf("input %d: prefix %d decoded", i, cut)
			}
		}
		if _, err := DecodeRecord(append(enc, 0)); err == nil {
			t.Fatalf("input %d: trailing byte accepted", i)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for _, in := range sampleInputs() {
		enc := AppendRecord(nil, in)
		f.Add(enc[:len(enc)/2], enc[len(enc)/2:])
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		whole := append(append([]byte(nil), a...), b...)
		in, err := DecodeRecord(whole)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to the same bytes.
		if !bytes.Equal(AppendRecord(nil, &in), whole) {
			t.Fatal("decode/encode not inverse")
		}
	})
}

func TestLogAppendReplayReopen(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ins := sampleInputs()
	if err := l.Append(&Group{Inputs: ins[:2]}); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(&Group{Inputs: ins[2:]}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Len() != uint64(len(ins)) {
		t.Fatalf("len %d", l.Len())
	}
	var got [][]byte
	err = l.Replay(0, func(seq uint64, in *core.Input) error {
		if seq != uint64(len(got)+1) {
			t.Fatalf("seq %d", seq)
		}
		got = append(got, AppendRecord(nil, in))
		return nil
	})
	if err != nil || len(got) != len(ins) {
		t.Fatalf("replay: %v, %d records", err, len(got))
	}
	for i, in := range ins {
		if !bytes.Equal(got[i], AppendRecord(nil, in)) {
			t.Fatalf("record %d differs after reopen", i)
		}
	}
}

// TestFormatChecked: a log stamped with another format is refused with a
// message that says what to do, and a fresh log is stamped.
func TestFormatChecked(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.db.Update(func(txn *badger.Txn) error { return txn.Set(formatKey, []byte{1}) }); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "make clean") {
		t.Fatalf("a log of format 1 opened: %v", err)
	}
}
