package node

import (
	"bytes"
	"errors"
	"slices"
	"strconv"

	"github.com/ledgervenue/node/core"
)

// ProcessedDepositsScanMax bounds svc_getProcessedDeposits: the bridge
// records (deposits from it, withdrawals to it) it reads from the history.
const ProcessedDepositsScanMax = 10_000

// ErrTooManyDeposits refuses svc_getProcessedDeposits past the bound.
var ErrTooManyDeposits = errors.New("the history holds more than " + strconv.Itoa(ProcessedDepositsScanMax) +
	" bridge records: the processed-deposit set is not served")

// ProcessedDeposits returns the ids of the attested deposits, ascending as
// 256-bit big-endian numbers (the live network's replay-protection set,
// docs/bridge.md §9). It reads the history's index of the bridge address,
// without the sequencer's lock. Retention (retain.go) prunes old deposits
// from it like the rest of the history.
func (n *Node) ProcessedDeposits() ([]core.Hash, error) {
	n.recentMu.RLock()
	hi := n.attestedEnd
	n.recentMu.RUnlock()
	var places []uint64
	err := n.log.AccountPlaces(core.BridgeAddress, 0, hi, false, func(place uint64) bool {
		places = append(places, place)
		return len(places) <= ProcessedDepositsScanMax
	})
	if err != nil {
		return nil, err
	}
	if len(places) > ProcessedDepositsScanMax {
		return nil, ErrTooManyDeposits
	}
	recs, err := n.log.Records(places)
	if err != nil {
		return nil, err
	}
	var ids []core.Hash
	for _, s := range recs {
		if s != nil && s.Rec.Kind == core.RecordDeposit {
			ids = append(ids, s.Rec.Tx.Hash)
		}
	}
	slices.SortFunc(ids, func(a, b core.Hash) int { return bytes.Compare(a[:], b[:]) })
	return ids, nil
}
