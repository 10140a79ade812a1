package rpc

import (
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
)

// The admission stage. A lone eth_sendRawTransaction is decoded, its sender
// recovered and its orderbook call prepared on the event loop, in parallel
// across loops; submitting it to the sequencer takes the node's lock, which
// an auction tick holds while it clears. So the loop does not submit: it
// hands the transaction to one admitter goroutine through a bounded queue
// and goes on serving its other connections, whose reads never wait for a
// tick. The admitter submits in arrival order (a connection's pipelined
// sends keep their order) and answers a refusal at once; an admitted
// transaction is answered by the writer once durable, as before.
//
//	event loop ─ decode, recover, prepare ─▶ admits (chan, cap QueueMax) ─▶ admitter ─▶ node.SubmitTxVotes
//	     └ full (QueueMax transactions, QueueBytesMax bytes of calldata): answered at once, -32005

// admitJob is one transaction waiting for admission, and who to answer.
type admitJob struct {
	r  *reply
	tx core.Tx // self-contained: its calldata is a copy (toCoreTx)
}

// admit queues tx for the admitter, or returns the refusal of a full queue.
func (s *Service) admit(r *reply, tx *core.Tx) *jsonrpc.Error {
	if err := s.admitQ.reserve(len(tx.Data)); err != nil {
		return err
	}
	s.admits <- admitJob{r: r, tx: *tx}
	return nil
}

// admitter submits the queued transactions until Close.
func (s *Service) admitter() {
	defer s.admitting.Done()
	for j := range s.admits {
		s.admitQ.taken()
		s.admitQ.done(len(j.tx.Data))
		rej, err := s.node.SubmitTxVotes(&j.tx, &j.r.dissent, j.r.durable)
		switch {
		case err != nil:
			j.r.fail(submitError(err, s.cfg.Compat))
		case !rej.OK():
			j.r.fail(rejectError(&rej, &j.tx, s.cfg.Compat))
		}
	}
}
