package subs

import (
	"strconv"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/codec/obwire"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/marketdata"
	"github.com/ledgervenue/node/core/tickrec"
)

// Payload encoders. Each appends one JSON value to dst and returns the
// extended slice; none uses reflection or encoding/json. The ob_ shapes
// (orderbook, markets, positions, orders) come from marketdata so a
// subscription and the matching ob_ method never disagree.

// The envelope of a notification, around the subscription id:
//
//	{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x…","result":<payload>}}
//	|<----------------------------- head (per subscription) ----------------------------->|<body>|tail|
const (
	envelopeOpen   = `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"`
	envelopeResult = `","result":`
	envelopeError  = `","error":`
)

var envelopeTail = []byte("}}")

func appendHead(dst []byte, id string) []byte {
	dst = append(dst, envelopeOpen...)
	dst = append(dst, id...)
	return append(dst, envelopeResult...)
}

// appendDecimal appends v as a quoted decimal string.
func appendDecimal(dst []byte, v *uint256.Int) []byte {
	dst = append(dst, '"')
	dst = jsonrpc.AppendDecimalU256(dst, v)
	return append(dst, '"')
}

// appendOrderbook appends one OrderbookSnapshot: the ob_getOrderbook shape
// with at most depth levels per side (0: all published).
func appendOrderbook(dst []byte, s *marketdata.Snapshot, depth int) []byte {
	snap := *s
	if depth > 0 {
		snap.Buys = snap.Buys[:min(depth, len(snap.Buys))]
		snap.Sells = snap.Sells[:min(depth, len(snap.Sells))]
	}
	return obwire.AppendOrderbook(dst, &snap)
}

// appendCandleTick appends one CandleTick:
//
//	{"orderbook":"0x…","timestamp_us":T,"timestamp":T,"price":"0x…","volume":"0x…","quote_volume":"0x…"}
//
// price is the clearing price, volume and quote_volume what traded in the
// tick (hex quantities, as ob_getCandles).
func appendCandleTick(dst []byte, tickUs int64, bt *clob.BookTick) []byte {
	dst = append(dst, `{"orderbook":`...)
	dst = jsonrpc.AppendData(dst, bt.Book[:])
	dst = append(dst, `,"timestamp_us":`...)
	dst = strconv.AppendInt(dst, tickUs, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, tickUs, 10)
	dst = append(dst, `,"price":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &bt.Price)
	dst = append(dst, `,"volume":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &bt.VolumeBase)
	dst = append(dst, `,"quote_volume":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &bt.VolumeQuote)
	return append(dst, '}')
}

// appendMarketEntry appends one MarketDynamicEntry: the ob_getMarkets entry
// with "orderbook" (the live network's push key) in front of its fields.
func appendMarketEntry(dst []byte, m *marketdata.Market) []byte {
	dst = append(dst, `{"orderbook":`...)
	dst = jsonrpc.AppendData(dst, m.Config.ID[:])
	dst = append(dst, ',')
	start := len(dst)
	dst = obwire.AppendMarkets(dst, []marketdata.Market{*m}) // [{…}]
	// Drop "[{" and "]": the entry's members follow ours.
	n := copy(dst[start:], dst[start+2:len(dst)-1])
	return dst[:start+n]
}

// appendPositionsUpdate appends {"account":"0x…","data":<ob_getPositions>}.
func appendPositionsUpdate(dst []byte, account *clob.Address, ps *marketdata.PositionsData) []byte {
	dst = append(dst, `{"account":`...)
	dst = jsonrpc.AppendData(dst, account[:])
	dst = append(dst, `,"data":`...)
	dst = obwire.AppendPositions(dst, ps)
	return append(dst, '}')
}

// appendTriggersUpdate appends a TriggersUpdate: "account" in front of the
// ob_getTriggers page's members (obwire.AppendTriggers).
func appendTriggersUpdate(dst []byte, account *clob.Address, ts []marketdata.Trigger) []byte {
	dst = append(dst, `{"account":`...)
	dst = jsonrpc.AppendData(dst, account[:])
	dst = append(dst, ',')
	start := len(dst)
	page := marketdata.TriggersPage{Triggers: ts, Total: len(ts)}
	dst = obwire.AppendTriggers(dst, &page) // {…}
	// Drop the page's "{": its members follow ours.
	n := copy(dst[start:], dst[start+1:])
	return dst[:start+n]
}

// appendTransfer appends one TransferUpdate:
//
//	{"from":"0x…","to":"0x…","token":"0x…","amount":"0x…","batch":T}
func appendTransfer(dst []byte, tickUs int64, e *clob.Event) []byte {
	dst = append(dst, `{"from":`...)
	dst = jsonrpc.AppendData(dst, e.Owner[:])
	dst = append(dst, `,"to":`...)
	dst = jsonrpc.AppendData(dst, e.To[:])
	dst = append(dst, `,"token":`...)
	dst = jsonrpc.AppendData(dst, e.Token[:])
	dst = append(dst, `,"amount":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &e.Amount)
	dst = append(dst, `,"batch":`...)
	dst = strconv.AppendInt(dst, tickUs, 10)
	return append(dst, '}')
}

var (
	zeroHash  clob.Hash
	zeroBloom [256]byte
	zeroAddr  clob.Address
)

// appendHeader appends a newHeads header: the fields go-ethereum's
// types.Header JSON decoder requires (parentHash, sha3Uncles, stateRoot,
// transactionsRoot, receiptsRoot, logsBloom, difficulty, number, gasLimit,
// gasUsed, timestamp, extraData) plus miner, mixHash, nonce and hash.
// number is the tick's deadline divided by blockUs (block numbers are time:
// µs, or the compat mode's slots), timestamp its second; roots are zero as
// in the node's empty blocks.
func appendHeader(dst []byte, t *tickrec.Tick, blockUs int64) []byte {
	dst = append(dst, `{"number":`...)
	dst = jsonrpc.AppendQuantity(dst, uint64(t.TickUs/blockUs))
	dst = append(dst, `,"hash":`...)
	dst = jsonrpc.AppendData(dst, t.Hash[:])
	dst = append(dst, `,"parentHash":`...)
	dst = jsonrpc.AppendData(dst, t.ParentHash[:])
	for _, k := range [...]string{`,"mixHash":`, `,"sha3Uncles":`, `,"stateRoot":`, `,"transactionsRoot":`, `,"receiptsRoot":`} {
		dst = append(dst, k...)
		dst = jsonrpc.AppendData(dst, zeroHash[:])
	}
	dst = append(dst, `,"nonce":"0x0000000000000000","logsBloom":`...)
	dst = jsonrpc.AppendData(dst, zeroBloom[:])
	dst = append(dst, `,"miner":`...)
	dst = jsonrpc.AppendData(dst, zeroAddr[:])
	dst = append(dst, `,"difficulty":"0x0","extraData":"0x","gasLimit":"0x0","gasUsed":"0x0","timestamp":`...)
	dst = jsonrpc.AppendQuantity(dst, uint64(t.TickUs/1_000_000))
	return append(dst, '}')
}

// Close codes of server-initiated closes (spec "Subscription close codes").
const (
	CodeLagged    = -32020
	CodeShutdown  = -32021
	CodeSlow      = -32022
	CodeSerialize = -32023
	// CodeReverted: the node's state was replaced (evm_revert,
	// anvil_loadState); not resumable, since the history went back.
	CodeReverted = -32024
)

func closeMessage(code int) string {
	switch code {
	case CodeLagged:
		return "subscription lagged behind the tick broadcast"
	case CodeShutdown:
		return "node is shutting down"
	case CodeSlow:
		return "subscriber did not accept a notification in time"
	case CodeReverted:
		return "node state was reverted to a snapshot or loaded: subscribe again"
	}
	return "failed to serialize a subscription notification"
}

// resumeData is the `data` of a close notification.
type resumeData struct {
	since        int64
	hasSince     bool
	sinceBook    clob.Hash
	hasSinceBook bool
	missed       uint64 // -32020 only
}

// appendClose appends a complete close notification:
//
//	{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x…",
//	 "error":{"code":C,"message":"…","data":{"resumable":B[,"resume_since":T][,"resume_since_book":"0x…"][,"missed":N]}}}}
func appendClose(dst []byte, id string, code int, d *resumeData) []byte {
	dst = append(dst, envelopeOpen...)
	dst = append(dst, id...)
	dst = append(dst, envelopeError...)
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = jsonrpc.AppendString(dst, closeMessage(code))
	if code == CodeReverted {
		return append(dst, `,"data":{"resumable":false}}}}`...)
	}
	if code == CodeSerialize {
		dst = append(dst, `,"data":{"resumable":false`...)
	} else {
		dst = append(dst, `,"data":{"resumable":true`...)
	}
	if d.hasSince {
		dst = append(dst, `,"resume_since":`...)
		dst = strconv.AppendInt(dst, d.since, 10)
	}
	if d.hasSinceBook {
		dst = append(dst, `,"resume_since_book":`...)
		dst = jsonrpc.AppendData(dst, d.sinceBook[:])
	}
	if code == CodeLagged {
		dst = append(dst, `,"missed":`...)
		dst = strconv.AppendUint(dst, d.missed, 10)
	}
	return append(dst, "}}}}"...)
}
