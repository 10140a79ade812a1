package secp

// affine is a curve point (x, y) with y^2 = x^3 + b. It is never infinity.
type affine struct{ x, y fe }

// jacobian is the point (x/z^2, y/z^3), or infinity when inf is set.
//
// The formulas below never use the curve constant b, so they work unchanged
// on any curve y^2 = x^3 + b' isomorphic to secp256k1 via
// (x, y) -> (x*u^2, y*u^3); ecmult relies on this.
type jacobian struct {
	x, y, z fe
	inf     bool
}

// double sets r = 2p (r may alias p). Cost 3M + 4S and 8 cheap
// operations: D = 4XB replaces dbl-2009-l's (X+B)^2-A-C, because additions
// are not inlined and cost a third of a multiply here.
// secp256k1 has no point of order 2, so y is never 0.
func (r *jacobian) double(p *jacobian) {
	if p.inf {
		r.inf = true
		return
	}
	var a, b, c, d, d8, e, t fe
	a.sqr(&p.x)
	b.sqr(&p.y)
	c.sqr(&b)
	d.mul(&p.x, &b)
	d8.mulInt(&d, 8)
	d.mulInt(&d, 4)
	e.mulInt(&a, 3)
	r.z.mul(&p.y, &p.z).dbl(&r.z)
	r.x.sqr(&e).sub(&r.x, &d8)
	t.sub(&d, &r.x).mul(&t, &e)
	c.mulInt(&c, 8)
	r.y.sub(&t, &c)
	r.inf = false
}

// addAffine sets r = p + q (r may alias p). Cost 8M + 3S. It returns the
// ratio z(r)/z(p), which is meaningful only when p and q are finite and
// x(p) != x(q); callers that use it guarantee that.
func (r *jacobian) addAffine(p *jacobian, q *affine) (zr fe) {
	if p.inf {
		r.x, r.y, r.z, r.inf = q.x, q.y, fe{1}, false
		return zr
	}
	var z2, u2, s2 fe
	z2.sqr(&p.z)
	u2.mul(&q.x, &z2)
	s2.mul(&q.y, &z2).mul(&s2, &p.z)
	return r.addFinish(p, &u2, &s2)
}

// addScaled sets r = p + q' (r may alias p), where q' = (x*u^2, y*u^3) is
// q moved onto the isomorphic curve p lives on. Folding u into p's z costs
// one multiply instead of two for scaling q. REQUIRES: u != 0.
func (r *jacobian) addScaled(p *jacobian, q *affine, u *fe) {
	var az, z2, u2, s2 fe
	if p.inf {
		z2.sqr(u)
		r.x.mul(&q.x, &z2)
		r.y.mul(&q.y, &z2).mul(&r.y, u)
		r.z, r.inf = fe{1}, false
		return
	}
	az.mul(&p.z, u)
	z2.sqr(&az)
	u2.mul(&q.x, &z2)
	s2.mul(&q.y, &z2).mul(&s2, &az)
	r.addFinish(p, &u2, &s2)
}

// addFinish completes p + q given u2 = x(q)*z(p)^2 and s2 = y(q)*z(p)^3 in
// p's frame, and returns z(r)/z(p) (zero in the special cases).
func (r *jacobian) addFinish(p *jacobian, u2, s2 *fe) (zr fe) {
	var h, m fe
	h.sub(u2, &p.x)
	m.sub(s2, &p.y)
	if h.isZero() {
		if m.isZero() {
			r.double(p)
		} else {
			r.inf = true
		}
		return zr
	}
	var h2, h3, v, x3, y3 fe
	h2.sqr(&h)
	h3.mul(&h2, &h)
	v.mul(&p.x, &h2)
	x3.sqr(&m).sub(&x3, &h3).sub(&x3, &v).sub(&x3, &v)
	y3.sub(&v, &x3).mul(&y3, &m)
	v.mul(&p.y, &h3)
	r.y.sub(&y3, &v)
	r.x = x3
	r.z.mul(&p.z, &h)
	r.inf = false
	return h
}

// toAffine returns p in affine form. REQUIRES: p is finite.
func (p *jacobian) toAffine() affine {
	var zi, zi2, zi3 fe
	zi.invVar(&p.z)
	zi2.sqr(&zi)
	zi3.mul(&zi2, &zi)
	var a affine
	a.x.mul(&p.x, &zi2)
	a.y.mul(&p.y, &zi3)
	return a
}

// batchToAffine converts finite points with one inversion (Montgomery's
// trick). REQUIRES: len(out) == len(in), every point finite.
func batchToAffine(out []affine, in []jacobian) {
	acc := make([]fe, len(in))
	var prod fe
	prod = fe{1}
	for i := range in {
		acc[i] = prod
		prod.mul(&prod, &in[i].z)
	}
	var inv fe
	inv.invVar(&prod)
	for i := len(in) - 1; i >= 0; i-- {
		var zi, zi2 fe
		zi.mul(&inv, &acc[i])
		inv.mul(&inv, &in[i].z)
		zi2.sqr(&zi)
		out[i].x.mul(&in[i].x, &zi2)
		out[i].y.mul(&in[i].y, &zi2).mul(&out[i].y, &zi)
	}
}
