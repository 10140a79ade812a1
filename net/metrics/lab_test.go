package metrics_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ledgervenue/node/net/node"
)

// TestScrapeLab: the lab's delivery faults show in the scrape: the rules
// in force, the answers they delayed, a subscription dropped and a
// connection closed, and the bytes held (a gauge, 0 when nothing is).
func TestScrapeLab(t *testing.T) {
	v := startVenue(t)
	ctx := context.Background()
	acct := common.Address(node.DevAddress(2))
	ch := make(chan json.RawMessage, 4)
	sub, err := v.wsConn.Client().EthSubscribe(ctx, ch, "svc_positions", map[string]any{"account": acct})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	<-ch // the snapshot: the subscription is live
	if err := v.admin.CallContext(ctx, nil, "lab_setLatency", map[string]any{"scope": "all", "answers": map[string]any{"ms": 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.http.ChainID(ctx); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"lab_dropSubscription", "lab_closeConnection"} {
		var n int
		if err := v.admin.CallContext(ctx, &n, m, map[string]any{"account": acct}); err != nil || n != 1 {
			t.Fatalf("%s: %d (%v)", m, n, err)
		}
	}
	s := v.scrape(t)
	for _, c := range []struct {
		name   string
		labels []string
		min    float64
	}{
		{"ledgerd_lab_latency_rules", nil, 1},
		{"ledgerd_lab_delayed_total", []string{"kind", "answer"}, 1},
		{"ledgerd_lab_subscription_faults_total", []string{"fault", "dropped"}, 1},
		{"ledgerd_lab_closed_connections_total", nil, 1},
	} {
		if got := s.value(t, c.name, c.labels...); got < c.min || (c.name != "ledgerd_lab_delayed_total" && got != c.min) {
			t.Fatalf("%s %v = %v, want %v", c.name, c.labels, got, c.min)
		}
	}
	if got := s.value(t, "ledgerd_lab_delayed_total", "kind", "notification"); got != 0 {
		t.Fatalf("delayed notifications %v, want 0", got)
	}
	if got := s.value(t, "ledgerd_lab_delayed_bytes"); got < 0 {
		t.Fatalf("delayed bytes %v", got)
	}
}
