package rpc

import (
	"net/netip"
	"sync/atomic"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/net/server"
)

// The bounded worker model. A request with writes (a batch holding a
// transaction, an authorized admin write) waits for durability in place, so
// it cannot run on an event loop; nor can a read of the market index while
// a tick's downstream stage holds it (isIndexRead, or a REST clob read,
// clobReadsIndex; node.IndexBusy). It runs
// on one of Config.Workers worker goroutines, started by New, fed by a
// queue of Config.QueueMax jobs for the whole node (needsWorker). Nothing
// starts a goroutine per request:
//
//	event loop ─ reserve() ─▶ jobs (chan, cap QueueMax) ─▶ work() × Workers ─▶ runAll ─▶ answer
//	     │ full (QueueMax jobs, QueueBytesMax bytes): answered at once, HTTP 503 / WebSocket -32005
//	     └ WebSocket: a slot of the connection's WSInFlightMax first (else -32005)
//
// A lone eth_sendRawTransaction takes no worker on either transport: the
// event loop hands it to the admission stage (admit.go) and its answer is
// deferred until the transaction is durable (tx.go). Over WebSocket it
// still holds a slot of the connection's in-flight count until then.

// job is one request (body) with writes, waiting for a worker.
type job struct {
	body  []byte // a copy: the connection's buffer dies when Serve returns
	admin bool
	ip    netip.Addr       // the client's (origin.ip)
	rest  bool             // body is a clob read's request target (serveClobOrDefer)
	http  *server.Deferred // HTTP: answered with Complete
	ws    *server.WSConn   // WebSocket: answered with wsOwed; holds an in-flight slot
}

// queueBudget counts what one of the service's queues holds (the workers'
// jobs, the admissions) against Config.QueueMax items and
// Config.QueueBytesMax bytes. A place is reserved before the send, so a
// send on the queue's channel (cap QueueMax) never blocks.
type queueBudget struct {
	items, bytes          atomic.Int64
	itemsMax, bytesMax    int64
	errFull, errBytesOver *jsonrpc.Error
}

func newQueueBudget(itemsMax, bytesMax int, what string) queueBudget {
	return queueBudget{itemsMax: int64(itemsMax), bytesMax: int64(bytesMax),
		errFull:      jsonrpc.LimitExceeded("too many "+what+" queued on this node", itemsMax),
		errBytesOver: jsonrpc.LimitExceeded("too many bytes of "+what+" queued on this node", bytesMax)}
}

// reserve takes a place for an item of size bytes, or returns the refusal
// when itemsMax items are waiting or the bytes would pass bytesMax (unless
// no other item holds any).
func (q *queueBudget) reserve(size int) *jsonrpc.Error {
	if q.items.Add(1) > q.itemsMax {
		q.items.Add(-1)
		return q.errFull
	}
	if total := q.bytes.Add(int64(size)); total > q.bytesMax && total > int64(size) {
		q.bytes.Add(-int64(size))
		q.items.Add(-1)
		return q.errBytesOver
	}
	return nil
}

// taken gives back an item's place (its consumer took it off the channel);
// done gives back its bytes.
func (q *queueBudget) taken()        { q.items.Add(-1) }
func (q *queueBudget) done(size int) { q.bytes.Add(-int64(size)) }

// reserve takes a place in the worker queue for a body of size bytes.
func (s *Service) reserve(size int) *jsonrpc.Error { return s.jobsQ.reserve(size) }

// enqueue hands j to the workers; it never blocks.
// REQUIRES: a place reserved with reserve.
func (s *Service) enqueue(j job) { s.jobs <- j }

// work is one worker: it runs jobs until Close.
func (s *Service) work() {
	defer s.workers.Done()
	for j := range s.jobs {
		s.jobsQ.taken()
		s.runJob(&j)
	}
}

// runJob runs a job's requests, writes waiting in place, and answers.
func (s *Service) runJob(j *job) {
	defer s.jobsQ.done(len(j.body))
	if j.ws != nil && j.ws.Closed() {
		// Nobody is left to answer: drop the work a client left behind
		// when it went away, rather than let it hold a worker.
		wsStateOf(j.ws).release()
		return
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	if j.rest {
		s.runRESTJob(j, sc)
	} else {
		s.runRPCJob(j, sc)
	}
	if cap(sc.out) > scratchRetainMax {
		sc.out = nil
	}
}

// runRPCJob runs a job's JSON-RPC requests and answers.
func (s *Service) runRPCJob(j *job, sc *scratch) {
	// The body parsed on the event loop, so perr is nil; answered anyway.
	reqs, batch, perr := sc.parse(j.body)
	if perr != nil {
		sc.out = jsonrpc.AppendError(sc.out[:0], nil, perr)
	} else {
		sc.out = s.runAll(sc, reqs, batch, origin{admin: j.admin, ws: j.ws, worker: true, ip: j.ip}, nil, sc.out[:0])
	}
	if j.http != nil {
		j.http.Complete(200, sc.out) // copies the body
		return
	}
	wsOwed(j.ws, sc.out)
	s.activate(j.ws, sc)
}
