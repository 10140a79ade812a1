package bridge

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/ledgervenue/node/bench/proc"
	"github.com/ledgervenue/node/core"
	orderbook "github.com/ledgervenue/node/core/clob/abi"
)

// ledger is a running ledgerd (the real binary) with a go-ethereum client.
type ledger struct {
	*proc.Ledgerd
	Client *ethclient.Client
	book   *bind.BoundContract // the orderbook application
}

// startLedgerd starts ledgerd --dev with args on datadir and stops it when
// the test ends (its log goes to the test log on failure).
func startLedgerd(t *testing.T, datadir string, args ...string) *ledger {
	t.Helper()
	l, err := startLedgerdErr(datadir, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Stop()
		if t.Failed() {
			t.Logf("ledgerd log:\n%s", l.Log())
		}
	})
	if l.Client, err = ethclient.Dial(l.HTTP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Client.Close)
	ob, err := abi.JSON(strings.NewReader(orderbook.OrderbookJSON))
	if err != nil {
		t.Fatal(err)
	}
	l.book = bind.NewBoundContract(common.Address(core.OrderbookAddress), ob, l.Client, l.Client, l.Client)
	return l
}

func startLedgerdErr(datadir string, args ...string) (*ledger, error) {
	p, err := proc.Start(ledgerd, append([]string{"--dev", "--datadir", datadir, "--admin-token", "test"}, args...)...)
	if err != nil {
		return nil, err
	}
	return &ledger{Ledgerd: p}, nil
}

// balance is the ledger's balanceOf(token, who) view, 18 decimals.
func (l *ledger) balance(t *testing.T, token core.Address, who common.Address) *big.Int {
	t.Helper()
	var out []any
	if err := l.book.Call(nil, &out, "balanceOf", common.Address(token), who); err != nil {
		t.Fatal(err)
	}
	return out[0].(*big.Int)
}

// waitFor polls cond until it holds, failing the test after waitTimeout
// with what.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %v waiting for %s", waitTimeout, what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitBalance waits until the ledger's balance of token for who is want.
func (l *ledger) waitBalance(t *testing.T, token core.Address, who common.Address, want *big.Int) {
	t.Helper()
	var got *big.Int
	waitFor(t, "a ledger balance of "+want.String(), func() bool {
		got = l.balance(t, token, who)
		return got.Cmp(want) == 0
	})
}
