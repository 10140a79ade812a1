package clients

import (
	"path/filepath"
	"testing"
	"time"
)

// TestSnapshotRevertJS runs evm_snapshot → orders, a fill and a transfer →
// evm_revert with ethers 6 and viem 2 (js/snapshot-*.mjs, library
// defaults) against a fresh --dev --compat node each: balances, nonces,
// the book and the orders must come back, and the venue must go on.
func TestSnapshotRevertJS(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts nodes and client programs")
	}
	if !jsReady(t) {
		t.Skip("LEDGERD_SKIP_JS=1")
	}
	for _, script := range []string{"snapshot-ethers.mjs", "snapshot-viem.mjs"} {
		t.Run(script, func(t *testing.T) {
			n := startNode(t, true)
			p := run(60*time.Second, []string{"LEDGERD_RPC=" + n.HTTP}, "node", filepath.Join("js", script))
			if p.Err != nil {
				p.logOutput(t, script)
				t.Fatal(p.Err)
			}
		})
	}
}
