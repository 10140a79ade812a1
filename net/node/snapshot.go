package node

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/persist"
)

// Snapshots. After SnapshotEvery inputs, or SnapshotInterval after the last
// snapshot if any input arrived since, the sequencer encodes the state
// between two inputs, under its lock: the ledger and books (core), the
// market-data index (marketdata) and the node's own views. That encoding is the
// only pause the sequencer takes. The snapshotter goroutine compresses it,
// waits until every record it covers is attested (a restart replays only the
// log after the snapshot, so records before it must already be in the
// history), and hands it to the writer, which stores it in a group commit
// after the inputs it covers. Start-up loads the newest snapshot that reads
// back and replays the log after it; one that does not (damaged, another
// genesis) is skipped with a log line for the previous one, or a replay
// from genesis.

// nodeSnapMagic starts the node's snapshot; the layout is:
//
//	| magic 6 | genesis hash 32 | seq 8 | records 8 | nowUs 8 | lastTickUs 8 |
//	| lastTickHash 32 | nAwaiting 4 | (tag 8 | hash 32)* by tag | ledgerLen 8 |
//	| ledger (core) | market index (marketdata, to the end) |
//
// nowUs is the node's time when the snapshot was taken: a start-up from it
// resumes its monotonic clock there.
const nodeSnapMagic = "NSNAP1"

// pendingSnap is a snapshot encoded under the lock, on its way to disk.
type pendingSnap struct {
	seq, records uint64
	body         []byte
	done         chan error // nil, or told once the snapshot is durable
}

// SnapshotStats describes the snapshots taken since start-up.
type SnapshotStats struct {
	Taken     int
	Seq       uint64        // inputs the newest one covers
	RawBytes  int           // its encoded size
	DiskBytes int           // its compressed size
	LastPause time.Duration // the sequencer's pause for it
	MaxPause  time.Duration // the longest pause so far
}

// snapshotter schedules snapshots; the scheduling fields are guarded by
// Node.mu, stats by its own lock.
type snapshotter struct {
	n          *Node
	sinceCount int
	lastAt     time.Time
	todo       chan pendingSnap
	attestedCh chan struct{}
	statsMu    sync.Mutex
	stats      SnapshotStats
}

func (s *snapshotter) init(n *Node) {
	s.n, s.lastAt = n, time.Now()
	s.todo = make(chan pendingSnap, 1)
	s.attestedCh = make(chan struct{}, 1)
}

// afterInput counts an applied input and takes a snapshot when one is due
// and the previous one is on disk.
// REQUIRES: n.mu held for writing.
func (s *snapshotter) afterInput() {
	if s.n.cfg.SnapshotEvery < 0 {
		return
	}
	s.sinceCount++
	if s.sinceCount < s.n.cfg.SnapshotEvery && time.Since(s.lastAt) < s.n.cfg.SnapshotInterval {
		return
	}
	if s.n.ticking || s.n.ledger.Orderbook().Staging() { // staged orders are in no book yet, the index is the downstream's: after the tick
		return
	}
	if len(s.todo) == 0 {
		s.takeLocked(nil)
	}
}

// takeLocked encodes the state now and queues it for the snapshotter.
// REQUIRES: n.mu held for writing; s.todo has room.
func (s *snapshotter) takeLocked(done chan error) {
	start := time.Now()
	p := pendingSnap{seq: s.n.ledger.Seq(), records: s.n.records, body: s.n.appendSnapshotLocked(nil), done: done}
	pause := time.Since(start)
	s.sinceCount, s.lastAt = 0, time.Now()
	s.statsMu.Lock()
	s.stats.LastPause = pause
	s.stats.MaxPause = max(s.stats.MaxPause, pause)
	s.statsMu.Unlock()
	s.todo <- p
}

// attested tells the snapshotter that records were attested.
func (s *snapshotter) attested() {
	select {
	case s.attestedCh <- struct{}{}:
	default:
	}
}

// Stats returns the snapshot statistics.
func (n *Node) SnapshotStats() SnapshotStats {
	n.snap.statsMu.Lock()
	defer n.snap.statsMu.Unlock()
	return n.snap.stats
}

// Snapshot takes a snapshot now and waits until it is on disk.
func (n *Node) Snapshot() error {
	done := make(chan error, 1)
	var quit <-chan struct{}
	for {
		n.lockSettled()
		if n.stopErr != nil {
			n.mu.Unlock()
			return n.stopErr
		}
		if len(n.snap.todo) == 0 {
			n.snap.takeLocked(done)
			quit = n.quit // a revert replaces it (under the lock)
			n.mu.Unlock()
			break
		}
		n.mu.Unlock()
		time.Sleep(time.Millisecond) // the previous snapshot is being written
	}
	select {
	case err := <-done:
		return err
	case <-quit:
		return ErrStopped
	}
}

// snapshotter compresses the encoded snapshots and hands them to the writer
// once the records they cover are attested.
func (n *Node) snapshotter() {
	defer n.wg.Done()
	var kept []uint64
	for {
		var p pendingSnap
		select {
		case <-n.quit:
			return
		case p = <-n.snap.todo:
		}
		s := persist.NewSnapshot(p.seq, p.body)
		for {
			n.recentMu.RLock()
			caughtUp := n.attestedEnd >= p.records
			n.recentMu.RUnlock()
			if caughtUp {
				break
			}
			select {
			case <-n.quit:
				return
			case <-n.snap.attestedCh:
			}
		}
		stored := make(chan error, 1)
		if !n.admitQ.push(admission{snap: s, done: func(_ *Entry, err error) { stored <- err }}) {
			return
		}
		err := <-stored
		if err == nil {
			n.snap.statsMu.Lock()
			n.snap.stats.Taken++
			n.snap.stats.Seq, n.snap.stats.RawBytes, n.snap.stats.DiskBytes = p.seq, len(p.body), s.Size()
			pause := n.snap.stats.LastPause
			n.snap.statsMu.Unlock()
			n.Logf("snapshot at input %d stored: %d bytes, %d compressed; the sequencer paused %v to take it",
				p.seq, len(p.body), s.Size(), pause)
			kept = append(kept, p.seq)
			if len(kept) > snapshotsKept {
				kept = kept[len(kept)-snapshotsKept:]
				err = n.log.DeleteSnapshotsBefore(kept[0])
			}
		}
		if p.done != nil {
			p.done <- err
		}
		if err != nil {
			n.Logf("snapshot at seq %d: %v", p.seq, err)
		}
	}
}

// appendSnapshotLocked appends the node's snapshot (layout above).
// REQUIRES: n.mu held.
func (n *Node) appendSnapshotLocked(dst []byte) []byte {
	dst = append(dst, nodeSnapMagic...)
	dst = append(dst, n.genesisHash[:]...)
	dst = binary.BigEndian.AppendUint64(dst, n.ledger.Seq())
	dst = binary.BigEndian.AppendUint64(dst, n.records)
	dst = binary.BigEndian.AppendUint64(dst, uint64(n.clock.NowMicros()))
	dst = binary.BigEndian.AppendUint64(dst, uint64(n.lastTickUs))
	dst = append(dst, n.lastTickHash[:]...)
	tags := make([]uint64, 0, len(n.awaiting))
	for tag := range n.awaiting {
		tags = append(tags, tag)
	}
	slices.Sort(tags)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(tags)))
	for _, tag := range tags {
		h := n.awaiting[tag].hash
		dst = append(binary.BigEndian.AppendUint64(dst, tag), h[:]...)
	}
	lenAt := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, 0)
	dst = n.ledger.AppendSnapshot(dst)
	binary.BigEndian.PutUint64(dst[lenAt:], uint64(len(dst)-lenAt-8))
	return n.market.idx.AppendSnapshot(dst)
}

var errSnapCorrupt = errors.New("malformed node snapshot")

// snapState is a decoded node snapshot.
type snapState struct {
	seq, records uint64
	nowUs        int64
	lastTickUs   int64
	lastTickHash clob.Hash
	awaiting     map[uint64]awaitRef
	ledger       *core.Ledger
	index        *marketdata.Index
}

func (n *Node) decodeSnapshot(b []byte) (*snapState, error) {
	const fixed = 6 + 32 + 8*4 + 32 + 4
	if len(b) < fixed || string(b[:6]) != nodeSnapMagic {
		return nil, errSnapCorrupt
	}
	if !bytes.Equal(b[6:38], n.genesisHash[:]) {
		return nil, errors.New("taken under another genesis (the configuration changed)")
	}
	st := &snapState{awaiting: make(map[uint64]awaitRef)}
	b = b[38:]
	st.seq = binary.BigEndian.Uint64(b)
	st.records = binary.BigEndian.Uint64(b[8:])
	st.nowUs = int64(binary.BigEndian.Uint64(b[16:]))
	st.lastTickUs = int64(binary.BigEndian.Uint64(b[24:]))
	copy(st.lastTickHash[:], b[32:64])
	count := binary.BigEndian.Uint32(b[64:])
	b = b[68:]
	if uint64(count)*40+8 > uint64(len(b)) {
		return nil, errSnapCorrupt
	}
	for range count {
		var h core.Hash
		tag := binary.BigEndian.Uint64(b)
		copy(h[:], b[8:40])
		st.awaiting[tag] = awaitRef{hash: h}
		b = b[40:]
	}
	ledgerLen := binary.BigEndian.Uint64(b)
	b = b[8:]
	if ledgerLen > uint64(len(b)) {
		return nil, errSnapCorrupt
	}
	var err error
	st.ledger, err = core.LoadSnapshot(n.cfg.ledgerConfig(), b[:ledgerLen])
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if st.ledger.Seq() != st.seq {
		return nil, errSnapCorrupt
	}
	if st.index, err = marketdata.Load(st.ledger.Orderbook(), b[ledgerLen:]); err != nil {
		return nil, fmt.Errorf("market index: %w", err)
	}
	return st, nil
}

// loadNewestSnapshot installs the newest snapshot that reads back and whose
// records are all in the history, and returns the inputs it covers (0: none
// usable, replay from genesis).
func (n *Node) loadNewestSnapshot(head persist.Head) (uint64, error) {
	var from uint64
	err := n.log.Snapshots(func(seq uint64, body []byte, err error) bool {
		var st *snapState
		if err == nil {
			st, err = n.decodeSnapshot(body)
		}
		if err == nil && (st.seq != seq || st.seq > n.log.Len()) {
			err = errSnapCorrupt
		}
		if err == nil && st.records > head.NextPlace {
			err = fmt.Errorf("covers %d records, the history holds %d", st.records, head.NextPlace)
		}
		if err != nil {
			n.Logf("snapshot at seq %d skipped: %v; trying an older one", seq, err)
			return true
		}
		n.ledger, n.market = st.ledger, &marketViews{idx: st.index}
		n.market.idx.SetEquity(n.equity)
		n.records, n.lastTickUs, n.lastTickHash = st.records, st.lastTickUs, st.lastTickHash
		n.lastTick.Store(nil)
		if st.lastTickUs > 0 {
			n.lastTick.Store(&TickRef{Us: st.lastTickUs, Hash: core.Hash(st.lastTickHash)})
		}
		n.clock.raise(st.nowUs)
		n.awaiting = st.awaiting
		from = seq
		return false
	})
	return from, err
}
