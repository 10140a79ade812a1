package core

import (
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

// delegateKeyHex and masterKeyHex are fixed test keys: the master signs
// the certificate, the delegate (never funded) sends the transactions.
const (
	masterKeyHex   = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	delegateKeyHex = "8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f"
)

// delegatedTx wraps inner in a delegated() envelope from the delegate for
// master, with the fees the live SDK's createDelegatedWallet names: fee cap
// the base fee (eth_gasPrice), no tip, gas 1 000 000.
func delegatedTx(t *testing.T, l *Ledger, delegate, master Address, inner []byte) *Tx {
	t.Helper()
	key, err := crypto.HexToECDSA(masterKeyHex)
	if err != nil {
		t.Fatal(err)
	}
	const validUntil = 10_000_000
	digest := abi.DelegationDigest(testChainID, clob.Address(delegate), validUntil)
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27 // wallets sign v = 27/28
	n := l.Nonce(delegate)
	return &Tx{Hash: Hash{0xde, byte(n)}, Type: TxTypeDynamicFee, ChainID: testChainID, Nonce: n, From: delegate,
		To: OrderbookAddress, HasTo: true, Gas: 1_000_000, GasFeeCap: l.BaseFee(),
		Data: abi.AppendDelegated(nil, clob.Address(master), validUntil, sig, inner)}
}

func testKeyAddress(t *testing.T, hex string) Address {
	t.Helper()
	key, err := crypto.HexToECDSA(hex)
	if err != nil {
		t.Fatal(err)
	}
	return Address(crypto.PubkeyToAddress(key.PublicKey))
}

// TestDelegatedGasExempt: a delegated() call is gas-exempt (the live
// network's rule), so a delegate with no account at all places, updates and
// cancels the master's orders: no fee is burned, the receipt reports
// gasUsed 21 000 at price 0, the delegate's nonce advances and its balance
// stays 0, and the master pays only for its orders. Only the envelope is
// exempt: the same key's plain orderbook call, or a fee cap under the base
// fee, is refused as before. Replaying the inputs gives the same state.
func TestDelegatedGasExempt(t *testing.T) {
	master, delegate := testKeyAddress(t, masterKeyHex), testKeyAddress(t, delegateKeyHex)
	run := func() *Ledger {
		l := newOrderbookLedger(t)
		l.Genesis(NativeToken, master, ether(10_000))
		cash0 := l.Balance(NativeToken, master).Cash
		buy := clob.Intent{Kind: clob.IntentSubmit, Book: wethBook, Side: clob.Buy, Deadline: 1_000_000}
		buy.Size.SetUint64(1e18)
		buy.Price.Mul(uint256.NewInt(3000), uint256.NewInt(1e18))
		id := clob.OrderID(clob.Address(delegate), 0, 0)
		upd := clob.Intent{Kind: clob.IntentUpdate, Book: wethBook, OrderID: id, Size: *ether(2), Price: buy.Price,
			Token: clob.NativeToken, Deadline: 1_000_000}
		calls := [][]byte{
			abi.AppendSubmitOrder(nil, &buy),
			abi.AppendUpdate(nil, &upd),
			abi.AppendCancel(nil, &clob.Intent{Kind: clob.IntentCancel, Book: wethBook, OrderID: id, Deadline: 1_000_000}),
		}
		for i, inner := range calls {
			rec := admit(t, l, delegatedTx(t, l, delegate, master, inner), 600_000)
			if rec.GasUsed != TxGas || !rec.EffectiveGasPrice.IsZero() {
				t.Fatalf("call %d: gasUsed %d at %s, want %d at 0", i, rec.GasUsed, rec.EffectiveGasPrice.Dec(), TxGas)
			}
			if _, ok := l.accounts[delegate]; !ok || l.Nonce(delegate) != uint64(i+1) {
				t.Fatalf("call %d: delegate nonce %d", i, l.Nonce(delegate))
			}
			if b := l.Balance(NativeToken, delegate); !b.Cash.IsZero() || !b.Locked.IsZero() {
				t.Fatalf("call %d: delegate balance %+v", i, b)
			}
		}
		if m := l.Balance(NativeToken, master); m.Locked.IsZero() || !m.Cash.Eq(&cash0) {
			t.Fatalf("master before the tick: %+v, want cash %s and the order's lock", m, cash0.Dec())
		}
		apply(t, l, &Input{Kind: InputTick, TimeUs: 1_000_000})
		if m, burned := l.Balance(NativeToken, master), l.FeesBurned(); !m.Locked.IsZero() || !m.Cash.Eq(&cash0) || !burned.IsZero() {
			t.Fatalf("after the cancel: master %+v (want cash %s), burned %s", m, cash0.Dec(), burned.Dec())
		}

		plain := delegatedTx(t, l, delegate, master, calls[0])
		plain.Data = calls[0]
		if _, rej := l.Apply(&Input{Kind: InputTx, Tx: *plain, TimeUs: 1_100_000}); rej.Code != RejectInsufficientBalance {
			t.Fatalf("an undelegated call from the unfunded key: %+v", rej)
		}
		under := delegatedTx(t, l, delegate, master, calls[0])
		under.GasFeeCap.SubUint64(&under.GasFeeCap, 1)
		if _, rej := l.Apply(&Input{Kind: InputTx, Tx: *under, TimeUs: 1_100_000}); rej.Code != RejectUnderpriced {
			t.Fatalf("a delegated call under the base fee: %+v", rej)
		}
		return l
	}
	if a, b := run().StateHash(), run().StateHash(); a != b {
		t.Fatalf("replay gave %x and %x", a, b)
	}
}
