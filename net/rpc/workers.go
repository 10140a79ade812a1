package rpc

import (
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/net/server"
)

// The bounded worker model. A request with writes (a batch holding a
// transaction, an authorized admin write) waits for durability in place, so
// it cannot run on an event loop. It runs on one of Config.Workers worker
// goroutines, started by New, fed by a queue of Config.QueueMax jobs for the
// whole node. Nothing starts a goroutine per request:
//
//	event loop ─ reserve() ─▶ jobs (chan, cap QueueMax) ─▶ work() × Workers ─▶ runAll ─▶ answer
//	     │ full (QueueMax jobs, QueueBytesMax bytes): answered at once, HTTP 503 / WebSocket -32005
//	     └ WebSocket: a slot of the connection's WSInFlightMax first (else -32005)
//
// A lone eth_sendRawTransaction takes no worker on either transport: its
// answer is deferred until the transaction is durable (tx.go). Over
// WebSocket it still holds a slot of the connection's in-flight count
// until then.

// job is one request (body) with writes, waiting for a worker.
type job struct {
	body  []byte // a copy: the connection's buffer dies when Serve returns
	admin bool
	http  *server.Deferred // HTTP: answered with Complete
	ws    *server.WSConn   // WebSocket: answered with wsOwed; holds an in-flight slot
}

// reserve takes a place in the queue for a body of size bytes, or returns
// the refusal when QueueMax jobs are waiting or the bytes would pass
// QueueBytesMax (unless no other job holds any).
func (s *Service) reserve(size int) *jsonrpc.Error {
	if s.queued.Add(1) > int64(s.cfg.QueueMax) {
		s.queued.Add(-1)
		return s.errQueueFull
	}
	if total := s.queuedBytes.Add(int64(size)); total > int64(s.cfg.QueueBytesMax) && total > int64(size) {
		s.queuedBytes.Add(-int64(size))
		s.queued.Add(-1)
		return s.errQueueBytes
	}
	return nil
}

// enqueue hands j to the workers; it never blocks.
// REQUIRES: a place reserved with reserve.
func (s *Service) enqueue(j job) { s.jobs <- j }

// work is one worker: it runs jobs until Close.
func (s *Service) work() {
	defer s.workers.Done()
	for j := range s.jobs {
		s.queued.Add(-1)
		s.runJob(&j)
	}
}

// runJob runs a job's requests, writes waiting in place, and answers.
func (s *Service) runJob(j *job) {
	defer s.queuedBytes.Add(-int64(len(j.body)))
	if j.ws != nil && j.ws.Closed() {
		// Nobody is left to answer: drop the work a client left behind
		// when it went away, rather than let it hold a worker.
		wsStateOf(j.ws).release()
		return
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	// The body parsed on the event loop, so perr is nil; answered anyway.
	reqs, batch, perr := sc.parser.Parse(j.body)
	if perr != nil {
		sc.out = jsonrpc.AppendError(sc.out[:0], nil, perr)
	} else {
		sc.out = s.runAll(sc, reqs, batch, origin{admin: j.admin, ws: j.ws, worker: true}, nil, sc.out[:0])
	}
	if j.http != nil {
		j.http.Complete(200, sc.out) // copies the body
	} else {
		wsOwed(j.ws, sc.out)
		s.activate(j.ws, sc)
	}
	if cap(sc.out) > scratchRetainMax {
		sc.out = nil
	}
}
