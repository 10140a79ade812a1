package secp

import "math/big"

// refPoint is an affine point with big.Int coordinates; nil is infinity.
// It is the slow, obviously correct reference for the tests.
type refPoint struct{ x, y *big.Int }

var refG = &refPoint{feToBig(&gen.x), feToBig(&gen.y)}

func refAdd(a, b *refPoint) *refPoint {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	var l *big.Int
	if a.x.Cmp(b.x) == 0 {
		if new(big.Int).Add(a.y, b.y).Mod(new(big.Int).Add(a.y, b.y), bigP).Sign() == 0 {
			return nil
		}
		num := new(big.Int).Mul(a.x, a.x)
		num.Mul(num, big.NewInt(3))
		den := new(big.Int).Lsh(a.y, 1)
		l = num.Mul(num, den.ModInverse(den, bigP))
	} else {
		num := new(big.Int).Sub(b.y, a.y)
		den := new(big.Int).Sub(b.x, a.x)
		den.Mod(den, bigP)
		l = num.Mul(num, den.ModInverse(den, bigP))
	}
	l.Mod(l, bigP)
	x := new(big.Int).Mul(l, l)
	x.Sub(x, a.x).Sub(x, b.x).Mod(x, bigP)
	y := new(big.Int).Sub(a.x, x)
	y.Mul(y, l).Sub(y, a.y).Mod(y, bigP)
	return &refPoint{x, y}
}

func refMul(k *big.Int, p *refPoint) *refPoint {
	var r *refPoint
	for i := k.BitLen() - 1; i >= 0; i-- {
		r = refAdd(r, r)
		if k.Bit(i) == 1 {
			r = refAdd(r, p)
		}
	}
	return r
}

func refNeg(p *refPoint) *refPoint {
	if p == nil {
		return nil
	}
	return &refPoint{p.x, new(big.Int).Sub(bigP, p.y).Mod(new(big.Int).Sub(bigP, p.y), bigP)}
}

func (p *refPoint) equal(q *refPoint) bool {
	if p == nil || q == nil {
		return p == q
	}
	return p.x.Cmp(q.x) == 0 && p.y.Cmp(q.y) == 0
}

func refFromAffine(a *affine) *refPoint {
	x, y := a.x, a.y
	return &refPoint{feToBig(x.normalize()), feToBig(y.normalize())}
}

func affineFromRef(p *refPoint) affine {
	return affine{feFromBig(p.x), feFromBig(p.y)}
}

// refFromJacobian converts p, which lives on the curve scaled by u (u = 1
// for the true curve), to the true affine point.
func refFromJacobian(p *jacobian, u *fe) *refPoint {
	if p.inf {
		return nil
	}
	z := new(big.Int).Mul(feToBig(&p.z), feToBig(u))
	zi := z.ModInverse(z.Mod(z, bigP), bigP)
	zi2 := new(big.Int).Mul(zi, zi)
	x := new(big.Int).Mul(feToBig(&p.x), zi2)
	y := new(big.Int).Mul(feToBig(&p.y), zi2.Mul(zi2, zi))
	return &refPoint{x.Mod(x, bigP), y.Mod(y, bigP)}
}

func scFromBig(v *big.Int) sc {
	return sc(feFromBig(new(big.Int).Mod(v, bigN)))
}

func scToBig(x *sc) *big.Int {
	f := fe(*x)
	return feToBig(&f)
}
