package node

import (
	"reflect"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
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
	tick()
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
	if b := n.Balance(newToken, DevAddress(5)); b.Cash.Uint64() != 12345 {
		t.Fatalf("deposited token after restart: %+v", b)
	}
}
