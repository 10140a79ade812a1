package rpc

import (
	"strconv"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/attest"
	"github.com/ledgervenue/node/net/node"
)

var (
	zeroHash    [32]byte
	zeroAddress [20]byte
	zeroBloom   [256]byte
)

// appendTx appends the Transaction object of r in the shape sh.
func appendTx(dst []byte, r *node.Receipt, sh shape) []byte {
	tx := &r.Rec.Tx
	dst = appendTxHead(dst, r, sh.compat)
	dst = append(dst, `,"gasPrice":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &r.Rec.EffectiveGasPrice)
	dst = appendFeeCaps(dst, tx)
	if tx.Type != core.TxTypeLegacy {
		dst = appendAccessList(append(dst, `,"accessList":`...), tx.AccessList)
		dst = append(dst, `,"yParity":`...)
		dst = jsonrpc.AppendQuantityU256(dst, &tx.V)
	}
	dst = append(dst, `,"input":`...)
	dst = jsonrpc.AppendData(dst, tx.Data)
	dst = append(dst, `,"v":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &tx.V)
	dst = append(dst, `,"r":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &tx.R)
	dst = append(dst, `,"s":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &tx.S)
	dst = append(dst, sh.meta...)
	dst = appendReceiptMetadata(dst, r)
	return append(dst, '}')
}

// appendTxHead opens r's transaction object with its members from hash to
// gas (the block reference and index among them): what the Transaction
// object and the REST explorer view (appendTxExplorer) share.
func appendTxHead(dst []byte, r *node.Receipt, compat bool) []byte {
	tx := &r.Rec.Tx
	dst = append(dst, `{"hash":`...)
	dst = jsonrpc.AppendData(dst, tx.Hash[:])
	dst = append(dst, `,"type":`...)
	dst = jsonrpc.AppendQuantity(dst, uint64(tx.Type))
	dst = append(dst, `,"chainId":`...)
	dst = jsonrpc.AppendQuantity(dst, tx.ChainID)
	dst = append(dst, `,"nonce":`...)
	dst = jsonrpc.AppendQuantity(dst, tx.Nonce)
	dst = appendBlockRef(dst, r, compat)
	dst = appendTxIndex(dst, compat)
	dst = append(dst, `,"from":`...)
	dst = jsonrpc.AppendData(dst, tx.From[:])
	dst = append(dst, `,"to":`...)
	dst = appendTo(dst, tx)
	dst = append(dst, `,"value":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &tx.Value)
	dst = append(dst, `,"gas":`...)
	return jsonrpc.AppendQuantity(dst, tx.Gas)
}

// appendFeeCaps appends an EIP-1559 transaction's maxFeePerGas and
// maxPriorityFeePerGas; nothing for the other types.
func appendFeeCaps(dst []byte, tx *core.Tx) []byte {
	if tx.Type != core.TxTypeDynamicFee {
		return dst
	}
	dst = append(dst, `,"maxFeePerGas":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &tx.GasFeeCap)
	dst = append(dst, `,"maxPriorityFeePerGas":`...)
	return jsonrpc.AppendQuantityU256(dst, &tx.GasTipCap)
}

func appendTo(dst []byte, tx *core.Tx) []byte {
	if !tx.HasTo {
		return append(dst, "null"...)
	}
	return jsonrpc.AppendData(dst, tx.To[:])
}

func appendAccessList(dst []byte, al []core.AccessTuple) []byte {
	dst = append(dst, '[')
	for i, t := range al {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"address":`...)
		dst = jsonrpc.AppendData(dst, t.Address[:])
		dst = append(dst, `,"storageKeys":[`...)
		for j, k := range t.StorageKeys {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = jsonrpc.AppendData(dst, k[:])
		}
		dst = append(dst, "]}"...)
	}
	return append(dst, ']')
}

// appendReceipt appends the Receipt object of an attested record in the
// shape sh.
func appendReceipt(dst []byte, r *node.Receipt, sh shape) []byte {
	dst = append(dst, `{"type":`...)
	dst = jsonrpc.AppendQuantity(dst, uint64(r.Rec.Tx.Type))
	dst = append(dst, `,"status":`...)
	dst = jsonrpc.AppendQuantity(dst, uint64(r.Rec.Status))
	dst = append(dst, `,"cumulativeGasUsed":`...)
	dst = jsonrpc.AppendQuantity(dst, r.Rec.GasUsed)
	dst = append(dst, `,"gasUsed":`...)
	dst = jsonrpc.AppendQuantity(dst, r.Rec.GasUsed)
	dst = append(dst, `,"effectiveGasPrice":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &r.Rec.EffectiveGasPrice)
	dst = append(dst, `,"logs":[`...)
	for i := range r.Rec.Logs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendLog(dst, r, i, sh)
	}
	dst = append(dst, `],"logsBloom":`...)
	bloom := logsBloom(r.Rec.Logs)
	dst = jsonrpc.AppendData(dst, bloom[:])
	dst = append(dst, `,"transactionHash":`...)
	dst = jsonrpc.AppendData(dst, r.Rec.Tx.Hash[:])
	dst = appendTxIndex(dst, sh.compat)
	dst = appendBlockRef(dst, r, sh.compat)
	dst = append(dst, `,"from":`...)
	dst = jsonrpc.AppendData(dst, r.Rec.Tx.From[:])
	dst = append(dst, `,"to":`...)
	dst = appendTo(dst, &r.Rec.Tx)
	dst = append(dst, `,"contractAddress":null`...)
	dst = append(dst, sh.meta...)
	dst = appendReceiptMetadata(dst, r)
	return append(dst, '}')
}

// appendTxIndex appends ,"transactionIndex":…: null as the spec says (no
// order inside a block), 0x0 in compat mode for decoders that require a
// number (ethers).
func appendTxIndex(dst []byte, compat bool) []byte {
	if compat {
		return append(dst, `,"transactionIndex":"0x0"`...)
	}
	return append(dst, `,"transactionIndex":null`...)
}

// appendBlockRef appends ,"blockHash":…,"blockNumber":… from blockRef, both
// null for a record in no block.
func appendBlockRef(dst []byte, r *node.Receipt, compat bool) []byte {
	timeUs, hash, ok := blockRef(r, compat)
	if !ok {
		return append(dst, `,"blockHash":null,"blockNumber":null`...)
	}
	dst = append(dst, `,"blockHash":`...)
	dst = jsonrpc.AppendData(dst, hash[:])
	dst = append(dst, `,"blockNumber":`...)
	return jsonrpc.AppendQuantity(dst, blockNumberAt(timeUs, compat))
}

// blockRef is the block a record is in, by its time in µs and its hash
// (docs/decisions.md, "Time and blocks"). An auction tick is its own block.
// An orderbook intent is in the block of the tick it landed in, and in no
// block until that tick has run and is durable (the spec); so is a
// withdrawal, in its withdrawal batch's tick (docs/bridge.md §2). A recovery
// transaction is in no block (the spec), except in compat mode, where
// strict decoders need one: there it is in its attestation batch's. Every
// other record is in the block of its attestation batch: the batch's time,
// and the digest its validators signed; ok is false until it is attested.
func blockRef(r *node.Receipt, compat bool) (timeUs int64, hash [32]byte, ok bool) {
	switch {
	case !compat && r.Rec.Kind == core.RecordTx && r.Rec.Tx.To == core.RecoveryAddress:
		return 0, zeroHash, false
	case r.Rec.Kind == core.RecordTick:
		return r.Rec.TickUs, r.Rec.Tx.Hash, true
	case r.Rec.Kind == core.RecordTx && core.LandsInTick(&r.Rec.Tx):
		return r.TickUs, r.TickHash, r.InTick
	case r.Batch != nil:
		return r.Batch.Timestamp, r.Batch.Digest, true
	}
	return 0, zeroHash, false
}

// CompatBlockUs is the time one block number spans in compat mode: block
// numbers count 500 ms slots (the test network's auction interval) instead
// of microseconds. Clients that walk block numbers one at a time (ethers'
// polling subscriber emits every number between two polls) then take a few
// steps per poll instead of millions.
const CompatBlockUs = 500_000

// blockNumberAt is the number of the block at time timeUs: the time itself
// (the spec: block numbers are µs), or its 500 ms slot in compat mode.
func blockNumberAt(timeUs int64, compat bool) uint64 {
	if compat {
		return uint64(timeUs / CompatBlockUs)
	}
	return uint64(timeUs)
}

// appendReceiptMetadata appends the metadata object (svc_metadata): the spec's attestations and
// committee_epoch, plus the receipt's Merkle root and proof so that a client
// can verify the attestations (unknown fields are ignored by clients).
func appendReceiptMetadata(dst []byte, r *node.Receipt) []byte {
	dst = appendAttestations(append(dst, `{"attestations":`...), r)
	dst = append(dst, `,"committee_epoch":`...)
	dst = strconv.AppendUint(dst, r.Epoch, 10)
	if r.Batch != nil {
		dst = append(dst, `,"receipt_root":`...)
		dst = jsonrpc.AppendData(dst, r.Batch.Root[:])
		dst = append(dst, `,"proof":`...)
		dst = appendProof(dst, r.Batch.Proof(r.Index))
	}
	return append(dst, '}')
}

// appendAttestations appends the array of r's attestations, [] until it
// is attested.
func appendAttestations(dst []byte, r *node.Receipt) []byte {
	dst = append(dst, '[')
	if r.Batch != nil {
		for i, a := range r.Batch.Attestations(r.Index) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"validator_address":`...)
			dst = jsonrpc.AppendData(dst, a.Validator[:])
			dst = append(dst, `,"sequence_number":`...)
			dst = strconv.AppendUint(dst, a.Seq, 10)
			dst = append(dst, `,"batch_index":`...)
			dst = strconv.AppendUint(dst, uint64(a.BatchIndex), 10)
			dst = append(dst, `,"timestamp":`...)
			dst = strconv.AppendInt(dst, a.Timestamp, 10)
			dst = append(dst, `,"signature":`...)
			dst = jsonrpc.AppendData(dst, a.Signature[:])
			dst = append(dst, '}')
		}
	}
	return append(dst, ']')
}

func appendProof(dst []byte, p attest.Proof) []byte {
	dst = append(dst, `{"generalized_index":"`...)
	dst = strconv.AppendUint(dst, p.GeneralizedIndex, 10)
	dst = append(dst, `","path":[`...)
	for i, h := range p.Path {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonrpc.AppendData(dst, h[:])
	}
	return append(dst, "]}"...)
}

// appendLog appends log i of r in eth_getLogs form: blockNumber is always 1
// and blockHash the zero hash (the spec), camelCase keys (go-ethereum decodes
// no other spelling), its metadata key by sh.
func appendLog(dst []byte, r *node.Receipt, i int, sh shape) []byte {
	l := &r.Rec.Logs[i]
	dst = append(dst, `{"address":`...)
	dst = jsonrpc.AppendData(dst, l.Address[:])
	dst = append(dst, `,"topics":[`...)
	for j, t := range l.Topics {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = jsonrpc.AppendData(dst, t[:])
	}
	dst = append(dst, `],"data":`...)
	dst = jsonrpc.AppendData(dst, l.Data)
	dst = append(dst, `,"blockNumber":"0x1","blockHash":`...)
	dst = jsonrpc.AppendData(dst, zeroHash[:])
	dst = append(dst, `,"transactionHash":`...)
	dst = jsonrpc.AppendData(dst, r.Rec.Tx.Hash[:])
	dst = append(dst, `,"transactionIndex":"0x0","logIndex":`...)
	dst = jsonrpc.AppendQuantity(dst, uint64(i))
	dst = append(dst, `,"removed":false`...)
	dst = append(dst, sh.meta...)
	dst = appendLogMetadata(dst, r)
	return append(dst, '}')
}

// appendLogMetadata appends {proof, receipt_root, signatures}: the proof
// places the log's receipt under receipt_root, which the signatures attest.
func appendLogMetadata(dst []byte, r *node.Receipt) []byte {
	if r.Batch == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"proof":`...)
	dst = appendProof(dst, r.Batch.Proof(r.Index))
	dst = append(dst, `,"receipt_root":`...)
	dst = jsonrpc.AppendData(dst, r.Batch.Root[:])
	dst = append(dst, `,"signatures":[`...)
	for i, s := range r.Batch.Sigs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"r":`...)
		dst = jsonrpc.AppendData(dst, s.Signature[:32])
		dst = append(dst, `,"s":`...)
		dst = jsonrpc.AppendData(dst, s.Signature[32:64])
		dst = append(dst, `,"v":`...)
		dst = jsonrpc.AppendQuantity(dst, uint64(s.Signature[64]))
		dst = append(dst, `,"yParity":`...)
		dst = jsonrpc.AppendQuantity(dst, uint64(s.Signature[64]-27))
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// logsBloom is the Ethereum 2048-bit bloom over the logs' addresses and
// topics, so clients that pre-filter on it see the truth.
func logsBloom(logs []core.Log) (b [256]byte) {
	add := func(data []byte) {
		h := core.Keccak256Hash(data)
		for i := 0; i < 6; i += 2 {
			bit := (uint(h[i])<<8 | uint(h[i+1])) & 2047
			b[255-bit/8] |= 1 << (bit % 8)
		}
	}
	for _, l := range logs {
		add(l.Address[:])
		for _, t := range l.Topics {
			add(t[:])
		}
	}
	return b
}

// appendEmptyBlock appends the spec's empty block, with baseFeePerGas added
// so that wallets build EIP-1559 transactions. The spec's difficulty is
// zero-padded, which go-ethereum's strict quantity decoder refuses; compat
// mode serves 0x0.
func appendEmptyBlock(dst []byte, number uint64, hash [32]byte, baseFee []byte, compat bool) []byte {
	dst = append(dst, `{"number":`...)
	dst = jsonrpc.AppendQuantity(dst, number)
	dst = append(dst, `,"hash":`...)
	dst = jsonrpc.AppendData(dst, hash[:])
	for _, k := range [...]string{"mixHash", "parentHash", "sha3Uncles", "transactionsRoot", "stateRoot", "receiptsRoot"} {
		dst = append(dst, `,"`...)
		dst = append(dst, k...)
		dst = append(dst, `":`...)
		dst = jsonrpc.AppendData(dst, zeroHash[:])
	}
	dst = append(dst, `,"nonce":"0x0000000000000000","logsBloom":`...)
	dst = jsonrpc.AppendData(dst, zeroBloom[:])
	dst = append(dst, `,"miner":`...)
	dst = jsonrpc.AppendData(dst, zeroAddress[:])
	if compat {
		dst = append(dst, `,"difficulty":"0x0"`...)
	} else {
		dst = append(dst, `,"difficulty":"0x0000000000000000"`...)
	}
	dst = append(dst, `,"extraData":"0x","size":"0x0","gasLimit":"0x0","gasUsed":"0x0","timestamp":"0x0","transactions":[],"uncles":[],"baseFeePerGas":`...)
	dst = append(dst, baseFee...)
	return append(dst, '}')
}
