package clients

import (
	"path/filepath"
	"testing"
	"time"
)

// devSignSteps are the steps js/devsign-ethers.mjs and js/devsign-viem.mjs
// print, in order: eth_accounts; a transfer through eth_sendTransaction and
// its receipt; an orderbook call the same way; a personal message and
// EIP-712 typed data signed by the node and verified by the library.
var devSignSteps = []string{"accounts", "sendTransaction", "order", "signMessage", "signTypedData"}

// TestDevSigning runs ethers' JsonRpcSigner and viem's wallet client with a
// JSON-RPC account, library defaults only, against a `ledgerd --dev
// --compat` node (what make run starts): the node's dev accounts sign
// (docs/signing.md), and every step must work.
func TestDevSigning(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts nodes and client programs")
	}
	if !jsReady(t) {
		t.Skip("LEDGERD_SKIP_JS=1")
	}
	for _, js := range []string{"devsign-ethers.mjs", "devsign-viem.mjs"} {
		t.Run(js, func(t *testing.T) {
			n := startNode(t, true)
			p := run(60*time.Second, []string{"LEDGERD_HTTP=" + n.HTTP}, "node", filepath.Join("js", js))
			res := parseSteps(p.Stdout, devSignSteps)
			if p.Err != nil {
				t.Errorf("%s crashed: %v", js, p.Err)
			}
			requireAllOK(t, res, devSignSteps)
			if t.Failed() {
				p.logOutput(t, js)
			}
		})
	}
}
