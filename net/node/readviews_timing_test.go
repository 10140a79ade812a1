package node

import (
	"testing"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
)

// BenchmarkPublishTransfer is what the read views add to the sequencer
// for a plain transfer: two accounts republished (publishInput).
func BenchmarkPublishTransfer(b *testing.B) {
	cfg := testConfig(b, b.TempDir())
	cfg.Markets = append(DevMarkets(), DevPerpMarkets()...)
	n := openNode(b, cfg)
	defer n.Close()
	in := &core.Input{Kind: core.InputTx, Tx: *devTransfer(0, 1)}
	rec := &core.TxRecord{Kind: core.RecordTx, Status: 1}
	b.ReportAllocs()
	n.mu.Lock()
	defer n.mu.Unlock()
	for b.Loop() {
		n.publishInput(in, rec)
	}
}

// BenchmarkPublishBook is the cost of republishing one book after a tick
// (its levels at full depth and its index entry), with 200 levels a side.
func BenchmarkPublishBook(b *testing.B) {
	cfg := testConfig(b, b.TempDir())
	cfg.Markets = DevMarkets()
	n := openNode(b, cfg)
	defer n.Close()
	book := DevMarkets()[0].ID
	deadline := uint64(1_500_000)
	for i := range uint64(200) {
		for s := range 2 {
			side := clob.Side(s)
			price := 200_000 - 300 - i
			if side == clob.Sell {
				price = 200_000 + 300 + i
			}
			tx := obTx(s, i, submitOrder(book, side, 1, price, deadline))
			durable := make(chan error, 1)
			if rej, err := n.SubmitTx(tx, func(_ *Entry, err error) { durable <- err }); err != nil || !rej.OK() {
				b.Fatalf("order %d: %v %+v", i, err, rej)
			}
			if err := <-durable; err != nil {
				b.Fatal(err)
			}
		}
	}
	n.cfg.Clock.(*ManualClock).Advance(500_000)
	if _, err := n.RunDueTicks(); err != nil {
		b.Fatal(err)
	}
	if s, _ := n.Orderbook(book, 0); len(s.Buys) != 200 || len(s.Sells) != 200 {
		b.Fatalf("%d/%d levels", len(s.Buys), len(s.Sells))
	}
	ids := []clob.Hash{book}
	b.ReportAllocs()
	n.mu.Lock()
	defer n.mu.Unlock()
	for b.Loop() {
		n.publishBooks(ids)
	}
}
