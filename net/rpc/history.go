package rpc

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
	"github.com/valyala/fastjson"
)

// The history listings, svc_listAccountReceipts and svc_listConfirmedReceipts
// (docs/decisions.md, "History listings"). A cursor is opaque to clients:
// base64 of "v1|<direction>|<place>", where the place is the last record the
// page looked at in attestation order (node.ListReceipts), stable across
// restarts.

var (
	errListParams     = jsonrpc.InvalidParams("want one object: {address, since, pagination?} (svc_listAccountReceipts) or {since, pagination?, address?} (svc_listConfirmedReceipts)")
	errListAddress    = jsonrpc.InvalidParams("address: want a 0x-prefixed 20-byte hex address")
	errListSince      = jsonrpc.InvalidParams("since: want a non-negative integer of microseconds")
	errListPagination = jsonrpc.InvalidParams("pagination: want an object {cursor?, limit?, newest_first?}")
	errListLimit      = jsonrpc.InvalidParams("pagination.limit: want an integer from 1 to " + strconv.Itoa(node.ListLimitMax))
	errListNewest     = jsonrpc.InvalidParams("pagination.newest_first: want a boolean")
	errListBoth       = jsonrpc.InvalidParams("pagination: cursor and newest_first are mutually exclusive (a cursor carries its direction)")
	errListCursor     = jsonrpc.InvalidParams("pagination.cursor: not a cursor this node gave out")
)

// listReceipts answers either listing; byAccount makes address required
// and inclusive of since (svc_listAccountReceipts: "since is a start
// timestamp"), else since is exclusive ("receipts after since").
func (c *call) listReceipts(dst []byte, byAccount bool) ([]byte, *jsonrpc.Error) {
	obj := c.req.Param(0)
	if obj == nil || obj.Type() != fastjson.TypeObject {
		return dst, errListParams
	}
	q := node.ListQuery{SinceIncl: byAccount, After: -1, Limit: node.ListLimitDefault}
	if v := obj.Get("address"); v != nil && v.Type() != fastjson.TypeNull {
		a, err := jsonrpc.ParseAddress(v)
		if err != nil {
			return dst, errListAddress
		}
		q.Account = (*core.Address)(&a)
	} else if byAccount {
		return dst, errListAddress
	}
	since, err := jsonrpc.ParseQuantity(obj.Get("since"))
	if err != nil || since > math.MaxInt64 {
		return dst, errListSince
	}
	q.SinceUs = int64(since)
	if err := parsePagination(obj.Get("pagination"), &q); err != nil {
		return dst, err
	}
	items, next, lerr := c.s.node.ListReceipts(&q)
	if lerr != nil {
		return dst, internalError(lerr)
	}
	dst = append(dst, `{"items":[`...)
	for i := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendReceipt(dst, &items[i], c.s.shape.spec()) // svc_ methods keep the spec's shapes
	}
	dst = append(dst, ']')
	// next_cursor is the spec's name; cursor the live network's SDK's.
	for _, k := range [...]string{`,"next_cursor":`, `,"cursor":`} {
		dst = append(dst, k...)
		if next < 0 {
			dst = append(dst, "null"...)
		} else {
			dst = jsonrpc.AppendString(dst, encodeCursor(q.NewestFirst, next))
		}
	}
	return append(dst, '}'), nil
}

func parsePagination(v *fastjson.Value, q *node.ListQuery) *jsonrpc.Error {
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil
	}
	if v.Type() != fastjson.TypeObject {
		return errListPagination
	}
	if l := v.Get("limit"); l != nil && l.Type() != fastjson.TypeNull {
		n, err := jsonrpc.ParseQuantity(l)
		if err != nil || n < 1 || n > node.ListLimitMax {
			return errListLimit
		}
		q.Limit = int(n)
	}
	cursor, newest := v.Get("cursor"), v.Get("newest_first")
	hasCursor := cursor != nil && cursor.Type() != fastjson.TypeNull
	if newest != nil && newest.Type() != fastjson.TypeNull {
		if hasCursor {
			return errListBoth
		}
		b, err := newest.Bool()
		if err != nil {
			return errListNewest
		}
		q.NewestFirst = b
	}
	if hasCursor {
		s, err := cursor.StringBytes()
		if err != nil {
			return errListCursor
		}
		var ok bool
		if q.NewestFirst, q.After, ok = decodeCursor(string(s)); !ok {
			return errListCursor
		}
	}
	return nil
}

func encodeCursor(newestFirst bool, place int64) string {
	dir := "asc"
	if newestFirst {
		dir = "desc"
	}
	return base64.StdEncoding.EncodeToString([]byte("v1|" + dir + "|" + strconv.FormatInt(place, 10)))
}

func decodeCursor(s string) (newestFirst bool, place int64, ok bool) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return false, 0, false
	}
	parts := strings.Split(string(raw), "|")
	if len(parts) != 3 || parts[0] != "v1" || (parts[1] != "asc" && parts[1] != "desc") {
		return false, 0, false
	}
	place, err = strconv.ParseInt(parts[2], 10, 64)
	if err != nil || place < 0 {
		return false, 0, false
	}
	return parts[1] == "desc", place, true
}
