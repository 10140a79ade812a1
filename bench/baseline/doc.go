// Package baseline is the yardstick for the node's read path: a minimal
// net/http JSON-RPC server of the kind a typical Go developer writes, with
// encoding/json on both sides and balances in a map behind a RWMutex. It
// answers eth_chainId and eth_getBalance with the same bytes as the node
// (the tests compare them), so the load generator can drive both with the
// same requests and check the same answers.
//
// It is deliberately ordinary, not tuned: one goroutine per connection
// (net/http), reflection-based decoding into a request struct, and one
// json.Marshal per response. Only single requests are served (no batches,
// no notifications); other methods get -32601.
package baseline
