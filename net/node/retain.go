package node

import (
	"time"
)

// Retention. With Config.Retain set, a goroutine deletes the attested
// history older than Retain (by attestation time) every pruneEvery: pruned
// records answer as unknown ones do (null receipts, absent from listings
// and logs), and a deposit id older than the window is no longer known as
// credited. The intent log is cut too, but never after the oldest kept
// snapshot: a restart always has a snapshot and the log after it. The
// newest attestation batch is always kept (it carries the next sequence
// number).

// pruneEvery is how often the pruner runs; pruneChunk bounds the records
// one pruning transaction deletes.
const (
	pruneEvery = time.Minute
	pruneChunk = 20_000
)

// pruner runs the retention loop until Close.
func (n *Node) pruner() {
	defer n.wg.Done()
	for {
		select {
		case <-n.quit:
			return
		case <-time.After(min(pruneEvery, n.cfg.Retain/4)):
		}
		if err := n.prune(n.clock.NowMicros() - n.cfg.Retain.Microseconds()); err != nil {
			n.Logf("retention: %v", err)
		}
	}
}

// prune deletes the history attested before cutoffUs and the log inputs no
// snapshot needs any more.
func (n *Node) prune(cutoffUs int64) error {
	var lastSeq uint64
	for {
		select {
		case <-n.quit:
			return nil
		default:
		}
		pruned, seq, err := n.log.PruneBefore(cutoffUs, pruneChunk)
		if err != nil {
			return err
		}
		lastSeq = max(lastSeq, seq)
		if pruned == 0 {
			break
		}
	}
	seqs, err := n.log.SnapshotSeqs()
	if err != nil || len(seqs) == 0 || lastSeq == 0 {
		return err
	}
	return n.log.PruneLogBefore(min(lastSeq, seqs[0]) + 1)
}
