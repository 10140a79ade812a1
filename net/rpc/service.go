package rpc

import (
	"bytes"
	"crypto/subtle"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/net/http1"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/ratelimit"
	"github.com/ledgervenue/node/net/server"
	"github.com/ledgervenue/node/net/subs"
)

// Config configures the dispatcher. The zero value of each limit picks its
// default.
type Config struct {
	Node *node.Node
	// Replication is the node's link to its followers or leader
	// (net/replicate, --nats): svc_metrics reports it, admin_promote
	// promotes a follower. Nil without replication.
	Replication Replication
	// AdminToken authorizes admin_* methods; empty disables them.
	AdminToken string
	// Manual is the node's clock when it runs under --clock manual; nil
	// makes admin_advanceTime refuse.
	Manual *node.ManualClock
	// Scenario is the player of --scenario: lab_scenario reads its
	// status. Nil: lab_scenario answers -32601.
	Scenario ScenarioPlayer
	// Hub serves eth_subscribe over WebSocket; nil refuses subscriptions.
	Hub *subs.Hub
	// Compat serves the shapes strict client decoders need where the spec
	// deviates from Ethereum (docs/decisions.md, "Client compatibility"):
	// transactionIndex 0x0, a block reference on every settled receipt and
	// transaction, and difficulty 0x0 in blocks; and -32000 refusals with
	// go-ethereum's message, so ethers and viem classify them (errors.go
	// gethMessage, docs/compat.md). Off: the spec's shapes and messages.
	Compat bool
	// Prefix is the service's own prefix on the wire: SPEC.md's svc_ (the
	// default) or the live network's pod_ (prefix.go).
	Prefix Prefix
	// Workers is the number of worker goroutines that run the requests
	// with writes, where writes wait for durability (DefaultWorkers).
	Workers int
	// QueueMax bounds the requests with writes waiting for a worker, for
	// the whole node (DefaultQueueMax). Beyond it a request is answered at
	// once: HTTP 503, or -32005 over WebSocket.
	QueueMax int
	// QueueBytesMax bounds the bytes of the requests with writes queued
	// for or running on the workers, for the whole node
	// (DefaultQueueBytesMax); beyond it as QueueMax. Each is a copy of its
	// body, which a worker parses again at a cost of up to ~45 times its
	// size (codec/jsonrpc, "Limits"). One request is always admitted when
	// none is queued or running, whatever its size (the transport bounds
	// it).
	QueueBytesMax int
	// WSInFlightMax bounds the messages of one WebSocket connection whose
	// answer is owed later: queued for or running on a worker, or a lone
	// eth_sendRawTransaction waiting for durability (DefaultWSInFlightMax).
	// Beyond it a message is answered at once with -32005.
	WSInFlightMax int
	// ResponseBytesMax bounds the answer to one request or batch
	// (DefaultResponseBytesMax); see runAll.
	ResponseBytesMax int
	// LogScanMax bounds the logs all the eth_getLogs calls of one request
	// or batch look at together (node.LogScanMax when zero): past it a
	// call gets -32602 saying to narrow the ranges or split the batch.
	LogScanMax int
	// Bots serves admin_startBots, admin_stopBots and admin_bots; nil
	// refuses them (ledgerd sets it under --dev).
	Bots BotsController
	// PPTWaitersMax bounds the svc_waitPastPerfectTime waits held for the
	// whole node (DefaultPPTWaitersMax); beyond it a wait is answered at
	// once with -32005. PPTWaitMax is how long one is held at most
	// (DefaultPPTWaitMax) before it is answered -32000 (pptwait.go).
	PPTWaitersMax int
	PPTWaitMax    time.Duration
	// RateLimit is --rate-limit: the rate-limit emulation in force at
	// start (ratelimit.go; the zero Config is off). lab_setRateLimits
	// replaces it.
	RateLimit ratelimit.Config
	// Dev is --dev: the anvil-compatible controls need no admin token (as
	// in anvil, the node binds to loopback) and the dev accounts sign for
	// clients (eth_accounts, eth_sendTransaction, …). Off, the controls
	// follow the admin rule and signing is refused.
	Dev bool
}

// Defaults of Config's limits.
const (
	// DefaultWorkers: enough workers that the group commit (a few ms)
	// batches many writers' waits, few enough that their stacks are noise.
	DefaultWorkers = 64
	// DefaultQueueMax: 4096 jobs, a burst of one-transaction batches from
	// many clients.
	DefaultQueueMax = 4096
	// DefaultQueueBytesMax: a write batch of 1000 transfers is about 250
	// KB, so 8 MiB holds dozens of them; the memory a hostile client can
	// make the workers hold stays a few hundred MB even in the worst case
	// of the parse.
	DefaultQueueBytesMax = 8 << 20
	// DefaultWSInFlightMax: a client pipelining more than 64 writes on one
	// connection gains nothing; the workers are shared by everyone.
	DefaultWSInFlightMax = 64
	// DefaultResponseBytesMax is go-ethereum's batch response limit
	// (rpc.BatchResponseMaxSize, 25 MB).
	DefaultResponseBytesMax = 25_000_000
)

// Service answers JSON-RPC requests. It implements server.Handler.
type Service struct {
	cfg   Config
	node  *node.Node
	shape shape // of Config.Compat and Config.Prefix

	// jobs is the worker queue. jobsQ counts the jobs accepted and not yet
	// taken by a worker, and the bytes of those not yet finished: a job is
	// sent only after its place was reserved, so the send never blocks.
	// Invariant: len(jobs) <= jobsQ.items <= cap(jobs) = QueueMax.
	jobs    chan job
	jobsQ   queueBudget
	workers sync.WaitGroup
	// admits is the admission stage's queue (admit.go), bounded by admitQ
	// as jobs is by jobsQ.
	admits    chan admitJob
	admitQ    queueBudget
	admitting sync.WaitGroup
	stats     rpcStats  // for the Prometheus metrics (stats.go)
	dl        delivery  // the lab's delivery faults (lab_delivery.go)
	waits     *pptWaits // svc_waitPastPerfectTime (pptwait.go)
	// devSend runs each dev account's eth_sendTransaction one at a time
	// (devsign.go).
	devSend [len(node.DevKeys)]sync.Mutex

	// limits is the rate-limit emulation in force, nil when off
	// (ratelimit.go); rateRefused counts its refusals by kind.
	limits      atomic.Pointer[ratelimit.Limiter]
	rateRefused [ratelimit.Kinds]atomic.Uint64

	// The refusals of the limits, built once with their values.
	errInFlight, errTooLarge, errLogBudget *jsonrpc.Error
}

var _ server.Handler = (*Service)(nil)

// New returns a dispatcher over cfg.Node and starts its Config.Workers
// worker goroutines. Close stops them.
func New(cfg Config) *Service {
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.QueueMax <= 0 {
		cfg.QueueMax = DefaultQueueMax
	}
	if cfg.QueueBytesMax <= 0 {
		cfg.QueueBytesMax = DefaultQueueBytesMax
	}
	if cfg.WSInFlightMax <= 0 {
		cfg.WSInFlightMax = DefaultWSInFlightMax
	}
	if cfg.ResponseBytesMax <= 0 {
		cfg.ResponseBytesMax = DefaultResponseBytesMax
	}
	if cfg.LogScanMax <= 0 {
		cfg.LogScanMax = node.LogScanMax
	}
	if cfg.PPTWaitersMax <= 0 {
		cfg.PPTWaitersMax = DefaultPPTWaitersMax
	}
	if cfg.PPTWaitMax <= 0 {
		cfg.PPTWaitMax = DefaultPPTWaitMax
	}
	s := &Service{cfg: cfg, node: cfg.Node, shape: newShape(cfg.Compat, cfg.Prefix), jobs: make(chan job, cfg.QueueMax),
		jobsQ:       newQueueBudget(cfg.QueueMax, cfg.QueueBytesMax, "requests with writes"),
		admits:      make(chan admitJob, cfg.QueueMax),
		admitQ:      newQueueBudget(cfg.QueueMax, cfg.QueueBytesMax, "transactions awaiting admission"),
		errInFlight: jsonrpc.LimitExceeded("too many requests in flight on this connection", cfg.WSInFlightMax),
		errTooLarge: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "response too large (max " + strconv.Itoa(cfg.ResponseBytesMax) + " bytes)"},
		errLogBudget: jsonrpc.InvalidParams("the eth_getLogs calls of this request looked at more than " +
			strconv.Itoa(cfg.LogScanMax) + " logs in all: narrow their ranges or split the batch"),
		waits: newPPTWaits(cfg.Node, cfg.PPTWaitersMax, cfg.PPTWaitMax),
	}
	s.SetRateLimits(cfg.RateLimit)
	s.workers.Add(cfg.Workers)
	for range cfg.Workers {
		go s.work()
	}
	s.admitting.Add(1)
	go s.admitter()
	return s
}

// Close stops the workers and the admitter once they have run what is
// already queued, and the waits' poller.
// REQUIRES: the server was stopped (no Serve or ServeWS runs or follows).
func (s *Service) Close() {
	s.waits.close()
	close(s.jobs)
	close(s.admits)
	s.workers.Wait()
	s.admitting.Wait()
}

// scratch is the per-call working memory. The event loops are pinned to
// threads, so sync.Pool's per-P caches give each loop its own scratch
// without the dispatcher knowing which loop it runs on.
type scratch struct {
	parser jsonrpc.Parser
	buf    []byte // hex-decoded raw transactions, call data
	out    []byte // a WebSocket message's or a worker job's answers
	// subscribed lists the subscriptions a WebSocket message created, to
	// start once its answer is written.
	subscribed []string
	// deferred: a lone eth_sendRawTransaction over WebSocket answers later
	// (ServeWS keeps the connection's in-flight slot taken).
	deferred bool
	// logBudget is what the eth_getLogs calls of the body being run may
	// still look at (Config.LogScanMax; runAll resets it).
	logBudget int
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// call is one request being executed.
type call struct {
	s   *Service
	sc  *scratch
	req *jsonrpc.Request
	// rl is the rate-limit emulation in force when the call began (nil:
	// off), loaded once by run.
	rl *ratelimit.Limiter
	origin
}

// origin is where a request came from.
type origin struct {
	admin bool
	// w is the HTTP response when the call runs on the event loop; nil on
	// a worker, where writes wait in place, and on WebSocket.
	w *server.Response
	// ws is the WebSocket connection the request came on; nil over HTTP.
	ws *server.WSConn
	// worker: the call runs on a worker, where a write waits in place.
	worker bool
	// lone: the call is the whole body (isLoneDeferred), so it may answer
	// later (owe).
	lone bool
	// ip is the client's address: the key of the rate limits' address
	// budget.
	ip netip.Addr
}

// Serve implements server.Handler.
func (s *Service) Serve(req *http1.Request, w *server.Response) {
	if isREST(req) {
		s.serveREST(req, w)
		return
	}
	s.dl.delayHTTP(w) // before anything defers the answer
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	reqs, batch, perr := sc.parse(req.Body)
	if perr != nil {
		s.stats.count(nil, false, true)
		w.Body = jsonrpc.AppendError(w.Body, nil, perr)
		return
	}
	o := origin{admin: s.authorized(req.Header("Authorization")), w: w, ip: w.RemoteIP()}
	switch {
	case isLoneDeferred(reqs, batch):
		o.lone = true
		c := call{s: s, sc: sc, req: &reqs[0], origin: o}
		w.Body = c.run(w.Body)
	case s.needsWorker(reqs, o.admin):
		// One request of a connection is served at a time (later ones wait
		// behind a deferred response), so HTTP needs no bound per
		// connection: only the node's queue can be full.
		if err := s.reserve(len(req.Body)); err != nil {
			w.Status = 503
			w.Body = s.runAll(sc, reqs, batch, o, err, w.Body)
			return
		}
		s.enqueue(job{body: bytes.Clone(req.Body), admin: o.admin, ip: o.ip, http: w.Defer()})
	default:
		w.Body = s.runAll(sc, reqs, batch, o, nil, w.Body)
	}
}

// runAll executes reqs in order and appends their answers (an array for a
// batch; nothing for notifications). With a refusal it runs none of them
// and answers each with it (an invalid one with its own error): a bound
// the whole body is beyond.
//
// The answers are bounded by Config.ResponseBytesMax: the call whose
// answer crosses it answers errTooLarge instead, and every later call of
// the batch answers errTooLarge without running; earlier answers stand.
// A write's answer (a hash or a small object) always stands, since the
// write happened: it may overshoot the bound by its own size. So the
// answer is at most ResponseBytesMax plus one write's answer plus one
// error per request (about 100 bytes each, BatchLimit at most).
func (s *Service) runAll(sc *scratch, reqs []jsonrpc.Request, batch bool, o origin, refusal *jsonrpc.Error, dst []byte) []byte {
	start, wrote := len(dst), false
	sc.logBudget = s.cfg.LogScanMax
	if batch {
		dst = append(dst, '[')
	}
	for i := range reqs {
		mark := len(dst)
		if wrote {
			dst = append(dst, ',')
		}
		c := call{s: s, sc: sc, req: &reqs[i], origin: o}
		switch begin := len(dst); {
		case refusal != nil:
			c.count(true)
			dst = c.refuse(dst, refusal)
		default:
			dst = c.run(dst)
			if len(dst)-start > s.cfg.ResponseBytesMax {
				refusal = s.errTooLarge
				if reqs[i].Invalid != nil || !isWrite(reqs[i].Method) {
					dst = c.refuse(dst[:begin], refusal)
				}
			}
		}
		if reqs[i].IsNotification() { // executed, never answered
			dst = dst[:mark]
			continue
		}
		wrote = true
	}
	switch {
	case batch && !wrote: // a batch of notifications gets no answer at all
		return dst[:start]
	case batch:
		return append(dst, ']')
	}
	return dst
}

func (s *Service) authorized(h []byte) bool {
	const prefix = "Bearer "
	if s.cfg.AdminToken == "" || len(h) <= len(prefix) || string(h[:len(prefix)]) != prefix {
		return false
	}
	return subtle.ConstantTimeCompare(h[len(prefix):], []byte(s.cfg.AdminToken)) == 1
}

// Replication is what the service needs of net/replicate.
type Replication interface {
	Status() node.ReplicationStatus
	Promote() error
}

func isWrite(method []byte) bool {
	switch string(method) {
	case "eth_sendRawTransaction", "svc_sendRawTransaction":
		return true
	case "admin_deposit", "admin_setBaseFee", "admin_advanceTime",
		"admin_createMarket", "admin_setOraclePrice", "admin_snapshot", "admin_lockAccount":
		return true
	case "eth_sendTransaction", "eth_signTypedData_v4": // devsign.go: waits for durability; bounded but costly
		return true
	case "admin_promote": // waits for the lease and the stream's end
		return true
	}
	if isControl(method) && !isControlRead(method) || isLabWorker(method) { // anvil.go, lab.go
		return true
	}
	return isStateControl(method)
}

// needsWorker reports whether reqs must run on a worker, not on the event
// loop: they hold a write, which waits for durability (hasWrite), or an
// index read while the market index takes a tick's step, which waits for
// it (readsIndex, node.IndexBusy). A lone send is neither: it answers
// through a deferred response (isLoneDeferred).
func (s *Service) needsWorker(reqs []jsonrpc.Request, admin bool) bool {
	return s.hasWrite(reqs, admin) || readsIndex(reqs) && s.node.IndexBusy()
}

// hasWrite reports whether reqs hold a write that must wait in place on a
// worker. An admin write without authorization is no write: it answers
// -32600 at once, on the event loop, and never takes a worker; so does an
// anvil control (anvil.go) without it outside --dev.
func (s *Service) hasWrite(reqs []jsonrpc.Request, admin bool) bool {
	for i := range reqs {
		m := reqs[i].Method
		if reqs[i].Invalid == nil && isWrite(m) && (admin || !bytes.HasPrefix(m, []byte("admin_")) && (s.cfg.Dev || !isControl(m) && !isStateControl(m) && !isLab(m))) {
			return true
		}
	}
	return false
}

// isLoneDeferred reports whether the body is one valid eth_ or
// svc_sendRawTransaction, or one svc_waitPastPerfectTime, which answer
// through a deferred response instead of taking a worker.
func isLoneDeferred(reqs []jsonrpc.Request, batch bool) bool {
	if batch || reqs[0].Invalid != nil {
		return false
	}
	m := string(reqs[0].Method)
	return m == "eth_sendRawTransaction" || m == "svc_sendRawTransaction" || m == "svc_waitPastPerfectTime"
}

// refuse appends the call's response without running it: its own error
// when it is invalid, else e.
func (c *call) refuse(dst []byte, e *jsonrpc.Error) []byte {
	if c.req.Invalid != nil {
		e = c.req.Invalid
	}
	return jsonrpc.AppendError(dst, c.req.ID, e)
}

// run executes the call and appends its full response object.
func (c *call) run(dst []byte) []byte {
	id := c.req.ID
	if c.req.Invalid != nil {
		c.count(true)
		return jsonrpc.AppendError(dst, id, c.req.Invalid)
	}
	if c.rl = c.s.limits.Load(); c.rl != nil {
		if err := c.limitCall(); err != nil {
			c.count(true)
			return jsonrpc.AppendError(dst, id, err)
		}
	}
	start := len(dst)
	dst = jsonrpc.AppendResultPrefix(dst, id)
	dst, err := c.dispatch(dst)
	c.count(err != nil && err != errDeferred)
	switch {
	case err == errDeferred:
		return dst[:start]
	case err != nil:
		return jsonrpc.AppendError(dst[:start], id, err)
	}
	return jsonrpc.AppendResultSuffix(dst)
}
