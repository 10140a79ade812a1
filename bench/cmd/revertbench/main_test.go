package main

import (
	"context"
	"os"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ledgervenue/node/bench/proc"
	"github.com/ledgervenue/node/net/node"
)

var ledgerd string

func TestMain(m *testing.M) { os.Exit(proc.Main(m, "../../..", &ledgerd)) }

// TestCyclesRevert: against the real binary, each cycle's transfers are
// undone by its revert (balances and nonces back), and every phase is
// timed.
func TestCyclesRevert(t *testing.T) {
	n, err := proc.Start(ledgerd, "--dev", "--datadir", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	tg, err := dial(n.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a0 := common.Address(node.DevAddress(0))
	before, _ := tg.eth.BalanceAt(ctx, a0, nil)
	if err := tg.transfer(0); err != nil { // kept: history before the cycles
		t.Fatal(err)
	}
	kept, _ := tg.eth.BalanceAt(ctx, a0, nil)
	for range 3 {
		if err := tg.cycle(4); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := tg.eth.BalanceAt(ctx, a0, nil)
	nonce, _ := tg.eth.NonceAt(ctx, a0, nil)
	if after.Cmp(kept) != 0 || kept.Cmp(before) == 0 || nonce != 1 {
		t.Fatalf("account 0: %v before, %v after the kept transfer, %v after 3 reverted cycles (nonce %d, want 1)", before, kept, after, nonce)
	}
	if len(tg.snap) != 3 || len(tg.send) != 3 || len(tg.revert) != 3 || median(tg.revert) <= 0 {
		t.Fatalf("samples %v %v %v", tg.snap, tg.send, tg.revert)
	}
	if _, err := dial("http://10.0.0.1:8545"); err == nil {
		t.Fatal("a non-loopback URL was accepted")
	}
}
