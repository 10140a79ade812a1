package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	gethrpc "github.com/ethereum/go-ethereum/rpc"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// withdrawABI is the ledger Bridge application's withdraw (docs/bridge.md §2).
const withdrawABI = `[{"type":"function","name":"withdraw","stateMutability":"nonpayable","outputs":[],"inputs":[
 {"name":"token","type":"address"},{"name":"recipient","type":"address"},{"name":"amount","type":"uint256"},{"name":"deadline","type":"uint128"}]}]`

// withdrawalStatus is GET /v1/bridge/withdrawals/by-id/{tx_hash or withdrawal_id} (docs/bridge.md §4).
type withdrawalStatus struct {
	Withdrawal struct {
		WithdrawalID common.Hash    `json:"withdrawal_id"`
		TxHash       common.Hash    `json:"tx_hash"`
		To           common.Address `json:"to"`
		Token        common.Address `json:"token"`
		Amount       *hexutil.Big   `json:"amount"`
		Error        string         `json:"error"`
	} `json:"withdrawal"`
	Status string `json:"status"`
	Proof  *struct {
		Amount      *hexutil.Big   `json:"amount"`
		To          common.Address `json:"to"`
		Proof       byteArray      `json:"proof"`
		AuxTxSuffix byteArray      `json:"aux_tx_suffix"`
		ClaimHash   common.Hash    `json:"claim_hash"`
	} `json:"proof"`
}

// byteArray is bytes written as a JSON array of numbers.
type byteArray []byte

func (b *byteArray) UnmarshalJSON(data []byte) error {
	var ints []int
	if err := json.Unmarshal(data, &ints); err != nil {
		return err
	}
	*b = make([]byte, len(ints))
	for i, v := range ints {
		if v < 0 || v > 255 {
			return fmt.Errorf("byte %d out of range: %d", i, v)
		}
		(*b)[i] = byte(v)
	}
	return nil
}

// revertReason is the Error(string) reason an execution-reverted error
// carries, or err's text.
func revertReason(err error) string {
	var de gethrpc.DataError
	if errors.As(err, &de) {
		if s, ok := de.ErrorData().(string); ok {
			if data, derr := hexutil.Decode(s); derr == nil {
				if reason, uerr := abi.UnpackRevert(data); uerr == nil {
					return reason
				}
			}
		}
	}
	return err.Error()
}

// TestBridgeLoop is make e2e-bridge: USD deposited on anvil, a trade on the
// ledger, a withdrawal of USD there, its claim proof from REST claimed on
// anvil, and a second claim refused.
func TestBridgeLoop(t *testing.T) {
	// 1. Deposit 100 USD on the bridged chain; the ledger credits 100e18.
	b, l := depositedLoop(t, 1)
	trader := node.DevKey(1)
	traderAddr := common.Address(node.DevAddress(1))

	// 2. Trade: dev account (0) buys 1 WETH at 2000 USD from the trader.
	chainID := big.NewInt(ledgerChainID)
	oneWETH := big.NewInt(1e18)
	price := new(big.Int).Mul(big.NewInt(2000), oneWETH)
	deadline := big.NewInt((time.Now().UnixMicro()/500_000 + 4) * 500_000)
	ttl := big.NewInt(60_000_000)
	market := common.HexToHash("0x01") // WETH/USD
	wethBefore := l.balance(t, node.DevWETH, traderAddr)
	_, err := l.book.Transact(transactor(t, node.DevKey(0), chainID), "submitOrder", market, oneWETH, price, uint8(0), deadline, ttl, uint8(0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.book.Transact(transactor(t, trader, chainID), "submitOrder", market, new(big.Int).Neg(oneWETH), price, uint8(0), deadline, ttl, uint8(0))
	if err != nil {
		t.Fatal(err)
	}
	l.waitBalance(t, node.DevWETH, traderAddr, new(big.Int).Sub(wethBefore, oneWETH))

	// 3. Withdraw 50 USD to a fresh address on the bridged chain.
	recipient := common.Address{0xc1, 19: 0x01}
	amount18 := new(big.Int).Mul(big.NewInt(50), big.NewInt(1e18))
	wabi, err := abi.JSON(strings.NewReader(withdrawABI))
	if err != nil {
		t.Fatal(err)
	}
	bridgeApp := bind.NewBoundContract(common.Address(core.BridgeAddress), wabi, l.Client, l.Client, l.Client)
	cashBefore := l.balance(t, core.NativeToken, traderAddr)
	wdeadline := big.NewInt((time.Now().UnixMicro()/500_000 + 10) * 500_000)
	tx, err := bridgeApp.Transact(transactor(t, trader, chainID), "withdraw", common.Address(core.NativeToken), recipient, amount18, wdeadline)
	if err != nil {
		t.Fatalf("withdraw: %v (%s)", err, revertReason(err))
	}
	l.waitBalance(t, core.NativeToken, traderAddr, new(big.Int).Sub(cashBefore, amount18))

	// 4. and 5.
	b.claimUSD(t, l, tx.Hash(), recipient, big.NewInt(50_000_000))
}

// depositedLoop starts anvil with the bridge deployed and ledgerd on it,
// and deposits 100 USD on the bridged chain from dev account who to its
// ledger account, which is credited 100e18.
func depositedLoop(t *testing.T, who int) (*bridged, *ledger) {
	t.Helper()
	tools(t)
	a := startAnvil(t)
	b := deploy(t, a)
	// --compat: bind reads the head block, which go-ethereum decodes only in
	// the compat shapes (README, "Client compatibility").
	l := startLedgerd(t, t.TempDir(), "--compat", "--l1", a.URL)
	addr := common.Address(node.DevAddress(who))
	before := l.balance(t, core.NativeToken, addr)
	b.deposit(t, node.DevKey(who), 0, big.NewInt(100_000_000), addr)
	l.waitBalance(t, core.NativeToken, addr, new(big.Int).Add(before, big.NewInt(0).Mul(big.NewInt(100), big.NewInt(1e18))))
	return b, l
}

// claimUSD waits until the withdrawal the ledger knows as key (its tx hash
// or withdrawal id) is claimable, checks its proof (amount units of USD,
// 6 decimals, to recipient) against the contract's claim hash, claims it on
// the bridged chain with another key than the withdrawer's, and checks that
// the recipient is paid once: a second claim reverts. It returns the
// withdrawal's status.
func (b *bridged) claimUSD(t *testing.T, l *ledger, key common.Hash, recipient common.Address, amount *big.Int) withdrawalStatus {
	t.Helper()
	// Wait for the claim proof.
	var st withdrawalStatus
	waitFor(t, "the withdrawal to be claimable", func() bool {
		st = l.withdrawal(t, key)
		if st.Status == "refused" {
			t.Fatalf("the withdrawal was refused: %q", st.Withdrawal.Error)
		}
		return st.Status == "claimable"
	})
	p := st.Proof
	if p == nil {
		t.Fatal("claimable without a proof")
	}
	if p.Amount.ToInt().Cmp(amount) != 0 || p.To != recipient || st.Withdrawal.Token != common.Address(core.NativeToken) {
		t.Fatalf("proof for %s to %s of %s, want %s to %s of the native token", p.Amount, p.To.Hex(), st.Withdrawal.Token.Hex(), amount, recipient.Hex())
	}
	usd := b.Tokens[0]
	var onChain []any
	if err := b.Bridge.Call(nil, &onChain, "claimHash", usd.Address(), amount, recipient, []byte(p.AuxTxSuffix)); err != nil {
		t.Fatal(err)
	}
	if got := common.Hash(onChain[0].([32]byte)); got != p.ClaimHash {
		t.Fatalf("the contract's claim hash %s, the node's %s", got.Hex(), p.ClaimHash.Hex())
	}

	// Anyone claims on the bridged chain; the recipient is paid once.
	claimer := transactor(t, node.DevKey(3), b.ChainID)
	tx, err := b.Bridge.Transact(claimer, "claim", usd.Address(), amount, recipient, []byte(p.Proof), []byte(p.AuxTxSuffix))
	mined(t, b.Client, tx, err)
	if got := balanceOf(t, usd, recipient); got.Cmp(amount) != 0 {
		t.Fatalf("the recipient holds %s USD units after the claim, want %s", got, amount)
	}
	if got := b.callClaim(t, usd.Address(), amount, recipient, p.Proof, p.AuxTxSuffix); got != "RequestAlreadyProcessed" {
		t.Fatalf("a second claim: %q, want RequestAlreadyProcessed", got)
	}
	return st
}

// withdrawal is GET /v1/bridge/withdrawals/by-id/{hash}, a tx hash or a
// withdrawal id; a 404 (no outcome yet) is the zero status.
func (l *ledger) withdrawal(t *testing.T, hash common.Hash) withdrawalStatus {
	t.Helper()
	resp, err := http.Get(l.HTTP + "/v1/bridge/withdrawals/by-id/" + hash.Hex())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var st withdrawalStatus
	switch resp.StatusCode {
	case http.StatusNotFound:
	case http.StatusOK:
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatalf("GET by-id: %v in %s", err, body)
		}
	default:
		t.Fatalf("GET by-id: %s %s", resp.Status, body)
	}
	return st
}
