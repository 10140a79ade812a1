package core

import "github.com/holiman/uint256"

// The Bridge application's configuration and outputs (docs/bridge.md §1-§4).

// BridgeToken is one bridged token: its ledger-side address, the token paid
// out on the bridged chain, its decimals there, and the withdrawal bounds in
// those decimals.
type BridgeToken struct {
	Token    Address // ledger side (NativeToken for the native token)
	L1Token  Address // bridged chain
	Decimals uint8   // on the bridged chain, at most 18
	Min, Max uint256.Int
}

// Step is the 18-decimal amount of one bridged-chain unit of the token,
// 10^(18 − Decimals): ledger amounts of it are whole multiples of Step, and
// an amount over Step is its bridged-chain amount.
func (t *BridgeToken) Step() uint256.Int {
	var s uint256.Int
	return *s.Exp(uint256.NewInt(10), uint256.NewInt(uint64(18-min(t.Decimals, 18))))
}

// BridgeConfig is the bridge's genesis configuration: the one bridged chain,
// its bridge contract, the configuration version (it enters the claim
// hash) and the bridged tokens.
type BridgeConfig struct {
	ClaimChainID   uint64
	SourceContract Address
	Version        uint64
	Tokens         []BridgeToken
}

// TokenFor returns the rules of a ledger-side token, or nil when it is not
// bridged.
func (c *BridgeConfig) TokenFor(token Address) *BridgeToken {
	for i := range c.Tokens {
		if c.Tokens[i].Token == token {
			return &c.Tokens[i]
		}
	}
	return nil
}

// Withdrawal outcome errors (the spec's WithdrawalUpdate.error values).
const (
	WithdrawInsufficientBalance = "insufficient_balance"
	WithdrawNotIncluded         = "not_included"
)

// WithdrawalOutcome is what a withdrawal batch did with one withdrawal.
// Error is empty when the amount was debited and burned. ID is its
// withdrawal id: TxHash for a withdrawal to the Bridge, WithdrawalID for
// one through the orderbook.
type WithdrawalOutcome struct {
	TxHash     Hash
	ID         Hash
	Seq        uint64 // the withdraw transaction's input seq
	Withdrawer Address
	To         Address // on the bridged chain
	Token      Address // ledger side
	Amount     uint256.Int
	Error      string
	TickUs     int64 // the batch's time
}
