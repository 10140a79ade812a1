package abi

import (
	"bytes"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/ledgervenue/node/core/clob"
)

// The view selectors, which eth_call answers (net/rpc/call.go) and Decode
// refuses: keccak256("balanceOf(address,address)") and
// keccak256("withdrawableBalance(address,address)"), first four bytes.
const (
	selBalanceOfView           uint32 = 0xf7888aec
	selWithdrawableBalanceView uint32 = 0x3bbe1ecd
)

// jsonMethods is every function OrderbookJSON declares, keyed by its
// canonical signature: the decoder's selector constant, and the
// stateMutability and return type it must declare.
var jsonMethods = map[string]struct {
	selector   uint32
	mutability string
	output     string // "" for none
}{
	"submitOrder(bytes32,int256,uint256,uint8,uint128,uint128,uint8)":                     {selSubmitOrder, "nonpayable", ""},
	"submitOrder(bytes32,int256,uint256,uint8,uint128,uint128,bool,bool)":                 {selSubmitOrderDeprecated, "nonpayable", ""},
	"cancel(bytes32,bytes32,uint128)":                                                     {selCancel, "nonpayable", ""},
	"update(bytes32,bytes32,uint256,uint256,address,uint128)":                             {selUpdate, "nonpayable", ""},
	"transfer(address,address,uint256,uint128)":                                           {selTransfer, "nonpayable", ""},
	"deposit(address,address,uint256,uint128)":                                            {selDeposit, "nonpayable", ""},
	"submitBatch(bytes[])":                                                                {selSubmitBatch, "nonpayable", ""},
	"delegated(address,uint64,bytes,bytes)":                                               {selDelegated, "nonpayable", ""},
	"submitTrigger(bytes32,int256,uint256,uint256,uint8,uint8,uint128,uint128,bool,bool)": {selSubmitTrigger, "nonpayable", ""},
	"cancelTrigger(bytes32,bytes32,uint128)":                                              {selCancelTrigger, "nonpayable", ""},
	"updateTrigger(bytes32,bytes32,int256,uint256,uint256,uint128)":                       {selUpdateTrigger, "nonpayable", ""},
	"balanceOf(address,address)":                                                          {selBalanceOfView, "view", "int256"},
	"withdrawableBalance(address,address)":                                                {selWithdrawableBalanceView, "view", "uint256"},
}

// TestOrderbookJSONMethods: the JSON declares exactly the decoder's calls
// and the two views, each with the selector the package uses.
func TestOrderbookJSONMethods(t *testing.T) {
	if len(orderbookABI.Methods) != len(jsonMethods) {
		t.Errorf("OrderbookJSON has %d functions, want %d", len(orderbookABI.Methods), len(jsonMethods))
	}
	seen := map[string]bool{}
	for name, m := range orderbookABI.Methods {
		want, ok := jsonMethods[m.Sig]
		if !ok {
			t.Errorf("%s: %s is not a function the venue runs", name, m.Sig)
			continue
		}
		seen[m.Sig] = true
		if got := selectorOf(m.ID); got != want.selector {
			t.Errorf("%s: selector 0x%08x, the package's constant 0x%08x", m.Sig, got, want.selector)
		}
		if m.StateMutability != want.mutability {
			t.Errorf("%s: stateMutability %q, want %q", m.Sig, m.StateMutability, want.mutability)
		}
		var out string
		if len(m.Outputs) == 1 {
			out = m.Outputs[0].Type.String()
		}
		if len(m.Outputs) > 1 || out != want.output {
			t.Errorf("%s: outputs %v, want %q", m.Sig, m.Outputs, want.output)
		}
	}
	for sig := range jsonMethods {
		if !seen[sig] {
			t.Errorf("OrderbookJSON lacks %s", sig)
		}
	}
}

// TestViewSelectors recomputes the view selectors from their signatures.
func TestViewSelectors(t *testing.T) {
	for sig, want := range map[string]uint32{
		"balanceOf(address,address)":           selBalanceOfView,
		"withdrawableBalance(address,address)": selWithdrawableBalanceView,
	} {
		if got := selectorOf(crypto.Keccak256([]byte(sig))); got != want {
			t.Errorf("%s: selector 0x%08x, constant 0x%08x", sig, got, want)
		}
	}
}

// TestOrderbookJSONViewsRefused: the views are eth_call's, not transactions:
// the decoder refuses them as it refuses any unknown function.
func TestOrderbookJSONViewsRefused(t *testing.T) {
	for _, name := range []string{"balanceOf", "withdrawableBalance"} {
		data, err := orderbookABI.Pack(name, common.Address{19: 1}, common.Address{19: 2})
		if err != nil {
			t.Fatal(err)
		}
		var env clob.Envelope
		if r := Decode(data, testChainID, testSigner, &env); r != clob.ReasonUnknownFunction {
			t.Errorf("Decode(%s) = %q, want %q", name, r, clob.ReasonUnknownFunction)
		}
	}
}

// jsonPack packs method by the name a client uses, taking each argument
// from args by the parameter name the JSON declares: a renamed or missing
// parameter fails here, a reordered one fails the decode.
func jsonPack(t *testing.T, method string, args map[string]any) []byte {
	t.Helper()
	m, ok := orderbookABI.Methods[method]
	if !ok {
		t.Fatalf("OrderbookJSON has no method %s", method)
	}
	if len(m.Inputs) != len(args) {
		t.Fatalf("%s: %d inputs in the JSON, %d arguments", m.Sig, len(m.Inputs), len(args))
	}
	vals := make([]any, len(m.Inputs))
	for i, in := range m.Inputs {
		v, ok := args[in.Name]
		if !ok {
			t.Fatalf("%s: parameter %q is not one of the documented names", m.Sig, in.Name)
		}
		vals[i] = v
	}
	data, err := orderbookABI.Pack(method, vals...)
	if err != nil {
		t.Fatalf("pack %s: %v", m.Sig, err)
	}
	return data
}

func submitArgs(in *clob.Intent) map[string]any {
	return map[string]any{
		"orderbookId": [32]byte(in.Book), "size": signedSize(in), "price": big256(&in.Price),
		"orderType": uint8(in.Type), "deadline": bigU64(in.Deadline), "ttl": bigU64(in.TTL),
	}
}

// TestOrderbookJSONPackDecode packs every intent function from OrderbookJSON
// by name, as a client would, and decodes it: the envelope carries exactly
// the arguments.
func TestOrderbookJSONPackDecode(t *testing.T) {
	submit := sampleSubmit(sampleDeadline)
	submit.Flags = clob.FlagIOC | clob.FlagPostOnly
	buy := sampleSubmit(sampleDeadline)
	buy.Side, buy.Type, buy.Flags = clob.Buy, clob.Market, clob.FlagReduceOnly
	cancel := sampleCancel(sampleDeadline)
	update := sampleUpdate(sampleDeadline)
	transfer := sampleTransfer(sampleDeadline)

	args := submitArgs(&submit)
	args["flags"] = submit.Flags
	submitCall := jsonPack(t, "submitOrder", args)

	args = submitArgs(&buy)
	args["reduceOnly"], args["ioc"] = true, false
	deprecatedCall := jsonPack(t, "submitOrder0", args)

	cancelCall := jsonPack(t, "cancel", map[string]any{
		"orderbookId": [32]byte(cancel.Book), "orderId": [32]byte(cancel.OrderID), "deadline": bigU64(cancel.Deadline)})
	updateCall := jsonPack(t, "update", map[string]any{
		"orderbookId": [32]byte(update.Book), "orderId": [32]byte(update.OrderID), "newSize": big256(&update.Size),
		"newPrice": big256(&update.Price), "token": common.Address(update.Token), "deadline": bigU64(update.Deadline)})
	transferCall := jsonPack(t, "transfer", map[string]any{
		"token": common.Address(transfer.Token), "to": common.Address(transfer.To),
		"amount": big256(&transfer.Amount), "deadline": bigU64(transfer.Deadline)})

	deposit := sampleTransfer(sampleDeadline)
	deposit.To = clob.Address{19: 0x77}
	depositCall := jsonPack(t, "deposit", map[string]any{
		"token": common.Address(deposit.Token), "recipient": common.Address(deposit.To),
		"amount": big256(&deposit.Amount), "deadline": bigU64(deposit.Deadline)})

	trig := sampleSubmitTrigger(sampleDeadline)
	trig.Flags = clob.FlagIOC
	trigCall := jsonPack(t, "submitTrigger", map[string]any{
		"orderbookId": [32]byte(trig.Book), "size": signedSize(&trig), "limitPrice": big256(&trig.Price),
		"triggerPrice": big256(&trig.TriggerPrice), "triggerType": trig.TriggerType, "grouping": trig.Grouping,
		"deadline": bigU64(trig.Deadline), "ttl": bigU64(trig.TTL), "reduceOnly": false, "ioc": true})
	cancelTrig := sampleCancelTrigger(sampleDeadline)
	cancelTrigCall := jsonPack(t, "cancelTrigger", map[string]any{
		"orderbookId": [32]byte(cancelTrig.Book), "triggerId": [32]byte(cancelTrig.OrderID), "deadline": bigU64(cancelTrig.Deadline)})
	updateTrig := sampleUpdateTrigger(sampleDeadline)
	updateTrigCall := jsonPack(t, "updateTrigger", map[string]any{
		"orderbookId": [32]byte(updateTrig.Book), "triggerId": [32]byte(updateTrig.OrderID), "size": signedSize(&updateTrig),
		"limitPrice": big256(&updateTrig.Price), "triggerPrice": big256(&updateTrig.TriggerPrice),
		"deadline": bigU64(updateTrig.Deadline)})

	batch := []clob.Intent{submit, buy, cancel, update, transfer, deposit, trig, cancelTrig, updateTrig}
	inner := [][]byte{submitCall, deprecatedCall, cancelCall, updateCall, transferCall, depositCall, trigCall, cancelTrigCall, updateTrigCall}
	batchCall := jsonPack(t, "submitBatch", map[string]any{"inner": inner})

	master := keyAddress(testMaster)
	validUntil := uint64(sampleDeadline + 3_600_000_000)
	sig := signDelegation(t, testMaster, testChainID, testSigner, validUntil)
	delegatedCall := jsonPack(t, "delegated", map[string]any{
		"master": common.Address(master), "validUntil": validUntil, "signature": sig, "inner": batchCall})
	// Delegated, a deposit's recipient is the master whatever the call names.
	delegatedBatch := append([]clob.Intent(nil), batch...)
	delegatedBatch[5].To = master
	delegatedDeposit := deposit
	delegatedDeposit.To = master
	delegatedDepositCall := jsonPack(t, "delegated", map[string]any{
		"master": common.Address(master), "validUntil": validUntil, "signature": sig, "inner": depositCall})

	for _, c := range []struct {
		name string
		data []byte
		want clob.Envelope
		ours []byte
	}{
		{"submitOrder", submitCall, clob.Envelope{Intents: []clob.Intent{submit}}, AppendSubmitOrder(nil, &submit)},
		{"submitOrder0", deprecatedCall, clob.Envelope{Intents: []clob.Intent{buy}}, AppendSubmitOrderDeprecated(nil, &buy)},
		{"cancel", cancelCall, clob.Envelope{Intents: []clob.Intent{cancel}}, AppendCancel(nil, &cancel)},
		{"update", updateCall, clob.Envelope{Intents: []clob.Intent{update}}, AppendUpdate(nil, &update)},
		{"transfer", transferCall, clob.Envelope{Intents: []clob.Intent{transfer}}, AppendTransfer(nil, &transfer)},
		{"deposit", depositCall, clob.Envelope{Intents: []clob.Intent{deposit}}, AppendDeposit(nil, &deposit)},
		{"submitTrigger", trigCall, clob.Envelope{Intents: []clob.Intent{trig}}, AppendSubmitTrigger(nil, &trig)},
		{"cancelTrigger", cancelTrigCall, clob.Envelope{Intents: []clob.Intent{cancelTrig}}, AppendCancelTrigger(nil, &cancelTrig)},
		{"updateTrigger", updateTrigCall, clob.Envelope{Intents: []clob.Intent{updateTrig}}, AppendUpdateTrigger(nil, &updateTrig)},
		{"submitBatch", batchCall, clob.Envelope{Intents: batch}, AppendSubmitBatch(nil, inner)},
		{"delegated", delegatedCall, clob.Envelope{Intents: delegatedBatch, Delegated: true, Master: master, ValidUntil: validUntil},
			AppendDelegated(nil, master, validUntil, sig, batchCall)},
		{"delegated deposit", delegatedDepositCall,
			clob.Envelope{Intents: []clob.Intent{delegatedDeposit}, Delegated: true, Master: master, ValidUntil: validUntil},
			AppendDelegated(nil, master, validUntil, sig, depositCall)},
	} {
		t.Run(c.name, func(t *testing.T) { checkDecode(t, c.data, &c.want, c.ours) })
	}
}

// TestOrderbookJSONViewOutputs unpacks the views' return words as eth_call
// returns them: balanceOf is signed, withdrawableBalance unsigned.
func TestOrderbookJSONViewOutputs(t *testing.T) {
	word := bytes.Repeat([]byte{0xff}, 32) // -1 as int256, 2^256-1 as uint256
	f := func(method, want string) {
		t.Helper()
		vals, err := orderbookABI.Unpack(method, word)
		if err != nil {
			t.Fatal(err)
		}
		if got := vals[0].(*big.Int).String(); got != want {
			t.Errorf("%s: %s, want %s", method, got, want)
		}
	}
	f("balanceOf", "-1")
	f("withdrawableBalance", new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)).String())
}

// TestOrderbookJSONParses: every entry of the file is a function or an
// event (no constructor, fallback, receive or error: the venue runs none),
// and go-ethereum reads every one of them.
func TestOrderbookJSONParses(t *testing.T) {
	var entries []struct{ Type string }
	if err := json.Unmarshal([]byte(OrderbookJSON), &entries); err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		if e.Type != "function" && e.Type != "event" {
			t.Errorf("entry %d has type %q", i, e.Type)
		}
	}
	if n := len(orderbookABI.Methods) + len(orderbookABI.Events); n != len(entries) {
		t.Errorf("%d entries in the file, go-ethereum read %d functions and %d events",
			len(entries), len(orderbookABI.Methods), len(orderbookABI.Events))
	}
}
