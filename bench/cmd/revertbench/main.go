// Command revertbench times what a test suite does between its cases on a
// local node: evm_snapshot, a few transfers, evm_revert. It runs against
// any node with anvil's controls and the standard test mnemonic's dev
// accounts (ledgerd --dev, anvil, hardhat), so the same run can measure
// ledgerd and anvil side by side (--compare), alternating them.
//
//	go run ./bench/cmd/revertbench --url http://127.0.0.1:8545 --compare http://127.0.0.1:8546 --history 2000
//
// --history first sends that many transfers (kept: the history every
// snapshot then copies). It prints, per node, the median and p90 of the
// snapshot, the transfers and the revert, in milliseconds, and the ratio
// of the medians. Loopback URLs only, a bounded number of cycles.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/net/node"
)

// Bounds of one invocation.
const (
	cyclesMax  = 1000
	historyMax = 100_000
	// receiptWait bounds the wait for one transfer's receipt.
	receiptWait = 30 * time.Second
)

type target struct {
	url     string
	rpc     *gethrpc.Client
	eth     *ethclient.Client
	chainID *big.Int
	nonce   [2]uint64 // of dev accounts 0 and 1 (the senders)
	// samples, ms: snapshot, transfers, revert
	snap, send, revert []float64
}

func main() {
	urlA := flag.String("url", "http://127.0.0.1:8545", "node A (loopback)")
	urlB := flag.String("compare", "", "node B (loopback): measured alternately with A")
	cycles := flag.Int("cycles", 50, fmt.Sprintf("snapshot → transfers → revert cycles per node (max %d)", cyclesMax))
	perCycle := flag.Int("transfers", 4, "transfers between a snapshot and its revert")
	history := flag.Int("history", 0, fmt.Sprintf("transfers sent first and kept, per node (max %d)", historyMax))
	flag.Parse()
	if *cycles < 1 || *cycles > cyclesMax || *history < 0 || *history > historyMax || *perCycle < 0 || *perCycle > 100 {
		log.Fatalf("--cycles 1..%d, --history 0..%d, --transfers 0..100", cyclesMax, historyMax)
	}
	var ts []*target
	for _, u := range []string{*urlA, *urlB} {
		if u == "" {
			continue
		}
		t, err := dial(u)
		if err != nil {
			log.Fatal(err)
		}
		ts = append(ts, t)
	}
	for _, t := range ts {
		start := time.Now()
		for i := range *history {
			if err := t.transfer(i % 2); err != nil {
				log.Fatalf("%s: history transfer %d: %v", t.url, i, err)
			}
		}
		if *history > 0 {
			fmt.Fprintf(os.Stderr, "%s: %d history transfers in %v\n", t.url, *history, time.Since(start).Round(time.Millisecond))
		}
	}
	for c := range *cycles {
		for _, t := range ts {
			if err := t.cycle(*perCycle); err != nil {
				log.Fatalf("%s: cycle %d: %v", t.url, c, err)
			}
		}
	}
	fmt.Printf("%d cycles of evm_snapshot, %d transfers, evm_revert after %d kept transfers; ms, median / p90\n", *cycles, *perCycle, *history)
	fmt.Printf("%-28s %16s %16s %16s\n", "node", "evm_snapshot", "transfers", "evm_revert")
	for _, t := range ts {
		fmt.Printf("%-28s %16s %16s %16s\n", t.url, stat(t.snap), stat(t.send), stat(t.revert))
	}
	if len(ts) == 2 {
		a, b := ts[0], ts[1]
		fmt.Printf("%-28s %16.2f %16.2f %16.2f\n", "ratio A/B (medians)", median(a.snap)/median(b.snap),
			median(a.send)/median(b.send), median(a.revert)/median(b.revert))
	}
}

func dial(raw string) (*target, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" && u.Hostname() != "::1") {
		return nil, fmt.Errorf("%q: only loopback URLs", raw)
	}
	c, err := gethrpc.Dial(raw)
	if err != nil {
		return nil, err
	}
	t := &target{url: raw, rpc: c, eth: ethclient.NewClient(c)}
	ctx := context.Background()
	if t.chainID, err = t.eth.ChainID(ctx); err != nil {
		return nil, err
	}
	for i := range t.nonce {
		if t.nonce[i], err = t.eth.NonceAt(ctx, common.Address(node.DevAddress(i)), nil); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// cycle snapshots, sends n transfers, reverts, and puts the nonces back.
func (t *target) cycle(n int) error {
	ctx := context.Background()
	var id string
	start := time.Now()
	if err := t.rpc.CallContext(ctx, &id, "evm_snapshot"); err != nil {
		return err
	}
	t.snap = append(t.snap, ms(start))
	nonces := t.nonce
	start = time.Now()
	for i := range n {
		if err := t.transfer(i % 2); err != nil {
			return err
		}
	}
	t.send = append(t.send, ms(start))
	var ok bool
	start = time.Now()
	if err := t.rpc.CallContext(ctx, &ok, "evm_revert", id); err != nil || !ok {
		return fmt.Errorf("evm_revert %s: %v %v", id, ok, err)
	}
	t.revert = append(t.revert, ms(start))
	t.nonce = nonces
	return nil
}

// transfer sends 1 wei from dev account from to the other and waits for
// its receipt.
func (t *target) transfer(from int) error {
	ctx := context.Background()
	to := common.Address(node.DevAddress(1 - from))
	tx, err := types.SignNewTx(node.DevKey(from), types.LatestSignerForChainID(t.chainID), &types.DynamicFeeTx{
		ChainID: t.chainID, Nonce: t.nonce[from], GasTipCap: new(big.Int), GasFeeCap: big.NewInt(100e9), Gas: 21000,
		To: &to, Value: big.NewInt(1)})
	if err != nil {
		return err
	}
	if err := t.eth.SendTransaction(ctx, tx); err != nil {
		return err
	}
	t.nonce[from]++
	for deadline := time.Now().Add(receiptWait); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if r, err := t.eth.TransactionReceipt(ctx, tx.Hash()); err == nil && r != nil {
			return nil
		}
	}
	return fmt.Errorf("no receipt for %s in %v", tx.Hash(), receiptWait)
}

func ms(since time.Time) float64 { return float64(time.Since(since).Microseconds()) / 1000 }

func median(xs []float64) float64 { return quantile(xs, 0.5) }

func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

func stat(xs []float64) string {
	return fmt.Sprintf("%.2f / %.2f", median(xs), quantile(xs, 0.9))
}
