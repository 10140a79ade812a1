package node

import (
	"math/big"
	"slices"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
)

func pnlOf(owner byte, unrealized, realized int64) clob.MarginInfo {
	m := clob.MarginInfo{Owner: clob.Address{19: owner}}
	m.Unrealized = clob.Signed{Neg: unrealized < 0, Abs: *uint256.NewInt(uint64(max(unrealized, -unrealized)))}
	m.Realized = clob.Signed{Neg: realized < 0, Abs: *uint256.NewInt(uint64(max(realized, -realized)))}
	return m
}

// TestByPnLOrder: descending unrealized + realized PnL, exact across signs
// and magnitudes, ties by address.
func TestByPnLOrder(t *testing.T) {
	ms := []clob.MarginInfo{
		pnlOf(1, 100, -90), // 10
		pnlOf(2, -5, 0),    // -5
		pnlOf(3, 0, 0),     // 0
		pnlOf(4, 7, 3),     // 10, after 1 by address
		pnlOf(5, -50, 60),  // 10, after 4
		pnlOf(6, -50, -5),  // -55
		pnlOf(7, 0, 19),    // 19
	}
	slices.SortFunc(ms, comparePnL)
	var got []byte
	for _, m := range ms {
		got = append(got, m.Owner[19])
	}
	if want := []byte{7, 1, 4, 5, 3, 2, 6}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	// Sums past 256 bits still compare exactly.
	a, b := pnlOf(1, 0, 0), pnlOf(2, 0, 0)
	a.Unrealized.Abs.SetAllOne()
	a.Realized.Abs.SetAllOne()
	b.Unrealized.Abs.SetAllOne()
	b.Realized.Abs.Sub(&b.Unrealized.Abs, uint256.NewInt(1))
	if comparePnL(a, b) >= 0 || comparePnL(b, a) <= 0 {
		t.Fatal("a sum one below the other's does not rank after it")
	}
	if signedBig(&clob.Signed{Neg: true, Abs: *uint256.NewInt(3)}).Cmp(big.NewInt(-3)) != 0 {
		t.Fatal("signedBig")
	}
}

// TestDevPerpMarketsCreate: the dev perp markets are valid markets (a
// node opens with them) and their oracle prices lie on the tick grid.
func TestDevPerpMarketsCreate(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Markets = append(DevMarkets(), DevPerpMarkets()...)
	n := openNode(t, cfg)
	defer n.Close()
	for _, m := range DevPerpMarkets() {
		if got, ok := n.ledger.Orderbook().Market(m.ID); !ok || got.Kind != clob.Perp || got.Perp != m.Perp {
			t.Fatalf("%s: %+v %v", m.Name, got, ok)
		}
		var rem uint256.Int
		if rem.Mod(&m.Perp.OraclePrice, &m.TickPrecision); !rem.IsZero() || m.Quote != clob.Address(core.NativeToken) {
			t.Fatalf("%s: oracle off the grid or not native collateral", m.Name)
		}
	}
}

// TestSetOraclePriceLogged: a refused setting is an *OracleRefusedError
// with the orderbook's reason and logs nothing; an accepted one is durable.
func TestSetOraclePriceLogged(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Markets = append(DevMarkets(), DevPerpMarkets()...)
	n := openNode(t, cfg)
	defer n.Close()
	eth := DevPerpMarkets()[0]
	seq, _ := n.StateAt()
	err := n.SetOraclePrice(eth.ID, uint256.NewInt(1), func(error) { t.Error("done ran for a refusal") })
	if !IsOracleRefused(err) || err.Error() != "CLOB validation failed: "+clob.ReasonOraclePrice.String() {
		t.Fatalf("off-grid price: %v", err)
	}
	if s, _ := n.StateAt(); s != seq {
		t.Fatalf("a refusal moved the sequence %d → %d", seq, s)
	}
	done := make(chan error, 1)
	if err := n.SetOraclePrice(eth.ID, wei(2_500), func(err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s, _ := n.StateAt(); s != seq+1 {
		t.Fatalf("sequence %d, want %d", s, seq+1)
	}
}
