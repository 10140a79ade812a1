package load

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestRunStopsOnRequestCount(t *testing.T) {
	s := startEchoServer(t, 1, false)
	f := func(conns, pipeline int, requests int64) {
		t.Helper()
		before := s.requests.Load()
		r, err := Run(context.Background(), Config{Addr: s.addr(), Conns: conns, Pipeline: pipeline,
			Requests: requests, Duration: time.Minute, Body: []byte(`{"id":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		served := s.requests.Load() - before
		if r.Sent != requests || r.Done != requests || r.Errors != 0 || served != requests || !r.Exhausted {
			t.Fatalf("conns %d pipeline %d: sent %d done %d errors %d served %d exhausted %v, want %d each",
				conns, pipeline, r.Sent, r.Done, r.Errors, served, r.Exhausted, requests)
		}
		if r.Latency.Count() != uint64(requests) || r.Rate() <= 0 {
			t.Fatalf("latency count %d rate %v", r.Latency.Count(), r.Rate())
		}
	}
	f(1, 1, 1)
	f(1, 1, 100)
	f(4, 8, 1000)
	f(16, 3, 1001)
}

// TestRunPipelines drives a server that answers only when `pipeline`
// requests of a connection have arrived: it completes only if the client
// really keeps that many in flight. One connection, because connections
// draw from a shared pool of tickets: with two, one may end on a partial
// window that this server never answers.
func TestRunPipelines(t *testing.T) {
	const pipeline = 8
	s := startEchoServer(t, pipeline, false)
	r, err := Run(context.Background(), Config{Addr: s.addr(), Conns: 1, Pipeline: pipeline,
		Requests: pipeline * 10, Duration: time.Minute, DrainTimeout: 2 * time.Second, Body: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if r.Done != pipeline*10 || r.Errors != 0 {
		t.Fatalf("done %d errors %d (first error %v)", r.Done, r.Errors, r.FirstError)
	}
}

// TestRunNextOrdersEachSlot checks the slot discipline that the transfer
// scenario relies on: request seq is sent only after the answer to
// seq-Pipeline arrived, and answers come back in order.
func TestRunNextOrdersEachSlot(t *testing.T) {
	const conns, pipeline, perSlot = 3, 4, 25
	s := startEchoServer(t, 1, false)
	var mu sync.Mutex
	answered := map[string]bool{}
	next := func(conn int, seq uint64) []byte {
		if seq >= pipeline*perSlot {
			return nil
		}
		if seq >= pipeline {
			prev := strconv.Itoa(conn) + "/" + strconv.FormatUint(seq-pipeline, 10)
			mu.Lock()
			ok := answered[prev]
			mu.Unlock()
			if !ok {
				t.Errorf("request %d/%d sent before the answer to %s", conn, seq, prev)
			}
		}
		return []byte(strconv.Itoa(conn) + "/" + strconv.FormatUint(seq, 10))
	}
	check := func(status int, body []byte) bool {
		mu.Lock()
		answered[string(body)] = true
		mu.Unlock()
		return status == 200
	}
	r, err := Run(context.Background(), Config{Addr: s.addr(), Conns: conns, Pipeline: pipeline,
		Requests: 1 << 30, Duration: time.Minute, Next: next, Check: check})
	if err != nil {
		t.Fatal(err)
	}
	if r.Done != conns*pipeline*perSlot || r.Errors != 0 || !r.Exhausted || len(answered) != int(r.Done) {
		t.Fatalf("done %d errors %d exhausted %v answered %d", r.Done, r.Errors, r.Exhausted, len(answered))
	}
}

func TestRunStopsOnTime(t *testing.T) {
	s := startEchoServer(t, 1, false)
	const d = 300 * time.Millisecond
	start := time.Now()
	r, err := Run(context.Background(), Config{Addr: s.addr(), Conns: 4, Pipeline: 2,
		Requests: 1 << 40, Duration: d, Body: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if took < d || took > d+2*time.Second || r.Exhausted || r.Errors != 0 || r.Done == 0 {
		t.Fatalf("took %v for %v: exhausted %v errors %d done %d", took, d, r.Exhausted, r.Errors, r.Done)
	}
	if r.Elapsed < d || r.Elapsed > took {
		t.Fatalf("elapsed %v, want between %v and %v", r.Elapsed, d, took)
	}
}

// TestRunDrainTimeout: a server that never answers cannot hold the client
// past Duration + DrainTimeout; the requests in flight count as errors.
func TestRunDrainTimeout(t *testing.T) {
	s := startEchoServer(t, 1, true)
	const d, drain = 100 * time.Millisecond, 200 * time.Millisecond
	start := time.Now()
	r, err := Run(context.Background(), Config{Addr: s.addr(), Conns: 3, Pipeline: 2,
		Requests: 1 << 40, Duration: d, DrainTimeout: drain, Body: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if took < d+drain || took > d+drain+2*time.Second {
		t.Fatalf("took %v, want about %v", took, d+drain)
	}
	if r.Sent != 6 || r.Done != 0 || r.Errors != 6 || r.FirstError == nil {
		t.Fatalf("sent %d done %d errors %d first error %v", r.Sent, r.Done, r.Errors, r.FirstError)
	}
}

func TestRunCancel(t *testing.T) {
	s := startEchoServer(t, 1, true)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	r, err := Run(ctx, Config{Addr: s.addr(), Conns: 2, Pipeline: 1, Requests: 10, Duration: time.Minute, Body: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second || r.Errors != 2 {
		t.Fatalf("took %v, errors %d", took, r.Errors)
	}
}

func TestRunCountsCheckFailures(t *testing.T) {
	s := startEchoServer(t, 1, false)
	// One connection: sequence numbers are per connection and the global
	// request budget splits unevenly between several, so only with one is
	// the number of odd sequence numbers (the failing checks) known.
	r, err := Run(context.Background(), Config{Addr: s.addr(), Conns: 1, Pipeline: 2, Requests: 40, Duration: time.Minute,
		Next:  func(conn int, seq uint64) []byte { return []byte(strconv.FormatUint(seq%2, 10)) },
		Check: func(status int, body []byte) bool { return status == 200 && bytes.Equal(body, []byte("0")) }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Done != 40 || r.Errors != 20 {
		t.Fatalf("done %d errors %d", r.Done, r.Errors)
	}
}

func TestRunRefusesNonLoopback(t *testing.T) {
	f := func(addr string, wantErr error) {
		t.Helper()
		err := CheckLoopback(addr)
		if !errors.Is(err, wantErr) || (wantErr == nil) != (err == nil) {
			t.Fatalf("CheckLoopback(%q) = %v, want %v", addr, err, wantErr)
		}
	}
	f("127.0.0.1:8545", nil)
	f("127.1.2.3:80", nil)
	f("[::1]:8545", nil)
	f("localhost:8545", nil)
	f("10.0.0.1:8545", ErrNotLoopback)
	f("0.0.0.0:8545", ErrNotLoopback)
	f("[::]:8545", ErrNotLoopback)
	f("example.com:80", ErrNotLoopback)
	f("localhost.example.com:80", ErrNotLoopback)
	f("192.0.2.1:80", ErrNotLoopback)

	_, err := Run(context.Background(), Config{Addr: "192.0.2.1:80", Conns: 1, Pipeline: 1, Requests: 1,
		Duration: time.Second, Body: []byte("x")})
	if !errors.Is(err, ErrNotLoopback) {
		t.Fatalf("Run to 192.0.2.1: %v, want ErrNotLoopback", err)
	}
	if err := loopbackControl("tcp", "192.0.2.1:80", nil); !errors.Is(err, ErrNotLoopback) {
		t.Fatalf("loopbackControl: %v", err)
	}
	if err := loopbackControl("tcp", "127.0.0.1:80", nil); err != nil {
		t.Fatalf("loopbackControl: %v", err)
	}
}

func TestRunValidatesLimits(t *testing.T) {
	s := startEchoServer(t, 1, false)
	base := Config{Addr: s.addr(), Conns: 1, Pipeline: 1, Requests: 1, Duration: time.Second, Body: []byte("x")}
	f := func(mutate func(*Config), wantOK bool) {
		t.Helper()
		cfg := base
		mutate(&cfg)
		_, err := Run(context.Background(), cfg)
		if (err == nil) != wantOK {
			t.Fatalf("config %+v: err %v, want ok=%v", cfg, err, wantOK)
		}
	}
	f(func(c *Config) { c.Conns = ConnsMax + 1 }, false)
	f(func(c *Config) { c.Conns = 0 }, false)
	f(func(c *Config) { c.Pipeline = PipelineMax + 1 }, false)
	f(func(c *Config) { c.Pipeline = PipelineMax }, true)
	f(func(c *Config) { c.Pipeline = 0 }, false)
	f(func(c *Config) { c.Requests = 0 }, false)
	f(func(c *Config) { c.Duration = 0 }, false)
	f(func(c *Config) { c.Body = nil }, false)
	f(func(c *Config) { c.Addr = "127.0.0.1" }, false)
}

func TestRunDialFailure(t *testing.T) {
	s := startEchoServer(t, 1, false)
	addr := s.addr()
	s.ln.Close()
	_, err := Run(context.Background(), Config{Addr: addr, Conns: 2, Pipeline: 1, Requests: 1, Duration: time.Second, Body: []byte("x")})
	if err == nil {
		t.Fatal("dialling a closed port succeeded")
	}
}
