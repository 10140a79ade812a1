package rpc

import (
	"crypto/subtle"
	"sync"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/net/http1"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/server"
	"github.com/ledgervenue/node/net/subs"
)

// Config configures the dispatcher.
type Config struct {
	Node *node.Node
	// AdminToken authorizes admin_* methods; empty disables them.
	AdminToken string
	// Manual is the node's clock when it runs under --clock manual; nil
	// makes admin_advanceTime refuse.
	Manual *node.ManualClock
	// Hub serves eth_subscribe over WebSocket; nil refuses subscriptions.
	Hub *subs.Hub
	// Compat serves the shapes strict client decoders need where the spec
	// deviates from Ethereum (docs/decisions.md, "Client compatibility"):
	// transactionIndex 0x0, a block reference on every settled receipt and
	// transaction, and difficulty 0x0 in blocks. Off: the spec's shapes.
	Compat bool
}

// Service answers JSON-RPC requests. It implements server.Handler.
type Service struct {
	cfg  Config
	node *node.Node
}

var _ server.Handler = (*Service)(nil)

// New returns a dispatcher over cfg.Node.
func New(cfg Config) *Service { return &Service{cfg: cfg, node: cfg.Node} }

// scratch is the per-call working memory. The event loops are pinned to
// threads, so sync.Pool's per-P caches give each loop its own scratch
// without the dispatcher knowing which loop it runs on.
type scratch struct {
	parser jsonrpc.Parser
	buf    []byte // hex-decoded raw transactions, call data
	out    []byte // a WebSocket message's answers
	// subscribed lists the subscriptions a WebSocket message created, to
	// start once its answer is written.
	subscribed []string
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// call is one request being executed.
type call struct {
	s   *Service
	sc  *scratch
	req *jsonrpc.Request
	origin
}

// origin is where a request came from.
type origin struct {
	admin bool
	// w is the HTTP response when the call runs on the event loop; nil on
	// the blocking path, where writes wait in place, and on WebSocket.
	w *server.Response
	// ws is the WebSocket connection the request came on; nil over HTTP.
	ws *server.WSConn
}

// Serve implements server.Handler.
func (s *Service) Serve(req *http1.Request, w *server.Response) {
	if string(req.Method) != "POST" {
		s.serveREST(req, w)
		return
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	reqs, batch, perr := sc.parser.Parse(req.Body)
	if perr != nil {
		w.Body = jsonrpc.AppendError(w.Body, nil, perr)
		return
	}
	o := origin{admin: s.authorized(req.Header("Authorization")), w: w}
	switch {
	case !batch && reqs[0].Invalid == nil && string(reqs[0].Method) == "eth_sendRawTransaction":
		c := call{s: s, sc: sc, req: &reqs[0], origin: o}
		w.Body = c.run(w.Body)
	case hasWrite(reqs):
		d := w.Defer()
		s.runBlocking(req.Body, origin{admin: o.admin}, func(out []byte, _ *scratch) { d.Complete(200, out) })
	default:
		w.Body = s.runAll(sc, reqs, batch, o, w.Body)
	}
}

// runAll executes reqs in order and appends their answers (an array for a
// batch; nothing for notifications).
func (s *Service) runAll(sc *scratch, reqs []jsonrpc.Request, batch bool, o origin, dst []byte) []byte {
	start, wrote := len(dst), false
	if batch {
		dst = append(dst, '[')
	}
	for i := range reqs {
		mark := len(dst)
		if wrote {
			dst = append(dst, ',')
		}
		c := call{s: s, sc: sc, req: &reqs[i], origin: o}
		dst = c.run(dst)
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

// runBlocking executes a request with writes on its own goroutine, where
// writes wait in place, and hands the answer to done (with the scratch the
// request ran on, valid during the call).
func (s *Service) runBlocking(body []byte, o origin, done func(out []byte, sc *scratch)) {
	body = append([]byte(nil), body...) // the connection's buffer dies when Serve returns
	go func() {
		sc := scratchPool.Get().(*scratch)
		defer scratchPool.Put(sc)
		reqs, batch, perr := sc.parser.Parse(body)
		var out []byte
		if perr != nil {
			out = jsonrpc.AppendError(nil, nil, perr)
		} else {
			out = s.runAll(sc, reqs, batch, o, nil)
		}
		done(out, sc)
	}()
}

func (s *Service) authorized(h []byte) bool {
	const prefix = "Bearer "
	if s.cfg.AdminToken == "" || len(h) <= len(prefix) || string(h[:len(prefix)]) != prefix {
		return false
	}
	return subtle.ConstantTimeCompare(h[len(prefix):], []byte(s.cfg.AdminToken)) == 1
}

func isWrite(method []byte) bool {
	switch string(method) {
	case "eth_sendRawTransaction", "admin_deposit", "admin_setBaseFee", "admin_advanceTime", "admin_createMarket", "admin_snapshot":
		return true
	}
	return false
}

func hasWrite(reqs []jsonrpc.Request) bool {
	for i := range reqs {
		if reqs[i].Invalid == nil && isWrite(reqs[i].Method) {
			return true
		}
	}
	return false
}

// run executes the call and appends its full response object.
func (c *call) run(dst []byte) []byte {
	id := c.req.ID
	if c.req.Invalid != nil {
		return jsonrpc.AppendError(dst, id, c.req.Invalid)
	}
	start := len(dst)
	dst = jsonrpc.AppendResultPrefix(dst, id)
	dst, err := c.dispatch(dst)
	switch {
	case err == errDeferred:
		return dst[:start]
	case err != nil:
		return jsonrpc.AppendError(dst[:start], id, err)
	}
	return jsonrpc.AppendResultSuffix(dst)
}
