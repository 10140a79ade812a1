package secp

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

var bigP, _ = new(big.Int).SetString("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f", 16)

func feFromBig(v *big.Int) fe {
	var b [32]byte
	v.FillBytes(b[:])
	var z fe
	for i := range 4 {
		z[3-i] = be64(b[8*i:])
	}
	return z
}

func feToBig(x *fe) *big.Int {
	var b [32]byte
	for i := range 4 {
		putBE64(b[8*i:], x[3-i])
	}
	return new(big.Int).SetBytes(b[:])
}

// feSamples returns edge values (around 0, p and 2^256) and random values,
// all below 2^256 so they are valid weakly reduced inputs.
func feSamples(rng *rand.Rand, n int) []fe {
	two256 := new(big.Int).Lsh(big.NewInt(1), 256)
	var out []fe
	for _, base := range []*big.Int{big.NewInt(0), bigP, two256} {
		for d := int64(-3); d <= 3; d++ {
			v := new(big.Int).Add(base, big.NewInt(d))
			if v.Sign() >= 0 && v.Cmp(two256) < 0 {
				out = append(out, feFromBig(v))
			}
		}
	}
	out = append(out, fe{0, 0, 0, 1 << 63}, fe{^uint64(0), 0, ^uint64(0), 0}, fe{fieldC, 0, 0, 0})
	for range n {
		out = append(out, fe{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()})
	}
	return out
}

// fieldImpls are the multiply/square implementations to check: the
// dispatching ones (assembly where supported) and the pure Go fallback.
var fieldImpls = []struct {
	name string
	mul  func(z, x, y *fe) *fe
	sqr  func(z, x *fe) *fe
}{
	{"dispatch", (*fe).mul, (*fe).sqr},
	{"generic", (*fe).mulGeneric, (*fe).sqrGeneric},
}

func TestFieldArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	xs := feSamples(rng, 60)
	f := func(name string, x, y fe, got fe, want *big.Int) {
		t.Helper()
		want = new(big.Int).Mod(want, bigP)
		n := got
		n.normalize()
		if feToBig(&n).Cmp(want) != 0 {
			t.Fatalf("%s(%x, %x) = %x, want %x", name, x, y, got, want)
		}
	}
	for _, x := range xs {
		bx := feToBig(&x)
		var z fe
		for _, impl := range fieldImpls {
			f(impl.name+" sqr", x, x, *impl.sqr(&z, &x), new(big.Int).Mul(bx, bx))
		}
		f("neg", x, x, *z.neg(&x), new(big.Int).Neg(bx))
		f("dbl", x, x, *z.dbl(&x), new(big.Int).Lsh(bx, 1))
		for _, k := range []uint64{0, 1, 3, 4, 8, 1<<30 - 1} {
			f("mulInt", x, fe{k}, *z.mulInt(&x, k), new(big.Int).Mul(bx, new(big.Int).SetUint64(k)))
		}
		if got, want := x.isZero(), new(big.Int).Mod(bx, bigP).Sign() == 0; got != want {
			t.Fatalf("isZero(%x) = %v", x, got)
		}
		for _, y := range xs {
			by := feToBig(&y)
			for _, impl := range fieldImpls {
				f(impl.name+" mul", x, y, *impl.mul(&z, &x, &y), new(big.Int).Mul(bx, by))
			}
			f("add", x, y, *z.add(&x, &y), new(big.Int).Add(bx, by))
			f("sub", x, y, *z.sub(&x, &y), new(big.Int).Sub(bx, by))
		}
	}
}

// TestFieldMulRandomLimbs compares the implementations on limbs drawn from
// values that make carries likely (all ones, zero, near p).
func TestFieldMulRandomLimbs(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	limb := func() uint64 {
		switch rng.IntN(4) {
		case 0:
			return ^uint64(0) - uint64(rng.IntN(3))
		case 1:
			return uint64(rng.IntN(3))
		case 2:
			return feP[0] + uint64(rng.IntN(3))
		default:
			return rng.Uint64()
		}
	}
	for range 200000 {
		x := fe{limb(), limb(), limb(), limb()}
		y := fe{limb(), limb(), limb(), limb()}
		var a, b, c, d fe
		a.mul(&x, &y)
		b.mulGeneric(&x, &y)
		c.sqr(&x)
		d.sqrGeneric(&x)
		if a != b || c != d {
			t.Fatalf("mul/sqr implementations differ on %x, %x", x, y)
		}
	}
}

func TestFieldSqrt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, x := range feSamples(rng, 200) {
		bx := new(big.Int).Mod(feToBig(&x), bigP)
		var z fe
		ok := z.sqrt(&x)
		if want := big.Jacobi(bx, bigP) >= 0; ok != want {
			t.Fatalf("sqrt(%x) ok = %v, want %v", x, ok, want)
		}
		if ok {
			var sq fe
			if !sq.sqr(&z).equal(&x) {
				t.Fatalf("sqrt(%x)^2 != x", x)
			}
		}
	}
}

func TestFieldBytes(t *testing.T) {
	f := func(hex string, wantOK bool) {
		t.Helper()
		v, _ := new(big.Int).SetString(hex, 16)
		var b [32]byte
		v.FillBytes(b[:])
		var z fe
		if ok := z.setBytes(&b); ok != wantOK {
			t.Fatalf("setBytes(%s) ok = %v", hex, ok)
		}
		var out [32]byte
		z.putBytes(out[:])
		want := new(big.Int).Mod(v, bigP)
		if new(big.Int).SetBytes(out[:]).Cmp(want) != 0 {
			t.Fatalf("putBytes(setBytes(%s)) = %x", hex, out)
		}
	}
	f("0", true)
	f("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2e", true)
	f("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f", false)
	f("ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", false)
}
