package node

import (
	"testing"

	"github.com/ledgervenue/node/core"
)

// TestTxOutcomesNamed: every outcome has a label value, and countTx files
// the node's own refusals and the ledger's rejects under them.
func TestTxOutcomesNamed(t *testing.T) {
	for o, name := range TxOutcomeNames {
		if name == "" {
			t.Errorf("outcome %d has no name", o)
		}
	}
	var s stats
	order := &core.Tx{To: core.OrderbookAddress, HasTo: true}
	transfer := &core.Tx{To: core.Address{1}, HasTo: true}
	s.countTx(order, &core.Reject{}, nil)
	s.countTx(transfer, &core.Reject{Code: core.RejectPastNonce}, nil)
	s.countTx(transfer, &core.Reject{}, ErrOverloaded)
	s.countTx(transfer, &core.Reject{}, ErrLogFailed)
	s.countTx(order, &core.Reject{}, ErrBlacklisted)
	s.countTx(order, &core.Reject{}, &RejectedError{Reasons: []string{"no"}})
	for _, c := range []struct {
		kind    int
		outcome string
	}{{TxKindOrderbook, "admitted"}, {TxKindOther, "past_nonce"}, {TxKindOther, "overloaded"}, {TxKindOther, "stopped"},
		{TxKindOrderbook, "blacklisted"}, {TxKindOrderbook, "validators_rejected"}} {
		o := -1
		for i, n := range TxOutcomeNames {
			if n == c.outcome {
				o = i
			}
		}
		if got := s.txs[c.kind][o].Load(); got != 1 {
			t.Errorf("%s %s counted %d, want 1", TxKindNames[c.kind], c.outcome, got)
		}
	}
}

// TestCountTxAllocs: counting an admission allocates nothing.
func TestCountTxAllocs(t *testing.T) {
	var s stats
	tx := &core.Tx{To: core.OrderbookAddress, HasTo: true}
	var rej core.Reject
	if n := testing.AllocsPerRun(1000, func() { s.countTx(tx, &rej, nil) }); n != 0 {
		t.Fatalf("countTx allocates %v times", n)
	}
}
