package rpc

import (
	"math"
	"strconv"
	"strings"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/codec/obwire"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/server"
)

// The market-data reads of the REST surface (docs/rest.md): GET and HEAD on
// /v1/clob/... and /v1/tx/{hash}, what the live network's trading SDK reads
// (its rest.ts). They answer the ob_ methods' data (the same queries of
// core/marketdata and node) in the live indexer's shapes
// (obwire.AppendXxxREST): decimal amounts, µs times, seconds in queries.
// None waits for a tick's auction; the reads that take the market index's
// lock run on a worker while a tick holds it (clobReadsIndex), as the ob_
// methods do.

// Bounds of the REST clob reads (docs/limits.md). A limit beyond its
// maximum is clamped (as the ob_ methods and the live network do); below 1
// it is a 400.
const (
	// CandlesRESTLimitMax bounds one candles answer, the live network's
	// cap; it is also the default.
	CandlesRESTLimitMax = 500
	// Orders pages: marketdata.OrdersLimitDefault (50) by default, at most
	// marketdata.OrdersLimitMax (200). Triggers pages:
	// marketdata.TriggersLimitMax (200), also the default. Leaderboard
	// pages: marketdata.RankedLimitDefault (20), at most RankedLimitMax
	// (100). Backstop transfers: the newest marketdata.BackstopLimitMax
	// (200), one page.

	// secondsMax is the largest time in seconds a query takes: its µs fit
	// an int64.
	secondsMax = math.MaxInt64 / 1_000_000
	// offsetMax bounds a leaderboard offset (as ob_getRankedPositions).
	offsetMax = 1 << 40
)

// The clob routes (route values after the bridge's, rest.go).
const (
	routeStatus      = routeByID + 1 + iota // /v1/clob/status
	routeMarkets                            // /v1/clob/markets
	routeStats                              // /v1/clob/markets/stats
	routeLeaderboard                        // /v1/clob/leaderboard
	routeCandles                            // /v1/clob/candles/{id}
	routeOrderbook                          // /v1/clob/orderbook/{id}
	routeOrders                             // /v1/clob/orders/{account}
	routePositions                          // /v1/clob/positions/{account}
	routeBalances                           // /v1/clob/balances/{account}
	routeTriggers                           // /v1/clob/triggers/{account}
	routeBackstop                           // /v1/clob/backstop-transfers/{account}
	routeTx                                 // /v1/tx/{hash}
	routeLabReport                          // /v1/lab/report/{account} (lab_report.go)
)

// clobPaths are the routes without a path argument; clobPrefixes those
// with one, after the prefix.
var (
	clobPaths = [...]struct {
		path string
		r    route
	}{
		{"/v1/clob/status", routeStatus},
		{"/v1/clob/markets", routeMarkets},
		{"/v1/clob/markets/stats", routeStats},
		{"/v1/clob/leaderboard", routeLeaderboard},
	}
	clobPrefixes = [...]struct {
		prefix string
		r      route
	}{
		{"/v1/clob/candles/", routeCandles},
		{"/v1/clob/orderbook/", routeOrderbook},
		{"/v1/clob/orders/", routeOrders},
		{"/v1/clob/positions/", routePositions},
		{"/v1/clob/balances/", routeBalances},
		{"/v1/clob/triggers/", routeTriggers},
		{"/v1/clob/backstop-transfers/", routeBackstop},
		{"/v1/tx/", routeTx},
		{"/v1/lab/report/", routeLabReport},
	}
)

// clobRouteOf finds a clob path's route and its argument; routeNone if
// path is none of them.
func clobRouteOf(path string) (route, string) {
	for _, p := range clobPaths {
		if path == p.path {
			return p.r, ""
		}
	}
	for _, p := range clobPrefixes {
		if arg, ok := strings.CutPrefix(path, p.prefix); ok && arg != "" && !strings.Contains(arg, "/") {
			return p.r, arg
		}
	}
	return routeNone, ""
}

// clobReadsIndex reports whether route r reads under the market index's
// lock (node.ReadIndex, or node.Positions, which takes it too): while a
// tick holds that lock the read runs on a worker (serveREST), as an ob_
// index read does (needsWorker).
func clobReadsIndex(r route) bool {
	switch r {
	case routeStatus, routeMarkets, routeStats, routeLeaderboard, routeCandles,
		routeOrders, routePositions, routeBalances, routeBackstop, routeLabReport:
		return true
	}
	return false
}

// serveClob answers a clob route: its query and argument are checked
// first (400 naming what is wrong), then read.
func (s *Service) serveClob(r route, arg string, query []byte, w *server.Response) {
	switch r {
	case routeStats:
		s.serveStats(query, w)
		return
	case routeCandles:
		s.serveCandles(arg, query, w)
		return
	case routeOrders:
		s.serveOrders(arg, query, w)
		return
	case routeTriggers:
		s.serveTriggers(arg, query, w)
		return
	case routeLeaderboard:
		s.serveLeaderboard(query, w)
		return
	case routeLabReport:
		s.serveLabReport(arg, query, w)
		return
	}
	if msg := parseQuery(query, nil); msg != "" {
		restError(w, 400, msg)
		return
	}
	switch r {
	case routeStatus:
		s.node.ReadIndex(func(x *marketdata.Index) {
			w.Body = strconv.AppendInt(append(w.Body, `{"solution_now":`...), x.NowUs(), 10)
			w.Body = append(w.Body, '}')
		})
	case routeMarkets:
		s.node.ReadIndex(func(x *marketdata.Index) { w.Body = obwire.AppendMarketsREST(w.Body, x.Markets(nil)) })
	case routeOrderbook:
		s.serveOrderbook(arg, w)
	case routeTx:
		s.serveTx(arg, w)
	default: // the account routes without a query
		a, ok := parseAccount(arg, w)
		if !ok {
			return
		}
		switch r {
		case routePositions:
			d := s.node.Positions(a)
			w.Body = obwire.AppendPositionsREST(w.Body, &d)
		case routeBalances:
			d := s.node.Positions(a)
			w.Body = obwire.AppendBalancesREST(w.Body, &d)
		default: // routeBackstop
			q := marketdata.BackstopQuery{User: a, HasUser: true, Limit: marketdata.BackstopLimitMax}
			s.node.ReadIndex(func(x *marketdata.Index) {
				page := x.BackstopTransfers(&q)
				w.Body = obwire.AppendBackstopREST(w.Body, &page, x.NowUs())
			})
		}
	}
}

// accountQuery parses query into set (parseQuery), then the account path
// argument; on bad input it answers 400 and ok is false.
func accountQuery(arg string, query []byte, w *server.Response, set func(name, value string) string) (a clob.Address, ok bool) {
	if msg := parseQuery(query, set); msg != "" {
		restError(w, 400, msg)
		return a, false
	}
	return parseAccount(arg, w)
}

// parseAccount reads an account path argument, or answers 400.
func parseAccount(arg string, w *server.Response) (clob.Address, bool) {
	a, ok := parseHexBytes(arg, 20)
	if !ok {
		restError(w, 400, "bad account: want 0x and 40 hex digits")
		return clob.Address{}, false
	}
	return clob.Address(a), true
}

// parseMarket reads a market id (a path argument or the orderbook query
// parameter), or returns the 400's message; known tells whether a market
// has that id.
func parseMarket(s string, known func(clob.Hash) bool) (clob.Hash, string) {
	h, ok := parseHexBytes(s, 32)
	switch {
	case !ok:
		return clob.Hash{}, "bad market id: want 0x and 64 hex digits"
	case !known(clob.Hash(h)):
		return clob.Hash{}, "unknown market id " + s
	}
	return clob.Hash(h), ""
}

// marketKnown reports whether a market has id (its book is published).
func (s *Service) marketKnown(id clob.Hash) bool {
	_, ok := s.node.Orderbook(id, 1)
	return ok
}

// parseSeconds reads a time in whole seconds (≥ 0) as µs.
func parseSeconds(name, value string) (int64, string) {
	v, err := strconv.ParseInt(value, 10, 64)
	if err != nil || v < 0 || v > secondsMax {
		return 0, "bad " + name + ": want seconds, a decimal integer from 0 to " + strconv.Itoa(secondsMax)
	}
	return v * 1_000_000, ""
}

// parseLimit reads a page limit: at least 1, clamped to max.
func parseLimit(value string, max int) (int, string) {
	v, err := strconv.ParseUint(value, 10, 64)
	if err != nil || v < 1 {
		return 0, "bad limit: want an integer of at least 1 (at most " + strconv.Itoa(max) + " are returned)"
	}
	return int(min(v, uint64(max))), ""
}

func unknownParam(name, takes string) string {
	return "unknown query parameter " + strconv.Quote(name) + ": want " + takes
}

// serveStats answers /v1/clob/markets/stats[?to=seconds]: the figures as
// of just before to (exclusive, as the candles' to), else the newest
// (marketdata.Index.MarketsAt).
func (s *Service) serveStats(query []byte, w *server.Response) {
	atUs := int64(math.MaxInt64)
	if msg := parseQuery(query, func(name, value string) string {
		if name != "to" {
			return unknownParam(name, "to")
		}
		toUs, msg := parseSeconds("to", value)
		atUs = toUs - 1
		return msg
	}); msg != "" {
		restError(w, 400, msg)
		return
	}
	s.node.ReadIndex(func(x *marketdata.Index) {
		w.Body = obwire.AppendMarketStatsREST(w.Body, x.MarketsAt(nil, atUs), x.NowUs())
	})
}

// candlesQuery is a candles request: resolution required, from (default
// 0) inclusive and to exclusive (default none), in seconds.
type candlesQuery struct {
	res           marketdata.Resolution
	hasRes, hasTo bool
	fromUs, toUs  int64
	limit         int
}

func parseCandlesQuery(raw []byte) (candlesQuery, string) {
	q := candlesQuery{limit: CandlesRESTLimitMax}
	msg := parseQuery(raw, func(name, value string) string {
		var msg string
		switch name {
		case "resolution":
			if q.res, q.hasRes = marketdata.ResolutionNamed([]byte(value)); !q.hasRes {
				return "bad resolution " + strconv.Quote(value) + ": want one of 1m, 5m, 15m, 1h, 4h, 1d"
			}
		case "from":
			q.fromUs, msg = parseSeconds("from", value)
		case "to":
			q.toUs, msg = parseSeconds("to", value)
			q.hasTo = true
		case "limit":
			q.limit, msg = parseLimit(value, CandlesRESTLimitMax)
		default:
			return unknownParam(name, "resolution, from, to, limit")
		}
		return msg
	})
	switch {
	case msg != "":
	case !q.hasRes:
		msg = "resolution is required: one of 1m, 5m, 15m, 1h, 4h, 1d"
	case q.hasTo && q.toUs < q.fromUs:
		msg = "bad to: before from"
	}
	return q, msg
}

// serveCandles answers /v1/clob/candles/{id}: the closed buckets (the one
// still forming is withheld) whose start lies in [from, to), newest first.
func (s *Service) serveCandles(arg string, query []byte, w *server.Response) {
	q, msg := parseCandlesQuery(query)
	var id clob.Hash
	if msg == "" {
		id, msg = parseMarket(arg, s.marketKnown)
	}
	if msg != "" {
		restError(w, 400, msg)
		return
	}
	s.node.ReadIndex(func(x *marketdata.Index) {
		now := x.NowUs()
		// A bucket is closed once a tick at or past its end has run.
		mq := marketdata.CandlesQuery{Resolution: q.res, FromUs: q.fromUs, ToUs: now - q.res.Us(), Limit: q.limit}
		if q.hasTo {
			mq.ToUs = min(mq.ToUs, q.toUs-1)
		}
		candles, _ := x.Candles(nil, id, &mq)
		w.Body = obwire.AppendCandlesREST(w.Body, candles, q.res, now)
	})
}

// serveOrderbook answers /v1/clob/orderbook/{id}: the book published after
// the newest tick, every level.
func (s *Service) serveOrderbook(arg string, w *server.Response) {
	h, ok := parseHexBytes(arg, 32)
	if !ok {
		restError(w, 400, "bad market id: want 0x and 64 hex digits")
		return
	}
	snap, ok := s.node.Orderbook(clob.Hash(h), 0)
	if !ok {
		restError(w, 400, "unknown market id "+arg)
		return
	}
	w.Body = obwire.AppendOrderbookREST(w.Body, &snap)
}

// serveOrders answers /v1/clob/orders/{account}[?until=&limit=&cursor=]:
// the account's orders admitted before until (seconds), newest first, from
// after the cursor on; total_count counts all the account's kept orders.
func (s *Service) serveOrders(arg string, query []byte, w *server.Response) {
	q := marketdata.OrdersQuery{Limit: marketdata.OrdersLimitDefault, WithTotal: true, WithFills: true}
	var until marketdata.Cursor
	hasUntil := false
	a, ok := accountQuery(arg, query, w, func(name, value string) string {
		var msg string
		switch name {
		case "until":
			until.TsUs, msg = parseSeconds("until", value)
			hasUntil = true
		case "limit":
			q.Limit, msg = parseLimit(value, marketdata.OrdersLimitMax)
		case "cursor":
			if q.Cursor, q.HasCursor = obwire.ParseCursor([]byte(value)); !q.HasCursor {
				return `bad cursor: want "{ts}:{nonce}:{order_id_hex}" as returned in next_cursor`
			}
		default:
			return unknownParam(name, "until, limit, cursor")
		}
		return msg
	})
	if !ok {
		return
	}
	// until is the cursor (until, 0, 0x0…): every order admitted before
	// it, and none at or after it. Of it and a cursor the older one wins.
	if hasUntil && (!q.HasCursor || q.Cursor.TsUs >= until.TsUs) {
		q.Cursor, q.HasCursor = until, true
	}
	s.node.ReadIndex(func(x *marketdata.Index) {
		page := x.Orders(nil, a, &q)
		w.Body = obwire.AppendOrdersREST(w.Body, &page, x.NowUs())
	})
}

// serveTriggers answers /v1/clob/triggers/{account}[?orderbook=&limit=&cursor=].
func (s *Service) serveTriggers(arg string, query []byte, w *server.Response) {
	q := marketdata.TriggersQuery{Limit: marketdata.TriggersLimitMax}
	a, ok := accountQuery(arg, query, w, func(name, value string) string {
		var msg string
		switch name {
		case "orderbook":
			q.Book, msg = parseMarket(value, s.marketKnown)
			q.HasBook = true
		case "limit":
			q.Limit, msg = parseLimit(value, marketdata.TriggersLimitMax)
		case "cursor":
			if q.Cursor, q.HasCursor = obwire.ParseTriggerCursor([]byte(value)); !q.HasCursor {
				return `bad cursor: want "{orderbook_id}:{order_id}" as returned in next_cursor`
			}
		default:
			return unknownParam(name, "orderbook, limit, cursor")
		}
		return msg
	})
	if !ok {
		return
	}
	page := marketdata.PageTriggers(nil, s.node.Triggers(a), &q)
	w.Body = obwire.AppendTriggersREST(w.Body, &page)
}

// serveLeaderboard answers /v1/clob/leaderboard[?limit=&offset=&address=]:
// the accounts with an open perp position, best net PnL first
// (node.ByPnL).
func (s *Service) serveLeaderboard(query []byte, w *server.Response) {
	q := marketdata.RankedQuery{Limit: marketdata.RankedLimitDefault}
	msg := parseQuery(query, func(name, value string) string {
		var msg string
		switch name {
		case "limit":
			q.Limit, msg = parseLimit(value, marketdata.RankedLimitMax)
		case "offset":
			v, err := strconv.ParseUint(value, 10, 64)
			if err != nil {
				return "bad offset: want an integer of at least 0"
			}
			q.Offset = int(min(v, offsetMax))
		case "address":
			a, ok := parseHexBytes(value, 20)
			if !ok {
				return "bad address: want 0x and 40 hex digits"
			}
			q.Account, q.HasAccount = clob.Address(a), true
		default:
			return unknownParam(name, "limit, offset, address")
		}
		return msg
	})
	if msg != "" {
		restError(w, 400, msg)
		return
	}
	page := rankedPage(s.node, s.node.ByPnL(), &q)
	w.Body = obwire.AppendLeaderboardREST(w.Body, &page)
}

// rankedPage cuts q's page out of a ranking (node.ByPnL),
// each account with its positions, and finds q's account in it.
func rankedPage(n *node.Node, ranked []clob.MarginInfo, q *marketdata.RankedQuery) marketdata.RankedPage {
	page := marketdata.RankedPage{Total: len(ranked)}
	for i := min(q.Offset, len(ranked)); i < len(ranked) && len(page.Ranked) < q.Limit; i++ {
		a := ranked[i].Owner
		page.Ranked = append(page.Ranked, marketdata.RankedAccount{Account: a, Rank: i, Positions: n.Positions(a)})
	}
	if q.HasAccount {
		for i := range ranked {
			if ranked[i].Owner == q.Account {
				page.Queried = marketdata.RankedAccount{Account: q.Account, Rank: i, Positions: n.Positions(q.Account)}
				page.HasQueried = true
				break
			}
		}
	}
	return page
}

// serveTx answers /v1/tx/{hash}: the explorer view of a transaction the
// node knows (appendTxExplorer), 404 for one it does not.
func (s *Service) serveTx(arg string, w *server.Response) {
	h, ok := parseHexBytes(arg, 32)
	if !ok {
		restError(w, 400, "bad tx hash: want 0x and 64 hex digits")
		return
	}
	r, ok := s.node.Lookup(core.Hash(h))
	if !ok {
		restError(w, 404, "transaction not found")
		return
	}
	w.Body = appendTxExplorer(w.Body, &r, s.shape)
}

// appendTxExplorer appends the explorer view of r (the live TxExplorer):
// the transaction's and its receipt's members in one flat object, hex
// quantities as eth_getTransactionByHash and eth_getTransactionReceipt
// write them (in the service's shape sh), its logs, its attestations ([] until attested) and the
// committee epoch. decoded is null: the view does not decode calldata
// (docs/rest.md).
func appendTxExplorer(dst []byte, r *node.Receipt, sh shape) []byte {
	tx := &r.Rec.Tx
	dst = appendTxHead(dst, r, sh.compat)
	dst = appendFeeCaps(dst, tx)
	dst = append(dst, `,"effectiveGasPrice":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &r.Rec.EffectiveGasPrice)
	dst = append(dst, `,"gasUsed":`...)
	dst = jsonrpc.AppendQuantity(dst, r.Rec.GasUsed)
	dst = append(dst, `,"status":`...)
	dst = jsonrpc.AppendQuantity(dst, uint64(r.Rec.Status))
	dst = append(dst, `,"contractAddress":null,"input":`...)
	dst = jsonrpc.AppendData(dst, tx.Data)
	dst = append(dst, `,"logs":[`...)
	for i := range r.Rec.Logs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendLog(dst, r, i, sh)
	}
	dst = append(dst, `],"decoded":null,"attestations":`...)
	dst = appendAttestations(dst, r)
	dst = append(dst, `,"committee_epoch":`...)
	dst = strconv.AppendUint(dst, r.Epoch, 10)
	return append(dst, '}')
}
