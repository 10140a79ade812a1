package abi

import (
	"bytes"
	"testing"

	"github.com/ledgervenue/node/core/clob"
)

// FuzzDecode feeds calldata in two halves, a and b, that the fuzzer mutates
// independently (a head in one, a tail in the other). Decode must never
// panic; an accepted input must survive re-encoding with our encoders; and
// when a ‖ b is canonical calldata, its prefix a must be refused.
func FuzzDecode(f *testing.F) {
	for _, c := range sampleCalls(f) {
		f.Add(c.data[:len(c.data)/2], c.data[len(c.data)/2:])
		f.Add(c.data, []byte(nil))
	}
	f.Add([]byte(nil), []byte(nil))
	f.Add([]byte{0xda, 0x23, 0x5f}, []byte{0x17})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		whole := append(append(make([]byte, 0, len(a)+len(b)), a...), b...)
		var env, again clob.Envelope
		r := Decode(whole, testChainID, testSigner, &env)
		if r >= clob.ReasonUnknownBook {
			t.Fatalf("Decode returned a non-decoder reason %q", r)
		}
		if r != clob.OK {
			if !isReset(&env) {
				t.Fatalf("refused with %q but left %+v", r, env)
			}
			return
		}
		if len(env.Intents) == 0 || len(env.Intents) > clob.BatchIntentsMax {
			t.Fatalf("%d intents", len(env.Intents))
		}
		encoded := reencode(t, &env, whole)
		if r := Decode(encoded, testChainID, testSigner, &again); r != clob.OK {
			t.Fatalf("re-encoded envelope refused: %q\n in  %x\n out %x", r, whole, encoded)
		}
		if !equalEnvelopes(&env, &again) {
			t.Fatalf("round trip changed the envelope:\n %+v\n %+v", env, again)
		}
		if bytes.Equal(encoded, whole) && len(b) > 0 {
			if r := Decode(a, testChainID, testSigner, &again); r == clob.OK {
				t.Fatalf("a strict prefix of canonical calldata decoded: %x", a)
			}
		}
	})
}
