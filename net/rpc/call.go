package rpc

import (
	"encoding/hex"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/valyala/fastjson"
)

// Orderbook view selectors: the first four bytes of keccak256 of
// "balanceOf(address,address)" and "withdrawableBalance(address,address)".
var (
	selBalanceOf           = core.Selector("balanceOf(address,address)")
	selWithdrawableBalance = core.Selector("withdrawableBalance(address,address)")
)

var errBadCall = jsonrpc.InvalidParams("eth_call needs a call object with a \"to\" address")

// ethCall executes a read-only call. Only the orderbook's balance views
// exist; other enshrined apps revert; any other address has no code, so the
// call returns empty data as on Ethereum.
func (c *call) ethCall(dst []byte) ([]byte, *jsonrpc.Error) {
	obj := c.req.Param(0)
	if obj == nil || obj.Type() != fastjson.TypeObject || obj.Get("to") == nil {
		return dst, errBadCall
	}
	to, err := jsonrpc.ParseAddress(obj.Get("to"))
	if err != nil {
		return dst, err
	}
	input := obj.Get("input") // go-ethereum's name; "data" is the older one
	if input == nil {
		input = obj.Get("data")
	}
	var data []byte
	if input != nil {
		if data, err = jsonrpc.ParseData(c.sc.buf[:0], input); err != nil {
			return dst, err
		}
		c.sc.buf = data[:0]
	}
	switch core.Address(to) {
	case core.OrderbookAddress:
		return c.orderbookView(dst, data)
	case core.BridgeAddress, core.RecoveryAddress, core.MintAddress:
		return dst, revertError(appReason(core.Address(to)) + "no view function 0x" + selectorHex(data))
	}
	return append(dst, `"0x"`...), nil
}

func (c *call) orderbookView(dst []byte, data []byte) ([]byte, *jsonrpc.Error) {
	if len(data) < 4 {
		return dst, revertError("CLOB validation failed: call data shorter than a selector")
	}
	sel := [4]byte(data[:4])
	if sel != selBalanceOf && sel != selWithdrawableBalance {
		return dst, revertError("CLOB validation failed: unknown function selector 0x" + selectorHex(data))
	}
	token, okToken := abiAddress(data[4:])
	account, okAccount := abiAddress(data[min(len(data), 36):])
	if !okToken || !okAccount || len(data) != 4+64 {
		return dst, revertError("CLOB validation failed: malformed arguments, want (address token, address account)")
	}
	// balanceOf is cash minus debt, an int256 (two's complement when a perp
	// loss left debt); withdrawableBalance leaves out what orders and
	// pending transfers lock and, with perp positions, their initial margin.
	var v uint256.Int
	if sel == selWithdrawableBalance {
		v = c.s.node.Withdrawable(token, account)
	} else if b := c.s.node.BalanceOf(token, account); b.Neg {
		v.Neg(&b.Abs)
	} else {
		v = b.Abs
	}
	word := v.Bytes32()
	return jsonrpc.AppendData(dst, word[:]), nil
}

// abiAddress decodes an ABI word holding an address (12 zero bytes first).
func abiAddress(word []byte) (core.Address, bool) {
	if len(word) < 32 {
		return core.Address{}, false
	}
	for _, b := range word[:12] {
		if b != 0 {
			return core.Address{}, false
		}
	}
	return core.Address(word[12:32]), true
}

func selectorHex(data []byte) string { return hex.EncodeToString(data[:min(len(data), 4)]) }

// parseAmount reads a u256 parameter.
func parseAmount(v *fastjson.Value) (uint256.Int, *jsonrpc.Error) {
	if v == nil {
		return uint256.Int{}, jsonrpc.InvalidParams("missing amount")
	}
	return jsonrpc.ParseU256(v)
}
