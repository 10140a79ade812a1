package server

import (
	"time"

	"github.com/panjf2000/gnet/v2"
)

// events adapts Server to gnet.EventHandler without exporting the callbacks.
// Every method except OnTick runs on an event loop.
type events struct{ s *Server }

var _ gnet.EventHandler = (*events)(nil)

func (e *events) OnBoot(eng gnet.Engine) gnet.Action {
	s := e.s
	s.engine = eng
	s.addr, s.bootErr = listenAddr(eng)
	close(s.booted)
	if s.bootErr != nil {
		return gnet.Shutdown
	}
	return gnet.None
}

func (e *events) OnShutdown(gnet.Engine) {}

func (e *events) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	s := e.s
	if s.open.Add(1) > int64(s.cfg.MaxConns) {
		return s.tooManyConns, gnet.Close
	}
	ip := remoteIP(c)
	if !s.admitIP(ip) {
		return s.tooManyFromIP, gnet.Close
	}
	cs := &connState{srv: s, conn: c, proto: protoHTTP, ip: ip, id: s.connIDs.Add(1)}
	cs.resp.cs = cs
	cs.touch()
	c.SetContext(cs)
	s.register(cs)
	return nil, gnet.None
}

func (e *events) OnClose(c gnet.Conn, _ error) gnet.Action {
	e.s.open.Add(-1)
	cs, ok := c.Context().(*connState)
	if !ok {
		return gnet.None // refused in OnOpen
	}
	cs.closed = true
	cs.pending = nil
	e.s.outbound.Add(-cs.counted.Swap(0))
	e.s.unregister(cs)
	e.s.releaseIP(cs.ip)
	if cs.ws != nil {
		cs.ws.closed.Store(true)
		cs.wsHandler.WSClosed(cs.ws)
	}
	return gnet.None
}

// OnTraffic takes every byte gnet has read (Next(-1) on an empty inbound
// buffer returns a view of the loop's read buffer, without copying), so gnet's
// own ring buffer stays empty and never has to stitch chunks together.
func (e *events) OnTraffic(c gnet.Conn) gnet.Action {
	cs, ok := c.Context().(*connState)
	if !ok {
		return gnet.Close
	}
	data, _ := c.Next(-1)
	if cs.draining.Load() {
		return gnet.None // the last response is on its way; nothing more is read
	}
	cs.touch()
	switch cs.proto {
	case protoHTTP:
		return cs.onHTTP(data)
	case protoWebSocket:
		return cs.onWS(data)
	}
	panic("BUG: server: unknown connection protocol")
}

// OnTick runs on gnet's ticker goroutine, not on a loop.
func (e *events) OnTick() (time.Duration, gnet.Action) {
	s := e.s
	s.clock.Store(int64(time.Since(s.epoch)))
	s.sweep()
	return s.tick, gnet.None
}
