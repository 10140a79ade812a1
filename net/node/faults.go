package node

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ledgervenue/node/core"
)

// Committee faults (docs/bridge.md §8): test-venue controls that model the
// validators, not the ledger. They are not logged, so a restart clears
// them, and they act only around the ledger: on admission (the blacklist
// and rejecting validators refuse a transaction before the ledger sees it)
// and on signing (silent validators sign no batch and no claim).
//
// The state is an immutable faultState behind an atomic pointer: admission
// reads it on every transaction without a lock, and each change replaces it
// (under faultBox.mu) and closes the old state's changed channel, which
// wakes an attester waiting for a quorum of signers.

// BlacklistMax bounds the blacklist (addresses and hashes together): each
// entry is checked on every transaction's admission.
const BlacklistMax = 4096

// FaultReasonMax bounds the rejection reason, in bytes: it is repeated once
// per rejecting validator in each refusal.
const FaultReasonMax = 256

// Errors of the admin controls.
var (
	ErrBlacklistFull  = errors.New("blacklist full (max " + strconv.Itoa(BlacklistMax) + " entries)")
	ErrFaultsInvalid  = errors.New("reject and silent must be in [0, committee size]")
	ErrFaultReason    = errors.New("reason must be 1.." + strconv.Itoa(FaultReasonMax) + " bytes when reject > 0")
	ErrBlacklistEntry = errors.New("give exactly one of address and tx_hash")
)

// ErrBlacklisted refuses a transaction from or to a blacklisted address, or
// with a blacklisted hash.
var ErrBlacklisted = errors.New("Transaction is blacklisted")

// RejectedError refuses a transaction that at least f + 1 validators
// rejected: one reason per rejecting validator.
type RejectedError struct{ Reasons []string }

// Error is the spec's message: the distinct reasons joined by ", ".
func (e *RejectedError) Error() string {
	var distinct []string
	for _, r := range e.Reasons {
		if !slices.Contains(distinct, r) {
			distinct = append(distinct, r)
		}
	}
	return "Transaction rejected: " + strings.Join(distinct, ", ")
}

// Faults is what admin_setValidatorFaults sets. Reject members (the lowest
// indices) refuse every transaction with Reason; Silent members (the highest
// indices) sign nothing. A silent member answers nothing at all, so it does
// not reject either: Rejecting says how many rejections a transaction gets.
type Faults struct {
	Reject int
	Reason string
	Silent int
}

// faultState is one immutable state of the faults; see the file comment.
type faultState struct {
	Faults
	addrs  map[core.Address]struct{}
	hashes map[core.Hash]struct{}
	// signers are the indices of the members that sign (not silent),
	// ascending. Shared: never modified.
	signers []int
	// rejections is one reason per member that rejects and is not silent.
	rejections []string
	changed    chan struct{} // closed when this state is replaced
}

// faultBox holds the current faultState; mu serializes the changes.
type faultBox struct {
	mu  sync.Mutex
	cur atomic.Pointer[faultState]
}

// initFaults installs the fault-free state (Open).
func (n *Node) initFaults() {
	n.faults.cur.Store(n.newFaultState(Faults{}, nil, nil))
}

func (n *Node) newFaultState(f Faults, addrs map[core.Address]struct{}, hashes map[core.Hash]struct{}) *faultState {
	s := &faultState{Faults: f, addrs: addrs, hashes: hashes, changed: make(chan struct{})}
	for i := range n.committee.N - f.Silent {
		s.signers = append(s.signers, i)
	}
	for range min(f.Reject, n.committee.N-f.Silent) {
		s.rejections = append(s.rejections, f.Reason)
	}
	return s
}

// replaceFaults installs the state next builds from the current one.
func (n *Node) replaceFaults(next func(old *faultState) (*faultState, error)) error {
	n.faults.mu.Lock()
	defer n.faults.mu.Unlock()
	old := n.faults.cur.Load()
	s, err := next(old)
	if err != nil {
		return err
	}
	n.faults.cur.Store(s)
	close(old.changed)
	return nil
}

// SetValidatorFaults replaces the validators' faults (the blacklist stays).
func (n *Node) SetValidatorFaults(f Faults) error {
	N := n.committee.N
	switch {
	case f.Reject < 0 || f.Reject > N || f.Silent < 0 || f.Silent > N:
		return ErrFaultsInvalid
	case f.Reject > 0 && (f.Reason == "" || len(f.Reason) > FaultReasonMax):
		return ErrFaultReason
	}
	if f.Reject == 0 {
		f.Reason = ""
	}
	return n.replaceFaults(func(old *faultState) (*faultState, error) {
		return n.newFaultState(f, old.addrs, old.hashes), nil
	})
}

// ValidatorFaults returns the faults in force.
func (n *Node) ValidatorFaults() Faults { return n.faults.cur.Load().Faults }

// Blacklist adds (or with remove, removes) one address or one transaction
// hash: exactly one of addr and hash is non-nil. Removing an absent entry
// is no error.
func (n *Node) Blacklist(addr *core.Address, hash *core.Hash, remove bool) error {
	if (addr == nil) == (hash == nil) {
		return ErrBlacklistEntry
	}
	return n.replaceFaults(func(old *faultState) (*faultState, error) {
		addrs, hashes := old.addrs, old.hashes
		if addr != nil {
			addrs = editSet(addrs, *addr, remove)
		} else {
			hashes = editSet(hashes, *hash, remove)
		}
		if len(addrs)+len(hashes) > BlacklistMax {
			return nil, ErrBlacklistFull
		}
		return n.newFaultState(old.Faults, addrs, hashes), nil
	})
}

// editSet returns a copy of m with k added or removed (copy on write: the
// old state's set is shared with its readers).
func editSet[K comparable](m map[K]struct{}, k K, remove bool) map[K]struct{} {
	out := make(map[K]struct{}, len(m)+1)
	for v := range m {
		out[v] = struct{}{}
	}
	if remove {
		delete(out, k)
	} else {
		out[k] = struct{}{}
	}
	return out
}

// admit is the committee's verdict on tx before the ledger sees it: the
// blacklist, then f + 1 rejections. Below f + 1 the transaction goes on,
// and the rejections are the minority's dissent (svc_sendRawTransaction).
func (s *faultState) admit(tx *core.Tx, f int) error {
	_, from := s.addrs[tx.From]
	_, to := s.addrs[tx.To]
	_, hash := s.hashes[tx.Hash]
	switch {
	case from || (to && tx.HasTo) || hash:
		return ErrBlacklisted
	case len(s.rejections) >= f+1:
		return &RejectedError{Reasons: s.rejections}
	}
	return nil
}

// SubmitTxVotes is SubmitTx that also stores, through dissent (when not
// nil) and before tx can become durable, the rejections of the validators
// that refused tx while it was accepted anyway (fewer than f + 1 of them):
// what svc_sendRawTransaction reports as errors. The slice is shared: never
// modified.
func (n *Node) SubmitTxVotes(tx *core.Tx, dissent *[]string, done func(*Entry, error)) (core.Reject, error) {
	s := n.faults.cur.Load()
	if err := s.admit(tx, n.committee.F); err != nil {
		n.stats.countTx(tx, &core.Reject{}, err)
		return core.Reject{}, err
	}
	if dissent != nil {
		*dissent = s.rejections
	}
	rej, err := n.submit(&core.Input{Kind: core.InputTx, Tx: *tx}, done)
	n.stats.countTx(tx, &rej, err)
	return rej, err
}

// SigningValidators returns the indices of the committee members that sign
// at the moment (ascending): batches and claims carry their signatures
// only, and they are a pending transaction's votes. Shared: never modified.
func (n *Node) SigningValidators() []int {
	return n.faults.cur.Load().signers
}

// awaitSigners returns the members that sign once they are at least a
// quorum, waiting while they are fewer: the batch waits, nothing is lost.
// Each second of waiting counts as a batch asked of every member and signed
// by the signers, so validator_uptime measures the silence while it lasts.
// It reports false when the node closes meanwhile (the records are durable:
// a restart attests them).
func (n *Node) awaitSigners() ([]int, bool) {
	s := n.faults.cur.Load()
	if len(s.signers) >= n.committee.Quorum {
		return s.signers, true
	}
	n.observeWaiting(len(s.signers))
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-s.changed:
			if s = n.faults.cur.Load(); len(s.signers) >= n.committee.Quorum {
				return s.signers, true
			}
		case <-tick.C:
			n.observeWaiting(len(n.faults.cur.Load().signers))
		case <-n.quit:
			return nil, false
		}
	}
}

// observeWaiting counts a batch that could not be signed: the members were
// asked, signers answered.
func (n *Node) observeWaiting(signers int) {
	n.metrics.observeBatch(time.Now(), signers, n.committee.N)
}
