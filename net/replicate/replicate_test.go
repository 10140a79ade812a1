package replicate

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/holiman/uint256"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

func startNATS(t *testing.T) string {
	t.Helper()
	s, err := StartServer(t.TempDir(), "127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// member is one node of a test cluster and its replicator.
type member struct {
	n   *node.Node
	r   *Replicator
	dir string
	url string
}

func (m *member) close() {
	m.r.Close()
	m.n.Close()
}

// start opens a node in dir linked to the stream at natsURL.
func start(t *testing.T, natsURL, dir, self string, follow, auto bool) *member {
	t.Helper()
	r, err := New(Config{URL: natsURL, LeaseTTL: 900 * time.Millisecond, AckStream: true, Self: self, AutoPromote: auto})
	if err != nil {
		t.Fatal(err)
	}
	cfg := node.Config{DataDir: dir, ChainID: 0x50d, BaseFee: *uint256.NewInt(1e9), Validators: 4,
		CommitteeSeed: []byte("test"), Genesis: node.DevGenesis(), Markets: node.DevMarkets(),
		Follow: follow, Replicated: true, AfterAppend: r.AfterAppend}
	n, err := node.Open(cfg)
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	if err := r.Start(n); err != nil {
		r.Close()
		n.Close()
		t.Fatal(err)
	}
	m := &member{n: n, r: r, dir: dir, url: self}
	return m
}

// transfer is a transfer from dev account from (its nonce-th), with a
// hash of its own.
func transfer(from int, nonce uint64) *core.Tx {
	return &core.Tx{Hash: core.Hash{byte(from), byte(nonce >> 8), byte(nonce), 0x7e}, Type: core.TxTypeDynamicFee,
		ChainID: 0x50d, Nonce: nonce, From: node.DevAddress(from), To: node.DevAddress(9), HasTo: true,
		Value: *uint256.NewInt(1000 + nonce), Gas: core.TxGas, GasFeeCap: *uint256.NewInt(2e9)}
}

// send submits txs to m one after the other (a sender has one
// transaction in flight at most), each once the one before is
// acknowledged durable.
func send(t *testing.T, m *member, txs []*core.Tx) {
	t.Helper()
	ack := make(chan error, 1)
	for _, tx := range txs {
		rej, err := m.n.SubmitTx(tx, func(_ *node.Entry, err error) { ack <- err })
		if err != nil || !rej.OK() {
			t.Fatalf("submit %x: %v %+v", tx.Hash[:4], err, rej)
		}
		if err := <-ack; err != nil {
			t.Fatal(err)
		}
	}
}

// sameAs waits until every follower holds leader's state and receipts of
// txs, the same batches included.
func sameAs(t *testing.T, leader *member, txs []*core.Tx, followers ...*member) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, f := range followers {
		for {
			err := compare(leader, f, txs)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("follower %s: %v", f.url, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func compare(leader, f *member, txs []*core.Tx) error {
	ls, lh := leader.n.StateAt()
	fs, fh := f.n.StateAt()
	if ls != fs || lh != fh {
		return fmt.Errorf("at input %d %x, the leader at %d %x", fs, fh[:4], ls, lh[:4])
	}
	for _, tx := range txs {
		lr, _ := leader.n.Lookup(tx.Hash)
		fr, ok := f.n.Lookup(tx.Hash)
		if !ok || !fr.Attested || !lr.Attested {
			return fmt.Errorf("%x not attested yet", tx.Hash[:4])
		}
		if fr.Batch.Seq != lr.Batch.Seq || fr.Batch.Root != lr.Batch.Root || fr.Index != lr.Index {
			return fmt.Errorf("%x: batch %d/%x here, %d/%x on the leader", tx.Hash[:4], fr.Batch.Seq, fr.Batch.Root[:4], lr.Batch.Seq, lr.Batch.Root[:4])
		}
	}
	return nil
}

// TestFollowersThroughJetStream: two followers fed through an embedded
// NATS JetStream reach the leader's state and receipts, refuse writes with
// the leader's URL, and one stopped and started again catches up.
func TestFollowersThroughJetStream(t *testing.T) {
	url := startNATS(t)
	leader := start(t, url, t.TempDir(), "http://leader", false, false)
	defer func() { leader.close() }()
	f1 := start(t, url, t.TempDir(), "http://f1", true, false)
	f2 := start(t, url, t.TempDir(), "http://f2", true, false)
	defer f2.close()
	var txs []*core.Tx
	batch := func(from int, first, count uint64) []*core.Tx {
		var out []*core.Tx
		for i := range count {
			out = append(out, transfer(from, first+i))
		}
		txs = append(txs, out...)
		return out
	}
	send(t, leader, batch(1, 0, 50))
	send(t, leader, batch(2, 0, 50))
	sameAs(t, leader, txs, f1, f2)

	_, err := f1.n.SubmitTx(transfer(3, 0), func(*node.Entry, error) {})
	var nl *node.NotLeaderError
	if !errors.As(err, &nl) || nl.Leader != "http://leader" {
		t.Fatalf("a write on a follower: %v", err)
	}
	f1.close()
	send(t, leader, batch(1, 50, 40))
	f1 = start(t, url, f1.dir, "http://f1", true, false)
	defer f1.close()
	send(t, leader, batch(2, 50, 40))
	sameAs(t, leader, txs, f1, f2)
	if st := f1.r.Status(); st.Role != "follower" || st.Leader != "http://leader" || st.StreamSeq == 0 {
		t.Fatalf("follower status %+v", st)
	}

	// The leader restarts within its lease: it renews the lease it held
	// and publishes from where the stream ends.
	leader.close()
	leader = start(t, url, leader.dir, "http://leader", false, false)
	send(t, leader, batch(1, 90, 30))
	sameAs(t, leader, txs, f1, f2)
}

// TestFailoverThroughTheLease: the leader stops; one follower takes the
// lease, applies the stream to its end and leads from there (batch seqs
// continue, every acknowledged transaction is kept), and the other
// follows it.
func TestFailoverThroughTheLease(t *testing.T) {
	url := startNATS(t)
	leader := start(t, url, t.TempDir(), "http://leader", false, false)
	f1 := start(t, url, t.TempDir(), "http://f1", true, true)
	defer f1.close()
	f2 := start(t, url, t.TempDir(), "http://f2", true, true)
	defer f2.close()
	var txs []*core.Tx
	for i := range uint64(60) {
		txs = append(txs, transfer(1, i))
	}
	send(t, leader, txs)
	sameAs(t, leader, txs, f1, f2)
	last, _ := leader.n.Lookup(txs[len(txs)-1].Hash)
	leader.close() // the lease lapses

	deadline := time.Now().Add(10 * time.Second)
	var next, other *member
	for next == nil {
		switch {
		case !f1.n.Following():
			next, other = f1, f2
		case !f2.n.Following():
			next, other = f2, f1
		case time.Now().After(deadline):
			t.Fatal("no follower took over")
		}
		time.Sleep(10 * time.Millisecond)
	}
	more := []*core.Tx{transfer(1, 60), transfer(2, 0)}
	send(t, next, more)
	sameAs(t, next, append(txs, more...), other)
	r, _ := next.n.Lookup(more[0].Hash)
	if r.Batch.Seq <= last.Batch.Seq {
		t.Fatalf("the new leader signed batch %d, the old one had signed %d", r.Batch.Seq, last.Batch.Seq)
	}
	for got := other.n.LeaderURL(); got != next.url; got = other.n.LeaderURL() {
		if time.Now().After(deadline) {
			t.Fatalf("the other follower names %q as leader, want %q", got, next.url)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLeaderRefusesAnotherHistory: a node whose log is longer than the
// stream but does not hold the stream's inputs is not made its leader.
func TestLeaderRefusesAnotherHistory(t *testing.T) {
	url := startNATS(t)
	a := start(t, url, t.TempDir(), "http://a", false, false)
	send(t, a, []*core.Tx{transfer(1, 0), transfer(1, 1)})
	a.close()
	dir := t.TempDir()
	cfg := node.Config{DataDir: dir, ChainID: 0x50d, BaseFee: *uint256.NewInt(1e9), Validators: 4,
		CommitteeSeed: []byte("test"), Genesis: node.DevGenesis(), Markets: node.DevMarkets()}
	b, err := node.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var txs []*core.Tx
	for i := range uint64(20) {
		txs = append(txs, transfer(2, i))
	}
	send(t, &member{n: b}, txs)
	b.Close()
	time.Sleep(time.Second) // a's lease lapses
	r, err := New(Config{URL: url, LeaseTTL: 900 * time.Millisecond, Self: "http://b"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cfg.AfterAppend, cfg.Replicated = r.AfterAppend, true
	b, err = node.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := r.Start(b); err == nil || !strings.Contains(err.Error(), "another history") {
		t.Fatalf("a leader of another history: %v", err)
	}
}
