package core

import (
	"slices"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/binread"
	"github.com/ledgervenue/node/core/clob"
)

// Orderbook events. Admission logs go in the admitting transaction's
// receipt; tick logs in the tick's record (RecordTick), whose hash is the
// blockHash of the receipts that landed in it. All are emitted by
// OrderbookAddress and ABI-encoded as Solidity would:
//
//	OrderSubmitted(bytes32 indexed orderbookId, bytes32 indexed orderId, address indexed owner,
//	               int256 size, uint256 price, uint8 orderType, uint8 flags, uint128 deadline, uint128 ttl)
//	CancelRequested(bytes32 indexed orderbookId, bytes32 indexed orderId, address indexed owner, uint128 deadline)
//	UpdateRequested(bytes32 indexed orderbookId, bytes32 indexed orderId, address indexed owner,
//	                uint256 newSize, uint256 newPrice, uint128 deadline)
//	TransferRequested(address indexed token, address indexed from, address indexed to, uint256 amount, uint128 deadline)
//
//	SolutionExecuted(bytes32 indexed orderbookId, uint128 deadline, uint256 clearingPrice,
//	                 uint256 totalVolume, uint256 newOrdersCount)      -- the live network's event
//	OrderFilled(bytes32 indexed orderbookId, bytes32 indexed orderId, address indexed owner,
//	            uint8 side, uint256 base, uint256 quote, uint256 fee, bool maker, bool filled)
//	OrderClosed(bytes32 indexed orderbookId, bytes32 indexed orderId, address indexed owner, uint8 reason)
//	            reason: 1 cancelled, 2 expired, 3 post_only_refused, 4 margin_canceled
//	OrderUpdated(bytes32 indexed orderbookId, bytes32 indexed orderId, address indexed owner)
//	Transfer(address indexed token, address indexed from, address indexed to, uint256 amount)
//
// Perpetual markets (docs/perps.md) add, at admission,
//
//	TriggerSubmitted(bytes32 indexed orderbookId, bytes32 indexed triggerId, address indexed owner,
//	                 int256 size, uint256 limitPrice, uint256 triggerPrice, uint8 triggerType,
//	                 uint8 grouping, uint8 flags, uint128 deadline, uint128 ttl)
//	                 -- triggerType 0 take-profit, 1 stop-loss; grouping 0 none, 1 asset (the live ABI)
//	TriggerCancelRequested(bytes32 indexed orderbookId, bytes32 indexed triggerId, address indexed owner,
//	                       uint128 deadline)
//	TriggerUpdateRequested(bytes32 indexed orderbookId, bytes32 indexed triggerId, address indexed owner,
//	                       int256 size, uint256 limitPrice, uint256 triggerPrice, uint128 deadline)
//
// and in ticks
//
//	TriggerFired(bytes32 indexed orderbookId, bytes32 indexed triggerId, address indexed owner,
//	             uint8 side, uint256 markPrice)      -- its order, same id, lands in the next tick
//	TriggerCancelled(bytes32 indexed orderbookId, bytes32 indexed triggerId, address indexed owner,
//	                 uint8 side)                     -- owner, position flat (asset), ttl, liquidation or refused order
//	Liquidation(bytes32 indexed orderbookId, address indexed owner, uint8 side, uint256 size,
//	            uint256 markPrice, uint256 value, uint256 penalty, int256 realized)
//
// Fills on perp books log OrderFilled like spot fills. A Liquidation is one
// position taken over by the backstop: side is the position's (0 long),
// size its base wei, value size at the mark in quote wei, penalty and
// realized (PnL before the penalty) in quote wei.
//
// totalVolume is in base wei; side is 0 buy, 1 sell; flags are the order
// flags (REDUCE_ONLY 0x01, IOC 0x02).
var (
	TopicOrderSubmitted    = eventTopic("OrderSubmitted(bytes32,bytes32,address,int256,uint256,uint8,uint8,uint128,uint128)")
	TopicCancelRequested   = eventTopic("CancelRequested(bytes32,bytes32,address,uint128)")
	TopicUpdateRequested   = eventTopic("UpdateRequested(bytes32,bytes32,address,uint256,uint256,uint128)")
	TopicTransferRequested = eventTopic("TransferRequested(address,address,address,uint256,uint128)")
	TopicSolutionExecuted  = eventTopic("SolutionExecuted(bytes32,uint128,uint256,uint256,uint256)")
	TopicOrderFilled       = eventTopic("OrderFilled(bytes32,bytes32,address,uint8,uint256,uint256,uint256,bool,bool)")
	TopicOrderClosed       = eventTopic("OrderClosed(bytes32,bytes32,address,uint8)")
	TopicOrderUpdated      = eventTopic("OrderUpdated(bytes32,bytes32,address)")
	TopicTransfer          = eventTopic("Transfer(address,address,address,uint256)")

	TopicTriggerSubmitted       = eventTopic("TriggerSubmitted(bytes32,bytes32,address,int256,uint256,uint256,uint8,uint8,uint8,uint128,uint128)")
	TopicTriggerCancelRequested = eventTopic("TriggerCancelRequested(bytes32,bytes32,address,uint128)")
	TopicTriggerUpdateRequested = eventTopic("TriggerUpdateRequested(bytes32,bytes32,address,int256,uint256,uint256,uint128)")
	TopicTriggerFired           = eventTopic("TriggerFired(bytes32,bytes32,address,uint8,uint256)")
	TopicTriggerCancelled       = eventTopic("TriggerCancelled(bytes32,bytes32,address,uint8)")
	TopicLiquidation            = eventTopic("Liquidation(bytes32,address,uint8,uint256,uint256,uint256,uint256,int256)")
)

// OrderClosed reasons.
const (
	CloseCancelled       = 1
	CloseExpired         = 2
	ClosePostOnlyRefused = 3
	CloseMarginCanceled  = 4 // the owner's liquidation removed it
)

func eventTopic(sig string) Hash { return Keccak256Hash([]byte(sig)) }

func addrTopic(a clob.Address) Hash {
	var h Hash
	copy(h[12:], a[:])
	return h
}

func appendWordU64(dst []byte, v uint64) []byte {
	return binread.AppendU256(dst, uint256.NewInt(v))
}

func appendWordBool(dst []byte, v bool) []byte {
	if v {
		return appendWordU64(dst, 1)
	}
	return appendWordU64(dst, 0)
}

func obLog(topics []Hash, data []byte) Log {
	return Log{Address: OrderbookAddress, Topics: topics, Data: data}
}

// admissionLogs are the logs of an admitted orderbook transaction, one per
// intent, in envelope order.
func admissionLogs(adm *clob.Admission, env *clob.Envelope) []Log {
	logs := make([]Log, 0, len(env.Intents))
	owner := addrTopic(adm.Owner)
	for i := range env.Intents {
		in := &env.Intents[i]
		var data []byte
		switch in.Kind {
		case clob.IntentSubmit:
			id := env.OrderIDOf(i, adm.Signer, adm.Nonce)
			data = appendSignedSize(data, in)
			data = binread.AppendU256(data, &in.Price)
			data = appendWordU64(data, uint64(in.Type))
			data = appendWordU64(data, uint64(in.Flags))
			data = appendWordU64(data, in.Deadline)
			data = appendWordU64(data, in.TTL)
			logs = append(logs, obLog([]Hash{TopicOrderSubmitted, Hash(in.Book), Hash(id), owner}, data))
		case clob.IntentCancel:
			data = appendWordU64(data, in.Deadline)
			logs = append(logs, obLog([]Hash{TopicCancelRequested, Hash(in.Book), Hash(in.OrderID), owner}, data))
		case clob.IntentUpdate:
			data = binread.AppendU256(data, &in.Size)
			data = binread.AppendU256(data, &in.Price)
			data = appendWordU64(data, in.Deadline)
			logs = append(logs, obLog([]Hash{TopicUpdateRequested, Hash(in.Book), Hash(in.OrderID), owner}, data))
		case clob.IntentTransfer:
			data = binread.AppendU256(data, &in.Amount)
			data = appendWordU64(data, in.Deadline)
			logs = append(logs, obLog([]Hash{TopicTransferRequested, addrTopic(in.Token), owner, addrTopic(in.To)}, data))
		case clob.IntentSubmitTrigger:
			id := env.OrderIDOf(i, adm.Signer, adm.Nonce)
			data = appendSignedSize(data, in)
			data = binread.AppendU256(data, &in.Price)
			data = binread.AppendU256(data, &in.TriggerPrice)
			data = appendWordU64(data, uint64(in.TriggerType))
			data = appendWordU64(data, uint64(in.Grouping))
			data = appendWordU64(data, uint64(in.Flags))
			data = appendWordU64(data, in.Deadline)
			data = appendWordU64(data, in.TTL)
			logs = append(logs, obLog([]Hash{TopicTriggerSubmitted, Hash(in.Book), Hash(id), owner}, data))
		case clob.IntentCancelTrigger:
			data = appendWordU64(data, in.Deadline)
			logs = append(logs, obLog([]Hash{TopicTriggerCancelRequested, Hash(in.Book), Hash(in.OrderID), owner}, data))
		case clob.IntentUpdateTrigger:
			data = appendSignedSize(data, in)
			data = binread.AppendU256(data, &in.Price)
			data = binread.AppendU256(data, &in.TriggerPrice)
			data = appendWordU64(data, in.Deadline)
			logs = append(logs, obLog([]Hash{TopicTriggerUpdateRequested, Hash(in.Book), Hash(in.OrderID), owner}, data))
		}
	}
	return logs
}

// appendSignedSize appends the intent's size as an int256: negative for a
// sell.
func appendSignedSize(dst []byte, in *clob.Intent) []byte {
	size := in.Size
	if in.Side == clob.Sell {
		size.Neg(&size)
	}
	return binread.AppendU256(dst, &size)
}

// appendWordSigned appends a signed amount as an int256.
func appendWordSigned(dst []byte, v *clob.Signed) []byte {
	w := v.Abs
	if v.Neg {
		w.Neg(&w)
	}
	return binread.AppendU256(dst, &w)
}

// tickLogs are the logs of one tick, in the engine's order: per book its
// SolutionExecuted, then its events; the events of no book (transfers, and
// the perp markets' liquidations and triggers after matching) where the
// engine put them.
func tickLogs(res *clob.TickResult) []Log {
	return appendTickLogs(make([]Log, 0, len(res.Books)+len(res.Events)), res, 0, 0)
}

// appendTickLogs appends the logs of res's books from books on, and of its
// events from next on: the rest of tickLogs once the first books' are
// known, their events ending at next.
func appendTickLogs(logs []Log, res *clob.TickResult, books, next int) []Log {
	a := newLogArena(len(res.Books) - books + len(res.Events) - next)
	for bi := books; bi < len(res.Books); bi++ {
		bt := &res.Books[bi]
		logs = a.appendEventLogs(logs, res.Events[next:bt.FirstEvent])
		data := a.start()
		data = appendWordU64(data, uint64(res.TickUs))
		data = binread.AppendU256(data, &bt.Price)
		data = binread.AppendU256(data, &bt.VolumeBase)
		data = appendWordU64(data, uint64(bt.NewOrders))
		logs = append(logs, a.log(data, TopicSolutionExecuted, Hash(bt.Book)))
		logs = a.appendEventLogs(logs, res.Events[bt.FirstEvent:bt.EndEvent])
		next = bt.EndEvent
	}
	return a.appendEventLogs(logs, res.Events[next:])
}

// clearedLogs are the logs of the books a tick cleared without the
// sequencer's lock (Ledger.ClearConcurrent), made there too, and those
// books' results they were made from.
type clearedLogs struct {
	logs  []Log // nil: none made
	books []clob.BookTick
	next  int // the first event after theirs
}

// logCleared logs the books the tick cleared so far.
func (c *clearedLogs) logCleared(res *clob.TickResult) {
	c.logs = tickLogs(res)
	c.books = append(c.books[:0], res.Books...)
	c.next = len(res.Events)
}

// finish returns the logs of the whole tick res: the cleared books' logs
// are reused when the finish left their results as they were (a
// liquidation's late events can be moved into their ranges: then every
// log is made again).
func (c *clearedLogs) finish(res *clob.TickResult) []Log {
	logs, books := c.logs, c.books
	c.logs = nil
	if logs == nil || len(res.Books) < len(books) || !slices.Equal(res.Books[:len(books)], books) {
		return tickLogs(res)
	}
	return appendTickLogs(logs, res, len(books), c.next)
}

// logArena holds the topics and data of one tick's logs in two buffers
// sized once for the whole tick, where each log used to allocate its own
// (the tick's logs are built under the sequencer's lock). A log's slices
// are capped at their length: appending to one never writes into the
// next.
type logArena struct {
	topics []Hash
	data   []byte
}

// logTopicsMax and logDataMax bound one log of a tick: four topics, six
// words (a liquidation's data).
const (
	logTopicsMax = 4
	logDataMax   = 6 * 32
)

func newLogArena(logs int) *logArena {
	return &logArena{topics: make([]Hash, 0, logs*logTopicsMax), data: make([]byte, 0, logs*logDataMax)}
}

// start returns an empty slice at the end of the data buffer to append a
// log's data to (at most logDataMax bytes).
func (a *logArena) start() []byte { return a.data[len(a.data):len(a.data)] }

// log makes a log of data (appended to start's slice) and topics.
func (a *logArena) log(data []byte, topics ...Hash) Log {
	if len(data) > logDataMax || len(topics) > logTopicsMax {
		panic("BUG: core: a tick log larger than its arena's bound")
	}
	d, t := len(a.data), len(a.topics)
	a.data = a.data[:d+len(data)]
	a.topics = append(a.topics, topics...)
	var dataOut []byte // nil for a log without data, as before
	if len(data) > 0 {
		dataOut = a.data[d : d+len(data) : d+len(data)]
	}
	return obLog(a.topics[t:len(a.topics):len(a.topics)], dataOut)
}

func (a *logArena) appendEventLogs(logs []Log, events []clob.Event) []Log {
	for i := range events {
		if l, ok := a.eventLog(&events[i]); ok {
			logs = append(logs, l)
		}
	}
	return logs
}

// eventLog encodes one engine event; placements have no log of their own
// (OrderSubmitted announced them at admission).
func (a *logArena) eventLog(ev *clob.Event) (Log, bool) {
	owner := addrTopic(ev.Owner)
	data := a.start()
	switch ev.Kind {
	case clob.EventFill:
		data = appendWordU64(data, uint64(ev.Side))
		data = binread.AppendU256(data, &ev.Base)
		data = binread.AppendU256(data, &ev.Quote)
		data = binread.AppendU256(data, &ev.Fee)
		data = appendWordBool(data, ev.Maker)
		data = appendWordBool(data, ev.Terminal)
		return a.log(data, TopicOrderFilled, Hash(ev.Book), Hash(ev.OrderID), owner), true
	case clob.EventCancel, clob.EventExpire, clob.EventPostOnlyRefused, clob.EventMarginCancel:
		data = appendWordU64(data, closeReason(ev.Kind))
		return a.log(data, TopicOrderClosed, Hash(ev.Book), Hash(ev.OrderID), owner), true
	case clob.EventUpdate:
		return a.log(data, TopicOrderUpdated, Hash(ev.Book), Hash(ev.OrderID), owner), true
	case clob.EventTransfer:
		data = binread.AppendU256(data, &ev.Amount)
		return a.log(data, TopicTransfer, addrTopic(ev.Token), owner, addrTopic(ev.To)), true
	case clob.EventTriggerFired:
		data = appendWordU64(data, uint64(ev.Side))
		data = binread.AppendU256(data, &ev.Price)
		return a.log(data, TopicTriggerFired, Hash(ev.Book), Hash(ev.OrderID), owner), true
	case clob.EventTriggerCancel:
		data = appendWordU64(data, uint64(ev.Side))
		return a.log(data, TopicTriggerCancelled, Hash(ev.Book), Hash(ev.OrderID), owner), true
	case clob.EventLiquidation:
		data = appendWordU64(data, uint64(ev.Side))
		data = binread.AppendU256(data, &ev.Base)
		data = binread.AppendU256(data, &ev.Price)
		data = binread.AppendU256(data, &ev.Quote)
		data = binread.AppendU256(data, &ev.Amount)
		data = appendWordSigned(data, &ev.Realized)
		return a.log(data, TopicLiquidation, Hash(ev.Book), owner), true
	}
	return Log{}, false
}

func closeReason(k clob.EventKind) uint64 {
	switch k {
	case clob.EventExpire:
		return CloseExpired
	case clob.EventPostOnlyRefused:
		return ClosePostOnlyRefused
	case clob.EventMarginCancel:
		return CloseMarginCanceled
	}
	return CloseCancelled
}
