package marketdata

import "github.com/ledgervenue/node/core/clob"

// Trigger is one stored trigger as the wire shows it: the engine's record
// and the hash of the transaction that stored it (HasTx false when the node
// no longer knows it, e.g. after a restart).
type Trigger struct {
	Info   clob.TriggerInfo
	TxHash clob.Hash
	HasTx  bool
}

// ValidTriggerType reports whether t is a trigger type the engine takes:
// clob.TriggerTakeProfit or clob.TriggerStopLoss.
func ValidTriggerType(t uint8) bool {
	return t == clob.TriggerTakeProfit || t == clob.TriggerStopLoss
}

// ValidGrouping reports whether g is a trigger grouping the engine takes:
// clob.GroupingNone or clob.GroupingAsset.
func ValidGrouping(g uint8) bool {
	return g == clob.GroupingNone || g == clob.GroupingAsset
}
