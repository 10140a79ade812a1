package bridge

import (
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/net/node"
)

// TestDepositCreditsTheLedger: ledgerd --l1 refuses a chain without the
// bridge; Deposit events are credited in 18 decimals while the node runs,
// and a restart (which rescans the chain from block 0) credits none twice.
func TestDepositCreditsTheLedger(t *testing.T) {
	tools(t)
	a := startAnvil(t)
	datadir := t.TempDir()
	if l, err := startLedgerdErr(datadir, "--l1", a.URL); err == nil {
		l.Stop()
		t.Fatal("ledgerd --l1 started against a chain without the bridge contract")
	} else if !strings.Contains(err.Error(), "has no contract at the bridge configuration's source_contract") {
		t.Fatalf("ledgerd --l1 on a chain without the bridge: %v", err)
	}

	b := deploy(t, a)
	depositor := node.DevKey(1)
	to := common.Address{0x0b, 19: 0x01}                  // a fresh ledger account
	b.deposit(t, depositor, 0, big.NewInt(2_500_000), to) // 2.5 USD (6 decimals)
	b.deposit(t, depositor, 2, big.NewInt(3), to)         // 3e-8 WBTC (8 decimals)

	l := startLedgerd(t, datadir, "--l1", a.URL)
	usd := big.NewInt(2_500_000_000_000_000_000)
	l.waitBalance(t, core.NativeToken, to, usd)
	l.waitBalance(t, node.DevWBTC, to, big.NewInt(3e10))
	// A deposit while the node runs.
	b.deposit(t, depositor, 1, big.NewInt(7e17), to) // 0.7 WETH (18 decimals)
	l.waitBalance(t, node.DevWETH, to, big.NewInt(7e17))
	if got, err := l.Client.BalanceAt(t.Context(), to, nil); err != nil || got.Cmp(usd) != 0 {
		t.Fatalf("eth_getBalance after the USD deposit: %v, %v; want %s", got, err, usd)
	}

	// Restart: the poller rescans from block 0. Once a deposit made after
	// the restart is in, every earlier block was scanned again.
	l.Stop()
	l = startLedgerd(t, datadir, "--l1", a.URL)
	b.deposit(t, depositor, 0, big.NewInt(1_000_000), to)
	usd.Add(usd, big.NewInt(1e18))
	l.waitBalance(t, core.NativeToken, to, usd)
	if got := l.balance(t, node.DevWBTC, to); got.Cmp(big.NewInt(3e10)) != 0 {
		t.Errorf("WBTC after the restart: %s, want 3e10 (credited once)", got)
	}
	if got := l.balance(t, node.DevWETH, to); got.Cmp(big.NewInt(7e17)) != 0 {
		t.Errorf("WETH after the restart: %s, want 7e17 (credited once)", got)
	}
}
