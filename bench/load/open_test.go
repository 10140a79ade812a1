package load

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// constBody makes every request the same.
func constBody(b []byte) func(uint64) []byte { return func(uint64) []byte { return b } }

func checkOrdered(t *testing.T, r *OpenResult) {
	t.Helper()
	h := &r.Latency
	qs := []time.Duration{h.Quantile(0.5), h.Quantile(0.9), h.Quantile(0.99), h.Quantile(0.999), h.Max()}
	for i := 1; i < len(qs); i++ {
		if qs[i] < qs[i-1] {
			t.Fatalf("percentiles not ordered: %v", qs)
		}
	}
}

func TestOpenSendsAtTheRate(t *testing.T) {
	s := startEchoServer(t, 1, false)
	const rate, d = 2000, 500 * time.Millisecond
	var windows int
	start := time.Now()
	r, err := RunOpen(context.Background(), OpenConfig{Addr: s.addr(), Conns: 4, Rate: rate, Duration: d,
		Next: constBody([]byte(`{"id":1}`)), Window: 100 * time.Millisecond, Progress: func(*Window) { windows++ }})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	const want = rate * 500 / 1000
	if r.Offered != want || r.Done != want || r.OK != want || r.Errors != 0 || s.requests.Load() != want {
		t.Fatalf("offered %d done %d ok %d errors %d served %d, want %d", r.Offered, r.Done, r.OK, r.Errors, s.requests.Load(), want)
	}
	// The last request is due at d - 1/rate: the run cannot end much
	// earlier, nor (on a loopback echo) much later.
	if took < d-time.Millisecond || took > d+2*time.Second {
		t.Fatalf("took %v for %v", took, d)
	}
	if a := r.Achieved(); a < rate*0.5 || a > rate*1.5 {
		t.Fatalf("achieved %.0f/s at %d/s offered", a, rate)
	}
	var sum, offered int64
	for _, w := range r.Windows {
		sum += w.Done
		offered += w.Offered
	}
	if sum != r.Done || offered != r.Offered || windows != len(r.Windows) || len(r.Windows) < 4 {
		t.Fatalf("%d windows (%d reported) add up to done %d offered %d", len(r.Windows), windows, sum, offered)
	}
	checkOrdered(t, r)
}

// TestOpenStallCounts is the point of the open loop: while the server
// stalls one answer for 300 ms, the requests falling due queue up behind it
// and their latency, measured from their due time, shows the stall; a
// closed loop would record it once. Service time (from the write) does not.
func TestOpenStallCounts(t *testing.T) {
	s := startEchoServer(t, 1, false)
	const stall = 300 * time.Millisecond
	s.stallAt.Store(50)
	s.stallFor.Store(int64(stall))
	r, err := RunOpen(context.Background(), OpenConfig{Addr: s.addr(), Conns: 1, Rate: 200, Duration: time.Second,
		Next: constBody([]byte("x"))})
	if err != nil {
		t.Fatal(err)
	}
	if r.Done != 200 || r.Errors != 0 {
		t.Fatalf("done %d errors %d", r.Done, r.Errors)
	}
	// About 60 requests (stall x rate) fell due during the stall, waiting
	// 300 ms down to 0: more than 10 % of all waited over 100 ms.
	if p90 := r.Latency.Quantile(0.9); p90 < 100*time.Millisecond {
		t.Fatalf("latency p90 %v hides the %v stall", p90, stall)
	}
	if p90 := r.Service.Quantile(0.9); p90 > 50*time.Millisecond {
		t.Fatalf("service p90 %v: only one request was slow to serve", p90)
	}
	if r.Service.Max() < stall || r.Latency.Max() < stall {
		t.Fatalf("max service %v latency %v, want >= %v", r.Service.Max(), r.Latency.Max(), stall)
	}
	checkOrdered(t, r)
}

// fakeConn records the bodies sent on connection id.
type fakeConn struct {
	id   int
	mu   *sync.Mutex
	seen map[int][]uint64
	err  error
}

func (f *fakeConn) RoundTrip(body []byte) (int, []byte, error) {
	if f.err != nil {
		return 0, nil, f.err
	}
	i, _ := strconv.ParseUint(string(body), 10, 64)
	f.mu.Lock()
	f.seen[f.id] = append(f.seen[f.id], i)
	f.mu.Unlock()
	return 200, body, nil
}
func (f *fakeConn) SetDeadline(time.Time) error { return nil }
func (f *fakeConn) Close() error                { return nil }

// TestOpenOrdered: with Ordered, request i goes on connection i % Conns and
// each connection sends its requests in order of i.
func TestOpenOrdered(t *testing.T) {
	const conns, rate = 3, 3000
	var mu sync.Mutex
	seen := map[int][]uint64{}
	r, err := RunOpen(context.Background(), OpenConfig{Conns: conns, Rate: rate, Duration: 200 * time.Millisecond, Ordered: true,
		Next: func(i uint64) []byte { return strconv.AppendUint(nil, i, 10) },
		Dial: func(_ context.Context, i int) (RoundTripper, error) {
			return &fakeConn{id: i, mu: &mu, seen: seen}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Done != 600 || r.Errors != 0 {
		t.Fatalf("done %d errors %d", r.Done, r.Errors)
	}
	for c, is := range seen {
		for k, i := range is {
			if i != uint64(c+k*conns) {
				t.Fatalf("connection %d sent %v", c, is)
			}
		}
	}
}

// TestOpenDeadConnection: a connection that fails counts every request
// handed to it as an error, and the run still ends on time.
func TestOpenDeadConnection(t *testing.T) {
	boom := errors.New("boom")
	start := time.Now()
	r, err := RunOpen(context.Background(), OpenConfig{Conns: 2, Rate: 1000, Duration: 100 * time.Millisecond,
		Next: constBody([]byte("1")),
		Dial: func(_ context.Context, i int) (RoundTripper, error) { return &fakeConn{err: boom}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Offered != 100 || r.Errors != 100 || r.Done != 0 || !errors.Is(r.FirstError, boom) || time.Since(start) > 2*time.Second {
		t.Fatalf("offered %d errors %d done %d first %v took %v", r.Offered, r.Errors, r.Done, r.FirstError, time.Since(start))
	}
}

// TestOpenDrainTimeout: answers that never come cost Duration +
// DrainTimeout at most and count as errors.
func TestOpenDrainTimeout(t *testing.T) {
	s := startEchoServer(t, 1, true)
	const d, drain = 100 * time.Millisecond, 200 * time.Millisecond
	start := time.Now()
	r, err := RunOpen(context.Background(), OpenConfig{Addr: s.addr(), Conns: 2, Rate: 100, Duration: d, DrainTimeout: drain,
		Next: constBody([]byte("x"))})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < d+drain || took > d+drain+2*time.Second {
		t.Fatalf("took %v, want about %v", took, d+drain)
	}
	if r.Offered != 10 || r.Errors != 10 || r.Done != 0 || r.FirstError == nil {
		t.Fatalf("offered %d errors %d done %d first %v", r.Offered, r.Errors, r.Done, r.FirstError)
	}
}

func TestOpenValidatesLimits(t *testing.T) {
	s := startEchoServer(t, 1, false)
	base := OpenConfig{Addr: s.addr(), Conns: 1, Rate: 10, Duration: 10 * time.Millisecond, Next: constBody([]byte("x"))}
	f := func(mutate func(*OpenConfig), want error) {
		t.Helper()
		cfg := base
		mutate(&cfg)
		_, err := RunOpen(context.Background(), cfg)
		if (err == nil) != (want == nil) || want != nil && want != errAny && !errors.Is(err, want) {
			t.Fatalf("err %v, want %v", err, want)
		}
	}
	f(func(c *OpenConfig) {}, nil)
	f(func(c *OpenConfig) { c.Conns = ConnsMax + 1 }, errAny)
	f(func(c *OpenConfig) { c.Conns = 0 }, errAny)
	f(func(c *OpenConfig) { c.Rate = 0 }, errAny)
	f(func(c *OpenConfig) { c.Rate = OpenRateMax + 1 }, errAny)
	f(func(c *OpenConfig) { c.Duration = OpenDurationMax + 1 }, errAny)
	f(func(c *OpenConfig) { c.Duration = 0 }, errAny)
	f(func(c *OpenConfig) { c.Next = nil }, errAny)
	f(func(c *OpenConfig) { c.Addr = "192.0.2.1:80" }, ErrNotLoopback)
}

var errAny = errors.New("any error")

// cannedConn answers every write with one canned response, in memory.
type cannedConn struct {
	net.Conn // unused methods
	resp     []byte
	pending  bool
}

func (c *cannedConn) Write(b []byte) (int, error) { c.pending = true; return len(b), nil }
func (c *cannedConn) Read(b []byte) (int, error) {
	if !c.pending {
		return 0, io.EOF
	}
	c.pending = false
	return copy(b, c.resp), nil
}

// TestOpenSendAllocs locks a connection's round trip and the recording of
// its answer to zero allocations once the buffers have grown (the server
// is in memory: a real one's allocations would count too).
func TestOpenSendAllocs(t *testing.T) {
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 41\r\n\r\n" +
		`{"jsonrpc":"2.0","id":1,"result":"0x50d"}`)
	c := &openConn{rt: NewHTTPConn(&cannedConn{resp: resp}, "127.0.0.1:1", "", "")}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}`)
	step := func() {
		status, got, err := c.rt.RoundTrip(body)
		if err != nil || status != 200 || len(got) != 41 {
			t.Fatalf("round trip: %d %q %v", status, got, err)
		}
		c.answer(time.Millisecond, time.Millisecond, time.Microsecond, true)
	}
	step()
	if allocs := testing.AllocsPerRun(1000, step); allocs != 0 {
		t.Fatalf("%v allocations per request, want 0", allocs)
	}
}

// blockedConn holds its first request until release is closed, then
// answers at once.
type blockedConn struct{ release chan struct{} }

func (b *blockedConn) RoundTrip(body []byte) (int, []byte, error) {
	<-b.release
	return 200, body, nil
}
func (b *blockedConn) SetDeadline(time.Time) error { return nil }
func (b *blockedConn) Close() error                { return nil }

// TestOpenQueueBound: while the only connection is stuck, no more than
// OpenQueueMax requests (plus the one in flight) are handed out; the rest
// wait in the scheduler and, once released, still count from their due
// times.
func TestOpenQueueBound(t *testing.T) {
	const stuck = 150 * time.Millisecond
	b := &blockedConn{release: make(chan struct{})}
	time.AfterFunc(stuck, func() { close(b.release) })
	var mu sync.Mutex
	var offered, handedWhileStuck int64
	start := time.Now()
	r, err := RunOpen(context.Background(), OpenConfig{Conns: 1, Rate: OpenRateMax, Duration: 200 * time.Millisecond,
		Window: 20 * time.Millisecond, Next: constBody([]byte("x")),
		Dial: func(context.Context, int) (RoundTripper, error) { return b, nil },
		Progress: func(w *Window) {
			mu.Lock()
			defer mu.Unlock()
			offered += w.Offered
			if time.Since(start) < stuck-10*time.Millisecond {
				handedWhileStuck = offered
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if handedWhileStuck == 0 || handedWhileStuck > OpenQueueMax+1 {
		t.Fatalf("%d requests handed out while the connection was stuck, want 1..%d", handedWhileStuck, OpenQueueMax+1)
	}
	if r.Offered != r.Done || r.Errors != 0 || r.Offered <= OpenQueueMax || r.Latency.Max() < stuck/2 {
		t.Fatalf("offered %d done %d errors %d max latency %v", r.Offered, r.Done, r.Errors, r.Latency.Max())
	}
}
