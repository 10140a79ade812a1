//go:build unix

package rpc_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// ledgerd replay against the live session it replays: a node takes spot
// and perp orders, a trigger and transfers from go-ethereum while a WebSocket subscriber records every
// channel the replay writes frames of; then, with the node stopped, two
// replays of its data directory write the same bytes, end at the state
// admin_stateHash answered, and their frames are the notifications the
// subscriber received, in order.
func TestReplayEqualsLiveSession(t *testing.T) {
	var dir string
	tn := startNode(t, withPerpMarket, func(c *node.Config) { dir = c.DataDir })
	w := tn.dialSubs(t)
	channel := map[string]string{} // subscription id → channel
	for i, ch := range node.ReplayChannels {
		channel[w.sub(i+1, ch, map[string]any{})] = ch
	}
	alice, bob, carol := tn.sender(t, 0), tn.sender(t, 1), tn.sender(t, 2)
	accounts := []common.Address{alice.addr(), carol.addr()}
	params := map[string]string{} // subscription id → params as the replay writes them
	for i, a := range accounts {
		for j, ch := range []string{"svc_positions", "svc_triggers"} {
			id := w.sub(100+2*i+j, ch, map[string]any{"account": a})
			channel[id], params[id] = ch, `{"account":"`+strings.ToLower(a.Hex())+`"}`
		}
	}
	heads := w.sub(len(node.ReplayChannels)+1, "newHeads")
	var live bytes.Buffer
	record := func() {
		for _, n := range w.until(heads) {
			p := params[n.Subscription]
			if p == "" {
				p = "{}"
			}
			live.WriteString(`{"channel":"` + channel[n.Subscription] + `","params":` + p + `,"result":`)
			live.Write(n.Result)
			live.WriteString("}\n")
		}
	}
	payer := node.DevKey(3)
	for round := range int64(5) {
		buyer, seller := alice, bob
		if round%2 == 1 {
			buyer, seller = bob, alice
		}
		tn.cross(t, buyer, seller, wethBook, eth(1), eth(3000+round))
		bob.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(4000+round), 0, 0, 0)) // rests above the cross
		alice.mustSend(t, pack(t, "transfer", weth, carol.addr(), eth(1), tn.nextDeadline()))
		tx := dynTx(t, payer, chainID, uint64(round), devAddr(4), big.NewInt(1e15), big.NewInt(0), gwei)
		if err := tn.eth.SendTransaction(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
		tn.waitReceipt(tx.Hash())
		switch round {
		case 0: // alice long, bob short: alice's positions move with the mark
			tn.cross(t, alice, bob, perpBook, eth(10), eth(100))
		case 1: // a stop-loss that stays stored
			data, err := triggerABI.Pack("submitTrigger", perpBook, eth(-10), new(big.Int), eth(50), uint8(1) /* StopLoss */, uint8(1),
				tn.nextDeadline(), new(big.Int), true, false)
			if err != nil {
				t.Fatal(err)
			}
			alice.mustSend(t, data)
		}
		tn.tick(t)
		record()
	}
	// Quiet ticks, but for the oracle (a logged input): alice's
	// svc_positions hears her mark move because she is watched; the
	// replay's hub watches her too.
	for i := range int64(2) {
		tn.setOracle(t, perpBook, eth(104+2*i))
		tn.tick(t)
		quiet := live.Len()
		record()
		if !strings.Contains(live.String()[quiet:], `{"channel":"svc_positions"`) {
			t.Fatalf("a quiet tick moved no watched position: %s", live.String()[quiet:])
		}
	}
	var liveState json.RawMessage
	if err := tn.admin.CallContext(context.Background(), &liveState, "admin_stateHash"); err != nil {
		t.Fatal(err)
	}
	if _, err := node.Replay(node.ReplayConfig{DataDir: dir, Out: io.Discard}); err == nil || !strings.Contains(err.Error(), "in use by a running node") {
		t.Fatalf("replay of a directory the node holds: %v, want a refusal", err)
	}
	tn.stop()

	before := dirDigest(t, dir)
	var out, frames [2]bytes.Buffer
	for i := range out {
		res, err := node.Replay(node.ReplayConfig{DataDir: dir, Out: &out[i], Frames: &frames[i],
			Accounts: []core.Address{core.Address(accounts[0]), core.Address(accounts[1])}})
		if err != nil {
			t.Fatalf("replay %d: %v", i, err)
		}
		if res.Ticks != 7 {
			t.Fatalf("replay %d ran %d ticks, want 7", i, res.Ticks)
		}
	}
	if after := dirDigest(t, dir); after != before {
		t.Fatal("the replay changed the data directory")
	}
	if !bytes.Equal(out[0].Bytes(), out[1].Bytes()) || !bytes.Equal(frames[0].Bytes(), frames[1].Bytes()) {
		t.Fatal("two replays of one directory differ")
	}
	var bare bytes.Buffer // without frames the ticks are not built: same states
	if _, err := node.Replay(node.ReplayConfig{DataDir: dir, Out: &bare}); err != nil || !bytes.Equal(bare.Bytes(), out[0].Bytes()) {
		t.Fatalf("a replay without frames: %v\n%s", err, bare.String())
	}
	lines := strings.Split(strings.TrimSuffix(out[0].String(), "\n"), "\n")
	if len(lines) != 8 || !strings.HasPrefix(lines[0], "tick_us=") {
		t.Fatalf("replay output:\n%s", out[0].String())
	}
	if last := lines[len(lines)-1]; last != string(liveState) {
		t.Fatalf("replay ends at %s, the live node's admin_stateHash was %s", last, liveState)
	}
	if !bytes.Equal(frames[0].Bytes(), live.Bytes()) {
		t.Fatalf("replayed frames differ from the live notifications:\nreplay:\n%s\nlive:\n%s", frames[0].String(), live.String())
	}
	for _, ch := range []string{"svc_orderbook", "svc_orders_v2", "svc_candles", "svc_transfers", "svc_markets", "svc_positions", "svc_triggers"} {
		if !strings.Contains(live.String(), `{"channel":"`+ch+`"`) {
			t.Fatalf("the session published no %s frame: the comparison would not cover it", ch)
		}
	}
}

// dirDigest hashes every file's path, mode and content under dir.
func dirDigest(t *testing.T, dir string) [32]byte {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h.Write([]byte(path + "\x00" + info.Mode().String() + "\x00"))
		h.Write(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}
