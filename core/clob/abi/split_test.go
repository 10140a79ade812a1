package abi

import (
	"testing"

	"github.com/ledgervenue/node/core/clob"
)

// TestSplitTruncations: every proper prefix of valid calldata is refused
// cleanly (no panic, envelope reset), and reassembling the calldata from
// two halves split at any offset, each in its own buffer, decodes to the
// same envelope as the whole.
func TestSplitTruncations(t *testing.T) {
	for _, c := range sampleCalls(t) {
		var want clob.Envelope
		if r := Decode(c.data, testChainID, testSigner, &want); r != clob.OK {
			t.Fatalf("%s: %q", c.name, r)
		}
		var env clob.Envelope
		for k := 0; k < len(c.data); k++ {
			prefix := append([]byte(nil), c.data[:k]...)
			if r := Decode(prefix, testChainID, testSigner, &env); r == clob.OK {
				t.Fatalf("%s: prefix of %d of %d bytes decoded", c.name, k, len(c.data))
			}
			if !isReset(&env) {
				t.Fatalf("%s: prefix of %d bytes left %+v", c.name, k, env)
			}
			head := append([]byte(nil), c.data[:k]...)
			whole := append(head, c.data[k:]...)
			if r := Decode(whole, testChainID, testSigner, &env); r != clob.OK || !equalEnvelopes(&env, &want) {
				t.Fatalf("%s: split at %d: %q %+v", c.name, k, r, env)
			}
		}
	}
}
