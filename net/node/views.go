package node

import (
	"sync/atomic"

	"fmt"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/attest"
)

// ChainID returns the chain id.
func (n *Node) ChainID() uint64 { return n.cfg.ChainID }

// Committee returns the public committee description.
func (n *Node) Committee() attest.Info { return n.committee.Info() }

// ValidatorKey returns committee member i's public key, compressed.
//
// REQUIRES: 0 <= i < len(Committee().Members).
func (n *Node) ValidatorKey(i int) []byte { return n.committee.PublicKey(i) }

// Clock returns the node's clock: Config.Clock read through the monotonic
// floor, the time every stamp and tick of the node is taken from.
func (n *Node) Clock() Clock { return n.clock }

// StateHash returns the ledger's state hash.
func (n *Node) StateHash() core.Hash {
	n.lockSettled()
	defer n.mu.Unlock()
	return n.ledger.StateHash()
}

// StateAt returns the number of inputs applied and the state hash after
// them, consistently.
func (n *Node) StateAt() (seq uint64, hash core.Hash) {
	n.lockSettled()
	defer n.mu.Unlock()
	return n.ledger.Seq(), n.ledger.StateHash()
}

// PastPerfectTime is the time up to which every accepted input is attested:
// the clock when nothing is in flight, else the newest attestation time, and
// never less than a time it returned before. It takes no lock (eth_blockNumber
// answers from it, during a tick too): see pastPerfectView for why reading
// the clock first and the in-flight count after is enough.
func (n *Node) PastPerfectTime() int64 {
	t := n.clock.NowMicros()
	if n.ppView.pending.Load() > 0 {
		t = n.ppView.lastAtt.Load()
	}
	return n.pastPerfect.raise(t)
}

// pastPerfectView is what PastPerfectTime needs of the pipeline, in
// atomics. lastAtt is the timestamp of the newest attestation batch (the
// node keeps it nowhere else). pending counts the inputs in flight, raised by
// admission before it reads the clock to stamp an input (and lowered again
// if the input is refused), lowered by the attester after it stored the
// batch's time in lastAtt. A reader that reads the clock at t and then
// finds pending at 0 has seen every input stamped before t attested: such
// an input raised pending before reading the clock, which is monotonic, so
// before the reader's reading of both.
type pastPerfectView struct {
	pending atomic.Int64
	lastAtt atomic.Int64
}

// Receipt is a consistent copy of an entry's state.
type Receipt struct {
	Rec     *core.TxRecord
	Durable bool
	Batch   *attest.Batch // nil until attested
	Index   int
	// Epoch is the committee epoch Batch was signed in (0 until attested).
	Epoch    uint64
	Attested bool
	// InTick: an orderbook transaction or withdrawal whose auction tick
	// has run and is durable; TickUs and TickHash name that tick (blockNumber, blockHash).
	InTick   bool
	TickUs   int64
	TickHash core.Hash
}

// Lookup returns what the node knows of hash; ok is false for unknown or
// not yet durable transactions. It takes no lock the pipeline holds: the
// entries in RAM are found in the read views' index and their state read
// from atomics (Entry); records older than the cache are read from disk.
func (n *Node) Lookup(hash core.Hash) (r Receipt, ok bool) {
	e := n.views.Load().entries.get(hash)
	if e != nil {
		return e.receipt(), e.durable.Load()
	}
	// Not in RAM: attested and evicted (written before it was evicted),
	// or unknown.
	s, err := n.log.RecordByHash(hash)
	if err == nil && s != nil {
		r, err = n.storedReceipt(s)
		ok = err == nil
	}
	if err != nil {
		n.Logf("history read of %x: %v", hash[:4], err)
	}
	return r, ok
}

// receipt reads e's state, without a lock: each field only ever moves
// forward (durable, then attested; a tick linked, then durable), and batch
// is read before durable and index, which were set before it, so the copy
// is a state e was in, or one step behind in a field read later.
func (e *Entry) receipt() Receipt {
	b := e.batch.Load()
	r := Receipt{Rec: e.Rec, Batch: b, Attested: b != nil}
	if b != nil {
		r.Index, r.Epoch = int(e.index.Load()), b.Epoch
	}
	r.Durable = e.durable.Load()
	if t := e.tick.Load(); t != nil && t.durable.Load() {
		r.InTick, r.TickHash, r.TickUs = true, t.Rec.Tx.Hash, t.Rec.TickUs
	}
	return r
}

// OnAttested runs fn once hash's record is attested (at once if it already
// is). It reports false if hash is unknown. It takes no lock of the
// sequencer's: the writer calls it for a send that waits for its receipt,
// and must not wait for a tick.
func (n *Node) OnAttested(hash core.Hash, fn func()) bool {
	e := n.views.Load().entries.get(hash)
	if e == nil {
		// Not in RAM: attested and evicted, or unknown.
		if ok, err := n.log.HasHash(hash); !ok || err != nil {
			return false
		}
		fn()
		return true
	}
	// The attester sets the batch before it takes the waiters, both
	// under waitMu's order: a waiter added after it took them sees the
	// batch.
	n.waitMu.Lock()
	if e.batch.Load() != nil {
		n.waitMu.Unlock()
		fn()
		return true
	}
	e.waiters = append(e.waiters, fn)
	n.waitMu.Unlock()
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

// LogScanMax bounds the logs one eth_getLogs looks at (the time range picks
// them from the index on disk; address and topics are matched among them).
const LogScanMax = 2_000_000

// ErrLogRangeTooWide refuses a log query over more than LogScanMax logs.
var ErrLogRangeTooWide = fmt.Errorf("the block range holds more than %d logs: narrow fromBlock/toBlock", LogScanMax)

// Logs returns the attested logs that match f, oldest first, at most limit.
// It reads the history on disk without the sequencer's lock: the time
// bounds pick a range of places, and the log index in that range is matched
// against the filter before any record is read.
//
// It looks at no more than LogScanMax logs, nor more than *budget when
// budget is set, and takes what it looked at off *budget: the calls of one
// request share one budget (ErrLogRangeTooWide once it is spent).
func (n *Node) Logs(f *LogFilter, limit int, budget *int) ([]LogMatch, error) {
	lo, hi, err := n.placeRange(f.FromUs, true, f.ToUs)
	if err != nil {
		return nil, err
	}
	scanMax := n.logScanMax
	if budget != nil {
		scanMax = min(scanMax, *budget)
	}
	type ref struct {
		place uint64
		index int
	}
	var refs []ref
	scanned := 0
	err = n.log.ScanLogs(lo, hi, func(place uint64, index int, lg *core.Log) bool {
		if scanned++; scanned > scanMax {
			return false
		}
		if f.matches(lg) {
			refs = append(refs, ref{place, index})
		}
		return len(refs) < limit
	})
	if budget != nil {
		*budget -= min(scanned, scanMax)
	}
	if err != nil {
		return nil, err
	}
	if scanned > scanMax {
		return nil, ErrLogRangeTooWide
	}
	places := make([]uint64, 0, len(refs))
	for _, r := range refs {
		if len(places) == 0 || places[len(places)-1] != r.place {
			places = append(places, r.place)
		}
	}
	receipts, err := n.receiptsAt(places)
	if err != nil {
		return nil, err
	}
	out := make([]LogMatch, 0, len(refs))
	k := 0
	for _, r := range refs {
		for places[k] != r.place {
			k++
		}
		if rc := receipts[k]; rc != nil && len(rc.Batch.Sigs) >= f.MinAttestations {
			out = append(out, LogMatch{Receipt: *rc, LogIndex: r.index})
		}
	}
	return out, nil
}

// placeRange turns attestation-time bounds into the places [lo, hi) of the
// attested history they cover (toUs 0: no upper bound).
func (n *Node) placeRange(sinceUs int64, incl bool, toUs int64) (lo, hi uint64, err error) {
	n.recentMu.RLock()
	hi = n.attestedEnd
	n.recentMu.RUnlock()
	if lo, err = n.log.PlaceAfter(sinceUs, incl); err != nil {
		return 0, 0, err
	}
	if toUs != 0 {
		end, err := n.log.PlaceAfter(toUs, false)
		if err != nil {
			return 0, 0, err
		}
		hi = min(hi, end)
	}
	return lo, hi, nil
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
// when the listing is complete. A place is stable across restarts. It reads
// the history on disk (the account index for an account), without the
// sequencer's lock.
func (n *Node) ListReceipts(q *ListQuery) (items []Receipt, next int64, err error) {
	lo, hi, err := n.placeRange(q.SinceUs, q.SinceIncl, 0)
	if err != nil {
		return nil, -1, err
	}
	if q.After >= 0 { // a cursor from a query with another since stays in range
		if q.NewestFirst {
			hi = min(hi, uint64(q.After))
		} else {
			lo = max(lo, uint64(q.After)+1)
		}
	}
	// One more than the page: whether it exists says if the listing goes on.
	places := make([]uint64, 0, q.Limit+1)
	if q.Account != nil {
		err = n.log.AccountPlaces(*q.Account, lo, hi, q.NewestFirst, func(place uint64) bool {
			places = append(places, place)
			return len(places) <= q.Limit
		})
		if err != nil {
			return nil, -1, err
		}
	} else {
		for k := uint64(0); k <= uint64(q.Limit) && lo+k < hi; k++ {
			if q.NewestFirst {
				places = append(places, hi-1-k)
			} else {
				places = append(places, lo+k)
			}
		}
	}
	next = -1
	if len(places) > q.Limit {
		places = places[:q.Limit]
		next = int64(places[q.Limit-1])
	}
	rs, err := n.receiptsAt(places)
	if err != nil {
		return nil, -1, err
	}
	items = make([]Receipt, 0, len(rs))
	for _, r := range rs {
		if r != nil { // nil: pruned meanwhile
			items = append(items, *r)
		}
	}
	return items, next, nil
}

// Seq returns the number of inputs applied: the intent log's sequence.
func (n *Node) Seq() uint64 {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.ledger.Seq()
}

// ReadOnly reports whether the committee refuses every transaction at the
// moment: at least f + 1 of its members reject all (admin_setValidatorFaults),
// so no eth_sendRawTransaction can be accepted.
func (n *Node) ReadOnly() bool {
	return len(n.faults.cur.Load().rejections) >= n.committee.F+1
}
