package core

import (
	"math/big"
	"reflect"
	"strings"
	"testing"

	gethabi "github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

// This test lives in core, not core/clob/abi, because core imports that
// package: the Topic constants cannot be reached from there.

func orderbookEvents(t *testing.T) gethabi.ABI {
	t.Helper()
	ob, err := gethabi.JSON(strings.NewReader(abi.OrderbookJSON))
	if err != nil {
		t.Fatal(err)
	}
	return ob
}

// TestOrderbookJSONEventTopics: every event of abi.OrderbookJSON has the
// topic0 this package logs, and every logged topic has its event.
func TestOrderbookJSONEventTopics(t *testing.T) {
	topics := map[string]Hash{
		"OrderSubmitted":    TopicOrderSubmitted,
		"CancelRequested":   TopicCancelRequested,
		"UpdateRequested":   TopicUpdateRequested,
		"TransferRequested": TopicTransferRequested,
		"SolutionExecuted":  TopicSolutionExecuted,
		"OrderFilled":       TopicOrderFilled,
		"OrderClosed":       TopicOrderClosed,
		"OrderUpdated":      TopicOrderUpdated,
		"Transfer":          TopicTransfer,

		"TriggerSubmitted":       TopicTriggerSubmitted,
		"TriggerCancelRequested": TopicTriggerCancelRequested,
		"TriggerUpdateRequested": TopicTriggerUpdateRequested,
		"TriggerFired":           TopicTriggerFired,
		"TriggerCancelled":       TopicTriggerCancelled,
		"Liquidation":            TopicLiquidation,
	}
	ob := orderbookEvents(t)
	if len(ob.Events) != len(topics) {
		t.Errorf("OrderbookJSON has %d events, core logs %d", len(ob.Events), len(topics))
	}
	for name, want := range topics {
		ev, ok := ob.Events[name]
		if !ok {
			t.Errorf("OrderbookJSON lacks event %s", name)
			continue
		}
		if Hash(ev.ID) != want {
			t.Errorf("%s: JSON topic0 %x (%s), core's %x", name, ev.ID, ev.Sig, want)
		}
		if ev.Anonymous {
			t.Errorf("%s is anonymous", name)
		}
	}
}

func u256(v uint64) uint256.Int { return *uint256.NewInt(v) }

func h32(h clob.Hash) [32]byte { return h }

// TestOrderbookJSONDecodesLogs decodes logs core emits with go-ethereum
// from the JSON's events: the indexed flags match the topics, and every
// field reads back what was logged.
func TestOrderbookJSONDecodesLogs(t *testing.T) {
	ob := orderbookEvents(t)
	book := clob.Hash{31: 1}
	owner, signer := clob.Address{19: 0xaa}, clob.Address{19: 0xbb}
	token, to := clob.Address{0: 0x50, 19: 1}, clob.Address{19: 0xcc}
	orderID := clob.Hash{0: 0x0d}
	e18 := new(big.Int).SetUint64(1e18)

	submit := clob.Intent{Kind: clob.IntentSubmit, Book: book, Side: clob.Sell, Type: clob.Limit,
		Flags: clob.FlagPostOnly, Deadline: 1_700_000_000_500_000, TTL: 60_000_000, Size: u256(2e18), Price: u256(3e18)}
	cancel := clob.Intent{Kind: clob.IntentCancel, Book: book, OrderID: orderID, Deadline: submit.Deadline}
	update := clob.Intent{Kind: clob.IntentUpdate, Book: book, OrderID: orderID, Deadline: submit.Deadline,
		Size: u256(5e17), Price: u256(4e18), Token: token}
	transfer := clob.Intent{Kind: clob.IntentTransfer, Token: token, To: to, Amount: u256(7e18), Deadline: submit.Deadline}
	trig := clob.Intent{Kind: clob.IntentSubmitTrigger, Book: book, Side: clob.Sell, Size: u256(2e18),
		Price: u256(27e17), TriggerPrice: u256(29e17), TriggerType: clob.TriggerTakeProfit, Grouping: 7, Flags: clob.FlagReduceOnly | clob.FlagIOC,
		Deadline: submit.Deadline, TTL: 5_000_000}
	cancelTrig := clob.Intent{Kind: clob.IntentCancelTrigger, Book: book, OrderID: orderID, Deadline: submit.Deadline}
	updateTrig := clob.Intent{Kind: clob.IntentUpdateTrigger, Book: book, OrderID: orderID, Side: clob.Buy,
		Size: u256(1e18), Price: u256(31e17), TriggerPrice: u256(3e18), Deadline: submit.Deadline}
	adm := clob.Admission{Signer: signer, Owner: owner, Nonce: 9}
	logs := admissionLogs(&adm, &clob.Envelope{Intents: []clob.Intent{submit, cancel, update, transfer, trig, cancelTrig, updateTrig}})

	res := clob.TickResult{
		TickUs: 1_700_000_001_000_000,
		Books:  []clob.BookTick{{Book: book, Price: u256(3e18), VolumeBase: u256(2e18), NewOrders: 4, EndEvent: 5}},
		Events: []clob.Event{
			{Kind: clob.EventFill, Book: book, OrderID: orderID, Owner: owner, Side: clob.Sell,
				Base: u256(2e18), Quote: u256(6e18), Fee: u256(1e15), Maker: true, Terminal: true},
			{Kind: clob.EventCancel, Book: book, OrderID: orderID, Owner: owner},
			{Kind: clob.EventPostOnlyRefused, Book: book, OrderID: orderID, Owner: owner},
			{Kind: clob.EventMarginCancel, Book: book, OrderID: orderID, Owner: owner},
			{Kind: clob.EventUpdate, Book: book, OrderID: orderID, Owner: owner},
			{Kind: clob.EventTransfer, Owner: owner, Token: token, To: to, Amount: u256(7e18)},
			// After the books: liquidations and triggers (docs/perps.md).
			{Kind: clob.EventLiquidation, Book: book, Owner: owner, Side: clob.Buy, Base: u256(2e18), Price: u256(25e17),
				Quote: u256(5e18), Amount: u256(1e16), Realized: clob.Signed{Neg: true, Abs: u256(1e18)}},
			{Kind: clob.EventTriggerFired, Book: book, OrderID: orderID, Owner: owner, Side: clob.Sell, Price: u256(28e17)},
			{Kind: clob.EventTriggerCancel, Book: book, OrderID: orderID, Owner: owner, Side: clob.Buy},
		},
	}
	logs = append(logs, tickLogs(&res)...)

	mul := func(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), e18) }
	want := []struct {
		event  string
		fields map[string]any
	}{
		{"OrderSubmitted", map[string]any{
			"orderbookId": h32(book), "orderId": h32(clob.OrderID(signer, 9, 0)), "owner": common.Address(owner),
			"size": mul(-2), "price": mul(3), "orderType": uint8(clob.Limit), "flags": clob.FlagPostOnly,
			"deadline": new(big.Int).SetUint64(submit.Deadline), "ttl": big.NewInt(60_000_000)}},
		{"CancelRequested", map[string]any{
			"orderbookId": h32(book), "orderId": h32(orderID), "owner": common.Address(owner),
			"deadline": new(big.Int).SetUint64(submit.Deadline)}},
		{"UpdateRequested", map[string]any{
			"orderbookId": h32(book), "orderId": h32(orderID), "owner": common.Address(owner),
			"newSize": big.NewInt(5e17), "newPrice": mul(4), "deadline": new(big.Int).SetUint64(submit.Deadline)}},
		{"TransferRequested", map[string]any{
			"token": common.Address(token), "from": common.Address(owner), "to": common.Address(to),
			"amount": mul(7), "deadline": new(big.Int).SetUint64(submit.Deadline)}},
		{"TriggerSubmitted", map[string]any{
			"orderbookId": h32(book), "triggerId": h32(clob.OrderID(signer, 9, 4)), "owner": common.Address(owner),
			"size": mul(-2), "limitPrice": big.NewInt(27e17), "triggerPrice": big.NewInt(29e17),
			"triggerType": clob.TriggerTakeProfit, "grouping": uint8(7), "flags": clob.FlagReduceOnly | clob.FlagIOC,
			"deadline": new(big.Int).SetUint64(submit.Deadline), "ttl": big.NewInt(5_000_000)}},
		{"TriggerCancelRequested", map[string]any{
			"orderbookId": h32(book), "triggerId": h32(orderID), "owner": common.Address(owner),
			"deadline": new(big.Int).SetUint64(submit.Deadline)}},
		{"TriggerUpdateRequested", map[string]any{
			"orderbookId": h32(book), "triggerId": h32(orderID), "owner": common.Address(owner),
			"size": mul(1), "limitPrice": big.NewInt(31e17), "triggerPrice": mul(3),
			"deadline": new(big.Int).SetUint64(submit.Deadline)}},
		{"SolutionExecuted", map[string]any{
			"orderbookId": h32(book), "deadline": big.NewInt(res.TickUs), "clearingPrice": mul(3),
			"totalVolume": mul(2), "newOrdersCount": big.NewInt(4)}},
		{"OrderFilled", map[string]any{
			"orderbookId": h32(book), "orderId": h32(orderID), "owner": common.Address(owner),
			"side": uint8(clob.Sell), "base": mul(2), "quote": mul(6), "fee": big.NewInt(1e15),
			"maker": true, "filled": true}},
		{"OrderClosed", map[string]any{
			"orderbookId": h32(book), "orderId": h32(orderID), "owner": common.Address(owner), "reason": uint8(CloseCancelled)}},
		{"OrderClosed", map[string]any{
			"orderbookId": h32(book), "orderId": h32(orderID), "owner": common.Address(owner), "reason": uint8(ClosePostOnlyRefused)}},
		{"OrderClosed", map[string]any{
			"orderbookId": h32(book), "orderId": h32(orderID), "owner": common.Address(owner), "reason": uint8(CloseMarginCanceled)}},
		{"OrderUpdated", map[string]any{
			"orderbookId": h32(book), "orderId": h32(orderID), "owner": common.Address(owner)}},
		{"Transfer", map[string]any{
			"token": common.Address(token), "from": common.Address(owner), "to": common.Address(to), "amount": mul(7)}},
		{"Liquidation", map[string]any{
			"orderbookId": h32(book), "owner": common.Address(owner), "side": uint8(clob.Buy), "size": mul(2),
			"markPrice": big.NewInt(25e17), "value": mul(5), "penalty": big.NewInt(1e16), "realized": mul(-1)}},
		{"TriggerFired", map[string]any{
			"orderbookId": h32(book), "triggerId": h32(orderID), "owner": common.Address(owner),
			"side": uint8(clob.Sell), "markPrice": big.NewInt(28e17)}},
		{"TriggerCancelled", map[string]any{
			"orderbookId": h32(book), "triggerId": h32(orderID), "owner": common.Address(owner), "side": uint8(clob.Buy)}},
	}
	if len(logs) != len(want) {
		t.Fatalf("%d logs, want %d", len(logs), len(want))
	}
	for i, l := range logs {
		ev, err := ob.EventByID(common.Hash(l.Topics[0]))
		if err != nil {
			t.Errorf("log %d: topic0 %x: %v", i, l.Topics[0], err)
			continue
		}
		if ev.Name != want[i].event {
			t.Errorf("log %d is %s, want %s", i, ev.Name, want[i].event)
			continue
		}
		var indexed gethabi.Arguments
		for _, in := range ev.Inputs {
			if in.Indexed {
				indexed = append(indexed, in)
			}
		}
		if len(indexed) != len(l.Topics)-1 {
			t.Errorf("%s: %d indexed inputs in the JSON, %d topics logged after topic0", ev.Name, len(indexed), len(l.Topics)-1)
			continue
		}
		got := map[string]any{}
		topics := make([]common.Hash, len(l.Topics)-1)
		for j := range topics {
			topics[j] = common.Hash(l.Topics[j+1])
		}
		if err := gethabi.ParseTopicsIntoMap(got, indexed, topics); err != nil {
			t.Errorf("%s topics: %v", ev.Name, err)
			continue
		}
		if err := ob.UnpackIntoMap(got, ev.Name, l.Data); err != nil {
			t.Errorf("%s data: %v", ev.Name, err)
			continue
		}
		if len(got) != len(ev.Inputs) || !reflect.DeepEqual(got, want[i].fields) {
			t.Errorf("%s decodes as\n%v\nwant\n%v", ev.Name, got, want[i].fields)
		}
	}
}
