package node

import (
	"fmt"
	"sync"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/attest"
	"github.com/ledgervenue/node/persist"
)

// History in RAM and on disk. Every attested record is written to the
// history on disk (persist) with the batch that attests it, before any of
// its receipts is served. RAM keeps the records in flight and the newest
// CacheEntries attested ones (ring, in place order); reads of older ones go
// to disk, outside the sequencer's lock, and rebuild the batch (its Merkle
// tree, for the proof) from the stored leaves, keeping the last few rebuilt
// batches (batchCache).

// ring holds the newest attested entries, in place order: consecutive
// places, so an entry is found by its place.
type ring struct {
	buf  []*Entry
	next int // index of the slot the next push fills
	n    int // entries held
}

func newRing(size int) ring { return ring{buf: make([]*Entry, size)} }

// push adds e (whose place follows the newest held one) and returns the
// entry it evicted, nil while the ring is not full.
func (r *ring) push(e *Entry) *Entry {
	old := r.buf[r.next]
	r.buf[r.next] = e
	r.next = (r.next + 1) % len(r.buf)
	if r.n < len(r.buf) {
		r.n++
		return nil
	}
	return old
}

// at returns the held entry at place, nil if it is not held.
func (r *ring) at(place uint64) *Entry {
	if r.n == 0 {
		return nil
	}
	newest := r.buf[(r.next-1+len(r.buf))%len(r.buf)]
	back := newest.place - place // how many pushes ago
	if place > newest.place || back >= uint64(r.n) {
		return nil
	}
	return r.buf[(r.next-1-int(back)+2*len(r.buf))%len(r.buf)]
}

// batchCacheSize bounds the rebuilt batches kept for disk reads (a batch of
// 4096 leaves holds a 256 KiB tree).
const batchCacheSize = 32

// batchCache keeps the batches most recently rebuilt from disk.
type batchCache struct {
	mu    sync.Mutex
	bySeq map[uint64]*attest.Batch
	order []uint64 // insertion order, oldest first
}

// reset forgets every cached batch: after a revert, a sequence number may
// name another batch.
func (c *batchCache) reset() {
	c.mu.Lock()
	c.bySeq, c.order = nil, nil
	c.mu.Unlock()
}

func (c *batchCache) get(lg *persist.Log, seq uint64) (*attest.Batch, error) {
	c.mu.Lock()
	b := c.bySeq[seq]
	c.mu.Unlock()
	if b != nil {
		return b, nil
	}
	_, b, err := readBatch(lg, seq)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bySeq == nil {
		c.bySeq = make(map[uint64]*attest.Batch)
	}
	if c.bySeq[seq] == nil {
		if len(c.order) == batchCacheSize {
			delete(c.bySeq, c.order[0])
			c.order = c.order[1:]
		}
		c.bySeq[seq] = b
		c.order = append(c.order, seq)
	}
	return b, nil
}

// readBatch reads the stored batch seq and rebuilds its Merkle tree from
// the stored leaves, which must hash to the signed root.
func readBatch(lg *persist.Log, seq uint64) (*persist.Batch, *attest.Batch, error) {
	sb, err := lg.Batch(seq)
	if err == nil && sb == nil {
		err = fmt.Errorf("attestation batch %d is not stored", seq)
	}
	if err != nil {
		return nil, nil, err
	}
	b, err := attest.Restore(sb.Epoch, sb.Seq, sb.TimeUs, sb.Root, sb.LeafHashes, sb.Sigs)
	if err != nil {
		return nil, nil, fmt.Errorf("attestation batch %d: %w", seq, err)
	}
	return sb, b, nil
}

// storedReceipt is the receipt of a record read from the history.
func (n *Node) storedReceipt(s *persist.Stored) (Receipt, error) {
	b, err := n.batches.get(n.log, s.BatchSeq)
	if err != nil {
		return Receipt{}, err
	}
	if int(s.Leaf) >= b.Len() {
		return Receipt{}, fmt.Errorf("record at place %d names leaf %d of batch %d, which has %d", s.Place, s.Leaf, s.BatchSeq, b.Len())
	}
	r := Receipt{Rec: &s.Rec, Durable: true, Batch: b, Index: int(s.Leaf), Epoch: b.Epoch, Attested: true}
	if s.Rec.Kind == core.RecordTx && core.LandsInTick(&s.Rec.Tx) {
		link, ok, err := n.log.TickLinkOf(s.Rec.Tx.Hash)
		if err != nil {
			return Receipt{}, err
		}
		r.InTick, r.TickUs, r.TickHash = ok, link.TickUs, link.TickHash
	}
	return r, nil
}

// receiptsAt returns the receipts of the attested records at places, from
// the cache when it holds them, else from disk; nil for a pruned place.
func (n *Node) receiptsAt(places []uint64) ([]*Receipt, error) {
	out := make([]*Receipt, len(places))
	var missing []int
	n.recentMu.RLock()
	for i, p := range places {
		if e := n.recent.at(p); e != nil {
			r := e.receipt()
			out[i] = &r
		} else {
			missing = append(missing, i)
		}
	}
	n.recentMu.RUnlock()
	if len(missing) == 0 {
		return out, nil
	}
	want := make([]uint64, len(missing))
	for k, i := range missing {
		want[k] = places[i]
	}
	stored, err := n.log.Records(want)
	if err != nil {
		return nil, err
	}
	for k, s := range stored {
		if s == nil {
			continue
		}
		r, err := n.storedReceipt(s)
		if err != nil {
			return nil, err
		}
		out[missing[k]] = &r
	}
	return out, nil
}

// Logf reports through Config.Logf (nil discards it): start-up decisions
// and errors no caller is waiting for.
func (n *Node) Logf(format string, args ...any) {
	if n.cfg.Logf != nil {
		n.cfg.Logf(format, args...)
	}
}
