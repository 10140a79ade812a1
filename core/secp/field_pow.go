package secp

// The square root is an exponentiation by a fixed addition chain built from
// runs of ones, xN = x^(2^N - 1):
//
//	(p+1)/4 = [223 ones] 0 [22 ones] 0000 11 00
//
// Inversion does not use the matching chain for p-2 (255 squarings): the
// variable-time divstep inversion in modinv.go is about 3x faster.

// sqrN sets z = x^(2^n), n >= 1.
func (z *fe) sqrN(x *fe, n int) *fe {
	z.sqr(x)
	for range n - 1 {
		z.sqr(z)
	}
	return z
}

// pow223 returns x^(2^2-1), x^(2^22-1) and x^(2^223-1).
func pow223(x *fe) (x2, x22, x223 fe) {
	var x3, x6, x9, x11, x44, x88, x176, x220 fe
	x2.sqr(x).mul(&x2, x)
	x3.sqr(&x2).mul(&x3, x)
	x6.sqrN(&x3, 3).mul(&x6, &x3)
	x9.sqrN(&x6, 3).mul(&x9, &x3)
	x11.sqrN(&x9, 2).mul(&x11, &x2)
	x22.sqrN(&x11, 11).mul(&x22, &x11)
	x44.sqrN(&x22, 22).mul(&x44, &x22)
	x88.sqrN(&x44, 44).mul(&x88, &x44)
	x176.sqrN(&x88, 88).mul(&x176, &x88)
	x220.sqrN(&x176, 44).mul(&x220, &x44)
	x223.sqrN(&x220, 3).mul(&x223, &x3)
	return x2, x22, x223
}

// sqrt sets z to a square root of x and reports whether one exists. Since
// p = 3 (mod 4), x^((p+1)/4) is a root whenever x is a square.
func (z *fe) sqrt(x *fe) bool {
	x2, x22, t := pow223(x)
	t.sqrN(&t, 23).mul(&t, &x22)
	t.sqrN(&t, 6).mul(&t, &x2)
	t.sqrN(&t, 2)
	var chk fe
	ok := chk.sqr(&t).equal(x)
	*z = t
	return ok
}
