package node

import (
	"strconv"
	"time"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/claim"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/tickrec"
	"github.com/ledgervenue/node/persist"
)

// Bridge withdrawals downstream of the ledger (docs/bridge.md §4). After a
// live tick the node takes the ledger's outcomes (Ledger.LastWithdrawals),
// keeps them with the tick's entry and publishes them with the tick: the
// writer stores the rows in the tick's group commit, and the publisher gets
// them (svc_withdrawals) only once durable. The claimer then signs the
// claims of the executed rows with the validators signing at that time and
// stores the proofs with a later group commit; a row stays pending while
// fewer than n − f validators sign, and is signed again on the next
// withdrawal batch or after ClaimRetryEvery.
//
// Memory: the rows live on disk. The pending set is read from disk in
// passes of at most ClaimSignMax rows, so nothing in RAM grows with the
// withdrawals' history; a restart signs what was left pending.

// ClaimSignMax bounds the pending rows one signing pass reads, signs and
// stores (one group commit); a pass that filled it runs again at once.
const ClaimSignMax = 1024

// ClaimRetryEvery is how often the claimer looks again at rows left
// pending for lack of signers.
const ClaimRetryEvery = 200 * time.Millisecond

// Withdrawal statuses (docs/bridge.md §4).
const (
	StatusPending   = "pending"
	StatusClaimable = "claimable"
	StatusRefused   = "refused"
)

// Withdrawal is what the node knows about one executed withdrawal: its row,
// its status, and its claim once claimable.
type Withdrawal struct {
	Row    persist.WithdrawalRow
	Status string
	// Proof is set once the withdrawal is claimable.
	Proof *ClaimProof
}

// ClaimProof is what a claim on the bridged chain passes (docs/bridge.md §4):
// the amount in bridged-chain decimals, the recipient, the ledger-side
// token, the proof, the auxiliary suffix (the tx hash) and the claim hash.
type ClaimProof struct {
	Amount    uint256.Int
	To, Token core.Address
	Proof     []byte
	Aux       core.Hash
	ClaimHash core.Hash
}

// recordWithdrawals keeps the outcomes of the tick just applied with its
// entry, for the writer, and adds them to t, the tick's publication.
// REQUIRES: n.mu held; e is a live tick's entry.
func (n *Node) recordWithdrawals(e *Entry, t *tickrec.Tick) {
	outs := n.ledger.LastWithdrawals()
	if len(outs) == 0 {
		return
	}
	e.withdrawals = make([]persist.WithdrawalRow, len(outs))
	t.Withdrawals = make([]tickrec.Withdrawal, len(outs))
	for i := range outs {
		e.withdrawals[i] = persist.WithdrawalRow{Out: outs[i], Pos: uint32(i)}
		t.Withdrawals[i] = tickrec.Withdrawal{Account: clob.Address(outs[i].Withdrawer), JSON: AppendWithdrawalUpdate(nil, &outs[i])}
	}
}

// AppendWithdrawalUpdate appends o's WithdrawalUpdate object: the one
// encoder of svc_withdrawals and the REST listings, so both carry the same
// bytes for the same row. withdrawal_id (the live network's key, which its
// SDK lists and looks withdrawals up by) comes first, then the spec's
// tx_hash: both in every row, whichever path made it (docs/bridge.md §4).
func AppendWithdrawalUpdate(dst []byte, o *core.WithdrawalOutcome) []byte {
	dst = append(dst, `{"withdrawal_id":`...)
	dst = jsonrpc.AppendData(dst, o.ID[:])
	dst = append(dst, `,"tx_hash":`...)
	dst = jsonrpc.AppendData(dst, o.TxHash[:])
	dst = append(dst, `,"withdrawer":`...)
	dst = jsonrpc.AppendData(dst, o.Withdrawer[:])
	dst = append(dst, `,"to":`...)
	dst = jsonrpc.AppendData(dst, o.To[:])
	dst = append(dst, `,"token":`...)
	dst = jsonrpc.AppendData(dst, o.Token[:])
	dst = append(dst, `,"amount":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &o.Amount)
	if o.Error != "" {
		dst = append(dst, `,"error":`...)
		dst = jsonrpc.AppendString(dst, o.Error)
	}
	dst = append(dst, `,"timestamp_us":`...)
	dst = strconv.AppendInt(dst, o.TickUs, 10)
	return append(dst, '}')
}

// BridgeConfig returns the bridge configuration (read-only).
func (n *Node) BridgeConfig() *core.BridgeConfig { return &n.cfg.Bridge }

// Withdrawal reads the withdrawal with tx hash or withdrawal id h from
// disk; found is false while no batch executed it (unknown, or accepted
// and waiting).
func (n *Node) Withdrawal(h core.Hash) (w Withdrawal, found bool, err error) {
	row, c, found, err := n.log.Withdrawal(h)
	if !found || err != nil {
		return Withdrawal{}, false, err
	}
	w.Row = row
	bt := n.cfg.Bridge.TokenFor(row.Out.Token)
	switch {
	case row.Out.Error != "" || bt == nil:
		// A token the configuration does not cover is never signed.
		w.Status = StatusRefused
	case c == nil:
		w.Status = StatusPending
	default:
		w.Status = StatusClaimable
		w.Proof = &ClaimProof{Amount: claimAmount(bt, &row.Out.Amount), To: row.Out.To, Token: row.Out.Token,
			Proof: c.Proof, Aux: row.Out.TxHash, ClaimHash: c.ClaimHash}
	}
	return w, true, nil
}

// Withdrawals appends to dst the rows from `from` on, at most limit, of
// every withdrawer or of account (when not nil), read from disk.
func (n *Node) Withdrawals(dst []persist.WithdrawalRow, account *core.Address, from persist.WithdrawalCursor, limit int) ([]persist.WithdrawalRow, error) {
	return n.log.Withdrawals(dst, account, from, limit)
}

// claimAmount is amount (18 decimals) in the token's bridged-chain
// decimals; admission made it a whole number of them.
func claimAmount(bt *core.BridgeToken, amount *uint256.Int) uint256.Int {
	var out uint256.Int
	step := bt.Step()
	out.Div(amount, &step)
	return out
}

// wakeClaimer tells the claimer that executed rows became durable.
func (n *Node) wakeClaimer() {
	select {
	case n.claimWake <- struct{}{}:
	default: // a pass is due already
	}
}

// claimer signs the pending claims: at start-up (what a restart left
// pending), after each durable withdrawal batch, and every ClaimRetryEvery
// while rows wait for signers.
func (n *Node) claimer() {
	defer n.wg.Done()
	retry := time.NewTimer(0)
	defer retry.Stop()
	for {
		select {
		case <-n.quit:
			return
		case <-n.claimWake:
		case <-retry.C:
		}
		if n.signClaims() {
			retry.Reset(ClaimRetryEvery)
		}
	}
}

// signClaims signs and stores the pending claims, ClaimSignMax at a time.
// It reports whether rows are left waiting (too few signers, or a read
// error worth retrying).
func (n *Node) signClaims() (waiting bool) {
	domain := claim.Domain(n.cfg.ChainID, n.cfg.Bridge.Version)
	var rows []persist.WithdrawalRow
	for {
		var err error
		rows, err = n.log.PendingClaims(rows[:0], ClaimSignMax)
		if err != nil {
			n.Logf("withdrawal claims: %v", err)
			return true
		}
		if len(rows) == 0 {
			return false
		}
		signers := n.SigningValidators()
		if len(signers) < n.committee.Quorum {
			return true
		}
		claims := make([]persist.Claim, len(rows))
		for i := range rows {
			claims[i] = n.signClaim(domain, &rows[i].Out, signers)
			claims[i].TickUs, claims[i].Pos = rows[i].Out.TickUs, rows[i].Pos
		}
		if !n.store(admission{claims: claims}) {
			return false // closing, or the log failed (the node stopped)
		}
		if len(rows) < ClaimSignMax {
			return false
		}
	}
}

// signClaim has signers sign o's claim. A token the configuration does not
// cover gets no proof: the row leaves the pending set refused.
func (n *Node) signClaim(domain [32]byte, o *core.WithdrawalOutcome, signers []int) persist.Claim {
	c := persist.Claim{TxHash: o.TxHash}
	bt := n.cfg.Bridge.TokenFor(o.Token)
	if bt == nil {
		return c
	}
	amount := claimAmount(bt, &o.Amount)
	c.ClaimHash = claim.Hash(domain, core.BridgeAddress, o.Token, o.To, &amount, o.TxHash[:])
	c.Proof = claim.Proof(n.committee.SignClaim(c.ClaimHash, signers))
	return c
}
