package secp

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestScalarArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	xs := edgeScalars()
	for range 60 {
		xs = append(xs, randScalar(rng))
	}
	f := func(name string, got sc, want *big.Int) {
		t.Helper()
		want = new(big.Int).Mod(want, bigN)
		if scToBig(&got).Cmp(want) != 0 {
			t.Fatalf("%s = %x, want %x", name, scToBig(&got), want)
		}
	}
	for _, bx := range xs {
		x := scFromBig(bx)
		var z sc
		f("neg", *z.neg(&x), new(big.Int).Neg(bx))
		for _, by := range xs {
			y := scFromBig(by)
			f("mul", *z.mul(&x, &y), new(big.Int).Mul(bx, by))
			f("add", *z.add(&x, &y), new(big.Int).Add(bx, by))
		}
	}
}

func TestScalarSetBytes(t *testing.T) {
	f := func(v *big.Int, wantOverflow bool) {
		t.Helper()
		var b [32]byte
		v.FillBytes(b[:])
		var z sc
		if overflow := z.setBytes(&b); overflow != wantOverflow {
			t.Fatalf("setBytes(%x) overflow = %v", v, overflow)
		}
		if scToBig(&z).Cmp(new(big.Int).Mod(v, bigN)) != 0 {
			t.Fatalf("setBytes(%x) = %x", v, scToBig(&z))
		}
	}
	one := big.NewInt(1)
	f(new(big.Int), false)
	f(new(big.Int).Sub(bigN, one), false)
	f(bigN, true)
	f(new(big.Int).Add(bigN, one), true)
	f(new(big.Int).Sub(new(big.Int).Lsh(one, 256), one), true)
}
