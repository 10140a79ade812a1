package secp

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

func randScalar(rng *rand.Rand) *big.Int {
	v := limbsToBig([4]uint64{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()})
	return v.Mod(v, bigN)
}

// edgeScalars are scalars that stress carries, the GLV split and wNAF.
func edgeScalars() []*big.Int {
	lam := scToBig(&scLambda)
	two := big.NewInt(2)
	var out []*big.Int
	for _, v := range []*big.Int{
		big.NewInt(0), big.NewInt(1), big.NewInt(2), big.NewInt(3), big.NewInt(15), big.NewInt(16),
		new(big.Int).Sub(bigN, big.NewInt(1)), new(big.Int).Sub(bigN, big.NewInt(2)),
		new(big.Int).Rsh(bigN, 1), new(big.Int).Add(new(big.Int).Rsh(bigN, 1), big.NewInt(1)),
		lam, new(big.Int).Sub(bigN, lam), new(big.Int).Mul(lam, lam),
		new(big.Int).Lsh(big.NewInt(1), 128), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1)),
		new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(1)),
		new(big.Int).Exp(two, big.NewInt(200), nil),
	} {
		out = append(out, new(big.Int).Mod(v, bigN))
	}
	return out
}

func TestPointFormulas(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 50 {
		p := refMul(randScalar(rng), refG)
		q := refMul(randScalar(rng), refG)
		if i == 0 {
			q = p
		}
		pa, qa := affineFromRef(p), affineFromRef(q)
		// Put p in a random Jacobian representation.
		var z fe
		z = fe{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64() >> 1}
		var z2, z3 fe
		z2.sqr(&z)
		z3.mul(&z2, &z)
		pj := jacobian{z: z}
		pj.x.mul(&pa.x, &z2)
		pj.y.mul(&pa.y, &z3)
		one := fe{1}

		var r jacobian
		r.double(&pj)
		if got := refFromJacobian(&r, &one); !got.equal(refAdd(p, p)) {
			t.Fatalf("double mismatch")
		}
		r.addAffine(&pj, &qa)
		if got := refFromJacobian(&r, &one); !got.equal(refAdd(p, q)) {
			t.Fatalf("addAffine mismatch (case %d)", i)
		}
		r.addAffine(&pj, &pa)
		if got := refFromJacobian(&r, &one); !got.equal(refAdd(p, p)) {
			t.Fatalf("addAffine(p, p) is not 2p")
		}
		negP := affineFromRef(refNeg(p))
		if r.addAffine(&pj, &negP); !r.inf {
			t.Fatalf("p + -p is not infinity")
		}
		inf := jacobian{inf: true}
		r.addAffine(&inf, &qa)
		if got := refFromJacobian(&r, &one); !got.equal(q) {
			t.Fatalf("inf + q mismatch")
		}
		if r.double(&inf); !r.inf {
			t.Fatalf("2*inf is not infinity")
		}
		checkAddScaled(t, rng, p, q)
	}
}

// checkAddScaled runs addScaled with the accumulator on the curve scaled
// by a random u.
func checkAddScaled(t *testing.T, rng *rand.Rand, p, q *refPoint) {
	t.Helper()
	u := fe{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64() >> 1}
	var u2, u3 fe
	u2.sqr(&u)
	u3.mul(&u2, &u)
	pa, qa := affineFromRef(p), affineFromRef(q)
	pj := jacobian{z: fe{1}}
	pj.x.mul(&pa.x, &u2)
	pj.y.mul(&pa.y, &u3)
	var r jacobian
	r.addScaled(&pj, &qa, &u)
	if got := refFromJacobian(&r, &u); !got.equal(refAdd(p, q)) {
		t.Fatalf("addScaled mismatch")
	}
	r.addScaled(&pj, &pa, &u)
	if got := refFromJacobian(&r, &u); !got.equal(refAdd(p, p)) {
		t.Fatalf("addScaled(p, p) is not 2p")
	}
	inf := jacobian{inf: true}
	r.addScaled(&inf, &qa, &u)
	if got := refFromJacobian(&r, &u); !got.equal(q) {
		t.Fatalf("addScaled(inf, q) mismatch")
	}
}

func TestOddMultiplesIso(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for range 10 {
		p := refMul(randScalar(rng), refG)
		a := affineFromRef(p)
		var tbl [tableSizeR]affine
		u := oddMultiplesIso(&tbl, &a)
		for i := range tbl {
			pj := jacobian{x: tbl[i].x, y: tbl[i].y, z: fe{1}}
			want := refMul(big.NewInt(int64(2*i+1)), p)
			if got := refFromJacobian(&pj, &u); !got.equal(want) {
				t.Fatalf("table entry %d mismatch", i)
			}
		}
	}
}

func TestGTables(t *testing.T) {
	loadGTables()
	g128 := refMul(new(big.Int).Lsh(big.NewInt(1), 128), refG)
	for _, i := range []int{0, 1, 2, 100, tableSizeG - 1} {
		k := big.NewInt(int64(2*i + 1))
		if !refFromAffine(&gTables.lo[i]).equal(refMul(k, refG)) {
			t.Fatalf("G table entry %d mismatch", i)
		}
		if !refFromAffine(&gTables.hi[i]).equal(refMul(k, g128)) {
			t.Fatalf("2^128 G table entry %d mismatch", i)
		}
	}
}

func TestSplitLambda(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	ks := edgeScalars()
	for range 20000 {
		ks = append(ks, randScalar(rng))
	}
	lam := scToBig(&scLambda)
	bound := new(big.Int).Lsh(big.NewInt(1), 128)
	for _, k := range ks {
		s := scFromBig(k)
		k1, neg1, k2, neg2 := splitLambda(&s)
		b1, b2 := scToBig(&k1), scToBig(&k2)
		if b1.Cmp(bound) >= 0 || b2.Cmp(bound) >= 0 {
			t.Fatalf("split(%x) = %x, %x: above 2^128", k, b1, b2)
		}
		if neg1 {
			b1.Neg(b1)
		}
		if neg2 {
			b2.Neg(b2)
		}
		sum := new(big.Int).Mul(b2, lam)
		sum.Add(sum, b1).Sub(sum, k).Mod(sum, bigN)
		if sum.Sign() != 0 {
			t.Fatalf("split(%x): k1 + k2*lambda != k", k)
		}
	}
}

func TestWNAF(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	f := func(k *big.Int, w uint) {
		t.Helper()
		s := scFromBig(k)
		var d [wnafLen]int16
		used := wnaf(d[:], &s, w)
		sum := new(big.Int)
		for i := used - 1; i >= 0; i-- {
			sum.Lsh(sum, 1).Add(sum, big.NewInt(int64(d[i])))
			if d[i] == 0 {
				continue
			}
			if di := int(d[i]); di%2 == 0 || di >= 1<<(w-1) || di <= -(1<<(w-1)) {
				t.Fatalf("wnaf(%x, %d): bad digit %d", k, w, d[i])
			}
			for j := i + 1; j < min(i+int(w), used); j++ {
				if d[j] != 0 {
					t.Fatalf("wnaf(%x, %d): adjacent digits at %d, %d", k, w, i, j)
				}
			}
		}
		if sum.Cmp(k) != 0 {
			t.Fatalf("wnaf(%x, %d) sums to %x", k, w, sum)
		}
	}
	max129 := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 129), big.NewInt(1))
	for _, w := range []uint{windowR, windowG, 2, 15} {
		f(big.NewInt(0), w)
		f(big.NewInt(1), w)
		f(max129, w)
		f(new(big.Int).Lsh(big.NewInt(1), 128), w)
		for range 2000 {
			f(new(big.Int).Rsh(randScalar(rng), uint(127+rng.IntN(100))), w)
		}
	}
}

func TestEcmult(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	edges := edgeScalars()
	for i := range 200 {
		u1, u2 := randScalar(rng), randScalar(rng)
		if i < len(edges)*2 {
			u1, u2 = edges[i%len(edges)], edges[(i/2)%len(edges)]
		}
		if u2.Sign() == 0 {
			u2.SetInt64(5)
		}
		p := refMul(randScalar(rng), refG)
		if i%7 == 0 {
			p = refG
		}
		a := affineFromRef(p)
		s1, s2 := scFromBig(u1), scFromBig(u2)
		var q jacobian
		ecmult(&q, &s1, &s2, &a)
		want := refAdd(refMul(u1, refG), refMul(u2, p))
		if got := refFromJacobian(&q, &fe{1}); !got.equal(want) {
			t.Fatalf("ecmult(%x, %x) mismatch", u1, u2)
		}
	}
}

// TestEcmultInfinity covers u1*G + u2*A = infinity, reached through a
// doubling-by-addition and a cancelling addition inside the main loop.
func TestEcmultInfinity(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for range 20 {
		k := randScalar(rng)
		a := affineFromRef(refMul(k, refG))
		u2 := randScalar(rng)
		u1 := new(big.Int).Mul(u2, k)
		u1.Neg(u1).Mod(u1, bigN)
		s1, s2 := scFromBig(u1), scFromBig(u2)
		var q jacobian
		ecmult(&q, &s1, &s2, &a)
		if !q.inf {
			t.Fatalf("u1*G + u2*kG with u1 = -u2*k is not infinity")
		}
	}
}
