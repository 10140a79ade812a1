package rpc

import "github.com/ledgervenue/node/codec/jsonrpc"

// promote answers admin_promote: a follower takes the lease and leads from
// the stream's end (net/replicate, docs/scaling.md). It answers the new
// replication status; a node without replication, or one that leads
// already, is refused.
func (c *call) promote(dst []byte) ([]byte, *jsonrpc.Error) {
	r := c.s.cfg.Replication
	if r == nil {
		return dst, validationError("admin_promote needs replication (--nats): this node has no followers or leader")
	}
	if err := r.Promote(); err != nil {
		return dst, validationError(err.Error())
	}
	return appendReplication(dst, r.Status()), nil
}
