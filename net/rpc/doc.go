// Package rpc is the JSON-RPC 2.0 dispatcher: it turns parsed requests into
// calls on the node and appends their answers, in the spec's shapes, to the
// connection's response buffer.
//
// Dispatch is a switch over the method name (no reflection). Each method
// appends only its result value; Serve wraps it in the response envelope or
// replaces it with the error object.
//
// Three execution paths, chosen per HTTP request:
//   - reads run on the event loop and answer at once (eth_chainId and
//     eth_getBalance allocate nothing in steady state);
//   - a single eth_sendRawTransaction decodes and recovers its signer on the
//     event loop (recovery is the expensive part, and the loops run in
//     parallel), applies it through the sequencer, and answers through a
//     deferred response once the transaction is durable — or attested, when
//     the optional timeout asks to wait for confirmation;
//   - any other request containing a write (a batch with transactions, admin
//     writes) is copied and run on its own goroutine, which waits for each
//     write in turn; the connection's later requests wait behind it, so
//     answers never reorder.
//
// Admin methods (admin_*) need "Authorization: Bearer <token>"; without it
// they answer -32600.
package rpc
