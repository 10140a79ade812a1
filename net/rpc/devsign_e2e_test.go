package rpc_test

import (
	"context"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/ethtx"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	obabi "github.com/ledgervenue/node/core/clob/abi"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/rpc"
)

// Dev accounts signing for the client (devsign.go, docs/signing.md),
// through go-ethereum's rpc client over HTTP and WebSocket.

func TestDevAccounts(t *testing.T) {
	tn := startDevNode(t)
	for _, nc := range tn.clients(t) {
		name, c := nc.name, nc.c
		var got []common.Address
		if err := c.Call(&got, "eth_accounts"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(node.DevKeys) {
			t.Fatalf("%s: %d accounts, want %d", name, len(got), len(node.DevKeys))
		}
		for i, a := range got {
			if a != devAddr(i) {
				t.Errorf("%s: account %d is %s, want %s", name, i, a, devAddr(i))
			}
		}
	}
	// Outside --dev the node holds no key.
	var got []common.Address
	if err := startNode(t).rpc.Call(&got, "eth_accounts"); err != nil || len(got) != 0 {
		t.Fatalf("eth_accounts outside --dev: %v %v, want []", got, err)
	}
}

// TestDevSendTransaction sends a transfer and an orderbook call from dev
// accounts over each transport and follows them to their receipts.
func TestDevSendTransaction(t *testing.T) {
	tn := startDevNode(t)
	ctx := context.Background()
	i := 0
	for _, nc := range tn.clients(t) {
		name, c := nc.name, nc.c
		from, to := devAddr(i), devAddr(9-i)
		i++
		before, err := tn.eth.BalanceAt(ctx, to, nil)
		if err != nil {
			t.Fatal(err)
		}
		value := eth(3)
		var h common.Hash
		if err := c.Call(&h, "eth_sendTransaction", map[string]any{"from": from, "to": to, "value": (*hexutil.Big)(value)}); err != nil {
			t.Fatalf("%s: transfer: %v", name, err)
		}
		if r := tn.waitReceipt(h); r.Status != 1 {
			t.Fatalf("%s: transfer receipt status %d", name, r.Status)
		}
		tx, _, err := tn.eth.TransactionByHash(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		// Filled as documented: EIP-1559, nonce 0, gas 21000, fee cap the
		// base fee (1 gwei), no tip, the node's chain id.
		if sender, _ := types.Sender(types.LatestSignerForChainID(big.NewInt(chainID)), tx); sender != from ||
			tx.Type() != types.DynamicFeeTxType || tx.Nonce() != 0 || tx.Gas() != core.TxGas ||
			tx.GasFeeCap().Cmp(gwei) != 0 || tx.GasTipCap().Sign() != 0 || tx.ChainId().Int64() != chainID {
			t.Fatalf("%s: sent %+v from %s", name, tx, sender)
		}
		after, _ := tn.eth.BalanceAt(ctx, to, nil)
		if new(big.Int).Sub(after, before).Cmp(value) != 0 {
			t.Fatalf("%s: recipient got %s, want %s", name, new(big.Int).Sub(after, before), value)
		}

		// An orderbook call with calldata from core/clob/abi: buy 0.001 WETH at 2000.
		in := clob.Intent{Kind: clob.IntentSubmit, Book: clob.Hash(wethBook), Side: clob.Buy,
			Deadline: tn.nextDeadline().Uint64(), TTL: 60_000_000}
		in.Size.SetUint64(1e15)
		in.Price.Mul(uint256.NewInt(2000), uint256.NewInt(1e18))
		if err := c.Call(&h, "eth_sendTransaction", map[string]any{"from": from, "to": orderbookAddr,
			"data": hexutil.Bytes(obabi.AppendSubmitOrder(nil, &in))}); err != nil {
			t.Fatalf("%s: orderbook call: %v (%v)", name, err, errorData(err))
		}
		if r := tn.waitReceipt(h); r.Status != 1 || len(r.Logs) == 0 {
			t.Fatalf("%s: order receipt status %d with %d logs, want 1 and its admission log", name, r.Status, len(r.Logs))
		}
		var orders json.RawMessage
		if err := c.Call(&orders, "ob_getOrders", from, map[string]any{}); err != nil || !strings.Contains(string(orders), `"tx_hash":"`+h.Hex()) {
			t.Fatalf("%s: ob_getOrders after the call: %s %v, want the order of %s", name, orders, err, h)
		}
	}
}

// TestDevSendTransactionConcurrent: sends from one dev account that overlap
// each get the next nonce (the account's sends run one at a time), as
// anvil's pool allows; without that the second would be refused.
func TestDevSendTransactionConcurrent(t *testing.T) {
	tn := startDevNode(t)
	const sends = 4
	var wg sync.WaitGroup
	hashes, errs := make([]common.Hash, sends), make([]error, sends)
	for k := range sends {
		wg.Go(func() {
			errs[k] = tn.rpc.Call(&hashes[k], "eth_sendTransaction", map[string]any{"from": devAddr(2), "to": devAddr(3), "value": "0x1"})
		})
	}
	wg.Wait()
	nonces := map[uint64]bool{}
	for k := range sends {
		if errs[k] != nil {
			t.Fatalf("send %d: %v (%v)", k, errs[k], errorData(errs[k]))
		}
		tx, _, err := tn.eth.TransactionByHash(context.Background(), hashes[k])
		if err != nil {
			t.Fatal(err)
		}
		nonces[tx.Nonce()] = true
	}
	if len(nonces) != sends {
		t.Fatalf("nonces %v, want %d distinct", nonces, sends)
	}
}

// signTx asks eth_signTransaction for args and decodes the answer.
func signTx(t *testing.T, tn *testNode, args map[string]any) *types.Transaction {
	t.Helper()
	var raw hexutil.Bytes
	if err := tn.rpc.Call(&raw, "eth_signTransaction", args); err != nil {
		t.Fatalf("eth_signTransaction %v: %v (%v)", args, err, errorData(err))
	}
	tx, err := ethtx.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if from, err := ethtx.Sender(tx); err != nil || common.Address(from) != args["from"] {
		t.Fatalf("signed by %x (%v), want %s", from, err, args["from"])
	}
	return tx
}

// TestDevSignTransactionFill: the type follows the fee fields given, and
// what is left out is filled as documented; nothing is sent.
func TestDevSignTransactionFill(t *testing.T) {
	tn := startDevNode(t)
	from, to := devAddr(4), devAddr(5)
	al := types.AccessList{{Address: to, StorageKeys: []common.Hash{{1}}}}
	for _, tc := range []struct {
		name        string
		args        map[string]any
		typ         uint8
		feeCap, tip int64
		gas, nonce  uint64
	}{
		{"defaults", map[string]any{}, types.DynamicFeeTxType, 1e9, 0, core.TxGas, 0},
		{"tip only", map[string]any{"maxPriorityFeePerGas": "0x5"}, types.DynamicFeeTxType, 1e9 + 5, 5, core.TxGas, 0},
		{"gasPrice", map[string]any{"gasPrice": "0x77359400"}, types.LegacyTxType, 2e9, 2e9, core.TxGas, 0},
		{"gasPrice with access list", map[string]any{"gasPrice": "0x77359400", "accessList": al}, types.AccessListTxType, 2e9, 2e9, core.TxGas, 0},
		{"type 0", map[string]any{"type": "0x0"}, types.LegacyTxType, 1e9, 1e9, core.TxGas, 0},
		{"given gas and nonce", map[string]any{"gas": "0x7530", "nonce": "0x7"}, types.DynamicFeeTxType, 1e9, 0, 30000, 7},
	} {
		tc.args["from"], tc.args["to"] = from, to
		tx := signTx(t, tn, tc.args)
		if tx.Type() != tc.typ || tx.GasFeeCap().Int64() != tc.feeCap || tx.GasTipCap().Int64() != tc.tip ||
			tx.Gas() != tc.gas || tx.Nonce() != tc.nonce || tx.ChainId().Int64() != chainID || *tx.To() != to {
			t.Errorf("%s: type %d fee cap %s tip %s gas %d nonce %d chain %s", tc.name, tx.Type(), tx.GasFeeCap(), tx.GasTipCap(),
				tx.Gas(), tx.Nonce(), tx.ChainId())
		}
		if tc.typ == types.AccessListTxType && len(tx.AccessList()) != 1 {
			t.Errorf("%s: access list %v", tc.name, tx.AccessList())
		}
	}
	if n, _ := tn.eth.NonceAt(context.Background(), from, nil); n != 0 {
		t.Fatalf("eth_signTransaction sent: nonce %d", n)
	}
	// A signed transaction sends as any other.
	tx := signTx(t, tn, map[string]any{"from": from, "to": to, "value": "0x10"})
	if err := tn.eth.SendTransaction(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	tn.waitReceipt(tx.Hash())
}

// recovers reports whether sig (v 27 or 28) over hash recovers to a.
func recovers(t *testing.T, hash []byte, sig hexutil.Bytes, a common.Address) {
	t.Helper()
	if len(sig) != 65 || sig[64] != 27 && sig[64] != 28 {
		t.Fatalf("signature %x: want 65 bytes ending in v 27 or 28", sig)
	}
	s := append([]byte(nil), sig...)
	s[64] -= 27
	pub, err := crypto.SigToPub(hash, s)
	if err != nil || crypto.PubkeyToAddress(*pub) != a {
		t.Fatalf("signature recovers to %v (%v), want %s", pub, err, a)
	}
}

func TestDevSignMessages(t *testing.T) {
	tn := startDevNode(t)
	msg := []byte("hello ledgerd")
	for _, nc := range tn.clients(t) {
		name, c := nc.name, nc.c
		var sig hexutil.Bytes
		if err := c.Call(&sig, "eth_sign", devAddr(1), hexutil.Bytes(msg)); err != nil {
			t.Fatalf("%s eth_sign: %v", name, err)
		}
		recovers(t, accounts.TextHash(msg), sig, devAddr(1))
		var psig hexutil.Bytes
		if err := c.Call(&psig, "personal_sign", hexutil.Bytes(msg), devAddr(1)); err != nil {
			t.Fatalf("%s personal_sign: %v", name, err)
		}
		if string(psig) != string(sig) {
			t.Fatalf("%s: personal_sign %x, eth_sign %x: the same message, the same signature", name, psig, sig)
		}
	}
}

// mail is EIP-712's example typed data.
func mail() apitypes.TypedData {
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {{Name: "name", Type: "string"}, {Name: "version", Type: "string"},
				{Name: "chainId", Type: "uint256"}, {Name: "verifyingContract", Type: "address"}},
			"Person": {{Name: "name", Type: "string"}, {Name: "wallet", Type: "address"}},
			"Mail":   {{Name: "from", Type: "Person"}, {Name: "to", Type: "Person"}, {Name: "contents", Type: "string"}},
		},
		PrimaryType: "Mail",
		Domain: apitypes.TypedDataDomain{Name: "Ether Mail", Version: "1", ChainId: math.NewHexOrDecimal256(chainID),
			VerifyingContract: "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},
		Message: apitypes.TypedDataMessage{
			"from":     map[string]any{"name": "Cow", "wallet": "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"},
			"to":       map[string]any{"name": "Bob", "wallet": "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"},
			"contents": "Hello, Bob!",
		},
	}
}

func TestDevSignTypedData(t *testing.T) {
	tn := startDevNode(t)
	td := mail()
	hash, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := json.Marshal(td)
	noDomainType := mail()
	delete(noDomainType.Types, "EIP712Domain")
	for _, nc := range tn.clients(t) {
		name, c := nc.name, nc.c
		// As an object, as the JSON string ethers and viem send, and
		// without the EIP712Domain type (inferred from the domain).
		for form, arg := range map[string]any{"object": td, "string": string(text), "no EIP712Domain": noDomainType} {
			var sig hexutil.Bytes
			if err := c.Call(&sig, "eth_signTypedData_v4", devAddr(7), arg); err != nil {
				t.Fatalf("%s %s: %v (%v)", name, form, err, errorData(err))
			}
			recovers(t, hash, sig, devAddr(7))
		}
	}
}

// TestDevSignRefusals: outside --dev every signing method is refused with
// -32000 and the reason; under --dev an account that is not a dev account
// is named; bad or oversized parameters are -32602.
func TestDevSignRefusals(t *testing.T) {
	stranger := common.HexToAddress("0x000000000000000000000000000000000000dEaD")
	calls := func(from common.Address) map[string][]any {
		tx := map[string]any{"from": from, "to": devAddr(1), "value": "0x1"}
		return map[string][]any{
			"eth_sendTransaction":  {tx},
			"eth_signTransaction":  {tx},
			"eth_sign":             {from, "0x00"},
			"personal_sign":        {"0x00", from},
			"eth_signTypedData_v4": {from, mail()},
		}
	}
	plain := startNode(t)
	for method, args := range calls(devAddr(0)) {
		err := plain.rpc.Call(nil, method, args...)
		wantRPCError(t, err, -32000, "this node holds no keys: the dev accounts sign only under --dev; sign in the client and send with eth_sendRawTransaction", nil)
	}

	tn := startDevNode(t)
	for method, args := range calls(stranger) {
		err := tn.rpc.Call(nil, method, args...)
		wantRPCError(t, err, -32000, "unknown account "+stranger.Hex()+": only the dev accounts sign, the 10 of the standard test mnemonic that eth_accounts lists ("+devAddr(0).Hex()+", …)", nil)
	}

	big := func(n int) string { return "0x" + strings.Repeat("00", n) }
	for _, tc := range []struct {
		name   string
		method string
		args   []any
		data   string
	}{
		{"data over RawSizeMax", "eth_sendTransaction", []any{map[string]any{"from": devAddr(0), "to": devAddr(1), "data": big(ethtx.RawSizeMax + 1)}},
			"data larger than 131072 bytes, the largest raw transaction eth_sendRawTransaction accepts"},
		{"data and input differ", "eth_sendTransaction", []any{map[string]any{"from": devAddr(0), "to": devAddr(1), "data": "0x01", "input": "0x02"}},
			`both "data" and "input" are set and not equal`},
		{"gasPrice and maxFeePerGas", "eth_signTransaction", []any{map[string]any{"from": devAddr(0), "gasPrice": "0x1", "maxFeePerGas": "0x1"}},
			"both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified"},
		{"type 3", "eth_signTransaction", []any{map[string]any{"from": devAddr(0), "type": "0x3"}},
			"type: want 0x0 (legacy), 0x1 (EIP-2930) or 0x2 (EIP-1559), with the fee fields of that type"},
		{"not an object", "eth_sendTransaction", []any{"0x00"},
			"want a transaction object {from, to?, value?, data?, gas?, gasPrice? | maxFeePerGas?, maxPriorityFeePerGas?, nonce?, chainId?, type?, accessList?}"},
		{"typed data over TypedDataBytesMax", "eth_signTypedData_v4", []any{devAddr(0), `{"pad":"` + strings.Repeat("x", rpc.TypedDataBytesMax) + `"}`},
			"typed data larger than 65536 bytes"},
		{"typed data with too many fields", "eth_signTypedData_v4", []any{devAddr(0), wideTypes(rpc.TypedDataFieldsMax + 1)},
			"typed data has more than 256 fields in its types"},
		{"typed data with too many objects", "eth_signTypedData_v4", []any{devAddr(0), manyObjects(rpc.TypedDataObjectsMax + 1)},
			"typed data has more than 1024 objects in its message"},
		{"typed data not JSON", "eth_signTypedData_v4", []any{devAddr(0), "{"},
			"typed data: cannot parse JSON: cannot parse object: missing '}'; unparsed tail: \"\""},
	} {
		err := tn.rpc.Call(nil, tc.method, tc.args...)
		wantRPCError(t, err, -32602, "Invalid params", tc.data)
	}
}

// wideTypes is typed data whose one type has n uint256 fields, all zero.
func wideTypes(n int) apitypes.TypedData {
	td := apitypes.TypedData{Types: apitypes.Types{"EIP712Domain": {{Name: "name", Type: "string"}}},
		PrimaryType: "Wide", Domain: apitypes.TypedDataDomain{Name: "wide"}, Message: apitypes.TypedDataMessage{}}
	for i := range n {
		f := "f" + string(rune('a'+i%26)) + hexutil.EncodeUint64(uint64(i))
		td.Types["Wide"] = append(td.Types["Wide"], apitypes.Type{Name: f, Type: "uint256"})
		td.Message[f] = "0"
	}
	return td
}

// manyObjects is typed data whose message is an array of n structs.
func manyObjects(n int) apitypes.TypedData {
	td := apitypes.TypedData{Types: apitypes.Types{"EIP712Domain": {{Name: "name", Type: "string"}},
		"Item": {{Name: "v", Type: "uint8"}}, "List": {{Name: "items", Type: "Item[]"}}},
		PrimaryType: "List", Domain: apitypes.TypedDataDomain{Name: "many"}}
	items := make([]any, n-1)
	for i := range items {
		items[i] = map[string]any{"v": "1"}
	}
	td.Message = apitypes.TypedDataMessage{"items": items} // the message itself is one object
	return td
}

// TestDevSignTypedDataWorstCase: typed data at both bounds (the most
// fields, every one a struct re-checked per value, and the most objects)
// signs within a small time, on a worker.
func TestDevSignTypedDataWorstCase(t *testing.T) {
	tn := startDevNode(t)
	td := manyObjects(rpc.TypedDataObjectsMax)
	for i := range rpc.TypedDataFieldsMax - 3 { // the bound counts every type's fields
		td.Types["Pad"+hexutil.EncodeUint64(uint64(i))] = []apitypes.Type{{Name: "x", Type: "uint8"}}
	}
	start := time.Now()
	var sig hexutil.Bytes
	if err := tn.rpc.Call(&sig, "eth_signTypedData_v4", devAddr(0), td); err != nil {
		t.Fatalf("%v (%v)", err, errorData(err))
	}
	hash, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatal(err)
	}
	recovers(t, hash, sig, devAddr(0))
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("typed data at the bounds took %v", d)
	}
	t.Logf("typed data at the bounds (%d fields, %d objects) signed in %v", rpc.TypedDataFieldsMax, rpc.TypedDataObjectsMax,
		time.Since(start).Round(time.Millisecond))
}

// FuzzDevSignParams posts the signing methods with fuzzed params to a --dev
// node: whatever they hold (typed data go-ethereum's encoder chokes on
// included), the answer is one JSON-RPC response with a spec code, as
// FuzzMethodParams checks for every method outside --dev.
func FuzzDevSignParams(f *testing.F) {
	methods := []string{"eth_sendTransaction", "eth_signTransaction", "eth_sign", "personal_sign", "eth_signTypedData_v4"}
	td, _ := json.Marshal(mail())
	tdString, _ := json.Marshal(string(td))
	from := `"` + devAddr(0).Hex() + `"`
	for i := range methods {
		for _, p := range []string{`[]`, `{}`, `null`, `[` + from + `,"0x00"]`, `["0x00",` + from + `]`,
			`[` + from + `,` + string(td) + `]`, `[` + from + `,` + string(tdString) + `]`,
			`[{"from":` + from + `,"to":` + from + `,"value":"0x1","gasPrice":"0x3b9aca00","accessList":[{"address":` + from + `,"storageKeys":[]}]}]`,
			`[{"from":` + from + `,"type":"0x1","maxFeePerGas":"0x1"}]`} {
			f.Add(uint8(i), []byte(p))
		}
	}
	f.Add(uint8(4), []byte(`[`+from+`,{"types":{"EIP712Domain":[],"A":[{"name":"x","type":"uint8[2]"}]},"primaryType":"A","domain":{"name":"d"},"message":{"x":[1]}}]`))
	tn := startNodeWith(f, nodeSetup{rpc: func(c *rpc.Config) { c.Dev = true }})
	f.Fuzz(func(t *testing.T, m uint8, params []byte) {
		method := methods[int(m)%len(methods)]
		body := `{"jsonrpc":"2.0","id":7,"method":` + strconv.Quote(method) + `,"params":` + string(params) + `}`
		checkResponse(t, body, post(t, tn.url, body))
	})
}
