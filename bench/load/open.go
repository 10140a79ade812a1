package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Limits of one open-loop run (RunOpen).
const (
	// OpenRateMax bounds OpenConfig.Rate, in requests per second.
	OpenRateMax = 1_000_000
	// OpenDurationMax bounds OpenConfig.Duration.
	OpenDurationMax = time.Hour
	// OpenQueueMax bounds the requests that are due but not yet sent, over
	// all connections: past it the scheduler waits (and the requests it
	// could not hand out keep their due times, so the wait still counts).
	OpenQueueMax = 1 << 16
	// DefaultWindow is OpenConfig.Window when it is zero.
	DefaultWindow = time.Second
)

// RoundTripper sends one request and waits for its answer: one request in
// flight per connection.
type RoundTripper interface {
	// RoundTrip sends body and returns the answer's status (200 for a
	// WebSocket message) and body; resp is valid until the next call.
	RoundTrip(body []byte) (status int, resp []byte, err error)
	SetDeadline(t time.Time) error
	Close() error
}

// OpenConfig describes one open-loop run: request i is due at
// start + i/Rate, whatever the server's answers do.
type OpenConfig struct {
	Addr   string // host:port, for the default HTTP connections
	Path   string // request target; "/" when empty
	Header string // extra header lines, each ending in CRLF
	Conns  int    // connections, each with one request in flight
	Rate   float64
	// Duration is how long requests fall due; answers still in flight then
	// get DrainTimeout more, after which they count as errors.
	Duration     time.Duration
	DrainTimeout time.Duration // 0 means DefaultDrainTimeout
	// Ordered sends request i on connection i % Conns, so requests with
	// the same i % Conns go out one after another (an account's nonces);
	// otherwise each request goes to the first idle connection.
	Ordered bool
	// Next returns the body of request i, or nil to stop early. It is
	// called in order of i from one goroutine; the slice must stay
	// unchanged until the run returns.
	Next func(i uint64) []byte
	// Check reports whether an answer is a success; nil accepts status 200.
	// It runs on the connection goroutines, concurrently.
	Check func(status int, body []byte) bool
	// Dial opens connection i; nil dials HTTP/1.1 keep-alive connections to
	// Addr (loopback only unless AllowRemote).
	Dial        func(ctx context.Context, i int) (RoundTripper, error)
	AllowRemote bool
	// Window is the period of Result.Windows and of Progress; 0 means
	// DefaultWindow.
	Window time.Duration
	// Progress, when set, is called with each window as it closes.
	Progress func(w *Window)
}

// Window is what one period of a run measured. Latency runs from a
// request's due time to its answer; service time from its write.
type Window struct {
	End     time.Duration // since the start
	Offered int64         // requests that fell due in the window
	Done    int64         // answers received, successful or not
	OK      int64         // answers Check accepted
	Errors  int64         // answers Check refused, plus requests never answered
	// Quantiles of the latency of the window's answers.
	P50, P90, P99, P999, Max time.Duration
	ServiceP50, ServiceP99   time.Duration
}

// OpenResult is what one open-loop run measured.
type OpenResult struct {
	Rate    float64 // offered, per second
	Offered int64   // requests that fell due (and were handed to a connection)
	Done    int64   // answers received
	OK      int64   // answers Check accepted
	Errors  int64   // answers Check refused, plus requests never answered
	Elapsed time.Duration
	// FirstError is the first connection failure, or nil.
	FirstError error
	// Latency is measured from each request's due time, so time spent
	// waiting for a free connection counts (coordinated omission
	// corrected); Service from its write to its answer.
	Latency, Service Histogram
	Windows          []Window
}

// Achieved returns the accepted answers per second over the run.
func (r *OpenResult) Achieved() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// job is one request handed to a connection.
type job struct {
	due  time.Duration // since the start
	body []byte
}

// openConn is one connection's worker and its measurements since the last
// window closed.
type openConn struct {
	rt  RoundTripper
	err error // first failure; the worker then fails every further job

	mu               sync.Mutex
	latency, service Histogram
	done, ok, errs   int64
	last             time.Duration // when the last answer came
}

// RunOpen drives the server open-loop and returns what it measured. It fails
// only when cfg is invalid or a connection cannot be opened; later failures
// count as errors. Cancelling ctx stops scheduling at once.
func RunOpen(ctx context.Context, cfg OpenConfig) (*OpenResult, error) {
	if err := validateOpen(&cfg); err != nil {
		return nil, err
	}
	conns := make([]*openConn, 0, cfg.Conns)
	defer func() {
		for _, c := range conns {
			c.rt.Close()
		}
	}()
	for i := range cfg.Conns {
		rt, err := cfg.Dial(ctx, i)
		if err != nil {
			return nil, fmt.Errorf("load: cannot open connection %d: %w", i, err)
		}
		conns = append(conns, &openConn{rt: rt})
	}
	nq, qcap := 1, OpenQueueMax
	if cfg.Ordered {
		nq, qcap = cfg.Conns, max(OpenQueueMax/cfg.Conns, 1)
	}
	queues := make([]chan job, nq)
	for i := range queues {
		queues[i] = make(chan job, qcap)
	}
	start := time.Now()
	defer armDeadlines(ctx, conns, func(c *openConn) deadliner { return c.rt }, start.Add(cfg.Duration+cfg.DrainTimeout))()

	var offered atomic.Int64
	var workers sync.WaitGroup
	for i, c := range conns {
		workers.Go(func() { c.work(&cfg, start, queues[i%nq]) })
	}
	workersDone, sampled := make(chan struct{}), make(chan struct{})
	res := &OpenResult{Rate: cfg.Rate}
	s := &sampler{conns: conns, offered: &offered, cfg: &cfg, res: res}
	go func() {
		defer close(sampled)
		s.loop(start, workersDone)
	}()
	schedule(ctx, &cfg, start, queues, &offered)
	workers.Wait()
	close(workersDone)
	<-sampled
	res.Offered = offered.Load()
	for _, c := range conns {
		if c.err != nil && res.FirstError == nil {
			res.FirstError = c.err
		}
	}
	return res, nil
}

func validateOpen(cfg *OpenConfig) error {
	switch {
	case cfg.Conns < 1 || cfg.Conns > ConnsMax:
		return fmt.Errorf("load: conns must be in 1..%d, got %d", ConnsMax, cfg.Conns)
	case !(cfg.Rate > 0 && cfg.Rate <= OpenRateMax):
		return fmt.Errorf("load: rate must be in (0, %d], got %v", OpenRateMax, cfg.Rate)
	case cfg.Duration <= 0 || cfg.Duration > OpenDurationMax:
		return fmt.Errorf("load: duration must be in (0, %v], got %v", OpenDurationMax, cfg.Duration)
	case cfg.Next == nil:
		return errors.New("load: need a Next function")
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.Dial == nil {
		if !cfg.AllowRemote {
			if err := CheckLoopback(cfg.Addr); err != nil {
				return err
			}
		}
		cfg.Dial = httpDialer(cfg)
	}
	return nil
}

// schedule hands request i to its queue at start + i/Rate, or as soon after
// as a queue has room, until Duration, Next or ctx ends the run; then it
// closes the queues.
func schedule(ctx context.Context, cfg *OpenConfig, start time.Time, queues []chan job, offered *atomic.Int64) {
	defer func() {
		for _, q := range queues {
			close(q)
		}
	}()
	timer := time.NewTimer(0)
	defer timer.Stop()
	perReq := 1e9 / cfg.Rate // ns between due times
	for i := uint64(0); ; i++ {
		due := time.Duration(float64(i) * perReq)
		if due >= cfg.Duration {
			return
		}
		if wait := due - time.Since(start); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		body := cfg.Next(i)
		if body == nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case queues[i%uint64(len(queues))] <- job{due: due, body: body}:
			offered.Add(1)
		}
	}
}

// work sends the queue's jobs one at a time. After a failure it keeps
// taking jobs, counting each as an error, so the scheduler never blocks on
// a dead connection.
func (c *openConn) work(cfg *OpenConfig, start time.Time, q <-chan job) {
	for j := range q {
		if c.err != nil {
			c.fail(time.Since(start))
			continue
		}
		sent := time.Since(start)
		status, body, err := c.rt.RoundTrip(j.body)
		now := time.Since(start)
		if err != nil {
			c.err = err
			c.fail(now)
			continue
		}
		ok := status == 200
		if cfg.Check != nil {
			ok = cfg.Check(status, body)
		}
		c.answer(now, now-j.due, now-sent, ok)
	}
}

// answer counts one answer; ok says Check accepted it.
func (c *openConn) answer(now, latency, service time.Duration, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = max(c.last, now)
	c.done++
	if ok {
		c.ok++
	} else {
		c.errs++
	}
	c.latency.Record(latency)
	c.service.Record(service)
}

// fail counts one request that was never answered.
func (c *openConn) fail(now time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = max(c.last, now)
	c.errs++
}

// sampler closes a window every cfg.Window: it moves each connection's
// measurements into the window and into the run's totals.
type sampler struct {
	conns   []*openConn
	offered *atomic.Int64
	cfg     *OpenConfig
	res     *OpenResult
	prev    int64 // offered when the previous window closed
	// Scratch histograms of the window being closed.
	latency, service Histogram
}

// loop closes a window every period, and a last one once the workers are
// done.
func (s *sampler) loop(start time.Time, workersDone <-chan struct{}) {
	tick := time.NewTicker(s.cfg.Window)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			s.close(time.Since(start))
		case <-workersDone:
			s.close(time.Since(start))
			return
		}
	}
}

// close ends the current window at end.
func (s *sampler) close(end time.Duration) {
	w := Window{End: end}
	s.latency, s.service = Histogram{}, Histogram{}
	for _, c := range s.conns {
		c.mu.Lock()
		s.latency.Merge(&c.latency)
		s.service.Merge(&c.service)
		w.Done += c.done
		w.OK += c.ok
		w.Errors += c.errs
		s.res.Elapsed = max(s.res.Elapsed, c.last)
		c.latency, c.service = Histogram{}, Histogram{}
		c.done, c.ok, c.errs = 0, 0, 0
		c.mu.Unlock()
	}
	offered := s.offered.Load()
	w.Offered, s.prev = offered-s.prev, offered
	w.P50, w.P90, w.P99 = s.latency.Quantile(0.5), s.latency.Quantile(0.9), s.latency.Quantile(0.99)
	w.P999, w.Max = s.latency.Quantile(0.999), s.latency.Max()
	w.ServiceP50, w.ServiceP99 = s.service.Quantile(0.5), s.service.Quantile(0.99)
	s.res.Latency.Merge(&s.latency)
	s.res.Service.Merge(&s.service)
	s.res.Done += w.Done
	s.res.OK += w.OK
	s.res.Errors += w.Errors
	s.res.Windows = append(s.res.Windows, w)
	if s.cfg.Progress != nil {
		s.cfg.Progress(&w)
	}
}

// httpConn is an HTTP/1.1 keep-alive connection with one request in flight.
type httpConn struct {
	nc   net.Conn
	head []byte
	out  []byte
	in   inbox
}

func httpDialer(cfg *OpenConfig) func(ctx context.Context, i int) (RoundTripper, error) {
	d := Dialer(cfg.AllowRemote)
	return func(ctx context.Context, _ int) (RoundTripper, error) {
		nc, err := d.DialContext(ctx, "tcp", cfg.Addr)
		if err != nil {
			return nil, err
		}
		return NewHTTPConn(nc, cfg.Addr, cfg.Path, cfg.Header), nil
	}
}

// NewHTTPConn returns a RoundTripper that POSTs to path on the open
// connection nc (plain TCP or TLS) to the server at addr, keeping it alive;
// header holds extra header lines, each ending in CRLF.
func NewHTTPConn(nc net.Conn, addr, path, header string) RoundTripper {
	if path == "" {
		path = "/"
	}
	return &httpConn{nc: nc, head: requestHead(&Config{Addr: addr, Path: path, Header: header})}
}

func (c *httpConn) RoundTrip(body []byte) (int, []byte, error) {
	c.out = appendRequest(c.out[:0], c.head, body)
	if _, err := c.nc.Write(c.out); err != nil {
		return 0, nil, err
	}
	for {
		status, resp, ok, err := c.in.next()
		switch {
		case err != nil:
			return 0, nil, err
		case ok:
			return status, resp, nil
		}
		n, err := c.nc.Read(c.in.space())
		c.in.commit(n)
		if err != nil && n == 0 {
			return 0, nil, err
		}
	}
}

func (c *httpConn) SetDeadline(t time.Time) error { return c.nc.SetDeadline(t) }
func (c *httpConn) Close() error                  { return c.nc.Close() }
