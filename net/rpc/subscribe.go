package rpc

import (
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/tickrec"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/server"
	"github.com/ledgervenue/node/net/subs"
)

// Subscriptions: eth_subscribe / eth_unsubscribe over WebSocket, served by
// the hub (net/subs). The node publishes durable ticks and attested
// receipts to the hub through Publisher; the hub encodes each payload once
// and sends it to every matching subscriber's connection.

// wsSubscriber is a WebSocket connection as the hub's subs.Conn. It is a
// comparable value (one pointer), so the hub can key on it.
type wsSubscriber struct{ c *server.WSConn }

var _ subs.Conn = wsSubscriber{}

func (w wsSubscriber) Send(head, body, tail []byte) bool {
	return w.c.SendAfter(wsStateOf(w.c).dl.delay(kindNotifications, w.c), head, body, tail)
}

// SendClose must not refuse: a close notification is owed, past the backlog
// bound within SendOwed's headroom (the hub sends at most one per subscription).
func (w wsSubscriber) SendClose(msg []byte) { w.c.SendOwed(msg) }

// RemoteIP keys the hub's subscriptions per address.
func (w wsSubscriber) RemoteIP() netip.Addr { return w.c.RemoteIP() }

// subscribe answers eth_subscribe; the subscription starts once the answer
// is written (ServeWS activates it).
func (c *call) subscribe(dst []byte) ([]byte, *jsonrpc.Error) {
	if c.ws == nil || c.s.cfg.Hub == nil {
		return dst, errNoSubscriptions
	}
	typ := c.req.Param(0)
	if typ == nil {
		return dst, missingParam(0)
	}
	name, err := typ.StringBytes()
	if err != nil {
		return dst, jsonrpc.InvalidParams("subscription type must be a string")
	}
	id, jerr := c.s.cfg.Hub.Subscribe(wsSubscriber{c.ws}, name, c.req.Param(1))
	if jerr != nil {
		return dst, jerr
	}
	c.sc.subscribed = append(c.sc.subscribed, id)
	c.tieSubscription(id) // lab_delivery.go
	return jsonrpc.AppendString(dst, id), nil
}

// unsubscribe answers eth_unsubscribe: true if the subscription was open on
// this connection, false otherwise (also after a server-initiated close).
func (c *call) unsubscribe(dst []byte) ([]byte, *jsonrpc.Error) {
	if c.ws == nil || c.s.cfg.Hub == nil {
		return dst, errNoSubscriptions
	}
	v := c.req.Param(0)
	if v == nil {
		return dst, missingParam(0)
	}
	id, err := v.StringBytes()
	if err != nil {
		return dst, jsonrpc.InvalidParams("subscription id must be a string")
	}
	if c.s.cfg.Hub.Unsubscribe(wsSubscriber{c.ws}, string(id)) {
		return append(dst, "true"...), nil
	}
	return append(dst, "false"...), nil
}

// activate starts the subscriptions a message created, after its answer
// was handed to the connection.
func (s *Service) activate(c *server.WSConn, sc *scratch) {
	for _, id := range sc.subscribed {
		s.cfg.Hub.Activate(wsSubscriber{c}, id)
	}
	sc.subscribed = sc.subscribed[:0]
}

// StartHub creates the subscription hub for n, makes it n's publisher and
// starts its fan-out goroutine; compat and prefix are the dispatcher's
// Config.Compat (newHeads numbers blocks as eth_blockNumber does) and
// Config.Prefix (the receipts' and logs' metadata key). Close it before
// stopping the server, so subscribers get -32021.
func StartHub(n *node.Node, compat bool, prefix Prefix) *subs.Hub {
	hub := NewHub(n, compat, prefix)
	hub.Start()
	return hub
}

// NewHub is StartHub without the fan-out goroutine: the caller runs
// hub.Pump (tests that need the fan-out to fall behind). The hub starts
// with what the node kept from before a restart: its newest published
// ticks (the delta channels' replay buffer) and the newest receipts of its
// history (the receipt channels' since). Either that cannot be restored is
// logged and left out: the hub then starts without it.
func NewHub(n *node.Node, compat bool, prefix Prefix) *subs.Hub {
	blockUs := int64(1)
	if compat {
		blockUs = CompatBlockUs
	}
	start := time.Now()
	// Set before the history is read, so no receipt attested meanwhile is
	// missed: the publisher queues them until refill.
	p := &Publisher{Node: n, shape: newShape(false, prefix), refilling: true}
	var preloaded int
	n.SetPublisherWith(func(ticks []*tickrec.Tick, floorUs int64, err error) node.Publisher {
		p.Hub = subs.New(subs.Config{ReplayTicks: node.ReplayTicks, FloorUs: floorUs, Positions: n.Positions,
			Triggers: n.Triggers, Markets: n.Markets, BlockUs: blockUs})
		if err == nil {
			err = p.Hub.Preload(ticks)
		}
		if err != nil {
			n.Logf("subscriptions: the replay buffer starts empty: %v", err)
		} else {
			preloaded = len(ticks)
		}
		return p
	})
	receipts, err := p.refill()
	if err != nil {
		n.Logf("subscriptions: the receipt channels' since reaches back only to this start: %v", err)
	}
	if preloaded > 0 || receipts > 0 {
		n.Logf("subscriptions: %d ticks and %d receipts restored for since in %v", preloaded, receipts,
			time.Since(start).Round(time.Millisecond))
	}
	return p.Hub
}

// Publisher adapts the hub to the node: ticks pass through; receipts go
// with a body (receiptBody) that encodes them, on demand, with the receipt
// and log encoders that live here.
type Publisher struct {
	Hub  *subs.Hub
	Node *node.Node
	// shape is the receipts' and logs': the spec's, with Config.Prefix's
	// metadata key (the receipt channels are svc_ channels; compat mode is
	// for the eth_ decoders of client libraries).
	shape shape

	// mu guards refilling and queued: while NewHub refills the hub's
	// receipts ring from the history, Attested queues what it gets, so the
	// ring stays in attestation order.
	mu        sync.Mutex
	refilling bool
	queued    []node.Receipt
}

var _ node.Publisher = (*Publisher)(nil)

// PublishTick implements node.Publisher. A tick the hub refuses (its time
// not after the last one's) is logged and left out of the subscriptions.
func (p *Publisher) PublishTick(t *tickrec.Tick) {
	if err := p.Hub.PublishTick(t); err != nil {
		p.Node.Logf("subscriptions: %v", err)
	}
	p.Hub.PublishPastPerfectTime(p.Node.PastPerfectTime())
}

// IdleSlot implements node.Publisher.
func (p *Publisher) IdleSlot(t tickrec.Tick, pastPerfectUs int64) {
	p.Hub.PublishIdleSlot(t)
	p.Hub.PublishPastPerfectTime(pastPerfectUs)
}

// WatchedPositions implements node.Publisher.
func (p *Publisher) WatchedPositions(dst []clob.Address) []clob.Address {
	return p.Hub.WatchedPositions(dst)
}

// Attested implements node.Publisher.
func (p *Publisher) Attested(rs []node.Receipt) {
	p.mu.Lock()
	queue := p.refilling
	if queue {
		p.queued = append(p.queued, rs...)
	}
	p.mu.Unlock()
	if !queue {
		p.Hub.PublishReceipts(p.hubReceipts(rs, true))
	}
	p.Hub.PublishPastPerfectTime(p.Node.PastPerfectTime())
}

// Reverted implements node.Publisher: the hub ends the subscriptions to
// the history and starts over from the node's new history, as a hub of a
// restarted node would (NewHub). The attester is stopped meanwhile: no
// receipt to queue.
func (p *Publisher) Reverted(ticks []*tickrec.Tick, floorUs int64, err error) {
	n := p.Node
	if err != nil {
		n.Logf("subscriptions: the replay buffer starts empty after the revert: %v", err)
	}
	rs, rcptFloorUs, rerr := newestReceipts(n, subs.ReceiptsRingSize)
	if rerr != nil {
		n.Logf("subscriptions: the receipt channels' since reaches back only to the revert: %v", rerr)
		rs, rcptFloorUs = nil, -1
	}
	if err := p.Hub.Reset(floorUs, ticks, p.hubReceipts(rs, false), rcptFloorUs); err != nil {
		n.Logf("subscriptions: after the revert: %v", err)
	}
}

// refill hands the hub the newest receipts of the node's history, then
// those Attested queued meanwhile, and stops the queueing; it returns how
// many it handed. On an error the queued receipts are published as they
// would have been.
func (p *Publisher) refill() (int, error) {
	rs, floorUs, err := newestReceipts(p.Node, subs.ReceiptsRingSize)
	// Encoded before taking mu, which the attester waits for. No logs: the
	// hub counts preloaded receipts as fanned out, and only the receipt
	// channels replay them.
	preload := p.hubReceipts(rs, false)
	p.mu.Lock()
	defer p.mu.Unlock()
	queued := p.queued
	p.refilling, p.queued = false, nil
	if err == nil {
		// The history was read after SetPublisher: it may hold the first
		// queued ones already. Records are attested in log order.
		if n := len(rs); n > 0 {
			for len(queued) > 0 && queued[0].Rec.Seq <= rs[n-1].Rec.Seq {
				queued = queued[1:]
			}
		}
		preload = append(preload, p.hubReceipts(queued, false)...)
		if err = p.Hub.PreloadReceipts(preload, floorUs); err == nil {
			return len(preload), nil
		}
	}
	p.Hub.PublishReceipts(p.hubReceipts(queued, true))
	return 0, err
}

// newestReceipts returns the newest keep receipts of n's history, oldest
// first, and the floor subs.Hub.PreloadReceipts takes with them: the
// attestation time of the newest receipt before them (-1 when they start
// at the ledger's first receipt).
func newestReceipts(n *node.Node, keep int) ([]node.Receipt, int64, error) {
	q := node.ListQuery{After: -1, NewestFirst: true}
	var rs []node.Receipt
	for len(rs) <= keep { // one more than kept: the floor
		q.Limit = min(node.ListLimitMax, keep+1-len(rs))
		page, next, err := n.ListReceipts(&q)
		if err != nil {
			return nil, 0, fmt.Errorf("reading the newest receipts: %w", err)
		}
		rs = append(rs, page...)
		if next < 0 {
			break
		}
		q.After = next
	}
	slices.Reverse(rs)
	floorUs := int64(-1)
	switch {
	case len(rs) > keep:
		floorUs, rs = rs[0].Batch.Timestamp, rs[1:]
	case len(rs) > 0 && (rs[0].Batch.Seq != 1 || rs[0].Index != 0):
		// Not the first receipt: retention pruned the older ones, which
		// have no later attestation time than it.
		floorUs = rs[0].Batch.Timestamp
	}
	return rs, floorUs, nil
}

// hubReceipts hands attested receipts to the hub. Nothing is encoded
// here: the hub asks each receipt's body for JSON only when a subscriber is
// to get it (receiptBody). withLogs is false for the receipts preloaded
// after a restart: only the receipt channels replay them, so their logs
// are never fanned out.
func (p *Publisher) hubReceipts(rs []node.Receipt, withLogs bool) []subs.Receipt {
	out := make([]subs.Receipt, len(rs))
	bodies := make([]receiptBody, len(rs))
	for i := range rs {
		r := &rs[i]
		bodies[i] = receiptBody{r: *r, withLogs: withLogs, shape: p.shape}
		out[i] = subs.Receipt{From: clob.Address(r.Rec.Tx.From), To: clob.Address(r.Rec.Tx.To), HasTo: r.Rec.Tx.HasTo,
			TimeUs: r.Batch.Timestamp, Attestations: len(r.Batch.Sigs), Body: &bodies[i]}
	}
	return out
}

// receiptBody encodes one attested receipt for the hub (subs.ReceiptBody)
// in the Publisher's shape.
type receiptBody struct {
	r        node.Receipt
	withLogs bool
	shape    shape
}

func (b *receiptBody) AppendReceipt(dst []byte) []byte { return appendReceipt(dst, &b.r, b.shape) }

func (b *receiptBody) LogCount() int {
	if !b.withLogs {
		return 0
	}
	return len(b.r.Rec.Logs)
}

func (b *receiptBody) Log(i int, topics []clob.Hash) subs.Log {
	l := &b.r.Rec.Logs[i]
	for _, t := range l.Topics {
		topics = append(topics, clob.Hash(t))
	}
	return subs.Log{Address: clob.Address(l.Address), Topics: topics, BlockNumber: uint64(b.r.Batch.Timestamp / 1_000_000)}
}

func (b *receiptBody) AppendLog(dst []byte, i int) []byte { return appendLog(dst, &b.r, i, b.shape) }
