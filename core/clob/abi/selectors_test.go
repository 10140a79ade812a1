package abi

import (
	"encoding/binary"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

// TestSelectors recomputes every selector from its canonical signature.
func TestSelectors(t *testing.T) {
	f := func(signature string, want uint32) {
		t.Helper()
		got := binary.BigEndian.Uint32(crypto.Keccak256([]byte(signature))[:4])
		if got != want {
			t.Errorf("%s: selector 0x%08x, constant 0x%08x", signature, got, want)
		}
	}
	f("submitOrder(bytes32,int256,uint256,uint8,uint128,uint128,uint8)", selSubmitOrder)
	f("submitOrder(bytes32,int256,uint256,uint8,uint128,uint128,bool,bool)", selSubmitOrderDeprecated)
	f("cancel(bytes32,bytes32,uint128)", selCancel)
	f("update(bytes32,bytes32,uint256,uint256,address,uint128)", selUpdate)
	f("transfer(address,address,uint256,uint128)", selTransfer)
	f("deposit(address,address,uint256,uint128)", selDeposit)
	f("submitBatch(bytes[])", selSubmitBatch)
	f("delegated(address,uint64,bytes,bytes)", selDelegated)
	f("submitTrigger(bytes32,int256,uint256,uint256,uint8,uint8,uint128,uint128,bool,bool)", selSubmitTrigger)
	f("cancelTrigger(bytes32,bytes32,uint128)", selCancelTrigger)
	f("updateTrigger(bytes32,bytes32,int256,uint256,uint256,uint128)", selUpdateTrigger)
	f("withdraw(address,address,uint256,uint128)", selWithdraw)
}
