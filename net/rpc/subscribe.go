package rpc

import (
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
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

func (w wsSubscriber) Send(head, body, tail []byte) bool { return w.c.Send(head, body, tail) }

// SendClose must not refuse: a close notification bypasses the backlog
// bound (the hub sends at most one per subscription).
func (w wsSubscriber) SendClose(msg []byte) { w.c.SendUnbounded(msg) }

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
// starts its fan-out goroutine; compat is the dispatcher's Config.Compat
// (newHeads numbers blocks as eth_blockNumber does). Close it before
// stopping the server, so subscribers get -32021.
func StartHub(n *node.Node, compat bool) *subs.Hub {
	hub := NewHub(n, compat)
	hub.Start()
	return hub
}

// NewHub is StartHub without the fan-out goroutine: the caller runs
// hub.Pump (tests that need the fan-out to fall behind).
func NewHub(n *node.Node, compat bool) *subs.Hub {
	blockUs := int64(1)
	if compat {
		blockUs = CompatBlockUs
	}
	hub := subs.New(subs.Config{FloorUs: n.LastTickUs(), Positions: n.Positions, Markets: n.Markets, BlockUs: blockUs})
	n.SetPublisher(&Publisher{Hub: hub, Node: n})
	return hub
}

// Publisher adapts the hub to the node: ticks pass through; receipts are
// encoded here, where the receipt and log encoders live.
type Publisher struct {
	Hub  *subs.Hub
	Node *node.Node
}

var _ node.Publisher = (*Publisher)(nil)

// PublishTick implements node.Publisher.
func (p *Publisher) PublishTick(t *subs.Tick) {
	p.Hub.PublishTick(t)
	p.Hub.PublishPastPerfectTime(p.Node.PastPerfectTime())
}

// IdleSlot implements node.Publisher.
func (p *Publisher) IdleSlot(t subs.Tick, pastPerfectUs int64) {
	p.Hub.PublishIdleSlot(t)
	p.Hub.PublishPastPerfectTime(pastPerfectUs)
}

// Attested implements node.Publisher.
func (p *Publisher) Attested(rs []node.Receipt) {
	out := make([]subs.Receipt, len(rs))
	for i := range rs {
		r := &rs[i]
		sr := &out[i]
		// The svc_ receipt channels keep the spec's shapes: compat mode is
		// for the eth_ decoders of client libraries.
		sr.JSON = appendReceipt(nil, r, false)
		sr.From, sr.To, sr.HasTo = clob.Address(r.Rec.Tx.From), clob.Address(r.Rec.Tx.To), r.Rec.Tx.HasTo
		sr.TimeUs = r.Batch.Timestamp
		sr.Attestations = len(r.Batch.Sigs)
		sr.Logs = make([]subs.Log, len(r.Rec.Logs))
		for j := range r.Rec.Logs {
			l := &r.Rec.Logs[j]
			topics := make([]clob.Hash, len(l.Topics))
			for k, t := range l.Topics {
				topics[k] = clob.Hash(t)
			}
			sr.Logs[j] = subs.Log{Address: clob.Address(l.Address), Topics: topics,
				BlockNumber: uint64(r.Batch.Timestamp / 1_000_000), JSON: appendLog(nil, r, j)}
		}
	}
	p.Hub.PublishReceipts(out)
	p.Hub.PublishPastPerfectTime(p.Node.PastPerfectTime())
}
