//go:build unix

package rpc_test

import (
	"context"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	gethrpc "github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/core/clob"
)

// subsChannels are every eth_subscribe channel.
var subsChannels = []string{"svc_orderbook", "svc_orders", "svc_orders_v2", "svc_candles", "svc_markets", "svc_positions",
	"svc_triggers", "svc_withdrawals", "svc_transfers", "logs", "svc_accountReceipts", "svc_confirmedReceipts",
	"svc_pastPerfectTime", "newHeads"}

// bookChannels are the channels orderbook_ids filters (the others ignore it).
var bookChannels = []string{"svc_orderbook", "svc_orders", "svc_orders_v2", "svc_candles", "svc_markets"}

// subsTakes is the spec's parameter table with the live network's aliases,
// written out here as the oracle of TestSubsParamsPerChannel: the keys each
// channel takes. Every other key must be refused.
var subsTakes = map[string][]string{
	"svc_orderbook":         {"orderbook_ids", "clob_ids", "depth", "since"},
	"svc_orders":            {"orderbook_ids", "clob_ids", "bidder", "account", "since"},
	"svc_orders_v2":         {"orderbook_ids", "clob_ids", "bidder", "account", "bidders", "since", "since_book"},
	"svc_candles":           {"orderbook_ids", "clob_ids", "since"},
	"svc_markets":           {"orderbook_ids", "clob_ids", "since"},
	"svc_positions":         {"orderbook_ids", "clob_ids", "account", "bidder", "since"},
	"svc_triggers":          {"orderbook_ids", "clob_ids", "account", "bidder", "since"},
	"svc_withdrawals":       {"orderbook_ids", "clob_ids", "account", "bidder", "since"},
	"svc_transfers":         {"orderbook_ids", "clob_ids", "account", "bidder", "since"},
	"logs":                  {"address", "topics", "fromBlock", "toBlock", "minAttestations", "minimum_attestations"},
	"svc_accountReceipts":   {"address", "since"},
	"svc_confirmedReceipts": {"since"},
	"svc_pastPerfectTime":   {"timestamp", "since"},
	"newHeads":              {},
}

// TestSubsParamsPerChannel sends every channel every parameter of the
// spec's table, the live aliases and a few misspellings, over go-ethereum's
// WebSocket client. Each is refused with -32602, or taken; a taken account
// filter (naming alice) or book filter (naming WETH/USD) is then shown to
// filter: after alice, bob, carol and dave trade, trigger and transfer,
// nothing of another account or book arrives on it, and something does.
func TestSubsParamsPerChannel(t *testing.T) {
	tn := startNode(t)
	perp := tn.createMarket(t, perpMarket("T-PERP"))
	alice, bob, carol, dave := tn.sender(t, 0), tn.sender(t, 1), tn.sender(t, 2), tn.sender(t, 3)
	tn.tick(t)
	since := tn.clock.NowMicros()
	values := map[string]any{
		"orderbook_ids": []common.Hash{wethBook}, "clob_ids": []common.Hash{wethBook}, "bidder": alice.addr(),
		"account": alice.addr(), "bidders": []common.Address{alice.addr()}, "depth": 5, "since": since,
		"since_book": wethBook, "address": alice.addr(), "topics": []any{nil}, "fromBlock": "0x0", "toBlock": "latest",
		"minAttestations": 1, "minimum_attestations": 1, "timestamp": since,
		"acount": alice.addr(), "orderbook_id": wethBook, "Bidder": alice.addr(), "bidders_": []common.Address{alice.addr()},
	}
	c := tn.dialWS(t)
	type watch struct {
		name string
		ch   chan json.RawMessage
		sub  *gethrpc.ClientSubscription
		not  []string // hex (lowercase, no 0x) that must not arrive
	}
	var watches []watch
	hexOf := func(b []byte) string { return strings.ToLower(common.Bytes2Hex(b)) }
	others := []string{hexOf(bob.addr().Bytes()), hexOf(carol.addr().Bytes()), hexOf(dave.addr().Bytes())}
	for _, chName := range subsChannels {
		for key, val := range values {
			params := map[string]any{key: val}
			switch {
			case (chName == "svc_positions" || chName == "svc_triggers") && key != "account" && key != "bidder":
				params["account"] = alice.addr()
			case chName == "svc_accountReceipts" && key != "address":
				params["address"] = alice.addr()
			}
			if key == "since_book" {
				params["since"] = since
			}
			name := chName + " " + key
			ch := make(chan json.RawMessage, 256)
			ctx, cancel := context.WithTimeout(context.Background(), subsWait)
			sub, err := c.EthSubscribe(ctx, ch, chName, params)
			cancel()
			if !slices.Contains(subsTakes[chName], key) {
				var re gethrpc.Error
				if err == nil {
					sub.Unsubscribe()
					t.Fatalf("%s: taken, want -32602", name)
				}
				if !asRPCError(err, &re) || re.ErrorCode() != -32602 {
					t.Fatalf("%s: %v, want -32602", name, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: refused: %v (%v)", name, err, errorData(err))
			}
			t.Cleanup(sub.Unsubscribe)
			w := watch{name: name, ch: ch, sub: sub}
			accountKey := key == "bidder" || key == "account" || key == "bidders" || params["account"] != nil
			bookKey := key == "orderbook_ids" || key == "clob_ids"
			switch {
			case accountKey && chName != "svc_withdrawals": // no withdrawal settles here: nothing to see either way
				w.not = others
			case bookKey && slices.Contains(bookChannels, chName):
				w.not = []string{hexOf(wbtcBook.Bytes()), hexOf(perp.Bytes())}
			}
			if w.not != nil {
				watches = append(watches, w)
			}
		}
	}
	// Traffic of every account: alice with bob, carol with dave, on two
	// books and the perp; triggers; transfers.
	tn.cross(t, alice, bob, wethBook, eth(1), eth(3000))
	tn.cross(t, carol, dave, wbtcBook, big.NewInt(1e17), eth(10000))
	tn.cross(t, alice, bob, perp, eth(1), eth(3000))
	tn.cross(t, carol, dave, perp, eth(1), eth(3000))
	tn.tick(t)
	d := tn.nextDeadline()
	for _, s := range []*obSender{alice, bob, carol} {
		s.mustSend(t, packTrigger(t, "submitTrigger", perp, eth(-1), new(big.Int), eth(3300), clob.TriggerTakeProfit, uint8(0), d, new(big.Int), true, false))
	}
	alice.mustSend(t, pack(t, "transfer", weth, devAddr(7), eth(1), d))
	bob.mustSend(t, pack(t, "transfer", weth, devAddr(8), eth(1), d))
	tn.tick(t)
	tn.tick(t)
	for _, w := range watches {
		got := 0
		deadline := time.After(subsWait)
	drain:
		for {
			select {
			case m := <-w.ch:
				got++
				for _, other := range w.not {
					if strings.Contains(strings.ToLower(string(m)), other) {
						t.Fatalf("%s: another account's or book's update arrived (%s): %s", w.name, other, m)
					}
				}
			case err := <-w.sub.Err():
				t.Fatalf("%s: subscription ended: %v", w.name, err)
			case <-deadline:
				break drain
			case <-time.After(300 * time.Millisecond):
				if got > 0 {
					break drain
				}
			}
		}
		if got == 0 {
			t.Fatalf("%s: nothing arrived: the filter let nothing through", w.name)
		}
	}
}

// TestSubsParamsRefused: combinations and types a channel cannot take are
// refused with -32602, naming the parameter.
func TestSubsParamsRefused(t *testing.T) {
	tn := startNode(t)
	c := tn.dialWS(t)
	a, b := devAddr(0), devAddr(1)
	for _, tc := range []struct {
		name   string
		params []any
		data   string
	}{
		{"account and bidders", []any{"svc_orders_v2", map[string]any{"account": a, "bidders": []common.Address{b}}}, "mutually exclusive"},
		{"account and bidder", []any{"svc_orders", map[string]any{"account": a, "bidder": b}}, "aliases"},
		{"account and bidder alike", []any{"svc_positions", map[string]any{"account": a, "bidder": a}}, "aliases"},
		{"account as a number", []any{"svc_orders_v2", map[string]any{"account": 42}}, "bidder"},
		{"bidder on withdrawals, wrong type", []any{"svc_withdrawals", map[string]any{"bidder": []string{"x"}}}, "account"},
		{"bidders as one address", []any{"svc_orders_v2", map[string]any{"bidders": a}}, "bidders"},
		{"depth on candles", []any{"svc_candles", map[string]any{"depth": 5}}, "depth: only svc_orderbook"},
		{"depth as a string", []any{"svc_orderbook", map[string]any{"depth": "deep"}}, "depth"},
		{"since_book on svc_orders", []any{"svc_orders", map[string]any{"since": 1, "since_book": wethBook}}, "since_book: only svc_orders_v2"},
		{"orderbook_ids as one id", []any{"svc_markets", map[string]any{"orderbook_ids": wethBook}}, "orderbook_ids"},
		{"both book aliases", []any{"svc_candles", map[string]any{"orderbook_ids": []common.Hash{wethBook}, "clob_ids": []common.Hash{}}}, "aliases"},
		{"since on logs", []any{"logs", map[string]any{"since": 1}}, "logs: unknown parameter"},
		{"bidder on markets", []any{"svc_markets", map[string]any{"bidder": a}}, "svc_markets: unknown parameter"},
		{"params on newHeads", []any{"newHeads", map[string]any{"since": 1}}, "newHeads"},
		{"timestamp and since", []any{"svc_pastPerfectTime", map[string]any{"timestamp": 1, "since": 2}}, "aliases"},
		{"since as text", []any{"svc_orders", map[string]any{"since": "soon"}}, "since"},
	} {
		mustRefuseSubscription(t, c, tc.name, tc.params, tc.data)
	}
}
