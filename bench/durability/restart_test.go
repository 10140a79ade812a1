package durability

import (
	"context"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/bench/proc"
	"github.com/ledgervenue/node/net/node"
)

// historyRecords is more than node.MaxInflight: before attestation batches
// were restored, a restart over this much history put all of it back in
// flight and refused every write until it had been attested again.
const historyRecords = node.MaxInflight + 4_000

// TestRestartOverLongHistoryTakesWrites: a node restarted over more attested
// records than it may hold in flight acknowledges a transfer as soon as it
// listens.
func TestRestartOverLongHistoryTakesWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a history of 70 000 records")
	}
	dir := t.TempDir()
	args := []string{"--dev", "--datadir", dir, "--admin-token", "test"}
	n, err := proc.Start(ledgerd, args...)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := rpc.DialOptions(context.Background(), n.HTTP, rpc.WithHeader("Authorization", "Bearer test"))
	if err != nil {
		t.Fatal(err)
	}
	// Deposits are records like transfers and need no signatures: a
	// thousand per batch request, four requests at a time.
	const perBatch, senders = 1000, 4
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := g; b*perBatch < historyRecords; b += senders {
				batch := make([]rpc.BatchElem, perBatch)
				results := make([]struct {
					TxHash common.Hash `json:"tx_hash"`
				}, perBatch)
				for i := range batch {
					batch[i] = rpc.BatchElem{Method: "admin_deposit", Result: &results[i], Args: []any{map[string]any{
						"token": "0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE", "to": common.Address{0xee, byte(g), byte(i)}, "amount": "0x1"}}}
				}
				if err := admin.BatchCall(batch); err != nil {
					errs <- err
					return
				}
				for _, el := range batch {
					if el.Error != nil {
						errs <- el.Error
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatalf("deposits: %v", err)
	}
	// One more, last in the log: records are attested in log order, so once
	// it is, all are.
	var last struct {
		TxHash common.Hash `json:"tx_hash"`
	}
	if err := admin.Call(&last, "admin_deposit", map[string]any{
		"token": "0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE", "to": common.Address{0xef}, "amount": "0x1"}); err != nil {
		t.Fatal(err)
	}
	eth := ethclient.NewClient(admin)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := eth.TransactionReceipt(context.Background(), last.TxHash); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the last deposit was not attested within 60 s")
		}
	}
	admin.Close()
	n.Stop()

	start := time.Now()
	if n, err = proc.Start(ledgerd, args...); err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	listening := time.Since(start)
	c, err := ethclient.Dial(n.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	key := node.DevKey(0)
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(chainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chainID), GasFeeCap: new(big.Int).Mul(gwei, big.NewInt(2)), GasTipCap: new(big.Int), Gas: 21_000,
		To: &common.Address{0xee}, Value: big.NewInt(1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SendTransaction(context.Background(), tx); err != nil {
		t.Fatalf("a transfer right after restarting over %d records: %v", historyRecords, err)
	}
	t.Logf("restart over %d records: listening after %v; the first transfer acknowledged %v after start",
		historyRecords, listening.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}
