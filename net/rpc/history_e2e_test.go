package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ledgervenue/node/net/node"
)

// page is a listing's answer as a client decodes it.
type page struct {
	Items []struct {
		TxHash common.Hash `json:"transactionHash"`
		From   common.Address
		To     common.Address
	} `json:"items"`
	Next   *string `json:"next_cursor"`
	Cursor *string `json:"cursor"`
}

func (tn *testNode) list(t *testing.T, method string, params map[string]any) page {
	t.Helper()
	var p page
	if err := tn.rpc.CallContext(context.Background(), &p, method, params); err != nil {
		t.Fatalf("%s %v: %v", method, params, err)
	}
	if (p.Next == nil) != (p.Cursor == nil) || (p.Next != nil && *p.Next != *p.Cursor) {
		t.Fatalf("next_cursor %v and cursor %v differ", p.Next, p.Cursor)
	}
	return p
}

// walk pages through a listing with limit per page and returns every hash
// in order; between pages it calls between (nil: nothing).
func (tn *testNode) walk(t *testing.T, method string, params map[string]any, limit int, between func()) []common.Hash {
	t.Helper()
	pg := map[string]any{"limit": limit}
	if nf, ok := params["newest_first"]; ok {
		pg["newest_first"] = nf
		delete(params, "newest_first")
	}
	var out []common.Hash
	for range 100 {
		params["pagination"] = pg
		p := tn.list(t, method, params)
		if len(p.Items) > limit {
			t.Fatalf("a page of %d items, limit %d", len(p.Items), limit)
		}
		for _, it := range p.Items {
			out = append(out, it.TxHash)
		}
		if p.Next == nil {
			return out
		}
		pg = map[string]any{"limit": limit, "cursor": *p.Next}
		if between != nil {
			between()
		}
	}
	t.Fatal("a listing that never ends")
	return nil
}

// sendTransfers sends n transfers from dev account from to dev account to,
// a millisecond apart on the manual clock (no auction tick is due: no order
// rests), and returns their hashes once attested.
func (tn *testNode) sendTransfers(t *testing.T, from, to, n int, nonce *uint64) []common.Hash {
	t.Helper()
	var out []common.Hash
	for range n {
		tn.clock.Advance(1000)
		tx := dynTx(t, node.DevKey(from), chainID, *nonce, devAddr(to), big.NewInt(1), gwei, new(big.Int).Mul(gwei, big.NewInt(3)))
		if err := tn.eth.SendTransaction(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
		tn.waitReceipt(tx.Hash())
		*nonce++
		out = append(out, tx.Hash())
	}
	return out
}

// TestHistoryListings: both listings page through every matching receipt
// exactly once in both directions, while new transactions arrive, and a
// cursor taken before a restart goes on after it.
func TestHistoryListings(t *testing.T) {
	dir := t.TempDir()
	sameDir := func(c *node.Config) { c.DataDir = dir }
	tn := startNodeWith(t, nodeSetup{}, sameDir)
	var aliceNonce, carolNonce uint64
	alice := tn.sendTransfers(t, 0, 5, 5, &aliceNonce)
	carol := tn.sendTransfers(t, 1, 0, 3, &carolNonce) // to alice: hers too
	all := append(slices.Clone(alice), carol...)

	aliceAddr := devAddr(0).Hex()
	got := tn.walk(t, "svc_listAccountReceipts", map[string]any{"address": aliceAddr, "since": 0}, 2, nil)
	if !slices.Equal(got, all) {
		t.Fatalf("alice's receipts, oldest first: %v, want %v", got, all)
	}
	got = tn.walk(t, "svc_listAccountReceipts", map[string]any{"address": aliceAddr, "since": 0, "newest_first": true}, 3, nil)
	want := slices.Clone(all)
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Fatalf("alice's receipts, newest first: %v, want %v", got, want)
	}
	got = tn.walk(t, "svc_listConfirmedReceipts", map[string]any{"since": 0, "address": devAddr(1).Hex()}, 10, nil)
	if !slices.Equal(got, carol) {
		t.Fatalf("carol's confirmed receipts %v, want %v", got, carol)
	}
	if p := tn.list(t, "svc_listAccountReceipts", map[string]any{"address": devAddr(9).Hex(), "since": 0}); len(p.Items) != 0 || p.Next != nil {
		t.Fatalf("an account with no receipts: %+v", p)
	}

	// since: the account listing starts at since, the confirmed one after it.
	var r struct {
		Meta struct {
			Atts []struct {
				Timestamp int64 `json:"timestamp"`
			} `json:"attestations"`
		} `json:"svc_metadata"`
	}
	if err := json.Unmarshal(tn.rawCall("eth_getTransactionReceipt", alice[2]), &r); err != nil {
		t.Fatal(err)
	}
	at := r.Meta.Atts[0].Timestamp
	incl := tn.walk(t, "svc_listAccountReceipts", map[string]any{"address": aliceAddr, "since": at}, 100, nil)
	excl := tn.walk(t, "svc_listConfirmedReceipts", map[string]any{"since": at}, 100, nil)
	if len(incl) == 0 || incl[0] != alice[2] || slices.Contains(excl, alice[2]) {
		t.Fatalf("since %d: the account listing starts %v, the confirmed one %v", at, incl, excl)
	}

	// New receipts arrive between pages: an oldest-first walk sees them all,
	// each once.
	var more []common.Hash
	got = tn.walk(t, "svc_listConfirmedReceipts", map[string]any{"since": 0}, 3, func() {
		if more == nil {
			more = tn.sendTransfers(t, 0, 5, 2, &aliceNonce)
		}
	})
	if want := append(slices.Clone(all), more...); !slices.Equal(got, want) {
		t.Fatalf("confirmed receipts while new ones arrive: %v, want %v", got, want)
	}

	// A cursor from before a restart goes on after it.
	first := tn.list(t, "svc_listConfirmedReceipts", map[string]any{"since": 0, "pagination": map[string]any{"limit": 4}})
	tn.stop()
	tn = startNodeWith(t, nodeSetup{}, sameDir)
	rest := tn.walk(t, "svc_listConfirmedReceipts", map[string]any{"since": 0, "pagination": nil}, 100, nil)
	resumed := tn.list(t, "svc_listConfirmedReceipts", map[string]any{"since": 0, "pagination": map[string]any{"cursor": *first.Next, "limit": 100}})
	var joined []common.Hash
	for _, it := range append(first.Items, resumed.Items...) {
		joined = append(joined, it.TxHash)
	}
	if !slices.Equal(joined, rest) || len(rest) != len(all)+len(more) {
		t.Fatalf("across a restart: %v then %v, want %v", first.Items, resumed.Items, rest)
	}
}

// TestHistoryListingErrors: every malformed call is -32602, nothing else.
func TestHistoryListingErrors(t *testing.T) {
	tn := startNode(t)
	a := devAddr(0).Hex()
	for _, c := range []struct {
		method string
		params []any
	}{
		{"svc_listAccountReceipts", nil},
		{"svc_listAccountReceipts", []any{"0x1"}},
		{"svc_listAccountReceipts", []any{map[string]any{"since": 0}}},
		{"svc_listAccountReceipts", []any{map[string]any{"address": "0x12", "since": 0}}},
		{"svc_listAccountReceipts", []any{map[string]any{"address": a}}},
		{"svc_listConfirmedReceipts", []any{map[string]any{"since": -1}}},
		{"svc_listConfirmedReceipts", []any{map[string]any{"since": "soon"}}},
		{"svc_listConfirmedReceipts", []any{map[string]any{"since": 0, "pagination": 5}}},
		{"svc_listConfirmedReceipts", []any{map[string]any{"since": 0, "pagination": map[string]any{"limit": 0}}}},
		{"svc_listConfirmedReceipts", []any{map[string]any{"since": 0, "pagination": map[string]any{"limit": node.ListLimitMax + 1}}}},
		{"svc_listConfirmedReceipts", []any{map[string]any{"since": 0, "pagination": map[string]any{"newest_first": "yes"}}}},
		{"svc_listConfirmedReceipts", []any{map[string]any{"since": 0, "pagination": map[string]any{"cursor": "djF8YXNjfDA=", "newest_first": true}}}},
		{"svc_listConfirmedReceipts", []any{map[string]any{"since": 0, "pagination": map[string]any{"cursor": "not a cursor"}}}},
		{"svc_listConfirmedReceipts", []any{map[string]any{"since": 0, "pagination": map[string]any{"cursor": "djJ8YXNjfDA="}}}}, // "v2|asc|0"
	} {
		err := tn.rpc.CallContext(context.Background(), new(json.RawMessage), c.method, c.params...)
		var de interface{ ErrorCode() int }
		if !errors.As(err, &de) || de.ErrorCode() != -32602 {
			t.Errorf("%s %v: %v, want -32602", c.method, c.params, err)
		}
	}
}
