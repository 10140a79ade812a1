package clob

import "github.com/holiman/uint256"

// The perpetual markets' read API (docs/perps.md). Amounts are wei; prices
// are 18-decimal wei per whole base unit, like every wire price.

// FundingWindowUs is the funding window rates are quoted over (8 hours).
const FundingWindowUs = 8 * 3600 * 1_000_000

// BackstopAddress is the account that takes over liquidated positions; its
// cash is the insurance balance.
var BackstopAddress = Address{0x50, 0xd0, 19: 0x04}

// PositionInfo is one open perp position.
type PositionInfo struct {
	Book           Hash
	Owner          Address
	Size           Signed      // base wei, long positive
	Cost           Signed      // what opening the position cost, quote wei (same sign as Size)
	EntryPrice     uint256.Int // |Cost| / |Size|, floored
	Mark           uint256.Int
	Notional       uint256.Int // |Size| at the mark
	Unrealized     Signed      // Size at the mark − Cost
	Realized       Signed      // PnL realized since the position was opened (fills, liquidation), before fees
	Funding        Signed      // funding paid (positive) or received since the position was opened
	InitialMargin  uint256.Int
	Maintenance    uint256.Int
	Liquidation    uint256.Int // the mark at which the account's equity would meet its maintenance, other marks fixed; 0 if none
	OpenedTickUs   int64
	EntryFundingIx Signed // the market's funding index when the position was opened
}

// MarginInfo is an account's cross-margin summary.
type MarginInfo struct {
	Owner         Address
	Cash          Signed      // Cash − Debt
	Equity        Signed      // Cash − Debt + Σ unrealized
	Unrealized    Signed      // Σ unrealized
	Realized      Signed      // Σ realized of the open positions
	Notional      uint256.Int // Σ notional
	InitialMargin uint256.Int // of the positions
	Maintenance   uint256.Int
	OrderMargin   uint256.Int // IMo: initial margin of the worst-case exposure with open orders
	Withdrawable  uint256.Int // max(0, Cash − Debt − Locked + Σ unrealized − IMo)
	Positions     int
}

// PerpInfo is a perp market's dynamic state.
type PerpInfo struct {
	Book          Hash
	Oracle        uint256.Int
	Mark          uint256.Int
	FundingRate   Signed // the last tick's rate per 8 h, fraction of 1e18
	FundingIndex  Signed // cumulative funding per whole base unit (1e18 base wei), quote wei
	FundingLastUs int64  // tick time of the last funding accrual (0 = never)
	OpenInterest  uint256.Int
	WalkFrozen    bool
}

// TriggerInfo is one stored trigger.
type TriggerInfo struct {
	ID, Book     Hash
	Owner        Address
	Signer       Address
	Nonce        uint64
	Side         Side
	Size         uint256.Int
	LimitPrice   uint256.Int // 0 = market
	TriggerPrice uint256.Int
	TriggerType  uint8
	Grouping     uint8
	Flags        uint8 // FlagReduceOnly, FlagIOC
	DeadlineUs   int64
	AdmitTickUs  int64
	ExpiresUs    int64 // 0 = no ttl
}
