//go:build unix

package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/ledgervenue/node/net/node"
)

// End-to-end tests of ob_getFills and ob_getBackstopTransfers: cursor
// pages that neither skip nor repeat, filters, and a restart that keeps
// the history (from the index snapshot and from the log replayed after it).

type fillRow struct {
	Book        common.Hash    `json:"orderbook_id"`
	BaseToken   common.Address `json:"base_token"`
	OrderID     common.Hash    `json:"order_id"`
	OrderType   *string        `json:"order_type"`
	InitialSize *string        `json:"initial_size"`
	Fee         *hexutil.Big   `json:"fee"`
	Base        *hexutil.Big   `json:"base_amount"`
	Quote       *hexutil.Big   `json:"quote_amount"`
	Timestamp   int64          `json:"timestamp"`
	Price       *hexutil.Big   `json:"price"`
	Side        string         `json:"side"`
	Maker       bool           `json:"maker"`
	// Perp fills only.
	PositionBefore *string `json:"position_before"`
	PositionAfter  *string `json:"position_after"`
}

type fillsPage struct {
	Fills []fillRow `json:"fills"`
	Next  *string   `json:"next_cursor"`
}

// fills walks account's fills history page by page (limit per page) with
// the query q, checking every page's size, and returns the rows in order.
func (tn *testNode) fills(t *testing.T, account common.Address, q map[string]any, limit int) []fillRow {
	t.Helper()
	var out []fillRow
	q["limit"] = limit
	for range 100 {
		var p fillsPage
		if err := tn.rpc.CallContext(context.Background(), &p, "ob_getFills", account, q); err != nil {
			t.Fatalf("ob_getFills %v: %v", q, err)
		}
		if len(p.Fills) > limit || p.Next != nil && len(p.Fills) != limit {
			t.Fatalf("a page of %d fills (limit %d, next %v)", len(p.Fills), limit, p.Next)
		}
		out = append(out, p.Fills...)
		if p.Next == nil {
			return out
		}
		q["cursor"] = *p.Next
	}
	t.Fatal("a listing that never ends")
	return nil
}

// TestFillsHistoryPagesAndRestart: alice buys 1 WETH (at 100 to 104) in each of five
// ticks and 0.1 WBTC in one; ob_getFills lists her six fills newest first
// in pages of 2 that neither skip nor repeat, filters by book and time,
// and after a restart (snapshot in the middle, log after it) lists the
// same rows.
func TestFillsHistoryPagesAndRestart(t *testing.T) {
	dir := t.TempDir()
	inDir := func(c *node.Config) { c.DataDir = dir }
	var before []fillRow
	var ticks []int64
	t.Run("before restart", func(t *testing.T) {
		tn := startNode(t, inDir)
		alice, bob := tn.sender(t, 0), tn.sender(t, 1)
		for round := range 5 {
			tn.cross(t, alice, bob, wethBook, eth(1), eth(100+int64(round)))
			if round == 2 {
				tn.cross(t, alice, bob, wbtcBook, big.NewInt(1e17), eth(10000))
			}
			tn.tick(t)
			ticks = append(ticks, tn.clock.NowMicros())
			if round == 3 {
				if err := tn.admin.CallContext(context.Background(), nil, "admin_snapshot"); err != nil {
					t.Fatal(err)
				}
			}
		}
		before = tn.fills(t, alice.addr(), map[string]any{}, 2)
		if len(before) != 6 {
			t.Fatalf("%d fills, want 6: %+v", len(before), before)
		}
		seen := map[string]bool{}
		for i, f := range before {
			key := fmt.Sprint(f.Book, f.OrderID)
			if seen[key] {
				t.Fatalf("fill %d repeats %s", i, key)
			}
			seen[key] = true
			if i > 0 && f.Timestamp > before[i-1].Timestamp {
				t.Fatalf("fill %d at %d after the newer %d", i, f.Timestamp, before[i-1].Timestamp)
			}
			if f.Side != "buy" || f.OrderType == nil || *f.OrderType != "limit" || f.Fee == nil || f.Quote == nil ||
				f.PositionBefore != nil || f.PositionAfter != nil {
				t.Fatalf("fill %d: %+v", i, f)
			}
		}
		if f := before[0]; f.Book != wethBook || f.BaseToken != weth || f.Timestamp != ticks[4] ||
			f.Base.ToInt().Cmp(eth(1)) != 0 || f.Price.ToInt().Cmp(eth(104)) != 0 || *f.InitialSize != "1000000000000000000" {
			t.Fatalf("newest fill %+v", f)
		}
		if f := before[2]; f.Book != wbtcBook || f.Timestamp != ticks[2] || f.Base.ToInt().Cmp(big.NewInt(1e17)) != 0 {
			t.Fatalf("the WBTC fill %+v", f)
		}
		// Bob sold: his initial size is negative.
		if bobs := tn.fills(t, bob.addr(), map[string]any{"orderbook_id": wbtcBook}, 5); len(bobs) != 1 ||
			bobs[0].Side != "sell" || *bobs[0].InitialSize != "-100000000000000000" {
			t.Fatalf("bob's WBTC fills %+v", bobs)
		}
		// [ticks[1], ticks[3]): the fills of rounds 1 and 2, WETH only.
		got := tn.fills(t, alice.addr(), map[string]any{"from_ts": ticks[1], "to_ts": ticks[3], "orderbook_id": wethBook}, 1)
		if len(got) != 2 || got[0].Timestamp != ticks[2] || got[1].Timestamp != ticks[1] {
			t.Fatalf("time window %+v", got)
		}
		if none := tn.fills(t, devAddr(9), map[string]any{}, 3); len(none) != 0 {
			t.Fatalf("an account without fills has %+v", none)
		}
	})
	if t.Failed() {
		return
	}
	tn := startNode(t, inDir)
	after := tn.fills(t, tn.sender(t, 0).addr(), map[string]any{}, 4)
	got, _ := json.Marshal(after)
	want, _ := json.Marshal(before)
	if string(got) != string(want) {
		t.Fatalf("after the restart:\n%s\nwant\n%s", got, want)
	}
}

// TestFillsAndBackstopParams: malformed queries are -32602 naming the
// field; ob_getBackstopTransfers answers the openapi shape with or without
// an address.
func TestFillsAndBackstopParams(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	alice := devAddr(0)
	for _, c := range []struct {
		method string
		params []any
		msg    string
	}{
		{"ob_getFills", []any{}, "missing value for required argument 0"},
		{"ob_getFills", []any{alice, "x"}, "fills query: want an object"},
		{"ob_getFills", []any{alice, map[string]any{"limit": 0}}, "limit: want an integer of at least 1"},
		{"ob_getFills", []any{alice, map[string]any{"cursor": "12"}}, `cursor: want "{ts}:{seq}" as returned in next_cursor`},
		{"ob_getFills", []any{alice, map[string]any{"cursor": "1:2:3"}}, `cursor: want "{ts}:{seq}" as returned in next_cursor`},
		{"ob_getFills", []any{alice, map[string]any{"from_ts": 5, "to_ts": 4}}, "to_ts: must not be before from_ts"},
		{"ob_getFills", []any{alice, map[string]any{"orderbook_id": "0x12"}}, "orderbook_id: want 0x followed by 64 hex digits"},
		{"ob_getBackstopTransfers", []any{alice, map[string]any{"limit": -1}}, "limit: want an integer of at least 1"},
		{"ob_getBackstopTransfers", []any{"0x12"}, ""},
	} {
		err := tn.rpc.CallContext(ctx, nil, c.method, c.params...)
		if c.msg == "" {
			wantRPCError(t, err, -32602, "Invalid params", nil)
		} else {
			wantRPCError(t, err, -32602, "Invalid params", c.msg)
		}
	}
	for _, params := range [][]any{{alice}, {alice, map[string]any{"orderbook_id": wethBook, "limit": 500}}, {nil, map[string]any{}}, {map[string]any{"limit": 3}}, {}} {
		var raw json.RawMessage
		if err := tn.rpc.CallContext(ctx, &raw, "ob_getBackstopTransfers", params...); err != nil {
			t.Fatalf("ob_getBackstopTransfers %v: %v", params, err)
		}
		if string(raw) != `{"transfers":[],"total_count":0,"next_cursor":null}` {
			t.Fatalf("ob_getBackstopTransfers %v: %s", params, raw)
		}
	}
}
