package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Limits of one Run.
const (
	// ConnsMax bounds Config.Conns.
	ConnsMax = 4096
	// PipelineMax bounds Config.Pipeline.
	PipelineMax = 1024
	// DefaultDrainTimeout is Config.DrainTimeout when it is zero.
	DefaultDrainTimeout = 5 * time.Second
	// dialTimeout bounds each connection's dial.
	dialTimeout = 5 * time.Second
)

// ErrNotLoopback refuses an address that is not on the loopback interface.
var ErrNotLoopback = errors.New("load: only loopback addresses may be dialled")

// Config describes one load run. Conns, Pipeline, Requests and Duration must
// be positive; the run ends when Requests were sent, when Duration elapsed,
// or when every connection's Next returned nil, whichever comes first, and
// then waits up to DrainTimeout for the answers still in flight.
type Config struct {
	Addr     string // host:port of the server; the host must be loopback
	Path     string // request target; "/" when empty
	Conns    int    // keep-alive connections
	Pipeline int    // requests in flight per connection
	Requests int64  // requests sent at most, over all connections
	Duration time.Duration
	// Header holds extra request header lines, each ending in CRLF,
	// e.g. "Authorization: Bearer t\r\n".
	Header string
	// Body is the POST body of every request when Next is nil.
	Body []byte
	// Next returns the body of the seq-th request (from 0) of connection
	// conn, or nil to stop sending on that connection. It is called on the
	// connection's goroutine only; the slice must stay unchanged until Next
	// is called again for the same connection.
	Next func(conn int, seq uint64) []byte
	// Check reports whether a response is a success; nil accepts status
	// 200. It runs on the connection goroutines, concurrently; body is valid
	// only during the call.
	Check        func(status int, body []byte) bool
	DrainTimeout time.Duration // 0 means DefaultDrainTimeout
}

// Result is what one run measured.
type Result struct {
	Sent    int64         // requests written
	Done    int64         // responses received (successful or not)
	Errors  int64         // responses Check refused, plus requests never answered
	Elapsed time.Duration // from the start (all connections open) to the last answer
	// Exhausted says the run ended on Requests or Next rather than on
	// Duration.
	Exhausted bool
	// FirstError is the first connection failure, or nil.
	FirstError error
	Latency    Histogram // send-to-answer latency of every response
}

// Rate returns responses per second.
func (r *Result) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Done) / r.Elapsed.Seconds()
}

// String summarises the run on one line.
func (r *Result) String() string {
	return fmt.Sprintf("%.0f req/s  p50 %v  p90 %v  p99 %v  max %v  n %d  errors %d",
		r.Rate(), r.Latency.Quantile(0.50), r.Latency.Quantile(0.90), r.Latency.Quantile(0.99),
		r.Latency.Max(), r.Done, r.Errors)
}

// Run drives the server at cfg.Addr and returns what it measured. It fails
// only when cfg is invalid or a connection cannot be opened; failures after
// that are counted in Result.Errors. Cancelling ctx ends the run early.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := validate(&cfg); err != nil {
		return nil, err
	}
	conns, err := dialAll(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	r := &run{cfg: &cfg, start: time.Now()}
	r.tickets.Store(cfg.Requests)
	for _, c := range conns {
		c.run = r
	}
	defer armDeadlines(ctx, conns, func(c *conn) deadliner { return c.nc }, r.start.Add(cfg.Duration+cfg.DrainTimeout))()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.loop)
	}
	wg.Wait()
	return r.collect(conns), nil
}

func validate(cfg *Config) error {
	switch {
	case cfg.Conns < 1 || cfg.Conns > ConnsMax:
		return fmt.Errorf("load: conns must be in 1..%d, got %d", ConnsMax, cfg.Conns)
	case cfg.Pipeline < 1 || cfg.Pipeline > PipelineMax:
		return fmt.Errorf("load: pipeline must be in 1..%d, got %d", PipelineMax, cfg.Pipeline)
	case cfg.Requests < 1:
		return fmt.Errorf("load: requests must be positive, got %d", cfg.Requests)
	case cfg.Duration <= 0:
		return fmt.Errorf("load: duration must be positive, got %v", cfg.Duration)
	case cfg.Body == nil && cfg.Next == nil:
		return errors.New("load: need a Body or a Next function")
	}
	if cfg.Path == "" {
		cfg.Path = "/"
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	return CheckLoopback(cfg.Addr)
}

// CheckLoopback accepts "localhost" and loopback IP literals only: no name
// is resolved, so no lookup can send the load elsewhere. Dialer re-checks
// the address it dials.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("load: bad address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w: %q", ErrNotLoopback, addr)
	}
	return nil
}

// loopbackControl re-checks the address actually dialled, after any
// resolution of "localhost".
func loopbackControl(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w: %q", ErrNotLoopback, address)
	}
	return nil
}

// Dialer returns a dialer that refuses non-loopback addresses (after any
// resolution) unless allowRemote.
func Dialer(allowRemote bool) *net.Dialer {
	d := &net.Dialer{Timeout: dialTimeout}
	if !allowRemote {
		d.Control = loopbackControl
	}
	return d
}

func dialAll(ctx context.Context, cfg *Config) ([]*conn, error) {
	d := Dialer(false)
	head := requestHead(cfg)
	conns := make([]*conn, 0, cfg.Conns)
	for i := range cfg.Conns {
		nc, err := d.DialContext(ctx, "tcp", cfg.Addr)
		if err != nil {
			for _, c := range conns {
				c.nc.Close()
			}
			return nil, fmt.Errorf("load: cannot open connection %d to %s: %w", i, cfg.Addr, err)
		}
		conns = append(conns, newConn(i, nc, cfg, head))
	}
	return conns, nil
}

// deadliner is a connection whose reads and writes a deadline bounds.
type deadliner interface{ SetDeadline(time.Time) error }

// armDeadlines sets every connection's deadline and, should ctx be
// cancelled, moves it to now so pending reads and writes fail at once. The
// returned function disarms the cancellation.
func armDeadlines[C any](ctx context.Context, conns []C, nc func(C) deadliner, deadline time.Time) func() bool {
	for _, c := range conns {
		_ = nc(c).SetDeadline(deadline)
	}
	return context.AfterFunc(ctx, func() {
		for _, c := range conns {
			_ = nc(c).SetDeadline(time.Now())
		}
	})
}

// requestHead is every request's head up to the Content-Length value.
func requestHead(cfg *Config) []byte {
	h := []byte("POST " + cfg.Path + " HTTP/1.1\r\nHost: " + cfg.Addr + "\r\nContent-Type: application/json\r\n")
	h = append(h, cfg.Header...)
	return append(h, "Content-Length: "...)
}

// appendRequest appends a complete request with body to dst.
func appendRequest(dst, head, body []byte) []byte {
	dst = append(dst, head...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...)
}

// run is the state the connections of one Run share.
type run struct {
	cfg     *Config
	start   time.Time
	tickets atomic.Int64 // requests still allowed
	timeUp  atomic.Bool  // some connection stopped on Duration
}

// collect merges the connections' counters once they all finished.
func (r *run) collect(conns []*conn) *Result {
	res := &Result{Exhausted: !r.timeUp.Load()}
	for _, c := range conns {
		res.Sent += c.sent
		res.Done += c.done
		res.Errors += c.errs
		res.Elapsed = max(res.Elapsed, c.finished)
		res.Latency.Merge(&c.hist)
		if res.FirstError == nil {
			res.FirstError = c.err
		}
		c.nc.Close()
	}
	return res
}
