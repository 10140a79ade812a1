package rpc

import (
	"errors"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
	"github.com/ledgervenue/node/net/subs"
	"github.com/valyala/fastjson"
)

func (c *call) getTransaction(dst []byte) ([]byte, *jsonrpc.Error) {
	h, err := c.hash(0)
	if err != nil {
		return dst, err
	}
	r, ok := c.s.node.Lookup(h)
	if !ok {
		return append(dst, "null"...), nil
	}
	return appendTx(dst, &r, c.s.shape), nil
}

// getReceipt answers null until the record is attested: a receipt is what
// the committee vouched for. In compat mode a receipt also waits for its
// block: strict decoders (ethers) refuse a receipt without a blockNumber,
// and wait for one that is null, so an orderbook intent's receipt appears
// once its auction tick has run.
func (c *call) getReceipt(dst []byte) ([]byte, *jsonrpc.Error) {
	h, err := c.hash(0)
	if err != nil {
		return dst, err
	}
	r, ok := c.s.node.Lookup(h)
	if !ok || !r.Attested {
		return append(dst, "null"...), nil
	}
	if _, _, inBlock := blockRef(&r, c.s.cfg.Compat); c.s.cfg.Compat && !inBlock {
		return append(dst, "null"...), nil
	}
	return appendReceipt(dst, &r, c.s.shape), nil
}

func (c *call) blockByHash(dst []byte) ([]byte, *jsonrpc.Error) {
	h, err := c.hash(0)
	if err != nil {
		return dst, err
	}
	return c.emptyBlock(dst, 0, h), nil
}

func (c *call) blockByNumber(dst []byte) ([]byte, *jsonrpc.Error) {
	if c.req.Param(0) == nil {
		return dst, missingParam(0)
	}
	n, err := c.blockNumberParam(0)
	if err != nil {
		return dst, err
	}
	return c.emptyBlock(dst, n, zeroHash), nil
}

func (c *call) emptyBlock(dst []byte, number uint64, hash [32]byte) []byte {
	fee := c.s.node.BaseFee()
	var feeText [80]byte
	return appendEmptyBlock(dst, number, hash, jsonrpc.AppendQuantityU256(feeText[:0], &fee), c.s.cfg.Compat)
}

// LogsMax bounds one eth_getLogs answer. The filter's own bounds are the
// logs subscription's (subs.ParseLogAddresses, subs.ParseLogTopics); the
// logs one query looks at are node.LogScanMax, and those all the
// eth_getLogs calls of one request or batch look at together are
// Config.LogScanMax (the same 2 000 000 by default), so a batch of 1000
// calls scans no more than one call may.
const LogsMax = 10_000

var (
	errTooManyLogs = jsonrpc.InvalidParams("query returns more than 10000 logs: narrow the filter")
	errBadFilter   = jsonrpc.InvalidParams("eth_getLogs needs a filter object")
	// errLogRangeTooWide: the range holds more logs than one query looks at.
	errLogRangeTooWide = jsonrpc.InvalidParams(node.ErrLogRangeTooWide.Error())
)

func (c *call) getLogs(dst []byte) ([]byte, *jsonrpc.Error) {
	obj := c.req.Param(0)
	if obj == nil || obj.Type() != fastjson.TypeObject {
		return dst, errBadFilter
	}
	f, err := c.logFilter(obj)
	if err != nil {
		return dst, err
	}
	shared := c.sc.logBudget < c.s.cfg.LogScanMax // an earlier call of this request spent some
	matches, lerr := c.s.node.Logs(&f, LogsMax+1, &c.sc.logBudget)
	switch {
	case errors.Is(lerr, node.ErrLogRangeTooWide) && shared:
		return dst, c.s.errLogBudget
	case errors.Is(lerr, node.ErrLogRangeTooWide):
		return dst, errLogRangeTooWide
	case lerr != nil:
		return dst, internalError(lerr)
	case len(matches) > LogsMax:
		return dst, errTooManyLogs
	}
	dst = append(dst, '[')
	for i := range matches {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendLog(dst, &matches[i].Receipt, matches[i].LogIndex, c.s.shape)
	}
	return append(dst, ']'), nil
}

// logFilter reads a filter object. fromBlock/toBlock are timestamps in
// seconds (the spec), or block numbers (500 ms slots) in compat mode, where
// clients pass the numbers their receipts carry; either way they bound the
// logs' attestation time, inclusive.
func (c *call) logFilter(obj *fastjson.Value) (node.LogFilter, *jsonrpc.Error) {
	var f node.LogFilter
	unitUs := int64(1_000_000)
	if c.s.cfg.Compat {
		unitUs = CompatBlockUs
	}
	from, err := c.filterBound(obj.Get("fromBlock"), 0, unitUs)
	if err != nil {
		return f, err
	}
	to, err := c.filterBound(obj.Get("toBlock"), -1, unitUs)
	if err != nil {
		return f, err
	}
	f.FromUs = from * unitUs
	if to >= 0 {
		f.ToUs = to*unitUs + unitUs - 1
	}
	if f.Addresses, err = subs.ParseLogAddresses[core.Address](obj.Get("address")); err != nil {
		return f, err
	}
	if f.Topics, err = subs.ParseLogTopics[core.Hash](obj.Get("topics")); err != nil {
		return f, err
	}
	for _, k := range [...]string{"minimum_attestations", "minAttestations"} {
		if v := obj.Get(k); v != nil {
			n, err := jsonrpc.ParseQuantity(v)
			if err != nil {
				return f, err
			}
			f.MinAttestations = int(min(n, 1<<20))
		}
	}
	return f, nil
}

// filterBound reads a fromBlock/toBlock value in units of unitUs; absent
// gives def (-1: no upper bound).
func (c *call) filterBound(v *fastjson.Value, def, unitUs int64) (int64, *jsonrpc.Error) {
	if v == nil || v.Type() == fastjson.TypeNull {
		return def, nil
	}
	switch string(v.GetStringBytes()) {
	case "earliest":
		return 0, nil
	case "latest", "finalized", "safe", "pending":
		if def == 0 { // fromBlock latest: from the current unit on
			return c.s.node.PastPerfectTime() / unitUs, nil
		}
		return -1, nil
	}
	n, err := jsonrpc.ParseQuantity(v)
	return int64(min(n, uint64(1<<62/unitUs))), err
}
