package clients

import (
	"context"
	"fmt"
	"math/big"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/bench/proc"
	"github.com/ledgervenue/node/net/node"
)

// TestSnapshotRevertJS runs evm_snapshot → orders, a fill and a transfer →
// evm_revert with ethers 6 and viem 2 (js/snapshot-*.mjs, library
// defaults) against a fresh --dev --compat node each: balances, nonces,
// the book and the orders must come back, and the venue must go on.
func TestSnapshotRevertJS(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts nodes and client programs")
	}
	if !jsReady(t) {
		t.Skip("LEDGERD_SKIP_JS=1")
	}
	for _, script := range []string{"snapshot-ethers.mjs", "snapshot-viem.mjs"} {
		t.Run(script, func(t *testing.T) {
			n := startNode(t, true)
			p := run(60*time.Second, []string{"LEDGERD_RPC=" + n.HTTP}, "node", filepath.Join("js", script))
			if p.Err != nil {
				p.logOutput(t, script)
				t.Fatal(p.Err)
			}
		})
	}
}

// TestDumpStateFlags: the real binary writes its state on shutdown with
// --dump-state; a node started with --load-state on an empty data
// directory has the same state hash and serves the same receipts; a
// non-empty one is refused rather than overwritten.
func TestDumpStateFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts nodes")
	}
	bin := buildGo(t, "./cmd/ledgerd")
	file := filepath.Join(t.TempDir(), "venue.state")
	dir := t.TempDir()
	a, err := proc.Start(bin, "--dev", "--datadir", dir, "--admin-token", "test", "--dump-state", file)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eth, err := ethclient.Dial(a.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	to := common.Address(node.DevAddress(1))
	tx, err := types.SignNewTx(node.DevKey(0), types.LatestSignerForChainID(big.NewInt(0x50d)), &types.DynamicFeeTx{
		ChainID: big.NewInt(0x50d), Nonce: 0, GasTipCap: new(big.Int), GasFeeCap: big.NewInt(1e9), Gas: 21000,
		To: &to, Value: big.NewInt(1e18)})
	if err != nil {
		t.Fatal(err)
	}
	if err := eth.SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	var receipt *types.Receipt
	for deadline := time.Now().Add(10 * time.Second); receipt == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		receipt, _ = eth.TransactionReceipt(ctx, tx.Hash())
	}
	if receipt == nil {
		t.Fatal("no receipt")
	}
	eth.Close()
	a.Stop()

	dirB := t.TempDir()
	b, err := proc.Start(bin, "--dev", "--datadir", dirB, "--admin-token", "test", "--load-state", file)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	c, err := gethrpc.DialOptions(ctx, b.HTTP, gethrpc.WithHeader("Authorization", "Bearer test"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got *types.Receipt
	if err := c.CallContext(ctx, &got, "eth_getTransactionReceipt", tx.Hash()); err != nil || got == nil || got.TxHash != tx.Hash() {
		t.Fatalf("the transfer's receipt on the loaded node: %v %v", got, err)
	}
	// The state the first node wrote on shutdown is the one the second
	// starts from: its log names the same inputs and hash.
	written := regexp.MustCompile(`state written to \S+: (\d+ inputs, state hash [0-9a-f]{64})`).FindStringSubmatch(a.Log())
	replaced := regexp.MustCompile(`state replaced: (\d+ inputs, state hash [0-9a-f]{64})`).FindStringSubmatch(b.Log())
	if written == nil || replaced == nil || written[1] != replaced[1] {
		t.Fatalf("dumped %q, loaded %q; logs:\n%s\n%s", written, replaced, a.Log(), b.Log())
	}
	if !strings.Contains(written[1], " inputs") || strings.HasPrefix(written[1], "0 ") {
		t.Fatalf("the dumped state holds no input: %s", written[1])
	}

	if _, err := proc.Start(bin, "--dev", "--datadir", dir, "--admin-token", "test", "--load-state", file); err == nil {
		t.Fatal("--load-state into a data directory that holds inputs was not refused")
	}

	// The dump holds the log from genesis: the dumper's directory replays
	// to the hash it wrote, and the loader's directory replays too.
	seqHash := regexp.MustCompile(`^(\d+) inputs, state hash ([0-9a-f]{64})$`).FindStringSubmatch(written[1])
	last := replayEnd(t, bin, dir)
	if seqHash == nil || last != fmt.Sprintf(`{"seq":"0x%x","hash":"0x%s"}`, atoi(t, seqHash[1]), seqHash[2]) {
		t.Fatalf("replay of the dumped directory ends at %s, the dump was %s", last, written[1])
	}
	b.Stop()
	if last := replayEnd(t, bin, dirB); !strings.HasPrefix(last, `{"seq":`) {
		t.Fatalf("replay of the loaded directory: %q", last)
	}
}

// replayEnd runs ledgerd replay over dir and returns its last line.
func replayEnd(t *testing.T, bin, dir string) string {
	t.Helper()
	p := run(60*time.Second, nil, bin, "replay", "--datadir", dir)
	if p.Err != nil {
		p.logOutput(t, "ledgerd replay")
		t.Fatal(p.Err)
	}
	lines := strings.Split(strings.TrimSpace(p.Stdout), "\n")
	return lines[len(lines)-1]
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
