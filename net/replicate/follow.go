package replicate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/persist"
)

// consumeBytes bounds what the consumer holds fetched ahead of the node.
const consumeBytes = 8 << 20

// startFollowing checks that the node's log is a prefix of the stream's,
// then consumes the stream from the message holding the node's resume
// input and watches the lease.
func (r *Replicator) startFollowing() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.checkPrefix(ctx); err != nil {
		return err
	}
	start, err := r.messageHolding(ctx, r.n.ResumeSeq())
	if err != nil {
		return err
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{r.subject}, DeliverPolicy: jetstream.DeliverAllPolicy}
	if start > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, start
	}
	cons, err := r.js.OrderedConsumer(ctx, r.cfg.Stream, cfg)
	if err != nil {
		return fmt.Errorf("cannot consume the stream: %w", err)
	}
	r.n.SetLeader(r.Leader())
	cctx, stop := context.WithCancel(context.Background())
	r.follow, r.followed = stop, make(chan struct{})
	r.wg.Add(2)
	go r.consume(cctx, cons)
	go r.watchLease()
	return nil
}

// messageOf reads stream message seq's places.
func (r *Replicator) messageOf(ctx context.Context, seq uint64) (*jetstream.RawStreamMsg, persist.Pos, persist.Pos, error) {
	m, err := r.stream.GetMsg(ctx, seq)
	if err != nil {
		return nil, persist.Pos{}, persist.Pos{}, fmt.Errorf("cannot read the stream's message %d: %w", seq, err)
	}
	from, err1 := persist.ParsePos(m.Header.Get(hdrFrom))
	to, err2 := persist.ParsePos(m.Header.Get(hdrTo))
	if err := errors.Join(err1, err2); err != nil {
		return nil, from, to, fmt.Errorf("the stream's message %d: %w", seq, err)
	}
	return m, from, to, nil
}

// messageHolding returns the stream sequence of the last message that
// starts at or before input seq (0: the stream is empty).
func (r *Replicator) messageHolding(ctx context.Context, seq uint64) (uint64, error) {
	info, err := r.stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("cannot read the stream: %w", err)
	}
	lo, hi := info.State.FirstSeq, info.State.LastSeq
	if info.State.Msgs == 0 {
		return 0, nil
	}
	_, from, _, err := r.messageOf(ctx, lo)
	if err != nil {
		return 0, err
	}
	if from.Seq > seq {
		return 0, fmt.Errorf("the stream starts at input %d and this node needs input %d: start it from a copy of a node's data directory", from.Seq, seq)
	}
	for lo < hi { // the last message starting at or before seq is in [lo, hi]
		mid := lo + (hi-lo+1)/2
		_, from, _, err := r.messageOf(ctx, mid)
		if err != nil {
			return 0, err
		}
		if from.Seq <= seq {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo, nil
}

// checkPrefix refuses a node whose newest input is not the stream's input
// at that seq: a leader that stopped before publishing its last inputs,
// which another leader then replaced.
func (r *Replicator) checkPrefix(ctx context.Context) error {
	have := r.n.Applied()
	if have == 0 {
		return nil
	}
	same, err := r.sameInputAt(ctx, have)
	if err != nil {
		return err
	}
	if !same {
		return fmt.Errorf("this node's input %d is not the stream's (it led, and stopped before publishing it): start it from an empty data directory", have)
	}
	return r.checkNewestBatch(ctx)
}

// sameInputAt reports whether the stream holds this node's input seq.
func (r *Replicator) sameInputAt(ctx context.Context, seq uint64) (bool, error) {
	mseq, err := r.messageHolding(ctx, seq)
	if err != nil {
		return false, err
	}
	var theirs []byte
	if mseq > 0 {
		m, from, _, err := r.messageOf(ctx, mseq)
		if err != nil {
			return false, err
		}
		if theirs, err = inputIn(m.Data, from, seq); err != nil {
			return false, err
		}
	}
	t, err := r.n.TailLog(persist.Pos{Seq: seq})
	if err != nil {
		return false, err
	}
	defer t.Close()
	var ours []byte
	for ours == nil {
		at := t.Pos()
		b, _, err := t.Read(nil, 1)
		if err != nil || len(b) == 0 {
			return false, fmt.Errorf("cannot read this node's input %d: %v", seq, err)
		}
		if ours, err = inputIn(b, at, seq); err != nil {
			return false, err
		}
	}
	return theirs != nil && sameInput(ours, theirs), nil
}

// checkNewestBatch refuses a node whose newest batch the stream does not
// hold with the same root: a leader that signed it and stopped before
// publishing it, whose seq another leader then signed over.
func (r *Replicator) checkNewestBatch(ctx context.Context) error {
	seq, root, first, ok, err := r.n.NewestBatch()
	if err != nil || !ok {
		return err
	}
	mseq, err := r.messageHolding(ctx, first)
	if err != nil {
		return err
	}
	info, err := r.stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("cannot read the stream: %w", err)
	}
	// The batch follows its first record's input, within a few messages.
	for ; mseq > 0 && mseq <= info.State.LastSeq; mseq++ {
		m, _, _, err := r.messageOf(ctx, mseq)
		if err != nil {
			return err
		}
		var found *persist.Batch
		err = persist.EachFrame(m.Data, func(p []byte, side bool) error {
			if !side || found != nil {
				return nil
			}
			b, _, err := persist.DecodeSide(p)
			if b != nil && b.Seq >= seq {
				found = b
			}
			return err
		})
		if err != nil {
			return err
		}
		if found == nil {
			continue
		}
		if found.Seq != seq || found.Root != root {
			break
		}
		return nil
	}
	return fmt.Errorf("this node's attestation batch %d is not the stream's (it led, and stopped before publishing it): start it from an empty data directory", seq)
}

// inputIn returns the payload of input seq among frames, which start at
// place from; nil when they do not hold it.
func inputIn(frames []byte, from persist.Pos, seq uint64) ([]byte, error) {
	var out []byte
	at := from.Seq
	err := persist.EachFrame(frames, func(p []byte, side bool) error {
		if !side {
			if at == seq {
				out = slices.Clone(p)
			}
			at++
		}
		return nil
	})
	return out, err
}

// sameInput compares two encoded inputs as inputs (a follower's log holds
// its own encoding of the leader's).
func sameInput(a, b []byte) bool {
	x, err1 := persist.DecodeRecord(a)
	y, err2 := persist.DecodeRecord(b)
	return err1 == nil && err2 == nil && string(persist.AppendRecord(nil, &x)) == string(persist.AppendRecord(nil, &y))
}

// consume applies the stream's messages in order until ctx ends.
func (r *Replicator) consume(ctx context.Context, cons jetstream.Consumer) {
	defer r.wg.Done()
	defer close(r.followed)
	it, err := cons.Messages(jetstream.PullMaxBytes(consumeBytes))
	if err != nil {
		r.failFollow(fmt.Errorf("cannot consume the stream: %w", err))
		return
	}
	go func() { <-ctx.Done(); it.Stop() }()
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return
			}
			continue // the ordered consumer recreates itself
		}
		from, err := persist.ParsePos(msg.Headers().Get(hdrFrom))
		to, terr := persist.ParsePos(msg.Headers().Get(hdrTo))
		meta, merr := msg.Metadata()
		if err = errors.Join(err, terr, merr); err == nil {
			err = r.n.ApplyFrames(from, msg.Data())
		}
		if err != nil {
			r.failFollow(fmt.Errorf("the stream's message: %w", err))
			return
		}
		r.applied.Store(meta.Sequence.Stream)
		if p, err := r.n.DurablePos(); err == nil {
			r.durable.applied(meta.Sequence.Stream, to.Seq-1, p.Seq-1)
		}
		// The lag from the leader's reading of the frames (right after
		// their fdatasync); a message without it, from NATS' store.
		since := meta.Timestamp
		if us, err := strconv.ParseInt(msg.Headers().Get(hdrRead), 10, 64); err == nil {
			since = time.UnixMicro(us)
		}
		r.lag.observe(time.Since(since))
		behind := int64(0)
		if meta.NumPending > 0 {
			if end := r.streamEnd.Load(); end > 0 {
				behind = max(int64(end)-1-int64(r.n.Applied()), 1)
			} else {
				behind = 1
			}
		}
		r.n.SetLag(meta.Timestamp.UnixMilli(), behind)
	}
}

// failFollow stops a follower that cannot apply the stream.
func (r *Replicator) failFollow(err error) {
	if r.cfg.Logf != nil {
		r.cfg.Logf("FATAL: following stopped: %v", err)
	}
	r.fail(err)
}

// watchLease keeps the leader's URL for the node's refusals, the stream's
// end for the lag, and campaigns when nobody holds the lease.
func (r *Replicator) watchLease() {
	defer r.wg.Done()
	every := r.cfg.LeaseTTL / 3
	for {
		select {
		case <-r.quit:
			return
		case <-time.After(min(every, 200*time.Millisecond)):
		}
		if !r.n.Following() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		if end, _, err := r.streamEndPos(ctx); err == nil {
			r.streamEnd.Store(end.Seq)
		}
		e, err := r.kv.Get(ctx, leaseKey)
		cancel()
		switch {
		case err == nil:
			var l lease
			if json.Unmarshal(e.Value(), &l) == nil {
				r.n.SetLeader(l.URL)
			}
		case errors.Is(err, jetstream.ErrKeyNotFound):
			r.n.SetLeader("")
			if r.cfg.AutoPromote && r.campaign() {
				return
			}
		}
	}
}

// campaign tries to take the free lease; the winner takes over.
func (r *Replicator) campaign() bool {
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.LeaseTTL)
	defer cancel()
	val, _ := json.Marshal(lease{URL: r.cfg.Self})
	rev, err := r.kv.Create(ctx, leaseKey, val)
	if err != nil {
		return false // another follower won
	}
	if r.cfg.Logf != nil {
		r.cfg.Logf("the lease was free: taking over as leader")
	}
	if err := r.takeOver(rev, val); err != nil {
		r.failFollow(fmt.Errorf("cannot take over: %w", err))
	}
	return true
}

// Promote makes this follower the leader now (admin_promote): it takes
// the lease from whoever holds it, waits until a live leader must have
// seen that at its renewal and stopped, and takes over.
func (r *Replicator) Promote() error {
	if r.leading.Load() || !r.n.Following() {
		return node.ErrLeading
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	val, _ := json.Marshal(lease{URL: r.cfg.Self})
	rev, err := r.kv.Put(ctx, leaseKey, val)
	cancel()
	if err != nil {
		return fmt.Errorf("cannot take the lease: %w", err)
	}
	select {
	case <-r.quit:
		return node.ErrStopped
	case <-time.After(r.cfg.LeaseTTL/3 + 200*time.Millisecond):
	}
	return r.takeOver(rev, val)
}

// takeOver applies the stream to its end, promotes the node and publishes
// from there; the lease (revision rev) is renewed meanwhile.
func (r *Replicator) takeOver(rev uint64, val []byte) error {
	r.promoting.Lock()
	defer r.promoting.Unlock()
	if !r.n.Following() {
		return nil
	}
	r.wg.Add(1)
	go r.renew(rev, val)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	end, last, err := r.streamEndPos(ctx)
	cancel()
	if err != nil {
		return err
	}
	for r.applied.Load() < last {
		select {
		case <-r.followed:
			return errors.New("the consumer stopped before the stream's end")
		case <-r.quit:
			return node.ErrStopped
		case <-time.After(5 * time.Millisecond):
		}
	}
	r.follow()
	<-r.followed
	// Leading before the node admits writes: their acknowledgements wait
	// for the publisher (AfterAppend).
	r.startPublishing(end, last)
	if err := r.n.Promote(); err != nil {
		return err
	}
	r.n.SetLeader(r.cfg.Self)
	if r.cfg.Logf != nil {
		r.cfg.Logf("leading from input %d (stream message %d)", end.Seq, last)
	}
	return nil
}

// Status reports the replicator's state.
func (r *Replicator) Status() node.ReplicationStatus {
	s := node.ReplicationStatus{Role: "follower"}
	if r.leading.Load() {
		s.Role, s.Leader = "leader", r.cfg.Self
		r.mu.Lock()
		s.StreamSeq = r.lastSeq
		r.mu.Unlock()
		return s
	}
	s.Leader = r.n.LeaderURL()
	if p, err := r.n.DurablePos(); err == nil {
		s.StreamSeq = r.durable.through(p.Seq - 1)
	}
	s.LagInputs, s.LagMs = r.n.Lag()
	s.LagP50Ms, s.LagP99Ms = r.lag.quantiles()
	return s
}

// durableMsgs tells which stream message a follower holds durably: the
// messages applied and not yet durable in its log, with the seq of each
// one's last input, are kept until its log's durable end passes them.
type durableMsgs struct {
	mu      sync.Mutex
	pending []appliedMsg
	last    uint64 // the newest stream sequence whose inputs are durable
}

type appliedMsg struct{ stream, lastInput uint64 }

// applied records that stream message seq, whose last input is lastInput,
// was applied, and forgets those at or before input durable: pending holds
// only messages not yet durable, as many as the node's records in flight
// at most.
func (d *durableMsgs) applied(seq, lastInput, durable uint64) {
	d.mu.Lock()
	d.pending = append(d.pending, appliedMsg{seq, lastInput})
	d.mu.Unlock()
	d.through(durable)
}

// through returns the newest stream message all of whose inputs are at or
// before input durable, dropping the entries it passes.
func (d *durableMsgs) through(durable uint64) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := 0
	for i < len(d.pending) && d.pending[i].lastInput <= durable {
		d.last = d.pending[i].stream
		i++
	}
	d.pending = append(d.pending[:0], d.pending[i:]...)
	return d.last
}

// lagSamples is how many publication-to-application delays the quantiles
// are over.
const lagSamples = 4096

// lagStats keeps the newest lagSamples delays.
type lagStats struct {
	mu   sync.Mutex
	ring [lagSamples]time.Duration
	n    int
}

func (l *lagStats) observe(d time.Duration) {
	l.mu.Lock()
	l.ring[l.n%lagSamples] = d
	l.n++
	l.mu.Unlock()
}

func (l *lagStats) quantiles() (p50, p99 float64) {
	l.mu.Lock()
	s := slices.Clone(l.ring[:min(l.n, lagSamples)])
	l.mu.Unlock()
	if len(s) == 0 {
		return 0, 0
	}
	slices.Sort(s)
	ms := func(q float64) float64 { return float64(s[int(q*float64(len(s)-1))]) / float64(time.Millisecond) }
	return ms(0.5), ms(0.99)
}
