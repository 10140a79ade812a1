package core

import (
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
)

// Gas rules. The ledger runs no code, so every transaction uses the same
// gas, TxGas: the spec's eth_estimateGas answer for a call that names no gas.
// The estimate is therefore always enough, for a plain transfer and for a
// call to an enshrined application alike; calldata and access lists are not
// metered (docs/decisions.md, "Gas").
const (
	TxGas = 21000
	// TxGasLimitMax bounds the gas a single transaction may name.
	TxGasLimitMax = 30_000_000
)

// Config is the ledger's genesis configuration.
type Config struct {
	ChainID uint64
	BaseFee uint256.Int
	// Orderbook bounds the engine's memory per market.
	Orderbook clob.Limits
	// Bridge configures the Bridge application (docs/bridge.md §1).
	Bridge BridgeConfig
	// WithdrawalsPerBatchMax bounds the withdrawals one batch executes; the
	// rest are not_included (0: DefaultWithdrawalsPerBatchMax).
	WithdrawalsPerBatchMax int
	// MintAllowed lets the Mint application mint (mint.go; ledgerd --dev).
	MintAllowed bool
}

// Balance is an account's holding of one token: its cash, the part of the
// cash locked behind live orders and pending transfers, and its debt (perp
// losses, funding and fees its free cash could not pay; native only). The
// account's balance is Cash − Debt (docs/perps.md, "Accounts").
// Invariants: Locked ≤ Cash; Debt > 0 ⇒ Cash = Locked.
type Balance struct {
	Cash   uint256.Int
	Locked uint256.Int
	Debt   uint256.Int
}

// Available is the cash not locked (zero while in debt).
func (b *Balance) Available() uint256.Int {
	var a uint256.Int
	a.Sub(&b.Cash, &b.Locked)
	return a
}

// Net is the account's balance of the token, Cash − Debt, signed: what
// balanceOf reports.
func (b *Balance) Net() clob.Signed {
	var v uint256.Int
	if b.Debt.Gt(&b.Cash) {
		return clob.Signed{Neg: true, Abs: *v.Sub(&b.Debt, &b.Cash)}
	}
	return clob.Signed{Abs: *v.Sub(&b.Cash, &b.Debt)}
}

// payDebt pays the debt out of the free cash.
func (b *Balance) payDebt() {
	if b.Debt.IsZero() {
		return
	}
	free := b.Available()
	if b.Debt.Lt(&free) {
		free = b.Debt
	}
	b.Cash.Sub(&b.Cash, &free)
	b.Debt.Sub(&b.Debt, &free)
}

// debit takes amount out of the free cash, the rest becoming debt.
func (b *Balance) debit(amount *uint256.Int) {
	free := b.Available()
	if amount.Lt(&free) {
		b.Cash.Sub(&b.Cash, amount)
		return
	}
	b.Cash.Sub(&b.Cash, &free)
	free.Sub(amount, &free)
	b.Debt.Add(&b.Debt, &free)
}

// Account is one account's state.
type Account struct {
	Nonce  uint64
	Native Balance
	// tokens holds non-native token balances; never iterated unsorted.
	tokens map[Address]*Balance
	// pendingSeq is the Seq of an applied, not yet durable transaction, 0 if
	// none. Transient: not part of the snapshot.
	pendingSeq uint64
	// newest is the hash of the account's newest transaction (nonce
	// Nonce − 1); locked says it is locked with newest as its recovery
	// target (recovery.go).
	newest Hash
	locked bool
}

// Ledger is the state machine. It is not safe for concurrent use: the
// sequencer owns it.
type Ledger struct {
	chainID  uint64
	baseFee  uint256.Int
	accounts map[Address]*Account
	// seq counts applied inputs; a TxRecord carries its input's seq.
	seq uint64
	// feesBurned accumulates all gas fees (the venue has no block producer
	// to pay them to).
	feesBurned uint256.Int
	// issued is genesis plus deposits, per token (native included): the
	// right-hand side of the conservation invariant.
	issued map[Address]*uint256.Int
	// obFees are the orderbook's fees, per token: a value sink like
	// feesBurned.
	obFees map[Address]*uint256.Int
	// engine runs the orderbook; tick is its reused result.
	engine *clob.Engine
	tick   clob.TickResult
	// cleared is what ClearConcurrent logged of the tick's first books,
	// for Tick to reuse.
	cleared clearedLogs
	// window: a staging window is open (BeginStaging): every transaction
	// is staged, and logged as an ordinary one.
	window bool
	env    clob.Envelope
	// wd holds the Bridge's withdrawals (withdraw.go).
	wd withdrawals
	// mint holds the Mint application's per-hour counters (mint.go).
	mint mints
	// clockOffsetUs is what the node adds to its time source (controls.go).
	clockOffsetUs int64
}

// NewLedger returns an empty ledger.
func NewLedger(cfg Config) *Ledger {
	return &Ledger{
		chainID: cfg.ChainID, baseFee: cfg.BaseFee, accounts: make(map[Address]*Account),
		issued: make(map[Address]*uint256.Int), obFees: make(map[Address]*uint256.Int),
		engine: clob.NewEngine(cfg.Orderbook), wd: newWithdrawals(&cfg), mint: mints{allowed: cfg.MintAllowed},
	}
}

// ChainID returns the chain id transactions must be signed for.
func (l *Ledger) ChainID() uint64 { return l.chainID }

// BaseFee returns the current base fee per gas, in wei.
func (l *Ledger) BaseFee() uint256.Int { return l.baseFee }

// Seq returns the number of inputs applied so far.
func (l *Ledger) Seq() uint64 { return l.seq }

// FeesBurned returns the total of all gas fees charged.
func (l *Ledger) FeesBurned() uint256.Int { return l.feesBurned }

// Nonce returns the account's next expected nonce.
func (l *Ledger) Nonce(a Address) uint64 {
	if acc := l.accounts[a]; acc != nil {
		return acc.Nonce
	}
	return 0
}

// AppendAccounts appends every account the ledger holds to dst, ascending
// (read views rebuild from it; the map's order never shows).
func (l *Ledger) AppendAccounts(dst []Address) []Address {
	return appendSortedKeys(dst, l.accounts)
}

// AppendTokens appends the tokens other than the native one that a holds,
// ascending.
func (l *Ledger) AppendTokens(dst []Address, a Address) []Address {
	if acc := l.accounts[a]; acc != nil {
		return appendSortedKeys(dst, acc.tokens)
	}
	return dst
}

// Balance returns the account's holding of token (NativeToken for the
// native collateral); zero for unknown accounts and tokens.
func (l *Ledger) Balance(token, a Address) Balance {
	if b := l.balance(token, a); b != nil {
		return *b
	}
	return Balance{}
}

// balance returns the holding, nil if the account or token was never seen.
func (l *Ledger) balance(token, a Address) *Balance {
	acc := l.accounts[a]
	if acc == nil {
		return nil
	}
	if token == NativeToken {
		return &acc.Native
	}
	return acc.tokens[token]
}

// holding returns the holding, creating the account and token entry.
func (l *Ledger) holding(token, a Address) *Balance {
	acc := l.account(a)
	if token == NativeToken {
		return &acc.Native
	}
	if acc.tokens == nil {
		acc.tokens = make(map[Address]*Balance)
	}
	b := acc.tokens[token]
	if b == nil {
		b = new(Balance)
		acc.tokens[token] = b
	}
	return b
}

func (l *Ledger) account(a Address) *Account {
	acc := l.accounts[a]
	if acc == nil {
		acc = &Account{}
		l.accounts[a] = acc
	}
	return acc
}

// Genesis credits amount of token to a, outside any transaction.
// REQUIRES: called before any other input (it is not logged).
func (l *Ledger) Genesis(token, a Address, amount *uint256.Int) {
	if l.seq != 0 {
		panic("BUG: Genesis after the first input")
	}
	l.credit(token, a, amount)
}

// credit issues amount of token to a (genesis or a deposit).
func (l *Ledger) credit(token, a Address, amount *uint256.Int) {
	b := l.holding(token, a)
	b.Cash.Add(&b.Cash, amount)
	b.payDebt()
	addTo(l.issued, token, amount)
}

// addTo adds amount to m[token], creating the entry.
func addTo(m map[Address]*uint256.Int, token Address, amount *uint256.Int) {
	v := m[token]
	if v == nil {
		v = new(uint256.Int)
		m[token] = v
	}
	v.Add(v, amount)
}

// SetBaseFee changes the base fee for transactions applied from now on.
func (l *Ledger) SetBaseFee(fee *uint256.Int) {
	l.seq++
	l.baseFee = *fee
}

// depositTopic is keccak256("Deposit(address,address,uint256)").
var depositTopic = Keccak256Hash([]byte("Deposit(address,address,uint256)"))

// DepositTopic returns the topic of the log a deposit emits.
func DepositTopic() Hash { return depositTopic }

// Deposit credits a deposit observed on the bridged chain. id identifies the
// deposit (the bridged chain's event); the record is keyed by it. The Bridge
// address emits Deposit(token indexed, to indexed, amount).
func (l *Ledger) Deposit(id Hash, token, to Address, amount *uint256.Int) *TxRecord {
	l.seq++
	l.credit(token, to, amount)
	rec := &TxRecord{Kind: RecordDeposit, Seq: l.seq, Status: 1}
	rec.Tx.Hash = id
	rec.Tx.From = BridgeAddress
	rec.Tx.To = to
	rec.Tx.HasTo = true
	rec.Tx.Value = *amount
	var tokenTopic, toTopic Hash
	copy(tokenTopic[12:], token[:])
	copy(toTopic[12:], to[:])
	amt := amount.Bytes32()
	rec.Logs = []Log{{Address: BridgeAddress, Topics: []Hash{depositTopic, tokenTopic, toTopic}, Data: amt[:]}}
	return rec
}
