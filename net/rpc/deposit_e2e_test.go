package rpc_test

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/ledgervenue/node/net/node"
)

// deposit(address token,address recipient,uint256 amount,uint128 deadline)
// over the wire, as the live guides call it before trading. On this venue
// the account's balance is its orderbook balance, so a deposit is a
// transfer (core/clob/abi/doc.go): to oneself it moves nothing but is
// checked and lands; to another account it credits that account; a
// delegated one is credited to the master whatever recipient it names.

// TestDepositToSelfThenOrder: the guides' two steps. The deposit is
// admitted and lands, the balance is unchanged, and the order placed next
// rests on the book.
func TestDepositToSelfThenOrder(t *testing.T) {
	tn := startNode(t)
	ctx := context.Background()
	alice := tn.sender(t, 0)
	r := alice.mustSend(t, pack(t, "deposit", weth, alice.addr(), eth(10), tn.nextDeadline()))
	// The guides deposit the quote token, the native one, too.
	rn := alice.mustSend(t, pack(t, "deposit", native, alice.addr(), eth(1000), tn.nextDeadline()))
	tn.tick(t)
	for _, h := range []common.Hash{r.TxHash, rn.TxHash} {
		if rc, err := tn.eth.TransactionReceipt(ctx, h); err != nil || rc.Status != 1 || rc.BlockNumber == nil {
			t.Fatalf("deposit receipt after the tick: %+v %v, want landed", rc, err)
		}
	}
	if b := callView(t, tn, "balanceOf", weth, alice.addr()); b.Cmp(eth(100)) != 0 {
		t.Fatalf("alice WETH after a deposit to herself: %v, want 100", b)
	}
	wantNative := new(big.Int).Sub(node.DevBalanceWei.ToBig(), new(big.Int).Add(gasCost(r), gasCost(rn)))
	if b := callView(t, tn, "balanceOf", native, alice.addr()); b.Cmp(wantNative) != 0 {
		t.Fatalf("alice native after a deposit to herself: %v, want %v (gas only)", b, wantNative)
	}

	alice.mustSend(t, tn.submit(t, wethBook, eth(-1), eth(3000), 0, 0, 0))
	id := orderID(alice.addr(), 2, 0)
	tn.tick(t)
	var orders struct {
		Orders []struct {
			ID     common.Hash `json:"order_id"`
			Status string      `json:"status"`
		} `json:"orders"`
	}
	if err := json.Unmarshal(tn.rawCall("ob_getOrders", alice.addr(), map[string]any{"orderbook_id": wethBook}), &orders); err != nil ||
		len(orders.Orders) != 1 || orders.Orders[0].ID != id {
		t.Fatalf("alice's orders after the deposit %+v (%v), want the order %s", orders, err, id)
	}
	if w := callView(t, tn, "withdrawableBalance", weth, alice.addr()); w.Cmp(eth(99)) != 0 {
		t.Fatalf("alice withdrawable WETH with 1 resting for sale: %v, want 99", w)
	}
}

// TestDepositToOther: a deposit naming another recipient moves the amount
// to it at the tick, in a batch with an order as well.
func TestDepositToOther(t *testing.T) {
	tn := startNode(t)
	alice, carol := tn.sender(t, 0), tn.sender(t, 2)
	alice.mustSend(t, pack(t, "deposit", weth, carol.addr(), eth(3), tn.nextDeadline()))
	d := tn.nextDeadline()
	alice.mustSend(t, pack(t, "submitBatch", [][]byte{
		pack(t, "deposit", weth, carol.addr(), eth(2), d),
		pack(t, "submitOrder", wethBook, eth(-1), eth(3000), uint8(0), d, new(big.Int), uint8(0)),
	}))
	tn.tick(t)
	if b := callView(t, tn, "balanceOf", weth, alice.addr()); b.Cmp(eth(95)) != 0 {
		t.Fatalf("alice WETH %v, want 95", b)
	}
	if w := callView(t, tn, "withdrawableBalance", weth, alice.addr()); w.Cmp(eth(94)) != 0 {
		t.Fatalf("alice withdrawable WETH %v, want 94 (1 for sale)", w)
	}
	if b := callView(t, tn, "balanceOf", weth, carol.addr()); b.Cmp(eth(105)) != 0 {
		t.Fatalf("carol WETH %v, want 105", b)
	}
}

// TestDepositRefusals: a deposit is refused for the transfer's reasons,
// and a refused one consumes nothing.
func TestDepositRefusals(t *testing.T) {
	tn := startNode(t)
	s, other := tn.sender(t, 4), tn.sender(t, 5)
	d := tn.nextDeadline()
	f := func(reason string, data []byte) {
		t.Helper()
		_, err := s.send(t, data)
		wantRPCError(t, err, 3, "execution reverted", nil)
		got, uerr := abi.UnpackRevert(common.FromHex(errorData(err).(string)))
		if uerr != nil || got != "CLOB validation failed: "+reason {
			t.Fatalf("revert %q (%v), want %q", got, uerr, "CLOB validation failed: "+reason)
		}
	}
	f("insufficient balance", pack(t, "deposit", weth, s.addr(), eth(101), d))
	f("insufficient balance", pack(t, "deposit", weth, other.addr(), eth(101), d))
	f("insufficient balance", pack(t, "deposit", native, s.addr(), new(big.Int).Add(node.DevBalanceWei.ToBig(), e18), d))
	f("transfer amount is zero", pack(t, "deposit", weth, s.addr(), new(big.Int), d))
	f("Deadline is not aligned to auction interval", pack(t, "deposit", weth, s.addr(), eth(1), new(big.Int).Add(d, big.NewInt(1))))
	if s.nonce != 0 {
		t.Fatalf("refused deposits consumed nonces: %d", s.nonce)
	}
	if b := callView(t, tn, "withdrawableBalance", weth, s.addr()); b.Cmp(eth(100)) != 0 {
		t.Fatalf("refused deposits moved funds: %v", b)
	}
}

// TestDelegatedDepositToMaster: a delegate's deposit naming someone else
// is credited to the master (the live rule), so nothing leaves the master.
func TestDelegatedDepositToMaster(t *testing.T) {
	tn := startNode(t)
	master, carol := node.DevKey(2), devAddr(3)
	s := newDelegateSession(t, tn, tn.eth, master)
	s.send(t, pack(t, "deposit", weth, carol, eth(2), tn.nextDeadline()))
	d := tn.nextDeadline()
	s.send(t, pack(t, "submitBatch", [][]byte{
		pack(t, "deposit", weth, s.addr(), eth(5), d),
		pack(t, "submitOrder", wethBook, eth(-1), eth(3000), uint8(0), d, new(big.Int), uint8(0)),
	}))
	tn.tick(t)
	if b := callView(t, tn, "balanceOf", weth, s.master); b.Cmp(eth(100)) != 0 {
		t.Fatalf("master WETH %v, want 100: a delegated deposit is the master's to itself", b)
	}
	if w := callView(t, tn, "withdrawableBalance", weth, s.master); w.Cmp(eth(99)) != 0 {
		t.Fatalf("master withdrawable WETH %v, want 99 (1 for sale)", w)
	}
	for _, a := range []common.Address{carol, s.addr()} {
		if b := callView(t, tn, "balanceOf", weth, a); a == carol && b.Cmp(eth(100)) != 0 || a != carol && b.Sign() != 0 {
			t.Fatalf("%s WETH %v: a delegated deposit credited someone other than the master", a, b)
		}
	}
}
