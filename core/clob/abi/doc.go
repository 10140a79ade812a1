// Package abi decodes the calldata of transactions sent to the Orderbook
// application (0x50d0000000000000000000000000000000000002) into a
// clob.Envelope, and encodes the same calls for clients and tests.
//
// # Functions
//
//	selector    function                                                         decoded as
//	0x1e416275  submitOrder(bytes32 orderbookId,int256 size,uint256 price,        IntentSubmit
//	              uint8 orderType,uint128 deadline,uint128 ttl,uint8 flags)
//	0x435f7e71  submitOrder(bytes32,int256,uint256,uint8,uint128,uint128,         IntentSubmit, Flags =
//	              bool reduceOnly,bool ioc)                    (deprecated)         REDUCE_ONLY·r | IOC·i
//	0xf38e6f2f  cancel(bytes32 orderbookId,bytes32 orderId,uint128 deadline)      IntentCancel
//	0xca07e1f5  update(bytes32 orderbookId,bytes32 orderId,uint256 newSize,       IntentUpdate
//	              uint256 newPrice,address token,uint128 deadline)
//	0x5b3ca981  transfer(address token,address to,uint256 amount,                 IntentTransfer
//	              uint128 deadline)
//	0xb1b1588e  deposit(address token,address recipient,uint256 amount,           IntentTransfer,
//	              uint128 deadline)                                                 To = recipient (delegated: Master)
//	0xec563caa  submitTrigger(bytes32 orderbookId,int256 size,                    IntentSubmitTrigger,
//	              uint256 limitPrice,uint256 triggerPrice,uint8 triggerType,        Price = limitPrice,
//	              uint8 grouping,uint128 deadline,uint128 ttl,                      Flags = REDUCE_ONLY·r | IOC·i
//	              bool reduceOnly,bool ioc)
//	0xa28aff15  cancelTrigger(bytes32 orderbookId,bytes32 triggerId,              IntentCancelTrigger,
//	              uint128 deadline)                                                 OrderID = triggerId
//	0x14bc15e3  updateTrigger(bytes32 orderbookId,bytes32 triggerId,              IntentUpdateTrigger,
//	              int256 size,uint256 limitPrice,uint256 triggerPrice,              OrderID = triggerId,
//	              uint128 deadline)                                                 Price = limitPrice
//	0xda235f17  submitBatch(bytes[] inner)                                        1..64 intents
//	0xf744bc22  delegated(address master,uint64 validUntil,bytes signature,       the inner call's intents,
//	              bytes inner)                                                      Delegated, Master, ValidUntil
//
// Every other selector is ReasonUnknownFunction. The orderbook's
// withdraw(address,address,uint256,uint128) (0xa98b3cbd, the Bridge's
// signature too) is not decoded here: the ledger takes a transaction whose
// calldata starts with it down its withdrawal path before decoding
// (core/withdraw.go), so Decode of it alone stays ReasonUnknownFunction;
// inside submitBatch or delegated it is ReasonWithdrawBatched, since a
// withdrawal is its own transaction. selectors_test.go recomputes each selector from its signature. The
// trigger calls and deposit may appear inside submitBatch and delegated()
// like the others.
//
// deposit is the live guides' first step before trading. On this venue an
// account's balance is its orderbook balance (bridge deposits credit it
// directly), so there is nothing to move into the orderbook: deposit
// decodes as a transfer with the same ABI shape and is checked and settled
// as one (funds available, deadline on the transfer grid, amount not zero).
// A deposit to oneself moves nothing but lands like a transfer; to another
// account it credits that account. Inside delegated() the recipient is
// overridden to the master, as on the live network, once the word has been
// checked as an address: a delegate key cannot move funds off its master.
//
// # Strictness
//
// The static calls must be exactly 4 + 32·words bytes long. Narrow types must
// have zero high bytes (address: 12, uint64: 24, uint128: 16, uint8 and bool:
// 31) and a bool must be 0 or 1, else ReasonMalformed. orderType must be 0
// (Limit) or 1 (Market), else ReasonOrderType. The int256 size (of
// submitOrder, submitTrigger, updateTrigger) becomes Side (Sell when
// negative) and its magnitude; -2^255 has no positive magnitude in int256
// and is ReasonValueRange. Every deadline and ttl is microseconds and must be
// at most 2^63-1 (ReasonValueRange) although the ABI type is uint128. Flags,
// triggerType (0 TakeProfit, 1 StopLoss) and grouping (0 None, 1 Asset) are
// passed through whole: unknown flag bits, trigger types and groupings are
// the engine's refusals, not the decoder's. Arguments are
// checked in order and the first failing one decides the Reason.
//
// In submitBatch and delegated the offsets need not be where a canonical
// encoder puts them, and bytes after the last value are ignored, but every
// offset, length word, byte string and its zero padding must lie inside the
// calldata, with no arithmetic overflow. A batch holds 1..BatchIntentsMax
// calls (ReasonBatchSize, decided from the count word before the elements
// are bounded), each a full single-intent call with its selector:
// submitBatch inside is ReasonBatchNested, delegated inside is
// ReasonDelegationNested, and every element must carry the first one's
// deadline (ReasonBatchDeadline). A batch is all or nothing.
//
// # Delegation
//
// delegated() wraps one single-intent call or one submitBatch, signed by a
// delegate key (the transaction's signer) for a master account. Its
// certificate is the master's EIP-712 signature of
//
//	DelegationAuth(address delegate,uint64 validUntil)
//	domain: EIP712Domain(string name,string version,uint256 chainId)
//	        {name: "pod delegation", version: "1", chainId}   (no verifyingContract, no salt)
//
// with delegate = the transaction's signer and validUntil in microseconds
// (the live network's doc/protocol/key-delegation.md). DelegationDigest
// computes the digest; it equals go-ethereum's apitypes.TypedDataAndHash.
// The signature is r ‖ s ‖ v, 65 bytes, v ∈ {27, 28} or {0, 1}, r in
// [1, n), s in [1, n/2] (low s); anything else, or a key other than master,
// is ReasonDelegationSignature. As on the live network a certificate must
// cover the envelope's deadline, validUntil ≥ deadline, else
// ReasonDelegationExpired; whether it has run out against the clock is the
// caller's check on Envelope.ValidUntil. Signature recovery costs about a
// thousand times a plain decode, so it runs last, after every cheap check.
//
// Layout of a canonical delegated() call wrapping L bytes of inner calldata
// (offsets in bytes from the start of the calldata; the ABI's own offsets
// count from byte 4):
//
//	  0  +--------------------------------+
//	     | selector 0xf744bc22            |  4 bytes
//	  4  +--------------------------------+
//	     | 12 zero bytes ‖ master         |  address
//	 36  +--------------------------------+
//	     | 24 zero bytes ‖ validUntil     |  uint64, microseconds
//	 68  +--------------------------------+
//	     | offset of signature = 0x80     |  from byte 4
//	100  +--------------------------------+
//	     | offset of inner = 0x100        |  from byte 4
//	132  +--------------------------------+
//	     | signature length = 65          |
//	164  +--------------------------------+
//	     | r                              |  32 bytes
//	196  +--------------------------------+
//	     | s                              |  32 bytes
//	228  +--------------------------------+
//	     | v ‖ 31 zero bytes of padding   |
//	260  +--------------------------------+
//	     | inner length L                 |
//	292  +--------------------------------+
//	     | inner calldata (selector ‖     |  L bytes, zero padded
//	     | args), L rounded up to 32      |  to a multiple of 32
//	     +--------------------------------+
//
// submitBatch(bytes[]) with n inner calls c_0..c_{n-1}, canonically:
//
//	4 + 0      array offset = 0x20
//	4 + 32     n
//	4 + 64     n offsets o_i, counted from byte 4 + 64
//	...        per call: len(c_i), then c_i zero padded to a multiple of 32
//
// # Buffers
//
// Decode keeps no reference to data: the envelope's intents are copies. It
// allocates nothing for a single-intent call once env.Intents has capacity,
// nor for a batch once it has capacity for the batch; delegated() allocates
// inside signature recovery.
package abi
