//go:build unix

package server

import (
	"fmt"
	"net"
	"strconv"
	"syscall"

	"github.com/panjf2000/gnet/v2"
)

// listenAddr returns the address the engine's listener is bound to, which
// differs from Config.Addr when that asked for port 0. gnet does not expose
// it, so read it from a duplicate of the listening socket.
func listenAddr(eng gnet.Engine) (string, error) {
	fd, err := eng.Dup()
	if err != nil {
		return "", fmt.Errorf("cannot duplicate listener: %w", err)
	}
	defer syscall.Close(fd) //nolint:errcheck // a dup of a socket we keep open
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return "", fmt.Errorf("cannot read listener address: %w", err)
	}
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port)), nil
	case *syscall.SockaddrInet6:
		return net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port)), nil
	}
	return "", fmt.Errorf("listener has unexpected address type %T", sa)
}
