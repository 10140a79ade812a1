package secp

// GLV endomorphism: lambda*(x, y) = (beta*x, y) for every curve point, where
// lambda^3 = 1 (mod n) and beta^3 = 1 (mod p). Splitting k = k1 + k2*lambda
// with |k1|, |k2| < 2^128 halves the number of doublings.
var (
	scLambda = sc{0xdf02967c1b23bd72, 0x122e22ea20816678, 0xa5261c028812645a, 0x5363ad4cc05c30e0}
	feBeta   = fe{0xc1396c28719501ee, 0x9cf0497512f58995, 0x6e64479eac3434e9, 0x7ae96a2b657c0710}

	// Short lattice basis (a1, b1), (a2, b2) with a + b*lambda = 0 (mod n):
	//   a1 = b2 = 0x3086d221a7d46bcde86c90e49284eb15
	//   b1 = -0xe4437ed6010e88286f547fa90abfe4c3
	//   a2 = 0x114ca50f7a8e2f3f657c1108d9d44cfd8
	// glvG1 = round(2^384*b2/n), glvG2 = round(2^384*(-b1)/n) turn the
	// divisions by n into a multiply and a shift.
	glvG1    = [4]uint64{0xe893209a45dbb031, 0x3daa8a1471e8ca7f, 0xe86c90e49284eb15, 0x3086d221a7d46bcd}
	glvG2    = [4]uint64{0x1571b4ae8ac47f71, 0x221208ac9df506c6, 0x6f547fa90abfe4c4, 0xe4437ed6010e8828}
	glvNegB1 = sc{0x6f547fa90abfe4c3, 0xe4437ed6010e8828, 0, 0}
	glvNegB2 = sc{0xd765cda83db1562c, 0x8a280ac50774346d, 0xfffffffffffffffe, 0xffffffffffffffff}
)

// splitLambda returns k1, k2 with k = k1 + k2*lambda (mod n), as magnitudes
// below 2^129 and sign flags (true when the part is negative).
func splitLambda(k *sc) (k1 sc, neg1 bool, k2 sc, neg2 bool) {
	c1 := mulShift384(k, &glvG1)
	c2 := mulShift384(k, &glvG2)
	var t sc
	k2.mul(&c1, &glvNegB1)
	t.mul(&c2, &glvNegB2)
	k2.add(&k2, &t)
	t.mul(&k2, &scLambda)
	k1.neg(&t).add(&k1, k)
	neg1 = k1.greater(&scHalfN)
	if neg1 {
		k1.neg(&k1)
	}
	neg2 = k2.greater(&scHalfN)
	if neg2 {
		k2.neg(&k2)
	}
	if k1[2]|k2[2] > 1 || k1[3]|k2[3] != 0 {
		panic("BUG: secp: GLV split above 129 bits")
	}
	return k1, neg1, k2, neg2
}

// mulShift384 returns round(k*g / 2^384).
func mulShift384(k *sc, g *[4]uint64) sc {
	t := mul512((*[4]uint64)(k), g)
	r := sc{t[6], t[7]}
	// Round half up on bit 383; k*g < 2^512 - 2^384, so this cannot wrap.
	if t[5]>>63 != 0 {
		r[0]++
		if r[0] == 0 {
			r[1]++
		}
	}
	return r
}
