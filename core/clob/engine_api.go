package clob

import "github.com/holiman/uint256"

// MarketKind is spot or perpetual.
type MarketKind uint8

const (
	Spot MarketKind = iota
	Perp
)

// MarketConfig describes one orderbook. Amounts are 18-decimal wei.
type MarketConfig struct {
	ID            Hash
	Name          string // e.g. "WETH/USD"
	BaseSymbol    string
	QuoteSymbol   string
	Kind          MarketKind
	Base, Quote   Address
	IntervalUs    int64       // auction interval; deadlines are multiples of it
	TickPrecision uint256.Int // price step
	LotSize       uint256.Int // size step, in base wei
	MakerFee      uint256.Int // fraction of 1e18 charged on a maker fill's quote amount
	TakerFee      uint256.Int // fraction of 1e18 charged on a taker fill's quote amount
	Perp          PerpParams  // Kind == Perp only
}

// PerpParams are a perpetual market's parameters (docs/perps.md). Rates
// and fractions are of 1e18; Quote must be the native token.
type PerpParams struct {
	MaxLeverage    uint32      // ≥ 1; IM = notional / MaxLeverage, MM = IM / 2
	InterestRate   uint256.Int // per 8 h (default 1e14)
	MaxFundingRate uint256.Int // per 8 h, magnitude cap (default 32e16)
	MaxPremium     uint256.Int // mark premium cap, fraction of the oracle
	MarkClamp      uint256.Int // largest mark move per tick, fraction of the last mark
	OraclePrice    uint256.Int // initial oracle price, wei (a multiple of the tick precision)
	WalkBps        uint32      // oracle random walk per tick, basis points (0 = none)
	WalkSeed       uint64
}

// Limits bound an engine's memory.
type Limits struct {
	OrdersMax  int // live orders (pending or resting) per book; and live triggers (pending or stored) per perp book
	PendingMax int // intents waiting for their tick per book (a power of two)
}

// Admission is the context of one orderbook transaction.
type Admission struct {
	Signer Address // the transaction's signer: order ids key on it
	Owner  Address // whose money and orders these are (the master when delegated)
	Nonce  uint64  // the transaction's nonce
	NowUs  int64   // the sequencer's time at admission
	Tag    uint64  // opaque to the engine; reported back in TickResult.Landed
	// Staged: admitted while a tick clears (stage.go); the envelope must
	// be Stageable. Every admission is staged while the engine stages.
	Staged bool
}

// Level is one aggregated price level of a book side.
type Level struct {
	Price  uint256.Int
	Volume uint256.Int // base wei resting at this price
	Orders int
}

// OrderInfo is a live order (pending its first tick, or resting).
type OrderInfo struct {
	ID, Book                           Hash
	Owner                              Address
	Side                               Side
	Type                               OrderType
	Flags                              uint8
	Price, Size, Remaining             uint256.Int
	FilledBase, FilledQuote, Fee       uint256.Int
	Pending                            bool // admitted, not yet in its book
	AdmitTickUs, ExpiresUs, DeadlineUs int64
}

// TickResult is what one Tick reports; Tick truncates and refills it, so a
// caller reuses one across ticks (steady state allocates nothing).
type TickResult struct {
	TickUs int64
	Books  []BookTick // books that ran in this tick, ascending id
	Events []Event
	Landed []uint64 // Admission.Tag of every envelope applied in this tick, in admission order
}
