package node

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/attest"
	"github.com/ledgervenue/node/core/tickrec"
	"github.com/ledgervenue/node/persist"
)

// Entry is the node's record of one applied input with a TxRecord. Rec is
// immutable. durable, batch, index and tick are atomics: set under Node.mu
// by the pipeline, each once, and read without it (receipt); the other
// fields are guarded by Node.mu.
type Entry struct {
	Rec   *core.TxRecord
	place uint64 // position in attestation order (history listings)
	// acceptedAt is when a live input was admitted, for the latency metric
	// only; zero for a record replayed at start-up, which the metrics skip.
	acceptedAt time.Time
	durable    atomic.Bool
	// batch is nil until attested; index (the leaf index in batch) is
	// stored before it.
	batch   atomic.Pointer[attest.Batch]
	index   atomic.Int32
	waiters []func() // guarded by Node.waitMu
	// tick is the auction tick an orderbook transaction landed in, nil
	// until that tick has run (and for every other transaction).
	tick atomic.Pointer[Entry]
	// publish is a tick's subscription data, handed to the publisher once
	// the tick is durable.
	publish *tickrec.Tick
	// recordLater: a live tick whose downstream stage sets publish after
	// the tick's input was queued (downstream.go); the record is queued on
	// its own then (admission.body).
	recordLater bool
	// withdrawals are a live tick's withdrawal outcomes, for the writer.
	withdrawals []persist.WithdrawalRow
}

// The writer's three stages, each a goroutine, pipelined: while one group's
// inputs sync, the next is taken and encoded, and the one before is stored
// in Badger.
//
//	admitQ ─▶ writer (take, encode) ─▶ toSync ─▶ syncer (write, fdatasync; settle, ack inputs, attestQ)
//	       ─▶ toStore (storeLagGroups) ─▶ storer (Badger: batches, history, ticks, claims, snapshots; publish, answer the rest)
//
// A transaction or deposit is acknowledged once the syncer's fdatasync
// returns; a tick, and whatever else a group carries (a batch, claims, a
// snapshot, a barrier), once the storer's write returns.

// storeLagGroups bounds the groups whose inputs are durable and whose
// Badger rows are not stored yet; beyond it the syncer waits for the storer.
const storeLagGroups = 8

// writeGroup is one group on its way through the writer's stages.
type writeGroup struct {
	adm    []admission
	inputs persist.Inputs
	g      persist.Group
	bodies []byte // g's tick records (addTickRecord)
}

// addDerived adds to g the rows an applied input derives: its tick links,
// and for a tick its withdrawal rows and its subscription record (stored
// so that a restarted hub can replay it, StoredTicks; the publisher sees it
// only once stored), unless its downstream stage builds the record later
// and queues it on its own (admission.body). e may be nil.
func addDerived(g *persist.Group, bodies *[]byte, links []persist.TickLink, e *Entry) {
	g.Links = append(g.Links, links...)
	if e == nil {
		return
	}
	g.Withdrawals = append(g.Withdrawals, e.withdrawals...)
	if !e.recordLater {
		addTickRecord(g, bodies, e)
	}
}

// addTickRecord adds e's subscription record to g, if e is a tick, encoded
// at the end of *bodies. Store keeps no body, so a writer group reuses its
// buffer for the next group: a busy tick's record (megabytes) no longer
// grows from nothing, which cost ~5 % of the node's CPU under market-maker
// ladders (BENCHMARKS.md, issue 25).
func addTickRecord(g *persist.Group, bodies *[]byte, e *Entry) {
	if t := e.publish; t != nil {
		at := len(*bodies)
		*bodies = tickrec.AppendTick(*bodies, t)
		body := (*bodies)[at:len(*bodies):len(*bodies)]
		g.Ticks = append(g.Ticks, persist.StoredTick{TickUs: t.TickUs, Body: body})
	}
}

// tickBodiesKept bounds the tick records' buffer a writer group keeps for
// its next use.
const tickBodiesKept = 16 << 20

func newWriteGroups(n int) chan *writeGroup {
	free := make(chan *writeGroup, n)
	for range n {
		free <- new(writeGroup)
	}
	return free
}

// writer takes the applied inputs and what else waits for the store in
// groups, and encodes them for the syncer.
func (n *Node) writer() {
	defer n.wg.Done()
	defer close(n.toSync)
	for {
		w := <-n.freeGroups
		w.adm = n.admitQ.take(w.adm[:0], writerGroupMax)
		if len(w.adm) == 0 {
			return
		}
		w.inputs.Reset()
		w.g.Reset()
		w.bodies = w.bodies[:0]
		if cap(w.bodies) > tickBodiesKept {
			w.bodies = nil
		}
		g := &w.g
		for _, a := range w.adm {
			switch {
			case a.in != nil:
				w.inputs.Add(a.in)
				addDerived(g, &w.bodies, a.links, a.entry)
			case a.body != nil:
				addTickRecord(g, &w.bodies, a.body)
			case a.batch != nil:
				// What the committee signed is durable with the inputs
				// (a side record), before Badger holds it: a restart
				// stores it again rather than sign over other records.
				w.inputs.AddBatch(a.batch)
				g.Batches = append(g.Batches, a.batch)
			case a.claims != nil:
				w.inputs.AddClaims(a.claims)
				g.Claims = append(g.Claims, a.claims...)
			case a.snap != nil:
				g.Snapshot = a.snap // at most one: the snapshotter waits for each
			}
			// Nothing set: a barrier (revert.go), answered with the group.
		}
		n.toSync <- w
	}
}

// syncer makes each group's inputs durable, queues them for the sequencer
// to settle (settleQueue), hands their records to the attester and
// acknowledges them. It takes no lock of the sequencer's.
func (n *Node) syncer() {
	defer n.wg.Done()
	defer close(n.toStore)
	var failed bool
	for w := range n.toSync {
		var err error
		if failed {
			err = ErrLogFailed
		} else if n.cfg.BeforeAppend != nil {
			err = n.cfg.BeforeAppend()
		}
		if err == nil {
			start := time.Now()
			w.g.Through, err = n.log.AppendInputs(&w.inputs)
			n.stats.observeCommit(start, len(w.adm))
		}
		if err == nil && n.cfg.AfterAppend != nil {
			err = n.cfg.AfterAppend()
		}
		if err != nil {
			failed = true
			n.fail(w.adm, err, true)
			n.freeGroups <- w
			continue
		}
		// Settled by the sequencer before it applies the next input
		// (settles): a tick holding it does not hold the acknowledgements.
		n.settles.push(w.adm)
		for _, a := range w.adm {
			if a.entry != nil {
				a.entry.durable.Store(true)
				n.attestQ.push(a.entry)
			}
		}
		for _, a := range w.adm {
			if !a.answeredStored() {
				a.answer(a.entry, nil)
			}
		}
		n.toStore <- w
	}
}

// settleQueue holds the records the syncer made durable until the
// sequencer settles them (core.Ledger.Settle: their senders may send
// again). The syncer pushes a group's before it acknowledges any of them;
// the sequencer applies them all before each input it applies, so an
// input admitted after an acknowledgement never finds its sender still
// pending, and the syncer never waits for the sequencer's lock (a tick).
type settleQueue struct {
	mu   sync.Mutex
	recs []*core.TxRecord
	next []*core.TxRecord // the sequencer's, swapped with recs
}

func (q *settleQueue) push(adm []admission) {
	q.mu.Lock()
	for _, a := range adm {
		if a.entry != nil {
			q.recs = append(q.recs, a.entry.Rec)
		}
	}
	q.mu.Unlock()
}

// settle applies the queued records to l.
// REQUIRES: n.mu held for writing (the sequencer).
func (q *settleQueue) settle(l *core.Ledger) {
	q.mu.Lock()
	q.recs, q.next = q.next[:0], q.recs
	q.mu.Unlock()
	for _, rec := range q.next {
		l.Settle(rec)
	}
	clear(q.next)
}

// storer writes each group's Badger rows once its inputs are durable, then
// publishes its ticks and answers the rest of it.
func (n *Node) storer() {
	defer n.wg.Done()
	defer n.attestQ.close() // the syncer, which pushes to it, is done
	if q := n.follow.batches; q != nil {
		defer q.close() // the attester may wait on either
	}
	var failed bool
	var ws []*writeGroup
	var merged persist.Group
	var records []uint64 // the log seqs of the ticks whose records are due, oldest first
	for w := range n.toStore {
		// The groups waiting behind it go in the same write: a storer that
		// fell behind catches up with fewer, larger commits.
		ws = append(ws[:0], w)
	more:
		for len(ws) < storeLagGroups {
			select {
			case next, ok := <-n.toStore:
				if !ok {
					break more
				}
				ws = append(ws, next)
			default:
				break more
			}
		}
		g, inputs := &w.g, 0
		if len(ws) > 1 {
			merged.Reset()
			for _, w := range ws {
				mergeGroup(&merged, &w.g)
			}
			g = &merged
		}
		for _, w := range ws {
			inputs += w.inputs.Len()
			records = recordsDue(records, w)
		}
		if len(records) > 0 && g.Through >= records[0] {
			// A tick whose record is not stored yet: what is derived is
			// stored up to the input before it, so that a restart builds
			// the record again if the node stops first (Open, Derived).
			g.Through = records[0] - 1
		}
		var err error
		if failed {
			err = ErrLogFailed
		} else if n.cfg.BeforeStore != nil {
			err = n.cfg.BeforeStore(inputs)
		}
		if err == nil {
			start := time.Now()
			err = n.log.Store(g)
			n.stats.observeStore(start)
		}
		if err != nil {
			failed = true
		}
		for _, w := range ws {
			n.stored(w, err)
		}
		clear(merged.Batches) // the batches are the attester's
	}
}

// recordsDue updates due, the log seqs of the ticks whose subscription
// records come after their inputs (admission.body), oldest first, with
// group w: its ticks of that kind join the list, its records leave it.
func recordsDue(due []uint64, w *writeGroup) []uint64 {
	seq := w.g.Through - uint64(w.inputs.Len()) // the seq before the group's first input
	for _, a := range w.adm {
		if a.in != nil {
			seq++
			if a.entry != nil && a.entry.recordLater {
				due = append(due, seq)
			}
		}
		if a.body != nil { // records come in tick order: the oldest due
			due = due[1:]
		}
	}
	return due
}

// mergeGroup appends what g stores to dst (a later group after an earlier
// one: its batches, ticks and inputs come after).
func mergeGroup(dst, g *persist.Group) {
	dst.Through = max(dst.Through, g.Through)
	dst.Batches = append(dst.Batches, g.Batches...)
	dst.Links = append(dst.Links, g.Links...)
	dst.Ticks = append(dst.Ticks, g.Ticks...)
	dst.Withdrawals = append(dst.Withdrawals, g.Withdrawals...)
	dst.Claims = append(dst.Claims, g.Claims...)
	if g.Snapshot != nil {
		dst.Snapshot = g.Snapshot // at most one in flight: the snapshotter waits for each
	}
}

// stored finishes w once its store write returned err: publishes its ticks
// and answers what waits for the store, or fails it.
func (n *Node) stored(w *writeGroup, err error) {
	if err != nil {
		n.fail(w.adm, err, false)
		n.freeGroups <- w
		return
	}
	if len(w.g.Withdrawals) > 0 {
		n.wakeClaimer()
	}
	n.pubMu.RLock()
	pub := n.pub
	n.pubMu.RUnlock()
	for _, a := range w.adm {
		if a.entry != nil {
			a.entry.withdrawals = nil
			if !a.entry.recordLater { // else its record comes later (body)
				publishStored(pub, a.entry)
			}
		}
		if a.body != nil {
			publishStored(pub, a.body)
		}
		if a.answeredStored() {
			a.answer(a.entry, nil)
		}
	}
	clear(w.adm) // the entries are the attester's now
	n.freeGroups <- w
}

// publishStored hands a stored tick's record to pub (nil: none attached).
func publishStored(pub Publisher, e *Entry) {
	if e.publish != nil {
		if pub != nil {
			pub.PublishTick(e.publish)
		}
		e.publish = nil
	}
}

// fail handles a log write error: what the group applied in memory is not
// durable (inputs, when the syncer failed) or not stored, so the node stops
// taking writes (a restart replays only what is durable) and tells the
// waiting clients: all of the group's, or (inputs false) those answered
// once stored.
func (n *Node) fail(group []admission, err error, inputs bool) {
	n.mu.Lock()
	n.stop(ErrLogFailed)
	n.mu.Unlock()
	if n.cfg.Logf != nil && !errors.Is(err, ErrLogFailed) {
		n.cfg.Logf("FATAL: intent log write failed, refusing further writes: %v", err)
	}
	for _, a := range group {
		if inputs || a.answeredStored() {
			a.answer(nil, ErrLogFailed)
		}
	}
}

// stop refuses every later write with why (the first reason stays).
// REQUIRES: n.mu held for writing.
func (n *Node) stop(why error) {
	if n.stopErr == nil {
		n.stopErr = why
	}
}

// attester signs each group of durable records, has the writer store the
// batch with its next group commit (one fsync for both), then publishes the
// records. A batch that could not be stored is never served, and no later
// one is signed: the sequence must stay contiguous on disk.
func (n *Node) attester() {
	defer n.wg.Done()
	var group []*Entry
	var leaves [][32]byte
	var wake []func()
	seq := n.nextBatchSeq
	if n.follow.on.Load() {
		var ok bool
		if seq, ok = n.followBatches(seq); !ok {
			return
		}
	}
	for ; ; seq++ {
		group = n.attestQ.take(group[:0], attest.MaxBatchLeaves)
		if len(group) == 0 {
			return
		}
		leaves = appendLeaves(leaves[:0], group)
		// Attestation times never decrease (the node's clock does not, and
		// start-up raised it to the restored batches' newest time): the
		// history indexes search them.
		signers, ok := n.awaitSigners() // fewer than a quorum sign: the batch waits
		if !ok {
			return
		}
		ts := n.clock.NowMicros()
		b := n.committee.AttestBy(nil, seq, ts, leaves, signers) // receipts keep their batch: no reuse
		// The batch and its records' history are stored before any of its
		// receipts is served: after a crash they are read back, never
		// signed again over other records.
		sb := &persist.Batch{Seq: seq, Epoch: b.Epoch, TimeUs: ts, Root: b.Root, FirstPlace: group[0].place,
			Leaves: uint32(len(group)), Sigs: b.Sigs, LeafHashes: slices.Clone(leaves), Records: recordsOf(group)}
		if !n.storeBatch(sb) {
			return
		}
		wake = n.finishBatch(group, b, ts, wake)
	}
}

// finishBatch makes the stored batch b, signed at ts, the attestation of
// group's records: their receipts become final, their waiters wake and the
// publisher sends them. wake is the waiters' buffer, returned for reuse.
// REQUIRES: the attester.
func (n *Node) finishBatch(group []*Entry, b *attest.Batch, ts int64, wake []func()) []func() {
	now := time.Now() // for the latency metric: Go's monotonic reading
	wake = wake[:0]
	n.attach(group, b)
	n.waitMu.Lock() // after the batches are set: OnAttested
	for _, e := range group {
		wake = append(wake, e.waiters...)
		e.waiters = nil
	}
	n.waitMu.Unlock()
	for _, e := range group {
		n.metrics.observe(now, e)
	}
	n.inflight.Add(-int64(len(group)))
	n.ppView.lastAtt.Store(ts) // before pending drops: pastPerfectView
	n.ppView.pending.Add(-int64(len(group)))
	n.metrics.observeBatch(now, len(b.Sigs), n.committee.N)
	n.pubMu.RLock()
	pub := n.pub
	n.pubMu.RUnlock()
	if pub != nil {
		attested := make([]Receipt, len(group))
		for i, e := range group {
			attested[i] = e.receipt()
		}
		pub.Attested(attested)
	}
	for _, w := range wake {
		w()
	}
	n.snap.attested()
	return wake
}

// attach makes b the attestation of the records of group (in leaf order),
// and moves them into the cache of recent records, evicting the oldest:
// from now on the history on disk serves those, up to the new
// attestedEnd. It takes recentMu, not the sequencer's lock: receipts
// never wait for a tick.
// REQUIRES: the attester (or a start-up, alone).
func (n *Node) attach(group []*Entry, b *attest.Batch) {
	n.recentMu.Lock()
	defer n.recentMu.Unlock()
	for i, e := range group {
		e.index.Store(int32(i))
		e.batch.Store(b)
		n.finalize(e.Rec)
		if old := n.recent.push(e); old != nil {
			n.entries.deleteIf(old.Rec.Tx.Hash, old)
		}
	}
	n.attestedEnd = group[len(group)-1].place + 1
}

// storeBatch hands b to the writer and waits until it is durable (store).
func (n *Node) storeBatch(b *persist.Batch) bool { return n.store(admission{batch: b}) }

// store hands a (a batch or claims) to the writer and waits until it is
// durable. It reports false when it is not: the node is closing (the writer
// is gone) or the log write failed (fail already stopped the node).
func (n *Node) store(a admission) bool {
	stored := make(chan error, 1)
	a.done = func(_ *Entry, err error) { stored <- err }
	if !n.admitQ.push(a) {
		return false
	}
	return <-stored == nil
}

// appendLeaves appends the receipt leaves of group, in order: what an
// attestation batch over group signs.
// recordsOf returns the records of group, in its order.
func recordsOf(group []*Entry) []*core.TxRecord {
	recs := make([]*core.TxRecord, len(group))
	for i, e := range group {
		recs[i] = e.Rec
	}
	return recs
}

func appendLeaves(dst [][32]byte, group []*Entry) [][32]byte {
	for _, e := range group {
		dst = append(dst, Commitment(e.Rec).Leaf())
	}
	return dst
}

// Commitment is what a record's receipt leaf commits to.
func Commitment(rec *core.TxRecord) *attest.ReceiptCommitment {
	c := &attest.ReceiptCommitment{
		TxHash:            rec.Tx.Hash,
		Status:            rec.Status,
		GasUsed:           rec.GasUsed,
		CumulativeGasUsed: rec.GasUsed,
		EffectiveGasPrice: rec.EffectiveGasPrice.Bytes32(),
		From:              rec.Tx.From,
		To:                rec.Tx.To,
	}
	if len(rec.Logs) == 0 {
		return c
	}
	// Two allocations, whatever the logs: a tick's record has thousands.
	topics := 0
	for i := range rec.Logs {
		topics += len(rec.Logs[i].Topics)
	}
	all := make([][32]byte, 0, topics)
	c.Logs = make([]attest.LogCommitment, len(rec.Logs))
	for i := range rec.Logs {
		l, lc := &rec.Logs[i], &c.Logs[i]
		lc.Address, lc.Data = l.Address, l.Data
		if len(l.Topics) > 0 {
			at := len(all)
			for _, t := range l.Topics {
				all = append(all, t)
			}
			lc.Topics = all[at:len(all):len(all)]
		}
	}
	return c
}
