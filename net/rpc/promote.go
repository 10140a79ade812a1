package rpc

import (
	"errors"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/net/node"
)

var errNoReplication = jsonrpc.InvalidParams("admin_promote needs a node started with --nats --follow")

// promote answers admin_promote: a follower takes the lease and leads from
// the stream's end (net/replicate, docs/scaling.md), and the answer is its
// new replication status. A node without replication, or one that leads
// already, is refused as admin_advanceTime refuses a wall clock.
func (c *call) promote(dst []byte) ([]byte, *jsonrpc.Error) {
	r := c.s.cfg.Replication
	if r == nil {
		return dst, errNoReplication
	}
	if err := r.Promote(); errors.Is(err, node.ErrLeading) {
		return dst, jsonrpc.InvalidParams(err.Error())
	} else if err != nil {
		return dst, internalError(err)
	}
	return appendReplication(dst, r.Status()), nil
}
