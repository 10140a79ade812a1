package abi

import _ "embed" // OrderbookJSON

// OrderbookJSON is the Orderbook application's interface
// (0x50d0000000000000000000000000000000000002) as a standard Solidity JSON
// ABI, for clients: every call Decode accepts (both submitOrder forms,
// cancel, update, transfer, deposit, submitTrigger, cancelTrigger,
// updateTrigger, submitBatch, delegated), the balanceOf and
// withdrawableBalance views eth_call answers, and the events the ledger logs
// (core/oblogs.go). With go-ethereum:
//
//	ob, err := abi.JSON(strings.NewReader(abi.OrderbookJSON)) // accounts/abi
//	data, err := ob.Pack("submitOrder", orderbookID, size, price, orderType, deadline, ttl, flags)
//
// go-ethereum names the deprecated (…, bool reduceOnly, bool ioc) overload
// submitOrder0. json_test.go checks the file against the decoder's selectors
// and decodes what go-ethereum packs from it; core/oblogs_abi_test.go checks
// its events against the logged topics.
//
//go:embed orderbook.abi.json
var OrderbookJSON string
