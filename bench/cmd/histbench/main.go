// Command histbench measures what history costs a restarted node. For each
// history size it builds a data directory of that many inputs (bridge
// deposits to 1 000 accounts, each a record with a log, applied in-process
// through node.Open with ledgerd --dev's configuration, snapshots at their
// defaults), then starts the real ledgerd binary on it several times and
// reports, as medians:
//
//   - listen: process start until the node listens;
//   - first write: process start until a signed transfer is acknowledged;
//   - receipt latency: eth_getTransactionReceipt of a record from the start
//     of the history (read from disk, its batch rebuilt) against one sent a
//     moment ago (in the cache);
//   - eth_getLogs over one minute of attestation time in the middle of the
//     history, filtered to one recipient (the log index is scanned over the
//     whole minute).
//
// Usage: go run ./bench/cmd/histbench -sizes 100000,1000000 [-runs 3] [-bin path]
//
// Everything listens on loopback and stops by itself; the data directories
// are deleted unless -keep.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/bench/proc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// Bounds that keep a run finite.
const (
	sizeMax       = 20_000_000
	runsMax       = 20
	recipients    = 1000
	chainID       = 0x50d
	depositWindow = 1 << 14 // deposits in flight at once
)

func main() {
	sizes := flag.String("sizes", "100000,1000000", "history sizes (inputs), comma-separated")
	runs := flag.Int("runs", 3, "restarts per size")
	bin := flag.String("bin", "", "ledgerd binary (default: build ./cmd/ledgerd)")
	keep := flag.Bool("keep", false, "keep the data directories")
	flag.Parse()
	if *runs < 1 || *runs > runsMax {
		log.Fatalf("histbench: -runs must be 1..%d", runsMax)
	}
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 1000 || v > sizeMax {
			log.Fatalf("histbench: each size must be 1000..%d, got %q", sizeMax, s)
		}
		ns = append(ns, v)
	}
	work, err := os.MkdirTemp("", "histbench")
	if err != nil {
		log.Fatal(err)
	}
	if !*keep {
		defer os.RemoveAll(work)
	}
	if *bin == "" {
		if *bin, err = proc.Build(".", "./cmd/ledgerd", work); err != nil {
			log.Fatalf("histbench: %v (run it from the module root)", err)
		}
	}
	for _, size := range ns {
		if err := measure(work, *bin, size, *runs); err != nil {
			log.Fatalf("histbench: size %d: %v", size, err)
		}
	}
}

// history is what generation remembers of a data directory.
type history struct {
	dir               string
	early             []core.Hash // records from the start of the history
	startUs, endUs    int64
	recipientTopic    common.Hash
	depositsPerSecond float64
}

func measure(work, bin string, size, runs int) error {
	h, err := generate(filepath.Join(work, fmt.Sprintf("h%d", size)), size)
	if err != nil {
		return err
	}
	fmt.Printf("size %d: generated at %.0f deposits/s (%d s of attestation time)\n",
		size, h.depositsPerSecond, (h.endUs-h.startUs)/1e6)
	var listen, firstWrite []time.Duration
	for r := range runs {
		start := time.Now()
		n, err := proc.Start(bin, "--dev", "--datadir", h.dir, "--admin-token", "histbench")
		if err != nil {
			return err
		}
		listen = append(listen, time.Since(start))
		c, err := rpc.Dial(n.HTTP)
		if err != nil {
			n.Stop()
			return err
		}
		if _, err := sendTransfer(c); err != nil {
			n.Stop()
			return fmt.Errorf("first write after the restart: %v\n%s", err, n.Log())
		}
		firstWrite = append(firstWrite, time.Since(start))
		if r == runs-1 {
			err = reads(c, h)
		}
		c.Close()
		n.Stop()
		if err != nil {
			return err
		}
		if r == 0 {
			fmt.Printf("size %d: %s\n", size, restoredLine(n.Log()))
		}
	}
	fmt.Printf("size %d: restart (median of %d): listening after %v, first transfer acknowledged after %v; disk %.1f MB\n",
		size, runs, median(listen), median(firstWrite), float64(dirSize(h.dir))/1e6)
	return nil
}

func restoredLine(log string) string {
	for _, l := range strings.Split(log, "\n") {
		if i := strings.Index(l, "state restored"); i >= 0 {
			return l[i:]
		}
	}
	return "(no restore line)"
}

// generate applies size deposits in-process with ledgerd --dev's
// configuration.
func generate(dir string, size int) (*history, error) {
	cfg := node.Config{DataDir: dir, ChainID: chainID, BaseFee: *uint256.NewInt(1_000_000_000), Validators: 4,
		CommitteeSeed: []byte("ledgerd committee"), Clock: node.WallClock{}, Genesis: node.DevGenesis(),
		Markets: node.DevMarkets(), Logf: log.Printf}
	n, err := node.Open(cfg)
	if err != nil {
		return nil, err
	}
	h := &history{dir: dir, startUs: time.Now().UnixMicro()}
	var mu sync.Mutex
	sem := make(chan struct{}, depositWindow)
	var failed atomic.Value
	start, lastPrint := time.Now(), time.Now()
	amount := uint256.NewInt(1)
	for i := range size {
		sem <- struct{}{}
		to := recipient(i)
		done := func(e *node.Entry, err error) {
			if err != nil {
				failed.Store(err)
			} else if i < 100 {
				mu.Lock()
				h.early = append(h.early, e.Rec.Tx.Hash)
				mu.Unlock()
			}
			<-sem
		}
		for {
			err := n.Deposit(core.Hash{}, core.NativeToken, to, amount, done)
			if err == nil {
				break
			}
			if err != node.ErrOverloaded {
				n.Close()
				return nil, err
			}
			time.Sleep(time.Millisecond)
		}
		if time.Since(lastPrint) > 10*time.Second {
			lastPrint = time.Now()
			fmt.Printf("  generating: %d/%d inputs, %.0f/s\n", i, size, float64(i)/time.Since(start).Seconds())
		}
	}
	for range depositWindow {
		sem <- struct{}{}
	}
	if err, _ := failed.Load().(error); err != nil {
		n.Close()
		return nil, err
	}
	h.depositsPerSecond = float64(size) / time.Since(start).Seconds()
	// Wait for the last records' attestation, then stop cleanly.
	for n.PastPerfectTime() < time.Now().UnixMicro()-1000 {
		time.Sleep(10 * time.Millisecond)
	}
	h.endUs = time.Now().UnixMicro()
	to := recipient(7)
	h.recipientTopic = common.BytesToHash(to[:])
	return h, n.Close()
}

func recipient(i int) core.Address {
	return core.Address{0xbe, 0xef, byte(i % recipients >> 8), byte(i % recipients)}
}

var devKey = node.DevKey(0)

// sendTransfer sends 1 wei from dev account 0 and returns its hash once the
// node acknowledged it.
func sendTransfer(c *rpc.Client) (common.Hash, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ec := ethclient.NewClient(c)
	from := crypto.PubkeyToAddress(devKey.PublicKey)
	nonce, err := ec.PendingNonceAt(ctx, from)
	if err != nil {
		return common.Hash{}, err
	}
	tx, err := types.SignNewTx(devKey, types.LatestSignerForChainID(big.NewInt(chainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chainID), Nonce: nonce, To: &common.Address{0xee}, Value: big.NewInt(1), Gas: 21000,
		GasFeeCap: big.NewInt(2e9), GasTipCap: big.NewInt(0)})
	if err != nil {
		return common.Hash{}, err
	}
	return tx.Hash(), ec.SendTransaction(ctx, tx)
}

// reads measures receipt and log latency on a restarted node.
func reads(c *rpc.Client, h *history) error {
	ec := ethclient.NewClient(c)
	ctx := context.Background()
	receipt := func(hash common.Hash) (time.Duration, error) {
		start := time.Now()
		r, err := ec.TransactionReceipt(ctx, hash)
		if err == nil && r == nil {
			err = fmt.Errorf("no receipt for %s", hash)
		}
		return time.Since(start), err
	}
	var disk, cache []time.Duration
	for i, hash := range h.early {
		d, err := receipt(common.Hash(hash))
		if err != nil {
			return fmt.Errorf("old receipt %d: %w", i, err)
		}
		disk = append(disk, d)
	}
	for range 50 {
		hash, err := sendTransfer(c)
		if err != nil {
			return err
		}
		for {
			d, err := receipt(hash)
			if err == nil {
				cache = append(cache, d)
				break
			}
			time.Sleep(time.Millisecond) // not attested yet
		}
	}
	fmt.Printf("  eth_getTransactionReceipt: %v from the start of the history (disk, median of %d), %v just sent (cache, median of %d)\n",
		median(disk), len(disk), median(cache), len(cache))
	midS := (h.startUs + h.endUs) / 2 / 1e6
	q := ethereum.FilterQuery{FromBlock: big.NewInt(midS - 30), ToBlock: big.NewInt(midS + 29),
		Topics: [][]common.Hash{{common.Hash(core.DepositTopic())}, nil, {h.recipientTopic}}}
	var lat []time.Duration
	var got int
	for range 5 {
		start := time.Now()
		logs, err := ec.FilterLogs(ctx, q)
		if err != nil {
			fmt.Printf("  eth_getLogs over one minute: %v\n", err)
			return nil
		}
		lat = append(lat, time.Since(start))
		got = len(logs)
	}
	perS := h.depositsPerSecond
	fmt.Printf("  eth_getLogs over one minute (about %.0f logs scanned, %d matched): %v (median of 5)\n",
		min(60, float64(h.endUs-h.startUs)/1e6)*perS, got, median(lat))
	return nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(10 * time.Microsecond)
}

func dirSize(dir string) int64 {
	var total int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			total += info.Size()
		}
		return nil
	})
	return total
}
