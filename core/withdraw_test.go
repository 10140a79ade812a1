package core

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/holiman/uint256"
)

var (
	testWETH   = Address{0xe7}
	testWBTC   = Address{0xb7}
	notBridged = Address{0x66}
)

// testBridge is the dev configuration's shape (docs/bridge.md §1): native
// with 6 bridged decimals, WETH with 18, WBTC with 8.
func testBridge() BridgeConfig {
	pow := func(e uint64) uint256.Int { return *new(uint256.Int).Exp(uint256.NewInt(10), uint256.NewInt(e)) }
	return BridgeConfig{ClaimChainID: 31337, SourceContract: Address{0x5f}, Version: 1, Tokens: []BridgeToken{
		{Token: NativeToken, L1Token: Address{0xa1}, Decimals: 6, Min: pow(6), Max: pow(12)},
		{Token: testWETH, L1Token: Address{0xa2}, Decimals: 18, Min: pow(15), Max: pow(24)},
		{Token: testWBTC, L1Token: Address{0xa3}, Decimals: 8, Min: pow(4), Max: pow(10)},
	}}
}

// bridgeLedger: alice holds 10 native and 5 WETH; bob holds nothing.
func bridgeLedger(t *testing.T, perBatch int) *Ledger {
	t.Helper()
	l := NewLedger(Config{ChainID: testChainID, BaseFee: *gwei, Bridge: testBridge(), WithdrawalsPerBatchMax: perBatch})
	l.Genesis(NativeToken, alice, ether(10))
	l.Genesis(testWETH, alice, ether(5))
	return l
}

// withdrawTx is a withdrawal signed by from with the ledger's next nonce.
func withdrawTx(l *Ledger, from, token Address, amount *uint256.Int, deadlineUs uint64) *Tx {
	n := l.Nonce(from)
	return &Tx{Hash: Hash{0xbd, from[0], byte(n >> 8), byte(n)}, Type: TxTypeDynamicFee, ChainID: testChainID, Nonce: n,
		From: from, To: BridgeAddress, HasTo: true, Gas: TxGas, GasFeeCap: *uint256.NewInt(2e9),
		Data: AppendWithdrawCall(nil, token, Address{0xca, 0xfe}, amount, deadlineUs)}
}

// apply applies in, settles its record and checks conservation.
func apply(t *testing.T, l *Ledger, in *Input) (*TxRecord, Reject) {
	t.Helper()
	rec, rej := l.Apply(in)
	if rec != nil {
		l.Settle(rec)
	}
	if !l.CheckSupply() {
		t.Fatalf("conservation broken after input kind %d", in.Kind)
	}
	return rec, rej
}

func admit(t *testing.T, l *Ledger, tx *Tx, timeUs int64) *TxRecord {
	t.Helper()
	rec, rej := apply(t, l, &Input{Kind: InputTx, Tx: *tx, TimeUs: timeUs})
	if !rej.OK() || rec == nil || rec.Status != 1 {
		t.Fatalf("withdrawal refused: %+v", rej)
	}
	return rec
}

// TestWithdrawRefusals provokes every Bridge refusal of docs/bridge.md §2:
// each is RejectApp with its reason, and changes nothing (nonce included).
func TestWithdrawRefusals(t *testing.T) {
	const now, d = 1_200_000, 2_000_000 // admission time; a valid deadline
	f := func(name, want string, mutate func(l *Ledger, tx *Tx)) {
		t.Helper()
		l := bridgeLedger(t, 0)
		tx := withdrawTx(l, alice, NativeToken, ether(1), d)
		mutate(l, tx)
		before, nonce, pending := l.StateHash(), l.Nonce(tx.From), l.PendingWithdrawals()
		rec, rej := l.ApplyTx(tx, now)
		if rec != nil || rej.Code != RejectApp || rej.App != BridgeAddress || rej.Detail != want {
			t.Errorf("%s: got %+v, want Bridge reason %q", name, rej, want)
		}
		if l.StateHash() != before || l.Nonce(tx.From) != nonce || l.PendingWithdrawals() != pending {
			t.Errorf("%s: a refused withdrawal changed the state", name)
		}
	}
	call := withdrawCallEdit
	malformed := "malformed call, want withdraw(address,address,uint256,uint128)"
	f("no selector", malformed, func(_ *Ledger, tx *Tx) { tx.Data = tx.Data[:3] })
	f("short", malformed, func(_ *Ledger, tx *Tx) { tx.Data = tx.Data[:len(tx.Data)-1] })
	f("long", malformed, func(_ *Ledger, tx *Tx) { tx.Data = append(tx.Data, 0) })
	f("token high byte", malformed, func(_ *Ledger, tx *Tx) { tx.Data[4] = 1 })
	f("recipient high byte", malformed, func(_ *Ledger, tx *Tx) { tx.Data[4+32+11] = 1 })
	f("deadline above uint128", malformed, func(_ *Ledger, tx *Tx) { tx.Data[4+3*32+15] = 1 })
	f("selector", "unknown function selector 0xdeadbeef", func(_ *Ledger, tx *Tx) { copy(tx.Data, []byte{0xde, 0xad, 0xbe, 0xef}) })
	f("value", "value must be zero", func(_ *Ledger, tx *Tx) { tx.Value.SetUint64(1) })
	f("token", "token not bridged", call(notBridged, bob, ether(1), d))
	f("recipient", "zero recipient", call(NativeToken, Address{}, ether(1), d))
	f("amount", "zero amount", call(NativeToken, bob, new(uint256.Int), d))
	f("native unit", "amount not a whole number of bridged-chain units (multiple of 1000000000000)",
		call(NativeToken, bob, new(uint256.Int).AddUint64(ether(1), 1e11), d))
	f("WBTC unit", "amount not a whole number of bridged-chain units (multiple of 10000000000)",
		call(testWBTC, bob, uint256.NewInt(1e14+1), d))
	f("native min", "amount below minimum 1000000", call(NativeToken, bob, new(uint256.Int).SubUint64(ether(1), 1e12), d))
	f("WETH min", "amount below minimum 1000000000000000", call(testWETH, bob, uint256.NewInt(1e15-1), d))
	f("native max", "amount above maximum 1000000000000", call(NativeToken, bob, new(uint256.Int).AddUint64(ether(1e6), 1e12), d))
	f("WBTC max", "amount above maximum 10000000000", call(testWBTC, bob, new(uint256.Int).AddUint64(ether(100), 1e10), d))
	aligned := "deadline not aligned to the auction interval (500000 µs)"
	f("deadline +1", aligned, call(NativeToken, bob, ether(1), d+1))
	f("deadline 2^64+aligned", aligned, func(_ *Ledger, tx *Tx) { tx.Data[4+3*32+23] = 1 }) // 2^64 + d
	f("deadline before the admission's batch", "deadline passed", call(NativeToken, bob, ether(1), 1_000_000))
	f("deadline 0", "deadline passed", call(NativeToken, bob, ether(1), 0))
	f("deadline at the last batch", "deadline passed", func(l *Ledger, tx *Tx) {
		l.Tick(3_000_000) // a batch later than the admission time (the clock went back)
		tx.Data = AppendWithdrawCall(nil, NativeToken, bob, ether(1), 3_000_000)
	})
	f("pending full", "too many pending withdrawals", func(l *Ledger, _ *Tx) { fillPendingWithdrawals(t, l, now, d) })
	// The bound and the boundaries themselves are accepted.
	l := bridgeLedger(t, 0)
	for _, c := range []struct {
		token    Address
		amount   *uint256.Int
		deadline uint64
	}{
		{NativeToken, ether(1), 1_500_000},                                          // the admission's batch
		{NativeToken, ether(1e6), 1<<64 - 1 - (1<<64-1)%500_000},                    // max, a far deadline
		{testWBTC, uint256.NewInt(1e14), d},                                         // WBTC min
		{testWETH, uint256.NewInt(1e15), d},                                         // WETH min
		{testWETH, new(uint256.Int).Exp(uint256.NewInt(10), uint256.NewInt(24)), d}, // WETH max
	} {
		admit(t, l, withdrawTx(l, alice, c.token, c.amount, c.deadline), now)
	}
	if l.PendingWithdrawals() != 5 {
		t.Fatalf("%d pending", l.PendingWithdrawals())
	}
}

// withdrawCallEdit returns an edit of a withdraw transaction that makes
// its call data withdraw(token, to, amount, deadline).
func withdrawCallEdit(token, to Address, amount *uint256.Int, deadline uint64) func(*Ledger, *Tx) {
	return func(_ *Ledger, tx *Tx) { tx.Data = AppendWithdrawCall(nil, token, to, amount, deadline) }
}

// fillPendingWithdrawals admits WithdrawalsPendingMax withdrawals of bob's
// at nowUs: the next one is refused.
func fillPendingWithdrawals(t *testing.T, l *Ledger, nowUs int64, deadlineUs uint64) {
	t.Helper()
	for range WithdrawalsPendingMax {
		rec, rej := l.ApplyTx(withdrawTx(l, bob, NativeToken, ether(1), deadlineUs), nowUs)
		if !rej.OK() {
			t.Fatalf("withdrawal %d refused: %+v", l.PendingWithdrawals(), rej)
		}
		l.Settle(rec)
	}
}

// TestWithdrawProtocolChecksFirst: the protocol checks still run before the
// Bridge's: nonces, a value the balance cannot pay, the base fee.
func TestWithdrawProtocolChecksFirst(t *testing.T) {
	f := func(name string, want RejectCode, mutate func(tx *Tx)) {
		t.Helper()
		l := bridgeLedger(t, 0)
		tx := withdrawTx(l, alice, NativeToken, ether(1), 2_000_000)
		mutate(tx)
		if _, rej := l.ApplyTx(tx, 0); rej.Code != want {
			t.Errorf("%s: %+v, want code %d", name, rej, want)
		}
	}
	f("future nonce", RejectFutureNonce, func(tx *Tx) { tx.Nonce++ })
	f("value above the balance", RejectInsufficientBalance, func(tx *Tx) { tx.Value.Set(ether(11)) })
	f("underpriced", RejectUnderpriced, func(tx *Tx) { tx.GasFeeCap.SetUint64(1) })
	f("value from an empty account", RejectInsufficientBalance, func(tx *Tx) { tx.From, tx.Value = bob, *uint256.NewInt(1) })
}

// TestWithdrawGasExempt: a withdrawal pays no fee and its balance check
// holds back no gas, so an account holding exactly the amount withdraws
// all of it, and an empty account's withdrawal is admitted (and refused at
// execution).
func TestWithdrawGasExempt(t *testing.T) {
	l := NewLedger(Config{ChainID: testChainID, BaseFee: *gwei, Bridge: testBridge()})
	l.Genesis(NativeToken, alice, ether(1))
	tx := withdrawTx(l, alice, NativeToken, ether(1), 1_000_000)
	tx.Gas = 10_000_000 // gas × fee cap is far above the balance
	rec := admit(t, l, tx, 600_000)
	if burned := l.FeesBurned(); !rec.EffectiveGasPrice.IsZero() || !burned.IsZero() {
		t.Fatalf("a withdrawal paid a fee: price %s, burned %s", rec.EffectiveGasPrice.Dec(), burned.Dec())
	}
	if b := l.Balance(NativeToken, alice); !b.Cash.Eq(ether(1)) || l.Nonce(alice) != 1 {
		t.Fatalf("admission moved value: %+v, nonce %d", b, l.Nonce(alice))
	}
	empty := withdrawTx(l, bob, NativeToken, ether(1), 1_000_000)
	empty.Gas = 0
	admit(t, l, empty, 600_000)
	if due, ok := l.NextTickDue(1_000_000); !ok || due != 1_000_000 {
		t.Fatalf("batch due %d %v", due, ok)
	}
	apply(t, l, &Input{Kind: InputTick, TimeUs: 1_000_000})
	out := l.LastWithdrawals()
	if len(out) != 2 || out[0].Error != "" || out[1].Error != WithdrawInsufficientBalance {
		t.Fatalf("outcomes %+v", out)
	}
	if b := l.Balance(NativeToken, alice); !b.Cash.IsZero() || l.Withdrawn(NativeToken) != *ether(1) {
		t.Fatalf("alice %+v, withdrawn %s", b, dec(l.Withdrawn(NativeToken)))
	}
}

// TestWithdrawOutcomes runs batches with every outcome: executed, refused
// for the balance, left out by the per-batch cap and by a late batch; the
// outcomes are in admission order, tagged like the tick's landed envelopes.
func TestWithdrawOutcomes(t *testing.T) {
	l := bridgeLedger(t, 3)
	l.Genesis(NativeToken, bob, ether(1))
	recs := []*TxRecord{
		admit(t, l, withdrawTx(l, alice, testWETH, ether(2), 1_000_000), 100_000),    // ok
		admit(t, l, withdrawTx(l, bob, testWETH, ether(1), 1_000_000), 200_000),      // bob holds no WETH
		admit(t, l, withdrawTx(l, alice, NativeToken, ether(4), 1_000_000), 300_000), // ok
		admit(t, l, withdrawTx(l, bob, NativeToken, ether(1), 1_000_000), 400_000),   // over the cap of 3
		admit(t, l, withdrawTx(l, alice, testWETH, ether(1), 1_500_000), 600_000),    // the next batch
	}
	if due, ok := l.NextTickDue(499_999); ok || due != 500_000 {
		t.Fatalf("due %d %v before the batch", due, ok)
	}
	rec, _ := apply(t, l, &Input{Kind: InputTick, TimeUs: 500_000})
	if rec.Kind != RecordTick || len(l.LastWithdrawals()) != 4 {
		t.Fatalf("first batch: %d outcomes", len(l.LastWithdrawals()))
	}
	want := []string{"", WithdrawInsufficientBalance, "", WithdrawNotIncluded}
	for i, o := range l.LastWithdrawals() {
		tx := &recs[i].Tx
		if o.Error != want[i] || o.TxHash != tx.Hash || o.Seq != recs[i].Seq || o.TickUs != 500_000 ||
			o.Withdrawer != tx.From || o.To != (Address{0xca, 0xfe}) {
			t.Errorf("outcome %d: %+v, want error %q", i, o, want[i])
		}
	}
	if got := l.LastTick().Landed; !slices.Equal(got, []uint64{recs[0].Seq, recs[1].Seq, recs[2].Seq, recs[3].Seq}) {
		t.Errorf("landed %v", got)
	}
	if w, b := l.Balance(testWETH, alice), l.Balance(NativeToken, alice); !w.Cash.Eq(ether(3)) || !b.Cash.Eq(ether(6)) {
		t.Errorf("alice WETH %s native %s", w.Cash.Dec(), b.Cash.Dec())
	}
	if b := l.Balance(NativeToken, bob); !b.Cash.Eq(ether(1)) || l.Nonce(bob) != 2 {
		t.Errorf("bob's not_included withdrawal: cash %s nonce %d", b.Cash.Dec(), l.Nonce(bob))
	}
	if l.Withdrawn(testWETH) != *ether(2) || l.Withdrawn(NativeToken) != *ether(4) || l.PendingWithdrawals() != 1 {
		t.Errorf("withdrawn %s / %s, %d pending", dec(l.Withdrawn(testWETH)), dec(l.Withdrawn(NativeToken)), l.PendingWithdrawals())
	}
	// The last one's batch is due at 1 s.
	if due, ok := l.NextTickDue(2_000_000); !ok || due != 1_000_000 {
		t.Fatalf("due %d %v", due, ok)
	}
	// The node was late: the next batch runs at 2 s, after the deadline.
	apply(t, l, &Input{Kind: InputTick, TimeUs: 2_000_000})
	if o := l.LastWithdrawals(); len(o) != 1 || o[0].Error != WithdrawNotIncluded || o[0].TickUs != 2_000_000 {
		t.Fatalf("late batch: %+v", o)
	}
	if l.Withdrawn(testWETH) != *ether(2) || l.PendingWithdrawals() != 0 {
		t.Fatal("a late withdrawal was executed")
	}
	if _, ok := l.NextTickDue(1 << 40); ok {
		t.Fatal("a batch due with nothing pending")
	}
}

// TestWithdrawPerpMargin: the withdrawable native balance is what perp
// margin leaves, not the cash.
func TestWithdrawPerpMargin(t *testing.T) {
	l := perpLedger(t) // alice: ~1200 cash, IM 600 on her long
	l.wd = newWithdrawals(&Config{Bridge: testBridge()})
	admit(t, l, withdrawTx(l, alice, NativeToken, ether(700), 1_500_000), 1_100_000)
	admit(t, l, withdrawTx(l, alice, NativeToken, ether(500), 1_500_000), 1_200_000)
	apply(t, l, &Input{Kind: InputTick, TimeUs: 1_500_000})
	out := l.LastWithdrawals()
	if len(out) != 2 || out[0].Error != WithdrawInsufficientBalance || out[1].Error != "" {
		t.Fatalf("outcomes %+v", out)
	}
	if l.Withdrawn(NativeToken) != *ether(500) {
		t.Fatalf("withdrawn %s", dec(l.Withdrawn(NativeToken)))
	}
}

// TestWithdrawSnapshot: pending withdrawals and withdrawn survive a
// snapshot; the loaded ledger executes the same batch to the same state,
// as a replay of the same inputs does; a snapshot with a pending
// withdrawal admission could not have queued does not load.
func TestWithdrawSnapshot(t *testing.T) {
	cfg := Config{ChainID: testChainID, BaseFee: *gwei, Bridge: testBridge(), WithdrawalsPerBatchMax: 2}
	genesis := func() *Ledger {
		l := NewLedger(cfg)
		l.Genesis(NativeToken, alice, ether(10))
		l.Genesis(testWETH, alice, ether(5))
		return l
	}
	var inputs []*Input
	l := genesis()
	for i, step := range []struct {
		token  Address
		amount uint64
		timeUs int64
		tick   bool
		deadUs uint64
	}{
		{testWETH, 1, 100_000, false, 500_000},
		{Address{}, 0, 500_000, true, 0},
		{NativeToken, 2, 600_000, false, 1_500_000},
		{testWETH, 9, 700_000, false, 1_000_000},
		{NativeToken, 1, 800_000, false, 1_000_000},
	} {
		in := &Input{Kind: InputTick, TimeUs: step.timeUs}
		if !step.tick {
			in = &Input{Kind: InputTx, Tx: *withdrawTx(l, alice, step.token, ether(step.amount), step.deadUs), TimeUs: step.timeUs}
		}
		if _, rej := apply(t, l, in); !rej.OK() {
			t.Fatalf("input %d: %+v", i, rej)
		}
		inputs = append(inputs, in)
	}
	snap := l.AppendSnapshot(nil)
	loaded, err := LoadSnapshot(cfg, snap)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(loaded.AppendSnapshot(nil), snap) || loaded.PendingWithdrawals() != 3 || loaded.Withdrawn(testWETH) != *ether(1) {
		t.Fatalf("loaded: %d pending, withdrawn %s", loaded.PendingWithdrawals(), dec(loaded.Withdrawn(testWETH)))
	}
	replay := genesis()
	for _, in := range inputs {
		apply(t, replay, in)
	}
	tick := &Input{Kind: InputTick, TimeUs: 1_000_000}
	for _, x := range []*Ledger{l, loaded, replay} {
		apply(t, x, tick)
	}
	if !slices.Equal(l.LastWithdrawals(), loaded.LastWithdrawals()) || !slices.Equal(l.LastWithdrawals(), replay.LastWithdrawals()) ||
		l.StateHash() != loaded.StateHash() || l.StateHash() != replay.StateHash() {
		t.Fatalf("the batch differs after a load or a replay:\n%+v\n%+v\n%+v", l.LastWithdrawals(), loaded.LastWithdrawals(), replay.LastWithdrawals())
	}
	// Native 2 executes, WETH 9 > the 4 left, native 1 is over the cap of 2.
	if o := l.LastWithdrawals(); len(o) != 3 || o[0].Error != "" || o[1].Error != WithdrawInsufficientBalance || o[2].Error != WithdrawNotIncluded {
		t.Fatalf("outcomes %+v", o)
	}

	// Edits of a pending withdrawal that admission could not have made.
	at := bytes.Index(snap, inputs[2].Tx.Hash[:]) // the first pending entry
	if at < 0 {
		t.Fatal("pending withdrawal not in the snapshot")
	}
	edit := func(name string, off int, b []byte) {
		t.Helper()
		bad := bytes.Clone(snap)
		copy(bad[at+off:], b)
		if _, err := LoadSnapshot(cfg, bad); err == nil {
			t.Errorf("%s: loaded", name)
		} else if !strings.Contains(err.Error(), "withdrawal") {
			t.Errorf("%s: %v", name, err)
		}
	}
	u64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	edit("seq beyond the ledger", 32, u64(l.Seq()+5))
	edit("seq 0", 32, u64(0))
	edit("unknown owner", 40, []byte{0x99})
	edit("zero recipient", 60, make([]byte, 20))
	edit("token not bridged", 80, notBridged[:])
	edit("zero amount", 100, make([]byte, 32))
	edit("deadline before landing", 132, u64(500_000))
	edit("off the grid", 140, u64(1_500_001))
	edit("landing at the last batch", 140, u64(500_000))
	if _, err := LoadSnapshot(Config{ChainID: testChainID}, snap); err == nil {
		t.Error("loaded pending withdrawals under a configuration that bridges nothing")
	}
}

// TestWithdrawalsPerBatchDefault: with no cap configured a batch includes
// DefaultWithdrawalsPerBatchMax withdrawals and leaves the next one out.
func TestWithdrawalsPerBatchDefault(t *testing.T) {
	l := bridgeLedger(t, 0)
	for range DefaultWithdrawalsPerBatchMax + 1 {
		admit(t, l, withdrawTx(l, bob, NativeToken, ether(1), 500_000), 0)
	}
	l.Tick(500_000)
	out := l.LastWithdrawals()
	if len(out) != DefaultWithdrawalsPerBatchMax+1 || out[len(out)-2].Error != WithdrawInsufficientBalance ||
		out[len(out)-1].Error != WithdrawNotIncluded {
		t.Fatalf("%d outcomes, the last two %+v", len(out), out[len(out)-2:])
	}
}

func dec(v uint256.Int) string { return v.Dec() }

// TestUnrealizedProfitIsNotCash: with her long in profit, alice's
// withdrawable balance exceeds her cash; neither a value transfer nor a
// withdrawal may take more than the cash (before, a transfer passed the
// balance check and wrapped her cash around 2^256).
func TestUnrealizedProfitIsNotCash(t *testing.T) {
	l := perpLedger(t)
	l.wd = newWithdrawals(&Config{Bridge: testBridge()})
	apply(t, l, &Input{Kind: InputSetOracle, Book: perpBook, Price: *ether(4000)})
	apply(t, l, &Input{Kind: InputTick, TimeUs: 1_500_000})
	cash := l.Balance(NativeToken, alice).Cash
	if w := l.Withdrawable(NativeToken, alice); !w.Gt(ether(1500)) || !cash.Lt(ether(1500)) {
		t.Fatalf("withdrawable %s, cash %s: want a profit above the cash", w.Dec(), cash.Dec())
	}
	tx := Tx{Hash: Hash{9}, Type: TxTypeDynamicFee, ChainID: testChainID, Nonce: l.Nonce(alice), From: alice, To: bob, HasTo: true,
		Gas: TxGas, GasFeeCap: *gwei, Value: *ether(1500)}
	if _, rej := apply(t, l, &Input{Kind: InputTx, Tx: tx}); rej.Code != RejectInsufficientBalance {
		t.Fatalf("a transfer beyond the cash: %+v", rej)
	}
	admit(t, l, withdrawTx(l, alice, NativeToken, ether(1500), 2_000_000), 1_600_000)
	apply(t, l, &Input{Kind: InputTick, TimeUs: 2_000_000})
	if o := l.LastWithdrawals(); len(o) != 1 || o[0].Error != WithdrawInsufficientBalance {
		t.Fatalf("a withdrawal beyond the cash: %+v", o)
	}
	if b := l.Balance(NativeToken, alice); b.Cash.Gt(&cash) {
		t.Fatalf("cash %s after, %s before", b.Cash.Dec(), cash.Dec())
	}
}

// TestWithdrawalBatchAllocates: a batch reuses the outcome, Landed and
// pending slices; in steady state it allocates nothing.
func TestWithdrawalBatchAllocates(t *testing.T) {
	l := bridgeLedger(t, 0)
	l.Genesis(NativeToken, bob, ether(1_000_000))
	for range 64 {
		admit(t, l, withdrawTx(l, bob, NativeToken, ether(1), 500_000), 0)
	}
	saved := slices.Clone(l.wd.pending)
	run := func() {
		l.wd.pending = append(l.wd.pending[:0], saved...)
		l.wd.lastBatchUs = 0
		l.tick.Landed = l.tick.Landed[:0]
		l.runWithdrawals(500_000)
	}
	run() // warm the reused slices and the withdrawn entry
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Fatalf("%v allocations per batch of 64", n)
	}
	if out := l.LastWithdrawals(); len(out) != 64 || out[63].Error != "" {
		t.Fatalf("outcomes %d, last %+v", len(out), out[len(out)-1])
	}
}
