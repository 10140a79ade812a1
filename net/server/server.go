package server

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/ledgervenue/node/net/http1"
)

// Limits and defaults.
const (
	// DefaultMaxConns is Config.MaxConns when it is zero.
	DefaultMaxConns = 10_000
	// DefaultMaxConnsPerIP is Config.MaxConnsPerIP when it is zero.
	DefaultMaxConnsPerIP = 1024
	// DefaultIdleTimeout is Config.IdleTimeout when it is zero.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultHeaderTimeout is Config.HeaderTimeout when it is zero.
	DefaultHeaderTimeout = 10 * time.Second
	// DefaultBodyTimeout is Config.BodyTimeout when it is zero.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultOutboundMax is Config.OutboundMax when it is zero.
	DefaultOutboundMax = 8 << 20
	// DefaultOutboundTotalMax is Config.OutboundTotalMax when it is zero.
	DefaultOutboundTotalMax = 256 << 20
	// laggingBytes: a connection with more than this queued for its socket
	// is behind its client's reads (the kernel's socket buffers already
	// hold what a reading client has not taken yet). Over the node's
	// outbound budget, a lagging connection gets no more service.
	laggingBytes = 64 << 10
	// readChunk is what the loop reads from one connection per turn: a
	// client that pipelines without pause gets this much served before the
	// loop's other connections are, so it bounds what a flood adds to
	// their latency (gnet's default is 64 KiB: a quarter of the turn).
	readChunk = 16 << 10
	// MaxPendingBytes bounds what one connection may send while one of its
	// responses is deferred: one maximal request. Beyond it the connection is
	// closed, since an in-order error response cannot be sent before the
	// deferred one.
	MaxPendingBytes = http1.MaxHeaderBytes + http1.MaxBodyBytes
	// bufRetainMax: per-connection buffers that grew beyond this are released
	// once empty, so that one large request does not pin memory on an idle
	// connection for its whole life.
	bufRetainMax = 64 << 10
	// The ticker period: IdleTimeout/4 within these bounds. tickMax also
	// bounds how long a drained connection waits for its close.
	tickMin = 5 * time.Millisecond
	tickMax = 100 * time.Millisecond
)

// Config configures a Server. The zero value of each field picks its default.
type Config struct {
	Addr      string // "127.0.0.1:8545"; port 0 picks a free port
	Multicore bool   // one event loop per core instead of one in all
	// MaxConns bounds open connections; beyond it new ones get 503 and are
	// closed (DefaultMaxConns).
	MaxConns int
	// MaxConnsPerIP bounds open connections from one remote address; beyond
	// it new ones get 503 and are closed (DefaultMaxConnsPerIP).
	MaxConnsPerIP int
	// IdleTimeout: keep-alive connections without traffic and without a
	// partial request are closed after this; < 0 disables
	// (DefaultIdleTimeout).
	IdleTimeout time.Duration
	// HeaderTimeout bounds the time from a request's first byte to the end
	// of its head, BodyTimeout from its first byte to the end of its body;
	// past either the request gets 408 and the connection is closed. < 0
	// disables (DefaultHeaderTimeout, DefaultBodyTimeout).
	HeaderTimeout, BodyTimeout time.Duration
	// OutboundMax bounds the bytes queued for the socket on one connection
	// (DefaultOutboundMax): no request or WebSocket message is served while
	// more is queued (the connection is closed), WSConn.Send refuses beyond
	// it, and WSConn.SendOwed closes the connection beyond twice it.
	OutboundMax int
	// OutboundTotalMax is the node's outbound budget: the bytes queued for
	// sockets over all connections (DefaultOutboundTotalMax). While the
	// total is over it, a connection with more than laggingBytes queued is
	// closed at its next request or message and WSConn.Send refuses for it
	// (the hub closes the subscription with -32022); connections that keep
	// up are served as usual. So N clients that do not read hold about
	// this much in all, not N × OutboundMax.
	OutboundTotalMax int
	// CORSDomains lists the browser origins served over HTTP
	// (--http.corsdomain), WSOrigins those allowed to upgrade (--ws.origins),
	// VHosts the Host names served besides IP literals (--http.vhosts). "*"
	// admits any; nil means DefaultOrigins, DefaultOrigins and DefaultVHosts;
	// an empty non-nil list admits none.
	CORSDomains, WSOrigins, VHosts []string
	// Logf receives the event loops' warnings and errors. Nil discards them.
	Logf func(format string, args ...any)
}

// Server is the gnet HTTP/1.1 server. Create it with New, then Start and Stop
// it once each.
type Server struct {
	handler Handler
	cfg     Config
	policy  policy
	cfgErr  error // an invalid origin list, reported by Start
	tick    time.Duration
	epoch   time.Time
	booted  chan struct{}
	runErr  chan error
	bootErr error         // written before booted is closed
	engine  gnet.Engine   // written before booted is closed
	addr    string        // written before booted is closed
	clock   atomic.Int64  // nanoseconds since epoch, advanced by OnTick
	open    atomic.Int64  // connections between OnOpen and OnClose
	connIDs atomic.Uint64 // the last connection id given (ConnID)
	// delayed is the bytes held back by Delay and the WebSocket delay
	// lines over all connections (DelayedTotalMax).
	delayed atomic.Int64
	// outbound is the bytes queued for sockets over all connections, each
	// as last counted on its loop (connState.count).
	outbound atomic.Int64
	started  atomic.Bool
	registry struct {
		sync.Mutex
		conns map[*connState]struct{}
	}
	// swept and recounted are scratch of the ticker goroutine.
	swept, recounted []*connState
	perIP            struct {
		sync.Mutex
		conns map[netip.Addr]int // open connections per remote address
	}
	// Answers rendered once in New, each naming its limit.
	tooManyConns, tooManyFromIP []byte
	headTimeout, bodyTimeout    string // 408 reasons
	wsNotReading, wsOwedOver    []byte // close frames for a client that does not read
	// shared compresses notification bodies once for every deflate
	// WebSocket connection.
	shared sharedSegments
	life   struct {
		sync.RWMutex
		stopped bool // no AsyncWrite once set: the pollers may be gone
	}
}

// New returns a server that passes every request to h.
func New(h Handler, cfg Config) *Server {
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxConnsPerIP <= 0 {
		cfg.MaxConnsPerIP = DefaultMaxConnsPerIP
	}
	cfg.IdleTimeout = orDefault(cfg.IdleTimeout, DefaultIdleTimeout)
	cfg.HeaderTimeout = orDefault(cfg.HeaderTimeout, DefaultHeaderTimeout)
	cfg.BodyTimeout = orDefault(cfg.BodyTimeout, DefaultBodyTimeout)
	if cfg.OutboundMax <= 0 {
		cfg.OutboundMax = DefaultOutboundMax
	}
	if cfg.OutboundTotalMax <= 0 {
		cfg.OutboundTotalMax = DefaultOutboundTotalMax
	}
	if cfg.CORSDomains == nil {
		cfg.CORSDomains = DefaultOrigins
	}
	if cfg.WSOrigins == nil {
		cfg.WSOrigins = DefaultOrigins
	}
	if cfg.VHosts == nil {
		cfg.VHosts = DefaultVHosts
	}
	s := &Server{
		handler: h,
		cfg:     cfg,
		tick:    tickMax,
		booted:  make(chan struct{}),
		runErr:  make(chan error, 1),
	}
	s.policy, s.cfgErr = newPolicy(&cfg)
	// The ticker drives every timeout: a quarter of the shortest one.
	for _, d := range []time.Duration{cfg.IdleTimeout, cfg.HeaderTimeout, cfg.BodyTimeout} {
		if d > 0 {
			s.tick = min(s.tick, max(d/4, tickMin))
		}
	}
	s.registry.conns = make(map[*connState]struct{})
	s.perIP.conns = make(map[netip.Addr]int)
	s.tooManyConns = appendJSONError(nil, 503, "too many connections ("+strconv.Itoa(cfg.MaxConns)+")", nil, false)
	s.tooManyFromIP = appendJSONError(nil, 503, "too many connections from this address ("+strconv.Itoa(cfg.MaxConnsPerIP)+")", nil, false)
	s.headTimeout = "request head not received within " + cfg.HeaderTimeout.String()
	s.bodyTimeout = "request body not received within " + cfg.BodyTimeout.String()
	s.wsNotReading = notReadingFrame(cfg.OutboundMax)
	s.wsOwedOver = notReadingFrame(owedMax(cfg.OutboundMax))
	return s
}

// orDefault: zero picks the default; negative (disabled) stays.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Start listens on cfg.Addr and returns once the listener is bound, leaving
// the event loops running in their own goroutines.
func (s *Server) Start() error {
	if s.started.Swap(true) {
		panic("BUG: server: Start called twice")
	}
	if s.cfgErr != nil {
		s.life.Lock()
		s.life.stopped = true // nothing to stop
		s.life.Unlock()
		return fmt.Errorf("cannot start server on %q: %w", s.cfg.Addr, s.cfgErr)
	}
	s.epoch = time.Now()
	opts := []gnet.Option{
		gnet.WithMulticore(s.cfg.Multicore),
		gnet.WithReuseAddr(true),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithTicker(true), // clock, idle timeout, draining connections
		gnet.WithLogger(gnetLogger{s.cfg.Logf}),
		gnet.WithReadBufferCap(readChunk),
	}
	go func() {
		s.runErr <- gnet.Run(&events{s}, "tcp://"+s.cfg.Addr, opts...)
	}()
	var err error
	select {
	case <-s.booted:
		err = s.bootErr
	case err = <-s.runErr:
		if err == nil {
			err = errors.New("event loops exited")
		}
	}
	if err != nil {
		s.life.Lock()
		s.life.stopped = true // nothing to stop
		s.life.Unlock()
		return fmt.Errorf("cannot start server on %q: %w", s.cfg.Addr, err)
	}
	return nil
}

// Addr returns the "host:port" the server listens on.
// REQUIRES: Start returned nil.
func (s *Server) Addr() string { return s.addr }

// Stop stops accepting, closes every connection (responses still deferred are
// dropped) and returns when the event loops have exited or ctx is done.
func (s *Server) Stop(ctx context.Context) error {
	s.life.Lock()
	stopped := s.life.stopped
	s.life.stopped = true
	s.life.Unlock()
	if stopped || !s.started.Load() {
		return nil
	}
	// Engine.Stop polls for the end of the shutdown every 500 ms; gnet.Run
	// returning is the same signal without the delay, so wait for that and
	// let the poller finish on its own.
	go func() { _ = s.engine.Stop(ctx) }()
	select {
	case err := <-s.runErr:
		if err != nil {
			return fmt.Errorf("server on %q stopped with: %w", s.addr, err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// now reads the coarse clock: nanoseconds since Start, at most one tick old.
func (s *Server) now() int64 { return s.clock.Load() }

// sweep asks the loops to close connections that finished draining, have
// been idle for longer than the timeout or are late with a request. It runs
// on the ticker goroutine; the loop re-checks (connState.Run) because
// traffic may arrive in between.
func (s *Server) sweep() {
	s.swept = s.swept[:0]
	s.registry.Lock()
	s.recounted = s.recounted[:0]
	for cs := range s.registry.conns {
		switch {
		case cs.draining.Load() || s.idle(cs) || s.quiet(cs) || s.late(cs):
			s.swept = append(s.swept, cs)
		case cs.counted.Load() > 0:
			// Its queue drains without traffic of ours to count it.
			s.recounted = append(s.recounted, cs)
		}
	}
	s.registry.Unlock()
	for i, cs := range s.swept {
		_ = cs.conn.EventLoop().Execute(context.Background(), cs)
		s.swept[i] = nil
	}
	for i, cs := range s.recounted {
		_ = cs.conn.EventLoop().Execute(context.Background(), (*recountTask)(cs))
		s.recounted[i] = nil
	}
}

// refuses reports whether cs, with backlog bytes queued now, gets no more
// service: over its own bound, or lagging while the node is over its
// budget. The total counts cs at backlog, not at its last count: answers
// staged during one read are not counted yet.
func (s *Server) refuses(cs *connState, backlog int64) bool {
	if backlog > int64(s.cfg.OutboundMax) {
		return true
	}
	return backlog > laggingBytes && s.outbound.Load()-cs.counted.Load()+backlog > int64(s.cfg.OutboundTotalMax)
}

// idle reports whether cs saw no traffic for the idle timeout. The clock lags
// by up to a tick, hence the extra tick.
func (s *Server) idle(cs *connState) bool {
	return s.cfg.IdleTimeout > 0 && s.now()-cs.lastSeen.Load() >= int64(s.cfg.IdleTimeout+s.tick)
}

// late reports whether cs has a partial request past its deadline (head or
// body). Both the deadline and the clock come from now, so the lag cancels.
func (s *Server) late(cs *connState) bool {
	d := cs.deadline.Load()
	return d != 0 && s.now() >= d
}

// quiet reports whether an upgraded connection saw no traffic for half the
// idle timeout: it is due a ping.
func (s *Server) quiet(cs *connState) bool {
	since := max(cs.lastSeen.Load(), cs.pingedAt.Load())
	return cs.upgraded.Load() && s.cfg.IdleTimeout > 0 && s.now()-since >= int64(s.cfg.IdleTimeout/2)
}

func (s *Server) register(cs *connState) {
	s.registry.Lock()
	s.registry.conns[cs] = struct{}{}
	s.registry.Unlock()
}

func (s *Server) unregister(cs *connState) {
	s.registry.Lock()
	delete(s.registry.conns, cs)
	s.registry.Unlock()
}

// admitIP counts a new connection from ip, or reports false when ip already
// has MaxConnsPerIP open. Any loop may call it.
func (s *Server) admitIP(ip netip.Addr) bool {
	s.perIP.Lock()
	defer s.perIP.Unlock()
	n := s.perIP.conns[ip]
	if n >= s.cfg.MaxConnsPerIP {
		return false
	}
	s.perIP.conns[ip] = n + 1
	return true
}

// releaseIP uncounts a connection admitted by admitIP.
func (s *Server) releaseIP(ip netip.Addr) {
	s.perIP.Lock()
	defer s.perIP.Unlock()
	if n := s.perIP.conns[ip]; n > 1 {
		s.perIP.conns[ip] = n - 1
	} else {
		delete(s.perIP.conns, ip)
	}
}

// gnetLogger routes gnet's warnings and errors to Config.Logf.
type gnetLogger struct{ logf func(string, ...any) }

func (gnetLogger) Debugf(string, ...any) {}
func (gnetLogger) Infof(string, ...any)  {}
func (l gnetLogger) Warnf(format string, args ...any) {
	l.log("gnet warning: "+format, args)
}
func (l gnetLogger) Errorf(format string, args ...any) {
	l.log("gnet error: "+format, args)
}
func (l gnetLogger) Fatalf(format string, args ...any) {
	l.log("gnet fatal: "+format, args)
}

func (l gnetLogger) log(format string, args []any) {
	if l.logf != nil {
		l.logf(format, args...)
	}
}
