package clients

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ledgervenue/node/net/replicate"
)

// TestFollowerWithEthersAndViem: a leader and a follower on an embedded
// NATS JetStream server, met with ethers 6 and viem 2 and their defaults
// (js/follower.mjs): writes to the leader, receipts, balances, nonces and
// heads from the follower, and a write sent to the follower refused with
// the leader's URL in what each library shows its user.
func TestFollowerWithEthersAndViem(t *testing.T) {
	skipUnlessJS(t)
	s, err := replicate.StartServer(t.TempDir(), "127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	leader := startNode(t, true, "--nats", s.ClientURL())
	follower := startNode(t, true, "--nats", s.ClientURL(), "--follow")
	runStepsEnv(t, "leader and follower", filepath.Join("js", "follower.mjs"), []string{
		"LEDGERD_HTTP=" + leader.HTTP, "LEDGERD_WS=" + leader.WS,
		"LEDGERD_FOLLOWER_HTTP=" + follower.HTTP, "LEDGERD_FOLLOWER_WS=" + follower.WS,
	}, 90*time.Second)
}
