package server

import (
	"net"
	"net/netip"

	"github.com/panjf2000/gnet/v2"
)

// remoteIP is a connection's peer address without its port: the key of the
// per-address limits (connections here, subscriptions in the hub). An
// IPv4-mapped IPv6 address is unmapped, so one client counts once whichever
// way it connected.
func remoteIP(c gnet.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}

// RemoteIP returns the peer's address without its port. Safe from any
// goroutine: gnet sets it once, at accept.
func (c *WSConn) RemoteIP() netip.Addr { return remoteIP(c.cs.conn) }

// RemoteIP returns the address of the peer whose request is being served,
// without its port (the key of the rate limits' address budget).
// The zero Addr for a Response the server did not make (a benchmark's).
// REQUIRES: called during Serve.
func (w *Response) RemoteIP() netip.Addr {
	if w.cs == nil {
		return netip.Addr{}
	}
	return w.cs.ip
}
