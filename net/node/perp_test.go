package node

import (
	"math/big"
	"slices"
	"testing"

	"github.com/holiman/uint256"
	"github.com/ledgervenue/node/core"
	"github.com/ledgervenue/node/core/clob"
)

func riskOf(owner byte, equity int64, mm uint64) riskKey {
	m := clob.MarginInfo{Owner: clob.Address{19: owner}, Maintenance: *uint256.NewInt(mm)}
	m.Equity.Abs.SetUint64(uint64(max(equity, -equity)))
	m.Equity.Neg = equity < 0
	return riskKey{m: m, equity: signedBig(&m.Equity), mm: m.Maintenance.ToBig()}
}

// TestAtRiskOrder: ascending equity / maintenance, exact across signs and
// magnitudes, ties by address, accounts without maintenance last.
func TestAtRiskOrder(t *testing.T) {
	keys := []riskKey{
		riskOf(1, 100, 10), // 10
		riskOf(2, -5, 1),   // -5
		riskOf(3, 0, 7),    // 0
		riskOf(4, 30, 3),   // 10, after 1 by address
		riskOf(5, 9, 0),    // no maintenance
		riskOf(6, -50, 5),  // -10
		riskOf(7, 19, 2),   // 9.5
		riskOf(8, 1, 0),    // no maintenance, after 5 by address
	}
	slices.SortFunc(keys, compareRisk)
	var got []byte
	for _, k := range keys {
		got = append(got, k.m.Owner[19])
	}
	if want := []byte{6, 2, 3, 7, 1, 4, 5, 8}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	// Products past 256 bits still compare exactly.
	huge := new(uint256.Int).SetAllOne()
	a, b := riskOf(1, 0, 1), riskOf(2, 0, 1)
	a.m.Equity.Abs, a.m.Maintenance = *huge, *huge
	b.m.Equity.Abs.Sub(huge, uint256.NewInt(1))
	b.m.Maintenance = *huge
	a.equity, a.mm = signedBig(&a.m.Equity), a.m.Maintenance.ToBig()
	b.equity, b.mm = signedBig(&b.m.Equity), b.m.Maintenance.ToBig()
	if compareRisk(b, a) >= 0 || compareRisk(a, b) <= 0 {
		t.Fatal("a ratio just below 1 does not rank before 1")
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
