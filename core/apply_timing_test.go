package core

import (
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

// BenchmarkApplyTx measures the sequencer's critical section for one
// orderbook transaction: Ledger.Apply (validation, gas, decode, admission,
// logs) and Settle, what the node runs under its lock. "bare" transactions
// are decoded, their delegation certificate recovered and their order ids
// hashed inside Apply (a replay, or the code before PrepareTx); "prepared"
// ones went through PrepareTx first, as the event loops do, outside the
// timing. The order is a 1-lot IOC buy far below the market: every batch of
// benchApplyBatch transactions is cleared by a tick (not timed), so the
// book stays small.
func BenchmarkApplyTx(b *testing.B) {
	for _, c := range []struct {
		name                string
		delegated, prepared bool
	}{{"order/bare", false, false}, {"order/prepared", false, true},
		{"delegated/bare", true, false}, {"delegated/prepared", true, true}} {
		b.Run(c.name, func(b *testing.B) { benchApplyTx(b, c.delegated, c.prepared) })
	}
}

const benchApplyBatch = 1000

func benchApplyTx(b *testing.B, delegated, prepared bool) {
	l := newBenchApplyLedger(b)
	masterKey, err := crypto.HexToECDSA(masterKeyHex)
	if err != nil {
		b.Fatal(err)
	}
	master := Address(crypto.PubkeyToAddress(masterKey.PublicKey))
	from := alice
	if delegated {
		from = Address{0xd1}
		l.Genesis(NativeToken, master, new(uint256.Int).Mul(uint256.NewInt(1_000_000), uint256.NewInt(1e18)))
	}
	const validUntil = 1 << 62
	digest := abi.DelegationDigest(testChainID, clob.Address(from), validUntil)
	sig, err := crypto.Sign(digest[:], masterKey)
	if err != nil {
		b.Fatal(err)
	}
	txs := make([]Input, benchApplyBatch)
	nowUs := int64(1_000_001)
	fill := func() { // the next batch, as the loops hand it over
		in := clob.Intent{Kind: clob.IntentSubmit, Book: wethBook, Side: clob.Buy, Flags: clob.FlagIOC,
			Deadline: uint64((nowUs/500_000 + 1) * 500_000)}
		in.Size.SetUint64(1e15)
		in.Price.SetUint64(1e16)
		data := abi.AppendSubmitOrder(nil, &in)
		if delegated {
			data = abi.AppendDelegated(nil, clob.Address(master), validUntil, sig, data)
		}
		nonce := l.Nonce(from)
		for i := range txs {
			txs[i] = Input{Kind: InputTx, TimeUs: nowUs, Tx: Tx{Hash: Hash{0xa9, 24: byte(nonce >> 8), 31: byte(nonce)},
				Type: TxTypeDynamicFee, ChainID: testChainID, Nonce: nonce, From: from, To: OrderbookAddress, HasTo: true,
				Gas: 100_000, GasFeeCap: *uint256.NewInt(2e9), Data: data}}
			if prepared {
				PrepareTx(&txs[i].Tx)
			}
			nonce++
		}
	}
	fill()
	b.ReportAllocs()
	b.ResetTimer()
	k := 0
	for range b.N {
		rec, rej := l.Apply(&txs[k])
		if !rej.OK() {
			b.Fatalf("refused: %+v", rej)
		}
		l.Settle(rec)
		if k++; k == len(txs) {
			b.StopTimer()
			T := (nowUs/500_000 + 1) * 500_000
			l.Tick(T)
			nowUs, k = T+1, 0
			fill()
			b.StartTimer()
		}
	}
}

func newBenchApplyLedger(b *testing.B) *Ledger {
	l := NewLedger(Config{ChainID: testChainID, BaseFee: *gwei, Orderbook: clob.Limits{OrdersMax: 1 << 12, PendingMax: 1 << 12}})
	l.Genesis(NativeToken, alice, new(uint256.Int).Mul(uint256.NewInt(1_000_000), uint256.NewInt(1e18)))
	if err := l.GenesisMarket(wethMarket()); err != nil {
		b.Fatal(err)
	}
	return l
}
