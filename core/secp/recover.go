package secp

// Recover computes the public key (x || y, big-endian) of the ECDSA
// signature (r, s, recid) over hash and reports success. It accepts r and s
// in [1, n-1] and recid 0 (even y) or 1 (odd y); it fails when r is not the
// x coordinate of a curve point or the key would be the point at infinity.
// It does not enforce low s: that is a policy of the caller.
func Recover(pub *[64]byte, hash, r, s *[32]byte, recid byte) bool {
	var sr, ss, z sc
	if recid > 1 || sr.setBytes(r) || ss.setBytes(s) || sr.isZero() || ss.isZero() {
		return false
	}
	var pt affine
	if !decompress(&pt, r, recid) {
		return false
	}
	z.setBytes(hash)
	var rinv, u1, u2 sc
	rinv.invVar(&sr)
	u1.mul(&z, &rinv).neg(&u1)
	u2.mul(&ss, &rinv)
	var q jacobian
	ecmult(&q, &u1, &u2, &pt)
	if q.inf || q.z.isZero() {
		return false
	}
	a := q.toAffine()
	a.x.putBytes(pub[:32])
	a.y.putBytes(pub[32:])
	return true
}

// feB is the curve constant b = 7.
var feB = fe{7}

// decompress sets a to the point with x = xb and the given y parity.
// REQUIRES: xb < p.
func decompress(a *affine, xb *[32]byte, odd byte) bool {
	a.x.setBytes(xb)
	var y2 fe
	y2.sqr(&a.x).mul(&y2, &a.x).add(&y2, &feB)
	if !a.y.sqrt(&y2) {
		return false
	}
	a.y.normalize()
	if byte(a.y[0]&1) != odd {
		a.y.neg(&a.y)
	}
	return true
}
