package node

import (
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/persist"
)

// VoteBatch is a stored attestation batch with the hashes of the records it
// attests, in leaf order: svc_getVoteBatches' unit (docs/compat.md, "Votes").
type VoteBatch struct {
	*persist.Batch
	Hashes []core.Hash
}

// VoteBatches returns the stored batches with sequence numbers in [from,
// to], oldest first, at most batchesMax of them and no more after the one
// that brings the hashes to hashesMax (always at least one, if any is in
// range). It reads the history on disk, without the sequencer's lock.
func (n *Node) VoteBatches(from, to uint64, batchesMax, hashesMax int) ([]VoteBatch, error) {
	var out []VoteBatch
	hashes := 0
	err := n.log.BatchesFrom(from, func(b *persist.Batch) bool {
		if b.Seq > to {
			return false
		}
		out = append(out, VoteBatch{Batch: b})
		hashes += int(b.Leaves)
		return len(out) < batchesMax && hashes < hashesMax
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		b := &out[i]
		places := make([]uint64, b.Leaves)
		for k := range places {
			places[k] = b.FirstPlace + uint64(k)
		}
		stored, err := n.log.Records(places)
		if err != nil {
			return nil, err
		}
		b.Hashes = make([]core.Hash, 0, len(stored))
		for _, s := range stored {
			if s != nil {
				b.Hashes = append(b.Hashes, s.Rec.Tx.Hash)
			}
		}
	}
	return out, nil
}
