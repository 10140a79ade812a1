package rpc_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// The orderbook's withdraw (docs/bridge.md, "Two paths") as the live SDK
// sends it: withdraw(token, recipient, amount, deadline) to the orderbook,
// signed and sent with eth_sendRawTransaction (go-ethereum), gas 1 000 000
// and no tip, value 0; its outcome keyed by withdrawal_id =
// keccak256(abi.encode(signer, nonce, 0)) (orderID here, go-ethereum's ABI
// encoder), read back over REST and svc_withdrawals.

// clobRow is a WithdrawalUpdate as the live SDK reads it.
type clobRow struct {
	WithdrawalID common.Hash    `json:"withdrawal_id"`
	TxHash       common.Hash    `json:"tx_hash"`
	Withdrawer   common.Address `json:"withdrawer"`
	To           common.Address `json:"to"`
	Token        common.Address `json:"token"`
	Amount       *hexutil.Big   `json:"amount"`
	Error        *string        `json:"error"`
	TimestampUs  int64          `json:"timestamp_us"`
}

func clobRows(t *testing.T, body []byte) []clobRow {
	t.Helper()
	var rows []clobRow
	if err := json.Unmarshal(body, &rows); err != nil {
		t.Fatalf("rows %s: %v", body, err)
	}
	return rows
}

// clobWithdrawer is a fresh account (no dev funds) that withdraws through
// the orderbook.
type clobWithdrawer struct {
	key   *ecdsa.PrivateKey
	addr  common.Address
	nonce uint64
}

func newClobWithdrawer(t *testing.T, seed string) *clobWithdrawer {
	t.Helper()
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte(seed)))
	if err != nil {
		t.Fatal(err)
	}
	return &clobWithdrawer{key: key, addr: crypto.PubkeyToAddress(key.PublicKey)}
}

// sign signs withdraw(token, to, amount, deadline) to the orderbook at the
// next nonce, in the SDK's shape (buildClobWithdraw): gas 1 000 000, no
// tip, the base fee as fee cap, value.
func (w *clobWithdrawer) sign(t *testing.T, token, to common.Address, amount, deadline, value *big.Int) *types.Transaction {
	t.Helper()
	data, err := withdrawABI.Pack("withdraw", token, to, amount, deadline)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := types.SignNewTx(w.key, types.LatestSignerForChainID(big.NewInt(chainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chainID), Nonce: w.nonce, GasTipCap: new(big.Int), GasFeeCap: gwei, Gas: 1_000_000,
		To: &orderbookAddr, Data: data, Value: value})
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// send sends a withdrawal that must be admitted: status 1, no block until
// its batch, no fee. It returns the transaction and its withdrawal id.
func (w *clobWithdrawer) send(t *testing.T, tn *testNode, token, to common.Address, amount, deadline *big.Int) (*types.Transaction, common.Hash) {
	t.Helper()
	tx := w.sign(t, token, to, amount, deadline, new(big.Int))
	if err := tn.eth.SendTransaction(context.Background(), tx); err != nil {
		t.Fatalf("withdraw refused: %v (%v)", err, errorData(err))
	}
	id := orderID(w.addr, w.nonce, 0)
	w.nonce++
	if r := tn.waitReceipt(tx.Hash()); r.Status != 1 || r.BlockNumber != nil || r.EffectiveGasPrice.Sign() != 0 {
		t.Fatalf("admitted withdrawal's receipt: status %d block %v price %v", r.Status, r.BlockNumber, r.EffectiveGasPrice)
	}
	if id == tx.Hash() {
		t.Fatal("the withdrawal id is the tx hash")
	}
	return tx, id
}

// deposit credits amount of the native token to a (admin_deposit: what
// the bridged chain's deposit becomes).
func (tn *testNode) deposit(t *testing.T, a common.Address, amount *big.Int) {
	t.Helper()
	var res struct {
		TxHash common.Hash `json:"tx_hash"`
	}
	arg := map[string]any{"token": native, "to": a, "amount": hexutil.EncodeBig(amount)}
	if err := tn.admin.CallContext(context.Background(), &res, "admin_deposit", arg); err != nil {
		t.Fatal(err)
	}
	tn.waitReceipt(res.TxHash)
}

// wantClaimable checks both keys of a withdrawal: by-id with the
// withdrawal id and with the tx hash give the same claimable answer, whose
// proof verifies (its aux_tx_suffix is the tx hash), and
// svc_getBridgeClaimProof gives that proof by either key.
func wantClaimable(t *testing.T, tn *testNode, tx *types.Transaction, id common.Hash, to common.Address, claimUnits uint64) []byte {
	t.Helper()
	got, body := waitByID(t, tn, id, node.StatusClaimable)
	if byHash := restOK(t, tn, "/v1/bridge/withdrawals/by-id/"+tx.Hash().Hex()); !bytes.Equal(byHash, body) {
		t.Fatalf("by withdrawal id %s\nby tx hash %s", body, byHash)
	}
	verifyWireProof(t, got.Proof, tx.Hash(), core.Address(to), core.NativeToken, claimUnits)
	want, _ := json.Marshal(got.Proof)
	for _, key := range []common.Hash{id, tx.Hash()} {
		var proof map[string]json.RawMessage
		if err := tn.rpc.CallContext(context.Background(), &proof, "svc_getBridgeClaimProof", key); err != nil {
			t.Fatal(err)
		}
		if again, _ := json.Marshal(proof); !bytes.Equal(again, want) {
			t.Fatalf("svc_getBridgeClaimProof(%s) %s, by-id %s", key, again, want)
		}
	}
	var detail struct {
		Withdrawal json.RawMessage `json:"withdrawal"`
	}
	if err := json.Unmarshal(body, &detail); err != nil {
		t.Fatal(err)
	}
	return detail.Withdrawal
}

// TestClobWithdrawOverTheWire: a deposited account withdraws through the
// orderbook twice, the second time MAX (its whole withdrawable balance,
// nothing held back for gas) with the SDK's default far deadline. Each
// batch's outcome reaches a svc_withdrawals subscriber of the account and
// one of every account with its withdrawal_id, the same bytes as the REST
// listing; the two rows have distinct ids; by-id answers claimable with a
// verifying proof by withdrawal id and by tx hash alike; since_id takes a
// withdrawal id; the balance ends at zero.
func TestClobWithdrawOverTheWire(t *testing.T) {
	tn := bridgeNode(t)
	w := newClobWithdrawer(t, "clob withdraw e2e")
	tn.deposit(t, w.addr, eth(5))
	ws := tn.dialWS(t)
	mineCh, mineSub := tn.ethSubscribe(t, ws, "svc_withdrawals", map[string]any{"account": w.addr})
	allCh, allSub := tn.ethSubscribe(t, ws, "svc_withdrawals", map[string]any{})
	to := common.Address{0x70, 0xc1}

	first, firstID := w.send(t, tn, native, to, eth(2), tn.nextDeadline())
	if status, _, _ := restGet(t, tn, "GET", "/v1/bridge/withdrawals/by-id/"+firstID.Hex()); status != 404 {
		t.Fatalf("by withdrawal id before its batch: %d, want 404", status)
	}
	tn.tick(t)
	tick1 := tn.node.LastTickUs()
	mine1, all1 := recv(t, mineCh, mineSub), recv(t, allCh, allSub)
	if !bytes.Equal(mine1, all1) {
		t.Fatalf("account frame %s, all accounts %s", mine1, all1)
	}
	if rows := clobRows(t, mine1); len(rows) != 1 || rows[0].WithdrawalID != firstID || rows[0].TxHash != first.Hash() ||
		rows[0].Withdrawer != w.addr || rows[0].To != to || rows[0].Token != native || rows[0].Amount.ToInt().Cmp(eth(2)) != 0 ||
		rows[0].Error != nil || rows[0].TimestampUs != tick1 {
		t.Fatalf("first batch's frame %s, want withdrawal_id %s", mine1, firstID)
	}

	max := callView(t, tn, "withdrawableBalance", native, w.addr)
	if max.Cmp(eth(3)) != 0 {
		t.Fatalf("withdrawable after the first %v, want 3 ether", max)
	}
	farDeadline := big.NewInt((tn.clock.NowMicros() + 10*365*24*3600*1_000_000) / intervalUs * intervalUs)
	second, secondID := w.send(t, tn, native, to, max, farDeadline)
	tn.tick(t)
	tick2 := tn.node.LastTickUs()
	mine2 := recv(t, mineCh, mineSub)
	if rows := clobRows(t, mine2); len(rows) != 1 || rows[0].WithdrawalID != secondID || rows[0].TxHash != second.Hash() || rows[0].Error != nil {
		t.Fatalf("second batch's frame %s, want withdrawal_id %s", mine2, secondID)
	}
	if firstID == secondID {
		t.Fatal("two withdrawals share an id")
	}
	if b := tn.balance(t, w.addr); b.Sign() != 0 {
		t.Fatalf("balance after MAX %v, want 0", b)
	}

	listing := restOK(t, tn, "/v1/bridge/withdrawals/"+w.addr.Hex())
	rows := clobRows(t, listing)
	if len(rows) != 2 || rows[0].WithdrawalID != firstID || rows[1].WithdrawalID != secondID {
		t.Fatalf("listing %s", listing)
	}
	if want := "[" + string(mine1[1:len(mine1)-1]) + "," + string(mine2[1:len(mine2)-1]) + "]"; string(listing) != want {
		t.Fatalf("listing %s, frames %s", listing, want)
	}
	after := restOK(t, tn, fmt.Sprintf("/v1/bridge/withdrawals/%s?since=%d&since_id=%s", w.addr.Hex(), tick1, firstID.Hex()))
	if r := clobRows(t, after); len(r) != 1 || r[0].WithdrawalID != secondID || r[0].TimestampUs != tick2 {
		t.Fatalf("since_id = the first withdrawal id: %s", after)
	}

	for _, c := range []struct {
		tx    *types.Transaction
		id    common.Hash
		units uint64
		frame []byte
	}{{first, firstID, 2e6, mine1}, {second, secondID, 3e6, mine2}} {
		if row := wantClaimable(t, tn, c.tx, c.id, to, c.units); "["+string(row)+"]" != string(c.frame) {
			t.Fatalf("by-id row %s, frame %s", row, c.frame)
		}
	}
}

// TestClobWithdrawRefusedOverTheWire: through the orderbook a refusal is
// code 3, execution reverted, Error("CLOB validation failed: <reason>"):
// the orderbook's words for what any of its calls can get wrong, the
// bridge's for the rest; nothing spent.
func TestClobWithdrawRefusedOverTheWire(t *testing.T) {
	tn := bridgeNode(t)
	w := newClobWithdrawer(t, "clob withdraw refusals")
	tn.deposit(t, w.addr, eth(5))
	d := tn.nextDeadline()
	to := common.Address{0x70, 0xc2}
	for _, c := range []struct {
		reason          string
		token           common.Address
		amount, dl, val *big.Int
	}{
		{"Deadline is not aligned to auction interval", native, eth(1), new(big.Int).Add(d, big.NewInt(1)), new(big.Int)},
		{"deadline already executed", native, eth(1), new(big.Int).Sub(d, big.NewInt(intervalUs)), new(big.Int)},
		{"transaction value must be 0", native, eth(1), d, big.NewInt(1)},
		{"token not bridged", common.Address{0x77}, eth(1), d, new(big.Int)},
		{"amount not a whole number of bridged-chain units (multiple of 1000000000000)", native, new(big.Int).Add(eth(1), big.NewInt(1)), d, new(big.Int)},
		{"amount below minimum 1000000", native, big.NewInt(1e17), d, new(big.Int)},
	} {
		err := tn.eth.SendTransaction(context.Background(), w.sign(t, c.token, to, c.amount, c.dl, c.val))
		wantRPCError(t, err, 3, "execution reverted", nil)
		got, uerr := abi.UnpackRevert(common.FromHex(errorData(err).(string)))
		if want := "CLOB validation failed: " + c.reason; uerr != nil || got != want {
			t.Errorf("revert %q (%v), want %q", got, uerr, want)
		}
	}
	wantNonce(t, tn, w.addr, 0)
	if b := tn.balance(t, w.addr); b.Cmp(eth(5)) != 0 {
		t.Fatalf("balance after refusals %v", b)
	}
}

// TestClobWithdrawSurvivesRestart: ids are stored, not recomputed: after a
// restart on the same data directory the executed withdrawal's row keeps
// its withdrawal_id and is found by it, claimable; a withdrawal admitted
// before the restart and executed after it (from a replay of the log, and
// from a snapshot holding it pending) gets its id too.
func TestClobWithdrawSurvivesRestart(t *testing.T) {
	for _, every := range []int{-1, 1} {
		t.Run(fmt.Sprintf("SnapshotEvery=%d", every), func(t *testing.T) {
			dir := t.TempDir()
			opts := []nodeOption{func(c *node.Config) { c.DataDir, c.SnapshotEvery = dir, every }}
			tn := bridgeNode(t, opts...)
			w := newClobWithdrawer(t, "clob withdraw restart")
			tn.deposit(t, w.addr, eth(5))
			to := common.Address{0x70, 0xc3}
			first, firstID := w.send(t, tn, native, to, eth(1), tn.nextDeadline())
			tn.tick(t)
			wantClaimable(t, tn, first, firstID, to, 1e6)
			before := restOK(t, tn, "/v1/bridge/withdrawals/"+w.addr.Hex())
			secondDeadline := tn.nextDeadline()
			second, secondID := w.send(t, tn, native, to, eth(2), secondDeadline)
			tn.stop()

			tn = bridgeNode(t, opts...)
			if again := restOK(t, tn, "/v1/bridge/withdrawals/"+w.addr.Hex()); !bytes.Equal(again, before) {
				t.Fatalf("after the restart %s, before %s", again, before)
			}
			wantClaimable(t, tn, first, firstID, to, 1e6)
			for tn.clock.NowMicros() < secondDeadline.Int64() { // a new manual clock starts at genesis time
				tn.tick(t)
			}
			rows := clobRows(t, restOK(t, tn, "/v1/bridge/withdrawals/"+w.addr.Hex()))
			if len(rows) != 2 || rows[1].WithdrawalID != secondID || rows[1].TxHash != second.Hash() || rows[1].Error != nil {
				t.Fatalf("rows after the restart %+v, want the second with id %s", rows, secondID)
			}
			wantClaimable(t, tn, second, secondID, to, 2e6)
			tn.stop()
		})
	}
}
