package l1

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// fakeChain answers eth_chainId and eth_getCode like a bridged chain would.
func fakeChain(t *testing.T, chainID, code string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		result := map[string]string{"eth_chainId": chainID, "eth_getCode": code}[req.Method]
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
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
