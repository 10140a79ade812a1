package clob

import "github.com/holiman/uint256"

// This file is the contract between the engine (this package), the ABI
// decoder (core/clob/abi) and the ledger (core): the decoded intent, the
// rejection reasons, the ledger's side of the money, and what a tick
// reports. Change it only together with all three.

// Address is a 20-byte account or token address (core.Address converts).
type Address [20]byte

// NativeToken is the native collateral (0xEeee…EEeE): the quote of every
// perp market (core.NativeToken equals it).
var NativeToken = Address{0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee}

// Hash is a 32-byte id: orderbook ids, order ids, transaction hashes.
type Hash [32]byte

// Side of an order.
type Side uint8

const (
	Buy Side = iota
	Sell
)

// OrderType is the ABI's orderType argument.
type OrderType uint8

const (
	Limit OrderType = iota
	Market
)

// Order flags (the ABI's flags bit mask).
const (
	FlagReduceOnly uint8 = 0x01 // perpetual markets only
	FlagIOC        uint8 = 0x02
	FlagPostOnly   uint8 = 0x04
	flagsKnown           = FlagReduceOnly | FlagIOC | FlagPostOnly
	FlagsKnown           = flagsKnown // every flag an order may carry; the readers of stored orders check against it
)

// Limits of the envelope, fixed by the live network.
const (
	// BatchIntentsMax bounds the inner calls of one submitBatch.
	BatchIntentsMax = 64
	// DeadlineAheadMaxUs bounds how far ahead of admission a deadline may
	// be: a sanity bound only, since an intent lands in the next tick
	// whatever its deadline (the live SDK signs every intent with a
	// deadline about ten years ahead, which the live network admits).
	DeadlineAheadMaxUs = 100 * 365 * 86_400 * 1_000_000
	// TransferIntervalUs is the tick grid transfers are aligned to and settle on.
	TransferIntervalUs = 500_000
)

// IntentKind says what an Intent asks for.
type IntentKind uint8

const (
	IntentSubmit IntentKind = iota + 1
	IntentCancel
	IntentUpdate
	IntentTransfer
	IntentSubmitTrigger // perpetual markets only (docs/perps.md, "Triggers")
	IntentCancelTrigger
	IntentUpdateTrigger
)

// Trigger types (submitTrigger's triggerType): the live ABI's
// enum TriggerType { TakeProfit, StopLoss }.
const (
	TriggerTakeProfit uint8 = 0
	TriggerStopLoss   uint8 = 1
)

// Trigger groupings (submitTrigger's grouping): the live ABI's
// enum TriggerGrouping { None, Asset }. An Asset trigger, and a resting
// order it fired, is cancelled at the end of the tick in which its owner's
// position on the book goes flat (docs/perps.md, "Triggers").
const (
	GroupingNone  uint8 = 0
	GroupingAsset uint8 = 1
)

// Intent is one decoded orderbook call. Fields not used by its Kind are zero.
type Intent struct {
	Kind     IntentKind
	Book     Hash        // submit, cancel, update: the orderbook id
	OrderID  Hash        // cancel, update: the target order
	Side     Side        // submit: Sell when the signed size was negative
	Size     uint256.Int // submit: |size|; update: newSize
	Price    uint256.Int // submit: price; update: newPrice
	Type     OrderType   // submit
	Flags    uint8       // submit (the deprecated bool,bool form maps onto it)
	Deadline uint64      // every kind, microseconds
	TTL      uint64      // submit, microseconds; 0 = rests until filled or cancelled
	Token    Address     // transfer: token; update: the call's token argument, informational (never checked)
	To       Address     // transfer: recipient
	Amount   uint256.Int // transfer
	// Triggers. submitTrigger fills Book, Side, Size, Price (the limit
	// price; 0 = market), Flags (REDUCE_ONLY, IOC), Deadline, TTL and the
	// fields below; cancelTrigger and updateTrigger name the trigger in
	// OrderID, and updateTrigger sets Side, Size, Price and TriggerPrice.
	TriggerPrice uint256.Int
	TriggerType  uint8
	Grouping     uint8
	// ID is, for a submit or submitTrigger of an envelope whose HasIDs
	// holds, the id of the order or trigger it creates (PrepareIDs): the
	// engine then trusts it instead of hashing. Otherwise ignored.
	ID Hash
}

// Envelope is one decoded orderbook transaction: one intent, or the inner
// calls of a submitBatch (Sequence i = Intents[i]), possibly wrapped in
// delegated(). The decoder has checked the envelope rules (1..64 inner calls,
// one shared deadline, no nesting) and the delegation signature.
type Envelope struct {
	Intents []Intent
	// Owner is the account the intents act for: the delegation's master,
	// else the transaction's signer. Order ids key on the signer.
	Delegated  bool
	Master     Address
	ValidUntil uint64 // delegated: the authorisation's end, microseconds
	// HasIDs says that PrepareIDs(IDSigner, IDNonce) filled the ID of
	// every submit and submitTrigger. The engine uses those ids only for
	// an Admission of that same signer and nonce, and hashes otherwise, so
	// a replay that never prepares gets the same ids (OrderIDOf).
	HasIDs   bool
	IDSigner Address
	IDNonce  uint64
}

// PrepareIDs computes the order id of every submit and submitTrigger of env
// for a transaction of signer at nonce, into its Intents' ID, and marks env
// as prepared for them: the keccak work moves out of Admit to whoever
// calls this first (the node's event loops, before the sequencer). It is a
// pure function of (env, signer, nonce); Admit and OrderIDOf give the same
// ids with or without it.
// REQUIRES: env's intents are not changed afterwards (Decode clears HasIDs).
func PrepareIDs(env *Envelope, signer Address, nonce uint64) {
	h := hasherPool.Get().(*keccakHasher)
	for i := range env.Intents {
		if in := &env.Intents[i]; in.Kind == IntentSubmit || in.Kind == IntentSubmitTrigger {
			h.orderID(&in.ID, signer, nonce, uint32(i))
		}
	}
	hasherPool.Put(h)
	env.HasIDs, env.IDSigner, env.IDNonce = true, signer, nonce
}

// OrderIDOf returns the id of the order (or trigger) intent i of env
// creates for a transaction of signer at nonce: the prepared one when
// PrepareIDs ran for them, else computed.
// REQUIRES: intent i is a submit or submitTrigger.
func (env *Envelope) OrderIDOf(i int, signer Address, nonce uint64) Hash {
	if env.preparedFor(signer, nonce) {
		return env.Intents[i].ID
	}
	return OrderID(signer, nonce, uint32(i))
}

func (env *Envelope) preparedFor(signer Address, nonce uint64) bool {
	return env.HasIDs && env.IDSigner == signer && env.IDNonce == nonce
}

// Reason is why an orderbook intent was refused. Its String is the text after
// "CLOB validation failed: " in the revert.
type Reason uint8

const (
	OK Reason = iota
	// Decoder reasons.
	ReasonUnknownFunction
	ReasonMalformed
	ReasonOrderType
	ReasonValueRange // a uint128 or int256 argument outside what the venue represents
	ReasonBatchSize
	ReasonBatchNested
	ReasonBatchDeadline
	ReasonDelegationNested
	ReasonDelegationSignature
	ReasonDelegationExpired
	// Engine reasons.
	ReasonUnknownBook
	ReasonDeadlineAlign
	ReasonDeadlinePast
	ReasonDeadlineFar
	ReasonFlagsUnknown
	ReasonIOCPostOnly
	ReasonMarketNotIOC
	ReasonMarketPostOnly
	ReasonReduceOnlySpot
	ReasonSizeZero
	ReasonSizeLot
	ReasonPriceZero
	ReasonPriceStep
	ReasonInsufficientBalance
	ReasonUnknownOrder
	ReasonNotOwner
	ReasonTransferZero
	ReasonBookFull
	ReasonValueNonZero
	ReasonDeadlineMissed
	// Perpetual markets (docs/perps.md).
	ReasonInsufficientMargin
	ReasonReduceOnlyNoPosition
	ReasonTriggerSpot
	ReasonTriggerType
	ReasonTriggerGrouping
	ReasonTriggerPriceZero
	ReasonTriggerPriceStep
	ReasonUnknownTrigger
	ReasonTriggersFull
	ReasonOraclePrice
	// A Bridge withdraw inside submitBatch or delegated (docs/bridge.md §2).
	ReasonWithdrawBatched
	// The strategy lab's oracle move (Engine.MoveOracle).
	ReasonOracleMove
	reasonCount
)

var reasonText = [reasonCount]string{
	OK:                         "ok",
	ReasonUnknownFunction:      "unknown function selector",
	ReasonMalformed:            "malformed call data",
	ReasonOrderType:            "unknown order type",
	ReasonValueRange:           "value out of range",
	ReasonBatchSize:            "batch must carry 1 to 64 intents",
	ReasonBatchNested:          "nested batches are not allowed",
	ReasonBatchDeadline:        "batch intents must share one deadline",
	ReasonDelegationNested:     "delegated calls cannot be nested or batched",
	ReasonDelegationSignature:  "invalid delegation signature",
	ReasonDelegationExpired:    "delegation expired",
	ReasonUnknownBook:          "unknown orderbook",
	ReasonDeadlineAlign:        "Deadline is not aligned to auction interval",
	ReasonDeadlinePast:         "deadline already executed",
	ReasonDeadlineFar:          "deadline more than 100 years ahead",
	ReasonFlagsUnknown:         "unknown flag bits",
	ReasonIOCPostOnly:          "IOC and POST_ONLY cannot be combined",
	ReasonMarketNotIOC:         "market orders must be IOC",
	ReasonMarketPostOnly:       "market orders cannot be POST_ONLY",
	ReasonReduceOnlySpot:       "REDUCE_ONLY is only allowed on perpetual markets",
	ReasonSizeZero:             "size is zero",
	ReasonSizeLot:              "size is not a multiple of the lot size",
	ReasonPriceZero:            "price is zero",
	ReasonPriceStep:            "price is not a multiple of the tick precision",
	ReasonInsufficientBalance:  "insufficient balance",
	ReasonUnknownOrder:         "unknown order",
	ReasonNotOwner:             "order owned by another account",
	ReasonTransferZero:         "transfer amount is zero",
	ReasonBookFull:             "orderbook is full",
	ReasonValueNonZero:         "transaction value must be 0",
	ReasonDeadlineMissed:       "deadline passed before the intent's tick",
	ReasonInsufficientMargin:   "insufficient margin",
	ReasonReduceOnlyNoPosition: "REDUCE_ONLY order would not reduce the position",
	ReasonTriggerSpot:          "triggers are only allowed on perpetual markets",
	ReasonTriggerType:          "unknown trigger type",
	ReasonTriggerGrouping:      "unknown trigger grouping",
	ReasonTriggerPriceZero:     "trigger price is zero",
	ReasonTriggerPriceStep:     "trigger price is not a multiple of the tick precision",
	ReasonUnknownTrigger:       "unknown trigger",
	ReasonTriggersFull:         "too many triggers on this orderbook",
	ReasonOraclePrice:          "oracle price must be a positive multiple of the tick precision",
	ReasonWithdrawBatched:      "withdraw cannot be batched or delegated",
	ReasonOracleMove:           "oracle move must be 1 to 5000 basis points either way",
}

func (r Reason) String() string {
	if r < reasonCount {
		return reasonText[r]
	}
	return "unknown reason"
}

// Accounts is the ledger's side of the money: balances by (token, owner),
// split into cash and the part of it locked behind resting orders and
// pending transfers. The engine never holds money itself; every amount it
// moves goes through these calls, so the ledger's conservation check covers
// the orderbook too. Implementations must not allocate on these calls.
type Accounts interface {
	// Available is cash minus locked.
	Available(token, owner Address) uint256.Int
	// Lock reserves amount of the owner's available cash.
	// REQUIRES: amount ≤ Available(token, owner).
	Lock(token, owner Address, amount *uint256.Int)
	// Unlock releases a reservation made by Lock; what it frees pays the
	// owner's debt first.
	Unlock(token, owner Address, amount *uint256.Int)
	// SpendLocked removes amount from both the owner's cash and locked.
	SpendLocked(token, owner Address, amount *uint256.Int)
	// Credit adds amount to the owner's cash, paying its debt first.
	Credit(token, owner Address, amount *uint256.Int)
	// Debit takes amount out of the owner's cash: its free cash (cash −
	// locked) first, and the rest becomes debt (perp losses, funding and
	// fees; docs/perps.md, "Accounts"). Invariant: debt > 0 ⇒ cash = locked.
	Debit(token, owner Address, amount *uint256.Int)
	// Holding reads the owner's cash, locked and debt.
	Holding(token, owner Address) (cash, locked, debt uint256.Int)
	// CollectFee records a fee taken out of the orderbook (a value sink).
	CollectFee(token Address, amount *uint256.Int)
}

// EventKind says what happened to an order or transfer in a tick.
type EventKind uint8

const (
	EventPlaced          EventKind = iota + 1 // an order created in this tick entered its book
	EventFill                                 // part or all of an order traded
	EventCancel                               // cancelled by its owner, or an IOC/market remainder
	EventExpire                               // ttl ran out, or its deadline passed before its tick
	EventPostOnlyRefused                      // a POST_ONLY order would have traded in its admitting tick
	EventUpdate                               // size or price changed by update()
	EventTransfer                             // an account-to-account transfer settled
	// Perpetual markets (docs/perps.md).
	EventLiquidation   // a position taken over by the backstop at the mark
	EventTriggerFired  // a trigger's condition held: its order lands in the next tick
	EventTriggerCancel // a trigger cancelled (owner, position flat, liquidation, ttl, refused order)
	// EventMarginCancel: an order removed because its owner was liquidated
	// (its margin was exhausted; the openapi's margin_canceled). Last, so
	// stored ticks from before it keep their kinds.
	EventMarginCancel
)

// Event is one outcome of a tick, in the order the engine produced it:
// books in ascending id order; within a book, intents in admission order,
// then expiries, then fills in allocation order, then IOC remainders;
// then transfers; then the perp pass (liquidations with the cancels they
// cause, outside every BookTick's event range); then triggers.
// Amounts are 18-decimal wei.
type Event struct {
	Kind    EventKind
	Book    Hash // zero for transfers
	OrderID Hash
	Owner   Address // transfers: from
	Side    Side
	// Fill: what this fill filled (base = lots × lot size, quote = base ×
	// price / 1e18) and the fee it paid, in the quote token.
	Base, Quote, Fee uint256.Int
	// Running totals of the order after this event (filled base, filled
	// quote, fees); set on every event.
	TotalBase, TotalQuote, TotalFee uint256.Int
	// Terminal: the order left the book with this event (a fill bearing st,
	// cancel, expire, post-only refusal, margin cancel).
	Terminal bool
	// Maker: the fill's order rested from an earlier tick.
	Maker bool
	// Transfer: token, recipient and amount.
	Token  Address
	To     Address
	Amount uint256.Int
	// Perp markets. Fill: the owner's position after the fill and the PnL
	// it realized (before fees). Liquidation: Base = |size| taken over,
	// Side = the position's side (Buy = long), Price = the mark, Quote =
	// |size| at the mark, Amount = the penalty, Position = what was taken
	// over, Realized = the PnL it realized. Trigger events: Price = the
	// mark that fired it (fired only).
	Position Signed
	Realized Signed
	Price    uint256.Int
}

// Signed is a signed wei amount (sign and magnitude; zero is never
// negative).
type Signed struct {
	Neg bool
	Abs uint256.Int
}

// BookTick summarises one book's auction in a tick.
type BookTick struct {
	Book        Hash
	Price       uint256.Int // clearing price; the previous one when nothing traded
	HasPrice    bool        // false until the book has ever cleared
	Traded      bool        // volume > 0 in this tick
	VolumeBase  uint256.Int
	VolumeQuote uint256.Int
	NewOrders   int // orders created in this tick
	// Events[FirstEvent:EndEvent] are this book's events: every event of
	// the book in the tick, late ones (liquidation, flat sweep, triggers)
	// included, except EventTriggerFired (after every range). A book that
	// did not run but lost orders or triggers to a liquidation has a
	// BookTick too (not Traded, NewOrders 0). Ranges follow Books' order.
	FirstEvent int
	EndEvent   int
}
