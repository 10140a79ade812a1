package bots_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	gethrpc "github.com/ethereum/go-ethereum/rpc"

	"github.com/ledgervenue/node/bench/bots"
	"github.com/ledgervenue/node/bench/proc"
)

// ledgerd is the binary TestMain built (or LEDGERD_BIN).
var ledgerd string

func TestMain(m *testing.M) { os.Exit(proc.Main(m, "../..", &ledgerd)) }

const adminToken = "bots-test-token"

// Dev market ids (net/node/devnet.go).
var (
	wethUSD = common.HexToHash("0x01")
	ethPerp = common.HexToHash("0x03")
)

func dialAdmin(t *testing.T, url string) *gethrpc.Client {
	t.Helper()
	return proc.Dial(t, url, adminToken)
}

func call(t *testing.T, c *gethrpc.Client, result any, method string, args ...any) {
	t.Helper()
	proc.Call(t, c, result, method, args...)
}

func status(t *testing.T, admin *gethrpc.Client) bots.Status {
	t.Helper()
	var st bots.Status
	call(t, admin, &st, "admin_bots")
	return st
}

// waitState polls admin_bots until the session is in state (10 s at most).
func waitState(t *testing.T, admin *gethrpc.Client, state string) bots.Status {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; {
		st := status(t, admin)
		if st.State == state {
			return st
		}
		if time.Now().After(end) {
			t.Fatalf("bots still %q (error %q), want %q", st.State, st.Error, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// book is the part of ob_getOrderbook the tests read.
type book struct {
	Buys  map[string]json.RawMessage `json:"buys"`
	Sells map[string]json.RawMessage `json:"sells"`
}

// checkTwoSided fails unless the book has resting orders on both sides.
func checkTwoSided(t *testing.T, c *gethrpc.Client, id common.Hash) {
	t.Helper()
	var b book
	call(t, c, &b, "ob_getOrderbook", id, 10)
	if len(b.Buys) == 0 || len(b.Sells) == 0 {
		t.Fatalf("book %s: %d buy and %d sell levels, want both sides", id, len(b.Buys), len(b.Sells))
	}
}

// fills counts an account's fills (first page).
func fills(t *testing.T, c *gethrpc.Client, account string) int {
	t.Helper()
	var page struct {
		Fills []json.RawMessage `json:"fills"`
	}
	call(t, c, &page, "ob_getFills", common.HexToAddress(account), map[string]any{"limit": 100})
	return len(page.Fills)
}
