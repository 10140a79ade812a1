//go:build unix

package rpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	gethrpc "github.com/ethereum/go-ethereum/rpc"

	"github.com/ledgervenue/node/net/rpc"
	"github.com/ledgervenue/node/net/server"
)

// End-to-end tests of the lab's delivery faults (docs/lab.md, "Delivery
// faults") over loopback with go-ethereum's client over HTTP and
// WebSocket, and gorilla where close notifications matter.
//
// Timing tolerance: a held message leaves when its timer fires, never
// before, so each latency is at least what was injected (less 1 ms of
// clock granularity). Above it, the test allows latencyTol on top of the
// slowest undelayed baseline call of the same test: on a shared 2-core
// machine running other tests a timer or a loop may run tens of ms late.
const latencyTol = 60 * time.Millisecond

// startLabNode is a --dev node: the lab_ controls need no token.
func startLabNode(t *testing.T) *testNode {
	return startNodeWith(t, nodeSetup{rpc: func(c *rpc.Config) { c.Dev = true }})
}

func mustCall(t *testing.T, c *gethrpc.Client, out any, method string, args ...any) {
	t.Helper()
	if err := c.CallContext(context.Background(), out, method, args...); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}

// timeCalls times n sequential eth_chainId calls on c.
func timeCalls(t *testing.T, c *gethrpc.Client, n int) []time.Duration {
	t.Helper()
	out := make([]time.Duration, n)
	for i := range out {
		start := time.Now()
		var id hexutil.Uint64
		mustCall(t, c, &id, "eth_chainId")
		out[i] = time.Since(start)
	}
	return out
}

func slowest(ds []time.Duration) time.Duration { return slices.Max(ds) }

// TestLabLatencyFixed: a fixed 50 ms on every answer, over HTTP and
// WebSocket: each call takes between 50 ms and 50 ms plus the slowest
// undelayed call plus latencyTol; after lab_clearLatency calls are fast
// again.
func TestLabLatencyFixed(t *testing.T) {
	tn := startLabNode(t)
	wsc := tn.dialWS(t)
	const fixed = 50 * time.Millisecond
	for _, tc := range []struct {
		name string
		c    *gethrpc.Client
	}{{"http", tn.rpc}, {"ws", wsc}} {
		base := slowest(timeCalls(t, tc.c, 10))
		var id string
		mustCall(t, tn.admin, &id, "lab_setLatency", map[string]any{"scope": "all", "answers": map[string]any{"ms": 50}})
		for i, d := range timeCalls(t, tc.c, 10) {
			if d < fixed-time.Millisecond || d > fixed+base+latencyTol {
				t.Fatalf("%s: call %d took %v, want %v..%v", tc.name, i, d, fixed, fixed+base+latencyTol)
			}
		}
		var ok bool
		mustCall(t, tn.admin, &ok, "lab_clearLatency", id)
		if !ok {
			t.Fatalf("%s: lab_clearLatency %s: false", tc.name, id)
		}
		if d := slowest(timeCalls(t, tc.c, 5)); d >= fixed {
			t.Fatalf("%s: after clearing, a call took %v", tc.name, d)
		}
	}
}

// TestLabLatencyUniformMean: 50 answers drawn from uniform [20, 60] ms
// with seed 7 on one WebSocket connection. The rule's draws are the PCG
// stream the docs name (seed, 1), so the test knows each delay: every
// answer takes at least its draw, and the sample mean of (latency - draw)
// is under latencyTol/3 above the undelayed baseline's median.
func TestLabLatencyUniformMean(t *testing.T) {
	tn := startLabNode(t)
	wsc := tn.dialWS(t)
	var self hexutil.Uint64
	mustCall(t, wsc, &self, "lab_connectionId")
	base := timeCalls(t, wsc, 20)
	slices.Sort(base)
	median := base[len(base)/2]
	const seed = 7
	mustCall(t, tn.admin, nil, "lab_setLatency", map[string]any{"scope": "connection", "connection": self,
		"answers": map[string]any{"dist": "uniform", "min_ms": 20, "max_ms": 60}, "seed": seed})
	rng := rand.New(rand.NewPCG(seed, 1))
	const n = 50
	var sumErr, sumDraw time.Duration
	for i, d := range timeCalls(t, wsc, n) {
		want := time.Duration((20 + rng.Float64()*40) * float64(time.Millisecond))
		if d < want-time.Millisecond {
			t.Fatalf("answer %d took %v, under its drawn %v", i, d, want)
		}
		sumErr += d - want
		sumDraw += want
	}
	meanErr := sumErr / n
	t.Logf("mean draw %v, mean excess %v (baseline median %v)", sumDraw/n, meanErr, median)
	if meanErr > median+latencyTol/3 {
		t.Fatalf("mean excess over the drawn delays %v, want under %v", meanErr, median+latencyTol/3)
	}
	if mean := sumDraw / n; mean < 30*time.Millisecond || mean > 50*time.Millisecond {
		t.Fatalf("mean drawn delay %v, want about 40ms", mean)
	}
}

// TestLabLatencyScopes: a connection rule (set by the connection on
// itself) and an account rule (the account a subscription names) slow
// their targets only; another connection stays fast. lab_connections
// lists the ties and says which entry is the caller.
func TestLabLatencyScopes(t *testing.T) {
	tn := startLabNode(t)
	a, b, other := tn.dialWS(t), tn.dialWS(t), tn.dialWS(t)
	base := slowest(append(timeCalls(t, a, 5), timeCalls(t, other, 5)...))
	const fixed = 80 * time.Millisecond
	var rule string
	mustCall(t, a, &rule, "lab_setLatency", map[string]any{"scope": "connection", "answers": map[string]any{"ms": 80}})
	// b is tied to dev account 3 by a subscription naming it.
	acct := devAddr(3)
	tn.ethSubscribe(t, b, "svc_positions", map[string]any{"account": acct})
	mustCall(t, tn.admin, nil, "lab_setLatency", map[string]any{"scope": "account", "account": acct, "answers": map[string]any{"ms": 80}})
	for name, c := range map[string]*gethrpc.Client{"connection": a, "account": b} {
		for i, d := range timeCalls(t, c, 3) {
			if d < fixed-time.Millisecond || d > fixed+base+latencyTol {
				t.Fatalf("%s scope: call %d took %v", name, i, d)
			}
		}
	}
	if d := slowest(timeCalls(t, other, 5)); d >= fixed {
		t.Fatalf("an untargeted connection took %v", d)
	}
	var conns []struct {
		ID            hexutil.Uint64   `json:"id"`
		Transport     string           `json:"transport"`
		Subscriptions int              `json:"subscriptions"`
		Accounts      []common.Address `json:"accounts"`
		Self          bool             `json:"self"`
	}
	mustCall(t, other, &conns, "lab_connections")
	var bID, otherID hexutil.Uint64
	mustCall(t, b, &bID, "lab_connectionId")
	mustCall(t, other, &otherID, "lab_connectionId")
	found := 0
	for _, c := range conns {
		if c.Transport != "ws" || c.Self != (c.ID == otherID) {
			t.Fatalf("entry %+v (caller %d)", c, otherID)
		}
		if c.ID == bID {
			found++
			if c.Subscriptions != 1 || len(c.Accounts) != 1 || c.Accounts[0] != acct {
				t.Fatalf("b's entry %+v, want one subscription tied to %s", c, acct)
			}
		}
	}
	if len(conns) != 3 || found != 1 {
		t.Fatalf("lab_connections %+v", conns)
	}
}

// TestLabLatencyNotifications: notifications delayed 100 ms on one
// connection arrive that much after those of an undelayed subscriber of
// the same channel on another, in the same order. Arrivals are stamped
// by a goroutine per subscription as the client delivers them.
func TestLabLatencyNotifications(t *testing.T) {
	tn := startLabNode(t)
	slow, fast := tn.dialWS(t), tn.dialWS(t)
	var slowID hexutil.Uint64
	mustCall(t, slow, &slowID, "lab_connectionId")
	type arrival struct {
		at   time.Time
		head types.Header
	}
	stamp := func(c *gethrpc.Client) chan arrival {
		ch, sub := tn.ethSubscribe(t, c, "newHeads")
		out := make(chan arrival, 64)
		go func() {
			for {
				select {
				case m := <-ch:
					a := arrival{at: time.Now()}
					if json.Unmarshal(m, &a.head) == nil {
						out <- a
					}
				case <-sub.Err():
					return
				}
			}
		}()
		return out
	}
	slowCh, fastCh := stamp(slow), stamp(fast)
	const fixed = 100 * time.Millisecond
	mustCall(t, tn.admin, nil, "lab_setLatency", map[string]any{"scope": "connection", "connection": slowID,
		"notifications": map[string]any{"ms": 100}})
	next := func(ch chan arrival) arrival {
		select {
		case a := <-ch:
			return a
		case <-time.After(subsWait):
			t.Fatal("no head in time")
		}
		return arrival{}
	}
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	for i := range 5 {
		tn.cross(t, alice, bob, wethBook, eth(1), eth(300+int64(i))) // a tick runs when a book has orders
		tn.tick(t)
		f, s := next(fastCh), next(slowCh)
		if s.head.Hash() != f.head.Hash() {
			t.Fatalf("head %d: delayed %v, undelayed %v: out of order", i, s.head.Number, f.head.Number)
		}
		if lag := s.at.Sub(f.at); lag < fixed-latencyTol/3 || lag > fixed+latencyTol {
			t.Fatalf("head %d: delayed one came %v after the undelayed one, want %v (-%v/+%v)", i, lag, fixed, latencyTol/3, latencyTol)
		}
	}
}

// closeData is the data of a close notification.
type closeData struct {
	Resumable   bool   `json:"resumable"`
	ResumeSince *int64 `json:"resume_since"`
	Missed      *int64 `json:"missed"`
}

// v2Key identifies an svc_orders_v2 frame: its tick and book.
type v2Key struct {
	batch int64
	book  common.Hash
}

// frames reads svc_orders_v2 frames of sub on c until the frame of tick
// until (and every book of it), or a close notification; it returns the
// frames in order and the close, if any.
func readFrames(t *testing.T, c *wsRaw, sub string, until int64) ([]json.RawMessage, []v2Key, *notification) {
	t.Helper()
	var out []json.RawMessage
	var keys []v2Key
	for {
		n := c.notification()
		if n.Subscription != sub {
			t.Fatalf("notification of %s, want %s", n.Subscription, sub)
		}
		if n.Error != nil {
			return out, keys, &n
		}
		var f framesV2
		if err := json.Unmarshal(n.Result, &f); err != nil {
			t.Fatal(err)
		}
		out, keys = append(out, n.Result), append(keys, v2Key{f.Batch, f.Book})
		if f.Batch >= until && f.Book == wethBook {
			return out, keys, nil
		}
	}
}

// TestLabDropAndLagResume: a subscriber dropped by the lab (-32022) or
// made to lag (-32020, missed = the ticks withheld) resubscribes with
// since = resume_since; after dropping the frames of the replayed tick it
// already had, its stream equals a control subscriber's, tick for tick,
// frame for frame. Orders cross in every tick.
func TestLabDropAndLagResume(t *testing.T) {
	for _, code := range []int{-32022, -32020} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			tn := startLabNode(t)
			alice, bob := tn.sender(t, 0), tn.sender(t, 1)
			price := int64(300)
			trade := func() int64 {
				price++
				tn.cross(t, alice, bob, wethBook, eth(1), eth(price))
				tn.tick(t)
				return tn.clock.NowMicros()
			}
			control, victim := tn.dialRaw(t), tn.dialRaw(t)
			cID := control.subscribe(1, "svc_orders_v2", map[string]any{})
			vID := victim.subscribe(1, "svc_orders_v2", map[string]any{})
			var got []json.RawMessage
			var gotKeys []v2Key
			var last int64
			for range 3 {
				last = trade()
				f, k, cl := readFrames(t, victim, vID, last)
				if cl != nil {
					t.Fatalf("closed early: %+v", cl.Error)
				}
				got, gotKeys = append(got, f...), append(gotKeys, k...)
			}
			var n int
			if code == -32022 {
				mustCall(t, tn.admin, &n, "lab_dropSubscription", map[string]any{"subscription": vID})
			} else {
				mustCall(t, tn.admin, &n, "lab_lagSubscription", map[string]any{"subscription": vID, "ticks": 2})
			}
			if n != 1 {
				t.Fatalf("affected %d subscriptions, want 1", n)
			}
			for range 2 {
				last = trade()
			}
			f, k, cl := readFrames(t, victim, vID, last)
			if cl == nil || len(f) != 0 {
				t.Fatalf("the victim got %d frames and no close: %v", len(f), k)
			}
			if cl.Error.Code != code {
				t.Fatalf("close code %d, want %d", cl.Error.Code, code)
			}
			var d closeData
			raw, _ := json.Marshal(cl.Error.Data)
			if err := json.Unmarshal(raw, &d); err != nil || !d.Resumable || d.ResumeSince == nil {
				t.Fatalf("close data %s (%v)", raw, err)
			}
			if code == -32020 && (d.Missed == nil || *d.Missed != 2) {
				t.Fatalf("missed %v, want 2", d.Missed)
			}
			if code == -32022 && d.Missed != nil {
				t.Fatalf("a -32022 close with missed")
			}
			if *d.ResumeSince != gotKeys[len(gotKeys)-1].batch {
				t.Fatalf("resume_since %d, want the last tick it had, %d", *d.ResumeSince, gotKeys[len(gotKeys)-1].batch)
			}
			vID2 := victim.subscribe(2, "svc_orders_v2", map[string]any{"since": *d.ResumeSince})
			last = trade()
			f, k, cl = readFrames(t, victim, vID2, last)
			if cl != nil {
				t.Fatalf("resumed subscription closed: %+v", cl.Error)
			}
			// The resume_since tick is replayed in full: drop what was had.
			for i := range f {
				if !slices.Contains(gotKeys, k[i]) {
					got, gotKeys = append(got, f[i]), append(gotKeys, k[i])
				}
			}
			want, wantKeys, cl := readFrames(t, control, cID, last)
			if cl != nil {
				t.Fatalf("control closed: %+v", cl.Error)
			}
			if fmt.Sprint(gotKeys) != fmt.Sprint(wantKeys) {
				t.Fatalf("victim's ticks %v, control's %v", gotKeys, wantKeys)
			}
			for i := range want {
				if string(got[i]) != string(want[i]) {
					t.Fatalf("frame %d differs:\n%s\n%s", i, got[i], want[i])
				}
			}
			if len(wantKeys) < 6 {
				t.Fatalf("only %d frames: no trading?", len(wantKeys))
			}
			var m struct {
				Lab map[string]uint64 `json:"lab"`
			}
			if err := json.Unmarshal(tn.rawCall("svc_metrics"), &m); err != nil {
				t.Fatal(err)
			}
			key := map[int]string{-32022: "dropped_subscriptions", -32020: "lagged_subscriptions"}[code]
			if m.Lab[key] != 1 {
				t.Fatalf("svc_metrics lab %v", m.Lab)
			}
		})
	}
}

// TestLabCloseConnection: go-ethereum's WebSocket client sees its
// connection end, with a close frame or abruptly; a new connection works;
// a connection closing itself gets its answer first.
func TestLabCloseConnection(t *testing.T) {
	tn := startLabNode(t)
	for _, abrupt := range []bool{false, true} {
		c := tn.dialWS(t)
		var id hexutil.Uint64
		mustCall(t, c, &id, "lab_connectionId")
		ch, sub := tn.ethSubscribe(t, c, "newHeads")
		var n int
		mustCall(t, tn.admin, &n, "lab_closeConnection", map[string]any{"connection": id, "abrupt": abrupt})
		if n != 1 {
			t.Fatalf("abrupt %v: closed %d", abrupt, n)
		}
		select {
		case err := <-sub.Err():
			if err == nil {
				t.Fatalf("abrupt %v: subscription ended without an error", abrupt)
			}
		case m := <-ch:
			t.Fatalf("abrupt %v: a notification %s instead of the end", abrupt, m)
		case <-time.After(5 * time.Second):
			t.Fatalf("abrupt %v: the client did not see its connection end", abrupt)
		}
		timeCalls(t, tn.dialWS(t), 1) // a new connection works
	}
	self := tn.dialWS(t)
	var id hexutil.Uint64
	mustCall(t, self, &id, "lab_connectionId")
	var n int
	mustCall(t, self, &n, "lab_closeConnection", map[string]any{"connection": id})
	if n != 1 {
		t.Fatalf("self close: %d", n)
	}
	var m struct {
		Lab map[string]uint64 `json:"lab"`
	}
	if err := json.Unmarshal(tn.rawCall("svc_metrics"), &m); err != nil || m.Lab["closed_connections"] != 3 {
		t.Fatalf("svc_metrics lab %v (%v)", m.Lab, err)
	}
}

// TestLabDeliveryParams: bad input gets -32602 naming the field, and
// changes nothing; the rules bound answers -32005.
func TestLabDeliveryParams(t *testing.T) {
	tn := startLabNode(t)
	for _, c := range []struct {
		method string
		arg    any
		data   string
	}{
		{"lab_setLatency", map[string]any{"scope": "everyone", "answers": map[string]any{"ms": 1}}, `scope: want "all", "connection" or "account"`},
		{"lab_setLatency", map[string]any{"scope": "all"}, "rule: give answers, notifications or both"},
		{"lab_setLatency", map[string]any{"scope": "all", "answers": map[string]any{"ms": 60001}}, "answers.ms: want a number of ms in [0, 60000]"},
		{"lab_setLatency", map[string]any{"scope": "all", "answers": map[string]any{"ms": -1}}, "answers.ms: want a number of ms in [0, 60000]"},
		{"lab_setLatency", map[string]any{"scope": "all", "answers": map[string]any{"dist": "uniform", "min_ms": 5, "max_ms": 1}}, "answers: min_ms must not exceed max_ms"},
		{"lab_setLatency", map[string]any{"scope": "all", "notifications": map[string]any{"dist": "pareto", "mean_ms": 5}}, `notifications.dist: want "fixed", "uniform", "normal" or "exponential"`},
		{"lab_setLatency", map[string]any{"scope": "all", "answers": map[string]any{"ms": 1, "sd_ms": 2}}, `answers: unknown key "sd_ms" for this distribution`},
		{"lab_setLatency", map[string]any{"scope": "account", "answers": map[string]any{"ms": 1}}, `account: required with scope "account"`},
		{"lab_setLatency", map[string]any{"scope": "all", "account": devAddr(0), "answers": map[string]any{"ms": 1}}, `account: only with scope "account"`},
		{"lab_setLatency", map[string]any{"scope": "all", "answers": map[string]any{"ms": 1}, "seed": "x"}, `seed: want a quantity ("0x…") or a non-negative integer`},
		{"lab_setLatency", map[string]any{"scope": "all", "answer": map[string]any{"ms": 1}}, `rule: unknown key "answer" (takes scope, connection, account, answers, notifications, seed)`},
		{"lab_dropSubscription", map[string]any{}, "lab_dropSubscription: give exactly one of subscription and account"},
		{"lab_lagSubscription", map[string]any{"subscription": "0x1", "ticks": 65}, "ticks: want 1 to 64"},
		{"lab_closeConnection", map[string]any{"connection": "0x1", "abrupt": "yes"}, "abrupt: want true or false"},
	} {
		err := tn.admin.CallContext(context.Background(), nil, c.method, c.arg)
		wantRPCError(t, err, -32602, "Invalid params", c.data)
	}
	var rules []json.RawMessage
	mustCall(t, tn.admin, &rules, "lab_latency")
	if len(rules) != 0 {
		t.Fatalf("refused rules left %d in force", len(rules))
	}
	for range rpc.LatencyRulesMax {
		mustCall(t, tn.admin, nil, "lab_setLatency", map[string]any{"scope": "connection", "connection": "0xffff", "answers": map[string]any{"ms": 1}})
	}
	err := tn.admin.CallContext(context.Background(), nil, "lab_setLatency", map[string]any{"scope": "all", "answers": map[string]any{"ms": 1}})
	wantRPCError(t, err, -32005, "limit exceeded: too many latency rules (max 64)", nil)
	var ok bool
	mustCall(t, tn.admin, &ok, "lab_clearLatency")
	mustCall(t, tn.admin, &rules, "lab_latency")
	if !ok || len(rules) != 0 {
		t.Fatalf("clear all: %v, %d left", ok, len(rules))
	}
}

// TestLabLatencyKeepsOrder: answers with random delays keep their order
// on a connection: HTTP/1.1 pipelined requests (each answer waits for the
// one before it, so the whole takes at least the sum of the draws) and a
// burst of WebSocket messages (a message leaves at its due time or the
// previous one's).
func TestLabLatencyKeepsOrder(t *testing.T) {
	tn := startLabNode(t)
	const seed = 3
	rule := map[string]any{"scope": "all", "answers": map[string]any{"dist": "uniform", "min_ms": 0, "max_ms": 40}, "seed": seed}
	var id string
	mustCall(t, tn.admin, &id, "lab_setLatency", rule)
	// HTTP: four requests in one write.
	conn, err := net.Dial("tcp", strings.TrimPrefix(tn.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var reqs strings.Builder
	for i := 1; i <= 4; i++ {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"eth_chainId"}`, i)
		fmt.Fprintf(&reqs, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	var sum time.Duration
	for range 4 {
		sum += time.Duration((rng.Float64() * 40) * float64(time.Millisecond))
	}
	start := time.Now()
	if _, err := conn.Write([]byte(reqs.String())); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	for i := 1; i <= 4; i++ {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ ID int }
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if err != nil || m.ID != i {
			t.Fatalf("pipelined answer %d has id %d (%v)", i, m.ID, err)
		}
	}
	if d := time.Since(start); d < sum-time.Millisecond {
		t.Fatalf("four pipelined answers took %v, under the sum of their draws %v", d, sum)
	}
	// WebSocket: twenty messages in a burst.
	w := tn.dialRaw(t)
	for i := 1; i <= 20; i++ {
		w.call(i, "eth_chainId")
	}
	for i := 1; i <= 20; i++ {
		if m := w.next(); string(m["id"]) != strconv.Itoa(i) {
			t.Fatalf("WebSocket answer %d has id %s", i, m["id"])
		}
	}
}

// TestLabDelayedNotificationsSlowClose: held notifications count against
// the connection's send bound (here 4 KiB), so a long delay under a busy
// channel closes the subscription -32022, as for a slow reader; the close
// comes after the frames held before it, and resume_since names the
// newest tick the subscription had in full.
func TestLabDelayedNotificationsSlowClose(t *testing.T) {
	tn := startNodeWith(t, nodeSetup{rpc: func(c *rpc.Config) { c.Dev = true },
		srv: func(c *server.Config) { c.OutboundMax = 4 << 10 }})
	alice, bob := tn.sender(t, 0), tn.sender(t, 1)
	victim := tn.dialRaw(t)
	sub := victim.subscribe(1, "svc_orders_v2", map[string]any{})
	victim.call(2, "lab_connectionId")
	var self hexutil.Uint64
	if err := json.Unmarshal(victim.next()["result"], &self); err != nil {
		t.Fatal(err)
	}
	mustCall(t, tn.admin, nil, "lab_setLatency", map[string]any{"scope": "connection", "connection": self,
		"notifications": map[string]any{"ms": 1000}})
	var ticks []int64
	for i := range 12 {
		tn.cross(t, alice, bob, wethBook, eth(1), eth(300+int64(i)))
		tn.tick(t)
		ticks = append(ticks, tn.clock.NowMicros())
	}
	var had int64
	for {
		n := victim.notification()
		if n.Error == nil {
			var f framesV2
			if err := json.Unmarshal(n.Result, &f); err != nil {
				t.Fatal(err)
			}
			had = f.Batch
			continue
		}
		if n.Subscription != sub || n.Error.Code != -32022 {
			t.Fatalf("close %s %+v", n.Subscription, n.Error)
		}
		var since int64
		if err := json.Unmarshal(n.Error.Data["resume_since"], &since); err != nil || since != had || had == 0 || had == ticks[len(ticks)-1] {
			t.Fatalf("resume_since %s after frames up to %d of ticks %v", n.Error.Data["resume_since"], had, ticks)
		}
		return
	}
}

// TestLabTiesBound: a connection is tied to at most TiesPerConnMax
// accounts; later ones are not tied.
func TestLabTiesBound(t *testing.T) {
	tn := startLabNode(t)
	c := tn.dialWS(t)
	bidders := make([]common.Address, rpc.TiesPerConnMax+1)
	for i := range bidders {
		bidders[i] = common.BigToAddress(big.NewInt(int64(i + 1)))
	}
	tn.ethSubscribe(t, c, "svc_orders_v2", map[string]any{"bidders": bidders})
	var conns []struct {
		Accounts []common.Address `json:"accounts"`
	}
	mustCall(t, c, &conns, "lab_connections")
	if len(conns) != 1 || !slices.Equal(conns[0].Accounts, bidders[:rpc.TiesPerConnMax]) {
		t.Fatalf("ties %v, want the first %d of %v", conns, rpc.TiesPerConnMax, bidders)
	}
}

// TestLabFaultsByAccount: lab_dropSubscription and lab_closeConnection by
// account reach the subscriptions and connections tied to the account, and
// nothing else.
func TestLabFaultsByAccount(t *testing.T) {
	tn := startLabNode(t)
	acct := devAddr(2)
	tied, other := tn.dialRaw(t), tn.dialRaw(t)
	sub := tied.subscribe(1, "svc_positions", map[string]any{"account": acct})
	tied.notification() // the snapshot
	otherSub := other.subscribe(1, "svc_positions", map[string]any{"account": devAddr(4)})
	other.notification()
	var n int
	mustCall(t, tn.admin, &n, "lab_dropSubscription", map[string]any{"account": acct})
	if n != 1 {
		t.Fatalf("dropped %d, want 1", n)
	}
	if c := tied.notification(); c.Subscription != sub || c.Error == nil || c.Error.Code != -32022 {
		t.Fatalf("close %+v", c)
	}
	mustCall(t, tn.admin, &n, "lab_closeConnection", map[string]any{"account": acct})
	if n != 1 {
		t.Fatalf("closed %d connections, want 1", n)
	}
	_ = tied.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := tied.conn.ReadMessage(); err == nil || !strings.Contains(err.Error(), "1001") {
		t.Fatalf("the tied connection read %v, want its close 1001", err)
	}
	// The other connection and its subscription are untouched.
	other.call(2, "eth_unsubscribe", otherSub)
	if m := other.next(); string(m["result"]) != "true" {
		t.Fatalf("the other subscription: %v", m)
	}
}
