package bridge

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// withdrawalID is the live network's withdrawal id of the orderbook's
// withdraw signer sent at nonce: keccak256(abi.encode(address, uint64,
// uint32 sequence 0)), with go-ethereum's ABI encoder.
func withdrawalID(t *testing.T, signer common.Address, nonce uint64) common.Hash {
	t.Helper()
	typ := func(s string) abi.Type {
		ty, err := abi.NewType(s, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return ty
	}
	enc, err := abi.Arguments{{Type: typ("address")}, {Type: typ("uint64")}, {Type: typ("uint32")}}.Pack(signer, nonce, uint32(0))
	if err != nil {
		t.Fatal(err)
	}
	return crypto.Keccak256Hash(enc)
}

// TestClobWithdrawLoop is TestBridgeLoop's way out through the orderbook,
// as the live SDK takes it: USD deposited on anvil, withdraw(token,
// recipient, amount, deadline) sent to the orderbook (not the Bridge), the
// withdrawal followed by its withdrawal id (not the tx hash) to a claim
// proof, which pays on anvil once.
func TestClobWithdrawLoop(t *testing.T) {
	b, l := depositedLoop(t, 2)
	trader := node.DevKey(2)
	traderAddr := common.Address(node.DevAddress(2))

	wabi, err := abi.JSON(strings.NewReader(withdrawABI))
	if err != nil {
		t.Fatal(err)
	}
	orderbook := bind.NewBoundContract(common.Address(core.OrderbookAddress), wabi, l.Client, l.Client, l.Client)
	recipient := common.Address{0xc1, 19: 0x02}
	amount18 := new(big.Int).Mul(big.NewInt(40), big.NewInt(1e18))
	deadline := big.NewInt((time.Now().UnixMicro()/500_000 + 10) * 500_000)
	tx, err := orderbook.Transact(transactor(t, trader, big.NewInt(ledgerChainID)), "withdraw", common.Address(core.NativeToken), recipient, amount18, deadline)
	if err != nil {
		t.Fatalf("withdraw: %v (%s)", err, revertReason(err))
	}
	id := withdrawalID(t, traderAddr, tx.Nonce())
	st := b.claimUSD(t, l, id, recipient, big.NewInt(40_000_000))
	if st.Withdrawal.WithdrawalID != id || st.Withdrawal.TxHash != tx.Hash() || id == tx.Hash() {
		t.Fatalf("row id %s tx %s, want id %s and tx %s", st.Withdrawal.WithdrawalID.Hex(), st.Withdrawal.TxHash.Hex(), id.Hex(), tx.Hash().Hex())
	}
}
