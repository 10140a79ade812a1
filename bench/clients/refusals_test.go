package clients

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ledgervenue/node/bench/proc"
)

// refusal is one line of js/refusals.mjs: how a library classified the
// node's refusal of one mistake, and the JSON-RPC error it kept.
type refusal struct {
	Lib     string  `json:"lib"`
	Case    string  `json:"case"`
	Class   string  `json:"class"`
	Code    int     `json:"code"`
	Message string  `json:"message"`
	Data    *string `json:"data"`
}

// refusalWant is what each library must make of each mistake under
// --compat, with the spec's reason the error's data carries in both modes.
// The ethers classes that are not its own (UNKNOWN_ERROR) are what ethers
// makes of go-ethereum's and anvil's text too: it knows only nonce too low,
// insufficient funds and replacement underpriced.
var refusalWant = []struct {
	lib, name, class, data string
}{
	{"ethers", "nonceLow", "NONCE_EXPIRED", "Past nonce: tx nonce 0, expected 1"},
	{"ethers", "nonceHigh", "UNKNOWN_ERROR", "Future nonce: tx nonce 6, expected 1"},
	{"ethers", "insufficient", "INSUFFICIENT_FUNDS", "Insufficient balance"},
	{"ethers", "underpriced", "UNKNOWN_ERROR", "Underpriced tx: max_fee_per_gas 1 < base fee 1000000000"},
	{"ethers", "tipAboveFeeCap", "UNKNOWN_ERROR", "Invalid fees: max_priority_fee_per_gas exceeds max_fee_per_gas"},
	{"ethers", "gasTooHigh", "UNKNOWN_ERROR", "Gas limit too high: gas 40000000 > 30000000"},
	{"ethers", "gasTooLow", "UNKNOWN_ERROR", "Insufficient balance"},
	{"ethers", "chainId", "UNKNOWN_ERROR", "Invalid chain ID: 1"},
	{"ethers-rpc", "insufficient", "INSUFFICIENT_FUNDS", "Insufficient balance"},
	{"viem", "nonceLow", "NonceTooLowError", "Past nonce: tx nonce 0, expected 1"},
	{"viem", "nonceHigh", "NonceTooHighError", "Future nonce: tx nonce 6, expected 1"},
	{"viem", "insufficient", "InsufficientFundsError", "Insufficient balance"},
	{"viem", "underpriced", "FeeCapTooLowError", "Underpriced tx: max_fee_per_gas 1 < base fee 1000000000"},
	{"viem", "tipAboveFeeCap", "TipAboveFeeCapError", "Invalid fees: max_priority_fee_per_gas exceeds max_fee_per_gas"},
	{"viem", "gasTooHigh", "IntrinsicGasTooHighError", "Gas limit too high: gas 40000000 > 30000000"},
	{"viem", "gasTooLow", "IntrinsicGasTooLowError", "Insufficient balance"},
	{"viem", "chainId", "UnknownNodeError", "Invalid chain ID: 1"},
	{"viem-raw", "nonceLow", "InvalidInputRpcError", "Past nonce: tx nonce 0, expected 1"},
	{"viem-rpc", "insufficient", "InsufficientFundsError", "Insufficient balance"},
}

// refusalSpecClasses are what the libraries make of the spec's message: nothing
// (ethers' UNKNOWN_ERROR; viem's own wrapper around the bare RPC error).
var refusalSpecClasses = map[string]bool{"UNKNOWN_ERROR": true, "TransactionExecutionError": true,
	"UnknownNodeError": true, "InvalidInputRpcError": true}

// TestRefusalClasses runs js/refusals.mjs (the usual mistakes through
// ethers 6 and viem 2 with their defaults) against a fresh `ledgerd --dev
// --compat`, a fresh `ledgerd --dev` and anvil. Under --compat each library
// must classify each refusal as refusalWant says, which is what it makes of
// anvil's answer to the same mistake wherever anvil refuses it; in the spec's
// mode it classifies none; in both the error's data is the spec's reason.
func TestRefusalClasses(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts two nodes, anvil and a client program")
	}
	if !jsReady(t) {
		return
	}
	compat := runRefusals(t, startNode(t, true).HTTP)
	spec := runRefusals(t, startNode(t, false).HTTP)
	anvil := runRefusals(t, proc.StartAnvil(t, proc.AnvilBin(filepath.Join("..", "bridge", "npm"))))
	for _, w := range refusalWant {
		key := w.lib + " " + w.name
		c, ok := compat[key]
		if !ok {
			t.Errorf("--compat %s: no outcome", key)
			continue
		}
		if c.Class != w.class || c.Code != -32000 || c.Data == nil || *c.Data != w.data {
			t.Errorf("--compat %s: class %s code %d data %v (message %q), want %s -32000 %q",
				key, c.Class, c.Code, refusalText(c.Data), c.Message, w.class, w.data)
		}
		s := spec[key]
		if !refusalSpecClasses[s.Class] || s.Message != "transaction validation failed" || s.Data == nil || *s.Data != w.data {
			t.Errorf("spec %s: class %s message %q data %v, want no classification, the spec's message and %q",
				key, s.Class, s.Message, refusalText(s.Data), w.data)
		}
		// anvil queues a future nonce instead of refusing it, and answers
		// -32003 where the spec has -32000, which viem's bare RPC error
		// (sendRawTransaction) names by its code.
		a, ok := anvil[key]
		if !ok {
			t.Errorf("anvil %s: no outcome", key)
			continue
		}
		if a.Class != "accepted" && w.lib != "viem-raw" && a.Class != c.Class {
			t.Errorf("%s: --compat classified %s, anvil's answer %q %s", key, c.Class, a.Message, a.Class)
		}
	}
}

// runRefusals runs js/refusals.mjs against url and returns its outcomes by
// "lib case".
func runRefusals(t *testing.T, url string) map[string]refusal {
	t.Helper()
	script := filepath.Join("js", "refusals.mjs")
	p := run(120*time.Second, []string{"LEDGERD_HTTP=" + url}, "node", script)
	if p.Err != nil {
		p.logOutput(t, script)
		t.Fatalf("%s against %s crashed: %v", script, url, p.Err)
	}
	out := map[string]refusal{}
	for _, line := range strings.Split(p.Stdout, "\n") {
		body, ok := strings.CutPrefix(line, "REFUSAL ")
		if !ok {
			continue
		}
		var r refusal
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("%s: %q: %v", script, line, err)
		}
		out[r.Lib+" "+r.Case] = r
	}
	if t.Failed() || len(out) == 0 {
		p.logOutput(t, script)
	}
	return out
}

func refusalText(s *string) string {
	if s == nil {
		return "none"
	}
	return *s
}
