package node

import (
	"sort"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/attest"
)

// ChainID returns the chain id.
func (n *Node) ChainID() uint64 { return n.cfg.ChainID }

// Committee returns the public committee description.
func (n *Node) Committee() attest.Info { return n.committee.Info() }

// Clock returns the node's clock.
func (n *Node) Clock() Clock { return n.cfg.Clock }

// Balance returns the account's holding of token: cash, and how much of it
// is locked behind orders and pending transfers.
func (n *Node) Balance(token, a core.Address) core.Balance {
	n.mu.RLock()
	b := n.ledger.Balance(token, a)
	n.mu.RUnlock()
	return b
}

// Nonce returns the account's next nonce.
func (n *Node) Nonce(a core.Address) uint64 {
	n.mu.RLock()
	v := n.ledger.Nonce(a)
	n.mu.RUnlock()
	return v
}

// BaseFee returns the current base fee.
func (n *Node) BaseFee() uint256.Int {
	n.mu.RLock()
	v := n.ledger.BaseFee()
	n.mu.RUnlock()
	return v
}

// StateHash returns the ledger's state hash.
func (n *Node) StateHash() core.Hash {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.ledger.StateHash()
}

// PastPerfectTime is the time up to which every accepted input is attested:
// the clock when nothing is in flight, else the newest attestation time.
func (n *Node) PastPerfectTime() int64 {
	n.mu.RLock()
	inflight, last := n.inflight, n.lastAtt
	n.mu.RUnlock()
	if inflight == 0 {
		return max(n.cfg.Clock.NowMicros(), last)
	}
	return last
}

// Receipt is a consistent copy of an entry's state.
type Receipt struct {
	Rec      *core.TxRecord
	Durable  bool
	Batch    *attest.Batch // nil until attested
	Index    int
	Epoch    uint64
	Attested bool
	// InTick: an orderbook transaction whose auction tick has run and is
	// durable; TickUs and TickHash name that tick (blockNumber, blockHash).
	InTick   bool
	TickUs   int64
	TickHash core.Hash
}

// Lookup returns what the node knows of hash; ok is false for unknown or
// not yet durable transactions.
func (n *Node) Lookup(hash core.Hash) (r Receipt, ok bool) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	e := n.entries[hash]
	if e == nil || !e.durable {
		return r, false
	}
	return n.receiptLocked(e), true
}

// REQUIRES: n.mu held.
func (n *Node) receiptLocked(e *Entry) Receipt {
	r := Receipt{Rec: e.Rec, Durable: e.durable, Batch: e.batch, Index: e.index, Epoch: n.committee.Epoch, Attested: e.batch != nil}
	if t := e.tick; t != nil && t.durable {
		r.InTick, r.TickHash, r.TickUs = true, t.Rec.Tx.Hash, t.Rec.TickUs
	}
	return r
}

// OnAttested runs fn once hash's record is attested (at once if it already
// is). It reports false if hash is unknown.
func (n *Node) OnAttested(hash core.Hash, fn func()) bool {
	n.mu.Lock()
	e := n.entries[hash]
	switch {
	case e == nil:
		n.mu.Unlock()
		return false
	case e.batch != nil:
		n.mu.Unlock()
		fn()
		return true
	}
	e.waiters = append(e.waiters, fn)
	n.mu.Unlock()
	return true
}

// LogFilter selects attested logs. Zero values match everything.
type LogFilter struct {
	FromUs, ToUs    int64 // inclusive attestation-time bounds; ToUs 0 = no bound
	Addresses       []core.Address
	Topics          [][]core.Hash // position i: any of Topics[i]; empty = wildcard
	MinAttestations int
}

// LogMatch is one log that passed a filter.
type LogMatch struct {
	Receipt  Receipt
	LogIndex int
}

// Logs returns the attested logs that match f, oldest first, at most limit.
// The time bounds pick a range of the index by binary search (attestation
// times never decrease along it), and the scan runs outside the lock: the
// index is append-only, so the prefix taken under the read lock never
// changes, and a long query does not stall the sequencer. Only the matches'
// receipts are copied under the lock.
func (n *Node) Logs(f *LogFilter, limit int) []LogMatch {
	n.mu.RLock()
	logs := n.logs
	n.mu.RUnlock()
	from := sort.Search(len(logs), func(i int) bool { return logs[i].TimeUs >= f.FromUs })
	var refs []LogRef
	for _, ref := range logs[from:] {
		if len(refs) == limit || (f.ToUs != 0 && ref.TimeUs > f.ToUs) {
			break
		}
		if len(ref.Entry.batch.Sigs) >= f.MinAttestations && f.matches(&ref.Entry.Rec.Logs[ref.LogIndex]) {
			refs = append(refs, ref)
		}
	}
	out := make([]LogMatch, len(refs))
	n.mu.RLock()
	for i, ref := range refs {
		out[i] = LogMatch{Receipt: n.receiptLocked(ref.Entry), LogIndex: ref.LogIndex}
	}
	n.mu.RUnlock()
	return out
}

func (f *LogFilter) matches(l *core.Log) bool {
	if len(f.Addresses) > 0 && !contains(f.Addresses, l.Address) {
		return false
	}
	for i, alts := range f.Topics {
		if len(alts) == 0 {
			continue
		}
		if i >= len(l.Topics) || !contains(alts, l.Topics[i]) {
			return false
		}
	}
	return true
}

func contains[T comparable](set []T, v T) bool {
	for _, s := range set {
		if s == v {
			return true
		}
	}
	return false
}

// Listing bounds (docs/decisions.md, "History listings").
const (
	// ListLimitDefault and ListLimitMax bound the receipts one page holds.
	ListLimitDefault = 100
	ListLimitMax     = 1000
	// ListScanMax bounds the records one page looks at: a page of a sparse
	// account may come back short, with a cursor to go on from, rather than
	// scan all of history under the lock.
	ListScanMax = 100_000
)

// ListQuery selects attested receipts in attestation order, the order of
// the history listings.
type ListQuery struct {
	// SinceUs bounds the attestation time: at or after it when SinceIncl,
	// else strictly after.
	SinceUs   int64
	SinceIncl bool
	// Account keeps the receipts sent from or to it; nil keeps all.
	Account *core.Address
	// After continues a listing after the record at this place (a cursor);
	// -1 starts at the beginning (oldest first) or the end (newest first).
	After       int64
	NewestFirst bool
	// Limit is the page size, 1..ListLimitMax.
	Limit int
}

// ListReceipts returns one page of q and the place to continue from, or -1
// when the listing is complete. A place is stable across restarts.
// Like Logs it scans outside the lock and copies only the page's receipts
// under it.
func (n *Node) ListReceipts(q *ListQuery) (items []Receipt, next int64) {
	n.mu.RLock()
	all := n.attested // append-only: this prefix never changes
	n.mu.RUnlock()
	// The first place whose time is past the bound; attestation times never
	// decrease with the place (the attester's clock does not run back).
	from := sort.Search(len(all), func(i int) bool {
		ts := all[i].batch.Timestamp
		return ts > q.SinceUs || (q.SinceIncl && ts == q.SinceUs)
	})
	lo, hi := int64(from), int64(len(all)) // the places that qualify on time
	i, step := lo, int64(1)
	if q.NewestFirst {
		i, step = hi-1, -1
	}
	if q.After >= 0 { // a cursor from a query with another since stays in range
		i = min(max(q.After+step, lo), hi-1)
	}
	var page []*Entry
	next = -1
	for scanned := 0; i >= lo && i < hi; i += step {
		if len(page) == q.Limit || scanned == ListScanMax {
			next = i - step
			break
		}
		scanned++
		e := all[i]
		if q.Account == nil || e.Rec.Tx.From == *q.Account || (e.Rec.Tx.HasTo && e.Rec.Tx.To == *q.Account) {
			page = append(page, e)
		}
	}
	items = make([]Receipt, len(page))
	n.mu.RLock()
	for k, e := range page {
		items[k] = n.receiptLocked(e)
	}
	n.mu.RUnlock()
	return items, next
}
