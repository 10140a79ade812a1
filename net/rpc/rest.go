package rpc

import (
	"bytes"
	"encoding/hex"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/http1"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/server"
	"github.com/ledgervenue/node/net/ui"
	"github.com/ledgervenue/node/persist"
)

// The REST surface (docs/rest.md), hand-parsed on the event loops: GET and
// HEAD on the bridge's /v1/bridge/... (docs/bridge.md §5) and the market
// data's /v1/clob/... and /v1/tx/{hash} (rest_clob.go), JSON bodies, JSON
// errors.
// Every path under /v1/ is REST whatever the verb (a POST there is 405,
// not JSON-RPC); a GET or HEAD outside /v1/ and /ui/ is 404.

// Listing bounds: ListLimitDefault rows without `limit`, at most
// ListLimitMax with it.
const (
	ListLimitDefault = 500
	ListLimitMax     = 1000
)

// restAllow is the Allow header of a 405 on a REST path.
const restAllow = "GET, HEAD"

const (
	pathConfig      = "/v1/bridge/config"
	pathWithdrawals = "/v1/bridge/withdrawals"
	pathByID        = "/v1/bridge/withdrawals/by-id/"
)

// isREST reports whether a request goes to the REST surface.
func isREST(req *http1.Request) bool {
	return string(req.Method) != "POST" || bytes.HasPrefix(req.Path, []byte("/v1/"))
}

// serveREST answers the REST paths and the web view (/ui/, package ui);
// everything else is 404.
func (s *Service) serveREST(req *http1.Request, w *server.Response) {
	if ui.Serve(req, w) {
		return
	}
	r, arg := routeOf(string(req.Path))
	switch {
	case r == routeNone:
		restError(w, 404, "not found")
	case string(req.Method) != "GET" && string(req.Method) != "HEAD":
		w.Allow = restAllow
		restError(w, 405, "method not allowed: "+restAllow)
	case r == routeConfig:
		if msg := parseQuery(req.Query, nil); msg != "" {
			restError(w, 400, msg)
			return
		}
		w.Body = appendBridgeConfig(w.Body, s.node.BridgeConfig(), s.cfg.Prefix)
	case r == routeLabReport:
		s.serveLabReportOrDefer(req, arg, w) // lab_report.go
	case r >= routeStatus:
		s.serveClobOrDefer(req, r, arg, w)
	case r == routeByID:
		s.serveByID(req, arg, w)
	case r == routeList:
		s.serveListing(req, nil, w)
	default:
		a, ok := parseHexBytes(arg, 20)
		if !ok {
			restError(w, 400, "bad account: want 0x and 40 hex digits")
			return
		}
		account := core.Address(a)
		s.serveListing(req, &account, w)
	}
}

// route is a REST path's endpoint.
type route int

const (
	routeNone    route = iota
	routeConfig        // /v1/bridge/config
	routeList          // /v1/bridge/withdrawals
	routeAccount       // /v1/bridge/withdrawals/{account}
	routeByID          // /v1/bridge/withdrawals/by-id/{tx_hash or withdrawal_id}
)

// routeOf finds path's endpoint and its path argument (account or hash).
func routeOf(path string) (route, string) {
	switch {
	case path == pathConfig:
		return routeConfig, ""
	case path == pathWithdrawals:
		return routeList, ""
	}
	if id, ok := strings.CutPrefix(path, pathByID); ok && id != "" && !strings.Contains(id, "/") {
		return routeByID, id
	}
	if a, ok := strings.CutPrefix(path, pathWithdrawals+"/"); ok && a != "" && !strings.Contains(a, "/") {
		return routeAccount, a
	}
	return clobRouteOf(path)
}

// serveClobOrDefer answers a clob route on the event loop, or, when it
// reads the market index while a tick holds it (clobReadsIndex,
// node.IndexBusy) or is the strategy report, hands it to a worker: the
// wait or the work must not hold up the loop. A full worker queue is a 503.
func (s *Service) serveClobOrDefer(req *http1.Request, r route, arg string, w *server.Response) {
	// The report always runs on a worker, as lab_strategyReport does
	// (isLabWorker): it costs milliseconds at its bounds, not a read's µs.
	if r != routeLabReport && (!clobReadsIndex(r) || !s.node.IndexBusy()) {
		s.serveClob(r, arg, req.Query, w)
		return
	}
	// The job's body is the request target, path?query: a path holds no '?'.
	target := make([]byte, 0, len(req.Path)+1+len(req.Query))
	target = append(append(append(target, req.Path...), '?'), req.Query...)
	if err := s.reserve(len(target)); err != nil {
		restError(w, 503, err.Message)
		return
	}
	s.enqueue(job{body: target, rest: true, http: w.Defer()})
}

// runRESTJob answers a deferred clob read on a worker.
func (s *Service) runRESTJob(j *job, sc *scratch) {
	path, query, _ := bytes.Cut(j.body, []byte("?"))
	r, arg := routeOf(string(path))
	w := server.Response{Status: 200, Body: sc.out[:0]}
	s.serveClob(r, arg, query, &w)
	sc.out = w.Body
	j.http.Complete(w.Status, w.Body) // copies the body
}

// restError answers status with body {"error": msg}.
func restError(w *server.Response, status int, msg string) {
	w.Status = status
	w.Body = append(w.Body[:0], `{"error":`...)
	w.Body = jsonrpc.AppendString(w.Body, msg)
	w.Body = append(w.Body, '}')
}

// parseHexBytes parses "0x" and 2n hex digits.
func parseHexBytes(s string, n int) ([]byte, bool) {
	if len(s) != 2+2*n || s[0] != '0' || s[1] != 'x' && s[1] != 'X' {
		return nil, false
	}
	b, err := hex.DecodeString(s[2:])
	return b, err == nil
}

// listQuery is a listing's query (docs/bridge.md §5).
type listQuery struct {
	since    int64
	hasSince bool
	sinceID  core.Hash
	hasID    bool
	limit    int
}

// parseQuery parses a query of name=value pairs into set, which takes each
// known name once; an unknown name, a repeated one, a pair without '=' or
// with a bad %-escape is an error message (empty pieces between '&' are
// skipped). Names and values are unescaped as a form encodes them
// (url.QueryUnescape): a browser's URLSearchParams writes a cursor's ':'
// as %3A.
func parseQuery(q []byte, set func(name, value string) string) string {
	seen := make(map[string]bool)
	for len(q) > 0 {
		var pair []byte
		pair, q, _ = bytes.Cut(q, []byte("&"))
		if len(pair) == 0 {
			continue
		}
		rawName, rawValue, ok := bytes.Cut(pair, []byte("="))
		name, err := url.QueryUnescape(string(rawName))
		value, verr := url.QueryUnescape(string(rawValue))
		if !ok || err != nil || verr != nil {
			return "malformed query parameter " + strconv.Quote(string(pair)) + ": want name=value, %-escaped"
		}
		if seen[name] {
			return "query parameter " + strconv.Quote(name) + " given twice"
		}
		seen[name] = true
		msg := "unknown query parameter " + strconv.Quote(name)
		if set != nil {
			msg = set(name, value)
		}
		if msg != "" {
			return msg
		}
	}
	return ""
}

// parseListQuery parses since, since_id and limit.
func parseListQuery(raw []byte) (listQuery, string) {
	q := listQuery{limit: ListLimitDefault}
	msg := parseQuery(raw, func(name, value string) string {
		switch name {
		case "since":
			v, err := strconv.ParseInt(value, 10, 64)
			if err != nil || v < 0 {
				return "bad since: want microseconds, a decimal integer >= 0"
			}
			q.since, q.hasSince = v, true
		case "since_id":
			h, ok := parseHexBytes(value, 32)
			if !ok {
				return "bad since_id: want a tx hash or withdrawal id, 0x and 64 hex digits"
			}
			q.sinceID, q.hasID = core.Hash(h), true
		case "limit":
			v, err := strconv.Atoi(value)
			if err != nil || v < 1 || v > ListLimitMax {
				return "bad limit: want 1.." + strconv.Itoa(ListLimitMax)
			}
			q.limit = v
		default:
			return "unknown query parameter " + strconv.Quote(name) + ": want since, since_id, limit"
		}
		return ""
	})
	if msg == "" && q.hasID && !q.hasSince {
		msg = "since_id needs since (the batch time of its row)"
	}
	return q, msg
}

// serveListing answers a withdrawal listing: rows ascending by
// (timestamp_us, position in the batch), from the query's cursor on.
func (s *Service) serveListing(req *http1.Request, account *core.Address, w *server.Response) {
	q, msg := parseListQuery(req.Query)
	if msg != "" {
		restError(w, 400, msg)
		return
	}
	var from persist.WithdrawalCursor
	switch {
	case q.hasID:
		wd, found, err := s.node.Withdrawal(q.sinceID)
		if err != nil {
			restError(w, 500, err.Error())
			return
		}
		if !found || wd.Row.Out.TickUs != q.since {
			restError(w, 400, "since_id is not a withdrawal of the batch at since")
			return
		}
		from = persist.WithdrawalCursor{TickUs: q.since, Pos: wd.Row.Pos + 1}
	case q.hasSince && q.since == math.MaxInt64:
		w.Body = append(w.Body, "[]"...)
		return
	case q.hasSince:
		from = persist.WithdrawalCursor{TickUs: q.since + 1}
	}
	rows, err := s.node.Withdrawals(nil, account, from, q.limit)
	if err != nil {
		restError(w, 500, err.Error())
		return
	}
	w.Body = append(w.Body, '[')
	for i := range rows {
		if i > 0 {
			w.Body = append(w.Body, ',')
		}
		w.Body = node.AppendWithdrawalUpdate(w.Body, &rows[i].Out)
	}
	w.Body = append(w.Body, ']')
}

// serveByID answers a withdrawal's status and, once claimable, its proof;
// id is its tx hash or its withdrawal id (node.Withdrawal takes either).
func (s *Service) serveByID(req *http1.Request, id string, w *server.Response) {
	if msg := parseQuery(req.Query, nil); msg != "" {
		restError(w, 400, msg)
		return
	}
	h, ok := parseHexBytes(id, 32)
	if !ok {
		restError(w, 400, "bad tx hash or withdrawal id: want 0x and 64 hex digits")
		return
	}
	wd, found, err := s.node.Withdrawal(core.Hash(h))
	switch {
	case err != nil:
		restError(w, 500, err.Error())
	case !found:
		restError(w, 404, "withdrawal not found")
	default:
		w.Body = append(w.Body, `{"withdrawal":`...)
		w.Body = node.AppendWithdrawalUpdate(w.Body, &wd.Row.Out)
		w.Body = append(w.Body, `,"status":`...)
		w.Body = jsonrpc.AppendString(w.Body, wd.Status)
		if wd.Proof != nil {
			w.Body = append(w.Body, `,"proof":`...)
			w.Body = appendClaimProof(w.Body, wd.Proof)
		}
		w.Body = append(w.Body, '}')
	}
}

// appendClaimProof appends the claim proof object (docs/bridge.md §4):
// proof and aux_tx_suffix as arrays of byte values.
func appendClaimProof(dst []byte, p *node.ClaimProof) []byte {
	dst = append(dst, `{"amount":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &p.Amount)
	dst = append(dst, `,"to":`...)
	dst = jsonrpc.AppendData(dst, p.To[:])
	dst = append(dst, `,"token":`...)
	dst = jsonrpc.AppendData(dst, p.Token[:])
	dst = append(dst, `,"proof":`...)
	dst = appendByteArray(dst, p.Proof)
	dst = append(dst, `,"aux_tx_suffix":`...)
	dst = appendByteArray(dst, p.Aux[:])
	dst = append(dst, `,"claim_hash":`...)
	dst = jsonrpc.AppendData(dst, p.ClaimHash[:])
	return append(dst, '}')
}

func appendByteArray(dst, b []byte) []byte {
	dst = append(dst, '[')
	for i, c := range b {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendUint(dst, uint64(c), 10)
	}
	return append(dst, ']')
}

// appendBridgeConfig appends the configuration object (docs/bridge.md §1),
// its tokens' ledger-side address keyed svc_token or pod_token by p.
func appendBridgeConfig(dst []byte, c *core.BridgeConfig, p Prefix) []byte {
	dst = append(dst, `{"claim_chain_id":`...)
	dst = strconv.AppendUint(dst, c.ClaimChainID, 10)
	dst = append(dst, `,"source_contract":`...)
	dst = jsonrpc.AppendData(dst, c.SourceContract[:])
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendUint(dst, c.Version, 10)
	dst = append(dst, `,"tokens":[`...)
	for i := range c.Tokens {
		t := &c.Tokens[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"`...)
		dst = append(dst, p.String()...)
		dst = append(dst, `_token":`...)
		dst = jsonrpc.AppendData(dst, t.Token[:])
		dst = append(dst, `,"l1_token":`...)
		dst = jsonrpc.AppendData(dst, t.L1Token[:])
		dst = append(dst, `,"decimals":`...)
		dst = strconv.AppendUint(dst, uint64(t.Decimals), 10)
		dst = append(dst, `,"min":`...)
		dst = jsonrpc.AppendQuantityU256(dst, &t.Min)
		dst = append(dst, `,"max":`...)
		dst = jsonrpc.AppendQuantityU256(dst, &t.Max)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// bridgeClaimProof answers svc_getBridgeClaimProof([tx_hash]): the claim
// proof object, or null while there is none (unknown, pending or refused).
// A withdrawal id names the withdrawal as well as its tx hash.
func (c *call) bridgeClaimProof(dst []byte) ([]byte, *jsonrpc.Error) {
	h, jerr := c.hash(0)
	if jerr != nil {
		return dst, jerr
	}
	wd, found, err := c.s.node.Withdrawal(h)
	switch {
	case err != nil:
		return dst, jsonrpc.ErrInternal
	case !found || wd.Proof == nil:
		return append(dst, "null"...), nil
	}
	return appendClaimProof(dst, wd.Proof), nil
}
