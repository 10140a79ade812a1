// Package replicate carries a leader's durable log to followers through
// NATS JetStream, and hands the lead over when the leader is gone
// (docs/scaling.md).
//
// The stream: one subject, one message per run of durable frames as the
// leader's log holds them (persist.Tail: inputs and the side records of
// what its committee signed), at most MessageBytes each, with the places
// before and after them in the headers Ledger-From and Ledger-To
// (persist.Pos, "seq.sides"). The leader publishes in log order, each
// message expecting the stream's last sequence to be the one it published
// before (a second publisher is refused: the fence) and carrying the
// place it starts at as its message id (a retry after a lost
// acknowledgement is a duplicate, not a second copy), and the time the
// publisher read it (Ledger-Read-Us: the replication lag runs from there). Only frames an
// fdatasync covered are read, so a follower never holds what its leader
// could lose.
//
// The lease: a key-value bucket whose entries live LeaseTTL after their
// last write. The leader creates the key "leader" (its URL) and renews it
// every LeaseTTL/3; a renewal that finds another revision, or none for a
// whole LeaseTTL, means another node may lead: the leader refuses writes
// from then on (node.Halt). A follower reads the key for the URL its
// refusals name; when the key is gone it campaigns (creates it; one
// wins), and the winner applies the stream to its end and promotes its
// node (node.Promote): sequence numbers, batch seqs and places continue
// from the stream's, and the other followers go on reading the same
// stream, now fed by the new leader.
//
// Invariants:
//
//   - Publication never reorders or drops: the publisher tails the log
//     file, not a queue, from the stream's last place; after a restart it
//     resumes there.
//   - With AckStream a client's acknowledgement, and the attestation of
//     what it acknowledges, wait until the stream holds the frames
//     (node.Config.AfterAppend): what a client was told is durable
//     survives the leader's loss. Without it, only the local fdatasync is
//     waited for (the frames follow within milliseconds; a failover may
//     lose the last of them).
//   - A follower applies messages in stream order from the one holding its
//     resume input (node.ResumeSeq); what it holds already is skipped.
package replicate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/persist"
)

// Defaults of Config.
const (
	DefaultStream   = "LEDGER"
	DefaultLeaseTTL = 3 * time.Second
	// MessageBytes bounds the frames of one message (a single larger
	// frame goes alone): well inside NATS' default 1 MiB payload.
	MessageBytes = 512 << 10
	leaseKey     = "leader"
	hdrFrom      = "Ledger-From"
	hdrTo        = "Ledger-To"
	// hdrRead is when the publisher read the frames (µs since the epoch,
	// the leader's clock): right after the fdatasync that made them durable.
	hdrRead = "Ledger-Read-Us"
)

// Config configures a Replicator.
type Config struct {
	// URL is the NATS server's (nats://host:port).
	URL string
	// Stream names the JetStream stream (DefaultStream when empty); its
	// subject is the lower-cased name + ".log", the lease bucket the name +
	// "_lease".
	Stream string
	// Replicas is the stream's replica count (a JetStream cluster's; 1
	// on a single server).
	Replicas int
	// LeaseTTL is how long the lease outlives the leader's last renewal
	// (DefaultLeaseTTL when zero).
	LeaseTTL time.Duration
	// AckStream makes a client's acknowledgement wait for the stream's
	// (see the package comment).
	AckStream bool
	// Self is this node's RPC URL: what the lease names while it leads.
	Self string
	// AutoPromote lets a follower campaign when the lease is gone;
	// without it only Promote (admin_promote) makes it lead.
	AutoPromote bool
	Logf        func(format string, args ...any)
}

// Replicator is a node's link to the stream, as leader or follower.
type Replicator struct {
	cfg     Config
	subject string
	msgMax  int // MessageBytes, or less if the server takes less
	nc      *nats.Conn
	js      jetstream.JetStream
	stream  jetstream.Stream
	kv      jetstream.KeyValue // the lease
	meta    jetstream.KeyValue // the leader's genesis
	n       *node.Node

	leading atomic.Bool
	wake    chan struct{}

	mu   sync.Mutex
	cond sync.Cond
	// published is the place after the frames the stream acknowledged;
	// lastSeq the stream sequence of the last message (the publisher's
	// fence); failed stops the publisher and the waiting acknowledgements.
	published persist.Pos
	lastSeq   uint64
	failed    error

	// applied is the stream sequence of the newest message the follower
	// applied; streamEnd the stream's last sequence as last read.
	applied   atomic.Uint64
	streamEnd atomic.Uint64
	// durable: the newest message applied whose inputs are durable here
	// (what Status reports: a read after it finds the message's inputs).
	durable durableMsgs
	lag     lagStats

	promoting sync.Mutex
	follow    context.CancelFunc // stops the consumer
	followed  chan struct{}      // closed when the consumer returned
	quit      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// New connects to cfg.URL and makes sure the stream and the lease bucket
// exist. It does not start anything: set the node's AfterAppend to
// AfterAppend, open the node, then Start.
func New(cfg Config) (*Replicator, error) {
	if cfg.Stream == "" {
		cfg.Stream = DefaultStream
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	nc, err := nats.Connect(cfg.URL, nats.Name("ledgerd"), nats.MaxReconnects(-1), nats.ReconnectWait(200*time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("cannot reach NATS at %s: %w", cfg.URL, err)
	}
	r := &Replicator{cfg: cfg, nc: nc, subject: lower(cfg.Stream) + ".log", wake: make(chan struct{}, 1), quit: make(chan struct{}),
		msgMax: int(min(MessageBytes, nc.MaxPayload()-4096))}
	r.cond.L = &r.mu
	if r.js, err = jetstream.New(nc); err != nil {
		nc.Close()
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.stream, err = r.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: cfg.Stream, Subjects: []string{r.subject}, Storage: jetstream.FileStorage,
		Replicas: cfg.Replicas, Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardNew,
		Duplicates: 2 * time.Minute,
	})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("cannot create the JetStream stream %s: %w", cfg.Stream, err)
	}
	r.kv, err = r.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: cfg.Stream + "_lease", TTL: cfg.LeaseTTL,
		Replicas: cfg.Replicas, History: 1})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("cannot create the lease bucket: %w", err)
	}
	r.meta, err = r.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: cfg.Stream + "_meta", Replicas: cfg.Replicas, History: 1})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("cannot create the metadata bucket: %w", err)
	}
	return r, nil
}

func lower(s string) string { return string(bytes.ToLower([]byte(s))) }

// Start links n: a following node consumes the stream, a leading one
// takes the lease and publishes. Both check that n runs under the genesis
// the stream's first leader stored (the stream holds inputs, not the
// genesis they apply to).
func (r *Replicator) Start(n *node.Node) error {
	r.n = n
	if err := r.checkGenesis(); err != nil {
		return err
	}
	if n.Following() {
		return r.startFollowing()
	}
	return r.lead(false)
}

// checkGenesis stores n's genesis description if the stream has none, and
// refuses a node whose genesis differs from the stored one.
func (r *Replicator) checkGenesis() error {
	ours, err := r.n.Genesis()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := r.meta.Create(ctx, "genesis", ours); err == nil {
		return nil
	}
	e, err := r.meta.Get(ctx, "genesis")
	if err != nil {
		return fmt.Errorf("cannot read the stream's genesis: %w", err)
	}
	if !bytes.Equal(e.Value(), ours) {
		return fmt.Errorf("this node's genesis differs from the one the stream's leader runs under: start it with the leader's genesis flags (--dev, --validators, …)")
	}
	return nil
}

// Close stops publishing, consuming and renewing; it does not release the
// lease (it lapses).
func (r *Replicator) Close() {
	r.closeOnce.Do(func() {
		close(r.quit)
		r.mu.Lock()
		if r.failed == nil {
			r.failed = node.ErrStopped
		}
		r.cond.Broadcast()
		r.mu.Unlock()
		if r.follow != nil {
			r.follow()
		}
		r.wg.Wait()
		r.nc.Close()
	})
}

// AfterAppend is the node's Config.AfterAppend: it wakes the publisher
// and, with AckStream, waits until the stream holds what is durable.
func (r *Replicator) AfterAppend() error {
	select {
	case r.wake <- struct{}{}:
	default:
	}
	if !r.cfg.AckStream || !r.leading.Load() {
		return nil
	}
	target, err := r.n.DurablePos()
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.published.Before(target) && r.failed == nil {
		r.cond.Wait()
	}
	return r.failed
}

// lease is the lease's value.
type lease struct {
	URL string `json:"url"`
}

// Leader returns the URL the lease names ("" when nobody holds it).
func (r *Replicator) Leader() string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	e, err := r.kv.Get(ctx, leaseKey)
	if err != nil {
		return ""
	}
	var l lease
	if json.Unmarshal(e.Value(), &l) != nil {
		return ""
	}
	return l.URL
}

// lead takes the lease (taken: already ours) and starts publishing from the
// stream's end, which must be a place of this node's log.
func (r *Replicator) lead(taken bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	val, _ := json.Marshal(lease{URL: r.cfg.Self})
	var rev uint64
	var err error
	if !taken {
		if rev, err = r.kv.Create(ctx, leaseKey, val); err != nil {
			e, gerr := r.kv.Get(ctx, leaseKey)
			if gerr != nil {
				return fmt.Errorf("cannot take the lease: %w", err)
			}
			var l lease
			json.Unmarshal(e.Value(), &l)
			if l.URL != r.cfg.Self {
				return fmt.Errorf("the node at %s leads (holds the lease): start this one with --follow", l.URL)
			}
			// Ours, from before a restart.
			if rev, err = r.kv.Update(ctx, leaseKey, val, e.Revision()); err != nil {
				return fmt.Errorf("cannot renew the lease: %w", err)
			}
		}
	} else if rev, err = r.kv.Put(ctx, leaseKey, val); err != nil {
		return fmt.Errorf("cannot write the lease: %w", err)
	}
	end, last, err := r.streamEndPos(ctx)
	if err != nil {
		return err
	}
	local, err := r.n.DurablePos()
	if err != nil {
		return err
	}
	if local.Before(end) {
		return fmt.Errorf("the stream holds the log up to %s, this node's only up to %s: start it with --follow", end, local)
	}
	if end.Seq > 1 {
		// The stream's newest input must be this log's: a stream of
		// another history is not continued.
		same, err := r.sameInputAt(ctx, end.Seq-1)
		if err != nil {
			return err
		}
		if !same {
			return fmt.Errorf("the stream's input %d is not this node's: it holds another history (another --nats.stream, or an empty one, is needed)", end.Seq-1)
		}
	}
	r.wg.Add(1)
	go r.renew(rev, val)
	r.startPublishing(end, last)
	return nil
}

// startPublishing leads from place end, the end of stream message last:
// from now on AfterAppend waits for the publisher it starts.
func (r *Replicator) startPublishing(end persist.Pos, last uint64) {
	r.mu.Lock()
	r.published, r.lastSeq = end, last
	r.mu.Unlock()
	r.leading.Store(true)
	r.wg.Add(1)
	go r.publisher(end)
}

// streamEndPos returns the place after the stream's last message and its
// sequence (the log's start and 0 for an empty stream).
func (r *Replicator) streamEndPos(ctx context.Context) (persist.Pos, uint64, error) {
	m, err := r.stream.GetLastMsgForSubject(ctx, r.subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return persist.Pos{Seq: 1}, 0, nil
	}
	if err != nil {
		return persist.Pos{}, 0, fmt.Errorf("cannot read the stream's end: %w", err)
	}
	to, err := persist.ParsePos(m.Header.Get(hdrTo))
	if err != nil {
		return persist.Pos{}, 0, fmt.Errorf("the stream's message %d: %w", m.Sequence, err)
	}
	return to, m.Sequence, nil
}

// publisher tails the log from place from and publishes it.
func (r *Replicator) publisher(from persist.Pos) {
	defer r.wg.Done()
	t, err := r.n.TailLog(from)
	if err != nil {
		r.fail(fmt.Errorf("cannot read the log to publish it: %w", err))
		return
	}
	defer t.Close()
	var buf []byte
	for {
		at := t.Pos()
		buf, _, err = t.Read(buf[:0], r.msgMax)
		if err != nil {
			r.fail(fmt.Errorf("cannot read the log to publish it: %w", err))
			return
		}
		if len(buf) == 0 {
			select {
			case <-r.quit:
				return
			case <-r.wake:
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if err := r.publish(at, t.Pos(), buf); err != nil {
			r.fail(err)
			return
		}
	}
}

// publish sends frames, which lie between places from and to, retrying
// until the stream acknowledges them or refuses them.
func (r *Replicator) publish(from, to persist.Pos, frames []byte) error {
	r.mu.Lock()
	expect := r.lastSeq
	r.mu.Unlock()
	msg := nats.NewMsg(r.subject)
	msg.Header.Set(hdrFrom, from.String())
	msg.Header.Set(hdrTo, to.String())
	msg.Header.Set(hdrRead, strconv.FormatInt(time.Now().UnixMicro(), 10))
	msg.Data = frames
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ack, err := r.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequence(expect), jetstream.WithMsgID(from.String()))
		cancel()
		var apiErr *jetstream.APIError
		switch {
		case err == nil:
			r.mu.Lock()
			r.published, r.lastSeq = to, ack.Sequence
			r.cond.Broadcast()
			r.mu.Unlock()
			return nil
		case errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant):
			return fmt.Errorf("another node published to the stream (it expected message %d last): this node no longer leads", expect)
		case errors.As(err, &apiErr):
			return fmt.Errorf("the stream refused the log from %s: %w", from, err)
		}
		select {
		case <-r.quit:
			return node.ErrStopped
		case <-time.After(100 * time.Millisecond): // NATS unreachable: again, the same id
		}
	}
}

// fail stops publishing and consuming and, while leading, the node's
// writes.
func (r *Replicator) fail(err error) {
	r.mu.Lock()
	first := r.failed == nil
	if first {
		r.failed = err
	}
	r.cond.Broadcast()
	r.mu.Unlock()
	if first && !errors.Is(err, node.ErrStopped) {
		r.n.Halt(err)
	}
}

// renew renews the lease every LeaseTTL/3 from revision rev; losing it
// fails the leader.
func (r *Replicator) renew(rev uint64, val []byte) {
	defer r.wg.Done()
	every := r.cfg.LeaseTTL / 3
	renewed := time.Now()
	for {
		select {
		case <-r.quit:
			return
		case <-time.After(every):
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		next, err := r.kv.Update(ctx, leaseKey, val, rev)
		cancel()
		var apiErr *jetstream.APIError
		switch {
		case err == nil:
			rev, renewed = next, time.Now()
		case errors.As(err, &apiErr) || errors.Is(err, jetstream.ErrKeyNotFound):
			r.fail(fmt.Errorf("the lease was taken over (%v): this node no longer leads", err))
			return
		case time.Since(renewed) > r.cfg.LeaseTTL:
			r.fail(fmt.Errorf("the lease could not be renewed for %v (%v): another node may lead", r.cfg.LeaseTTL, err))
			return
		}
	}
}
