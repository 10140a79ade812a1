package node

import (
	"reflect"
	"slices"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
	"github.com/ledgervenue/node/core/clob/abi"
)

// checkViews compares the read views with the ledger and the index, read
// under the lock: every account the ledger holds, in every token, and
// every book at full depth.
func checkViews(t *testing.T, n *Node, when string) {
	t.Helper()
	n.mu.RLock()
	defer n.mu.RUnlock()
	tokens := map[core.Address]bool{core.NativeToken: true}
	accounts := n.ledger.AppendAccounts(nil)
	for _, a := range accounts {
		for _, tok := range n.ledger.AppendTokens(nil, a) {
			tokens[tok] = true
		}
	}
	accounts = append(accounts, core.Address{0xee}) // never seen
	for _, a := range accounts {
		if got, want := n.Nonce(a), n.ledger.Nonce(a); got != want {
			t.Fatalf("%s: %x nonce %d, ledger %d", when, a[:4], got, want)
		}
		for tok := range tokens {
			if got, want := n.Balance(tok, a), n.ledger.Balance(tok, a); got != want {
				t.Fatalf("%s: %x token %x balance %+v, ledger %+v", when, a[:4], tok[:4], got, want)
			}
			if got, want := n.Withdrawable(tok, a), n.ledger.Withdrawable(tok, a); got != want {
				t.Fatalf("%s: %x token %x withdrawable %v, ledger %v", when, a[:4], tok[:4], &got, &want)
			}
			if got, want := n.BalanceOf(tok, a), n.ledger.BalanceOf(tok, a); got != want {
				t.Fatalf("%s: %x token %x balanceOf %+v, ledger %+v", when, a[:4], tok[:4], got, want)
			}
		}
	}
	if got, want := n.BaseFee(), n.ledger.BaseFee(); got != want {
		t.Fatalf("%s: base fee %v, ledger %v", when, &got, &want)
	}
	checkAccountReads(t, n, accounts, when)
	// The index's copy of the perp markets' state (SyncPerp) is the
	// engine's after every input.
	ob := n.ledger.Orderbook()
	for _, id := range ob.AppendMarkets(nil) {
		got, known, gotOK := n.market.idx.PerpMarket(id)
		want, wantOK := ob.PerpMarket(id)
		if !known || gotOK != wantOK || got != want {
			t.Fatalf("%s: market %x perp state %+v (%v), engine %+v (%v)", when, id[28:], got, gotOK, want, wantOK)
		}
	}
	for _, id := range ob.AppendMarkets(nil) {
		want, ok := n.market.idx.Orderbook(id, ob.AppendLevels(nil, id, clob.Buy, 0), ob.AppendLevels(nil, id, clob.Sell, 0), 0)
		got, gotOK := n.Orderbook(id, 0)
		if !ok || !gotOK || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: book %x published %+v, live %+v", when, id[:4], got, want)
		}
		if d, _ := n.Orderbook(id, 1); len(d.Buys) > 1 || len(d.Sells) > 1 {
			t.Fatalf("%s: depth 1 gave %d/%d levels", when, len(d.Buys), len(d.Sells))
		}
	}
}

// checkAccountReads compares the reads that answer from the account views
// (positions, triggers, recovery and finality, the ranking of the accounts
// at risk) with the same answers computed from the ledger, the engine and
// the index, as they were before they left the lock.
// REQUIRES: n.mu held for reading.
func checkAccountReads(t *testing.T, n *Node, accounts []core.Address, when string) {
	t.Helper()
	for _, a := range accounts {
		if got, want := n.Positions(clob.Address(a)), n.positionsLocked(clob.Address(a)); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %x positions %+v, ledger %+v", when, a[:4], got, want)
		}
		if got, want := n.Triggers(clob.Address(a)), n.triggersLocked(clob.Address(a)); len(got) != len(want) || len(got) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %x triggers %+v, engine %+v", when, a[:4], got, want)
		}
		gotT, gotOK := n.RecoveryTarget(a)
		if wantT, wantOK := n.ledger.RecoveryTarget(a); gotT != wantT || gotOK != wantOK {
			t.Fatalf("%s: %x recovery target %v %v, ledger %v %v", when, a[:4], gotT, gotOK, wantT, wantOK)
		}
		if got, want := n.AccountInfo(a), accountInfoLocked(n, a); got != want {
			t.Fatalf("%s: %x account info %+v, ledger %+v", when, a[:4], got, want)
		}
	}
	var want []clob.MarginInfo
	for _, a := range n.ledger.Orderbook().AppendPerpAccounts(nil) {
		if a != clob.BackstopAddress {
			want = append(want, n.ledger.Margin(core.Address(a)))
		}
	}
	slices.SortFunc(want, comparePnL)
	if got := n.ByPnL(); len(got) != len(want) || len(got) > 0 && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: ranked %+v, ledger %+v", when, got, want)
	}
}

// accountInfoLocked is svc_getAccountInfo's answer as it was computed
// under the lock, from the ledger and the entries.
// REQUIRES: n.mu held for reading.
func accountInfoLocked(n *Node, a core.Address) AccountInfo {
	info := AccountInfo{Expected: n.ledger.Nonce(a)}
	newest, ok := n.ledger.Newest(a)
	info.Newest, info.HasNewest = newest, ok
	_, info.Locked = n.ledger.RecoveryTarget(a)
	if f, ok := n.rviews.finalized.get(a[0], a); ok {
		info.Finalized, info.HasFinalized = f, true
		return info
	}
	if e := n.entries.get(newest.Hash); ok && (e == nil || e.batch.Load() != nil) {
		info.Finalized, info.HasFinalized = newest, true
	}
	return info
}

// TestReadViewsMatchLedger runs spot and perp orders that trade, transfers,
// a deposit of a new token, an oracle change, a base-fee change and a
// restart, and checks the read views against the ledger after each input

func TestReadViewsMatchLedger(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Markets = append(DevMarkets(), DevPerpMarkets()...)
	clock := cfg.Clock.(*ManualClock)
	n := openNode(t, cfg)
	defer func() { n.Close() }()
	checkViews(t, n, "genesis")
	spot, perp := DevMarkets()[0].ID, DevPerpMarkets()[0].ID
	nonces := make([]uint64, 8)
	send := func(i int, data []byte) {
		t.Helper()
		submitWait(t, n, obTx(i, nonces[i], data))
		nonces[i]++
		checkViews(t, n, "order")
	}
	tick := func() {
		t.Helper()
		clock.Advance(500_000)
		durable, err := n.RunDueTicks()
		if err != nil {
			t.Fatal(err)
		}
		if durable != nil {
			if err := <-durable; err != nil {
				t.Fatal(err)
			}
		}
		checkViews(t, n, "tick")
	}
	for round := range uint64(4) {
		deadline := uint64((clock.NowMicros()/500_000 + 1) * 500_000)
		for i := range 4 {
			side := clob.Side(i % 2)
			send(4+i, submitOrder(spot, side, 3+uint64(i), 200_000-uint64(side)*100+round*10, deadline))
			send(i, submitOrder(perp, side, 2+uint64(i), 300_000+100-uint64(side)*200+round*50, deadline))
		}
		tick()
	}
	done := make(chan error, 1)
	if err := n.SetOraclePrice(perp, wei(2_900), func(err error) { done <- err }); err != nil || <-done != nil {
		t.Fatal("oracle refused")
	}
	checkViews(t, n, "oracle")
	if len(n.ledger.Orderbook().AppendPerpAccounts(nil)) == 0 {
		t.Fatal("no perp position opened: the workload does not test the marks")
	}
	tick()
	// A stop-loss on account 0's perp position: listed while pending, then
	// stored by the next tick.
	stop := clob.Intent{Kind: clob.IntentSubmitTrigger, Book: perp, Side: clob.Sell, TriggerType: clob.TriggerStopLoss,
		Flags: clob.FlagReduceOnly, Deadline: uint64((clock.NowMicros()/500_000 + 1) * 500_000)}
	stop.Size.SetUint64(1e15)
	stop.TriggerPrice.Mul(uint256.NewInt(200_000), uint256.NewInt(1e16))
	send(0, abi.AppendSubmitTrigger(nil, &stop))
	if len(n.Triggers(clob.Address(DevAddress(0)))) != 1 {
		t.Fatal("the admitted trigger is not listed")
	}
	tick()
	if ts := n.Triggers(clob.Address(DevAddress(0))); len(ts) != 1 || ts[0].Info.AdmitTickUs == 0 {
		t.Fatalf("the landed trigger is listed as %+v", ts)
	}
	if r := n.ByPnL(); len(r) == 0 || &r[0] != &n.ByPnL()[0] {
		t.Fatal("the ranking is not kept between inputs")
	}
	if _, rej, err := n.LockAccount(DevAddress(1), func(err error) { done <- err }); err != nil || !rej.OK() || <-done != nil {
		t.Fatalf("lock refused: %v %+v", err, rej)
	}
	checkViews(t, n, "lock")
	if _, locked := n.RecoveryTarget(DevAddress(1)); !locked {
		t.Fatal("the locked account has no recovery target")
	}
	newToken := core.Address{0x77}
	if err := n.Deposit(core.Hash{}, newToken, DevAddress(5), uint256.NewInt(12345), func(_ *Entry, err error) { done <- err }); err != nil || <-done != nil {
		t.Fatal("deposit refused")
	}
	checkViews(t, n, "deposit")
	submitWait(t, n, &core.Tx{Hash: core.Hash{0xa1}, Type: core.TxTypeDynamicFee, ChainID: 0x50d, Nonce: 0,
		From: DevAddress(8), To: DevAddress(9), HasTo: true, Value: *uint256.NewInt(1e18), Gas: core.TxGas,
		GasFeeCap: *uint256.NewInt(2e9)})
	checkViews(t, n, "transfer")
	if err := n.SetBaseFee(uint256.NewInt(3e9), func(err error) { done <- err }); err != nil || <-done != nil {
		t.Fatal("base fee refused")
	}
	checkViews(t, n, "base fee")
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n = openNode(t, cfg)
	checkViews(t, n, "restart")
	if len(n.Triggers(clob.Address(DevAddress(0)))) != 1 {
		t.Fatal("the trigger is not listed after a restart")
	}
	if b := n.Balance(newToken, DevAddress(5)); b.Cash.Uint64() != 12345 {
		t.Fatalf("deposited token after restart: %+v", b)
	}
}
