package bots

import (
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"
)

// rpcError is a JSON-RPC error answer as go-ethereum's client returns it.
type rpcError struct {
	msg  string
	data any
}

func (e rpcError) Error() string          { return e.msg }
func (e rpcError) ErrorCode() int         { return 3 }
func (e rpcError) ErrorData() interface{} { return e.data }

// revertData is Error(string) data with reason, as the node encodes a revert.
func revertData(reason string) string {
	b := []byte{0x08, 0xc3, 0x79, 0xa0}
	word := func(n int) []byte { w := make([]byte, 32); w[31] = byte(n); return w }
	b = append(b, word(32)...)
	b = append(b, word(len(reason))...)
	b = append(b, reason...)
	b = append(b, make([]byte, 32-len(reason)%32)...)
	return hexutil.Encode(b)
}

func TestRefusalReason(t *testing.T) {
	f := func(err rpcError, want string) {
		t.Helper()
		if got := refusalReason(err); got != want {
			t.Fatalf("%+v: %q, want %q", err, got, want)
		}
	}
	f(rpcError{"execution reverted", revertData("CLOB validation failed: unknown order")}, "unknown order")
	f(rpcError{"execution reverted", revertData("insufficient funds")}, "insufficient funds")
	f(rpcError{"too many requests", nil}, "too many requests")
	f(rpcError{"execution reverted", "0x08c379a0"}, "execution reverted")                 // too short
	f(rpcError{"execution reverted", revertData("x")[:2+2*(4+64)]}, "execution reverted") // length past the data
	f(rpcError{"execution reverted", "zz"}, "execution reverted")
}
