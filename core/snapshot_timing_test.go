package core

import (
	"encoding/binary"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

// The snapshot benchmarks measure the pause a snapshot costs the sequencer
// (AppendSnapshot into a reused buffer) and what loading it costs at start-up,
// for a ledger of benchAccounts accounts, each holding native and WETH and
// each with one order resting in the WETH book (benchAccounts orders at
// 2 × benchLevels prices, a tenth of them with a ttl).
const (
	benchAccounts = 10_000
	benchLevels   = 500
)

var benchSnapshotCfg = Config{ChainID: testChainID, BaseFee: *gwei,
	Orderbook: clob.Limits{OrdersMax: 1 << 14, PendingMax: 1 << 14}}

func benchSnapshotLedger(b *testing.B) *Ledger {
	l := NewLedger(benchSnapshotCfg)
	if err := l.GenesisMarket(wethMarket()); err != nil {
		b.Fatal(err)
	}
	accts := make([]Address, benchAccounts)
	for i := range accts {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(i))
		h := Keccak256Hash(n[:]) // addresses are hashes of keys
		copy(accts[i][:], h[12:])
		l.Genesis(NativeToken, accts[i], new(uint256.Int).Mul(uint256.NewInt(1000), uint256.NewInt(1e18)))
		l.Genesis(weth, accts[i], new(uint256.Int).Mul(uint256.NewInt(10), uint256.NewInt(1e18)))
	}
	for i, a := range accts {
		in := clob.Intent{Kind: clob.IntentSubmit, Book: wethBook, Side: clob.Side(i % 2), Deadline: 1_000_000}
		steps := uint64(3000 - 1 - i/2%benchLevels)
		if in.Side == clob.Sell {
			steps = 3000 + 1 + uint64(i/2%benchLevels)
		}
		if i%10 == 0 {
			in.TTL = 3_600_000_000
		}
		in.Size.Mul(uint256.NewInt(uint64(1+i%5)), uint256.NewInt(1e15))
		in.Price.Mul(uint256.NewInt(steps), uint256.NewInt(1e16))
		tx := Tx{Hash: Hash{0xbe, 28: byte(i >> 24), 29: byte(i >> 16), 30: byte(i >> 8), 31: byte(i)}, Type: TxTypeDynamicFee,
			ChainID: testChainID, From: a, To: OrderbookAddress, HasTo: true, Gas: 100_000, GasFeeCap: *uint256.NewInt(2e9),
			Data: abi.AppendSubmitOrder(nil, &in)}
		rec, rej := l.ApplyTx(&tx, 600_000)
		if !rej.OK() {
			b.Fatalf("order %d: %+v", i, rej)
		}
		l.Settle(rec)
	}
	l.Tick(1_000_000)
	if n := booked(l); n != benchAccounts {
		b.Fatalf("%d orders rest, want %d", n, benchAccounts)
	}
	return l
}

func BenchmarkAppendSnapshot(b *testing.B) {
	l := benchSnapshotLedger(b)
	buf := l.AppendSnapshot(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() { // b.Loop excludes the set-up from the timing
		buf = l.AppendSnapshot(buf[:0])
	}
	b.ReportMetric(float64(len(buf)), "snapshot-bytes")
	snapSink = buf
}

func BenchmarkLoadSnapshot(b *testing.B) {
	snap := benchSnapshotLedger(b).AppendSnapshot(nil)
	b.SetBytes(int64(len(snap)))
	b.ReportAllocs()
	for b.Loop() {
		l, err := LoadSnapshot(benchSnapshotCfg, snap)
		if err != nil {
			b.Fatal(err)
		}
		ledgerSink = l
	}
	b.ReportMetric(float64(len(snap)), "snapshot-bytes")
}

var (
	snapSink   []byte
	ledgerSink *Ledger
)
