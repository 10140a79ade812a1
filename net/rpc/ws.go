package rpc

import (
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/net/http1"
	"github.com/ledgervenue/node/net/server"
)

// JSON-RPC over WebSocket: every method works as over HTTP, batches
// included; eth_subscribe and eth_unsubscribe work only here. A message
// without writes is answered on the event loop, in the read's write; one
// with writes runs on its own goroutine (writes wait for durability) and is
// answered with WSConn.Send when done, so answers to different messages may
// come back in a different order than the requests (JSON-RPC matches them by
// id). Admin methods need the Authorization header on the upgrade request.

var _ server.WSHandler = (*Service)(nil)

// wsState is the per-connection state of the dispatcher.
type wsState struct {
	admin bool
}

// WSOpen implements server.WSHandler.
func (s *Service) WSOpen(c *server.WSConn, req *http1.Request) {
	c.Context = &wsState{admin: s.authorized(req.Header("Authorization"))}
}

// WSClosed implements server.WSHandler.
func (s *Service) WSClosed(c *server.WSConn) {
	if s.cfg.Hub != nil {
		s.cfg.Hub.DropConn(wsSubscriber{c})
	}
}

// ServeWS implements server.WSHandler.
func (s *Service) ServeWS(c *server.WSConn, msg []byte) {
	st := c.Context.(*wsState)
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	reqs, batch, perr := sc.parser.Parse(msg)
	if perr != nil {
		sc.out = jsonrpc.AppendError(sc.out[:0], nil, perr)
		c.Reply(sc.out)
		return
	}
	o := origin{admin: st.admin, ws: c}
	if hasWrite(reqs) {
		s.runBlocking(msg, o, func(out []byte, sc *scratch) {
			if len(out) > 0 {
				c.SendOwed(out) // an answer is owed, within SendOwed's headroom
			}
			s.activate(c, sc)
		})
		return
	}
	sc.out = s.runAll(sc, reqs, batch, o, sc.out[:0])
	if len(sc.out) > 0 {
		c.Reply(sc.out)
	}
	s.activate(c, sc)
	if cap(sc.out) > scratchRetainMax {
		sc.out = nil
	}
}

// scratchRetainMax: a scratch output buffer that grew beyond this is not
// kept for the next message.
const scratchRetainMax = 64 << 10
