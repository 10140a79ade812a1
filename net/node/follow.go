package node

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/persist"
)

// Followers (docs/scaling.md). A follower applies the frames a leader made
// durable (ApplyFrames: its inputs and what its committee signed, read from
// a stream by net/replicate) through the code a restart replays with, and
// stores them as a leader stores its own: its log, history, ticks and
// snapshots are a leader's, its read views, index and hub answer as the
// leader's did at the same input. It never stamps, ticks, signs or claims:
//
//   - Inputs apply under mu in the leader's order (applyLogged): the
//     ledger must accept each one, or the follower stops (its state and the
//     leader's differ). A tick runs its downstream stage in line, as a
//     replay does (TestDownstreamEqualsInline: the same record).
//   - The attester takes the leader's batches (followBatches) instead of
//     signing: each must be the next seq, start at the next place and hold
//     the leaves of the next records, or the follower stops. Then it is
//     stored and attached as a signed one (the same tail, finishBatch).
//   - Claims are stored as they come.
//   - Writes are refused with NotLeaderError, which names the leader.
//
// Promote makes a follower the leader where it stands: the batches it was
// handed are attached first, then its attester signs from the next seq
// (never a seq the old leader signed: those came before in the stream),
// its ticker and claimer start, and writes are admitted.

// ReplicationStatus is what svc_metrics and the Prometheus scrape report
// of a replicated node (net/replicate).
type ReplicationStatus struct {
	Role   string // "leader" or "follower"
	Leader string // the leader's URL
	// StreamSeq is the stream sequence of the newest message published
	// (a leader), or applied with every input durable (a follower: a read
	// after it finds that message's inputs).
	StreamSeq uint64
	// LagInputs and LagMs are Lag's; LagP50Ms and LagP99Ms the delay from
	// the leader's reading of a message's frames (right after their
	// fdatasync) to their application on a follower, over its newest
	// messages (the two clocks are assumed in step).
	LagInputs, LagMs   int64
	LagP50Ms, LagP99Ms float64
}

// NotLeaderError refuses a write on a follower.
type NotLeaderError struct{ Leader string }

func (e *NotLeaderError) Error() string {
	if e.Leader == "" {
		return "this node is a follower and knows no leader now: retry shortly"
	}
	return "this node is a follower: send writes to the leader at " + e.Leader
}

// followState is a follower's: set at Open, cleared by Promote.
type followState struct {
	on     atomic.Bool
	leader atomic.Pointer[string]
	// batches hands the leader's batches to the attester, in stream order;
	// a nil batch ends following (Promote).
	batches *queue[*persist.Batch]
	// nextBatch is the seq of the next batch to hand over (ApplyFrames'
	// goroutine).
	nextBatch uint64
	// appliedAt is when the newest applied frame's message was published
	// (the leader's clock, ms since the epoch), lagInputs how many inputs
	// the stream held beyond it then: the replication lag (Lag).
	appliedAt atomic.Int64
	lagInputs atomic.Int64
	// resume is the seq of the input a follower's stream resumes at after
	// a start (ResumeSeq).
	resume uint64
}

// Following reports whether the node is a follower.
func (n *Node) Following() bool { return n.follow.on.Load() }

// SetLeader records the leader's URL, which writes refused on a follower
// name.
func (n *Node) SetLeader(url string) { n.follow.leader.Store(&url) }

// LeaderURL returns the leader's URL as last recorded ("" when none).
func (n *Node) LeaderURL() string {
	if p := n.follow.leader.Load(); p != nil {
		return *p
	}
	return ""
}

// notLeader is the refusal of a write on a follower.
func (n *Node) notLeader() error { return &NotLeaderError{Leader: n.LeaderURL()} }

// SetLag records the replication lag after a message: when its leader
// published it (ms since the epoch) and how many inputs the stream held
// after it.
func (n *Node) SetLag(publishedMs int64, inputsBehind int64) {
	n.follow.appliedAt.Store(publishedMs)
	n.follow.lagInputs.Store(inputsBehind)
}

// Lag returns the replication lag: inputs behind the stream's end, and
// milliseconds since the newest applied message was published (zero when
// caught up, or not following).
func (n *Node) Lag() (inputs, ms int64) {
	if !n.Following() {
		return 0, 0
	}
	inputs = n.follow.lagInputs.Load()
	if inputs > 0 {
		if at := n.follow.appliedAt.Load(); at > 0 {
			ms = max(time.Now().UnixMilli()-at, 0)
		}
	}
	return inputs, ms
}

// Applied returns the seq of the newest input the follower applied: where
// its stream resumes after a restart.
func (n *Node) Applied() uint64 {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.ledger.Seq()
}

// ResumeSeq returns the seq of the leader's input a follower's stream
// resumes at after Open: the input after the newest it holds, or, when
// some of its records wait for their batch, the oldest of those (the batch
// follows it in the stream). What comes again is skipped.
func (n *Node) ResumeSeq() uint64 { return n.follow.resume }

// ErrDiverged stops a follower whose state cannot take the leader's frames.
var ErrDiverged = errors.New("the follower's state differs from the leader's")

// ApplyFrames applies frames (persist.Tail.Read's bytes), which start at
// place from of the leader's log. Inputs and batches the follower holds
// already are skipped (a stream resumes at the message holding its next
// input). One goroutine calls it.
func (n *Node) ApplyFrames(from persist.Pos, frames []byte) error {
	if !n.Following() {
		return errors.New("not a follower")
	}
	seq := from.Seq
	return persist.EachFrame(frames, func(p []byte, side bool) error {
		if !side {
			s := seq
			seq++
			in, err := persist.DecodeRecord(p)
			if err != nil {
				return fmt.Errorf("the leader's input %d: %w", s, err)
			}
			return n.applyLogged(s, &in)
		}
		b, claims, err := persist.DecodeSide(p)
		if err != nil {
			return fmt.Errorf("a side record of the leader's at input %d: %w", seq, err)
		}
		if b != nil {
			switch {
			case b.Seq < n.follow.nextBatch:
				return nil // held already
			case b.Seq > n.follow.nextBatch:
				return fmt.Errorf("%w: the leader's batch %d follows batch %d", ErrDiverged, b.Seq, n.follow.nextBatch-1)
			}
			n.follow.nextBatch++
			n.follow.batches.push(b)
		}
		if len(claims) > 0 && !n.store(admission{claims: claims}) {
			return ErrStopped
		}
		return nil
	})
}

// applyLogged applies the leader's input seq as the sequencer applies an
// admitted one, without stamping or checking it again.
func (n *Node) applyLogged(seq uint64, in *core.Input) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	for n.inflight.Load() >= MaxInflight && n.stopErr == nil {
		// The attester is behind: wait rather than hold more in RAM.
		n.mu.Unlock()
		time.Sleep(time.Millisecond)
		n.mu.Lock()
	}
	if n.stopErr != nil {
		return n.stopErr
	}
	switch have := n.ledger.Seq(); {
	case seq <= have:
		return nil // applied before a restart
	case seq > have+1:
		return fmt.Errorf("%w: the leader's input %d comes after input %d", ErrDiverged, seq, have)
	}
	n.settles.settle(n.ledger)
	n.ppView.pending.Add(1)
	rec, rej := n.ledger.Apply(in)
	if !rej.OK() {
		n.ppView.pending.Add(-1)
		err := fmt.Errorf("%w: the leader's input %d does not apply here (reject %d: %s)", ErrDiverged, seq, rej.Code, rej.Detail)
		n.stop(err)
		return err
	}
	n.clock.raise(in.TimeUs)
	if in.Kind == core.InputClockOffset {
		n.resumeOffset()
	}
	if rec != nil {
		n.ledger.Settle(rec) // durable at the leader; nobody here sends
	}
	n.queueApplied(in, rec, time.Time{}, nil)
	return nil
}

// followBatches attaches the leader's batches, from seq on, until Promote
// ends following; it returns the seq the node signs from then, and false
// when the node stops first.
// REQUIRES: the attester.
func (n *Node) followBatches(seq uint64) (uint64, bool) {
	var one [1]*persist.Batch
	var group []*Entry
	var leaves [][32]byte
	var wake []func()
	for ; ; seq++ {
		got := n.follow.batches.take(one[:0], 1)
		if len(got) == 0 {
			return seq, false // closing
		}
		sb := got[0]
		if sb == nil {
			return seq, true // promoted
		}
		group = group[:0]
		for len(group) < int(sb.Leaves) {
			before := len(group)
			if group = n.attestQ.take(group, int(sb.Leaves)-len(group)); len(group) == before {
				return seq, false // closing
			}
		}
		b, err := restoreSigned(sb, seq, group[0].place, group, &leaves)
		if errors.Is(err, errNotItsRecords) {
			n.Halt(fmt.Errorf("%w: the leader's batch %d does not attest the records %d to %d here", ErrDiverged,
				sb.Seq, group[0].place, group[len(group)-1].place))
			return seq, false
		}
		if err != nil {
			n.Halt(fmt.Errorf("%w: the leader's batch %d: %v", ErrDiverged, sb.Seq, err))
			return seq, false
		}
		sb.Records = recordsOf(group)
		if !n.storeBatch(sb) {
			return seq, false
		}
		n.clock.raise(sb.TimeUs)
		wake = n.finishBatch(group, b, sb.TimeUs, wake)
	}
}

// Halt refuses every later write with why, and logs it: a leader that lost
// its lease or its stream, a follower whose state diverged.
func (n *Node) Halt(why error) {
	n.mu.Lock()
	n.stop(why)
	n.mu.Unlock()
	n.Logf("FATAL: refusing writes: %v", why)
}

// TailLog returns a reader of the log's durable frames from place from
// on (persist.Tail), for a replicator.
func (n *Node) TailLog(from persist.Pos) (*persist.Tail, error) { return n.log.Tail(from) }

// DurablePos returns the place after the log's newest durable frame.
func (n *Node) DurablePos() (persist.Pos, error) { return n.log.DurablePos() }

// ErrLeading refuses to promote a node that leads.
var ErrLeading = errors.New("this node leads already")

// Promote makes the follower the leader at the place it has applied: the
// caller has stopped feeding it (ApplyFrames) and applied everything the
// stream held. The batches handed over are attached first; then the node
// signs, ticks, claims and admits writes.
func (n *Node) Promote() error {
	if !n.follow.on.Load() {
		return ErrLeading
	}
	n.follow.batches.push(nil)
	n.mu.Lock()
	n.resumeOffset()
	n.follow.on.Store(false)
	n.mu.Unlock()
	n.startLeading()
	if err := n.joinStagedRun(); err != nil {
		return err
	}
	n.Logf("promoted to leader at input %d", n.Applied())
	return nil
}

// Genesis returns the stored genesis description (replay.go): a follower
// must run under its leader's.
func (n *Node) Genesis() ([]byte, error) { return n.log.Genesis() }

// NewestBatch returns the newest attestation batch the node stores: its
// seq, root and the seq of the input of its first record (ok false when
// it stores none). A follower checks it against its stream's.
func (n *Node) NewestBatch() (seq uint64, root [32]byte, firstInput uint64, ok bool, err error) {
	head, err := n.log.Head()
	if err != nil || head.NextSeq == 1 {
		return 0, root, 0, false, err
	}
	sb, err := n.log.Batch(head.NextSeq - 1)
	if err != nil || sb == nil {
		return 0, root, 0, false, fmt.Errorf("the newest batch %d: %v", head.NextSeq-1, err)
	}
	recs, err := n.log.Records([]uint64{sb.FirstPlace})
	if err != nil {
		return 0, root, 0, false, err
	}
	return sb.Seq, sb.Root, recs[0].Rec.Seq, true, nil
}
