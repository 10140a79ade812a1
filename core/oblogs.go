package core

import (
	"github.com/holiman/uint256"
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
//	            reason: 1 cancelled, 2 expired, 3 post_only_refused
//	OrderUpdated(bytes32 indexed orderbookId, bytes32 indexed orderId, address indexed owner)
//	Transfer(address indexed token, address indexed from, address indexed to, uint256 amount)
//
// totalVolume is in base wei; side is 0 buy, 1 sell.
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
)

// OrderClosed reasons.
const (
	CloseCancelled       = 1
	CloseExpired         = 2
	ClosePostOnlyRefused = 3
)

func eventTopic(sig string) Hash { return Keccak256Hash([]byte(sig)) }

func addrTopic(a clob.Address) Hash {
	var h Hash
	copy(h[12:], a[:])
	return h
}

func appendWordU64(dst []byte, v uint64) []byte {
	return appendU256(dst, uint256.NewInt(v))
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
			id := clob.OrderID(adm.Signer, adm.Nonce, uint32(i))
			size := in.Size
			if in.Side == clob.Sell {
				size.Neg(&size)
			}
			data = appendU256(data, &size)
			data = appendU256(data, &in.Price)
			data = appendWordU64(data, uint64(in.Type))
			data = appendWordU64(data, uint64(in.Flags))
			data = appendWordU64(data, in.Deadline)
			data = appendWordU64(data, in.TTL)
			logs = append(logs, obLog([]Hash{TopicOrderSubmitted, Hash(in.Book), Hash(id), owner}, data))
		case clob.IntentCancel:
			data = appendWordU64(data, in.Deadline)
			logs = append(logs, obLog([]Hash{TopicCancelRequested, Hash(in.Book), Hash(in.OrderID), owner}, data))
		case clob.IntentUpdate:
			data = appendU256(data, &in.Size)
			data = appendU256(data, &in.Price)
			data = appendWordU64(data, in.Deadline)
			logs = append(logs, obLog([]Hash{TopicUpdateRequested, Hash(in.Book), Hash(in.OrderID), owner}, data))
		case clob.IntentTransfer:
			data = appendU256(data, &in.Amount)
			data = appendWordU64(data, in.Deadline)
			logs = append(logs, obLog([]Hash{TopicTransferRequested, addrTopic(in.Token), owner, addrTopic(in.To)}, data))
		}
	}
	return logs
}

// tickLogs are the logs of one tick: per book its SolutionExecuted, then
// its events, in the engine's order.
func tickLogs(res *clob.TickResult) []Log {
	logs := make([]Log, 0, len(res.Books)+len(res.Events))
	for bi := range res.Books {
		bt := &res.Books[bi]
		var data []byte
		data = appendWordU64(data, uint64(res.TickUs))
		data = appendU256(data, &bt.Price)
		data = appendU256(data, &bt.VolumeBase)
		data = appendWordU64(data, uint64(bt.NewOrders))
		logs = append(logs, obLog([]Hash{TopicSolutionExecuted, Hash(bt.Book)}, data))
		for ei := bt.FirstEvent; ei < bt.EndEvent; ei++ {
			if l, ok := eventLog(&res.Events[ei]); ok {
				logs = append(logs, l)
			}
		}
	}
	for ei := range res.Events {
		if ev := &res.Events[ei]; ev.Kind == clob.EventTransfer {
			l, _ := eventLog(ev)
			logs = append(logs, l)
		}
	}
	return logs
}

// eventLog encodes one engine event; placements have no log of their own
// (OrderSubmitted announced them at admission).
func eventLog(ev *clob.Event) (Log, bool) {
	owner := addrTopic(ev.Owner)
	var data []byte
	switch ev.Kind {
	case clob.EventFill:
		data = appendWordU64(data, uint64(ev.Side))
		data = appendU256(data, &ev.Base)
		data = appendU256(data, &ev.Quote)
		data = appendU256(data, &ev.Fee)
		data = appendWordBool(data, ev.Maker)
		data = appendWordBool(data, ev.Terminal)
		return obLog([]Hash{TopicOrderFilled, Hash(ev.Book), Hash(ev.OrderID), owner}, data), true
	case clob.EventCancel, clob.EventExpire, clob.EventPostOnlyRefused:
		data = appendWordU64(data, closeReason(ev.Kind))
		return obLog([]Hash{TopicOrderClosed, Hash(ev.Book), Hash(ev.OrderID), owner}, data), true
	case clob.EventUpdate:
		return obLog([]Hash{TopicOrderUpdated, Hash(ev.Book), Hash(ev.OrderID), owner}, nil), true
	case clob.EventTransfer:
		data = appendU256(data, &ev.Amount)
		return obLog([]Hash{TopicTransfer, addrTopic(ev.Token), owner, addrTopic(ev.To)}, data), true
	}
	return Log{}, false
}

func closeReason(k clob.EventKind) uint64 {
	switch k {
	case clob.EventExpire:
		return CloseExpired
	case clob.EventPostOnlyRefused:
		return ClosePostOnlyRefused
	}
	return CloseCancelled
}
