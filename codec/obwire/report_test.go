package obwire

import (
	"math/big"
	"testing"
)

// TestReportDecimals: amounts are exact decimals, trailing zeros trimmed,
// the sign before them; ratios are rounded, trimmed, 0 over nothing; a
// CSV name with a comma or a quote is quoted.
func TestReportDecimals(t *testing.T) {
	v := func(s string) *big.Int {
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			t.Fatal(s)
		}
		return n
	}
	for _, c := range []struct {
		got, want string
	}{
		{string(appendValue(nil, v("2000000000000000000000000000000000000"))), "1"},     // 2e36: one quote unit
		{string(appendValue(nil, v("-3000000000000000000000000000000000000"))), "-1.5"}, // a half
		{string(appendValue(nil, v("1"))), "0.0000000000000000000000000000000000005"},   // the smallest Value
		{string(appendValue(nil, v("0"))), "0"},
		{string(appendWei(nil, v("-100000000000000000"))), "-0.1"},
		{string(appendPrice2(nil, v("199000000000000000000"))), "99.5"}, // a mid of 99 and 100
		{string(appendRatio(nil, big.NewInt(1), big.NewInt(11), 6)), "0.090909"},
		{string(appendRatio(nil, big.NewInt(1), big.NewInt(22), 6)), "0.045455"},
		{string(appendRatio(nil, big.NewInt(-10), big.NewInt(5), 4)), "-2"},
		{string(appendRatio(nil, big.NewInt(1), big.NewInt(3_000_000), 4)), "0"},
		{string(appendRatio(nil, big.NewInt(-1), big.NewInt(3_000_000), 4)), "0"},
		{string(appendRatio(nil, big.NewInt(300), big.NewInt(3), 4)), "100"},
		{string(appendRatio(nil, big.NewInt(7), new(big.Int), 4)), "0"},
		{string(appendCSVField(nil, "WETH/USD")), "WETH/USD"},
		{string(appendCSVField(nil, `A,"B"`)), `"A,""B"""`},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
