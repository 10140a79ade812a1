package rpc

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/net/server"
	"github.com/ledgervenue/node/net/ws"
	"github.com/valyala/fastjson"
)

// The lab's delivery faults (docs/lab.md, "Delivery faults"): latency
// rules (lab_latency.go), subscriptions dropped (-32022) or lagged
// (-32020) on demand, and WebSocket connections closed. They change only
// what reaches a client and when, never the ledger, so they are not
// logged inputs; what is drawn is seeded.
//
// Off, a delivery costs one atomic load (delivery.rules) in the
// dispatcher and one in the transport (the connection's delay line).
//
// Connections. Every connection has an id (server.Response.ConnID,
// WSConn.ID), given as a quantity. A client learns its own with
// lab_connectionId, or as the entry with "self" in lab_connections, which
// lists the WebSocket connections. A WebSocket connection is tied to an
// account (the "account" scope of rules, lab_closeConnection) by each of
// its subscriptions naming it (account, bidder, bidders), and by each
// transaction it sends signed by it once the lab is armed (any lab_
// delivery call was made). At most TiesPerConnMax accounts per connection;
// the ties last as long as the connection. HTTP requests have no ties.

// TiesPerConnMax bounds the accounts one connection is tied to; later
// ones are not tied.
const TiesPerConnMax = 16

// delivery is a Service's delivery-fault state.
type delivery struct {
	// rules is nil while no latency rule is in force: the hot paths' one
	// load.
	rules atomic.Pointer[ruleSet]
	// armed: a lab_ delivery method was called; senders are tied to their
	// connections from then on.
	armed atomic.Bool

	mu     sync.Mutex // guards nextID, the rules' replacement and conns
	nextID uint64
	conns  map[uint64]*server.WSConn // open WebSocket connections by id

	delayed [kinds]atomic.Uint64 // messages given a delay > 0
	dropped atomic.Uint64        // subscriptions closed -32022 by the lab
	lagged  atomic.Uint64        // subscriptions given a lag
	closed  atomic.Uint64        // connections closed by the lab
}

// connTies are the accounts a connection is tied to.
type connTies struct {
	mu       sync.Mutex
	accounts []core.Address // at most TiesPerConnMax
}

func (t *connTies) add(a core.Address) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.accounts) < TiesPerConnMax && !slices.Contains(t.accounts, a) {
		t.accounts = append(t.accounts, a)
	}
}

func (t *connTies) has(a core.Address) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Contains(t.accounts, a)
}

func (t *connTies) list() []core.Address {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.accounts)
}

// delay draws the delay of a message of kind k on c.
func (d *delivery) delay(k int, c *server.WSConn) time.Duration {
	rs := d.rules.Load()
	if rs == nil {
		return 0
	}
	return d.count(k, (*rs).draw(k, c.ID(), &wsStateOf(c).ties))
}

// delayHTTP sets the delay of the answer to an HTTP request.
func (d *delivery) delayHTTP(w *server.Response) {
	if rs := d.rules.Load(); rs != nil {
		w.Delay(d.count(kindAnswers, (*rs).draw(kindAnswers, w.ConnID(), nil)))
	}
}

func (d *delivery) count(k int, dl time.Duration) time.Duration {
	if dl > 0 {
		d.delayed[k].Add(1)
	}
	return dl
}

func (d *delivery) open(c *server.WSConn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conns == nil {
		d.conns = make(map[uint64]*server.WSConn)
	}
	d.conns[c.ID()] = c
}

func (d *delivery) gone(c *server.WSConn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.conns, c.ID())
}

// tieSender ties a WebSocket connection to the signer of a transaction it
// sent, once the lab is armed.
func (c *call) tieSender(from core.Address) {
	if c.ws != nil && c.s.dl.armed.Load() {
		wsStateOf(c.ws).ties.add(from)
	}
}

// tieSubscription ties c's connection to the accounts subscription id
// names.
func (c *call) tieSubscription(id string) {
	st := wsStateOf(c.ws)
	for _, a := range c.s.cfg.Hub.SubscriptionAccounts(id, nil) {
		st.ties.add(core.Address(a))
	}
}

// selfID is the id of the connection the call came on; 0 on a worker
// over HTTP, where the request left its connection.
func (c *call) selfID() uint64 {
	switch {
	case c.ws != nil:
		return c.ws.ID()
	case c.w != nil:
		return c.w.ConnID()
	}
	return 0
}

var (
	errLabNoHub   = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found", Data: []byte(`"the node serves no subscriptions"`)}
	errLatencyMax = jsonrpc.LimitExceeded("too many latency rules", LatencyRulesMax)
	errTarget     = func(m string) *jsonrpc.Error {
		return jsonrpc.InvalidParams(m + `: want {"subscription":"0x…"} or {"account":"0x…"}`)
	}
)

// labDelivery serves the lab_ delivery methods.
func (c *call) labDelivery(dst []byte) ([]byte, *jsonrpc.Error) {
	d := &c.s.dl
	d.armed.Store(true)
	switch string(c.req.Method) {
	case "lab_setLatency":
		return c.setLatency(dst)
	case "lab_clearLatency":
		return c.clearLatency(dst)
	case "lab_latency":
		dst = append(dst, '[')
		if rs := d.rules.Load(); rs != nil {
			for i, r := range *rs {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = r.appendJSON(dst)
			}
		}
		return append(dst, ']'), nil
	case "lab_connectionId":
		if id := c.selfID(); id != 0 {
			return jsonrpc.AppendQuantity(dst, id), nil
		}
		return append(dst, "null"...), nil
	case "lab_connections":
		return c.connections(dst), nil
	case "lab_dropSubscription":
		return c.dropSubscription(dst)
	case "lab_lagSubscription":
		return c.lagSubscription(dst)
	}
	return c.closeConnection(dst)
}

func (c *call) setLatency(dst []byte) ([]byte, *jsonrpc.Error) {
	r, err := parseRule(c.req.Param(0), c.selfID())
	if err != nil {
		return dst, err
	}
	d := &c.s.dl
	d.mu.Lock()
	defer d.mu.Unlock()
	var old ruleSet
	if rs := d.rules.Load(); rs != nil {
		old = *rs
	}
	if len(old) >= LatencyRulesMax {
		return dst, errLatencyMax
	}
	d.nextID++
	r.id = d.nextID
	rs := append(slices.Clone(old), r)
	d.rules.Store(&rs)
	return jsonrpc.AppendQuantity(dst, r.id), nil
}

// clearLatency removes one rule (false: none had that id) or all.
func (c *call) clearLatency(dst []byte) ([]byte, *jsonrpc.Error) {
	var id uint64
	v := c.req.Param(0)
	all := v == nil || v.Type() == fastjson.TypeNull
	if !all {
		var err *jsonrpc.Error
		if id, err = quantityField("id", v); err != nil {
			return dst, err
		}
	}
	d := &c.s.dl
	d.mu.Lock()
	defer d.mu.Unlock()
	rs := d.rules.Load()
	if all || rs == nil {
		d.rules.Store(nil)
		return append(dst, strconv.FormatBool(all)...), nil
	}
	kept := slices.DeleteFunc(slices.Clone(*rs), func(r *latencyRule) bool { return r.id == id })
	if len(kept) == len(*rs) {
		return append(dst, "false"...), nil
	}
	if len(kept) == 0 {
		d.rules.Store(nil)
	} else {
		d.rules.Store(&kept)
	}
	return append(dst, "true"...), nil
}

// connections lists the WebSocket connections, ascending id.
func (c *call) connections(dst []byte) []byte {
	d := &c.s.dl
	d.mu.Lock()
	conns := make([]*server.WSConn, 0, len(d.conns))
	for _, w := range d.conns {
		conns = append(conns, w)
	}
	d.mu.Unlock()
	slices.SortFunc(conns, func(a, b *server.WSConn) int { return int(a.ID()) - int(b.ID()) })
	self := c.selfID()
	dst = append(dst, '[')
	for i, w := range conns {
		if i > 0 {
			dst = append(dst, ',')
		}
		subsOpen := 0
		if h := c.s.cfg.Hub; h != nil {
			_, subsOpen = h.Accounts(wsSubscriber{w}, nil)
		}
		dst = jsonrpc.AppendQuantity(append(dst, `{"id":`...), w.ID())
		dst = jsonrpc.AppendString(append(dst, `,"transport":"ws","remote":`...), w.RemoteAddr())
		dst = strconv.AppendInt(append(dst, `,"subscriptions":`...), int64(subsOpen), 10)
		dst = append(dst, `,"accounts":[`...)
		for j, a := range wsStateOf(w).ties.list() {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = jsonrpc.AppendData(dst, a[:])
		}
		dst = append(dst, `],"self":`...)
		dst = strconv.AppendBool(dst, w.ID() == self)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// target decodes {"subscription"|"connection": id} or {"account": a}.
func target(v *fastjson.Value, idKey string, extra ...string) (id *fastjson.Value, acct core.Address, byAcct bool, err *jsonrpc.Error) {
	method := "lab_dropSubscription"
	if idKey == "connection" {
		method = "lab_closeConnection"
	}
	if v == nil || v.Type() != fastjson.TypeObject {
		return nil, acct, false, errTarget(method)
	}
	if bad := unknownKey(v.GetObject(), method, "", append(extra, idKey, "account")...); bad != nil {
		return nil, acct, false, bad
	}
	iv, av := v.Get(idKey), v.Get("account")
	switch {
	case (iv == nil) == (av == nil):
		return nil, acct, false, jsonrpc.InvalidParams(method + ": give exactly one of " + idKey + " and account")
	case av != nil:
		a, err := jsonrpc.ParseAddress(av)
		if err != nil {
			return nil, acct, false, jsonrpc.InvalidParams("account: want a 20-byte hex address")
		}
		return nil, core.Address(a), true, nil
	}
	return iv, acct, false, nil
}

func (c *call) dropSubscription(dst []byte) ([]byte, *jsonrpc.Error) {
	h := c.s.cfg.Hub
	if h == nil {
		return dst, errLabNoHub
	}
	idv, acct, byAcct, err := target(c.req.Param(0), "subscription")
	if err != nil {
		return dst, err
	}
	n := 0
	if byAcct {
		n = h.DropAccount(clob.Address(acct))
	} else {
		id, err := subscriptionID(idv)
		if err != nil {
			return dst, err
		}
		if h.DropSubscription(id) {
			n = 1
		}
	}
	c.s.dl.dropped.Add(uint64(n))
	return strconv.AppendInt(dst, int64(n), 10), nil
}

func (c *call) lagSubscription(dst []byte) ([]byte, *jsonrpc.Error) {
	h := c.s.cfg.Hub
	if h == nil {
		return dst, errLabNoHub
	}
	v := c.req.Param(0)
	idv, _, byAcct, err := target(v, "subscription", "ticks")
	if err != nil {
		return dst, err
	}
	if byAcct {
		return dst, jsonrpc.InvalidParams("lab_lagSubscription: give subscription, not account")
	}
	id, err := subscriptionID(idv)
	if err != nil {
		return dst, err
	}
	ticks, err := quantityField("ticks", v.Get("ticks"))
	if err != nil {
		return dst, err
	}
	n, err := h.Lag(id, ticks)
	if err != nil {
		return dst, err
	}
	c.s.dl.lagged.Add(uint64(n))
	return strconv.AppendInt(dst, int64(n), 10), nil
}

// closeConnection closes the WebSocket connection(s) named: a close frame
// 1001 after what is already queued, or with abrupt the TCP connection at
// once.
func (c *call) closeConnection(dst []byte) ([]byte, *jsonrpc.Error) {
	v := c.req.Param(0)
	idv, acct, byAcct, err := target(v, "connection", "abrupt")
	if err != nil {
		return dst, err
	}
	abrupt := false
	if a := v.Get("abrupt"); a != nil {
		if abrupt, err = boolField("abrupt", a); err != nil {
			return dst, err
		}
	}
	var connID uint64
	if !byAcct {
		if connID, err = quantityField("connection", idv); err != nil {
			return dst, err
		}
	}
	d := &c.s.dl
	d.mu.Lock()
	var hit []*server.WSConn
	for cid, w := range d.conns {
		if byAcct && wsStateOf(w).ties.has(acct) || !byAcct && cid == connID {
			hit = append(hit, w)
		}
	}
	d.mu.Unlock()
	for _, w := range hit {
		if abrupt {
			w.Drop()
		} else {
			w.Close(ws.CloseGoingAway, "closed by lab_closeConnection")
		}
	}
	d.closed.Add(uint64(len(hit)))
	return strconv.AppendInt(dst, int64(len(hit)), 10), nil
}

func subscriptionID(v *fastjson.Value) (string, *jsonrpc.Error) {
	s, err := v.StringBytes()
	if err != nil {
		return "", jsonrpc.InvalidParams(`subscription: want the id string "0x…"`)
	}
	return string(s), nil
}

func boolField(name string, v *fastjson.Value) (bool, *jsonrpc.Error) {
	switch v.Type() {
	case fastjson.TypeTrue:
		return true, nil
	case fastjson.TypeFalse:
		return false, nil
	}
	return false, jsonrpc.InvalidParams(name + ": want true or false")
}

// appendMetrics appends the delivery faults' fields of svc_metrics' lab
// object (appendLabMetrics).
func (d *delivery) appendMetrics(dst []byte) []byte {
	st := d.Stats()
	dst = strconv.AppendInt(append(dst, `"latency_rules":`...), int64(st.Rules), 10)
	dst = strconv.AppendUint(append(dst, `,"delayed_answers":`...), st.DelayedAnswers, 10)
	dst = strconv.AppendUint(append(dst, `,"delayed_notifications":`...), st.DelayedNotifications, 10)
	dst = strconv.AppendUint(append(dst, `,"dropped_subscriptions":`...), st.Dropped, 10)
	dst = strconv.AppendUint(append(dst, `,"lagged_subscriptions":`...), st.Lagged, 10)
	return strconv.AppendUint(append(dst, `,"closed_connections":`...), st.Closed, 10)
}

// LabDeliveryStats are the delivery faults' counters (svc_metrics' lab
// object, the ledgerd_lab_* metrics).
type LabDeliveryStats struct {
	Rules                                int
	DelayedAnswers, DelayedNotifications uint64
	Dropped, Lagged, Closed              uint64
}

// LabDelivery returns the delivery faults' counters.
func (s *Service) LabDelivery() LabDeliveryStats { return s.dl.Stats() }

func (d *delivery) Stats() LabDeliveryStats {
	st := LabDeliveryStats{DelayedAnswers: d.delayed[kindAnswers].Load(),
		DelayedNotifications: d.delayed[kindNotifications].Load(),
		Dropped:              d.dropped.Load(), Lagged: d.lagged.Load(), Closed: d.closed.Load()}
	if rs := d.rules.Load(); rs != nil {
		st.Rules = len(*rs)
	}
	return st
}
