package core

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/binread"
	"github.com/ledgervenue/node/core/clob"
)

// Withdrawals to the bridged chain (docs/bridge.md §2-§3). Two calls make
// one: withdraw(address,address,uint256,uint128) on the Bridge (the spec's,
// keyed by its transaction hash) and the same signature on the orderbook
// (the live network's current path, keyed by a withdrawal id derived like
// an order id). Both run the code below, and differ only in the
// withdrawal's id and in the application whose refusal a client sees. A
// withdraw transaction is admitted at once (every check below, or a
// RejectApp) and queued; the first withdrawal batch after its admission (a
// Tick at a multiple of clob.TransferIntervalUs, after the engine's
// auctions) executes it: left out (not_included), refused
// (insufficient_balance), or debited and burned into withdrawn.

// WithdrawalsPendingMax bounds the withdrawals admitted and not yet
// executed; one more is refused ("too many pending withdrawals"). Each
// waits at most one batch, so this is the most one batch interval admits.
const WithdrawalsPendingMax = 16_384

// DefaultWithdrawalsPerBatchMax is Config.WithdrawalsPerBatchMax when zero.
const DefaultWithdrawalsPerBatchMax = 4096

// withdrawSelector is the selector of withdraw(address,address,uint256,uint128),
// the Bridge's and the orderbook's alike.
var withdrawSelector = binary.BigEndian.Uint32(crypto.Keccak256([]byte("withdraw(address,address,uint256,uint128)")))

// withdrawCallSize is the selector and the four static argument words.
const withdrawCallSize = 4 + 4*32

// Bridge refusal reasons without a parameter (docs/bridge.md §2).
const (
	withdrawMalformed   = "malformed call, want withdraw(address,address,uint256,uint128)"
	withdrawValue       = "value must be zero"
	withdrawNotBridged  = "token not bridged"
	withdrawZeroTo      = "zero recipient"
	withdrawZeroAmount  = "zero amount"
	withdrawUnaligned   = "deadline not aligned to the auction interval (500000 µs)"
	withdrawPassed      = "deadline passed"
	withdrawPendingFull = "too many pending withdrawals"
)

// pendingWithdrawal is an admitted withdrawal waiting for its batch.
type pendingWithdrawal struct {
	hash       Hash
	id         Hash   // its withdrawal id: hash for the Bridge's, WithdrawalID for the orderbook's
	seq        uint64 // the withdraw transaction's input seq: its Landed tag
	owner, to  Address
	token      Address
	amount     uint256.Int // 18 decimals
	deadlineUs int64       // saturated at math.MaxInt64
	landUs     int64       // the batch it executes in
}

// withdrawals is the Bridge's part of the ledger.
// Invariants: pending is in admission order (seq ascending, landUs
// non-decreasing, since admission times never decrease) and every entry
// lands after lastBatchUs; len(pending) ≤ WithdrawalsPendingMax.
type withdrawals struct {
	cfg      BridgeConfig
	perBatch int
	pending  []pendingWithdrawal
	// lastBatchUs is the latest tick at a multiple of TransferIntervalUs:
	// the last withdrawal batch (0: none yet).
	lastBatchUs int64
	// withdrawn is what executed withdrawals burned, per token: a value
	// sink like the fees.
	withdrawn map[Address]*uint256.Int
	// outcomes is the latest Tick's result, reused.
	outcomes []WithdrawalOutcome
}

func newWithdrawals(cfg *Config) withdrawals {
	per := cfg.WithdrawalsPerBatchMax
	if per <= 0 {
		per = DefaultWithdrawalsPerBatchMax
	}
	return withdrawals{cfg: cfg.Bridge, perBatch: per, withdrawn: make(map[Address]*uint256.Int)}
}

// LastWithdrawals returns the outcomes of the withdrawals the latest Tick
// executed, in admission order: valid until the next Tick.
func (l *Ledger) LastWithdrawals() []WithdrawalOutcome { return l.wd.outcomes }

// Withdrawn returns what executed withdrawals of token have burned.
func (l *Ledger) Withdrawn(token Address) uint256.Int {
	if v := l.wd.withdrawn[token]; v != nil {
		return *v
	}
	return uint256.Int{}
}

// PendingWithdrawals returns the number of withdrawals waiting for their
// batch.
func (l *Ledger) PendingWithdrawals() int { return len(l.wd.pending) }

// WithdrawalID is the id of the orderbook withdrawal signer sent at nonce:
// keccak256(abi.encode(address signer, uint64 nonce, uint32 sequence)), the
// live network's order id, with sequence 0 since a withdrawal is its own
// transaction (never inside submitBatch or delegated). It is not the
// transaction's hash: a client derives it before signing.
func WithdrawalID(signer Address, nonce uint64) Hash {
	return Hash(clob.OrderID(clob.Address(signer), nonce, 0))
}

// isOrderbookWithdraw reports whether tx calls the orderbook's withdraw,
// from its selector alone: the ledger takes it down the withdrawal path
// (and exempts it from gas) before any decoding, as it does a call to the
// Bridge. Inside submitBatch or delegated the selector stays the
// orderbook decoder's refusal (clob.ReasonWithdrawBatched).
func isOrderbookWithdraw(tx *Tx) bool {
	return tx.HasTo && tx.To == OrderbookAddress && len(tx.Data) >= 4 && binary.BigEndian.Uint32(tx.Data) == withdrawSelector
}

// isWithdraw reports whether tx is a withdrawal, to the Bridge or through
// the orderbook.
func isWithdraw(tx *Tx) bool {
	return tx.HasTo && tx.To == BridgeAddress || isOrderbookWithdraw(tx)
}

// LandsInTick reports whether a transaction's receipt is in the block of
// an auction tick rather than of its attestation batch: an orderbook call
// (the tick its intents land in) and a withdrawal (its withdrawal batch).
func LandsInTick(tx *Tx) bool {
	return tx.HasTo && (tx.To == OrderbookAddress || tx.To == BridgeAddress)
}

// AppendWithdrawCall appends the call data of withdraw(token, recipient,
// amount, deadlineUs) to dst.
func AppendWithdrawCall(dst []byte, token, recipient Address, amount *uint256.Int, deadlineUs uint64) []byte {
	dst = binary.BigEndian.AppendUint32(dst, withdrawSelector)
	for _, a := range [2]*Address{&token, &recipient} {
		dst = append(append(dst, make([]byte, 12)...), a[:]...)
	}
	dst = binread.AppendU256(dst, amount)
	return binary.BigEndian.AppendUint64(append(dst, make([]byte, 24)...), deadlineUs)
}

// applyWithdraw admits a withdraw transaction (isWithdraw) that passed the
// protocol checks: the withdrawal checks, then the nonce is spent and the
// withdrawal queued. It pays no fee (docs/bridge.md §2). An orderbook
// withdrawal leaves LastEnvelope empty: the transaction carries no intent.
func (l *Ledger) applyWithdraw(tx *Tx, timeUs int64) (*TxRecord, Reject) {
	w, reason := l.checkWithdraw(tx, timeUs)
	if reason != "" {
		return nil, withdrawReject(tx.To, reason)
	}
	l.seq++
	l.accept(l.account(tx.From), tx)
	w.seq, w.id = l.seq, tx.Hash
	if tx.To == OrderbookAddress {
		w.id = WithdrawalID(tx.From, tx.Nonce)
		l.env = clob.Envelope{Intents: l.env.Intents[:0]}
	}
	l.wd.pending = append(l.wd.pending, w)
	return &TxRecord{Kind: RecordTx, Seq: l.seq, Tx: *tx, Status: 1, GasUsed: TxGas}, Reject{}
}

// withdrawReject is the refusal of a withdrawal to app with reason, one of
// the Bridge's (Detail). Through the orderbook, a fault every orderbook
// call can have (malformed call data, a value, the deadline) says what the
// orderbook says of it for its other calls (Reason); the bridge's own
// faults keep their text.
func withdrawReject(app Address, reason string) Reject {
	rej := Reject{Code: RejectApp, App: app, Detail: reason}
	if app != OrderbookAddress {
		return rej
	}
	switch reason {
	case withdrawMalformed:
		rej.Reason = clob.ReasonMalformed
	case withdrawValue:
		rej.Reason = clob.ReasonValueNonZero
	case withdrawUnaligned:
		rej.Reason = clob.ReasonDeadlineAlign
	case withdrawPassed:
		rej.Reason = clob.ReasonDeadlinePast
	}
	return rej
}

// checkWithdraw decodes a withdraw call and applies the Bridge's checks in
// the rule book's order; a non-empty reason refuses it.
func (l *Ledger) checkWithdraw(tx *Tx, timeUs int64) (w pendingWithdrawal, reason string) {
	data := tx.Data
	if len(data) < 4 {
		return w, withdrawMalformed
	}
	if binary.BigEndian.Uint32(data) != withdrawSelector {
		return w, "unknown function selector 0x" + hex.EncodeToString(data[:4])
	}
	var deadline uint256.Int
	if len(data) != withdrawCallSize || !addressWord(data[4:36], &w.token) || !addressWord(data[36:68], &w.to) ||
		!allZero(data[100:116]) {
		return w, withdrawMalformed
	}
	w.amount.SetBytes32(data[68:100])
	deadline.SetBytes32(data[100:132])
	if !tx.Value.IsZero() {
		return w, withdrawValue
	}
	t := l.wd.cfg.TokenFor(w.token)
	switch {
	case t == nil:
		return w, withdrawNotBridged
	case w.to == (Address{}):
		return w, withdrawZeroTo
	case w.amount.IsZero():
		return w, withdrawZeroAmount
	}
	if reason = checkAmount(t, &w.amount); reason != "" {
		return w, reason
	}
	var rem uint256.Int
	if rem.Mod(&deadline, uint256.NewInt(clob.TransferIntervalUs)); !rem.IsZero() {
		return w, withdrawUnaligned
	}
	w.deadlineUs = math.MaxInt64
	if deadline.IsUint64() && deadline.Uint64() < math.MaxInt64 {
		w.deadlineUs = int64(deadline.Uint64())
	}
	w.landUs = batchAfter(timeUs)
	if w.deadlineUs <= l.wd.lastBatchUs || w.deadlineUs < w.landUs {
		return w, withdrawPassed
	}
	if len(l.wd.pending) >= WithdrawalsPendingMax {
		return w, withdrawPendingFull
	}
	w.hash, w.owner = tx.Hash, tx.From
	return w, ""
}

// checkAmount checks an 18-decimal amount against a bridged token: a whole
// number of bridged-chain units, within [Min, Max] in those units.
func checkAmount(t *BridgeToken, amount *uint256.Int) string {
	var units, rem uint256.Int
	step := t.Step()
	units.DivMod(amount, &step, &rem)
	switch {
	case !rem.IsZero():
		return "amount not a whole number of bridged-chain units (multiple of " + step.Dec() + ")"
	case units.Lt(&t.Min):
		return "amount below minimum " + t.Min.Dec()
	case units.Gt(&t.Max):
		return "amount above maximum " + t.Max.Dec()
	}
	return ""
}

// batchAfter is the first withdrawal batch after timeUs.
func batchAfter(timeUs int64) int64 {
	return (timeUs/clob.TransferIntervalUs + 1) * clob.TransferIntervalUs
}

// addressWord reads an ABI address word (12 zero bytes, then the address).
func addressWord(word []byte, a *Address) bool {
	copy(a[:], word[12:32])
	return allZero(word[:12])
}

// withdrawalsDue folds the next withdrawal batch into the engine's
// NextTickDue answer (best, MaxInt64 when nothing is due).
func (l *Ledger) withdrawalsDue(best, afterUs, nowUs int64) (int64, bool) {
	if len(l.wd.pending) > 0 {
		t := max(l.wd.pending[0].landUs, l.wd.lastBatchUs+clob.TransferIntervalUs)
		best = min(best, clob.TickAfter(t, clob.TransferIntervalUs, afterUs))
	}
	return best, best <= nowUs
}

// runWithdrawals executes the withdrawal batch at tickUs, if tickUs is one,
// after the engine's tick: every pending withdrawal that lands by then, in
// admission order. Each outcome's seq joins the tick's Landed tags (in
// admission order with the engine's), so the node links the withdraw
// transaction's receipt to this tick as it does an orderbook intent's.
func (l *Ledger) runWithdrawals(tickUs int64) {
	l.wd.outcomes = l.wd.outcomes[:0]
	if tickUs%clob.TransferIntervalUs != 0 || tickUs <= l.wd.lastBatchUs {
		return
	}
	l.wd.lastBatchUs = tickUs
	n, included := 0, 0
	for n < len(l.wd.pending) && l.wd.pending[n].landUs <= tickUs {
		w := &l.wd.pending[n]
		o := WithdrawalOutcome{TxHash: w.hash, ID: w.id, Seq: w.seq, Withdrawer: w.owner, To: w.to, Token: w.token,
			Amount: w.amount, TickUs: tickUs}
		switch {
		case included >= l.wd.perBatch || w.deadlineUs < tickUs: // the solver left it out
			o.Error = WithdrawNotIncluded
		case !l.withdraw(w):
			included++
			o.Error = WithdrawInsufficientBalance
		default:
			included++
		}
		l.wd.outcomes = append(l.wd.outcomes, o)
		l.tick.Landed = append(l.tick.Landed, w.seq)
		n++
	}
	if n == 0 {
		return
	}
	l.wd.pending = l.wd.pending[:copy(l.wd.pending, l.wd.pending[n:])]
	if !slices.IsSorted(l.tick.Landed) {
		slices.Sort(l.tick.Landed)
	}
}

// withdraw debits w from its owner and burns it, if the owner can spare
// it: the withdrawable balance (perp margin counts; spendable).
func (l *Ledger) withdraw(w *pendingWithdrawal) bool {
	if avail := l.spendable(w.token, w.owner); avail.Lt(&w.amount) {
		return false
	}
	b := l.holding(w.token, w.owner)
	b.Cash.Sub(&b.Cash, &w.amount)
	addTo(l.wd.withdrawn, w.token, &w.amount)
	return true
}

// Snapshot of the withdrawals (after obFees, snapshot.go):
//
//	| withdrawn: tokenAmounts | lastBatchUs u64 | ids 1 bit ‖ n 31 bits (u32) | pending* |
//	pending: | hash 32 B | seq u64 | owner 20 B | to 20 B | token 20 B | amount 32 B | deadlineUs u64 | landUs u64 | (id 32 B) |
//
// The top bit of the count (pendingIDsFlag) says whether the entries carry
// their withdrawal id: set exactly when one of them is an orderbook
// withdrawal's (its id is not its hash). Without it every id is the hash,
// the only withdrawals earlier builds had, so their snapshots (and the
// genesis state hash) read and write the same bytes as before.
const (
	pendingWithdrawalSize = 32 + 8 + 3*20 + 32 + 8 + 8
	pendingIDsFlag        = 1 << 31
)

func (l *Ledger) appendWithdrawals(dst []byte, scratch []Address) []byte {
	dst = appendTokenAmounts(dst, l.wd.withdrawn, scratch)
	dst = binary.BigEndian.AppendUint64(dst, uint64(l.wd.lastBatchUs))
	ids := slices.ContainsFunc(l.wd.pending, func(w pendingWithdrawal) bool { return w.id != w.hash })
	count := uint32(len(l.wd.pending))
	if ids {
		count |= pendingIDsFlag
	}
	dst = binary.BigEndian.AppendUint32(dst, count)
	for i := range l.wd.pending {
		w := &l.wd.pending[i]
		dst = binary.BigEndian.AppendUint64(append(dst, w.hash[:]...), w.seq)
		dst = append(append(append(dst, w.owner[:]...), w.to[:]...), w.token[:]...)
		dst = binread.AppendU256(dst, &w.amount)
		dst = binary.BigEndian.AppendUint64(dst, uint64(w.deadlineUs))
		dst = binary.BigEndian.AppendUint64(dst, uint64(w.landUs))
		if ids {
			dst = append(dst, w.id[:]...)
		}
	}
	return dst
}

// loadWithdrawals reads what appendWithdrawals wrote and checks that every
// pending withdrawal is one admission could have queued: in admission
// order, from a known account, at most WithdrawalsPendingMax, landing on
// the batch grid after the last batch and by its deadline, its amount
// valid for a bridged token; and that ids are there only when one differs
// from its hash (the canonical form).
// REQUIRES: l.seq and the accounts are loaded.
func (l *Ledger) loadWithdrawals(r *snapReader) {
	l.wd.withdrawn = r.tokenAmounts()
	l.wd.lastBatchUs = int64(r.U64())
	if l.wd.lastBatchUs < 0 || l.wd.lastBatchUs%clob.TransferIntervalUs != 0 {
		r.Fail("last withdrawal batch at %d µs", l.wd.lastBatchUs)
	}
	count := r.U32()
	ids := count&pendingIDsFlag != 0
	size := pendingWithdrawalSize
	if ids {
		size += 32
	}
	n := int(count &^ pendingIDsFlag)
	if n > WithdrawalsPendingMax || n > r.Left()/size {
		r.Fail("%d pending withdrawals of %d bytes, at most %d and the %d bytes left", n, size, WithdrawalsPendingMax, r.Left())
	}
	if r.Err != nil {
		return
	}
	l.wd.pending = make([]pendingWithdrawal, n)
	var prevSeq uint64
	prevLand := l.wd.lastBatchUs + clob.TransferIntervalUs
	for i := range l.wd.pending {
		w := &l.wd.pending[i]
		copy(w.hash[:], r.Take(32))
		w.seq = r.U64()
		w.owner, w.to, w.token = r.addr(), r.addr(), r.addr()
		r.U256(&w.amount)
		w.deadlineUs, w.landUs = int64(r.U64()), int64(r.U64())
		w.id = w.hash
		if ids {
			copy(w.id[:], r.Take(32))
		}
		if r.Err != nil {
			return
		}
		t := l.wd.cfg.TokenFor(w.token)
		switch {
		case w.seq <= prevSeq || w.seq > l.seq:
			r.Fail("pending withdrawal seq %d after %d (ledger at %d)", w.seq, prevSeq, l.seq)
		case l.accounts[w.owner] == nil:
			r.Fail("pending withdrawal from unknown account %x", w.owner)
		case t == nil || w.to == (Address{}) || w.amount.IsZero() || checkAmount(t, &w.amount) != "":
			r.Fail("pending withdrawal %x: not a valid amount of a bridged token to a recipient", w.hash)
		case w.landUs%clob.TransferIntervalUs != 0 || w.landUs < prevLand || w.deadlineUs < w.landUs:
			r.Fail("pending withdrawal %x lands at %d µs (deadline %d, previous %d)", w.hash, w.landUs, w.deadlineUs, prevLand)
		}
		prevSeq, prevLand = w.seq, w.landUs
	}
	if ids && !slices.ContainsFunc(l.wd.pending, func(w pendingWithdrawal) bool { return w.id != w.hash }) {
		r.Fail("pending withdrawals carry ids, none of them an orderbook withdrawal's")
	}
}
