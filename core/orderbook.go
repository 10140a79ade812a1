package core

import (
	"encoding/binary"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

// The orderbook application: calls to OrderbookAddress are decoded
// (core/clob/abi), admitted by the engine (core/clob) and settled at its
// ticks. The engine keeps no money: it moves the ledger's balances through
// ledgerAccounts, so CheckSupply covers the orderbook too.

// ledgerAccounts is the ledger as the engine's clob.Accounts.
type ledgerAccounts Ledger

var _ clob.Accounts = (*ledgerAccounts)(nil)

func (a *ledgerAccounts) Available(token, owner clob.Address) uint256.Int {
	if b := (*Ledger)(a).balance(Address(token), Address(owner)); b != nil {
		return b.Available()
	}
	return uint256.Int{}
}

func (a *ledgerAccounts) Lock(token, owner clob.Address, amount *uint256.Int) {
	b := (*Ledger)(a).holding(Address(token), Address(owner))
	b.Locked.Add(&b.Locked, amount)
}

func (a *ledgerAccounts) Unlock(token, owner clob.Address, amount *uint256.Int) {
	b := (*Ledger)(a).holding(Address(token), Address(owner))
	b.Locked.Sub(&b.Locked, amount)
	b.payDebt()
}

func (a *ledgerAccounts) SpendLocked(token, owner clob.Address, amount *uint256.Int) {
	b := (*Ledger)(a).holding(Address(token), Address(owner))
	b.Locked.Sub(&b.Locked, amount)
	b.Cash.Sub(&b.Cash, amount)
}

func (a *ledgerAccounts) Credit(token, owner clob.Address, amount *uint256.Int) {
	b := (*Ledger)(a).holding(Address(token), Address(owner))
	b.Cash.Add(&b.Cash, amount)
	b.payDebt()
}

func (a *ledgerAccounts) Debit(token, owner clob.Address, amount *uint256.Int) {
	(*Ledger)(a).holding(Address(token), Address(owner)).debit(amount)
}

func (a *ledgerAccounts) Holding(token, owner clob.Address) (cash, locked, debt uint256.Int) {
	if b := (*Ledger)(a).balance(Address(token), Address(owner)); b != nil {
		return b.Cash, b.Locked, b.Debt
	}
	return cash, locked, debt
}

func (a *ledgerAccounts) CollectFee(token clob.Address, amount *uint256.Int) {
	addTo(a.obFees, Address(token), amount)
}

// Orderbook returns the engine for reads (levels, live orders, markets).
// REQUIRES: the caller holds whatever serialises it with Apply.
func (l *Ledger) Orderbook() *clob.Engine { return l.engine }

// GenesisMarket adds a market outside any input.
// REQUIRES: called before any other input (it is not logged).
func (l *Ledger) GenesisMarket(cfg *clob.MarketConfig) error {
	if l.seq != 0 {
		panic("BUG: GenesisMarket after the first input")
	}
	return l.engine.CreateMarket(cfg)
}

// CreateMarket adds a market (a logged input). A refused market changes
// nothing.
func (l *Ledger) CreateMarket(cfg *clob.MarketConfig) error {
	if err := l.engine.CreateMarket(cfg); err != nil {
		return err
	}
	l.seq++
	return nil
}

// NextTickDue returns the earliest auction tick at or before nowUs that has
// work (the orderbook's, or a withdrawal batch); the sequencer applies an
// InputTick for it.
func (l *Ledger) NextTickDue(nowUs int64) (int64, bool) { return l.NextTickAfter(-1, nowUs) }

// NextTickAfter is NextTickDue with every tick at or before afterUs passed
// over (afterUs < 0: none): how the node skips auctions (docs/lab.md).
func (l *Ledger) NextTickAfter(afterUs, nowUs int64) (int64, bool) {
	best, _ := l.engine.NextTickAfter(afterUs, nowUs)
	return l.withdrawalsDue(best, afterUs, nowUs)
}

// LastTick is the result of the latest Tick: valid until the next one.
func (l *Ledger) LastTick() *clob.TickResult { return &l.tick }

// LastEnvelope is the envelope of the latest admitted orderbook
// transaction: valid until the next one.
func (l *Ledger) LastEnvelope() *clob.Envelope { return &l.env }

// admitOrderbook decodes and admits an orderbook call. Its record's Seq is
// l.seq, which the engine reports back as the envelope's tag when it lands.
func (l *Ledger) admitOrderbook(tx *Tx, timeUs int64, staged bool) ([]Log, Reject) {
	reject := func(r clob.Reason) ([]Log, Reject) {
		return nil, Reject{Code: RejectApp, App: OrderbookAddress, Reason: r}
	}
	if !tx.Value.IsZero() {
		return reject(clob.ReasonValueNonZero)
	}
	if r := l.decodeOrderbook(tx); r != clob.OK {
		return reject(r)
	}
	if staged && !l.engine.Stageable(&l.env) {
		return nil, Reject{Code: RejectWaitTick}
	}
	adm := clob.Admission{Signer: clob.Address(tx.From), Owner: clob.Address(tx.From), Nonce: tx.Nonce, NowUs: timeUs, Tag: l.seq, Staged: staged}
	if l.env.Delegated {
		if delegationExpired(l.env.ValidUntil, timeUs) {
			return reject(clob.ReasonDelegationExpired)
		}
		adm.Owner = l.env.Master
	}
	if r := l.engine.Admit(&adm, &l.env, (*ledgerAccounts)(l)); r != clob.OK {
		return reject(r)
	}
	return admissionLogs(&adm, &l.env), Reject{}
}

// Prepared is the part of admitting an orderbook transaction that depends
// on the transaction alone: its decoded envelope, with the delegation
// certificate checked (a signature recovery), and the ids of the orders it
// creates (keccak). PrepareTx computes it where the transaction is
// verified, in parallel, so that the sequencer does neither under its lock.
type Prepared struct {
	ChainID uint64  // the chain the certificate was checked for
	From    Address // the signer and nonce the ids were computed for
	Nonce   uint64
	Reason  clob.Reason // Decode's verdict; Env is empty unless OK
	Env     clob.Envelope
}

// PrepareTx sets tx.Pre for a call to the orderbook: Decode with the
// transaction's own chain id and PrepareIDs. It is a pure function of tx,
// safe for concurrent use on different transactions; the ledger redoes
// the same work when Pre is absent or was prepared for another chain.
// REQUIRES: tx is complete (From recovered); it is not changed afterwards.
func PrepareTx(tx *Tx) {
	if !tx.HasTo || tx.To != OrderbookAddress || isOrderbookWithdraw(tx) {
		return
	}
	p := &Prepared{ChainID: tx.ChainID, From: tx.From, Nonce: tx.Nonce}
	p.Reason = abi.Decode(tx.Data, tx.ChainID, clob.Address(tx.From), &p.Env)
	if p.Reason == clob.OK {
		clob.PrepareIDs(&p.Env, clob.Address(tx.From), tx.Nonce)
	}
	tx.Pre = p
}

// decodeOrderbook decodes tx's calldata into l.env: a copy of what
// PrepareTx found when it applies to this transaction on this chain, else
// abi.Decode here (the engine then hashes the order ids itself).
func (l *Ledger) decodeOrderbook(tx *Tx) clob.Reason {
	p := tx.Pre
	if p == nil || p.ChainID != l.chainID || p.From != tx.From || p.Nonce != tx.Nonce {
		return abi.Decode(tx.Data, l.chainID, clob.Address(tx.From), &l.env)
	}
	intents := append(l.env.Intents[:0], p.Env.Intents...)
	l.env = p.Env
	l.env.Intents = intents
	return p.Reason
}

// delegationExpired compares a DelegationAuth's validUntil (µs, as the live
// network signs it) with the admission time. The decoder has already
// refused a validUntil before the envelope's own deadline.
func delegationExpired(validUntil uint64, timeUs int64) bool {
	return timeUs > 0 && validUntil < uint64(timeUs)
}

// BeginTick begins the tick at tickUs (clob.Engine.BeginTick): from now
// until Tick(tickUs) ends it, ClearConcurrent may run beside Apply of
// staged transactions (Input.Staged), and nothing else may run.
func (l *Ledger) BeginTick(tickUs int64) { l.engine.BeginTick(tickUs, &l.tick) }

// BeginStaging opens a staging window between ticks: until EndStaging,
// Apply takes transactions only, and stages each (clob.Engine's staged
// admission; RejectWaitTick for one that cannot be staged), so that the
// engine's books and the last tick's result stay as the tick left them
// for whoever reads them beside it (the node's market index and tick
// record). The window's transactions are logged as ordinary ones: staged
// and joined before anything else, they leave the state as the same
// transactions applied unstaged do (clob's TestStagedThenJoinedEqualsUnstaged,
// core's TestStagingWindowEqualsReplay), and that is what a replay does.
// REQUIRES: no tick begun, no window open.
func (l *Ledger) BeginStaging() {
	if l.window || l.engine.Staging() {
		panic("BUG: BeginStaging while staging")
	}
	l.window = true
}

// EndStaging closes the window BeginStaging opened: the staged orders
// join their books, in admission order.
func (l *Ledger) EndStaging() {
	if !l.window {
		panic("BUG: EndStaging without BeginStaging")
	}
	l.window = false
	if l.engine.Staging() {
		l.engine.JoinStaged()
	}
}

// ClearConcurrent clears the books BeginTick chose (clob.Engine.
// ClearConcurrent). It is the one ledger method safe to call beside
// another: Apply of a staged transaction.
func (l *Ledger) ClearConcurrent() {
	l.engine.ClearConcurrent()
	l.cleared.logCleared(&l.tick) // the tick's logs of those books, off the lock too
}

// Tick runs the orderbook's auction at tickUs, then the withdrawal batch
// if tickUs is one, and returns its record: the tick's settlement logs,
// keyed by the tick hash. The engine's full result (with the withdrawals'
// Landed tags) stays readable through LastTick, the withdrawals' outcomes
// through LastWithdrawals.
func (l *Ledger) Tick(tickUs int64) *TxRecord {
	l.seq++
	l.engine.Tick(tickUs, (*ledgerAccounts)(l), &l.tick)
	l.runWithdrawals(tickUs)
	rec := &TxRecord{Kind: RecordTick, Seq: l.seq, Status: 1, Logs: l.cleared.finish(&l.tick), TickUs: tickUs}
	rec.Tx.Hash = TickHash(tickUs, l.seq)
	rec.Tx.From, rec.Tx.To, rec.Tx.HasTo = OrderbookAddress, OrderbookAddress, true
	return rec
}

// TickHash identifies the tick applied as input seq at tickUs: the
// blockHash of the receipts that landed in it.
func TickHash(tickUs int64, seq uint64) Hash {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(tickUs))
	binary.BigEndian.PutUint64(b[8:], seq)
	return Keccak256Hash([]byte("ledgerd tick"), b[:])
}
