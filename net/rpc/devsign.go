package rpc

// Dev accounts sign for the client (docs/signing.md): under --dev the node
// holds the ten keys of the standard test mnemonic (node.DevKeys, anvil's
// and hardhat's accounts), lists them in eth_accounts and signs with them,
// so ethers' JsonRpcSigner and viem's JSON-RPC accounts work unmodified.
// Outside --dev it holds no key: eth_accounts is [] and every signing
// method answers errNoKeys.
//
// eth_sendTransaction fills what the client left out, signs, and submits
// through eth_sendRawTransaction's own path (send), so it is admitted,
// refused and answered exactly as the raw transaction would be.

import (
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"strconv"
	"sync"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/ethtx"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
	"github.com/valyala/fastjson"
)

// Bounds of eth_signTypedData_v4's typed data, beyond the transport's bound
// on the whole body (net/http1.MaxBodyBytes, net/ws.MaxMessageBytes) and the
// parser's nesting depth (jsonrpc.DepthMax, also applied to the string
// form). go-ethereum's encoder checks every type again for each struct
// value it encodes, so its work grows with the product of the two counts:
// these keep the worst case to milliseconds on a worker. Real payloads
// (permits, orders, Seaport's) are a few KiB with tens of fields.
const (
	// TypedDataBytesMax bounds the typed data's JSON text: the string as
	// sent, or the object re-encoded compactly.
	TypedDataBytesMax = 64 << 10
	// TypedDataFieldsMax bounds the fields of all its types together.
	TypedDataFieldsMax = 256
	// TypedDataObjectsMax bounds the JSON objects in its message: the
	// struct values to encode.
	TypedDataObjectsMax = 1024
)

var (
	// errNoKeys: geth's code for a signing request it holds no key for
	// (-32000 "unknown account"), with the reason and the way out.
	errNoKeys = &jsonrpc.Error{Code: CodeValidationFailed,
		Message: "this node holds no keys: the dev accounts sign only under --dev; sign in the client and send with eth_sendRawTransaction"}
	errTypedDataSize = jsonrpc.InvalidParams("typed data larger than " + strconv.Itoa(TypedDataBytesMax) + " bytes")
	errTypedFields   = jsonrpc.InvalidParams("typed data has more than " + strconv.Itoa(TypedDataFieldsMax) + " fields in its types")
	errTypedObjects  = jsonrpc.InvalidParams("typed data has more than " + strconv.Itoa(TypedDataObjectsMax) + " objects in its message")
	errTxObject      = jsonrpc.InvalidParams("want a transaction object {from, to?, value?, data?, gas?, gasPrice? | maxFeePerGas?, maxPriorityFeePerGas?, nonce?, chainId?, type?, accessList?}")
	errTxData        = jsonrpc.InvalidParams(`both "data" and "input" are set and not equal`)
	errTxDataSize    = jsonrpc.InvalidParams("data larger than " + strconv.Itoa(ethtx.RawSizeMax) + " bytes, the largest raw transaction eth_sendRawTransaction accepts")
	errTxFees        = jsonrpc.InvalidParams("both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified")
	errTxType        = jsonrpc.InvalidParams("type: want 0x0 (legacy), 0x1 (EIP-2930) or 0x2 (EIP-1559), with the fee fields of that type")
	errAccessList    = jsonrpc.InvalidParams("accessList: want [{address, storageKeys: [hash, …]}, …]")
)

// devAccounts are the dev keys, decoded once, and eth_accounts' answer.
type devAccounts struct {
	keys  [len(node.DevKeys)]*ecdsa.PrivateKey
	addrs [len(node.DevKeys)]core.Address
	list  []byte // the JSON array of their checksummed addresses
	// unknown is the start of the message for an address that is not one
	// of them.
	unknown string
}

var devAccts = sync.OnceValue(func() *devAccounts {
	d := &devAccounts{list: []byte{'['}}
	for i := range d.keys {
		d.keys[i], d.addrs[i] = node.DevKey(i), node.DevAddress(i)
		if i > 0 {
			d.list = append(d.list, ',')
		}
		d.list = strconv.AppendQuote(d.list, common.Address(d.addrs[i]).Hex())
	}
	d.list = append(d.list, ']')
	d.unknown = ": only the dev accounts sign, the " + strconv.Itoa(len(d.keys)) +
		" of the standard test mnemonic that eth_accounts lists (" + common.Address(d.addrs[0]).Hex() + ", …)"
	return d
})

// index returns a's place among the dev accounts, or -1.
func (d *devAccounts) index(a core.Address) int {
	for i := range d.addrs {
		if d.addrs[i] == a {
			return i
		}
	}
	return -1
}

// accounts answers eth_accounts: the dev accounts under --dev, else none.
func (c *call) accounts(dst []byte) []byte {
	if !c.s.cfg.Dev {
		return append(dst, "[]"...)
	}
	return append(dst, devAccts().list...)
}

// devSign answers the signing methods.
func (c *call) devSign(dst []byte) ([]byte, *jsonrpc.Error) {
	if !c.s.cfg.Dev {
		return dst, errNoKeys
	}
	switch string(c.req.Method) {
	case "eth_sendTransaction", "eth_signTransaction":
		return c.devTransaction(dst)
	case "eth_sign": // [address, data]
		return c.signMessage(dst, 0, 1)
	case "personal_sign": // [data, address]
		return c.signMessage(dst, 1, 0)
	}
	return c.signTypedData(dst)
}

// signer returns the dev key of the address in param i, or -32000 naming it.
func (c *call) signer(i int) (int, *jsonrpc.Error) {
	a, err := c.address(i)
	if err != nil {
		return 0, err
	}
	return devAccts().signer(a)
}

func (d *devAccounts) signer(a core.Address) (int, *jsonrpc.Error) {
	if k := d.index(a); k >= 0 {
		return k, nil
	}
	return 0, &jsonrpc.Error{Code: CodeValidationFailed, Message: "unknown account " + common.Address(a).Hex() + d.unknown}
}

// signMessage answers eth_sign and personal_sign: both sign the EIP-191
// personal message of the data (geth's and anvil's eth_sign too).
func (c *call) signMessage(dst []byte, addr, data int) ([]byte, *jsonrpc.Error) {
	k, err := c.signer(addr)
	if err != nil {
		return dst, err
	}
	v := c.req.Param(data)
	if v == nil {
		return dst, missingParam(data)
	}
	msg, err := jsonrpc.ParseData(c.sc.buf[:0], v)
	c.sc.buf = msg[:0]
	if err != nil {
		return dst, err
	}
	return appendSignature(dst, k, accounts.TextHash(msg))
}

// appendSignature signs hash with dev key k and appends the 65-byte
// signature r ‖ s ‖ v with v 27 or 28, as geth and anvil answer.
func appendSignature(dst []byte, k int, hash []byte) ([]byte, *jsonrpc.Error) {
	sig, err := crypto.Sign(hash, devAccts().keys[k])
	if err != nil {
		return dst, internalError(err)
	}
	sig[crypto.RecoveryIDOffset] += 27
	return jsonrpc.AppendData(dst, sig), nil
}

// signTypedData answers eth_signTypedData_v4 [address, typedData]: the
// EIP-712 hash of the typed data (an object, or the JSON string of one, as
// ethers and viem send it), signed.
func (c *call) signTypedData(dst []byte) ([]byte, *jsonrpc.Error) {
	k, err := c.signer(0)
	if err != nil {
		return dst, err
	}
	td, err := parseTypedData(c.req.Param(1))
	if err != nil {
		return dst, err
	}
	hash, _, e := apitypes.TypedDataAndHash(*td)
	if e != nil {
		return dst, jsonrpc.InvalidParams("typed data: " + e.Error())
	}
	return appendSignature(dst, k, hash)
}

// parseTypedData checks the typed data against the bounds and decodes it.
func parseTypedData(v *fastjson.Value) (*apitypes.TypedData, *jsonrpc.Error) {
	if v == nil {
		return nil, missingParam(1)
	}
	var text []byte
	if v.Type() == fastjson.TypeString {
		text = v.GetStringBytes()
		if len(text) > TypedDataBytesMax {
			return nil, errTypedDataSize
		}
		var p fastjson.Parser // its depth bound is jsonrpc.DepthMax's
		var e error
		if v, e = p.ParseBytes(text); e != nil {
			return nil, jsonrpc.InvalidParams("typed data: " + e.Error())
		}
	} else if text = v.MarshalTo(nil); len(text) > TypedDataBytesMax {
		return nil, errTypedDataSize
	}
	fields := 0
	if types := v.GetObject("types"); types != nil {
		types.Visit(func(_ []byte, t *fastjson.Value) {
			a, _ := t.Array()
			fields += len(a)
		})
	}
	if fields > TypedDataFieldsMax {
		return nil, errTypedFields
	}
	if countObjects(v.Get("message"), TypedDataObjectsMax+1) > TypedDataObjectsMax {
		return nil, errTypedObjects
	}
	td := new(apitypes.TypedData)
	if e := json.Unmarshal(text, td); e != nil {
		return nil, jsonrpc.InvalidParams("typed data: " + e.Error())
	}
	if td.Types["EIP712Domain"] == nil { // viem and ethers send it; alloy infers it
		if td.Types == nil {
			td.Types = apitypes.Types{}
		}
		td.Types["EIP712Domain"] = domainType(&td.Domain)
	}
	return td, nil
}

// countObjects counts the JSON objects in v, stopping once it reaches limit.
func countObjects(v *fastjson.Value, limit int) int {
	n := 0
	var walk func(v *fastjson.Value)
	walk = func(v *fastjson.Value) {
		if v == nil || n >= limit {
			return
		}
		switch v.Type() {
		case fastjson.TypeObject:
			n++
			o, _ := v.Object()
			o.Visit(func(_ []byte, e *fastjson.Value) { walk(e) })
		case fastjson.TypeArray:
			a, _ := v.Array()
			for _, e := range a {
				walk(e)
			}
		}
	}
	walk(v)
	return n
}

// domainType is the EIP712Domain type of the fields domain sets, in the
// order EIP-712 lists them.
func domainType(d *apitypes.TypedDataDomain) []apitypes.Type {
	var t []apitypes.Type
	if d.Name != "" {
		t = append(t, apitypes.Type{Name: "name", Type: "string"})
	}
	if d.Version != "" {
		t = append(t, apitypes.Type{Name: "version", Type: "string"})
	}
	if d.ChainId != nil {
		t = append(t, apitypes.Type{Name: "chainId", Type: "uint256"})
	}
	if d.VerifyingContract != "" {
		t = append(t, apitypes.Type{Name: "verifyingContract", Type: "address"})
	}
	if d.Salt != "" {
		t = append(t, apitypes.Type{Name: "salt", Type: "bytes32"})
	}
	return t
}

// devTransaction answers eth_sendTransaction (the hash once durable, as
// eth_sendRawTransaction) and eth_signTransaction (the raw signed
// transaction, not sent). The dev account's sends run one at a time, each
// from reading the nonce until it is durable, so a client may send several
// without waiting, as anvil's pool allows: each gets the next nonce.
func (c *call) devTransaction(dst []byte) ([]byte, *jsonrpc.Error) {
	obj := c.req.Param(0)
	if obj == nil || obj.Type() != fastjson.TypeObject {
		return dst, errTxObject
	}
	d := devAccts()
	k := 0 // anvil: no from, the first account
	if from := obj.Get("from"); from != nil && from.Type() != fastjson.TypeNull {
		a, err := jsonrpc.ParseAddress(from)
		if err != nil {
			return dst, err
		}
		if k, err = d.signer(core.Address(a)); err != nil {
			return dst, err
		}
	}
	send := string(c.req.Method) == "eth_sendTransaction"
	if send {
		c.s.devSend[k].Lock()
		defer c.s.devSend[k].Unlock()
	}
	txdata, chain, err := c.fillTx(obj, d.addrs[k])
	if err != nil {
		return dst, err
	}
	tx, e := types.SignNewTx(d.keys[k], types.LatestSignerForChainID(chain), txdata)
	if e != nil {
		return dst, internalError(e)
	}
	if !send {
		raw, e := tx.MarshalBinary()
		if e != nil {
			return dst, internalError(e)
		}
		return jsonrpc.AppendData(dst, raw), nil
	}
	ct, err := toCoreTx(tx, d.addrs[k])
	if err != nil {
		return dst, err
	}
	return c.send(dst, &ct, 0, false)
}

// fillTx builds the transaction obj describes, filling what it leaves out
// as anvil does (docs/signing.md): the type from the fee fields given
// (gasPrice: legacy, or EIP-2930 with an access list; otherwise EIP-1559),
// the nonce the account's next, gas 21000 (what every transaction uses),
// gasPrice or maxFeePerGas the base fee (plus the tip, so a tip alone is
// not above the cap), maxPriorityFeePerGas 0, the chain id the node's. It
// returns the chain id to sign for with the transaction.
func (c *call) fillTx(obj *fastjson.Value, from core.Address) (types.TxData, *big.Int, *jsonrpc.Error) {
	var to *common.Address
	if v := obj.Get("to"); v != nil && v.Type() != fastjson.TypeNull {
		a, err := jsonrpc.ParseAddress(v)
		if err != nil {
			return nil, nil, err
		}
		to = (*common.Address)(&a)
	}
	data, err := txInput(obj)
	if err != nil {
		return nil, nil, err
	}
	n := c.s.node
	nonce, gas, chainID := n.Nonce(from), uint64(core.TxGas), n.ChainID()
	for _, f := range []struct {
		name string
		dst  *uint64
	}{{"nonce", &nonce}, {"gas", &gas}, {"chainId", &chainID}} {
		if v := obj.Get(f.name); v != nil {
			if *f.dst, err = jsonrpc.ParseQuantity(v); err != nil {
				return nil, nil, err
			}
		}
	}
	var value, gasPrice, feeCap, tip *uint256.Int
	for _, f := range []struct {
		name string
		dst  **uint256.Int
	}{{"value", &value}, {"gasPrice", &gasPrice}, {"maxFeePerGas", &feeCap}, {"maxPriorityFeePerGas", &tip}} {
		if v := obj.Get(f.name); v != nil && v.Type() != fastjson.TypeNull {
			u, err := jsonrpc.ParseU256(v)
			if err != nil {
				return nil, nil, err
			}
			*f.dst = &u
		}
	}
	accessList, err := parseAccessList(obj.Get("accessList"))
	if err != nil {
		return nil, nil, err
	}
	dynamic := feeCap != nil || tip != nil
	if gasPrice != nil && dynamic {
		return nil, nil, errTxFees
	}
	typ := uint64(types.DynamicFeeTxType)
	switch v := obj.Get("type"); {
	case v != nil:
		if typ, err = jsonrpc.ParseQuantity(v); err != nil {
			return nil, nil, err
		}
		if typ > types.DynamicFeeTxType || typ != types.DynamicFeeTxType && dynamic || typ == types.DynamicFeeTxType && gasPrice != nil {
			return nil, nil, errTxType
		}
	case gasPrice != nil && accessList != nil:
		typ = types.AccessListTxType
	case gasPrice != nil:
		typ = types.LegacyTxType
	}
	if typ == types.LegacyTxType && accessList != nil {
		return nil, nil, errTxType
	}
	baseFee := n.BaseFee()
	if gasPrice == nil {
		gasPrice = &baseFee
	}
	if tip == nil {
		tip = new(uint256.Int)
	}
	if feeCap == nil {
		feeCap = new(uint256.Int).Add(&baseFee, tip)
	}
	if value == nil {
		value = new(uint256.Int)
	}
	chain := new(big.Int).SetUint64(chainID)
	switch typ {
	case types.LegacyTxType:
		return &types.LegacyTx{Nonce: nonce, GasPrice: gasPrice.ToBig(), Gas: gas, To: to, Value: value.ToBig(), Data: data}, chain, nil
	case types.AccessListTxType:
		return &types.AccessListTx{ChainID: chain, Nonce: nonce, GasPrice: gasPrice.ToBig(), Gas: gas, To: to,
			Value: value.ToBig(), Data: data, AccessList: accessList}, chain, nil
	}
	return &types.DynamicFeeTx{ChainID: chain, Nonce: nonce, GasTipCap: tip.ToBig(), GasFeeCap: feeCap.ToBig(), Gas: gas,
		To: to, Value: value.ToBig(), Data: data, AccessList: accessList}, chain, nil
}

// txInput reads the call data: "input" (go-ethereum's name) or "data"; both
// set must agree, as go-ethereum requires.
func txInput(obj *fastjson.Value) ([]byte, *jsonrpc.Error) {
	var out []byte
	for i, name := range [...]string{"input", "data"} {
		v := obj.Get(name)
		if v == nil || v.Type() == fastjson.TypeNull {
			continue
		}
		b, err := jsonrpc.ParseData(nil, v)
		switch {
		case err != nil:
			return nil, err
		case len(b) > ethtx.RawSizeMax:
			return nil, errTxDataSize
		case i == 1 && out != nil && string(out) != string(b):
			return nil, errTxData
		case out == nil:
			out = b
		}
	}
	return out, nil
}

// parseAccessList reads an EIP-2930 access list; nil when absent.
func parseAccessList(v *fastjson.Value) (types.AccessList, *jsonrpc.Error) {
	if v == nil || v.Type() == fastjson.TypeNull {
		return nil, nil
	}
	items, e := v.Array()
	if e != nil {
		return nil, errAccessList
	}
	out := make(types.AccessList, 0, len(items))
	for _, it := range items {
		addr, keysV := it.Get("address"), it.Get("storageKeys")
		if addr == nil {
			return nil, errAccessList
		}
		a, err := jsonrpc.ParseAddress(addr)
		if err != nil {
			return nil, errAccessList
		}
		t := types.AccessTuple{Address: a}
		var keys []*fastjson.Value
		if keysV != nil {
			if keys, e = keysV.Array(); e != nil {
				return nil, errAccessList
			}
		}
		for _, k := range keys {
			h, err := jsonrpc.ParseHash(k)
			if err != nil {
				return nil, errAccessList
			}
			t.StorageKeys = append(t.StorageKeys, h)
		}
		out = append(out, t)
	}
	return out, nil
}
