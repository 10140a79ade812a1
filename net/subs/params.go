package subs

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/codec/obwire"
	"github.com/ledgervenue/node/core/clob"
	"github.com/valyala/fastjson"
)

// Channel is a subscription type.
type Channel uint8

const (
	ChannelOrderbook Channel = iota + 1
	ChannelOrders
	ChannelOrdersV2
	ChannelCandles
	ChannelMarkets
	ChannelPositions
	ChannelTriggers
	ChannelWithdrawals
	ChannelTransfers
	ChannelLogs
	ChannelAccountReceipts
	ChannelConfirmedReceipts
	ChannelPastPerfectTime
	ChannelNewHeads
	channelEnd
)

var channelNames = [channelEnd]string{
	ChannelOrderbook:         "svc_orderbook",
	ChannelOrders:            "svc_orders",
	ChannelOrdersV2:          "svc_orders_v2",
	ChannelCandles:           "svc_candles",
	ChannelMarkets:           "svc_markets",
	ChannelPositions:         "svc_positions",
	ChannelTriggers:          "svc_triggers",
	ChannelWithdrawals:       "svc_withdrawals",
	ChannelTransfers:         "svc_transfers",
	ChannelLogs:              "logs",
	ChannelAccountReceipts:   "svc_accountReceipts",
	ChannelConfirmedReceipts: "svc_confirmedReceipts",
	ChannelPastPerfectTime:   "svc_pastPerfectTime",
	ChannelNewHeads:          "newHeads",
}

func (c Channel) String() string {
	if c > 0 && c < channelEnd {
		return channelNames[c]
	}
	return "unknown"
}

// ParseChannel maps a subscription type name to its Channel (0 if unknown).
// A svc_ channel is also known by the live network's name, pod_ for svc_
// (the node's --prefix changes what it writes, not what it accepts).
func ParseChannel(typ []byte) Channel {
	for c := ChannelOrderbook; c < channelEnd; c++ {
		name := channelNames[c]
		if string(typ) == name {
			return c
		}
		if rest, ok := strings.CutPrefix(name, "svc_"); ok && len(typ) == len(name) &&
			string(typ[:4]) == "pod_" && string(typ[4:]) == rest {
			return c
		}
	}
	return 0
}

// delta reports whether the channel replays buffered ticks for `since`.
func (c Channel) delta() bool {
	switch c {
	case ChannelOrderbook, ChannelOrders, ChannelOrdersV2, ChannelCandles, ChannelWithdrawals, ChannelTransfers:
		return true
	}
	return false
}

// tickDriven reports whether the channel is fed by PublishTick.
func (c Channel) tickDriven() bool {
	return c.delta() || c == ChannelMarkets || c == ChannelPositions || c == ChannelTriggers || c == ChannelNewHeads
}

// receiptDriven reports whether the channel is fed by PublishReceipts.
func (c Channel) receiptDriven() bool {
	return c == ChannelLogs || c == ChannelAccountReceipts || c == ChannelConfirmedReceipts
}

// spec is a decoded subscription request.
type spec struct {
	ch       Channel
	books    []clob.Hash    // sorted, distinct; empty = all
	accounts []clob.Address // sorted, distinct; empty = all
	// single is true when the subscription names exactly one account
	// (bidder, account, or bidders with one entry): v2 frames then omit
	// accts/a.
	depth        int // svc_orderbook; 0 = every level the node published
	since        int64
	hasSince     bool
	sinceBook    clob.Hash
	hasSinceBook bool
	logs         logFilter
	pptUs        int64 // svc_pastPerfectTime: notify once past-perfect time ≥ this
}

// logFilter is a decoded logs filter.
type logFilter struct {
	addresses []clob.Address // empty = any
	// topics[i] lists the accepted values at position i; empty = wildcard.
	topics          [][]clob.Hash
	fromBlock       uint64
	toBlock         uint64 // math.MaxUint64 = no bound
	minAttestations int
}

// Errors of the parameter decoders: -32602 with data naming the field, as
// the rest of the node's decoders do. Preallocated: a flood of bad
// subscribe requests allocates nothing here.
var (
	errUnknownType     = jsonrpc.InvalidParams("unknown subscription type: want one of svc_orderbook, svc_orders, svc_orders_v2, svc_candles, svc_markets, svc_positions, svc_triggers, svc_withdrawals, svc_transfers, logs, svc_accountReceipts, svc_confirmedReceipts, svc_pastPerfectTime, newHeads")
	errParamsObject    = jsonrpc.InvalidParams("subscription params: want an object")
	errBooks           = jsonrpc.InvalidParams("orderbook_ids: want an array of 0x-prefixed 32-byte hex ids")
	errBooksCount      = jsonrpc.InvalidParams("orderbook_ids: at most 64 ids")
	errBooksAlias      = jsonrpc.InvalidParams("orderbook_ids and clob_ids are aliases: give one")
	errBidder          = jsonrpc.InvalidParams("bidder: want a 0x-prefixed 20-byte hex address")
	errBidders         = jsonrpc.InvalidParams("bidders: want an array of 1 to 64 distinct 0x-prefixed 20-byte hex addresses")
	errBiddersDup      = jsonrpc.InvalidParams("bidders: addresses must be distinct")
	errBiddersBoth     = jsonrpc.InvalidParams("bidder (alias account) and bidders are mutually exclusive")
	errBiddersType     = jsonrpc.InvalidParams("bidders: only svc_orders_v2 accepts a set of accounts")
	errAccount         = jsonrpc.InvalidParams("account: want a 0x-prefixed 20-byte hex address")
	errAccountMissing  = jsonrpc.InvalidParams("account: required")
	errAccountAlias    = jsonrpc.InvalidParams("account and bidder are aliases: give one")
	errDepthType       = jsonrpc.InvalidParams("depth: only svc_orderbook takes it")
	errSinceBookType   = jsonrpc.InvalidParams("since_book: only svc_orders_v2 takes it")
	errNewHeadsParams  = jsonrpc.InvalidParams("newHeads: takes no parameters")
	errTimestampAlias  = jsonrpc.InvalidParams("svc_pastPerfectTime: timestamp and since are aliases: give one")
	errDepth           = jsonrpc.InvalidParams("depth: want an integer of at least 1")
	errSince           = jsonrpc.InvalidParams("since: want a non-negative integer of microseconds")
	errSinceBook       = jsonrpc.InvalidParams("since_book: want a 0x-prefixed 32-byte hex orderbook id")
	errSinceBookAlone  = jsonrpc.InvalidParams("since_book: requires since")
	errSinceTooOld     = jsonrpc.InvalidParams("since too old: it predates the retained replay buffer; backfill (REST, ob_ methods) and resubscribe with a newer since")
	errAddress         = jsonrpc.InvalidParams("address: want a 0x-prefixed 20-byte hex address or an array of them")
	errAddressCount    = jsonrpc.InvalidParams("address: too many addresses (max " + strconv.Itoa(LogAddressesMax) + ")")
	errAddressMissing  = jsonrpc.InvalidParams("address: required")
	errTopics          = jsonrpc.InvalidParams("topics: want an array whose entries are null, a 32-byte hex topic or an array of them")
	errTopicsCount     = jsonrpc.InvalidParams("topics: too many topic positions (max " + strconv.Itoa(TopicsMax) + ")")
	errTopicsAlts      = jsonrpc.InvalidParams("topics: too many topic alternatives (max " + strconv.Itoa(TopicAlternativesMax) + ")")
	errBlock           = jsonrpc.InvalidParams("fromBlock/toBlock: want a hex quantity or one of earliest, latest, pending, safe, finalized")
	errBlockRange      = jsonrpc.InvalidParams("toBlock: must not be below fromBlock")
	errMinAttestations = jsonrpc.InvalidParams("minAttestations: want a non-negative integer")
	errTimestamp       = jsonrpc.InvalidParams("svc_pastPerfectTime: want a microsecond timestamp (integer or hex quantity)")
)

// channelParams lists, per channel, the parameters it takes (the spec's
// table, with the live network's aliases): the data of its unknown-key
// error, so a client sees what to send instead.
var channelParams = [channelEnd]string{
	ChannelOrderbook:         "orderbook_ids (alias clob_ids), depth, since",
	ChannelOrders:            "orderbook_ids (alias clob_ids), bidder (alias account), since",
	ChannelOrdersV2:          "orderbook_ids (alias clob_ids), bidder (alias account), bidders, since, since_book",
	ChannelCandles:           "orderbook_ids (alias clob_ids), since",
	ChannelMarkets:           "orderbook_ids (alias clob_ids), since",
	ChannelPositions:         "account (alias bidder), since; orderbook_ids (alias clob_ids) is accepted and ignored",
	ChannelTriggers:          "account (alias bidder), since; orderbook_ids (alias clob_ids) is accepted and ignored",
	ChannelWithdrawals:       "account (alias bidder), since; orderbook_ids (alias clob_ids) is accepted and ignored",
	ChannelTransfers:         "account (alias bidder), since; orderbook_ids (alias clob_ids) is accepted and ignored",
	ChannelLogs:              "address, topics, fromBlock, toBlock, minAttestations (alias minimum_attestations)",
	ChannelAccountReceipts:   "address, since",
	ChannelConfirmedReceipts: "since",
	ChannelPastPerfectTime:   "timestamp (alias since)",
	ChannelNewHeads:          "nothing",
}

// errUnknownParam holds each channel's error for a key it does not take,
// built once: refusing costs no allocation.
var errUnknownParam = func() (errs [channelEnd]*jsonrpc.Error) {
	for c := ChannelOrderbook; c < channelEnd; c++ {
		errs[c] = jsonrpc.InvalidParams(c.String() + ": unknown parameter for this channel; it takes " + channelParams[c])
	}
	return errs
}()

// takes reports whether channel c accepts the params key k. A key a
// channel does not take is refused, never ignored: a misspelt or misplaced
// filter would otherwise widen the stream silently. The one exception is
// the spec's: orderbook_ids is ignored by the account channels.
// Invariant: ChannelOrderbook..ChannelTransfers are the channels the
// spec's orderbook_ids row names, ChannelPositions..ChannelTransfers the
// account channels (the Channel constants' order).
func takes(c Channel, k string) bool {
	switch k {
	case "orderbook_ids", "clob_ids":
		return c >= ChannelOrderbook && c <= ChannelTransfers
	case "bidder", "account":
		return c == ChannelOrders || c == ChannelOrdersV2 || c >= ChannelPositions && c <= ChannelTransfers
	case "bidders", "since_book":
		return c == ChannelOrdersV2
	case "depth":
		return c == ChannelOrderbook
	case "since":
		return c != ChannelLogs && c != ChannelNewHeads
	case "timestamp":
		return c == ChannelPastPerfectTime
	case "address":
		return c == ChannelLogs || c == ChannelAccountReceipts
	case "topics", "fromBlock", "toBlock", "minAttestations", "minimum_attestations":
		return c == ChannelLogs
	}
	return false
}

// checkKeys refuses an object carrying a key the channel does not take,
// with the most telling error for it.
// REQUIRES: v is an object.
func checkKeys(c Channel, v *fastjson.Value) *jsonrpc.Error {
	var bad *jsonrpc.Error
	v.GetObject().Visit(func(k []byte, _ *fastjson.Value) {
		if bad != nil || takes(c, string(k)) {
			return
		}
		switch string(k) {
		case "bidders":
			bad = errBiddersType
		case "depth":
			bad = errDepthType
		case "since_book":
			bad = errSinceBookType
		default:
			bad = errUnknownParam[c]
		}
	})
	return bad
}

// Limits of a subscription's parameters.
const (
	// BiddersMax bounds the bidders set of svc_orders_v2 (spec Limits).
	BiddersMax = 64
	// BooksFilterMax bounds orderbook_ids.
	BooksFilterMax = 64
	// TopicsMax bounds a log filter's topic positions (spec Limits), for
	// the logs subscription and eth_getLogs alike (ParseLogTopics).
	TopicsMax = 4
	// TopicAlternativesMax bounds the alternatives at one topic position.
	TopicAlternativesMax = 16
	// LogAddressesMax bounds a log filter's address list, for the logs
	// subscription and eth_getLogs alike (ParseLogAddresses).
	LogAddressesMax = 64
	// DepthMax clamps svc_orderbook's depth; the node publishes at most
	// that many levels per side anyway.
	DepthMax = 1 << 16
)

func absent(v *fastjson.Value) bool { return v == nil || v.Type() == fastjson.TypeNull }

// parseSpec decodes eth_subscribe's type and params (nil when absent).
func parseSpec(typ []byte, v *fastjson.Value) (spec, *jsonrpc.Error) {
	s := spec{ch: ParseChannel(typ)}
	if s.ch == 0 {
		return s, errUnknownType
	}
	if s.ch == ChannelPastPerfectTime {
		return s, parsePPT(&s, v)
	}
	if !absent(v) && v.Type() != fastjson.TypeObject {
		if s.ch == ChannelNewHeads {
			return s, errNewHeadsParams
		}
		return s, errParamsObject
	}
	if !absent(v) {
		if err := checkKeys(s.ch, v); err != nil {
			return s, err
		}
	}
	if err := parseBooksParam(&s, v); err != nil {
		return s, err
	}
	if err := parseAccountParams(&s, v); err != nil {
		return s, err
	}
	if err := parseCursorParams(&s, v); err != nil {
		return s, err
	}
	switch s.ch {
	case ChannelOrderbook:
		return s, parseDepth(&s, get(v, "depth"))
	case ChannelLogs:
		return s, parseLogFilter(&s.logs, v)
	}
	return s, nil
}

// get returns the member of an object, nil when v is absent or has none.
func get(v *fastjson.Value, key string) *fastjson.Value {
	if absent(v) {
		return nil
	}
	return v.Get(key)
}

func parsePPT(s *spec, v *fastjson.Value) *jsonrpc.Error {
	if absent(v) {
		return errTimestamp
	}
	if v.Type() == fastjson.TypeObject { // tolerate {"timestamp": T} / {"since": T}
		if err := checkKeys(ChannelPastPerfectTime, v); err != nil {
			return err
		}
		w, alias := v.Get("timestamp"), v.Get("since")
		if w != nil && alias != nil {
			return errTimestampAlias
		}
		if w == nil {
			w = alias
		}
		v = w
	}
	n, err := jsonrpc.ParseQuantity(v)
	if err != nil || n > maxInt64 {
		return errTimestamp
	}
	s.pptUs = int64(n)
	return nil
}

const maxInt64 = 1<<63 - 1

func parseBooksParam(s *spec, v *fastjson.Value) *jsonrpc.Error {
	ids, alias := get(v, "orderbook_ids"), get(v, "clob_ids")
	if !absent(ids) && !absent(alias) {
		return errBooksAlias
	}
	if absent(ids) {
		ids = alias
	}
	switch s.ch {
	case ChannelOrderbook, ChannelOrders, ChannelOrdersV2, ChannelCandles, ChannelMarkets:
	default:
		return nil // ignored by the other channels
	}
	if absent(ids) {
		return nil
	}
	var err *jsonrpc.Error
	s.books, err = obwire.ParseBookList(ids, BooksFilterMax, errBooks, errBooksCount)
	return err
}

func parseAddress(v *fastjson.Value, e *jsonrpc.Error) (clob.Address, *jsonrpc.Error) {
	a, err := jsonrpc.ParseAddress(v)
	if err != nil {
		return clob.Address{}, e
	}
	return clob.Address(a), nil
}

func parseAccountParams(s *spec, v *fastjson.Value) *jsonrpc.Error {
	// checkKeys let through only the keys the channel takes: bidder and
	// account are one parameter under two names wherever they apply (the
	// live network's aliases; the SDK sends account).
	bidder, bidders, account := get(v, "bidder"), get(v, "bidders"), get(v, "account")
	if !absent(bidder) && !absent(account) {
		return errAccountAlias
	}
	if absent(account) {
		account = bidder
	}
	switch s.ch {
	case ChannelOrders, ChannelOrdersV2:
		if !absent(account) && !absent(bidders) {
			return errBiddersBoth
		}
		if !absent(account) {
			a, err := parseAddress(account, errBidder)
			s.accounts = append(s.accounts, a)
			return err
		}
		if !absent(bidders) {
			return parseBidders(s, bidders)
		}
	case ChannelPositions, ChannelTriggers:
		if absent(account) {
			return errAccountMissing
		}
		a, err := parseAddress(account, errAccount)
		s.accounts = append(s.accounts, a)
		return err
	case ChannelWithdrawals, ChannelTransfers:
		if !absent(account) {
			a, err := parseAddress(account, errAccount)
			s.accounts = append(s.accounts, a)
			return err
		}
	case ChannelAccountReceipts:
		addr := get(v, "address")
		if absent(addr) {
			return errAddressMissing
		}
		a, err := parseAddress(addr, errAddress)
		s.accounts = append(s.accounts, a)
		return err
	}
	return nil
}

func parseBidders(s *spec, v *fastjson.Value) *jsonrpc.Error {
	arr, e := v.Array()
	if e != nil || len(arr) == 0 || len(arr) > BiddersMax {
		return errBidders
	}
	for _, x := range arr {
		a, err := parseAddress(x, errBidders)
		if err != nil {
			return err
		}
		s.accounts = append(s.accounts, a)
	}
	slices.SortFunc(s.accounts, compareAddress)
	for i := 1; i < len(s.accounts); i++ {
		if s.accounts[i] == s.accounts[i-1] {
			return errBiddersDup
		}
	}
	return nil
}

func compareAddress(a, b clob.Address) int { return bytes.Compare(a[:], b[:]) }

func parseCursorParams(s *spec, v *fastjson.Value) *jsonrpc.Error {
	since, sinceBook := get(v, "since"), get(v, "since_book")
	if !absent(since) {
		n, err := jsonrpc.ParseQuantity(since)
		if err != nil || n > maxInt64 {
			return errSince
		}
		s.since, s.hasSince = int64(n), true
	}
	if s.ch != ChannelOrdersV2 || absent(sinceBook) {
		return nil
	}
	if !s.hasSince {
		return errSinceBookAlone
	}
	h, err := jsonrpc.ParseHash(sinceBook)
	if err != nil {
		return errSinceBook
	}
	s.sinceBook, s.hasSinceBook = clob.Hash(h), true
	return nil
}

func parseDepth(s *spec, v *fastjson.Value) *jsonrpc.Error {
	if absent(v) {
		return nil
	}
	n, err := jsonrpc.ParseQuantity(v)
	if err != nil || n < 1 {
		return errDepth
	}
	s.depth = int(min(n, DepthMax))
	return nil
}

func parseLogFilter(f *logFilter, v *fastjson.Value) *jsonrpc.Error {
	f.toBlock = 1<<64 - 1
	var err *jsonrpc.Error
	if f.addresses, err = ParseLogAddresses[clob.Address](get(v, "address")); err != nil {
		return err
	}
	if f.topics, err = ParseLogTopics[clob.Hash](get(v, "topics")); err != nil {
		return err
	}
	if f.fromBlock, err = parseBlock(get(v, "fromBlock"), 0); err != nil {
		return err
	}
	if f.toBlock, err = parseBlock(get(v, "toBlock"), 1<<64-1); err != nil {
		return err
	}
	if f.toBlock < f.fromBlock {
		return errBlockRange
	}
	m := get(v, "minAttestations")
	if absent(m) {
		m = get(v, "minimum_attestations") // the live network's spelling
	}
	if !absent(m) {
		n, e := jsonrpc.ParseQuantity(m)
		if e != nil || n > 1<<31 {
			return errMinAttestations
		}
		f.minAttestations = int(n)
	}
	return nil
}

// ParseLogAddresses decodes a log filter's "address": absent or null (any
// address, nil), one address, or an array of at most LogAddressesMax. The
// logs subscription and eth_getLogs (net/rpc) both decode with it, so a
// filter has the same bounds and errors on either.
func ParseLogAddresses[A ~[20]byte](v *fastjson.Value) ([]A, *jsonrpc.Error) {
	if absent(v) {
		return nil, nil
	}
	if v.Type() == fastjson.TypeString {
		a, err := jsonrpc.ParseAddress(v)
		if err != nil {
			return nil, errAddress
		}
		return []A{A(a)}, nil
	}
	arr, e := v.Array()
	if e != nil {
		return nil, errAddress
	}
	if len(arr) > LogAddressesMax {
		return nil, errAddressCount
	}
	out := make([]A, 0, len(arr))
	for _, x := range arr {
		a, err := jsonrpc.ParseAddress(x)
		if err != nil {
			return nil, errAddress
		}
		out = append(out, A(a))
	}
	return out, nil
}

// ParseLogTopics decodes a log filter's "topics": absent or null (nil), or
// an array of at most TopicsMax positions, each null (any topic), one topic
// or an array of at most TopicAlternativesMax. Position i of the result
// lists the accepted topics there; empty is the wildcard. Shared with
// eth_getLogs, as ParseLogAddresses.
func ParseLogTopics[H ~[32]byte](v *fastjson.Value) ([][]H, *jsonrpc.Error) {
	if absent(v) {
		return nil, nil
	}
	arr, e := v.Array()
	if e != nil {
		return nil, errTopics
	}
	if len(arr) > TopicsMax {
		return nil, errTopicsCount
	}
	out := make([][]H, len(arr))
	for i, x := range arr {
		alts := []*fastjson.Value{x}
		switch {
		case absent(x):
			continue // wildcard
		case x.Type() == fastjson.TypeArray:
			alts, _ = x.Array()
			if len(alts) > TopicAlternativesMax {
				return nil, errTopicsAlts
			}
		}
		for _, y := range alts {
			h, err := jsonrpc.ParseHash(y)
			if err != nil {
				return nil, errTopics
			}
			out[i] = append(out[i], H(h))
		}
	}
	return out, nil
}

// parseBlock decodes a block number or tag. Tags other than earliest mean
// "no bound": the filter applies to live logs only.
func parseBlock(v *fastjson.Value, dflt uint64) (uint64, *jsonrpc.Error) {
	if absent(v) {
		return dflt, nil
	}
	if v.Type() == fastjson.TypeString {
		s, _ := v.StringBytes()
		switch string(s) {
		case "earliest":
			return 0, nil
		case "latest", "pending", "safe", "finalized":
			return dflt, nil
		}
	}
	n, err := jsonrpc.ParseQuantity(v)
	if err != nil {
		return 0, errBlock
	}
	return n, nil
}

// matches reports whether a log passes the filter (receipt-level
// minAttestations is checked by the caller).
func (f *logFilter) matches(l *Log) bool {
	if l.BlockNumber < f.fromBlock || l.BlockNumber > f.toBlock {
		return false
	}
	if len(f.addresses) > 0 && !slices.Contains(f.addresses, l.Address) {
		return false
	}
	for i, alts := range f.topics {
		if len(alts) == 0 {
			continue
		}
		if i >= len(l.Topics) || !slices.Contains(alts, l.Topics[i]) {
			return false
		}
	}
	return true
}
