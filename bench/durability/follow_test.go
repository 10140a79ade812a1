package durability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/ledgervenue/node/bench/proc"
)

// TestFollowersServeLikeTheLeader: a leader under the built-in bots, a
// sender load and crossing orders, and two followers of its stream. Once
// they have applied what it published, every read compared answers byte
// for byte as the leader's (receipts, transactions, balances, nonces,
// orders, listings, REST), over HTTP and WebSocket; a resubscription with
// since on a follower replays the leader's svc_orderbook and
// svc_confirmedReceipts notifications byte for byte; a follower refuses a
// write naming the leader; and the three state hashes are equal.
func TestFollowersServeLikeTheLeader(t *testing.T) {
	natsURL := startNATS(t)
	leaderAdmin, followerAdmin := proc.FreeAddr(t), proc.FreeAddr(t)
	leader, lc, lws := start(t, []string{"--dev", "--datadir", t.TempDir(), "--admin-token", "test", "--nats", natsURL, "--bots", "default",
		"--admin-addr", leaderAdmin})
	type follower struct {
		c, ws *rpc.Client
		http  string
	}
	var followers []follower
	for i := range 2 {
		args := []string{"--dev", "--datadir", t.TempDir(), "--admin-token", "test", "--nats", natsURL, "--follow"}
		if i == 0 {
			args = append(args, "--admin-addr", followerAdmin)
		}
		n, c, ws := start(t, args)
		followers = append(followers, follower{c: c, ws: ws, http: n.HTTP})
	}
	book := map[string]any{"orderbook_ids": []common.Hash{wethBook}}
	ch, sub := subscribe(t, lws, "svc_orderbook", book)
	buyer, seller := newTrader(t, 4), newTrader(t, 5)
	lg := newLedger()
	stop := lg.load(lc, devSenders()[:transferKeys])
	var sent []json.RawMessage
	var sinceUs, rcptSince int64
	var crossed []common.Hash
	for round := range 4 {
		buy, us := cross(t, lc, buyer, seller)
		crossed = append(crossed, buy)
		sent = append(sent, through(t, ch, sub, us)...)
		if round == 0 {
			sinceUs, rcptSince = us, waitAttested(t, lc, buy)
		}
	}
	stop()
	lc.SetHeader("Authorization", "Bearer test")
	if err := lc.Call(nil, "admin_stopBots"); err != nil {
		t.Fatal(err)
	}
	payer := newTrader(t, 6)
	last := payer.send(t, ethclient.NewClient(lc), common.Address{0xee}, big.NewInt(1), nil)
	waitAttested(t, lc, last)
	lead, err := roleOf(leader.HTTP)
	if err != nil || lead.Role != "leader" {
		t.Fatalf("the leader's replication: %+v %v", lead, err)
	}

	// Reads: each follower's answer equals the leader's (within 10 s: it
	// applies what the leader published, in order).
	var hashes []common.Hash
	for h := range lg.acked {
		if len(hashes) < 60 {
			hashes = append(hashes, h)
		}
	}
	hashes = append(append(hashes, crossed...), last)
	var calls [][]any
	for _, h := range hashes {
		calls = append(calls, []any{"eth_getTransactionReceipt", h}, []any{"eth_getTransactionByHash", h})
	}
	for _, s := range append(devSenders(), newTrader(t, 0).sender(), buyer.sender(), seller.sender()) {
		calls = append(calls, []any{"eth_getBalance", s.addr, "latest"}, []any{"eth_getTransactionCount", s.addr, "latest"},
			[]any{"ob_getOrders", s.addr})
	}
	calls = append(calls, []any{"svc_listConfirmedReceipts", map[string]any{"since": rcptSince, "pagination": map[string]any{"limit": 500}}})
	rest := []string{"/v1/tx/" + last.Hex(), "/v1/tx/" + crossed[0].Hex()}
	for i, f := range followers {
		awaitURL(t, f.http, lead.StreamSeq)
		for _, call := range calls {
			for _, c := range []*rpc.Client{f.c, f.ws} {
				sameAnswer(t, i, call, lc, c)
			}
		}
		for _, path := range rest {
			want, got := get(t, leader.HTTP+path), get(t, f.http+path)
			if want != got {
				t.Fatalf("follower %d: GET %s\n%s\nleader:\n%s", i, path, got, want)
			}
		}
	}

	// Catch-up by since: the leader's own replay is the reference.
	resumed := 0
	for resumed < len(sent) && tickUs(t, sent[resumed]) <= sinceUs {
		resumed++
	}
	want := sent[resumed:]
	rcpts := confirmedSince(t, lc, rcptSince)
	for i, f := range followers {
		rch, rsub := subscribe(t, f.ws, "svc_confirmedReceipts", map[string]any{"since": rcptSince})
		for j, w := range rcpts {
			if got := receiptHash(t, next(t, rch, rsub)); got != w {
				t.Fatalf("follower %d: svc_confirmedReceipts since %d replayed %s as receipt %d, want %s", i, rcptSince, got, j, w)
			}
		}
		och, osub := subscribe(t, f.ws, "svc_orderbook", map[string]any{"orderbook_ids": book["orderbook_ids"], "since": sinceUs})
		for j, w := range want {
			if got := next(t, och, osub); string(got) != string(w) {
				t.Fatalf("follower %d: svc_orderbook since %d replayed as notification %d\n%s\nthe leader sent\n%s", i, sinceUs, j, got, w)
			}
		}
	}

	// A write on a follower names the leader.
	err = ethclient.NewClient(followers[0].c).SendTransaction(context.Background(), payer.sign(t, common.Address{0xee}, big.NewInt(1), nil))
	var de rpc.DataError
	var ce rpc.Error
	if !errors.As(err, &de) || !errors.As(err, &ce) || ce.ErrorCode() != -32603 ||
		!strings.Contains(fmt.Sprint(de.ErrorData()), "send writes to the leader at "+leader.HTTP) {
		t.Fatalf("a write sent to a follower: %v (data %v)", err, de)
	}
	r, err := roleOf(followers[0].http)
	if err != nil || r.Role != "follower" || r.Leader != leader.HTTP {
		t.Fatalf("a follower's replication: %+v %v", r, err)
	}
	for addr, want := range map[string]string{leaderAdmin: "ledgerd_replication_leader 1", followerAdmin: "ledgerd_replication_leader 0"} {
		body := get(t, "http://"+addr+"/metrics")
		for _, w := range []string{want, "ledgerd_replication_stream_seq ", "ledgerd_replication_lag_inputs ", "ledgerd_replication_lag_seconds "} {
			if !strings.Contains(body, "\n"+w) {
				t.Fatalf("/metrics of %s has no %q", addr, w)
			}
		}
	}

	// The states: the perp markets tick on the wall clock, so the three
	// are read until they agree.
	deadline := time.Now().Add(20 * time.Second)
	for {
		hashes := map[string]bool{stateHash(t, lc): true}
		for _, f := range followers {
			f.c.SetHeader("Authorization", "Bearer test")
			hashes[stateHash(t, f.c)] = true
		}
		if len(hashes) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the states differ: %v", hashes)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// awaitURL waits until the node at url has applied the stream up to
// message seq.
func awaitURL(t *testing.T, url string, seq uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := roleOf(url)
		if err == nil && r.StreamSeq >= seq {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has not reached stream message %d in 30 s (%+v, %v)", url, seq, r, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sameAnswer waits up to 10 s for c to answer call as the leader lc does,
// byte for byte.
func sameAnswer(t *testing.T, i int, call []any, lc, c *rpc.Client) {
	t.Helper()
	method := call[0].(string)
	var want, got json.RawMessage
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := lc.Call(&want, method, call[1:]...); err != nil {
			t.Fatalf("leader: %s: %v", method, err)
		}
		if err := c.Call(&got, method, call[1:]...); err != nil {
			t.Fatalf("follower %d: %s: %v", i, method, err)
		}
		if string(got) == string(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("follower %d: %s %v answers\n%s\nthe leader\n%s", i, method, call[1:], got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, b)
}
