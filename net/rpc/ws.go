package rpc

import (
	"bytes"
	"net/netip"
	"sync/atomic"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/net/http1"
	"github.com/ledgervenue/node/net/server"
)

// JSON-RPC over WebSocket: every method works as over HTTP, batches
// included; eth_subscribe and eth_unsubscribe work only here. A message
// without writes is answered on the event loop, in the read's write. A
// lone eth_sendRawTransaction is answered once durable, through the same
// deferred path as over HTTP; any other message with writes runs on a
// worker (workers.go). Both answer with WSConn.Send when done, so answers
// to different messages may come back in a different order than the
// requests (JSON-RPC matches them by id). At most Config.WSInFlightMax
// messages of a connection wait for such an answer; beyond that, or when
// the node's queue is full, a message is answered at once with -32005.
// Admin methods need the Authorization header on the upgrade request.

var _ server.WSHandler = (*Service)(nil)

// wsState is the per-connection state of the dispatcher. Set once in
// WSOpen; its atomics are shared with the workers and the node's writer.
type wsState struct {
	admin bool
	ip    netip.Addr // the peer's (origin.ip), read once at the upgrade
	// inFlight counts the messages whose answer is owed later.
	inFlight atomic.Int32
	// dl is the service's delivery faults; ties the accounts the
	// connection is tied to (lab_delivery.go).
	dl   *delivery
	ties connTies
}

func wsStateOf(c *server.WSConn) *wsState { return c.Context.(*wsState) }

// acquire takes an in-flight slot, or reports false when max are taken.
func (st *wsState) acquire(max int) bool {
	if st.inFlight.Add(1) > int32(max) {
		st.inFlight.Add(-1)
		return false
	}
	return true
}

func (st *wsState) release() { st.inFlight.Add(-1) }

// WSOpen implements server.WSHandler.
func (s *Service) WSOpen(c *server.WSConn, req *http1.Request) {
	c.Context = &wsState{admin: s.authorized(req.Header("Authorization")), ip: c.RemoteIP(), dl: &s.dl}
	s.stats.wsConns.Add(1)
	s.dl.open(c)
}

// WSClosed implements server.WSHandler.
func (s *Service) WSClosed(c *server.WSConn) {
	s.stats.wsConns.Add(-1)
	s.dl.gone(c)
	if s.cfg.Hub != nil {
		s.cfg.Hub.DropConn(wsSubscriber{c})
	}
}

// ServeWS implements server.WSHandler.
func (s *Service) ServeWS(c *server.WSConn, msg []byte) {
	st := wsStateOf(c)
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	reqs, batch, perr := sc.parse(msg)
	if perr != nil {
		s.stats.count(nil, true, true)
		sc.out = jsonrpc.AppendError(sc.out[:0], nil, perr)
		c.ReplyAfter(s.dl.delay(kindAnswers, c), sc.out)
		return
	}
	lone := isLoneDeferred(reqs, batch)
	pooled := !lone && s.needsWorker(reqs, st.admin)
	var refusal *jsonrpc.Error
	switch {
	case (lone || pooled) && !st.acquire(s.cfg.WSInFlightMax):
		refusal = s.errInFlight
	case pooled:
		if refusal = s.reserve(len(msg)); refusal == nil {
			s.enqueue(job{body: bytes.Clone(msg), admin: st.admin, ip: st.ip, ws: c})
			return
		}
		st.release()
	}
	sc.deferred = false
	sc.out = s.runAll(sc, reqs, batch, origin{admin: st.admin, ws: c, lone: lone, ip: st.ip}, refusal, sc.out[:0])
	if lone && refusal == nil && !sc.deferred { // refused before the sequencer: answered now
		st.release()
	}
	if len(sc.out) > 0 {
		c.ReplyAfter(s.dl.delay(kindAnswers, c), sc.out)
	}
	s.activate(c, sc)
	if cap(sc.out) > scratchRetainMax {
		sc.out = nil
	}
}

// wsOwed sends, from any goroutine, the answer owed to a message of c
// (nothing for notifications), and frees the message's in-flight slot.
func wsOwed(c *server.WSConn, out []byte) {
	st := wsStateOf(c)
	if len(out) > 0 {
		c.SendOwedAfter(st.dl.delay(kindAnswers, c), out) // an answer is owed, within SendOwed's headroom
	}
	st.release()
}

// scratchRetainMax: a scratch output buffer that grew beyond this is not
// kept for the next message.
const scratchRetainMax = 64 << 10
