package node

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ledgervenue/node/persist"
)

// Whole-venue states: evm_snapshot / evm_revert and anvil_dumpState /
// anvil_loadState (anvil's names, docs/anvil.md).
//
// A state is the whole store as of one moment (persist.Backup) behind a
// header naming the chain and genesis it belongs to: the intent log, the
// attested history, the published ticks and the node's snapshots. It is
// taken after a barrier through the writer, so it holds every input
// applied before the call (and everything acknowledged before it: an
// acknowledged input is durable). Replacing the state stops the pipeline
// (the inputs already admitted are made durable first), makes the store
// hold exactly the state's content, rebuilds everything in RAM from it as
// a start-up does (load), tells the publisher (which ends the
// subscriptions to the history: their buffers went back), and starts the
// pipeline again.
// Time goes back with the state, as in anvil: the node's clock floor is
// reset to the restored state's newest time (a manual clock to its reading
// when the snapshot was taken); the wall clock itself moves on.
//
// evm_snapshot states live in files under DataDir/evm-snapshots, at most
// EvmSnapshotsMax at once; ids start at 0 and count up, reverting to one
// removes it and every later one (as anvil), and none survives a restart
// (the folder is emptied at Open and Close).

// EvmSnapshotsMax bounds the evm_snapshot states kept at once (each costs
// disk in proportion to the data directory).
const EvmSnapshotsMax = 256

// stateMagic starts a dumped state: | magic 8 | chain id 8 | genesis hash 32 |
// then the store's backup (persist.Backup).
const stateMagic = "LDSTATE1"

const stateHeaderLen = len(stateMagic) + 8 + 32

var (
	// ErrTooManySnapshots refuses an evm_snapshot beyond EvmSnapshotsMax.
	ErrTooManySnapshots = fmt.Errorf("too many snapshots kept (max %d): an evm_revert to one removes it and every later one", EvmSnapshotsMax)
	// ErrNotState refuses a state to load that is not a dump of this
	// chain and genesis; nothing changed.
	ErrNotState = errors.New("not a state dump of this venue")
	// errReplacing refuses writes while the state is being replaced.
	errReplacing = errors.New("node is not accepting writes: its state is being replaced (evm_revert or anvil_loadState); retry")
)

// evmSnapshots is the evm_snapshot states kept; mu also serializes every
// control that reads or replaces the whole state, and Close.
type evmSnapshots struct {
	mu   sync.Mutex
	next uint64
	live []evmSnap // ascending id
}

type evmSnap struct {
	id   uint64
	path string
	// clockUs is the clock source's reading when the snapshot was taken:
	// a manual clock goes back to it.
	clockUs int64
}

// quitCh is the pipeline's quit channel, which a revert replaces: read
// under the lock by those outside the pipeline.
func (n *Node) quitCh() <-chan struct{} {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.quit
}

func (n *Node) evmDir() string { return filepath.Join(n.cfg.DataDir, "evm-snapshots") }

// dropEvmSnapshots removes every evm_snapshot state. REQUIRES: n.evm.mu held
// (or the node not yet shared).
func (n *Node) dropEvmSnapshots() {
	os.RemoveAll(n.evmDir())
	n.evm.live = nil
}

// EvmSnapshot stores the current state and returns its id.
func (n *Node) EvmSnapshot() (uint64, error) {
	n.evm.mu.Lock()
	defer n.evm.mu.Unlock()
	if len(n.evm.live) >= EvmSnapshotsMax {
		return 0, ErrTooManySnapshots
	}
	if err := os.MkdirAll(n.evmDir(), 0o755); err != nil {
		return 0, err
	}
	n.mu.RLock()
	behind := n.snap.sinceCount
	n.mu.RUnlock()
	if behind > evmReplayMax {
		n.snapshotWithin(evmSnapshotWait)
	}
	id := n.evm.next
	path := filepath.Join(n.evmDir(), strconv.FormatUint(id, 10)+".state")
	clockUs := n.cfg.Clock.NowMicros()
	if err := n.dumpFile(path, true); err != nil {
		return 0, err
	}
	n.evm.next++
	n.evm.live = append(n.evm.live, evmSnap{id: id, path: path, clockUs: clockUs})
	return id, nil
}

// An evm_snapshot taken more than evmReplayMax inputs after the node's
// newest state snapshot takes one first (waiting at most evmSnapshotWait:
// it waits for the records it covers to be attested), so that a revert
// loads it instead of replaying those inputs. Measured with revertbench
// after 2000 transfers: a revert took 0.43 to 0.56 s without.
const (
	evmReplayMax    = 256
	evmSnapshotWait = 2 * time.Second
)

// snapshotWithin takes a state snapshot and waits for it at most d; one
// that takes longer (a committee fault holding attestations) goes on in
// the background.
func (n *Node) snapshotWithin(d time.Duration) {
	done := make(chan error, 1)
	go func() { done <- n.Snapshot() }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// EvmRevert replaces the state with snapshot id's and removes that snapshot
// and every later one. It reports false, changing nothing, when no snapshot
// has that id.
func (n *Node) EvmRevert(id uint64) (bool, error) {
	if err := n.replaceable(); err != nil {
		return false, err
	}
	n.evm.mu.Lock()
	defer n.evm.mu.Unlock()
	i := slices.IndexFunc(n.evm.live, func(s evmSnap) bool { return s.id == id })
	if i < 0 {
		return false, nil
	}
	s := n.evm.live[i]
	f, err := os.Open(s.path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	if err := n.checkStateHeader(br); err != nil {
		return false, err
	}
	if err := n.replaceState(br, s.clockUs); err != nil {
		return false, err
	}
	for _, later := range n.evm.live[i:] {
		os.Remove(later.path)
	}
	n.evm.live = n.evm.live[:i]
	return true, nil
}

// ErrReplicated refuses a whole-state replacement on a replicated node.
var ErrReplicated = errors.New("replacing the whole state (evm_revert, anvil_loadState) is not available while the log is replicated (--nats): followers apply frames, and a replaced state is none")

// replaceable refuses a whole-state replacement on a follower or a node
// whose log is replicated.
func (n *Node) replaceable() error {
	switch {
	case n.Following():
		return n.notLeader()
	case n.cfg.Replicated:
		return ErrReplicated
	}
	return nil
}

// DumpState writes the whole state to w (anvil_dumpState; --dump-state is
// CloseDumping).
func (n *Node) DumpState(w io.Writer) error {
	n.evm.mu.Lock()
	defer n.evm.mu.Unlock()
	return n.dump(w, true)
}

// dumpFile writes the state to path, whole or not at all; barrier: the
// pipeline runs (else it is stopped, and the store is the whole state).
// REQUIRES: n.evm.mu held.
func (n *Node) dumpFile(path string, barrier bool) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	err = n.dump(f, barrier)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(path+".tmp", path)
	}
	if err != nil {
		os.Remove(path + ".tmp")
		return fmt.Errorf("cannot store the state: %w", err)
	}
	return nil
}

// dump writes the state header and the store's backup, after a barrier
// when the pipeline runs.
// REQUIRES: n.evm.mu held.
func (n *Node) dump(w io.Writer, barrier bool) error {
	if barrier {
		if err := n.barrier(); err != nil {
			return err
		}
	}
	var hdr [stateHeaderLen]byte
	copy(hdr[:], stateMagic)
	binary.BigEndian.PutUint64(hdr[8:], n.cfg.ChainID)
	n.mu.RLock()
	copy(hdr[16:], n.genesisHash[:])
	n.mu.RUnlock()
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	return n.log.Backup(w)
}

// barrier returns once every input applied before it is durable.
// REQUIRES: n.evm.mu held (the queue is not replaced meanwhile).
func (n *Node) barrier() error {
	done := make(chan error, 1)
	if !n.admitQ.push(admission{done: func(_ *Entry, err error) { done <- err }}) {
		return ErrStopped
	}
	return <-done
}

// LoadState replaces the whole state with a dump read from r
// (anvil_loadState, --load-state). The dump is read to its end and checked
// before anything changes, then read again from its start to restore it:
// a bad one is refused with ErrNotState and the state stays as it was.
// Time is the dump's newest time, or later.
func (n *Node) LoadState(r io.ReadSeeker) error {
	if err := n.replaceable(); err != nil {
		return err
	}
	n.evm.mu.Lock()
	defer n.evm.mu.Unlock()
	if err := n.checkStateHeader(r); err != nil {
		return err
	}
	if err := persist.CheckBackup(bufio.NewReaderSize(r, 1<<16)); err != nil {
		return fmt.Errorf("%w: %v", ErrNotState, err)
	}
	if _, err := r.Seek(int64(stateHeaderLen), io.SeekStart); err != nil {
		return err
	}
	if err := n.replaceState(bufio.NewReaderSize(r, 1<<16), -1); err != nil {
		return err
	}
	// Snapshots taken before are of another history now.
	n.dropEvmSnapshots()
	return nil
}

// checkStateHeader reads a state's header from r and checks it names this
// chain and genesis.
func (n *Node) checkStateHeader(r io.Reader) error {
	var hdr [stateHeaderLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil || string(hdr[:8]) != stateMagic {
		return fmt.Errorf("%w: no state header", ErrNotState)
	}
	if id := binary.BigEndian.Uint64(hdr[8:]); id != n.cfg.ChainID {
		return fmt.Errorf("%w: it is of chain id %d, this node's is %d", ErrNotState, id, n.cfg.ChainID)
	}
	n.mu.RLock()
	same := bytes.Equal(hdr[16:], n.genesisHash[:])
	n.mu.RUnlock()
	if !same {
		return fmt.Errorf("%w: it was taken under another genesis (other dev accounts, markets or flags)", ErrNotState)
	}
	return nil
}

// replaceState makes the store hold the backup r and rebuilds the node
// from it; clockUs >= 0 sets a manual clock back to that reading.
// REQUIRES: n.evm.mu held.
func (n *Node) replaceState(r io.Reader, clockUs int64) error {
	n.lockSettled()
	if err := n.stopErr; err != nil {
		n.mu.Unlock()
		return err
	}
	n.stop(errReplacing)
	n.mu.Unlock()
	n.stopPipeline()

	err := n.log.Restore(r)
	if err == nil {
		if mc, ok := n.cfg.Clock.(*ManualClock); ok && clockUs >= 0 {
			mc.us.Store(clockUs)
		}
		n.clock.last.Store(0)
		n.pastPerfect.last.Store(0)
		scratch := &Node{cfg: n.cfg, clock: n.clock, committee: n.committee, log: n.log, logScanMax: n.logScanMax}
		if err = scratch.load(); err == nil {
			if mc, ok := n.cfg.Clock.(*ManualClock); ok && clockUs < 0 {
				// A loaded state's time is its newest, or the clock's if later.
				mc.us.Store(max(mc.us.Load(), n.clock.last.Load()))
			}
			n.mu.Lock()
			n.recentMu.Lock()
			n.idxMu.Lock()
			n.state = scratch.state
			n.idxMu.Unlock()
			n.recentMu.Unlock()
			n.ppView.lastAtt.Store(scratch.ppView.lastAtt.Load())
			n.ppView.pending.Store(scratch.ppView.pending.Load())
			n.lastTick.Store(scratch.lastTick.Load())
			n.views.Store(n.rviews)
			n.market.idx.SetEquity(n.equity)
			n.ranking.reset()
			n.batches.reset()
			n.snap.init(n)
			n.snap.sinceCount = int(n.log.Len() - n.replayedFrom)
			pub := n.pub
			n.mu.Unlock()
			seq, h := n.StateAt() // the pipeline is stopped: nothing moves it
			n.Logf("state replaced: %d inputs, state hash %x", seq, h)
			if pub != nil {
				pub.Reverted(n.preloadTicks())
			}
		}
	}
	if err != nil {
		// The store may be half replaced: take no write until a restart,
		// which refuses such a store with a clear message.
		n.mu.Lock()
		n.admitQ, n.attestQ, n.quit = newQueue[admission](), newQueue[*Entry](), make(chan struct{})
		n.stopErr = nil
		n.stop(fmt.Errorf("%w (%v)", ErrLogFailed, err))
		n.mu.Unlock()
		n.Logf("FATAL: replacing the state failed, refusing further writes: %v", err)
	}
	n.startPipeline()
	return err
}
