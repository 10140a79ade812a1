package jsonrpc

import (
	"os"
	"testing"

	"github.com/holiman/uint256"
)

// TestSteadyStateAllocs locks the request path of eth_getBalance to zero
// allocations: Parse, ParseAddress of param 0, and the result written into
// a reused buffer.
func TestSteadyStateAllocs(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x00112233445566778899aabbccddeeffaabbccdd","latest"]}`)
	var p Parser
	var out []byte
	balance := uint256.MustFromHex("0xde0b6b3a7640000")
	var addr [20]byte
	run := func() {
		reqs, _, err := p.Parse(body)
		if err != nil || len(reqs) != 1 {
			t.Fatalf("Parse: %v", err)
		}
		var perr *Error
		if addr, perr = ParseAddress(reqs[0].Param(0)); perr != nil {
			t.Fatalf("ParseAddress: %v", perr)
		}
		out = AppendResultPrefix(out[:0], reqs[0].ID)
		out = AppendQuantityU256(out, balance)
		out = AppendResultSuffix(out)
	}
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Fatalf("%v allocations per request, want 0", n)
	}
	if addr[19] != 0xdd {
		t.Fatalf("address %x", addr)
	}
	if got := string(out); got != `{"jsonrpc":"2.0","id":1,"result":"0xde0b6b3a7640000"}` {
		t.Fatalf("response %s", got)
	}
}

// TestOtherPathsAllocs locks more paths to zero allocations: batches, whole
// body errors, invalid requests, every decoder, error responses.
func TestOtherPathsAllocs(t *testing.T) {
	medium, err := os.ReadFile("testdata/medium.json")
	if err != nil {
		t.Fatal(err)
	}
	var p Parser
	var out, data []byte
	f := func(name string, run func()) {
		t.Helper()
		if n := testing.AllocsPerRun(50, run); n != 0 {
			t.Fatalf("%s: %v allocations, want 0", name, n)
		}
	}
	f("batch", func() { p.Parse(medium) })
	f("parse error", func() { p.Parse([]byte(`{"jsonrpc":"2.0","id":NaN}`)) })
	f("invalid requests", func() { p.Parse([]byte(`[1,{"id":{}},{"jsonrpc":"2.0","id":"a","method":7}]`)) })
	body := []byte(`{"jsonrpc":"2.0","id":"x","method":"m","params":["0x` + hex64 + `","0x1a2b",` +
		`"0xffffffffffffffffffffff",12345678901234567890123,"0xzz"]}`)
	f("decoders", func() {
		reqs, _, _ := p.Parse(body)
		r := &reqs[0]
		ParseHash(r.Param(0))
		data, _ = ParseData(data[:0], r.Param(1))
		ParseQuantity(r.Param(1))
		ParseU256(r.Param(2))
		ParseAddress(r.Param(4))
		ParseQuantity(r.Param(9))
	})
	f("error response", func() {
		reqs, _, _ := p.Parse(body)
		_, perr := ParseAddress(reqs[0].Param(4))
		out = AppendError(out[:0], reqs[0].ID, perr)
		out = AppendData(out, data)
		out = AppendString(out, "é\n\xff")
		out = AppendQuantity(out, 1<<40)
	})
	if !raceEnabled {
		// sync.Pool drops items at random under the race detector.
		f("decimal quantities", func() {
			reqs, _, _ := p.Parse(body)
			ParseQuantity(reqs[0].Param(3))
			ParseU256(reqs[0].Param(3))
		})
	}
}
