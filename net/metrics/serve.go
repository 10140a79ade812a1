package metrics

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Bounds of the admin port: it has no authentication and is meant for
// loopback, but what a client can make the node hold there is bounded all
// the same.
const (
	// AdminConnsMax bounds the admin port's open connections; more wait in
	// the kernel's accept queue until one closes.
	AdminConnsMax = 16
	// AdminHeaderTimeout bounds the time to send a request's head.
	AdminHeaderTimeout = 10 * time.Second
	// AdminIdleTimeout closes a keep-alive connection idle this long.
	AdminIdleTimeout = time.Minute
	// AdminHeaderBytesMax bounds a request's head.
	AdminHeaderBytesMax = 16 << 10
)

// ListenAndServe serves h on addr (TCP) within the admin port's bounds.
func ListenAndServe(addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return Serve(ln, h)
}

// Serve serves h on ln within the admin port's bounds until ln closes. No
// write timeout: a CPU profile or trace answers after the seconds asked.
func Serve(ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: AdminHeaderTimeout, IdleTimeout: AdminIdleTimeout,
		MaxHeaderBytes: AdminHeaderBytesMax}
	return srv.Serve(&limitListener{Listener: ln, slots: make(chan struct{}, AdminConnsMax)})
}

// limitListener accepts a connection only while fewer than cap(slots) are
// open; a connection frees its slot when closed.
type limitListener struct {
	net.Listener
	slots chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, free: func() { <-l.slots }}, nil
}

// slotConn gives its listener's slot back once, on the first Close (the
// HTTP server may close a connection from two goroutines).
type slotConn struct {
	net.Conn
	free func()
	once sync.Once
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}
