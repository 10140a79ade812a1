package l1

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// fake is a bridged chain's JSON-RPC endpoint: eth_chainId, eth_getCode,
// eth_blockNumber and eth_getLogs over logs it holds; it records the block
// ranges asked.
type fake struct {
	chainID, code string
	mu            sync.Mutex
	head          uint64
	logs          []types.Log
	ranges        [][2]uint64
}

func (f *fake) serve(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage   `json:"id"`
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		var result any
		switch req.Method {
		case "eth_chainId":
			result = f.chainID
		case "eth_getCode":
			result = f.code
		case "eth_blockNumber":
			result = hexutil.Uint64(f.head)
		case "eth_getLogs":
			var q struct{ FromBlock, ToBlock hexutil.Uint64 }
			json.Unmarshal(req.Params[0], &q)
			from, to := uint64(q.FromBlock), uint64(q.ToBlock)
			f.ranges = append(f.ranges, [2]uint64{from, to})
			logs := []types.Log{}
			for _, l := range f.logs {
				if l.BlockNumber >= from && l.BlockNumber <= to {
					logs = append(logs, l)
				}
			}
			result = logs
		}
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func fakeChain(t *testing.T, chainID, code string) string {
	return (&fake{chainID: chainID, code: code}).serve(t)
}

func TestDialChecksTheChain(t *testing.T) {
	cfg := node.DevBridgeConfig()
	cases := []struct {
		name, chainID, code, want string
	}{
		{"another chain", "0x1", "0x60", "has chain id 1, the bridge configuration's claim_chain_id is 31337"},
		{"no bridge contract", "0x7a69", "0x", "has no contract at the bridge configuration's source_contract 0x5FbDB2315678afecb367f032d93F642f64180aa3"},
	}
	for _, c := range cases {
		_, err := Dial(context.Background(), fakeChain(t, c.chainID, c.code), &cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
	chain, err := Dial(context.Background(), fakeChain(t, "0x7a69", "0x60"), &cfg)
	if err != nil {
		t.Fatalf("the configured chain with code at source_contract: %v", err)
	}
	chain.Close()
}

func depositLog(id byte, token common.Address, amount uint64, to common.Address) *types.Log {
	return &types.Log{
		Topics: []common.Hash{DepositTopic, {31: id}, common.BytesToHash(token[:]), common.BytesToHash(to[:])},
		Data:   common.BigToHash(new(uint256.Int).SetUint64(amount).ToBig()).Bytes(),
	}
}

func TestDecode(t *testing.T) {
	cfg := node.DevBridgeConfig()
	to := common.Address{19: 0x42}
	usd := common.Address(cfg.Tokens[0].L1Token)  // 6 decimals
	wbtc := common.Address(cfg.Tokens[2].L1Token) // 8 decimals
	d, err := Decode(&cfg, depositLog(7, usd, 2_500_000, to))
	if err != nil {
		t.Fatal(err)
	}
	want := Deposit{ID: core.Hash{31: 7}, Token: core.NativeToken, To: core.Address(to), Amount: *uint256.NewInt(2_500_000_000_000_000_000)}
	if d != want {
		t.Errorf("2.5 USD: got %+v, want %+v", d, want)
	}
	if d, err = Decode(&cfg, depositLog(8, wbtc, 3, to)); err != nil || d.Token != node.DevWBTC || d.Amount.Uint64() != 3e10 {
		t.Errorf("3 satoshi: got %+v, %v; want 3e10 of WBTC", d, err)
	}
	bad := map[string]*types.Log{
		"unknown token": depositLog(9, common.Address{1}, 1, to),
		"zero id":       depositLog(0, usd, 1, to),
		"another event": {Topics: []common.Hash{{1}, {2}, {3}, {4}}, Data: make([]byte, 32)},
	}
	huge := depositLog(10, usd, 0, to)
	huge.Data = common.MaxHash[:]
	bad["overflow"] = huge
	for name, l := range bad {
		if _, err := Decode(&cfg, l); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// depositor records credits like the node: a known id is refused with
// ErrDuplicateDeposit; overloadAt refuses that id once with ErrOverloaded.
type depositor struct {
	mu         sync.Mutex
	credited   []core.Hash
	overloadAt core.Hash
}

func (d *depositor) Deposit(id core.Hash, _, _ core.Address, _ *uint256.Int, done func(*node.Entry, error)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if id == d.overloadAt {
		d.overloadAt = core.Hash{}
		return node.ErrOverloaded
	}
	if slices.Contains(d.credited, id) {
		return node.ErrDuplicateDeposit
	}
	d.credited = append(d.credited, id)
	done(nil, nil)
	return nil
}

func (d *depositor) ids() []core.Hash {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.credited)
}

// Run reads the chain in ranges of at most BlockRangeMax blocks, credits
// every deposit once and in order, retries an overloaded credit from its
// block, polls again for new blocks, and returns when its context ends.
func TestRun(t *testing.T) {
	cfg := node.DevBridgeConfig()
	usd := common.Address(cfg.Tokens[0].L1Token)
	at := func(id byte, block uint64) types.Log {
		l := depositLog(id, usd, 1, common.Address{19: 1})
		l.Address, l.BlockNumber = common.Address(cfg.SourceContract), block
		return *l
	}
	f := &fake{chainID: "0x7a69", code: "0x60", head: 2*BlockRangeMax + 10}
	f.logs = []types.Log{at(1, 0), at(2, BlockRangeMax), at(3, BlockRangeMax), at(4, 2*BlockRangeMax+5)}
	chain, err := Dial(context.Background(), f.serve(t), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	dep := &depositor{overloadAt: core.Hash{31: 3}}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	var logged []string
	go func() {
		chain.Run(ctx, dep, func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) })
		close(ran)
	}()
	waitIDs := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for len(dep.ids()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("credited %d deposits, want %d", len(dep.ids()), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitIDs(4)
	f.mu.Lock()
	f.logs = append(f.logs, at(5, f.head+1))
	f.head++
	f.mu.Unlock()
	waitIDs(5)
	cancel()
	<-ran

	want := []core.Hash{{31: 1}, {31: 2}, {31: 3}, {31: 4}, {31: 5}}
	if got := dep.ids(); !slices.Equal(got, want) {
		t.Errorf("credited %x, want %x", got, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.ranges {
		if r[1] < r[0] || r[1]-r[0]+1 > BlockRangeMax {
			t.Errorf("eth_getLogs over %d..%d: more than BlockRangeMax (%d) blocks", r[0], r[1], BlockRangeMax)
		}
	}
	if len(logged) != 1 || !strings.Contains(logged[0], node.ErrOverloaded.Error()) {
		t.Errorf("logged %q, want the overload once", logged)
	}
}
