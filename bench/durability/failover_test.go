package durability

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/ledgervenue/node/bench/proc"
	"github.com/ledgervenue/node/net/replicate"
)

// member is one ledgerd process of a replicated cluster.
type member struct {
	name string
	dir  string
	n    *proc.Ledgerd
}

// replication is svc_metrics' replication object.
type replication struct {
	Role      string `json:"role"`
	Leader    string `json:"leader"`
	StreamSeq uint64 `json:"stream_seq"`
	LagInputs int64  `json:"lag_inputs"`
}

func roleOf(url string) (replication, error) {
	c, err := rpc.Dial(url)
	if err != nil {
		return replication{}, err
	}
	defer c.Close()
	var m struct {
		Replication replication `json:"replication"`
	}
	err = c.Call(&m, "svc_metrics")
	return m.Replication, err
}

// startNATS starts a NATS JetStream server in the test process: it
// outlives every ledgerd the test kills.
func startNATS(t *testing.T) string {
	t.Helper()
	s, err := replicate.StartServer(t.TempDir(), "127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// replArgs are a cluster member's flags: acknowledgements wait for the
// stream, a short lease.
func replArgs(dir, natsURL string, follow bool) []string {
	args := []string{"--dev", "--datadir", dir, "--admin-token", "test", "--snapshot-every", "400",
		"--nats", natsURL, "--nats.ack", "stream", "--nats.lease-ttl", "1s"}
	if follow {
		args = append(args, "--follow")
	}
	return args
}

// lighter is the load of the replication tests: two of the transfer
// senders and the crossing pair. Three ledgerd processes and a NATS server
// share the machine with other packages' tests; what these tests check
// does not need the full load.
func lighter(senders []*sender) []*sender {
	return append(senders[:2:2], senders[transferKeys:]...)
}

// startMember starts m as a follower on its directory; a directory that
// holds inputs the stream lacks (a leader killed between its fdatasync
// and the stream's acknowledgement, whose place another leader took) is
// refused, and then m starts afresh from an empty one.
func startMember(t *testing.T, m *member, natsURL string, fresh *int) {
	t.Helper()
	n, err := proc.Start(ledgerd, replArgs(m.dir, natsURL, true)...)
	if err != nil && strings.Contains(err.Error(), "start it from an empty data directory") {
		*fresh++
		m.dir = filepath.Join(filepath.Dir(m.dir), fmt.Sprintf("%s-%d", m.name, *fresh))
		n, err = proc.Start(ledgerd, replArgs(m.dir, natsURL, true)...)
	}
	if err != nil {
		t.Fatal(err)
	}
	m.n = n
}

// TestFailoverKills: a leader and two followers on one NATS JetStream
// stream, acknowledgements waiting for the stream. Ten rounds of load on
// the leader, each ended by SIGKILL of the leader at a random moment; a
// follower takes the lease and leads, and the killed node comes back as a
// follower. After each round every node holds every acknowledged
// transaction with its receipt and the attestation seen before the kill
// (never a batch signed twice), and at the end the three state hashes are
// equal.
func TestFailoverKills(t *testing.T) {
	rng, root, senders, lg := crashTest(t, "kills the leader of three ledgerd processes ten times", "LEDGERD_FAILOVER_SEED", "kill times")
	natsURL := startNATS(t)
	members := []*member{{name: "a"}, {name: "b"}, {name: "c"}}
	for i, m := range members {
		m.dir = filepath.Join(root, m.name)
		n, err := proc.Start(ledgerd, replArgs(m.dir, natsURL, i > 0)...)
		if err != nil {
			t.Fatal(err)
		}
		m.n = n
	}
	defer func() {
		for _, m := range members {
			if m.n != nil {
				m.n.Stop()
				if t.Failed() {
					t.Logf("%s (%s) log:\n%s", m.name, m.n.HTTP, m.n.Log())
				}
			}
		}
	}()
	leader, fresh := members[0], 0
	for round := range rounds + 1 {
		lead, err := roleOf(leader.n.HTTP)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range members {
			verifyMember(t, lg, round, m, lead.StreamSeq)
		}
		if round == rounds {
			break
		}
		c, err := rpc.Dial(leader.n.HTTP)
		if err != nil {
			t.Fatal(err)
		}
		stop := lg.load(c, lighter(senders))
		time.Sleep(time.Duration(150+rng.IntN(450)) * time.Millisecond)
		lg.sampleAttested(c)
		leader.n.Kill()
		stop()
		c.Close()
		killed := leader
		leader = awaitLeader(t, round, members, killed)
		startMember(t, killed, natsURL, &fresh)
		if t.Failed() {
			return
		}
	}
	hashes := map[string]string{}
	deadline := time.Now().Add(20 * time.Second)
	for len(hashes) != 1 {
		clear(hashes)
		for _, m := range members {
			c, err := rpc.Dial(m.n.HTTP)
			if err != nil {
				t.Fatal(err)
			}
			hashes[stateHash(t, c)] = m.name
			c.Close()
		}
		if len(hashes) != 1 && time.Now().After(deadline) {
			t.Fatalf("the nodes' states differ: %v", hashes)
		}
	}
	checkOneRootPerSeq(t, lg, members)
	t.Logf("%d transactions acknowledged over %d leader kills, all kept on every node; %d receipts read before a kill kept their attestations; %d restarts from an empty directory",
		len(lg.acked), rounds, len(lg.attested), fresh)
}

// verifyMember waits until m has the stream up to message seq, then
// checks that it holds everything lg saw acknowledged (ledger.verify).
func verifyMember(t *testing.T, lg *ledger, round int, m *member, seq uint64) {
	t.Helper()
	awaitStream(t, m, seq)
	c, err := rpc.Dial(m.n.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lg.verify(t, round, c)
}

// awaitStream waits until m has published or applied the stream up to
// message seq.
func awaitStream(t *testing.T, m *member, seq uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := roleOf(m.n.HTTP)
		if err == nil && r.StreamSeq >= seq {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has not reached stream message %d in 30 s (%+v, %v)", m.name, seq, r, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitLeader waits until one of the members other than killed leads and
// the other follows it.
func awaitLeader(t *testing.T, round int, members []*member, killed *member) *member {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var leader *member
		leaders := 0
		for _, m := range members {
			if m == killed {
				continue
			}
			r, err := roleOf(m.n.HTTP)
			if err == nil && r.Role == "leader" {
				leader = m
				leaders++
			}
		}
		if leaders == 1 {
			return leader
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, m := range members {
		if m != killed {
			t.Logf("%s:\n%s", m.name, m.n.Log())
		}
	}
	t.Fatalf("round %d: no follower took over within 20 s", round)
	return nil
}

// checkOneRootPerSeq reads every acknowledged transaction's receipt on
// every member: each batch sequence number comes with one signature (one
// root) across the cluster, and each transaction with one attestation.
func checkOneRootPerSeq(t *testing.T, lg *ledger, members []*member) {
	t.Helper()
	bySeq, byTx := map[string]string{}, map[string]string{}
	for _, m := range members {
		c, err := rpc.Dial(m.n.HTTP)
		if err != nil {
			t.Fatal(err)
		}
		for h := range lg.acked {
			var r *attestation
			if err := c.Call(&r, "eth_getTransactionReceipt", h); err != nil || r == nil || r.key() == "" {
				t.Fatalf("%s: receipt of %s: %v", m.name, h, err)
			}
			seq, sig, _ := strings.Cut(r.key(), "/")
			if prev, ok := bySeq[seq]; ok && prev != sig {
				t.Fatalf("batch %s has two signatures (two roots) in the cluster: %s and %s", seq, prev, sig)
			}
			bySeq[seq] = sig
			if prev, ok := byTx[h.Hex()]; ok && prev != r.key() {
				t.Fatalf("%s is attested as %s on %s and %s elsewhere", h, r.key(), m.name, prev)
			}
			byTx[h.Hex()] = r.key()
		}
		c.Close()
	}
}

// TestAdminPromote: admin_promote on a follower that would not campaign
// takes the lead from a live leader: the old leader stops taking writes
// (its lease renewal fails), the promoted node takes them and continues
// the batch seqs, and a second admin_promote is refused.
func TestAdminPromote(t *testing.T) {
	natsURL := startNATS(t)
	_, oc, _ := start(t, replArgs(t.TempDir(), natsURL, false))
	nn, nc, _ := start(t, append(replArgs(t.TempDir(), natsURL, true), "--nats.auto-promote=false"))
	payer := newTrader(t, 6)
	first := payer.send(t, ethclient.NewClient(oc), common.Address{0xee}, big.NewInt(1), nil)
	waitAttested(t, oc, first)

	if err := nc.Call(nil, "admin_promote"); err == nil {
		t.Fatal("admin_promote without the admin token was served")
	}
	nc.SetHeader("Authorization", "Bearer test")
	var st replication
	if err := nc.Call(&st, "admin_promote"); err != nil || st.Role != "leader" || st.Leader != nn.HTTP {
		t.Fatalf("admin_promote: %+v %v", st, err)
	}
	// The old leader's renewal failed while admin_promote waited: it takes
	// no write any more.
	tx := payer.sign(t, common.Address{0xee}, big.NewInt(1), nil)
	if err := ethclient.NewClient(oc).SendTransaction(context.Background(), tx); err == nil {
		t.Fatal("the old leader still took a write after admin_promote elsewhere")
	}
	next := payer.send(t, ethclient.NewClient(nc), common.Address{0xee}, big.NewInt(1), nil)
	waitAttested(t, nc, next)
	var a, b attestation
	if err := nc.Call(&a, "eth_getTransactionReceipt", first); err != nil {
		t.Fatal(err)
	}
	if err := nc.Call(&b, "eth_getTransactionReceipt", next); err != nil {
		t.Fatal(err)
	}
	if a.Meta.Attestations[0].Seq >= b.Meta.Attestations[0].Seq {
		t.Fatalf("the promoted node signed batch %d after the old leader's %d", b.Meta.Attestations[0].Seq, a.Meta.Attestations[0].Seq)
	}
	err := nc.Call(nil, "admin_promote")
	var de rpc.DataError
	if !errors.As(err, &de) || !strings.Contains(fmt.Sprint(de.ErrorData()), "leads already") {
		t.Fatalf("a second admin_promote: %v", err)
	}
}

// TestFollowerKills: a follower killed at random moments under load and
// restarted on its directory catches up: after each restart it holds every
// transaction the leader acknowledged, with the leader's attestations, and
// at the end the two state hashes are equal.
func TestFollowerKills(t *testing.T) {
	rng, root, senders, lg := crashTest(t, "kills a follower of a ledgerd leader five times", "LEDGERD_FOLLOWER_SEED", "kill times")
	natsURL := startNATS(t)
	leader, lc, _ := start(t, replArgs(filepath.Join(root, "leader"), natsURL, false))
	f := &member{name: "follower", dir: filepath.Join(root, "follower")}
	fresh := 0
	startMember(t, f, natsURL, &fresh)
	defer func() { f.n.Stop() }()
	for round := range 5 {
		stop := lg.load(lc, lighter(senders))
		time.Sleep(time.Duration(150+rng.IntN(450)) * time.Millisecond)
		f.n.Kill()
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		startMember(t, f, natsURL, &fresh)
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		stop()
		lg.sampleAttested(lc)
		lead, err := roleOf(leader.HTTP)
		if err != nil {
			t.Fatal(err)
		}
		verifyMember(t, lg, round, f, lead.StreamSeq)
	}
	if fresh != 0 {
		t.Fatalf("a follower's directory was refused %d times: it holds only what the stream gave it", fresh)
	}
	fc, err := rpc.Dial(f.n.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	lc.SetHeader("Authorization", "Bearer test")
	deadline := time.Now().Add(20 * time.Second)
	for stateHash(t, lc) != stateHash(t, fc) {
		if time.Now().After(deadline) {
			t.Fatal("the follower's state is not the leader's")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%d transactions acknowledged over 5 follower kills, all on the follower after each restart", len(lg.acked))
}
