package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/attest"
	"github.com/ledgervenue/node/core/claim"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
)

// bridgeNode starts a node with the dev bridge and perp markets (a tick
// every interval).
func bridgeNode(t *testing.T, opts ...nodeOption) *testNode {
	return startNode(t, append([]nodeOption{func(c *node.Config) {
		c.Markets = append(c.Markets, node.DevPerpMarkets()...)
		c.Bridge = node.DevBridgeConfig()
	}}, opts...)...)
}

// withdraw sends a real withdraw transaction from dev account who, at its
// next nonce, to `to` for the next withdrawal batch, and returns its hash
// once the node accepted it (the answer comes once it is durable, so the
// account's next one may follow at once).
func (tn *testNode) withdraw(t *testing.T, who int, token, to common.Address, amount *big.Int) common.Hash {
	t.Helper()
	h, err := tn.tryWithdraw(t, who, token, to, amount)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// tryWithdraw is withdraw returning its error, for other goroutines than
// the test's.
func (tn *testNode) tryWithdraw(t *testing.T, who int, token, to common.Address, amount *big.Int) (common.Hash, error) {
	ctx := context.Background()
	nonce, err := tn.eth.NonceAt(ctx, devAddr(who), nil)
	if err != nil {
		return common.Hash{}, err
	}
	// Signing a valid key's transaction cannot fail: t is not used here.
	tx := signWithdraw(t, node.DevKey(who), nonce, withdrawCall(token, to, amount, tn.nextDeadline()), new(big.Int))
	if err := tn.eth.SendTransaction(ctx, tx); err != nil {
		return common.Hash{}, fmt.Errorf("withdraw from %d refused: %w (%v)", who, err, errorData(err))
	}
	return tx.Hash(), nil
}

// okRow withdraws 1 native unit (1e18 wei, 1e6 on the bridged chain) from
// who to {0x70, i}: executed in its batch.
func (tn *testNode) okRow(t *testing.T, i byte, who int) common.Hash {
	return tn.withdraw(t, who, native, common.Address{0x70, i}, eth(1))
}

// poorRow withdraws 50 WBTC from who, which holds 10: insufficient_balance.
func (tn *testNode) poorRow(t *testing.T, i byte, who int) common.Hash {
	return tn.withdraw(t, who, common.Address(node.DevWBTC), common.Address{0x70, i}, eth(50))
}

// restGet sends method to path over HTTP and returns the status, the
// response and the body, which must be JSON.
func restGet(t *testing.T, tn *testNode, method, path string) (int, *http.Response, []byte) {
	t.Helper()
	resp, body := httpDo(t, tn, method, path)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q", method, path, ct)
	}
	return resp.StatusCode, resp, body
}

// httpDo sends method to path with the header name-value pairs given and
// returns the response, redirects not followed, and its body.
func httpDo(t *testing.T, tn *testNode, method, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, tn.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	c := http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// restOK is restGet of a GET that must answer 200.
func restOK(t *testing.T, tn *testNode, path string) []byte {
	t.Helper()
	status, _, body := restGet(t, tn, "GET", path)
	if status != 200 {
		t.Fatalf("GET %s: %d %s", path, status, body)
	}
	return body
}

type update struct {
	TxHash      common.Hash    `json:"tx_hash"`
	Withdrawer  common.Address `json:"withdrawer"`
	Error       string         `json:"error"`
	TimestampUs int64          `json:"timestamp_us"`
}

func listing(t *testing.T, body []byte) ([]update, []json.RawMessage) {
	t.Helper()
	var us []update
	var raw []json.RawMessage
	if err := json.Unmarshal(body, &us); err != nil {
		t.Fatalf("listing %s: %v", body, err)
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	return us, raw
}

// TestBridgeRESTListing: the listings page by (timestamp_us, position):
// pages of 3 over a batch of 5 and one of 3 give every row once, in order,
// a since_id inside the first batch continuing into the second; the same
// page read twice is the same bytes; an account's listing filters.
func TestBridgeRESTListing(t *testing.T) {
	tn := bridgeNode(t, func(c *node.Config) { c.WithdrawalsPerBatchMax = 4 })
	// The fifth of the first batch is past the cap of 4: not_included.
	hashes := []common.Hash{tn.okRow(t, 1, 0), tn.okRow(t, 2, 1), tn.poorRow(t, 3, 0), tn.okRow(t, 4, 1), tn.okRow(t, 5, 0)}
	tn.tick(t)
	tick1 := tn.node.LastTickUs()
	hashes = append(hashes, tn.okRow(t, 6, 1), tn.okRow(t, 7, 0), tn.poorRow(t, 8, 0))
	tn.tick(t)
	tick2 := tn.node.LastTickUs()

	all, allRaw := listing(t, restOK(t, tn, "/v1/bridge/withdrawals?limit=1000"))
	if len(all) != 8 {
		t.Fatalf("%d rows, want 8", len(all))
	}
	for i, u := range all {
		wantTick := tick1
		if i >= 5 {
			wantTick = tick2
		}
		wantErr := ""
		switch i {
		case 2, 7:
			wantErr = core.WithdrawInsufficientBalance
		case 4:
			wantErr = core.WithdrawNotIncluded
		}
		if u.TxHash != hashes[i] || u.TimestampUs != wantTick || u.Error != wantErr {
			t.Fatalf("row %d: %+v, want hash %s error %q", i, u, hashes[i], wantErr)
		}
	}

	var paged []json.RawMessage
	path := "/v1/bridge/withdrawals?limit=3"
	for pages := 0; ; pages++ {
		body := restOK(t, tn, path)
		if again := restOK(t, tn, path); !bytes.Equal(body, again) {
			t.Fatalf("page %s read twice: %s then %s", path, body, again)
		}
		us, raw := listing(t, body)
		if len(us) == 0 {
			if pages != 3 {
				t.Fatalf("%d pages of 3 for 8 rows", pages)
			}
			break
		}
		if pages == 1 && (us[0].TimestampUs != tick1 || us[len(us)-1].TimestampUs != tick2) {
			t.Fatalf("second page %+v, want it to span both batches", us)
		}
		paged = append(paged, raw...)
		last := us[len(us)-1]
		path = fmt.Sprintf("/v1/bridge/withdrawals?since_id=%s&limit=3&since=%d", last.TxHash.Hex(), last.TimestampUs)
	}
	if fmt.Sprint(paged) != fmt.Sprint(allRaw) {
		t.Fatalf("pages\n%s\nwant\n%s", paged, allRaw)
	}

	later, _ := listing(t, restOK(t, tn, fmt.Sprintf("/v1/bridge/withdrawals?since=%d", tick1)))
	if len(later) != 3 || later[0].TxHash != hashes[5] {
		t.Fatalf("since the first batch: %+v", later)
	}
	mine, _ := listing(t, restOK(t, tn, "/v1/bridge/withdrawals/"+devAddr(1).Hex()))
	if len(mine) != 3 || mine[0].TxHash != hashes[1] || mine[1].TxHash != hashes[3] || mine[2].TxHash != hashes[5] {
		t.Fatalf("account 1's rows %+v", mine)
	}
	// since_id of another account's row is still a place in the batch.
	after, _ := listing(t, restOK(t, tn, fmt.Sprintf("/v1/bridge/withdrawals/%s?since=%d&since_id=%s", devAddr(1).Hex(), tick1,
		hashes[2].Hex())))
	if len(after) != 2 || after[0].TxHash != hashes[3] {
		t.Fatalf("account 1's rows after row 3: %+v", after)
	}

	var cfg struct {
		ClaimChainID   uint64         `json:"claim_chain_id"`
		SourceContract common.Address `json:"source_contract"`
		Version        uint64         `json:"version"`
		Tokens         []struct {
			SvcToken common.Address `json:"svc_token"`
			L1Token  common.Address `json:"l1_token"`
			Decimals uint8          `json:"decimals"`
			Min      *hexutil.Big   `json:"min"`
			Max      *hexutil.Big   `json:"max"`
		} `json:"tokens"`
	}
	if err := json.Unmarshal(restOK(t, tn, "/v1/bridge/config"), &cfg); err != nil || cfg.ClaimChainID != 31337 || cfg.Version != 1 ||
		len(cfg.Tokens) != 3 || cfg.Tokens[0].SvcToken != common.Address(core.NativeToken) || cfg.Tokens[0].Decimals != 6 ||
		cfg.Tokens[0].Min.ToInt().Int64() != 1e6 || cfg.SourceContract != common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3") {
		t.Fatalf("config %+v (%v)", cfg, err)
	}
}

// TestBridgeRESTErrors: every refusal over a real HTTP client, with its
// status, a JSON {"error"} body and the JSON content type; HEAD answers
// the GET's length without a body; a 405 names the allowed methods.
func TestBridgeRESTErrors(t *testing.T) {
	tn := bridgeNode(t)
	first := tn.okRow(t, 1, 0)
	// ListLimitDefault more in the same batch, one sender per dev account
	// at a time.
	errs := make(chan error, len(node.DevKeys))
	for who := range len(node.DevKeys) {
		go func() {
			for i := who; i < rpc.ListLimitDefault; i += len(node.DevKeys) {
				if _, err := tn.tryWithdraw(t, who, native, common.Address{0x70, 2}, eth(1)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range node.DevKeys {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	tn.tick(t)
	tick := tn.node.LastTickUs()
	hash := first.Hex()
	if rows, _ := listing(t, restOK(t, tn, "/v1/bridge/withdrawals")); len(rows) != rpc.ListLimitDefault {
		t.Fatalf("%d rows without a limit, want %d", len(rows), rpc.ListLimitDefault)
	}
	if rows, _ := listing(t, restOK(t, tn, fmt.Sprintf("/v1/bridge/withdrawals?limit=%d", rpc.ListLimitMax))); len(rows) != rpc.ListLimitDefault+1 {
		t.Fatalf("%d rows with the largest limit", len(rows))
	}
	cases := []struct {
		method, path string
		status       int
		msg          string
	}{
		{"GET", "/v1/bridge/nothing", 404, "not found"},
		{"GET", "/v1/bridge/withdrawals/", 404, "not found"},
		{"GET", "/v1/bridge/withdrawals/by-id/" + hash + "/x", 404, "not found"},
		{"GET", "/v1/other", 404, "not found"},
		{"POST", "/v1/bridge/config", 405, "method not allowed"},
		{"POST", "/v1/nothing", 404, "not found"},
		{"GET", "/v1/bridge/withdrawals/by-id/" + common.Hash{0xee}.Hex(), 404, "withdrawal not found"},
		{"GET", "/v1/bridge/withdrawals/by-id/0x12", 400, "bad tx hash"},
		{"GET", "/v1/bridge/withdrawals/0x1234", 400, "bad account"},
		{"GET", "/v1/bridge/withdrawals?since=x", 400, "bad since"},
		{"GET", "/v1/bridge/withdrawals?since=-1", 400, "bad since"},
		{"GET", "/v1/bridge/withdrawals?limit=0", 400, "bad limit"},
		{"GET", fmt.Sprintf("/v1/bridge/withdrawals?limit=%d", rpc.ListLimitMax+1), 400, "bad limit"},
		{"GET", "/v1/bridge/withdrawals?limit=1&limit=2", 400, "given twice"},
		{"GET", "/v1/bridge/withdrawals?cursor=1", 400, "unknown query parameter"},
		{"GET", "/v1/bridge/withdrawals?since", 400, "malformed query parameter"},
		{"GET", "/v1/bridge/withdrawals?since_id=" + hash, 400, "since_id needs since"},
		{"GET", "/v1/bridge/withdrawals?since_id=0x12&since=1", 400, "bad since_id"},
		{"GET", fmt.Sprintf("/v1/bridge/withdrawals?since=%d&since_id=%s", tick-1, hash), 400, "not a withdrawal of the batch"},
		{"GET", fmt.Sprintf("/v1/bridge/withdrawals?since=%d&since_id=%s", tick, common.Hash{0xee}.Hex()), 400, "not a withdrawal of the batch"},
		{"GET", "/v1/bridge/config?x=1", 400, "unknown query parameter"},
		{"GET", "/v1/bridge/withdrawals/by-id/" + hash + "?limit=1", 400, "unknown query parameter"},
	}
	for _, c := range cases {
		status, resp, body := restGet(t, tn, c.method, c.path)
		var e struct {
			Error string `json:"error"`
		}
		if status != c.status || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error, c.msg) {
			t.Errorf("%s %s: %d %s, want %d with %q", c.method, c.path, status, body, c.status, c.msg)
		}
		if allow := resp.Header.Get("Allow"); (status == 405) != (allow == "GET, HEAD") {
			t.Errorf("%s %s: Allow %q", c.method, c.path, allow)
		}
	}
	get := restOK(t, tn, "/v1/bridge/withdrawals/by-id/"+hash)
	status, resp, body := restGet(t, tn, "HEAD", "/v1/bridge/withdrawals/by-id/"+hash)
	if status != 200 || len(body) != 0 || resp.ContentLength != int64(len(get)) {
		t.Fatalf("HEAD: %d, %d bytes, Content-Length %d; GET has %d bytes", status, len(body), resp.ContentLength, len(get))
	}
	// JSON-RPC over POST elsewhere is untouched.
	var id hexutil.Uint64
	if err := tn.rpc.CallContext(context.Background(), &id, "eth_chainId"); err != nil || id != chainID {
		t.Fatalf("eth_chainId %v %v", id, err)
	}
}

// TestBridgeChannelMatchesREST: svc_withdrawals carries, for a batch, the
// very bytes the REST listing serves for it, all accounts and one account,
// live and caught up from since.
func TestBridgeChannelMatchesREST(t *testing.T) {
	tn := bridgeNode(t)
	c := tn.dialWS(t)
	allCh, allSub := tn.ethSubscribe(t, c, "svc_withdrawals", map[string]any{})
	oneCh, oneSub := tn.ethSubscribe(t, c, "svc_withdrawals", map[string]any{"account": devAddr(1)})
	tn.okRow(t, 1, 0)
	tn.poorRow(t, 2, 1)
	tn.okRow(t, 3, 1)
	tn.tick(t)
	tick := tn.node.LastTickUs()
	since := fmt.Sprintf("?since=%d", tick-1)
	if got, want := recv(t, allCh, allSub), restOK(t, tn, "/v1/bridge/withdrawals"+since); !bytes.Equal(got, want) {
		t.Fatalf("channel %s\nREST %s", got, want)
	}
	if got, want := recv(t, oneCh, oneSub), restOK(t, tn, "/v1/bridge/withdrawals/"+devAddr(1).Hex()+since); !bytes.Equal(got, want) {
		t.Fatalf("account channel %s\nREST %s", got, want)
	}
	// A late subscriber catches up from since: the same bytes again.
	lateCh, lateSub := tn.ethSubscribe(t, tn.dialWS(t), "svc_withdrawals", map[string]any{"since": tick - 1})
	if got, want := recv(t, lateCh, lateSub), restOK(t, tn, "/v1/bridge/withdrawals"+since); !bytes.Equal(got, want) {
		t.Fatalf("caught-up channel %s\nREST %s", got, want)
	}
}

type byID struct {
	Withdrawal update                     `json:"withdrawal"`
	Status     string                     `json:"status"`
	Proof      map[string]json.RawMessage `json:"proof"`
}

// waitByID polls the by-id endpoint until status is want.
func waitByID(t *testing.T, tn *testNode, h common.Hash, want string) (byID, []byte) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, _, body := restGet(t, tn, "GET", "/v1/bridge/withdrawals/by-id/"+h.Hex())
		var got byID
		if status == 200 && json.Unmarshal(body, &got) == nil && got.Status == want {
			return got, body
		}
		if time.Now().After(deadline) {
			t.Fatalf("by-id %s: %d %s, want status %q", h.Hex(), status, body, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// verifyWireProof checks a claim proof object from the wire with
// claim.Verify against the e2e committee, over the hash recomputed here.
func verifyWireProof(t *testing.T, p map[string]json.RawMessage, txHash common.Hash, to, token core.Address, amount uint64) {
	t.Helper()
	var got struct {
		Amount    *hexutil.Big   `json:"amount"`
		To        common.Address `json:"to"`
		Token     common.Address `json:"token"`
		Proof     []byte         `json:"-"`
		Aux       []int          `json:"aux_tx_suffix"`
		ClaimHash common.Hash    `json:"claim_hash"`
	}
	var proof []int
	raw, _ := json.Marshal(p)
	if err := json.Unmarshal(raw, &got); err != nil || json.Unmarshal(p["proof"], &proof) != nil {
		t.Fatalf("proof %s: %v", raw, err)
	}
	b := make([]byte, len(proof))
	for i, v := range proof {
		b[i] = byte(v)
	}
	aux := make([]byte, len(got.Aux))
	for i, v := range got.Aux {
		aux[i] = byte(v)
	}
	want := claim.Hash(claim.Domain(chainID, 1), core.BridgeAddress, token, to, uint256.NewInt(amount), txHash[:])
	if got.ClaimHash != want || !bytes.Equal(aux, txHash[:]) || got.Amount.ToInt().Uint64() != amount ||
		got.To != common.Address(to) || got.Token != common.Address(token) {
		t.Fatalf("proof %s, want claim hash %x", raw, want)
	}
	c := attest.NewCommittee([]byte("e2e"), 4, 0)
	if err := claim.Verify(want, b, c.Members, c.F); err != nil {
		t.Fatalf("proof does not verify: %v", err)
	}
}

// TestBridgeClaimProof: a withdrawal is pending (no proof, null from
// svc_getBridgeClaimProof) while two of four validators are silent (fewer
// than n − f sign: admin_setValidatorFaults), then claimable with a proof
// that verifies once they sign again; both reads carry the same proof.
func TestBridgeClaimProof(t *testing.T) {
	tn := bridgeNode(t)
	h := tn.okRow(t, 1, 0)
	var proof json.RawMessage
	if err := tn.rpc.CallContext(context.Background(), &proof, "svc_getBridgeClaimProof", h); err != nil || string(proof) != "null" {
		t.Fatalf("withdrawal waiting for its batch: proof %s (%v)", proof, err)
	}
	refused := tn.poorRow(t, 2, 0)
	tn.adminFaults("admin_setValidatorFaults", map[string]any{"silent": 2})
	tn.tick(t)
	pending, body := waitByID(t, tn, h, node.StatusPending)
	if pending.Proof != nil || bytes.Contains(body, []byte(`"proof"`)) || pending.Withdrawal.TxHash != h {
		t.Fatalf("pending: %s", body)
	}
	time.Sleep(2 * node.ClaimRetryEvery) // the claimer looked again, and still may not sign
	if err := tn.rpc.CallContext(context.Background(), &proof, "svc_getBridgeClaimProof", h); err != nil || string(proof) != "null" {
		t.Fatalf("pending withdrawal's proof %s (%v)", proof, err)
	}
	waitByID(t, tn, h, node.StatusPending)
	waitByID(t, tn, refused, node.StatusRefused)
	tn.adminFaults("admin_setValidatorFaults", map[string]any{})
	claimable, _ := waitByID(t, tn, h, node.StatusClaimable)
	verifyWireProof(t, claimable.Proof, h, core.Address{0x70, 1}, core.NativeToken, 1e6)
	if err := tn.rpc.CallContext(context.Background(), &proof, "svc_getBridgeClaimProof", h); err != nil {
		t.Fatal(err)
	}
	var fromRPC map[string]json.RawMessage
	if err := json.Unmarshal(proof, &fromRPC); err != nil || fmt.Sprint(fromRPC) != fmt.Sprint(claimable.Proof) {
		t.Fatalf("svc_getBridgeClaimProof %s, by-id %v", proof, claimable.Proof)
	}
}

var withdrawABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[{"type":"function","name":"withdraw","inputs":[{"name":"token","type":"address"},
		{"name":"recipient","type":"address"},{"name":"amount","type":"uint256"},{"name":"deadline","type":"uint128"}]}]`))
	if err != nil {
		panic(err)
	}
	return a
}()

// TestBridgeWithdrawOverTheWire: a real withdraw transaction is 404 by id
// until its batch executes, then claimable with a proof that verifies.
func TestBridgeWithdrawOverTheWire(t *testing.T) {
	tn := bridgeNode(t)
	key := node.DevKey(3)
	to := common.Address{0x70, 0x42}
	data, err := withdrawABI.Pack("withdraw", common.Address(core.NativeToken), to, big.NewInt(2e18), tn.nextDeadline())
	if err != nil {
		t.Fatal(err)
	}
	bridge := common.Address(core.BridgeAddress)
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(chainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chainID), GasFeeCap: gwei, GasTipCap: new(big.Int), Gas: core.TxGas, To: &bridge, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if err := tn.eth.SendTransaction(context.Background(), tx); err != nil {
		t.Fatalf("withdraw refused: %v (%v)", err, errorData(err))
	}
	tn.waitReceipt(tx.Hash())
	if status, _, body := restGet(t, tn, "GET", "/v1/bridge/withdrawals/by-id/"+tx.Hash().Hex()); status != 404 {
		t.Fatalf("accepted, not executed: %d %s", status, body)
	}
	tn.tick(t)
	got, _ := waitByID(t, tn, tx.Hash(), node.StatusClaimable)
	if got.Withdrawal.Withdrawer != devAddr(3) {
		t.Fatalf("row %+v", got.Withdrawal)
	}
	verifyWireProof(t, got.Proof, tx.Hash(), core.Address(to), core.NativeToken, 2e6)
}
