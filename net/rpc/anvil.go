package rpc

import (
	"errors"
	"math"
	"strconv"

	"github.com/ledgervenue/node/codec/jsonrpc"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
	"github.com/valyala/fastjson"
)

// The anvil-compatible controls, with anvil's names, parameters and result
// shapes (docs/anvil.md has the table of every anvil method and ours). They
// need controlAllowed: no token under --dev, the admin token otherwise.
// Those that change state are logged inputs (net/node/controls.go) and
// answer once durable, so they run on a worker (isWrite).

// MineBlocksMax bounds anvil_mine's block count: each block is one or two
// logged inputs, and the call waits for all of them.
const MineBlocksMax = 10_000

var (
	errNoEVM = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found",
		Data: []byte(`"ledgerd runs no EVM bytecode: there is no code, storage or impersonated sender to set (docs/anvil.md)"`)}
	errAutomineOff = anvilInvalid("automine cannot be turned off: ledgerd applies every transaction on arrival " +
		"and every orderbook intent at its auction tick (evm_mine runs the next tick now)")
	errMineCount    = anvilInvalid("anvil_mine: at most " + strconv.Itoa(MineBlocksMax) + " blocks")
	errTimeJump     = anvilInvalid(node.ErrTimeJump.Error())
	errTimestampBig = anvilInvalid("timestamp out of range")
)

// isControl reports whether method is one of the controls anvilCall runs.
func isControl(method []byte) bool {
	switch string(method) {
	case "evm_increaseTime", "anvil_increaseTime", "evm_setNextBlockTimestamp", "anvil_setNextBlockTimestamp",
		"evm_setTime", "anvil_setTime", "evm_mine", "anvil_mine", "hardhat_mine", "anvil_setBalance", "hardhat_setBalance",
		"anvil_setNonce", "hardhat_setNonce", "evm_setAccountNonce",
		"anvil_setNextBlockBaseFeePerGas", "hardhat_setNextBlockBaseFeePerGas":
		return true
	}
	return isControlRead(method)
}

// isControlRead reports the controls that change nothing: they answer on
// the event loop.
func isControlRead(method []byte) bool {
	switch string(method) {
	case "anvil_nodeInfo", "anvil_getAutomine", "hardhat_getAutomine", "evm_setAutomine", "anvil_setAutomine":
		return true
	}
	return false
}

// isNoEVMMethod reports the anvil methods that need EVM bytecode or an
// unsigned sender: ledgerd answers them -32601 with a reason.
func isNoEVMMethod(m string) bool {
	switch m {
	case "anvil_setCode", "hardhat_setCode", "anvil_setStorageAt", "hardhat_setStorageAt",
		"anvil_impersonateAccount", "hardhat_impersonateAccount", "anvil_stopImpersonatingAccount",
		"hardhat_stopImpersonatingAccount", "anvil_autoImpersonateAccount", "hardhat_autoImpersonateAccount",
		"anvil_impersonateSignature", "eth_sendUnsignedTransaction", "anvil_dealERC20", "anvil_setERC20Allowance":
		return true
	}
	return false
}

// anvilCall runs an authorized control.
func (c *call) anvilCall(dst []byte) ([]byte, *jsonrpc.Error) {
	n := c.s.node
	switch m := string(c.req.Method); m {
	case "evm_increaseTime", "anvil_increaseTime":
		secs, err := c.quantity(0)
		if err != nil {
			return dst, err
		}
		if secs > node.TimeJumpMaxUs/1_000_000 {
			return dst, errTimeJump
		}
		off, durable, nerr := n.IncreaseTime(int64(secs) * 1_000_000)
		if err := c.waitControl(durable, nerr); err != nil {
			return dst, err
		}
		// anvil answers the clock's whole offset in seconds, a JSON number.
		return strconv.AppendInt(dst, off/1_000_000, 10), nil
	case "evm_setNextBlockTimestamp", "anvil_setNextBlockTimestamp":
		us, err := c.timestamp(0)
		if err != nil {
			return dst, err
		}
		durable, nerr := n.SetTime(us)
		if err := c.waitControl(durable, nerr); err != nil {
			return dst, err
		}
		return append(dst, "null"...), nil
	case "evm_setTime", "anvil_setTime":
		// anvil may move its clock back; this node's time never goes
		// backwards, so only a time at or after now is accepted. The
		// answer is anvil's: the seconds from the old time to the new.
		us, err := c.timestamp(0)
		if err != nil {
			return dst, err
		}
		before := n.Clock().NowMicros()
		durable, nerr := n.SetTime(us)
		if err := c.waitControl(durable, nerr); err != nil {
			return dst, err
		}
		return strconv.AppendInt(dst, (us-before)/1_000_000, 10), nil
	case "evm_mine":
		return c.evmMine(dst)
	case "anvil_mine", "hardhat_mine":
		return c.anvilMine(dst)
	case "anvil_setBalance", "hardhat_setBalance":
		a, err := c.address(0)
		if err != nil {
			return dst, err
		}
		wei, err := jsonrpc.ParseU256(c.req.Param(1))
		if err != nil {
			return dst, err
		}
		return c.nullOnceDurable(dst, func(done func(error)) error { return n.SetBalance(a, &wei, done) })
	case "anvil_setNonce", "hardhat_setNonce", "evm_setAccountNonce":
		a, err := c.address(0)
		if err != nil {
			return dst, err
		}
		nonce, err := jsonrpc.ParseQuantity(c.req.Param(1))
		if err != nil {
			return dst, err
		}
		return c.nullOnceDurable(dst, func(done func(error)) error { return n.SetNonce(a, nonce, done) })
	case "anvil_setNextBlockBaseFeePerGas", "hardhat_setNextBlockBaseFeePerGas":
		fee, err := jsonrpc.ParseU256(c.req.Param(0))
		if err != nil {
			return dst, err
		}
		return c.nullOnceDurable(dst, func(done func(error)) error { return n.SetBaseFee(&fee, done) })
	case "anvil_getAutomine", "hardhat_getAutomine":
		return append(dst, "true"...), nil
	case "evm_setAutomine", "anvil_setAutomine":
		v := c.req.Param(0)
		if v == nil || v.Type() != fastjson.TypeTrue && v.Type() != fastjson.TypeFalse {
			return dst, anvilInvalid(m + " needs a boolean")
		}
		if v.Type() == fastjson.TypeFalse {
			return dst, errAutomineOff
		}
		return append(dst, "null"...), nil
	}
	return c.nodeInfo(dst), nil // anvil_nodeInfo
}

// evmMine runs the next auction tick now (node.Mine); with a timestamp
// (a number, or anvil's {timestamp, blocks}) the time first moves there.
// It answers "0x0", as anvil does.
func (c *call) evmMine(dst []byte) ([]byte, *jsonrpc.Error) {
	n := c.s.node
	blocks := uint64(1)
	if v := c.req.Param(0); v != nil && v.Type() != fastjson.TypeNull {
		ts := v
		if v.Type() == fastjson.TypeObject {
			ts = v.Get("timestamp")
			if b := v.Get("blocks"); b != nil {
				var err *jsonrpc.Error
				if blocks, err = jsonrpc.ParseQuantity(b); err != nil {
					return dst, err
				}
			}
		}
		if ts != nil && ts.Type() != fastjson.TypeNull {
			us, err := secondsToMicros(ts)
			if err != nil {
				return dst, err
			}
			if _, nerr := n.SetTime(us); nerr != nil {
				return dst, controlError(nerr)
			}
		}
	}
	if err := c.mineBlocks(blocks, 0); err != nil {
		return dst, err
	}
	return append(dst, `"0x0"`...), nil
}

// anvilMine mines [count?, interval?]: count blocks (1 by default), each
// interval seconds after the previous (1 by default, as in anvil); an
// interval of 0 runs the next auction tick each time, as evm_mine.
func (c *call) anvilMine(dst []byte) ([]byte, *jsonrpc.Error) {
	count, interval := uint64(1), uint64(1)
	for i, p := range [...]*uint64{&count, &interval} {
		if v := c.req.Param(i); v != nil && v.Type() != fastjson.TypeNull {
			var err *jsonrpc.Error
			if *p, err = jsonrpc.ParseQuantity(v); err != nil {
				return dst, err
			}
		}
	}
	if err := c.mineBlocks(count, interval); err != nil {
		return dst, err
	}
	return append(dst, "null"...), nil
}

// mineBlocks mines count blocks, intervalSecs apart (0: each at the next
// auction tick: node.Mine), and waits until the last is durable and
// past-perfect.
func (c *call) mineBlocks(count, intervalSecs uint64) *jsonrpc.Error {
	if count > MineBlocksMax {
		return errMineCount
	}
	if intervalSecs > node.TimeJumpMaxUs/1_000_000/max(count, 1) {
		return errTimeJump
	}
	settled, err := c.s.node.Mine(int(count), int64(intervalSecs)*1_000_000)
	return c.waitControl(settled, err)
}

// nodeInfo answers anvil_nodeInfo in anvil's shape: the head block is the
// past-perfect time's (eth_blockNumber; its hash is the zero hash of
// eth_getBlockByNumber), its timestamp in seconds; the environment is the
// fee model's constants; no fork, no hard fork (no EVM), transactions in
// arrival order.
func (c *call) nodeInfo(dst []byte) []byte {
	n := c.s.node
	fee := n.BaseFee()
	dst = jsonrpc.AppendQuantity(append(dst, `{"currentBlockNumber":`...), c.headNumber())
	dst = strconv.AppendInt(append(dst, `,"currentBlockTimestamp":`...), n.PastPerfectTime()/1_000_000, 10)
	dst = jsonrpc.AppendData(append(dst, `,"currentBlockHash":`...), zeroHash[:])
	dst = append(dst, `,"hardFork":"none","transactionOrder":"fifo","environment":{"baseFee":`...)
	dst = jsonrpc.AppendQuantityU256(dst, &fee)
	dst = strconv.AppendUint(append(dst, `,"chainId":`...), n.ChainID(), 10)
	dst = jsonrpc.AppendQuantity(append(dst, `,"gasLimit":`...), core.TxGasLimitMax)
	dst = jsonrpc.AppendQuantityU256(append(dst, `,"gasPrice":`...), &fee)
	return append(dst, `},"forkConfig":{"forkUrl":null,"forkBlockNumber":null,"forkRetryBackoff":null}}`...)
}

// quantity parses array param i as a 64-bit quantity.
func (c *call) quantity(i int) (uint64, *jsonrpc.Error) {
	v := c.req.Param(i)
	if v == nil {
		return 0, missingParam(i)
	}
	return jsonrpc.ParseQuantity(v)
}

// timestamp parses array param i as a Unix time in seconds, in µs.
func (c *call) timestamp(i int) (int64, *jsonrpc.Error) {
	v := c.req.Param(i)
	if v == nil {
		return 0, missingParam(i)
	}
	return secondsToMicros(v)
}

func secondsToMicros(v *fastjson.Value) (int64, *jsonrpc.Error) {
	s, err := jsonrpc.ParseQuantity(v)
	if err != nil {
		return 0, err
	}
	if s > math.MaxInt64/1_000_000 {
		return 0, errTimestampBig
	}
	return int64(s) * 1_000_000, nil
}

// nullOnceDurable runs a control that reports its durability to done,
// and answers null once it is durable (or the control's refusal).
func (c *call) nullOnceDurable(dst []byte, submit func(done func(error)) error) ([]byte, *jsonrpc.Error) {
	if err := c.onceDurable(submit); err != nil {
		return dst, err
	}
	return append(dst, "null"...), nil
}

// onceDurable runs a control that reports its durability to done and
// waits until it is durable: nil, or its refusal or the wait's error.
func (c *call) onceDurable(submit func(done func(error)) error) *jsonrpc.Error {
	done := make(chan error, 1)
	return c.waitControl(done, submit(func(err error) { done <- err }))
}

// waitControl answers a control: its refusal (err), else once durable.
func (c *call) waitControl(durable <-chan error, err error) *jsonrpc.Error {
	if err != nil {
		return controlError(err)
	}
	return waitDurable(durable)
}

// controlError maps a control's refusal to its answer: -32602 with the
// reason for what the caller asked wrongly (a time in the past, too far a
// jump, a nonce backwards), -32603 for the node's own state.
func controlError(err error) *jsonrpc.Error {
	var past *node.TimeInPastError
	var refused *node.ControlRefusedError
	switch {
	case errors.As(err, &past), errors.As(err, &refused), errors.Is(err, node.ErrTimeJump):
		return anvilInvalid(err.Error())
	}
	return internalError(err)
}

// anvilInvalid is -32602 with the reason as the message, where anvil puts
// it (test suites match on it), rather than in data as the node's other
// methods do.
func anvilInvalid(reason string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: reason}
}
