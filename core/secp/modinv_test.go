package secp

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

var bigN, _ = new(big.Int).SetString("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", 16)

func limbsToBig(x [4]uint64) *big.Int {
	f := fe(x)
	return feToBig(&f)
}

func TestModInv(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, m := range []struct {
		name string
		mod  *big.Int
		inv  func(x [4]uint64) [4]uint64
	}{
		{"p", bigP, func(x [4]uint64) [4]uint64 { f := fe(x); var z fe; z.invVar(&f); return z }},
		{"n", bigN, func(x [4]uint64) [4]uint64 { s := sc(x); var z sc; z.invVar(&s); return z }},
	} {
		f := func(x *big.Int) {
			t.Helper()
			in := [4]uint64(feFromBig(x))
			got := limbsToBig(m.inv(in))
			want := new(big.Int).ModInverse(x, m.mod)
			if x.Sign() == 0 {
				want = new(big.Int)
			}
			if got.Cmp(want) != 0 {
				t.Fatalf("inv mod %s (%x) = %x, want %x", m.name, x, got, want)
			}
		}
		for _, v := range []int64{0, 1, 2, 3, -1, -2, -3} {
			f(new(big.Int).Mod(big.NewInt(v), m.mod))
		}
		for i := range 256 {
			f(new(big.Int).Lsh(big.NewInt(1), uint(i)%uint(m.mod.BitLen()-1)))
			f(new(big.Int).Sub(m.mod, new(big.Int).Lsh(big.NewInt(1), uint(i)%uint(m.mod.BitLen()-1))))
		}
		for range 20000 {
			x := limbsToBig([4]uint64{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()})
			f(x.Mod(x, m.mod))
		}
	}
}
