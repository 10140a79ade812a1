package clob

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/holiman/uint256"
)

// The arithmetic fast paths give what uint256 gives, on random operands in
// their domain and at its edges.
func TestFastArithmetic(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 5))
	max64 := ^uint64(0)
	f := func(lo, hi uint64, m, q, rate uint256.Int) {
		t.Helper()
		var got, want uint256.Int
		mul128(&got, lo, hi, &m)
		want = uint256.Int{lo, hi, 0, 0}
		want.Mul(&want, &m)
		if got != want {
			t.Fatalf("mul128(%d, %d, %v) = %v, want %v", lo, hi, &m, &got, &want)
		}
		feeOf(&got, &q, &rate)
		want.MulDivOverflow(&q, &rate, wad)
		if got != want {
			t.Fatalf("feeOf(%v, %v) = %v, want %v", &q, &rate, &got, &want)
		}
		v := uint256.Int{lo, hi % 4, 0, 0}
		unit := uint256.Int{m[0] | 1, 0, 0, 0}
		if hi%3 == 0 {
			unit[0] %= 1 << 12 // small units: quotients beyond 64 bits, and multiples
			unit[0]++
			v[0] -= v[0] % unit[0]
		}
		div := newDivisor(unit[0])
		gq, gr := toUnits(&v, &unit, &div, ReasonSizeZero, ReasonSizeLot)
		var wq, wr uint256.Int
		wq.DivMod(&v, &unit, &wr)
		switch {
		case v.IsZero():
			if gr != ReasonSizeZero {
				t.Fatalf("toUnits(0) = %v", gr)
			}
		case !wr.IsZero():
			if gr != ReasonSizeLot {
				t.Fatalf("toUnits(%v, %d) = %v, want not a multiple", &v, unit[0], gr)
			}
		case !wq.IsUint64() || wq.Uint64() > unitsMax:
			if gr != ReasonValueRange {
				t.Fatalf("toUnits(%v, %d) = %v, want out of range", &v, unit[0], gr)
			}
		case gr != OK || uint64(gq) != wq.Uint64():
			t.Fatalf("toUnits(%v, %d) = %d %v, want %v", &v, unit[0], gq, gr, &wq)
		}
	}
	// Exact multiples: sizes and prices as the wire carries them.
	for range 100_000 {
		q, unit := r.Uint64N(1<<53+2), uint256.Int{1 + r.Uint64N(1<<(1+r.IntN(63)))}
		var v uint256.Int
		v.Mul(uint256.NewInt(q), &unit)
		div := newDivisor(unit[0])
		got, reason := toUnits(&v, &unit, &div, ReasonPriceZero, ReasonPriceStep)
		switch {
		case q == 0 && reason != ReasonPriceZero, q > unitsMax && reason != ReasonValueRange,
			q > 0 && q <= unitsMax && (reason != OK || uint64(got) != q):
			t.Fatalf("toUnits(%v, %v) = %d %v, want %d", &v, &unit, got, reason, q)
		}
	}
	f(max64, max64, uint256.Int{max64, max64}, uint256.Int{max64, max64}, uint256.Int{999_999_999_999_999_999})
	f(0, 0, uint256.Int{}, uint256.Int{}, uint256.Int{})
	f(1<<53, 0, uint256.Int{1}, uint256.Int{1}, uint256.Int{1})
	for range 100_000 {
		lo, hi := r.Uint64(), r.Uint64()
		if r.IntN(2) == 0 {
			hi = 0
		}
		if r.IntN(4) == 0 {
			lo %= 1 << 20
		}
		m := uint256.Int{r.Uint64(), r.Uint64()}
		if r.IntN(2) == 0 {
			m[1] = 0
		}
		q := uint256.Int{r.Uint64(), r.Uint64()}
		switch r.IntN(4) {
		case 0:
			q[1] = 0
		case 1:
			q[2] = r.Uint64() // the general path
		}
		rate := uint256.Int{r.Uint64() % 1_000_000_000_000_000_000}
		f(lo, hi, m, q, rate)
	}
}

// sortNew orders like a comparison sort on (key, whole id), whether it
// takes the radix path or not, with many keys shared.
func TestSortNewMatchesComparisonSort(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 6))
	for _, n := range []int{0, 1, 7, radixSortMin - 1, radixSortMin, 1000, 5000} {
		b := &book{ords: make([]order, n+1)}
		var tk tickScratch
		in := make([]newEntry, 0, n)
		for s := 1; s <= n; s++ {
			id := &b.ords[s].id
			for i := range id {
				id[i] = byte(r.Uint32())
			}
			if r.IntN(4) == 0 { // a key shared with an earlier id
				if j := 1 + r.IntN(s); j < s {
					copy(id[:8], b.ords[j].id[:8])
				}
			}
			if r.IntN(8) == 0 {
				binary.BigEndian.PutUint64(id[:8], uint64(r.IntN(3))) // small keys: high digits all zero
			}
			in = append(in, newEntry{binary.BigEndian.Uint64(id[:8]), uint32(s)})
		}
		want := slices.Clone(in)
		slices.SortFunc(want, func(x, y newEntry) int { return bytes.Compare(b.ords[x.slot].id[:], b.ords[y.slot].id[:]) })
		tk.sorted = append(tk.sorted[:0], in...)
		got := tk.sortNew(b, tk.sorted)
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d: sortNew disagrees with the comparison sort", n)
		}
	}
}
