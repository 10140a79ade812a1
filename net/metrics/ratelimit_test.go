package metrics_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ledgervenue/node/net/node"
)

// TestScrapeRateLimited: the rate-limit emulation's refusals show in
// ledgerd_rate_limited_total by the budget that refused, and its live
// buckets in ledgerd_rate_limit_buckets.
func TestScrapeRateLimited(t *testing.T) {
	v := startVenue(t)
	ctx := context.Background()
	if got := v.scrape(t).value(t, "ledgerd_rate_limited_total", "limit", "address"); got != 0 {
		t.Fatalf("refusals before any limit: %v", got)
	}
	if err := v.admin.CallContext(ctx, nil, "lab_setRateLimits", "address=3/60s,account=1/60s"); err != nil {
		t.Fatal(err)
	}
	to := common.Address(node.DevAddress(1))
	if err := v.http.SendTransaction(ctx, signTx(t, node.DevKey(0), 0, to, big.NewInt(1), 21000, nil)); err != nil {
		t.Fatal(err)
	}
	// The account's budget is spent; the address's is given back.
	if err := v.http.SendTransaction(ctx, signTx(t, node.DevKey(0), 1, to, big.NewInt(1), 21000, nil)); err == nil {
		t.Fatal("a transaction beyond the account's budget was admitted")
	}
	for range 2 {
		if _, err := v.http.ChainID(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.http.ChainID(ctx); err == nil {
		t.Fatal("a read beyond the address's budget answered")
	}
	s := v.scrape(t)
	for _, limit := range []string{"address", "account"} {
		if got := s.value(t, "ledgerd_rate_limited_total", "limit", limit); got != 1 {
			t.Errorf("ledgerd_rate_limited_total{limit=%q} = %v, want 1", limit, got)
		}
		if got := s.value(t, "ledgerd_rate_limit_buckets", "limit", limit); got != 1 {
			t.Errorf("ledgerd_rate_limit_buckets{limit=%q} = %v, want 1", limit, got)
		}
	}
}
