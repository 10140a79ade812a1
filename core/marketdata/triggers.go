package marketdata

import (
	"strconv"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core/clob"
)

// Trigger is one stored trigger as the wire shows it: the engine's record
// and the hash of the transaction that stored it (HasTx false when the node
// no longer knows it, e.g. after a restart).
type Trigger struct {
	Info   clob.TriggerInfo
	TxHash clob.Hash
	HasTx  bool
}

// appendTrigger appends one trigger, the openapi TriggerOrderResponse:
// size signed (sells negative), trigger_type "take_profit" or "stop_loss"
// and grouping "none" or "asset" (the openapi's TriggerType and
// TriggerGrouping; the engine holds no other values), tx_hash null when the
// node no longer knows it, end the ttl expiry or null.
func appendTrigger(dst []byte, t *Trigger) []byte {
	in := &t.Info
	dst = append(dst, `{"orderbook_id":`...)
	dst = jsonrpc.AppendData(dst, in.Book[:])
	dst = append(dst, `,"order_id":`...)
	dst = jsonrpc.AppendData(dst, in.ID[:])
	dst = append(dst, `,"tx_hash":`...)
	if t.HasTx {
		dst = jsonrpc.AppendData(dst, t.TxHash[:])
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"bidder":`...)
	dst = jsonrpc.AppendData(dst, in.Owner[:])
	dst = append(dst, `,"nonce":`...)
	dst = strconv.AppendUint(dst, in.Nonce, 10)
	dst = append(dst, `,"size":`...)
	dst = AppendSignedDecimal(dst, &in.Size, in.Side == clob.Sell)
	dst = appendU256Field(dst, `,"limit_price":`, &in.LimitPrice)
	dst = appendU256Field(dst, `,"trigger_price":`, &in.TriggerPrice)
	dst = append(dst, `,"trigger_type":"`...)
	dst = append(dst, TriggerTypeName(in.TriggerType)...)
	dst = append(dst, `","grouping":"`...)
	dst = append(dst, GroupingName(in.Grouping)...)
	dst = strconv.AppendBool(append(dst, `","reduce_only":`...), in.Flags&clob.FlagReduceOnly != 0)
	dst = strconv.AppendBool(append(dst, `,"ioc":`...), in.Flags&clob.FlagIOC != 0)
	dst = append(dst, `,"deadline":`...)
	dst = strconv.AppendInt(dst, in.DeadlineUs, 10)
	dst = append(dst, `,"end":`...)
	if in.ExpiresUs > 0 {
		dst = strconv.AppendInt(dst, in.ExpiresUs, 10)
	} else {
		dst = append(dst, "null"...)
	}
	return append(dst, '}')
}
