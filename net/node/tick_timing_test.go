package node

import (
	"encoding/binary"
	"testing"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
	dto "github.com/prometheus/client_model/go"
)

// BenchmarkTickHold is how long an auction tick takes and holds the
// sequencer's lock per order it lands, downstream work included (the
// market index, the subscription record, the read views): market makers'
// ladders on the two dev spot books, every account sending one batch of
// ladderOrders orders a tick, half of them crossing, resting orders living
// three ticks (ttl). Only RunDueTicks is timed: tick-ns/order divides its
// time by the orders landed, hold-ns/order the time it held the lock
// (ledgerd_auction_tick_hold_seconds; the books clear without it).
func BenchmarkTickHold(b *testing.B) {
	const accounts, ladderOrders = 8, 20
	cfg := testConfig(b, b.TempDir())
	cfg.Markets = DevMarkets()
	n := openNode(b, cfg)
	defer n.Close()
	clock := cfg.Clock.(*ManualClock)
	type market struct {
		clob.MarketConfig
		mid uint64 // in price steps: 2 000 USD a WETH, 60 000 a WBTC
	}
	markets := []market{{DevMarkets()[0], 200_000}, {DevMarkets()[1], 60_000}}
	nonces := make([]uint64, accounts)
	var inner [][]byte
	ladder := func(a int, round uint64) *core.Tx {
		inner = inner[:0]
		for i := range ladderOrders {
			side := clob.Side(i % 2)
			// half the orders cross the other side's best (mid ± 2 steps)
			off := uint64(3 + i/2)
			if i%4 < 2 {
				off = 0
			}
			m := &markets[i%len(markets)]
			price := m.mid - off
			if side == clob.Sell {
				price = m.mid + off
			}
			in := clob.Intent{Kind: clob.IntentSubmit, Book: m.ID, Side: side,
				Deadline: uint64(clock.NowMicros() + 10_000_000), TTL: 1_500_000}
			in.Size.Mul(uint256.NewInt(1+uint64(a)), &m.LotSize)
			in.Price.Mul(uint256.NewInt(price), &m.TickPrecision)
			inner = append(inner, abi.AppendIntent(nil, &in))
		}
		tx := obTx(a, nonces[a], abi.AppendSubmitBatch(nil, inner))
		binary.BigEndian.PutUint64(tx.Hash[8:], nonces[a])
		binary.BigEndian.PutUint64(tx.Hash[16:], round)
		nonces[a]++
		return tx
	}
	var orders, round uint64
	holdSum := func() float64 {
		var m dto.Metric
		if err := n.stats.tickHoldSeconds.Write(&m); err != nil {
			b.Fatal(err)
		}
		return m.GetHistogram().GetSampleSum()
	}
	held := holdSum()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		round++
		var durable chan error
		for a := range accounts {
			durable = make(chan error, 1)
			d := durable
			if rej, err := n.SubmitTx(ladder(a, round), func(_ *Entry, err error) { d <- err }); err != nil || !rej.OK() {
				b.Fatalf("ladder: %v %+v", err, rej)
			}
		}
		if err := <-durable; err != nil {
			b.Fatal(err)
		}
		clock.Advance(500_000)
		b.StartTimer()
		wait, err := n.RunDueTicks()
		if err != nil || wait == nil {
			b.Fatalf("tick: %v", err)
		}
		b.StopTimer()
		if err := <-wait; err != nil {
			b.Fatal(err)
		}
		orders += accounts * ladderOrders
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(orders), "tick-ns/order")
	b.ReportMetric((holdSum()-held)*1e9/float64(orders), "hold-ns/order")
}
