package rpc_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/ledgervenue/node/net/node"
)

// Delegated trading keys over the wire, as the live SDK's
// createDelegatedWallet drives them: a freshly generated key that is never
// funded trades for a funded master through delegated() envelopes, which
// are gas-exempt.

// delegateSession is one delegate key trading for one master through one
// client (HTTP or WebSocket).
type delegateSession struct {
	client     *ethclient.Client
	key        *ecdsa.PrivateKey
	master     common.Address
	validUntil uint64
	cert       []byte
}

// newDelegateSession generates a delegate key and has master sign the
// EIP-712 DelegationAuth{delegate, validUntil} for it, valid one hour.
func newDelegateSession(t *testing.T, tn *testNode, client *ethclient.Client, master *ecdsa.PrivateKey) *delegateSession {
	t.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	s := &delegateSession{client: client, key: key, master: crypto.PubkeyToAddress(master.PublicKey),
		validUntil: uint64(tn.clock.NowMicros()) + uint64(time.Hour/time.Microsecond)}
	td := apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain":   {{Name: "name", Type: "string"}, {Name: "version", Type: "string"}, {Name: "chainId", Type: "uint256"}},
			"DelegationAuth": {{Name: "delegate", Type: "address"}, {Name: "validUntil", Type: "uint64"}},
		},
		PrimaryType: "DelegationAuth",
		Domain:      apitypes.TypedDataDomain{Name: "pod delegation", Version: "1", ChainId: math.NewHexOrDecimal256(chainID)},
		Message:     apitypes.TypedDataMessage{"delegate": s.addr().Hex(), "validUntil": strconv.FormatUint(s.validUntil, 10)},
	}
	digest, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatal(err)
	}
	if s.cert, err = crypto.Sign(digest, master); err != nil {
		t.Fatal(err)
	}
	s.cert[64] += 27 // a wallet's v
	return s
}

func (s *delegateSession) addr() common.Address { return crypto.PubkeyToAddress(s.key.PublicKey) }

// send wraps inner in delegated() and sends it with the SDK's fees: fee cap
// eth_gasPrice, no tip, gas 1 000 000, the pending nonce. It returns the
// receipt once the intent is admitted.
func (s *delegateSession) send(t *testing.T, inner []byte) *types.Receipt {
	t.Helper()
	ctx := context.Background()
	feeCap, err := s.client.SuggestGasPrice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nonce, err := s.client.PendingNonceAt(ctx, s.addr())
	if err != nil {
		t.Fatal(err)
	}
	tx, err := types.SignNewTx(s.key, types.LatestSignerForChainID(big.NewInt(chainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(chainID), Nonce: nonce, GasTipCap: new(big.Int), GasFeeCap: feeCap, Gas: 1_000_000,
		To: &orderbookAddr, Data: pack(t, "delegated", s.master, s.validUntil, s.cert, inner),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.client.SendTransaction(ctx, tx); err != nil {
		t.Fatalf("delegated call refused: %v (%v)", err, errorData(err))
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		r, err := s.client.TransactionReceipt(ctx, tx.Hash())
		if err != nil {
			continue
		}
		if r.Status != 1 || r.GasUsed != 21_000 || r.EffectiveGasPrice.Sign() != 0 {
			t.Fatalf("delegated receipt: status %d gasUsed %d effectiveGasPrice %v, want 1, 21000, 0",
				r.Status, r.GasUsed, r.EffectiveGasPrice)
		}
		return r
	}
	t.Fatalf("no receipt for %s", tx.Hash())
	return nil
}

// TestDelegatedUnfundedDelegate: over HTTP and over WebSocket, a delegate
// key with no account at all places, updates (with the quote token, as the
// SDK advises) and cancels an order for a funded master. The delegate's
// nonce advances and its balance stays 0; the master's native balance moves
// by exactly the order's lock and is whole again after the cancel, so
// neither paid gas.
func TestDelegatedUnfundedDelegate(t *testing.T) {
	tn := startNode(t)
	ws, err := ethclient.DialContext(context.Background(), tn.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for i, c := range []struct {
		name   string
		client *ethclient.Client
	}{{"http", tn.eth}, {"ws", ws}} {
		t.Run(c.name, func(t *testing.T) { delegatedOrderRoundTrip(t, tn, c.client, node.DevKey(6+i)) })
	}
}

func delegatedOrderRoundTrip(t *testing.T, tn *testNode, client *ethclient.Client, masterKey *ecdsa.PrivateKey) {
	ctx := context.Background()
	s := newDelegateSession(t, tn, client, masterKey)
	native0, err := client.BalanceAt(ctx, s.master, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkDelegate := func(nonce uint64) {
		t.Helper()
		bal, err := client.BalanceAt(ctx, s.addr(), nil)
		if err != nil || bal.Sign() != 0 {
			t.Fatalf("delegate balance %v (%v), want 0", bal, err)
		}
		if n, err := client.NonceAt(ctx, s.addr(), nil); err != nil || n != nonce {
			t.Fatalf("delegate nonce %d (%v), want %d", n, err, nonce)
		}
	}
	// lock is what a resting buy of n WETH at 2000 holds: quote plus the
	// larger fee (0.03 %).
	lock := func(n int64) *big.Int {
		q := eth(2000 * n)
		return q.Add(q, new(big.Int).Div(new(big.Int).Mul(eth(2000*n), big.NewInt(3)), big.NewInt(10_000)))
	}
	checkMaster := func(locked *big.Int) {
		t.Helper()
		w, err := client.BalanceAt(ctx, s.master, nil)
		if err != nil {
			t.Fatal(err)
		}
		if spent := new(big.Int).Sub(native0, w); spent.Cmp(locked) != 0 {
			t.Fatalf("master withdrawable down %v, want exactly the lock %v", spent, locked)
		}
	}
	checkDelegate(0)

	s.send(t, tn.submit(t, wethBook, eth(1), eth(2000), 0, 0, 0))
	id := orderID(s.addr(), 0, 0)
	checkDelegate(1)
	checkMaster(lock(1))

	s.send(t, pack(t, "update", wethBook, id, eth(2), eth(2000), native, tn.nextDeadline()))
	checkDelegate(2)
	checkMaster(lock(2))

	s.send(t, pack(t, "cancel", wethBook, id, tn.nextDeadline()))
	checkDelegate(3)
	tn.tick(t)
	checkMaster(new(big.Int))
	checkDelegate(3)

	var orders struct {
		Orders []struct {
			ID common.Hash `json:"order_id"`
		} `json:"orders"`
	}
	if err := json.Unmarshal(tn.rawCall("ob_getOrders", s.master, map[string]any{"orderbook_id": wethBook}), &orders); err != nil ||
		len(orders.Orders) != 1 || orders.Orders[0].ID != id {
		t.Fatalf("master's orders %+v (%v), want the delegate's order %s", orders, err, id)
	}
}
