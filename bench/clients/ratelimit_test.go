package clients

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/bench/proc"
)

// rateLimitOutcome is one line of js/ratelimit.mjs.
type rateLimitOutcome struct {
	Lib     string         `json:"lib"`
	Calls   int            `json:"calls"`
	Class   string         `json:"class"`
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
	Shown   string         `json:"shown"`
	Ms      int64          `json:"ms"`
}

// TestRateLimitReachesClients: the rate-limit refusal reaches the user's
// code through ethers 6 and viem 2 over HTTP with their defaults: its code
// -32005, its message naming the limit and its data. The node runs with
// --rate-limit (the flag in a real process); the program sets the same
// budget afresh for each library with lab_setRateLimits.
func TestRateLimitReachesClients(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a node and a client program")
	}
	if !jsReady(t) {
		return
	}
	n := startNode(t, false, "--rate-limit", "address=3/60s,weight.eth_getLogs=20")
	c, err := rpc.Dial(n.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var st struct {
		Config struct {
			Address struct {
				Capacity float64 `json:"capacity"`
			} `json:"address"`
			Weights map[string]int `json:"weights"`
		} `json:"config"`
	}
	if err := c.Call(&st, "lab_rateLimits"); err != nil || st.Config.Address.Capacity != 3 || st.Config.Weights["eth_getLogs"] != 20 {
		t.Fatalf("lab_rateLimits under --rate-limit: %+v %v, want capacity 3 and eth_getLogs 20", st, err)
	}
	script := filepath.Join("js", "ratelimit.mjs")
	p := run(60*time.Second, []string{"LEDGERD_HTTP=" + n.HTTP, "RATE_LIMIT=address=3/60s"}, "node", script)
	if p.Err != nil {
		p.logOutput(t, script)
		t.Fatalf("the program crashed: %v", p.Err)
	}
	got := map[string]rateLimitOutcome{}
	for _, line := range strings.Split(p.Stdout, "\n") {
		if body, ok := strings.CutPrefix(line, "RATELIMIT "); ok {
			var o rateLimitOutcome
			if err := json.Unmarshal([]byte(body), &o); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			got[o.Lib] = o
		}
	}
	for _, lib := range []string{"ethers", "viem"} {
		o, ok := got[lib]
		if !ok {
			p.logOutput(t, script)
			t.Fatalf("%s: no outcome", lib)
		}
		t.Logf("%s: %+v", lib, o)
		if o.Calls != 3 || o.Code != -32005 || o.Message != "rate limit exceeded: address" ||
			o.Data["limit"] != "address" || o.Data["key"] != "127.0.0.1" || o.Data["weight"] != 1.0 {
			t.Errorf("%s: %+v, want 3 calls, then -32005 \"rate limit exceeded: address\" with its data", lib, o)
		}
		if !strings.Contains(o.Shown, "rate limit exceeded") && !strings.Contains(o.Shown, "limit") {
			t.Errorf("%s: the error's own message %q does not say a limit was hit", lib, o.Shown)
		}
	}
}

// TestRateLimitFlagRefused: ledgerd refuses a bad --rate-limit at start,
// the message naming the key.
func TestRateLimitFlagRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts ledgerd processes")
	}
	bin := buildGo(t, "./cmd/ledgerd")
	for _, c := range []struct{ spec, want string }{
		{"adress=10/1s", "adress: unknown key"},
		{"address=10/0s", `address: want a PERIOD from 1ms to 24h like 60s, got "0s"`},
		{"address=10/1s,weight.eth_getLogs=x", "weight.eth_getLogs: want an integer weight"},
		{"address=10/1s,weight.eth_getLog=3", "weight.eth_getLog: not a method this node serves"},
	} {
		n, err := proc.Start(bin, "--dev", "--datadir", t.TempDir(), "--rate-limit", c.spec)
		if err == nil {
			n.Stop()
			t.Fatalf("--rate-limit %s: started", c.spec)
		}
		if !strings.Contains(err.Error(), "invalid value \""+c.spec+"\" for flag -rate-limit: "+c.want) {
			t.Errorf("--rate-limit %s: %v, want the key named: %q", c.spec, err, c.want)
		}
	}
}
