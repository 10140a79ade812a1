package durability

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/bench/proc"
	obabi "github.com/ledgervenue/node/core/clob/abi"
	"github.com/ledgervenue/node/net/node"
)

var ledgerd string // the binary, built once

// TestMain builds ./cmd/ledgerd, or takes the binary LEDGERD_BIN names.
func TestMain(m *testing.M) { os.Exit(proc.Main(m, "../..", &ledgerd)) }

const (
	rounds       = 10
	transferKeys = 4 // dev accounts 0..3 send transfers, 4 and 5 orders
	chainID      = 0x50d
)

var (
	gwei         = big.NewInt(1_000_000_000)
	orderbook    = common.HexToAddress("0x50d0000000000000000000000000000000000002")
	orderbookABI = func() abi.ABI {
		a, err := abi.JSON(strings.NewReader(obabi.OrderbookJSON))
		if err != nil {
			panic(err)
		}
		return a
	}()
)

// sender is one dev account sending as fast as the node acknowledges.
type sender struct {
	key   *ecdsa.PrivateKey
	addr  common.Address
	order int8 // 0: transfers; +1 buys, -1 sells 0.001 WETH at 2000 USD, IOC
}

// ledger is what the test knows the node acknowledged.
type ledger struct {
	mu     sync.Mutex
	acked  map[common.Hash]common.Address // hash -> sender
	order  []common.Hash                  // acked's keys, in the order of their answers
	nonces map[common.Address]uint64      // acknowledged transactions per sender
	// attested holds the attestation (sequence number and first signature)
	// of receipts read before a kill: a restart must not sign them again.
	attested map[common.Hash]string
}

// TestKillRestart: ten rounds of load, each ended by SIGKILL at a random
// moment, then a restart on the same data directory that must still hold
// every acknowledged transaction with its receipt, keep every nonce, and
// serve the receipts attested before the kill with the same attestations.
func TestKillRestart(t *testing.T) {
	rng, dir, senders, lg := crashTest(t, "kills and restarts the real binary ten times", "LEDGERD_CRASH_SEED", "kill times")
	snapshotRestarts := 0
	for round := range rounds + 1 {
		n, err := proc.Start(ledgerd, nodeArgs(dir)...)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if m := restoredRE.FindStringSubmatch(n.Log()); m != nil && m[1] != "0" {
			snapshotRestarts++
		}
		c, err := rpc.Dial(n.HTTP)
		if err != nil {
			t.Fatal(err)
		}
		lg.verify(t, round, c)
		if round == rounds {
			c.Close()
			n.Stop()
			checkSnapshotIsReplay(t, dir)
			break
		}
		stop := lg.load(c, senders)
		time.Sleep(time.Duration(150+rng.IntN(450)) * time.Millisecond)
		lg.sampleAttested(c)
		n.Kill()
		stop()
		c.Close()
		if t.Failed() {
			t.Logf("round %d ledgerd log:\n%s", round, n.Log())
			return
		}
	}
	t.Logf("%d transactions acknowledged over %d kills, all kept; %d receipts read before a kill kept their attestations; %d restarts loaded a snapshot",
		len(lg.acked), rounds, len(lg.attested), snapshotRestarts)
	if snapshotRestarts == 0 {
		t.Fatal("no restart loaded a snapshot: the test did not exercise them")
	}
}

// crashTest starts a crash test: skipped under -short (skip says what it
// would run), else its random source (seededRand with seedEnv and what), an
// empty data directory, the senders and a ledger of nothing acknowledged.
func crashTest(t *testing.T, skip, seedEnv, what string) (rng *rand.Rand, dir string, senders []*sender, lg *ledger) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: " + skip)
	}
	return seededRand(t, seedEnv, what), t.TempDir(), devSenders(), newLedger()
}

// seededRand is a test's source of randomness, seeded from the clock; the
// seed is logged, and setting the environment variable env to it repeats
// that run's choices (what names them in the log line).
func seededRand(t *testing.T, env, what string) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv(env), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (%s repeats a run's %s)", seed, env, what)
	return rand.New(rand.NewPCG(seed, 1))
}

// nodeArgs runs ledgerd on dir with frequent snapshots: kills land while
// one is written, and most restarts load one and replay only the log after
// it.
func nodeArgs(dir string) []string {
	return []string{"--dev", "--datadir", dir, "--admin-token", "test", "--snapshot-every", "400"}
}

// devSenders are the load: transferKeys dev accounts sending transfers,
// then a buyer and a seller whose orders cross.
func devSenders() []*sender {
	var senders []*sender
	for i := range transferKeys + 2 {
		k := node.DevKey(i)
		s := &sender{key: k, addr: crypto.PubkeyToAddress(k.PublicKey)}
		switch i {
		case transferKeys:
			s.order = 1
		case transferKeys + 1:
			s.order = -1
		}
		senders = append(senders, s)
	}
	return senders
}

// newLedger is a ledger of nothing acknowledged yet.
func newLedger() *ledger {
	return &ledger{acked: map[common.Hash]common.Address{}, nonces: map[common.Address]uint64{}, attested: map[common.Hash]string{}}
}

// load starts every sender on c; stop ends them (once the node is gone or
// the test is done with it) and waits for them.
func (lg *ledger) load(c *rpc.Client, senders []*sender) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, s := range senders {
		wg.Add(1)
		go func() { defer wg.Done(); lg.send(ctx, ethclient.NewClient(c), s) }()
	}
	return func() { cancel(); wg.Wait() }
}

// send signs and sends s's next transactions until ctx ends or the node is
// gone; it starts from the node's nonce, since a transaction whose answer
// the kill cut off may still be durable.
func (lg *ledger) send(ctx context.Context, c *ethclient.Client, s *sender) {
	nonce, err := c.NonceAt(ctx, s.addr, nil)
	if err != nil {
		return
	}
	signer := types.LatestSignerForChainID(big.NewInt(chainID))
	for ctx.Err() == nil {
		to, value, data := common.Address{0xee}, big.NewInt(1), []byte(nil)
		if s.order != 0 {
			to, value = orderbook, new(big.Int)
			deadline := big.NewInt((time.Now().UnixMicro()/500_000 + 3) * 500_000)
			size := new(big.Int).Mul(big.NewInt(int64(s.order)), big.NewInt(1e15))
			data = packOrder(size, deadline)
		}
		tx, err := types.SignNewTx(s.key, signer, &types.DynamicFeeTx{ChainID: big.NewInt(chainID), Nonce: nonce,
			GasTipCap: new(big.Int), GasFeeCap: new(big.Int).Mul(gwei, big.NewInt(2)), Gas: 21_000, To: &to, Value: value, Data: data})
		if err != nil {
			panic(err)
		}
		if err := c.SendTransaction(ctx, tx); err != nil {
			return // the kill, or a refusal: either way this round is over for s
		}
		lg.mu.Lock()
		lg.acked[tx.Hash()] = s.addr
		lg.order = append(lg.order, tx.Hash())
		lg.nonces[s.addr] = nonce + 1
		lg.mu.Unlock()
		nonce++
	}
}

// packOrder is an IOC limit order on WETH/USD at 2000 USD: buys and sells
// cross each other, and nothing rests.
func packOrder(size, deadline *big.Int) []byte {
	data, err := orderbookABI.Pack("submitOrder", common.Hash{31: 1}, size, new(big.Int).Mul(big.NewInt(2000), big.NewInt(1e18)),
		uint8(0), deadline, new(big.Int), uint8(0x02))
	if err != nil {
		panic(err)
	}
	return data
}

// attestation is what a verifier would compare of a receipt's attestations.
type attestation struct {
	Meta struct {
		Attestations []struct {
			Seq uint64 `json:"sequence_number"`
			Sig string `json:"signature"`
		} `json:"attestations"`
	} `json:"svc_metadata"`
	Status string `json:"status"`
}

func (a *attestation) key() string {
	if len(a.Meta.Attestations) == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%s", a.Meta.Attestations[0].Seq, a.Meta.Attestations[0].Sig)
}

// sampleAttested reads the receipts of up to 50 acknowledged transactions
// and remembers the attestations of those already attested.
func (lg *ledger) sampleAttested(c *rpc.Client) {
	lg.mu.Lock()
	var hashes []common.Hash
	for h := range lg.acked {
		if _, seen := lg.attested[h]; !seen && len(hashes) < 50 {
			hashes = append(hashes, h)
		}
	}
	lg.mu.Unlock()
	for _, h := range hashes {
		var r *attestation
		if err := c.Call(&r, "eth_getTransactionReceipt", h); err == nil && r != nil && r.key() != "" {
			lg.mu.Lock()
			lg.attested[h] = r.key()
			lg.mu.Unlock()
		}
	}
}

// restoredRE reads the start-up line that says which snapshot was loaded.
var restoredRE = regexp.MustCompile(`state restored in \S+: snapshot at input (\d+)`)

// stateHash reads the node's {seq, hash} through admin_stateHash.
func stateHash(t *testing.T, c *rpc.Client) string {
	t.Helper()
	c.SetHeader("Authorization", "Bearer test")
	var st struct{ Seq, Hash string }
	if err := c.Call(&st, "admin_stateHash"); err != nil {
		t.Fatal(err)
	}
	return st.Seq + "/" + st.Hash
}

// verify checks, on a freshly restarted node, every acknowledged
// transaction: known, attested (within 15 s: records durable but not yet
// attested at the kill are attested now), successful, and with the same
// attestation as before the kill when one was seen; and every sender's
// nonce at least what was acknowledged.
func (lg *ledger) verify(t *testing.T, round int, c *rpc.Client) {
	t.Helper()
	lg.mu.Lock()
	defer lg.mu.Unlock()
	for addr, want := range lg.nonces {
		var got string
		if err := c.Call(&got, "eth_getTransactionCount", addr, "latest"); err != nil {
			t.Fatalf("round %d: nonce of %s: %v", round, addr, err)
		}
		if n, _ := new(big.Int).SetString(strings.TrimPrefix(got, "0x"), 16); n == nil || n.Uint64() < want {
			t.Fatalf("round %d: nonce of %s is %s after the restart, %d were acknowledged", round, addr, got, want)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for h := range lg.acked {
		var tx json.RawMessage
		if err := c.Call(&tx, "eth_getTransactionByHash", h); err != nil || string(tx) == "null" {
			t.Fatalf("round %d: acknowledged transaction %s lost after the restart (%v)", round, h, err)
		}
		var r *attestation
		for r == nil {
			if err := c.Call(&r, "eth_getTransactionReceipt", h); err != nil {
				t.Fatalf("round %d: receipt of %s: %v", round, h, err)
			}
			if r == nil && time.Now().After(deadline) {
				t.Fatalf("round %d: acknowledged transaction %s has no receipt 15 s after the restart", round, h)
			}
			if r == nil {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if r.Status != "0x1" {
			t.Fatalf("round %d: receipt of %s has status %s", round, h, r.Status)
		}
		if before, ok := lg.attested[h]; ok && r.key() != before {
			t.Fatalf("round %d: %s attested as %s after the restart, %s before: signed twice", round, h, r.key(), before)
		}
	}
}

// checkSnapshotIsReplay: the state the snapshots led to is the state a
// replay of the whole log reaches. Both restarts run on a stopped manual
// clock: on the wall clock the perp markets tick every interval, so the two
// would read different moments.
func checkSnapshotIsReplay(t *testing.T, dir string) {
	t.Helper()
	viaSnapshot := stateAtRestart(t, dir)
	replayed := stateAtRestart(t, dir, "--ignore-snapshots")
	if replayed != viaSnapshot {
		t.Fatalf("state after the snapshot restart %v, after a replay from genesis %v", viaSnapshot, replayed)
	}
}

// stateAtRestart starts ledgerd on dir with a stopped manual clock (no tick
// runs) and returns its state hash.
func stateAtRestart(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	n, err := proc.Start(ledgerd, append([]string{"--dev", "--datadir", dir, "--admin-token", "test", "--clock", "manual"}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	c, err := rpc.Dial(n.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return stateHash(t, c)
}
