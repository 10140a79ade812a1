package clients

import (
	"path/filepath"
	"testing"
	"time"
)

// anvilSteps are the steps of js/anvil-viem.mjs, in its order.
var anvilSteps = []string{"setBalance", "setNonce", "increaseTime", "setNextBlockTimestamp", "mine"}

// TestAnvilTestClient runs viem 2's test client in anvil mode
// (createTestClient({mode: 'anvil'})) against a fresh `ledgerd --dev
// --compat`: every control it sends (docs/anvil.md) must work and show in
// the public client's reads.
func TestAnvilTestClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a node and a client program")
	}
	if !jsReady(t) {
		return
	}
	n := startNode(t, true)
	script := filepath.Join("js", "anvil-viem.mjs")
	p := run(60*time.Second, []string{"LEDGERD_HTTP=" + n.HTTP}, "node", script)
	res := parseSteps(p.Stdout, anvilSteps)
	if p.Err != nil {
		p.logOutput(t, script)
		t.Fatalf("the program crashed: %v", p.Err)
	}
	for _, s := range anvilSteps {
		if o := res[s]; !o.ok {
			t.Errorf("step %s: %s", s, o.msg)
		}
	}
}
