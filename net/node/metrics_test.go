package node

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledgervenue/node/persist"
)

// waitWindowSecond waits until the second now is in has ended: the metrics
// window counts complete seconds only.
func waitWindowSecond() { time.Sleep(1100 * time.Millisecond) }

// TestUptimeIsMeasured: validator_uptime is the share of the signatures the
// attested batches asked for that they collected, over the window: 1 on an
// idle node (none asked), the receipts' own signature count after traffic,
// and less than 1 as soon as a batch misses a signature.
func TestUptimeIsMeasured(t *testing.T) {
	n := openNode(t, testConfig(t, t.TempDir()))
	defer n.Close()
	if m := n.Metrics(); m.ValidatorUptime != 1 || m.Throughput != 0 {
		t.Fatalf("idle node: %+v, want uptime 1 and no throughput", m)
	}
	batches := map[uint64]int{} // seq → signatures
	for nonce := range uint64(5) {
		tx := devTransfer(nonce, 1)
		submitWait(t, n, tx)
		r, _ := n.Lookup(tx.Hash)
		batches[r.Batch.Seq] = len(r.Batch.Sigs)
	}
	signed := 0
	for _, s := range batches {
		signed += s
	}
	waitWindowSecond()
	want := float64(signed) / float64(len(batches)*n.committee.N)
	if m := n.Metrics(); m.ValidatorUptime != want || m.Throughput != 0.5 {
		t.Fatalf("after 5 transfers in %d batches: %+v, want uptime %v (the receipts' signatures) and 0.5/s", len(batches), m, want)
	}
	// A batch that collected 3 of 4 signatures (validators cannot be told to
	// fail yet: the bucket is fed as the attester would).
	n.mu.Lock()
	n.metrics.observeBatch(time.Now().Add(-time.Second), 3, 4)
	n.mu.Unlock()
	want = float64(signed+3) / float64(len(batches)*n.committee.N+4)
	if m := n.Metrics(); m.ValidatorUptime != want {
		t.Fatalf("with a batch missing a signature: uptime %v, want %v", m.ValidatorUptime, want)
	}
}

// TestMetricsCountLiveTrafficOnly: a record the log holds but no batch
// attested (the batch's commit failed) is replayed at the restart and
// attested then; svc_metrics' throughput and latency stay 0 for it, and
// count the first new transaction.
func TestMetricsCountLiveTrafficOnly(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	var appends atomic.Int32
	cfg.BeforeAppend = func() error {
		if appends.Add(1) > 1 { // the transfer's group commits; its batch does not
			return errors.New("disk full")
		}
		return nil
	}
	n := openNode(t, cfg)
	durable := make(chan error, 1)
	replayed := devTransfer(0, 1)
	if rej, err := n.SubmitTx(replayed, func(_ *Entry, err error) { durable <- err }); err != nil || !rej.OK() {
		t.Fatalf("submit: %v %+v", err, rej)
	}
	if err := <-durable; err != nil {
		t.Fatal(err)
	}
	waitStopped(t, n, ErrLogFailed)
	n.Close()

	cfg.BeforeAppend = nil
	n = openNode(t, cfg)
	defer n.Close()
	attested := make(chan struct{})
	if !n.OnAttested(replayed.Hash, func() { close(attested) }) {
		t.Fatal("the replayed transfer is unknown")
	}
	<-attested
	waitWindowSecond()
	if m := n.Metrics(); m.Throughput != 0 || m.LatencyMs != 0 || m.ValidatorUptime != 1 {
		t.Fatalf("after the replayed record's attestation: %+v, want no throughput or latency (uptime measured: 1)", m)
	}
	submitWait(t, n, devTransfer(1, 1))
	waitWindowSecond()
	if m := n.Metrics(); m.Throughput != 0.1 || m.LatencyMs <= 0 {
		t.Fatalf("after one live transfer: %+v, want 0.1/s and its latency", m)
	}
}

// waitStopped waits until the node refuses writes with why.
func waitStopped(t *testing.T, n *Node, why error) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(time.Millisecond) {
		_, err := n.SubmitTx(devTransfer(99, 1), func(*Entry, error) {})
		if errors.Is(err, why) {
			return
		}
	}
	t.Fatalf("the node never stopped with %v", why)
}

// TestReceiptEpochIsTheBatchs: a receipt's committee_epoch is the epoch its
// batch was signed in, as the batch stores it, not the committee's current
// one.
func TestReceiptEpochIsTheBatchs(t *testing.T) {
	dir := t.TempDir()
	n := openNode(t, testConfig(t, dir))
	tx := devTransfer(0, 1)
	submitWait(t, n, tx)
	if r, _ := n.Lookup(tx.Hash); r.Epoch != r.Batch.Epoch {
		t.Fatalf("receipt epoch %d, its batch's %d", r.Epoch, r.Batch.Epoch)
	}
	n.Close()
	const signedIn = 7 // an older committee's epoch
	rewriteBatch(t, dir, 1, func(b *persist.Batch) { b.Epoch = signedIn })
	n = openNode(t, testConfig(t, dir))
	defer n.Close()
	r, ok := n.Lookup(tx.Hash)
	if !ok || r.Epoch != signedIn || n.Committee().Epoch == signedIn {
		t.Fatalf("receipt epoch %d (found %v), want the batch's %d (committee now at %d)", r.Epoch, ok, signedIn, n.Committee().Epoch)
	}
}
