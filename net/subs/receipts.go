package subs

import "github.com/ledgervenue/node/core/clob"

// Receipt is one attested receipt for the live receipt channels and logs:
// what filtering needs, and its Body. The node's RPC layer owns the receipt
// and log encoders; the hub asks Body for JSON only when a subscriber is to
// get it, so a node nobody subscribes to encodes no receipt at all.
//
// Ownership: PublishReceipts takes the receipts and everything they
// reference; the node must not modify them afterwards.
type Receipt struct {
	From clob.Address
	To   clob.Address
	// HasTo is false for a contract creation (no `to`).
	HasTo bool
	// TimeUs is the receipt's attestation time in microseconds: the
	// `since` cursor of svc_accountReceipts and svc_confirmedReceipts.
	TimeUs int64
	// Attestations is the number of attestations the receipt carries
	// (compared with a logs filter's minAttestations).
	Attestations int
	Body         ReceiptBody
}

// ReceiptBody encodes one receipt and its logs on demand. The hub calls it
// from its fan-out (one goroutine at a time, under its lock); every append
// returns a slice the hub then owns (Conn.Send keeps it).
type ReceiptBody interface {
	// AppendReceipt appends the receipt object, svc_metadata included.
	AppendReceipt(dst []byte) []byte
	// LogCount is the number of the receipt's logs.
	LogCount() int
	// Log returns what a logs filter compares of log i, its topics
	// appended to topics (scratch the hub reuses).
	Log(i int, topics []clob.Hash) Log
	// AppendLog appends log i with its svc_metadata (proof, receipt_root,
	// signatures), as the logs subscription sends it.
	AppendLog(dst []byte, i int) []byte
}

// Log is what a logs filter compares of one log.
type Log struct {
	Address     clob.Address
	Topics      []clob.Hash
	BlockNumber uint64 // what fromBlock/toBlock compare with
}
