package core

import (
	"math/rand/v2"
	"testing"

	"github.com/holiman/uint256"
)

const testChainID = 0x50d

var (
	alice = Address{1}
	bob   = Address{2}
	gwei  = uint256.NewInt(1_000_000_000)
)

func newTestLedger(t *testing.T) *Ledger {
	t.Helper()
	l := NewLedger(Config{ChainID: testChainID, BaseFee: *gwei})
	l.Genesis(NativeToken, alice, uint256.NewInt(1e18))
	return l
}

func transfer(nonce uint64, value uint64) *Tx {
	return &Tx{
		Type: TxTypeDynamicFee, ChainID: testChainID, Nonce: nonce, From: alice, To: bob, HasTo: true,
		Value: *uint256.NewInt(value), Gas: TxGas, GasTipCap: uint256.Int{}, GasFeeCap: *uint256.NewInt(2e9),
		Hash: Hash{byte(nonce), byte(value)},
	}
}

func TestApplyTxRejections(t *testing.T) {
	f := func(name string, mutate func(l *Ledger, tx *Tx), want RejectCode) {
		t.Helper()
		l := newTestLedger(t)
		tx := transfer(0, 1000)
		mutate(l, tx)
		before := l.StateHash()
		rec, rej := l.ApplyTx(tx, 0)
		if rej.Code != want || rec != nil {
			t.Fatalf("%s: got code %d rec %v, want %d", name, rej.Code, rec, want)
		}
		if l.StateHash() != before {
			t.Fatalf("%s: a rejected transaction changed the state", name)
		}
	}
	f("chain id", func(_ *Ledger, tx *Tx) { tx.ChainID = 1 }, RejectChainID)
	f("future nonce", func(_ *Ledger, tx *Tx) { tx.Nonce = 3 }, RejectFutureNonce)
	f("past nonce", func(l *Ledger, tx *Tx) {
		rec, _ := l.ApplyTx(transfer(0, 1), 0)
		l.Settle(rec)
	}, RejectPastNonce)
	f("pending", func(l *Ledger, tx *Tx) {
		l.ApplyTx(transfer(0, 1), 0)
		tx.Nonce = 1
	}, RejectPending)
	f("insufficient", func(_ *Ledger, tx *Tx) { tx.Value.SetUint64(1e18) }, RejectInsufficientBalance)
	f("unknown sender", func(_ *Ledger, tx *Tx) { tx.From = Address{9} }, RejectInsufficientBalance)
	f("underpriced", func(_ *Ledger, tx *Tx) { tx.GasFeeCap.SetUint64(1) }, RejectUnderpriced)
	f("tip above cap", func(_ *Ledger, tx *Tx) { tx.GasTipCap.SetUint64(3e9) }, RejectTipAboveFeeCap)
	f("gas below TxGas", func(_ *Ledger, tx *Tx) { tx.Gas = TxGas - 1 }, RejectInsufficientBalance)
	f("gas limit", func(_ *Ledger, tx *Tx) { tx.Gas = TxGasLimitMax + 1 }, RejectGasLimit)
	f("creation", func(_ *Ledger, tx *Tx) { tx.HasTo = false; tx.To = Address{} }, RejectContractCreation)
	f("orderbook", func(_ *Ledger, tx *Tx) { tx.To = OrderbookAddress }, RejectApp)
	f("bridge", func(_ *Ledger, tx *Tx) { tx.To = BridgeAddress }, RejectApp)
	f("recovery", func(_ *Ledger, tx *Tx) { tx.To = RecoveryAddress }, RejectApp)
}

func TestApplyTxMovesValueAndFee(t *testing.T) {
	l := newTestLedger(t)
	tx := transfer(0, 1000)
	tx.GasTipCap.SetUint64(5)
	tx.Data = []byte{0, 1}
	tx.Gas = 50_000
	rec, rej := l.ApplyTx(tx, 0)
	if !rej.OK() {
		t.Fatalf("rejected: %+v", rej)
	}
	wantGas := uint64(TxGas) // calldata is not metered
	wantPrice := uint256.NewInt(1e9 + 5)
	if rec.GasUsed != wantGas || !rec.EffectiveGasPrice.Eq(wantPrice) {
		t.Fatalf("gas %d price %s", rec.GasUsed, rec.EffectiveGasPrice.Dec())
	}
	fee := new(uint256.Int).Mul(uint256.NewInt(wantGas), wantPrice)
	wantAlice := new(uint256.Int).Sub(uint256.NewInt(1e18), fee)
	wantAlice.Sub(wantAlice, uint256.NewInt(1000))
	if got := l.Balance(NativeToken, alice).Cash; !got.Eq(wantAlice) {
		t.Fatalf("alice %s want %s", got.Dec(), wantAlice.Dec())
	}
	if got := l.Balance(NativeToken, bob).Cash; got.Uint64() != 1000 {
		t.Fatalf("bob %s", got.Dec())
	}
	if l.Nonce(alice) != 1 || !l.CheckSupply() {
		t.Fatalf("nonce %d supply %v", l.Nonce(alice), l.CheckSupply())
	}
	// The fee cap bounds the price when base fee + tip exceeds it.
	l.Settle(rec)
	tx2 := transfer(1, 1)
	tx2.GasTipCap.SetUint64(2e9)
	rec2, _ := l.ApplyTx(tx2, 0)
	if rec2.EffectiveGasPrice.Uint64() != 2e9 {
		t.Fatalf("capped price %s", rec2.EffectiveGasPrice.Dec())
	}
}

func TestDepositEmitsLogAndIssues(t *testing.T) {
	l := newTestLedger(t)
	token := Address{0xaa}
	rec := l.Deposit(Hash{7}, token, bob, uint256.NewInt(42))
	if got := l.Balance(token, bob).Cash; got.Uint64() != 42 {
		t.Fatalf("token balance %s", got.Dec())
	}
	if len(rec.Logs) != 1 || rec.Logs[0].Topics[0] != DepositTopic() || rec.Logs[0].Address != BridgeAddress {
		t.Fatalf("log %+v", rec.Logs)
	}
	l.Deposit(Hash{8}, NativeToken, bob, uint256.NewInt(5))
	if !l.CheckSupply() {
		t.Fatal("native deposit broke conservation")
	}
}

// TestRandomInputsDeterministic applies the same seeded random input stream
// to two ledgers and checks conservation after every input and equal state
// hashes throughout.
func TestRandomInputsDeterministic(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	a, b := randomRun(seed, 2000), randomRun(seed, 2000)
	if len(a) != len(b) {
		t.Fatalf("seed %d: runs differ in length", seed)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed %d: state hashes diverge at input %d", seed, i)
		}
	}
}

func randomRun(seed uint64, n int) []Hash {
	r := rand.New(rand.NewPCG(seed, 1))
	accts := []Address{alice, bob, {3}, {4}}
	l := NewLedger(Config{ChainID: testChainID, BaseFee: *gwei})
	for _, a := range accts {
		l.Genesis(NativeToken, a, uint256.NewInt(1e15))
	}
	var hashes []Hash
	var pending []*TxRecord
	for i := 0; i < n; i++ {
		switch k := r.IntN(10); {
		case k == 0:
			l.Deposit(Hash{byte(i)}, NativeToken, accts[r.IntN(4)], uint256.NewInt(r.Uint64N(1e12)))
		case k == 1:
			l.SetBaseFee(uint256.NewInt(r.Uint64N(2e9)))
		case k == 2 && len(pending) > 0:
			l.Settle(pending[0])
			pending = pending[1:]
		default:
			from := accts[r.IntN(4)]
			tx := &Tx{Type: TxTypeDynamicFee, ChainID: testChainID, Nonce: l.Nonce(from) + uint64(r.IntN(3)) - 1,
				From: from, To: accts[r.IntN(4)], HasTo: true, Gas: TxGas + r.Uint64N(3),
				Value: *uint256.NewInt(r.Uint64N(1e14)), GasFeeCap: *uint256.NewInt(r.Uint64N(3e9)), GasTipCap: *uint256.NewInt(r.Uint64N(10))}
			if rec, rej := l.ApplyTx(tx, 0); rej.OK() {
				pending = append(pending, rec)
			}
		}
		if !l.CheckSupply() {
			panic("conservation broken")
		}
		hashes = append(hashes, l.StateHash())
	}
	return hashes
}
