package core

import (
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// RejectCode says why the ledger refused an input. It is a result code, not
// an error: rejections are ordinary outcomes on the write path.
type RejectCode uint8

// Protocol-level rejections (the spec's code -32000) come first, in the
// order the ledger checks them; RejectApp is an application-level revert
// (code 3).
const (
	RejectNone RejectCode = iota
	RejectChainID
	RejectPastNonce
	RejectFutureNonce
	RejectPending
	RejectInsufficientBalance
	RejectUnderpriced
	RejectTipAboveFeeCap
	RejectGasLimit
	RejectContractCreation
	RejectApp
	// RejectMarket refuses a market creation (Detail says why).
	RejectMarket
	// RejectLocked refuses a transaction from a locked account (Target is
	// its recovery target; docs/bridge.md §7).
	RejectLocked
	// RejectEquivocation refuses a transaction that conflicts with the
	// account's newest, not yet durable transaction (Target). The sequencer
	// then locks the account with an InputLockAccount and answers
	// RejectLocked.
	RejectEquivocation
	// RejectNoTransaction refuses to lock an account that never sent a
	// transaction: it has no recovery target.
	RejectNoTransaction
	// RejectControl refuses a test-venue control (controls.go; Detail
	// says why).
	RejectControl
	// RejectWaitTick refuses a staged transaction that cannot be admitted
	// while a tick clears (clob.Engine.Stageable; a withdrawal): the
	// sequencer applies it again, not staged, once the tick has ended.
	// Never answered to a client.
	RejectWaitTick
)

// Reject describes a refused input. Which fields are meaningful depends on
// Code: Have/Want for chain id, nonces and gas; Fee/BaseFee for underpriced
// transactions; App, and Reason or Detail, for RejectApp (AppReason reads
// them: Reason is clob.OK when the application is not the orderbook, or for
// an orderbook withdraw's refusal the orderbook has no reason of its own for,
// and Detail is then the reason after the application's prefix, "Bridge
// validation failed: " or "Recovery validation failed: "); Detail for
// RejectMarket and RejectControl; Target for RejectLocked and RejectEquivocation.
type Reject struct {
	Code    RejectCode
	Have    uint64
	Want    uint64
	Fee     uint256.Int
	BaseFee uint256.Int
	App     Address
	Reason  clob.Reason
	Detail  string
	Target  TxRef
}

// AppReason is the reason of a RejectApp after its application's prefix:
// the orderbook's Reason when set, else Detail.
func (r *Reject) AppReason() string {
	if r.Reason != clob.OK {
		return r.Reason.String()
	}
	return r.Detail
}

// OK reports whether the input was accepted.
func (r *Reject) OK() bool { return r.Code == RejectNone }
